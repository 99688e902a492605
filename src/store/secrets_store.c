/* secrets_store.c: the connections and variables tables (secrets_store.h),
 * with statements kept in the handle and the secret columns sealed
 * (store/seal.h) with the associated data "connection ID password",
 * "connection ID extra", "variable KEY value" and "job ID spec".
 */
#include "store/secrets_store.h"
#include "lib/grow.h"
#include "store/sql.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"

#define CONN_COLS "conn_id, conn_type, description, host, port, login, password, schema, extra"

enum ss_stmt {
	SS_CONN_ADD,
	SS_CONN_UPDATE,
	SS_CONN_GET,
	SS_CONN_LIST,
	SS_CONN_DELETE,
	SS_VAR_SET,
	SS_VAR_GET,
	SS_VAR_LIST,
	SS_VAR_DELETE,
	SS_SPEC_PUT,
	SS_SPEC_GET,
	SS_COUNT,
};

static const char *const ss_sql[SS_COUNT] = {
    [SS_CONN_ADD] = "INSERT INTO connections (" CONN_COLS ", created_at, updated_at)"
                    " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?10)",
    [SS_CONN_UPDATE] = "UPDATE connections SET conn_type = ?2, description = ?3, host = ?4,"
                       " port = ?5, login = ?6, password = ?7, schema = ?8, extra = ?9,"
                       " updated_at = ?10 WHERE conn_id = ?1",
    [SS_CONN_GET] = "SELECT " CONN_COLS " FROM connections WHERE conn_id = ?",
    [SS_CONN_LIST] = "SELECT " CONN_COLS " FROM connections ORDER BY conn_id",
    [SS_CONN_DELETE] = "DELETE FROM connections WHERE conn_id = ?",
    [SS_VAR_SET] = "INSERT INTO variables (key, value, description, created_at, updated_at)"
                   " VALUES (?1,?2,?3,?4,?4) ON CONFLICT (key) DO UPDATE SET"
                   " value = excluded.value, description = excluded.description,"
                   " updated_at = excluded.updated_at",
    [SS_VAR_GET] = "SELECT key, value, description FROM variables WHERE key = ?",
    [SS_VAR_LIST] = "SELECT key, value, description FROM variables ORDER BY key",
    [SS_VAR_DELETE] = "DELETE FROM variables WHERE key = ?",
    [SS_SPEC_PUT] = "INSERT OR REPLACE INTO job_sealed_specs (job_id, spec) VALUES (?1, ?2)",
    [SS_SPEC_GET] = "SELECT spec FROM job_sealed_specs WHERE job_id = ?",
};

struct secrets_store {
	sqlite3 *db;
	uint8_t key[SEAL_KEY_SIZE];
	sqlite3_stmt *stmt[SS_COUNT];
};

struct secrets_store *secrets_store_create(struct store *s, const uint8_t key[SEAL_KEY_SIZE],
                                           struct weir_error *err)
{
	struct secrets_store *ss = calloc(1, sizeof *ss);

	if (!ss) {
		weir_error_oom(err);
		return NULL;
	}
	ss->db = store_db(s);
	memcpy(ss->key, key, SEAL_KEY_SIZE);
	return ss;
}

void secrets_store_destroy(struct secrets_store *ss)
{
	if (!ss)
		return;
	for (int i = 0; i < SS_COUNT; i++)
		sqlite3_finalize(ss->stmt[i]);
	memset(ss->key, 0, sizeof ss->key);
	free(ss);
}

