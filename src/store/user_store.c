/* user_store.c: the users and tokens tables (user_store.h).  Every value
 * is bound; no SQL text is put together. */
#include "store/user_store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"

#define USER_COLS "name, email, role, password_hash, created_at, changed_at"
#define TOKEN_COLS "name, user_name, hash, created_at, expires_at, revoked_at, last_used_at"

/* ---- users ---- */

static int read_user(sqlite3_stmt *st, void *row)
{
	struct user_row *r = row;
	const char *role = (const char *)sqlite3_column_text(st, 2);

	r->name = sql_col_text(st, 0);
	r->email = sqlite3_column_type(st, 1) == SQLITE_NULL ? NULL : sql_col_text(st, 1);
	if (role_from_name(role, &r->role) < 0)
		return -2;
	r->password_hash = sql_col_text(st, 3);
	r->created_ms = sql_col_i64(st, 4);
	r->changed_ms = sql_col_i64(st, 5);
	return r->name && r->password_hash ? 0 : -1;
}

void user_row_release(struct user_row *row)
{
	if (!row)
		return;
	free(row->name);
	free(row->email);
	if (row->password_hash)
		memset(row->password_hash, 0, strlen(row->password_hash));
	free(row->password_hash);
	memset(row, 0, sizeof *row);
}

static void release_user(void *row)
{
	user_row_release(row);
}

static const struct sql_rows user_rows = {sizeof(struct user_row), read_user, release_user};

void user_rows_free(struct user_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		user_row_release(&rows[i]);
	free(rows);
}

int user_store_insert(struct store *s, const struct user_row *row, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;

	if (store_write_starts(s, err) < 0)
		return -1;
	st = sql_prepare(db, "INSERT INTO users (" USER_COLS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	                 "users: preparing an insert", err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, row->name);
	sql_bind_text_or_null(st, 2, row->email);
	sql_bind_text(st, 3, role_name(row->role));
	sql_bind_text(st, 4, row->password_hash);
	sqlite3_bind_int64(st, 5, row->created_ms);
	sqlite3_bind_int64(st, 6, row->changed_ms);
	if (sql_run(db, st, "users: adding a user", NULL, err) < 0) {
		if (err->kind == WEIR_E_CONFLICT)
			weir_error_set(err, WEIR_E_CONFLICT, "user \"%s\" exists", row->name);
		return -1;
	}
	return 0;
}

/* The rows of `sql` with `name` bound as ?1 (NULL: nothing bound). */
static int collect(struct store *s, const char *sql, const char *name, const struct sql_rows *k,
                   const char *what, void *rows_out, size_t *n, struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(store_db(s), sql, what, err);
	int rc;

	if (!st)
		return -1;
	if (name)
		sql_bind_text(st, 1, name);
	rc = sql_collect(st, k, NULL, what, rows_out, n, err);
	sqlite3_finalize(st);
	return rc;
}

int user_store_get(struct store *s, const char *name, struct user_row *out, struct weir_error *err)
{
	struct user_row *rows = NULL;
	size_t n = 0;

	memset(out, 0, sizeof *out);
	if (collect(s, "SELECT " USER_COLS " FROM users WHERE name = ?1", name, &user_rows,
	            "users: reading a user", &rows, &n, err) < 0)
		return -1;
	if (n == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no user \"%s\"", name);
	*out = rows[0];
	free(rows);
	return 0;
}

int user_store_list(struct store *s, struct user_row **rows, size_t *n, struct weir_error *err)
{
	return collect(s, "SELECT " USER_COLS " FROM users ORDER BY name", NULL, &user_rows,
	               "users: listing users", rows, n, err);
}

int user_store_update(struct store *s, const char *name, const char *password_hash,
                      enum weir_role role, int64_t now_ms, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;
	int changes = 0;

	if (store_write_starts(s, err) < 0)
		return -1;
	st = sql_prepare(db,
	                 "UPDATE users SET password_hash = coalesce(?2, password_hash),"
	                 " role = coalesce(?3, role), changed_at = ?4 WHERE name = ?1",
	                 "users: preparing an update", err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, name);
	sql_bind_text_or_null(st, 2, password_hash);
	sql_bind_text_or_null(st, 3, role == ROLE_NONE ? NULL : role_name(role));
	sqlite3_bind_int64(st, 4, now_ms);
	if (sql_run(db, st, "users: changing a user", &changes, err) < 0)
		return -1;
	return changes ? 0 : weir_error_set(err, WEIR_E_NOT_FOUND, "no user \"%s\"", name);
}

/* the revocations: one token by name, every token of a user */
static const char revoke_by_name[] =
    "UPDATE tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL";
static const char revoke_by_user[] =
    "UPDATE tokens SET revoked_at = ?2 WHERE user_name = ?1 AND revoked_at IS NULL";

/* `sql` (one of the two above) run for ?1 = name; *changes the tokens it
 * revoked. */
