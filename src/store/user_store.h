/* user_store.h: the users kept in the store (`weir users`) and the API
 * tokens that act as a user (`weir tokens`): the tables `users` and
 * `tokens` (schema 16).
 *
 * A user's password is kept only as its PBKDF2 hash (api/basic_auth.h's
 * format, checked by the caller); a token only as the lowercase hex of its
 * SHA-256 (api/person_token.h).  A token names its user by name, with no
 * foreign key: a user of the server's configuration may hold tokens too.
 * Deleting a user revokes its tokens in the same call; a revoked token's
 * row stays (listed, never accepted).
 *
 * Times are epoch ms; 0 reads as "none" (no expiry, not revoked, never
 * used).  The store keeps and returns; whether a name may be created, a
 * role's meaning and a token's expiry decision are the caller's.  Errors:
 * -1 with err, WEIR_E_CONFLICT for a name that exists, WEIR_E_NOT_FOUND
 * for one that does not.
 */
#ifndef WEIR_STORE_USER_STORE_H
#define WEIR_STORE_USER_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/role.h"
#include "store/store.h"

struct user_row {
	char *name;
	char *email; /* NULL: none */
	enum weir_role role;
	char *password_hash;
	int64_t created_ms, changed_ms;
};

struct token_row {
	char *name;
	char *user;
	char *hash; /* hex SHA-256 of the token */
	int64_t created_ms;
	int64_t expires_ms;   /* 0: never */
	int64_t revoked_ms;   /* 0: not revoked */
	int64_t last_used_ms; /* 0: never used */
};

/* Inserts `row` (every field; created and changed from row).  0, or -1
 * with err (WEIR_E_CONFLICT: the name exists). */
int user_store_insert(struct store *s, const struct user_row *row, struct weir_error *err);
/* The user `name` into *out (released by the caller).  WEIR_E_NOT_FOUND
 * when absent. */
int user_store_get(struct store *s, const char *name, struct user_row *out, struct weir_error *err);
/* Every user by name.  *rows an array of *n (NULL when 0), freed with
 * user_rows_free(). */
int user_store_list(struct store *s, struct user_row **rows, size_t *n, struct weir_error *err);
/* A new password hash and/or role (NULL hash: kept; ROLE_NONE: kept);
 * changed_at = now_ms.  WEIR_E_NOT_FOUND when absent. */
int user_store_update(struct store *s, const char *name, const char *password_hash,
                      enum weir_role role, int64_t now_ms, struct weir_error *err);
/* Deletes the user and revokes (revoked_at = now_ms) its tokens not yet
 * revoked; *revoked (NULL: not wanted) how many.  WEIR_E_NOT_FOUND when
 * absent. */
int user_store_delete(struct store *s, const char *name, int64_t now_ms, int *revoked,
                      struct weir_error *err);
void user_row_release(struct user_row *row);
void user_rows_free(struct user_row *rows, size_t n);

/* Inserts `row` (name, user, hash, created, expires).  WEIR_E_CONFLICT:
 * the name (or the hash) exists. */
int token_store_insert(struct store *s, const struct token_row *row, struct weir_error *err);
/* The token whose hash is `hash` into *out (released by the caller),
 * revoked and expired ones included.  WEIR_E_NOT_FOUND when none. */
int token_store_find(struct store *s, const char *hash, struct token_row *out,
                     struct weir_error *err);
/* Every token by name (their hashes not read: NULL).  Freed with
 * token_rows_free(). */
int token_store_list(struct store *s, struct token_row **rows, size_t *n, struct weir_error *err);
/* revoked_at = now_ms for the token `name`.  WEIR_E_NOT_FOUND when absent;
 * one already revoked keeps its first time (0). */
int token_store_revoke(struct store *s, const char *name, int64_t now_ms, struct weir_error *err);
/* last_used_at = now_ms for the token `name` (absent: nothing). */
int token_store_touch(struct store *s, const char *name, int64_t now_ms, struct weir_error *err);
void token_row_release(struct token_row *row);
void token_rows_free(struct token_row *rows, size_t n);

#endif