static sqlite3_stmt *stmt_get(struct secrets_store *ss, enum ss_stmt id, struct weir_error *err)
{
	sqlite3_stmt *st = ss->stmt[id];
	if (!st) {
		if (sqlite3_prepare_v3(ss->db, ss_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st,
		                       NULL) != SQLITE_OK) {
			sql_error(ss->db, "preparing a statement", err);
			return NULL;
		}
		ss->stmt[id] = st;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

/* "connection ID password": what a sealed column is bound to. */
static char *seal_ad(const char *what, const char *id, const char *column)
{
	char *ad = NULL;
	if (asprintf(&ad, "%s %s %s", what, id, column) < 0)
		return NULL;
	return ad;
}

/* Binds `plain` sealed for (what, id, column), or NULL when plain is NULL. */
static int bind_sealed(struct secrets_store *ss, sqlite3_stmt *st, int i, const char *what,
                       const char *id, const char *column, const char *plain,
                       struct weir_error *err)
{
	uint8_t *b = NULL;
	size_t n = 0;
	char *ad;
	int rc;

	if (!plain) {
		sqlite3_bind_null(st, i);
		return 0;
	}
	if (!(ad = seal_ad(what, id, column)))
		return weir_error_oom(err);
	rc = seal_value(ss->key, ad, plain, strlen(plain), &b, &n, err);
	free(ad);
	if (rc < 0)
		return -1;
	sqlite3_bind_blob(st, i, b, (int)n, free);
	return 0;
}

/* A sealed column opened into *out (NULL for SQL NULL). */
static int col_opened(struct secrets_store *ss, sqlite3_stmt *st, int i, const char *what,
                      const char *id, const char *column, char **out, struct weir_error *err)
{
	const void *b = sqlite3_column_blob(st, i);
	int n = sqlite3_column_bytes(st, i);
	char *ad;
	int rc;

	*out = NULL;
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return 0;
	if (!(ad = seal_ad(what, id, column)))
		return weir_error_oom(err);
	rc = seal_open(ss->key, ad, b, (size_t)n, out, NULL, err);
	free(ad);
	if (rc < 0)
		weir_error_prefix(err, "%s %s: %s", what, id, column);
	return rc;
}

/* A text column; NULL stays NULL. */
static int col_text_or_null(sqlite3_stmt *st, int i, char **out)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	*out = NULL;
	if (!t)
		return 0;
	return (*out = strdup((const char *)t)) ? 0 : -1;
}

/* ---- connections ---- */

static int bind_conn(struct secrets_store *ss, sqlite3_stmt *st, const struct connection *c,
                     struct weir_error *err)
{
	char *extra = NULL;
	int rc;

	sql_bind_text(st, 1, c->id);
	sql_bind_text(st, 2, c->type);
	sql_bind_text_or_null(st, 3, c->description);
	sql_bind_text_or_null(st, 4, c->host);
	sql_bind_pos_or_null(st, 5, c->port);
	sql_bind_text_or_null(st, 6, c->login);
	sql_bind_text_or_null(st, 8, c->schema);
	sqlite3_bind_int64(st, 10, clock_now_ms());
	if (bind_sealed(ss, st, 7, "connection", c->id, "password", c->password, err) < 0)
		return -1;
	if (c->extra && json_object_size(c->extra) > 0 &&
	    !(extra = json_dumps(c->extra, JSON_COMPACT | JSON_SORT_KEYS)))
		return weir_error_oom(err);
	rc = bind_sealed(ss, st, 9, "connection", c->id, "extra", extra, err);
	free(extra);
	return rc;
}

static int conn_write(struct secrets_store *ss, enum ss_stmt id, const struct connection *c,
                      struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(ss, id, err);
	int rc;

	if (!st || bind_conn(ss, st, c, err) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_CONSTRAINT || (rc != SQLITE_DONE && sqlite3_extended_errcode(ss->db) ==
	                                                         SQLITE_CONSTRAINT_PRIMARYKEY)) {
		sqlite3_reset(st);
		return weir_error_set(err, WEIR_E_CONFLICT, "connection \"%s\" exists already",
		                      c->id);
	}
	if (rc != SQLITE_DONE)
		return sql_error(ss->db, "writing a connection", err);
	if (id == SS_CONN_UPDATE && sqlite3_changes(ss->db) == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no connection \"%s\" in the store",
		                      c->id);
	return 0;
}

int secrets_store_conn_add(struct secrets_store *ss, const struct connection *c,
                           struct weir_error *err)
{
	return conn_write(ss, SS_CONN_ADD, c, err);
}

int secrets_store_conn_update(struct secrets_store *ss, const struct connection *c,
                              struct weir_error *err)
{
	return conn_write(ss, SS_CONN_UPDATE, c, err);
}

static int read_conn(struct secrets_store *ss, sqlite3_stmt *st, struct connection *c,
                     struct weir_error *err)
{
	char *extra = NULL;

	memset(c, 0, sizeof *c);
	if (col_text_or_null(st, 0, &c->id) < 0 || col_text_or_null(st, 1, &c->type) < 0 ||
	    col_text_or_null(st, 2, &c->description) < 0 || col_text_or_null(st, 3, &c->host) < 0 ||
	    col_text_or_null(st, 5, &c->login) < 0 || col_text_or_null(st, 7, &c->schema) < 0 ||
	    !c->id || !c->type) {
		connection_release(c);
		return weir_error_oom(err);
	}
	c->kind = connection_kind_of(c->type, NULL);
	c->port = (int)sql_col_i64(st, 4);
	if (col_opened(ss, st, 6, "connection", c->id, "password", &c->password, err) < 0 ||
	    col_opened(ss, st, 8, "connection", c->id, "extra", &extra, err) < 0) {
		connection_release(c);
		return -1;
	}
	if (extra) {
		c->extra = json_loads(extra, 0, NULL);
		memset(extra, 0, strlen(extra));
		free(extra);
		if (!json_is_object(c->extra)) {
			connection_release(c);
			return weir_error_set(
			    err, WEIR_E_INTERNAL,
			    "store: connection %s: its extra is not a JSON object", c->id);
		}
	}
	return 0;
}

int secrets_store_conn_get(struct secrets_store *ss, const char *id, struct connection *out,
                           struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(ss, SS_CONN_GET, err);
	int rc;

	memset(out, 0, sizeof *out);
	if (!st)
		return -1;
	sql_bind_text(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no connection \"%s\" in the store",
		                      id);
	if (rc != SQLITE_ROW)
		return sql_error(ss->db, "reading a connection", err);
	rc = read_conn(ss, st, out, err);
	sqlite3_reset(st);
	return rc;
}

/* Every row of statement `id` read by `read` into an array of `size`-byte
 * rows (*rows, *n); `release` frees one. */
static int list_rows(struct secrets_store *ss, enum ss_stmt id, size_t size,
                     int (*read)(struct secrets_store *, sqlite3_stmt *, void *,
                                 struct weir_error *),
                     void (*release)(void *), void **rows, size_t *n, struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(ss, id, err);
	char *v = NULL;
	size_t len = 0, cap = 0;
	int rc;

	*rows = NULL;
	*n = 0;
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow_array(&v, len + 1, &cap, size) < 0) {
			weir_error_oom(err);
			goto fail;
		}
		if (read(ss, st, v + len * size, err) < 0)
			goto fail;
		len++;
	}
	if (rc != SQLITE_DONE) {
		sql_error(ss->db, "listing rows", err);
		goto fail;
	}
	*rows = v;
	*n = len;
	return 0;