static int revoke(struct store *s, const char *sql, const char *name, int64_t now_ms, int *changes,
                  struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;

	if (store_write_starts(s, err) < 0)
		return -1;
	st = sql_prepare(db, sql, "tokens: preparing a revocation", err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, name);
	sqlite3_bind_int64(st, 2, now_ms);
	return sql_run(db, st, "tokens: revoking", changes, err);
}

int user_store_delete(struct store *s, const char *name, int64_t now_ms, int *revoked,
                      struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;
	int changes = 0, n = 0;

	if (store_write_starts(s, err) < 0)
		return -1;
	st = sql_prepare(db, "DELETE FROM users WHERE name = ?1", "users: preparing a deletion",
	                 err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, name);
	if (sql_run(db, st, "users: deleting a user", &changes, err) < 0)
		return -1;
	if (!changes)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no user \"%s\"", name);
	if (revoke(s, revoke_by_user, name, now_ms, &n, err) < 0)
		return -1;
	if (revoked)
		*revoked = n;
	return 0;
}

/* ---- tokens ---- */

static int read_token(sqlite3_stmt *st, void *row)
{
	struct token_row *r = row;

	r->name = sql_col_text(st, 0);
	r->user = sql_col_text(st, 1);
	r->hash = sqlite3_column_type(st, 2) == SQLITE_NULL ? NULL : sql_col_text(st, 2);
	r->created_ms = sql_col_i64(st, 3);
	r->expires_ms = sql_col_i64(st, 4);
	r->revoked_ms = sql_col_i64(st, 5);
	r->last_used_ms = sql_col_i64(st, 6);
	return r->name && r->user ? 0 : -1;
}

void token_row_release(struct token_row *row)
{
	if (!row)
		return;
	free(row->name);
	free(row->user);
	free(row->hash);
	memset(row, 0, sizeof *row);
}

static void release_token(void *row)
{
	token_row_release(row);
}

static const struct sql_rows token_rows = {sizeof(struct token_row), read_token, release_token};

void token_rows_free(struct token_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		token_row_release(&rows[i]);
	free(rows);
}

int token_store_insert(struct store *s, const struct token_row *row, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;

	if (store_write_starts(s, err) < 0)
		return -1;
	st = sql_prepare(db,
	                 "INSERT INTO tokens (name, user_name, hash, created_at, expires_at)"
	                 " VALUES (?1, ?2, ?3, ?4, ?5)",
	                 "tokens: preparing an insert", err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, row->name);
	sql_bind_text(st, 2, row->user);
	sql_bind_text(st, 3, row->hash);
	sqlite3_bind_int64(st, 4, row->created_ms);
	sql_bind_pos_or_null(st, 5, row->expires_ms);
	if (sql_run(db, st, "tokens: adding a token", NULL, err) < 0) {
		if (err->kind == WEIR_E_CONFLICT)
			weir_error_set(err, WEIR_E_CONFLICT,
			               "a token named \"%s\" exists (revoked ones keep their name)",
			               row->name);
		return -1;
	}
	return 0;
}

int token_store_find(struct store *s, const char *hash, struct token_row *out,
                     struct weir_error *err)
{
	struct token_row *rows = NULL;
	size_t n = 0;

	memset(out, 0, sizeof *out);
	if (collect(s, "SELECT " TOKEN_COLS " FROM tokens WHERE hash = ?1", hash, &token_rows,
	            "tokens: finding a token", &rows, &n, err) < 0)
		return -1;
	if (n == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no such token");
	*out = rows[0];
	free(rows);
	return 0;
}

int token_store_list(struct store *s, struct token_row **rows, size_t *n, struct weir_error *err)
{
	return collect(s,
	               "SELECT name, user_name, NULL, created_at, expires_at, revoked_at,"
	               " last_used_at FROM tokens ORDER BY name",
	               NULL, &token_rows, "tokens: listing tokens", rows, n, err);
}

int token_store_revoke(struct store *s, const char *name, int64_t now_ms, struct weir_error *err)
{
	struct token_row *rows = NULL;
	size_t n = 0;
	int changes = 0;

	if (revoke(s, revoke_by_name, name, now_ms, &changes, err) < 0)
		return -1;
	if (changes)
		return 0;
	/* none changed: absent, or revoked before */
	if (collect(s, "SELECT " TOKEN_COLS " FROM tokens WHERE name = ?1", name, &token_rows,
	            "tokens: reading a token", &rows, &n, err) < 0)
		return -1;
	token_rows_free(rows, n);
	return n ? 0 : weir_error_set(err, WEIR_E_NOT_FOUND, "no token named \"%s\"", name);
}

int token_store_touch(struct store *s, const char *name, int64_t now_ms, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;

	if (store_write_starts(s, err) < 0)
		return -1;
	st = sql_prepare(db, "UPDATE tokens SET last_used_at = ?2 WHERE name = ?1",
	                 "tokens: preparing a use", err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, name);
	sqlite3_bind_int64(st, 2, now_ms);
	return sql_run(db, st, "tokens: noting a use", NULL, err);
}
