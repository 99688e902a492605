/* users_api.h: what weir's user and token routes (api/users_routes.h) and
 * the router's Bearer check (api/api.c) ask of the server
 * (server/users.c fills the table).
 *
 * Values passed in are borrowed for the call, already checked for shape
 * (names by person_name_check(), hashes by basic_auth_hash_valid(), roles
 * by role_from_name()); bodies handed back are the caller's.  Errors: NULL
 * (or -1) with err: WEIR_E_INVALID -> 400, WEIR_E_NOT_FOUND -> 404,
 * WEIR_E_CONFLICT -> 409 (a name that exists, a user of the server's
 * configuration).
 */
#ifndef WEIR_API_USERS_API_H
#define WEIR_API_USERS_API_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/error.h"
#include "model/role.h"

struct users_api_ops {
	/* The live token whose hash is `hash` (api/person_token.h): its user
	 * and name copied into user and name (each `size` bytes).  0; -1 when
	 * there is none, or it is revoked or expired (a revocation is seen by
	 * the next request: nothing is cached). */
	int (*token_lookup)(void *ctx, const char *hash, char *user, char *name, size_t size);

	/* Every user: the store's and the configuration's, each with its
	 * role and where it is kept ("store" or "configuration"). */
	json_t *(*user_list)(void *ctx, struct weir_error *err);
	/* A user into the store; WEIR_E_CONFLICT when the name exists there
	 * or in the configuration. */
	json_t *(*user_create)(void *ctx, const char *name, const char *email, enum weir_role role,
	                       const char *password_hash, struct weir_error *err);
	/* A new password hash (NULL: kept) and/or role (ROLE_NONE: kept) for
	 * a user of the store. */
	json_t *(*user_change)(void *ctx, const char *name, const char *password_hash,
	                       enum weir_role role, struct weir_error *err);
	/* A user of the store deleted, its tokens revoked. */
	json_t *(*user_delete)(void *ctx, const char *name, struct weir_error *err);

	/* Every token, without its secret: name, user, times, state. */
	json_t *(*token_list)(void *ctx, struct weir_error *err);
	/* A new token for `user` (of the store or the configuration), named
	 * `name`, expiring in expires_in_s (0: never): the answer holds the
	 * token itself, the one time it is shown. */
	json_t *(*token_create)(void *ctx, const char *user, const char *name, int64_t expires_in_s,
	                        struct weir_error *err);
	/* The token `name` revoked: refused from the next request on. */
	json_t *(*token_revoke)(void *ctx, const char *name, struct weir_error *err);
};

#endif