fail:
	sqlite3_reset(st);
	for (size_t i = 0; i < len; i++)
		release(v + i * size);
	free(v);
	return -1;
}

static int read_conn_row(struct secrets_store *ss, sqlite3_stmt *st, void *row,
                         struct weir_error *err)
{
	return read_conn(ss, st, row, err);
}

static void release_conn_row(void *row)
{
	connection_release(row);
}

int secrets_store_conn_list(struct secrets_store *ss, struct connection **rows, size_t *n,
                            struct weir_error *err)
{
	return list_rows(ss, SS_CONN_LIST, sizeof **rows, read_conn_row, release_conn_row,
	                 (void **)rows, n, err);
}

static int delete_row(struct secrets_store *ss, enum ss_stmt id, const char *what, const char *key,
                      struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(ss, id, err);

	if (!st)
		return -1;
	sql_bind_text(st, 1, key);
	if (sqlite3_step(st) != SQLITE_DONE)
		return sql_error(ss->db, "deleting a row", err);
	if (sqlite3_changes(ss->db) == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no %s \"%s\" in the store", what,
		                      key);
	return 0;
}

int secrets_store_conn_delete(struct secrets_store *ss, const char *id, struct weir_error *err)
{
	return delete_row(ss, SS_CONN_DELETE, "connection", id, err);
}

/* ---- variables ---- */

int secrets_store_var_set(struct secrets_store *ss, const struct variable *v,
                          struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(ss, SS_VAR_SET, err);

	if (!st)
		return -1;
	sql_bind_text(st, 1, v->key);
	sql_bind_text_or_null(st, 3, v->description);
	sqlite3_bind_int64(st, 4, clock_now_ms());
	if (bind_sealed(ss, st, 2, "variable", v->key, "value", v->value ? v->value : "", err) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_DONE)
		return sql_error(ss->db, "writing a variable", err);
	return 0;
}

static int read_var(struct secrets_store *ss, sqlite3_stmt *st, struct variable *v,
                    struct weir_error *err)
{
	memset(v, 0, sizeof *v);
	if (col_text_or_null(st, 0, &v->key) < 0 || col_text_or_null(st, 2, &v->description) < 0 ||
	    !v->key) {
		variable_release(v);
		return weir_error_oom(err);
	}
	if (col_opened(ss, st, 1, "variable", v->key, "value", &v->value, err) < 0) {
		variable_release(v);
		return -1;
	}
	if (!v->value && !(v->value = strdup(""))) {
		variable_release(v);
		return weir_error_oom(err);
	}
	return 0;
}

int secrets_store_var_get(struct secrets_store *ss, const char *key, struct variable *out,
                          struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(ss, SS_VAR_GET, err);
	int rc;

	memset(out, 0, sizeof *out);
	if (!st)
		return -1;
	sql_bind_text(st, 1, key);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no variable \"%s\" in the store",
		                      key);
	if (rc != SQLITE_ROW)
		return sql_error(ss->db, "reading a variable", err);
	rc = read_var(ss, st, out, err);
	sqlite3_reset(st);
	return rc;
}

static int read_var_row(struct secrets_store *ss, sqlite3_stmt *st, void *row,
                        struct weir_error *err)
{
	return read_var(ss, st, row, err);
}

static void release_var_row(void *row)
{
	variable_release(row);
}

int secrets_store_var_list(struct secrets_store *ss, struct variable **rows, size_t *n,
                           struct weir_error *err)
{
	return list_rows(ss, SS_VAR_LIST, sizeof **rows, read_var_row, release_var_row,
	                 (void **)rows, n, err);
}

int secrets_store_var_delete(struct secrets_store *ss, const char *key, struct weir_error *err)
{
	return delete_row(ss, SS_VAR_DELETE, "variable", key, err);
}

/* ---- jobs' specs with secrets ---- */

int secrets_store_spec_put(struct secrets_store *ss, int64_t job_id, const char *text,
                           struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(ss, SS_SPEC_PUT, err);
	char id[24];

	if (!st)
		return -1;
	snprintf(id, sizeof id, "%lld", (long long)job_id);
	sqlite3_bind_int64(st, 1, job_id);
	if (bind_sealed(ss, st, 2, "job", id, "spec", text, err) < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_DONE)
		return sql_error(ss->db, "writing a job's sealed spec", err);
	return 0;
}

int secrets_store_spec_get(struct secrets_store *ss, int64_t job_id, char **text,
                           struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(ss, SS_SPEC_GET, err);
	char id[24];
	int rc;

	*text = NULL;
	if (!st)
		return -1;
	snprintf(id, sizeof id, "%lld", (long long)job_id);
	sqlite3_bind_int64(st, 1, job_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "job %s has no sealed spec", id);
	if (rc != SQLITE_ROW)
		return sql_error(ss->db, "reading a job's sealed spec", err);
	rc = col_opened(ss, st, 0, "job", id, "spec", text, err);
	sqlite3_reset(st);
	return rc;
}

/* ---- clear copies a version before 13 wrote ---- */

/* A job whose spec holds a secret in clear. */
struct clear_job {
	int64_t id;
	char *spec;
	bool active;
};

static void clear_jobs_free(struct clear_job *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].spec)
			memset(v[i].spec, 0, strlen(v[i].spec));
		free(v[i].spec);
	}
	free(v);
}

/* The jobs whose spec_json holds `needle` (a secret as JSON text writes it). */
static int clear_jobs(struct secrets_store *ss, const char *needle, struct clear_job **out,
                      size_t *n, struct weir_error *err)
{
	sqlite3_stmt *st = NULL;
	struct clear_job *v = NULL;
	size_t len = 0, cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(ss->db,
	                       "SELECT id, spec_json, state NOT IN ('succeeded','failed','killed')"
	                       " FROM jobs WHERE instr(spec_json, ?1) > 0",
	                       -1, &st, NULL) != SQLITE_OK)
		return sql_error(ss->db, "finding secrets in jobs' specs", err);
	sql_bind_text(st, 1, needle);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (ALLOC_GROW(v, len + 1, cap) < 0)
			break;
		v[len].id = sqlite3_column_int64(st, 0);
		v[len].active = sqlite3_column_int(st, 2) != 0;
		if (!(v[len].spec = strdup((const char *)sqlite3_column_text(st, 1))))
			break;
		len++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		clear_jobs_free(v, len);
		return rc == SQLITE_ROW ? weir_error_oom(err)
		                        : sql_error(ss->db, "reading jobs' specs", err);
	}
	*out = v;
	*n = len;
	return 0;
}

/* Job j's spec_json masked; an active job's spec sealed first, since it
 * may still be needed to start its tasks. */
static int mask_job(struct secrets_store *ss, const struct clear_job *j, const struct strvec *texts,
                    struct weir_error *err)
{
	char *masked = variable_mask_json(j->spec, texts);
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (!masked)
		return weir_error_set(err, WEIR_E_INTERNAL, "store: job %lld: its spec is not JSON",
		                      (long long)j->id);
	if (j->active) {
		struct weir_error e2 = {0};
		char *have = NULL;
		if (secrets_store_spec_get(ss, j->id, &have, &e2) < 0 &&
		    (e2.kind != WEIR_E_NOT_FOUND ||
		     secrets_store_spec_put(ss, j->id, j->spec, err) < 0))
			goto out;
		free(have);
	}
	if (sqlite3_prepare_v2(ss->db, "UPDATE jobs SET spec_json = ?2 WHERE id = ?1", -1, &st,
	                       NULL) != SQLITE_OK) {
		sql_error(ss->db, "masking a job's spec", err);
		goto out;
	}
	sqlite3_bind_int64(st, 1, j->id);
	sql_bind_text(st, 2, masked);
	if (sqlite3_step(st) != SQLITE_DONE)
		sql_error(ss->db, "masking a job's spec", err);
	else
		rc = 0;
out:
	sqlite3_finalize(st);
	free(masked);
	return rc;
}

/* One text masked wherever a version before wrote it in clear. */
static int scrub_one(struct secrets_store *ss, const char *text, const struct strvec *texts,
                     struct weir_error *err)
{
	json_t *js = json_string(text);
	char *quoted = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
	struct clear_job *jobs = NULL;
	sqlite3_stmt *st = NULL;
	size_t n = 0;
	int rc = -1;

	json_decref(js);
	if (!quoted)
		return weir_error_oom(err);
	/* the JSON text of the string, without its quotes */
	quoted[strlen(quoted) - 1] = '\0';
	if (clear_jobs(ss, quoted + 1, &jobs, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (mask_job(ss, &jobs[i], texts, err) < 0)
			goto out;
	if (sqlite3_prepare_v2(ss->db,
	                       "UPDATE task_instances SET rendered_command ="
	                       " replace(rendered_command, ?1, '***')"
	                       " WHERE instr(rendered_command, ?1) > 0",
	                       -1, &st, NULL) != SQLITE_OK) {
		sql_error(ss->db, "masking rendered commands", err);
		goto out;
	}
	sql_bind_text(st, 1, text);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sql_error(ss->db, "masking rendered commands", err);
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	clear_jobs_free(jobs, n);
	memset(quoted, 0, strlen(quoted));
	free(quoted);
	return rc;
}

int secrets_store_scrub(struct secrets_store *ss, const struct strvec *texts,
                        struct weir_error *err)
{
	int rc = 0;

	if (!texts->n)
		return 0;
	/* the old bytes zeroed where SQLite frees them, and the WAL's old
	 * frames gone once the masked pages are in the file */
	if (sqlite3_exec(ss->db, "PRAGMA secure_delete = ON; SAVEPOINT scrub", NULL, NULL, NULL) !=
	    SQLITE_OK)
		rc = sql_error(ss->db, "masking secrets written in clear", err);
	for (size_t i = 0; rc == 0 && i < texts->n; i++)
		if (scrub_one(ss, texts->v[i], texts, err) < 0) {
			sqlite3_exec(ss->db, "ROLLBACK TO scrub", NULL, NULL, NULL);
			rc = -1;
		}
	if (sqlite3_exec(ss->db, "RELEASE scrub", NULL, NULL, NULL) != SQLITE_OK && rc == 0)
		rc = sql_error(ss->db, "masking secrets written in clear", err);
	if (rc == 0)
		sqlite3_exec(ss->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	sqlite3_exec(ss->db, "PRAGMA secure_delete = OFF", NULL, NULL, NULL);
	return rc;
}
