/* store.c: the SQLite store (store.h): schema and migrations, prepared
 * statements kept in the handle, jobs, tasks, events and meta.
 *
 * One connection in WAL mode with synchronous=NORMAL: a server crash
 * (kill -9) loses no committed transaction; only a power cut can lose the
 * last few, which the launchers' retried reports then repair.
 */
#include "store/store.h"
#include "store/sql.h"

#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Migration i takes a file from version i to i + 1 (index 0: the empty
 * file).  Append only: a released migration never changes. */
static const char *const migrations[] = {
    /* 0 -> 1: the first schema */
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE jobs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL,"
    " spec_json TEXT NOT NULL,"
    " framework TEXT NOT NULL DEFAULT 'none',"
    " state TEXT NOT NULL CHECK (state IN"
    "  ('queued','starting','running','succeeded','failed','killed')),"
    " reason TEXT NOT NULL DEFAULT '',"
    " priority INTEGER NOT NULL DEFAULT 0,"
    " attempt INTEGER NOT NULL DEFAULT 1,"
    " max_restarts INTEGER NOT NULL DEFAULT 0,"
    " exit_code INTEGER,"
    " restart_pending INTEGER NOT NULL DEFAULT 0,"
    " submitted_at INTEGER NOT NULL,"
    " queued_at INTEGER, allocated_at INTEGER, running_at INTEGER,"
    " started_at INTEGER, ended_at INTEGER);"
    "CREATE TABLE tasks ("
    " job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
    " attempt INTEGER NOT NULL,"
    " role TEXT NOT NULL,"
    " idx INTEGER NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN"
    "  ('pending','starting','running','succeeded','failed','killed','lost')),"
    " reason TEXT NOT NULL DEFAULT '',"
    " host TEXT, port INTEGER, launcher_pid INTEGER, pid INTEGER, gpus TEXT,"
    " exit_code INTEGER, signal INTEGER, oom_killed INTEGER NOT NULL DEFAULT 0,"
    " peak_memory_bytes INTEGER, cpu_time_ms INTEGER,"
    " registered_at INTEGER, started_at INTEGER, ended_at INTEGER,"
    " PRIMARY KEY (job_id, attempt, role, idx));"
    "CREATE TABLE events ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
    " time INTEGER NOT NULL,"
    " kind TEXT NOT NULL,"
    " message TEXT NOT NULL);",
    /* 1 -> 2: indexes for the queue, the listings and the journal */
    "CREATE INDEX jobs_by_state ON jobs (state, priority DESC, id);"
    "CREATE INDEX events_by_job ON events (job_id, id);",
    /* 2 -> 3: workflows: DAGs, their runs, task instances and every try
     * (store/dag_store.h; docs/internals/dags.md).  IF NOT EXISTS: a file
     * whose version was set back by hand may have them already */
    "CREATE TABLE IF NOT EXISTS dags ("
    " dag_id TEXT PRIMARY KEY,"
    " file TEXT NOT NULL DEFAULT '',"
    " paused INTEGER NOT NULL DEFAULT 0,"
    " active INTEGER NOT NULL DEFAULT 1,"
    " last_parsed_at INTEGER,"
    " import_error TEXT NOT NULL DEFAULT '',"
    " spec_json TEXT NOT NULL DEFAULT '{}');"
    "CREATE TABLE IF NOT EXISTS dag_import_errors ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " file TEXT NOT NULL UNIQUE,"
    " time INTEGER NOT NULL,"
    " message TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS dag_runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " dag_id TEXT NOT NULL REFERENCES dags(dag_id) ON DELETE CASCADE,"
    " run_id TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN ('queued','running','success','failed')),"
    " run_type TEXT NOT NULL CHECK (run_type IN ('manual','scheduled','backfill')),"
    " logical_date INTEGER NOT NULL,"
    " data_interval_start INTEGER, data_interval_end INTEGER,"
    " conf TEXT NOT NULL DEFAULT '{}',"
    " reason TEXT NOT NULL DEFAULT '',"
    " queued_at INTEGER, start_date INTEGER, end_date INTEGER,"
    " UNIQUE (dag_id, run_id),"
    " UNIQUE (dag_id, logical_date));"
    "CREATE INDEX IF NOT EXISTS dag_runs_by_state ON dag_runs (state, dag_id, logical_date);"
    "CREATE TABLE IF NOT EXISTS task_instances ("
    " dag_id TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " task_id TEXT NOT NULL,"
    " map_index INTEGER NOT NULL DEFAULT -1,"
    " state TEXT NOT NULL CHECK (state IN ('none','scheduled','queued','running','success',"
    "  'failed','up_for_retry','upstream_failed','skipped','removed')),"
    " try_number INTEGER NOT NULL DEFAULT 0,"
    " max_tries INTEGER NOT NULL DEFAULT 1,"
    " job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,"
    " pool TEXT NOT NULL DEFAULT 'default_pool',"
    " pool_slots INTEGER NOT NULL DEFAULT 1,"
    " priority INTEGER NOT NULL DEFAULT 0,"
    " queued_at INTEGER, start_date INTEGER, end_date INTEGER, next_retry_at INTEGER,"
    " rendered_command TEXT NOT NULL DEFAULT '',"
    " outputs TEXT,"
    " reason TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (dag_id, run_id, task_id, map_index),"
    " FOREIGN KEY (dag_id, run_id) REFERENCES dag_runs (dag_id, run_id) ON DELETE CASCADE);"
    "CREATE INDEX IF NOT EXISTS task_instances_by_job ON task_instances (job_id)"
    " WHERE job_id IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS task_instances_by_state ON task_instances (state);"
    "CREATE TABLE IF NOT EXISTS task_instance_tries ("
    " dag_id TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " task_id TEXT NOT NULL,"
    " map_index INTEGER NOT NULL,"
    " try_number INTEGER NOT NULL,"
    " job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,"
    " state TEXT NOT NULL CHECK (state IN ('none','scheduled','queued','running','success',"
    "  'failed','up_for_retry','upstream_failed','skipped','removed')),"
    " start_date INTEGER, end_date INTEGER,"
    " reason TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (dag_id, run_id, task_id, map_index, try_number),"
    " FOREIGN KEY (dag_id, run_id, task_id, map_index)"
    "  REFERENCES task_instances (dag_id, run_id, task_id, map_index) ON DELETE CASCADE);"
    "CREATE INDEX IF NOT EXISTS task_instance_tries_by_job ON task_instance_tries (job_id)"
    " WHERE job_id IS NOT NULL;",
};

#define N_MIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))

_Static_assert(N_MIGRATIONS == STORE_SCHEMA_VERSION, "one migration per schema version");

#define JOB_COLS                                                                                   \
	"id, name, spec_json, framework, state, reason, priority, attempt, max_restarts,"          \
	" exit_code, restart_pending, submitted_at, queued_at, allocated_at, running_at,"          \
	" started_at, ended_at"

#define TASK_COLS                                                                                  \
	"job_id, attempt, role, idx, state, reason, host, port, launcher_pid, pid, gpus,"          \
	" exit_code, signal, oom_killed, peak_memory_bytes, cpu_time_ms, registered_at,"           \
	" started_at, ended_at"

enum stmt_id {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_JOB_INSERT,
	ST_JOB_GET,
	ST_JOB_LIST,
	ST_JOB_LIST_STATE,
	ST_JOBS_ACTIVE,
	ST_JOBS_QUEUED,
	ST_JOB_UPDATE,
	ST_TASK_INSERT,
	ST_TASK_GET,
	ST_TASKS_ATTEMPT,
	ST_TASKS_ALL,
	ST_TASK_UPDATE,
	ST_EVENT_ADD,
	ST_EVENTS_OF_JOB,
	ST_META_GET,
	ST_META_SET,
	ST_COUNT,
};

static const char *const stmt_sql[ST_COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_JOB_INSERT] = "INSERT INTO jobs (name, spec_json, framework, state, reason, priority,"
                      " attempt, max_restarts, exit_code, restart_pending, submitted_at,"
                      " queued_at, allocated_at, running_at, started_at, ended_at)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_JOB_GET] = "SELECT " JOB_COLS " FROM jobs WHERE id = ?",
    [ST_JOB_LIST] = "SELECT " JOB_COLS " FROM jobs ORDER BY id DESC LIMIT ?",
    [ST_JOB_LIST_STATE] = "SELECT " JOB_COLS " FROM jobs WHERE state = ? ORDER BY id DESC LIMIT ?",
    [ST_JOBS_ACTIVE] = "SELECT " JOB_COLS " FROM jobs"
                       " WHERE state IN ('queued','starting','running')"
                       " ORDER BY priority DESC, id ASC",
    [ST_JOBS_QUEUED] = "SELECT " JOB_COLS " FROM jobs WHERE state = 'queued'"
                       " ORDER BY priority DESC, id ASC",
    [ST_JOB_UPDATE] = "UPDATE jobs SET state = ?, reason = ?, priority = ?, attempt = ?,"
                      " exit_code = ?, restart_pending = ?, queued_at = ?, allocated_at = ?,"
                      " running_at = ?, started_at = ?, ended_at = ? WHERE id = ?",
    [ST_TASK_INSERT] = "INSERT INTO tasks (" TASK_COLS ")"
                       " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_TASK_GET] = "SELECT " TASK_COLS " FROM tasks"
                    " WHERE job_id = ? AND attempt = ? AND role = ? AND idx = ?",
    [ST_TASKS_ATTEMPT] = "SELECT " TASK_COLS " FROM tasks WHERE job_id = ? AND attempt = ?"
                         " ORDER BY attempt, rowid",
    [ST_TASKS_ALL] = "SELECT " TASK_COLS " FROM tasks WHERE job_id = ? ORDER BY attempt, rowid",
    [ST_TASK_UPDATE] = "UPDATE tasks SET state = ?, reason = ?, host = ?, port = ?,"
                       " launcher_pid = ?, pid = ?, gpus = ?, exit_code = ?, signal = ?,"
                       " oom_killed = ?, peak_memory_bytes = ?, cpu_time_ms = ?,"
                       " registered_at = ?, started_at = ?, ended_at = ?"
                       " WHERE job_id = ? AND attempt = ? AND role = ? AND idx = ?",
    [ST_EVENT_ADD] = "INSERT INTO events (job_id, time, kind, message) VALUES (?,?,?,?)",
    [ST_EVENTS_OF_JOB] = "SELECT id, job_id, time, kind, message FROM events"
                         " WHERE job_id = ? ORDER BY id",
    [ST_META_GET] = "SELECT value FROM meta WHERE key = ?",
    [ST_META_SET] = "INSERT INTO meta (key, value) VALUES (?, ?)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
};

struct store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *stmt[ST_COUNT];
	int version;
	bool in_tx;
};

static const char *const job_states[] = {"queued",    "starting", "running",
                                         "succeeded", "failed",   "killed"};
static const char *const task_states[] = {"pending", "starting", "running", "succeeded",
                                          "failed",  "killed",   "lost"};

static int db_error(struct store *s, struct weir_error *err, const char *what)
{
	int code = sqlite3_extended_errcode(s->db);
	enum weir_error_kind kind = WEIR_E_INTERNAL;
	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		kind = WEIR_E_UNAVAILABLE;
	return weir_error_set(err, kind, "store %s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

/* The kept statement `id`, reset and unbound; NULL with err. */
static sqlite3_stmt *stmt_get(struct store *s, enum stmt_id id, struct weir_error *err)
{
	sqlite3_stmt *st = s->stmt[id];
	if (!st) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st,
		                       NULL) != SQLITE_OK) {
			db_error(s, err, "preparing a statement");
			return NULL;
		}
		s->stmt[id] = st;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

/* ---- binding: the sentinels of store.h become NULL ---- */

static void bind_exit(sqlite3_stmt *st, int i, int v)
{
	if (v >= 0)
		sqlite3_bind_int(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* ---- reading ---- */

static int col_exit(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int(st, i);
}

static void col_state(sqlite3_stmt *st, int i, char *dst)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	snprintf(dst, STORE_STATE_MAX, "%s", t ? (const char *)t : "");
}

/* ---- open, migrate, close ---- */

static int exec_sql(struct store *s, const char *sql, const char *what, struct weir_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		weir_error_set(err, WEIR_E_INTERNAL, "store %s: %s: %s", s->path, what,
		               msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* 0 for a file without our meta table (new, or before the first schema). */
static int read_version(struct store *s, int *version, struct weir_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;
	*version = 0;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
	                       -1, &st, NULL) != SQLITE_OK)
		return db_error(s, err, "reading the schema");
	int r = sqlite3_step(st);
	sqlite3_finalize(st);
	st = NULL;
	if (r == SQLITE_DONE)
		return 0;
	if (r != SQLITE_ROW)
		return db_error(s, err, "reading the schema");
	if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = 'schema_version'", -1,
	                       &st, NULL) != SQLITE_OK)
		return db_error(s, err, "reading the schema version");
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		char *end = NULL;
		long v = t ? strtol((const char *)t, &end, 10) : -1;
		if (!t || *end != '\0' || v < 0 || v > INT_MAX) {
			weir_error_set(err, WEIR_E_INTERNAL,
			               "store %s: schema_version is \"%s\"; expected a number",
			               s->path, t ? (const char *)t : "");
			goto out;
		}
		*version = (int)v;
	} else if (r != SQLITE_DONE) {
		db_error(s, err, "reading the schema version");
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	return rc;
}

static int migrate(struct store *s, struct weir_error *err)
{
	int version;
	if (read_version(s, &version, err) < 0)
		return -1;
	if (version > STORE_SCHEMA_VERSION)
		return weir_error_set(err, WEIR_E_INTERNAL,
		                      "store %s: schema version %d is newer than this weir's (%d); "
		                      "use a newer weir",
		                      s->path, version, STORE_SCHEMA_VERSION);
	while (version < STORE_SCHEMA_VERSION) {
		char what[64], set[128];
		snprintf(what, sizeof(what), "migrating to schema version %d", version + 1);
		snprintf(set, sizeof(set),
		         "INSERT INTO meta (key, value) VALUES ('schema_version', '%d')"
		         " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
		         version + 1);
		/* each step in its own transaction: a failed step leaves the file at
		 * the last good version */
		if (exec_sql(s, "BEGIN IMMEDIATE", what, err) < 0)
			return -1;
		if (exec_sql(s, migrations[version], what, err) < 0 ||
		    exec_sql(s, set, what, err) < 0 || exec_sql(s, "COMMIT", what, err) < 0) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
		version++;
	}
	s->version = version;
	return 0;
}

struct store *store_open(const char *path, struct weir_error *err)
{
	struct store *s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		weir_error_set(err, WEIR_E_INTERNAL, "store %s: out of memory", path);
		return NULL;
	}
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		weir_error_set(err, WEIR_E_INTERNAL, "store %s: cannot open: %s", path,
		               s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 5000);
	if (exec_sql(s, "PRAGMA journal_mode = WAL", "turning on WAL", err) < 0 ||
	    exec_sql(s, "PRAGMA synchronous = NORMAL", "setting synchronous", err) < 0 ||
	    exec_sql(s, "PRAGMA foreign_keys = ON", "turning on foreign keys", err) < 0)
		goto fail;
	if (migrate(s, err) < 0)
		goto fail;
	return s;
fail:
	store_close(s);
	return NULL;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
	if (s->in_tx)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

int store_schema_version(struct store *s)
{
	return s->version;
}

sqlite3 *store_db(struct store *s)
{
	return s->db;
}

/* ---- transactions ---- */

static int step_done(struct store *s, sqlite3_stmt *st, const char *what, struct weir_error *err)
{
	int r = sqlite3_step(st);
	if (r != SQLITE_DONE) {
		db_error(s, err, what);
		sqlite3_reset(st);
		return -1;
	}
	sqlite3_reset(st);
	return 0;
}

int store_begin(struct store *s, struct weir_error *err)
{
	if (s->in_tx)
		return weir_error_set(err, WEIR_E_INTERNAL,
		                      "store %s: a transaction is already open", s->path);
	sqlite3_stmt *st = stmt_get(s, ST_BEGIN, err);
	if (!st || step_done(s, st, "beginning a transaction", err) < 0)
		return -1;
	s->in_tx = true;
	return 0;
}

int store_commit(struct store *s, struct weir_error *err)
{
	if (!s->in_tx)
		return weir_error_set(err, WEIR_E_INTERNAL,
		                      "store %s: commit without a transaction", s->path);
	sqlite3_stmt *st = stmt_get(s, ST_COMMIT, err);
	if (!st || step_done(s, st, "committing", err) < 0)
		return -1; /* still open: the caller rolls back */
	s->in_tx = false;
	return 0;
}

int store_rollback(struct store *s, struct weir_error *err)
{
	if (!s->in_tx)
		return 0;
	/* reset every kept statement first: a pending read would hold the
	 * transaction open */
	for (int i = 0; i < ST_COUNT; i++) {
		if (s->stmt[i])
			sqlite3_reset(s->stmt[i]);
	}
	sqlite3_stmt *st = stmt_get(s, ST_ROLLBACK, err);
	s->in_tx = false;
	if (!st)
		return -1;
	if (step_done(s, st, "rolling back", err) < 0)
		return sqlite3_get_autocommit(s->db) ? 0 : -1;
	return 0;
}

bool store_in_transaction(struct store *s)
{
	return s->in_tx;
}

/* ---- jobs ---- */

static int read_job(sqlite3_stmt *st, struct job_row *r)
{
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	r->name = sql_col_text(st, 1);
	r->spec_json = sql_col_text(st, 2);
	r->framework = sql_col_text(st, 3);
	col_state(st, 4, r->state);
	r->reason = sql_col_text(st, 5);
	r->priority = sqlite3_column_int(st, 6);
	r->attempt = sqlite3_column_int(st, 7);
	r->max_restarts = sqlite3_column_int(st, 8);
	r->exit_code = col_exit(st, 9);
	r->restart_pending = sqlite3_column_int(st, 10) != 0;
	r->submitted_at = sql_col_i64(st, 11);
	r->queued_at = sql_col_i64(st, 12);
	r->allocated_at = sql_col_i64(st, 13);
	r->running_at = sql_col_i64(st, 14);
	r->started_at = sql_col_i64(st, 15);
	r->ended_at = sql_col_i64(st, 16);
	if (!r->name || !r->spec_json || !r->framework || !r->reason) {
		job_row_release(r);
		return -1;
	}
	return 0;
}

void job_row_release(struct job_row *row)
{
	if (!row)
		return;
	free(row->name);
	free(row->spec_json);
	free(row->framework);
	free(row->reason);
	row->name = row->spec_json = row->framework = row->reason = NULL;
}

void job_rows_free(struct job_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		job_row_release(&rows[i]);
	free(rows);
}

static int check_job_state(struct store *s, const char *state, struct weir_error *err)
{
	if (!sql_name_in(state, job_states, sizeof(job_states) / sizeof(job_states[0])))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "store %s: job state \"%s\" is not one of queued, starting, "
		                      "running, succeeded, failed, killed",
		                      s->path, state);
	return 0;
}

static int check_task_state(struct store *s, const char *state, struct weir_error *err)
{
	if (!sql_name_in(state, task_states, sizeof(task_states) / sizeof(task_states[0])))
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "store %s: task state \"%s\" is not one of pending, starting, "
		    "running, succeeded, failed, killed, lost",
		    s->path, state);
	return 0;
}

int store_job_insert(struct store *s, const struct job_row *row, int64_t *id,
                     struct weir_error *err)
{
	if (check_job_state(s, row->state, err) < 0)
		return -1;
	sqlite3_stmt *st = stmt_get(s, ST_JOB_INSERT, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, row->name && *row->name ? row->name : "job");
	sql_bind_text(st, 2, row->spec_json ? row->spec_json : "{}");
	sql_bind_text(st, 3, row->framework && *row->framework ? row->framework : "none");
	sql_bind_text(st, 4, row->state);
	sql_bind_text(st, 5, row->reason);
	sqlite3_bind_int(st, 6, row->priority);
	sqlite3_bind_int(st, 7, row->attempt > 0 ? row->attempt : 1);
	sqlite3_bind_int(st, 8, row->max_restarts);
	bind_exit(st, 9, row->exit_code);
	sqlite3_bind_int(st, 10, row->restart_pending);
	sqlite3_bind_int64(st, 11, row->submitted_at);
	sql_bind_pos_or_null(st, 12, row->queued_at);
	sql_bind_pos_or_null(st, 13, row->allocated_at);
	sql_bind_pos_or_null(st, 14, row->running_at);
	sql_bind_pos_or_null(st, 15, row->started_at);
	sql_bind_pos_or_null(st, 16, row->ended_at);
	if (step_done(s, st, "inserting a job", err) < 0)
		return -1;
	if (id)
		*id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

/* Steps a SELECT of job rows into a new array. */
static int collect_jobs(struct store *s, sqlite3_stmt *st, const char *what, struct job_row **rows,
                        size_t *n, struct weir_error *err)
{
	struct job_row *a = NULL;
	size_t len = 0, cap = 0;
	int r;
	*rows = NULL;
	*n = 0;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			size_t c = cap ? cap * 2 : 16;
			struct job_row *b = realloc(a, c * sizeof(*b));
			if (!b)
				goto oom;
			a = b;
			cap = c;
		}
		if (read_job(st, &a[len]) < 0)
			goto oom;
		len++;
	}
	if (r != SQLITE_DONE) {
		db_error(s, err, what);
		goto fail;
	}
	sqlite3_reset(st);
	*rows = a;
	*n = len;
	return 0;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "store %s: %s: out of memory", s->path, what);
fail:
	sqlite3_reset(st);
	job_rows_free(a, len);
	return -1;
}

int store_job_get(struct store *s, int64_t id, struct job_row *out, struct weir_error *err)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = stmt_get(s, ST_JOB_GET, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	struct job_row *rows;
	size_t n;
	if (collect_jobs(s, st, "reading a job", &rows, &n, err) < 0)
		return -1;
	if (n == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no job %" PRId64, id);
	*out = rows[0];
	free(rows);
	return 0;
}

int store_job_list(struct store *s, const char *state, int limit, struct job_row **rows, size_t *n,
                   struct weir_error *err)
{
	sqlite3_stmt *st;
	*rows = NULL;
	*n = 0;
	if (state) {
		if (check_job_state(s, state, err) < 0)
			return -1;
		if (!(st = stmt_get(s, ST_JOB_LIST_STATE, err)))
			return -1;
		sql_bind_text(st, 1, state);
		sqlite3_bind_int(st, 2, limit > 0 ? limit : -1);
	} else {
		if (!(st = stmt_get(s, ST_JOB_LIST, err)))
			return -1;
		sqlite3_bind_int(st, 1, limit > 0 ? limit : -1);
	}
	return collect_jobs(s, st, "listing jobs", rows, n, err);
}

int store_jobs_active(struct store *s, struct job_row **rows, size_t *n, struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = stmt_get(s, ST_JOBS_ACTIVE, err);
	if (!st)
		return -1;
	return collect_jobs(s, st, "listing active jobs", rows, n, err);
}

int store_jobs_queued(struct store *s, struct job_row **rows, size_t *n, struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = stmt_get(s, ST_JOBS_QUEUED, err);
	if (!st)
		return -1;
	return collect_jobs(s, st, "listing queued jobs", rows, n, err);
}

int store_job_update(struct store *s, const struct job_row *row, struct weir_error *err)
{
	if (check_job_state(s, row->state, err) < 0)
		return -1;
	sqlite3_stmt *st = stmt_get(s, ST_JOB_UPDATE, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, row->state);
	sql_bind_text(st, 2, row->reason);
	sqlite3_bind_int(st, 3, row->priority);
	sqlite3_bind_int(st, 4, row->attempt);
	bind_exit(st, 5, row->exit_code);
	sqlite3_bind_int(st, 6, row->restart_pending);
	sql_bind_pos_or_null(st, 7, row->queued_at);
	sql_bind_pos_or_null(st, 8, row->allocated_at);
	sql_bind_pos_or_null(st, 9, row->running_at);
	sql_bind_pos_or_null(st, 10, row->started_at);
	sql_bind_pos_or_null(st, 11, row->ended_at);
	sqlite3_bind_int64(st, 12, row->id);
	if (step_done(s, st, "updating a job", err) < 0)
		return -1;
	if (sqlite3_changes(s->db) == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no job %" PRId64, row->id);
	return 0;
}

/* ---- tasks ---- */

static int read_task(sqlite3_stmt *st, struct task_row *r)
{
	memset(r, 0, sizeof(*r));
	r->job_id = sqlite3_column_int64(st, 0);
	r->attempt = sqlite3_column_int(st, 1);
	r->role = sql_col_text(st, 2);
	r->idx = sqlite3_column_int(st, 3);
	col_state(st, 4, r->state);
	r->reason = sql_col_text(st, 5);
	r->host = sql_col_text(st, 6);
	r->port = (int)sql_col_i64(st, 7);
	r->launcher_pid = (int)sql_col_i64(st, 8);
	r->pid = (int)sql_col_i64(st, 9);
	r->gpus = sql_col_text(st, 10);
	r->exit_code = col_exit(st, 11);
	r->signal = (int)sql_col_i64(st, 12);
	r->oom_killed = sqlite3_column_int(st, 13) != 0;
	r->peak_memory_bytes = sql_col_i64(st, 14);
	r->cpu_time_ms = sql_col_i64(st, 15);
	r->registered_at = sql_col_i64(st, 16);
	r->started_at = sql_col_i64(st, 17);
	r->ended_at = sql_col_i64(st, 18);
	if (!r->role || !r->reason || !r->host || !r->gpus) {
		task_row_release(r);
		return -1;
	}
	return 0;
}

void task_row_release(struct task_row *row)
{
	if (!row)
		return;
	free(row->role);
	free(row->reason);
	free(row->host);
	free(row->gpus);
	row->role = row->reason = row->host = row->gpus = NULL;
}

void task_rows_free(struct task_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		task_row_release(&rows[i]);
	free(rows);
}

/* Binds the fields every task write carries, from index `at`. */
static void bind_task_fields(sqlite3_stmt *st, int at, const struct task_row *row)
{
	sql_bind_text(st, at, row->state);
	sql_bind_text(st, at + 1, row->reason);
	sql_bind_text_or_null(st, at + 2, row->host);
	sql_bind_pos_or_null(st, at + 3, row->port);
	sql_bind_pos_or_null(st, at + 4, row->launcher_pid);
	sql_bind_pos_or_null(st, at + 5, row->pid);
	sql_bind_text_or_null(st, at + 6, row->gpus);
	bind_exit(st, at + 7, row->exit_code);
	sql_bind_pos_or_null(st, at + 8, row->signal);
	sqlite3_bind_int(st, at + 9, row->oom_killed);
	sql_bind_pos_or_null(st, at + 10, row->peak_memory_bytes);
	sql_bind_pos_or_null(st, at + 11, row->cpu_time_ms);
	sql_bind_pos_or_null(st, at + 12, row->registered_at);
	sql_bind_pos_or_null(st, at + 13, row->started_at);
	sql_bind_pos_or_null(st, at + 14, row->ended_at);
}

int store_task_insert(struct store *s, const struct task_row *row, struct weir_error *err)
{
	if (check_task_state(s, row->state, err) < 0)
		return -1;
	if (!row->role || !*row->role)
		return weir_error_set(err, WEIR_E_INVALID, "store %s: a task needs a role",
		                      s->path);
	sqlite3_stmt *st = stmt_get(s, ST_TASK_INSERT, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, row->job_id);
	sqlite3_bind_int(st, 2, row->attempt);
	sql_bind_text(st, 3, row->role);
	sqlite3_bind_int(st, 4, row->idx);
	bind_task_fields(st, 5, row);
	int r = sqlite3_step(st);
	sqlite3_reset(st);
	if (r == SQLITE_DONE)
		return 0;
	int code = sqlite3_extended_errcode(s->db);
	if (code == SQLITE_CONSTRAINT_PRIMARYKEY)
		return weir_error_set(err, WEIR_E_CONFLICT,
		                      "task %s:%d of job %" PRId64 " attempt %d already exists",
		                      row->role, row->idx, row->job_id, row->attempt);
	if (code == SQLITE_CONSTRAINT_FOREIGNKEY)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no job %" PRId64, row->job_id);
	return db_error(s, err, "inserting a task");
}

static int collect_tasks(struct store *s, sqlite3_stmt *st, const char *what,
                         struct task_row **rows, size_t *n, struct weir_error *err)
{
	struct task_row *a = NULL;
	size_t len = 0, cap = 0;
	int r;
	*rows = NULL;
	*n = 0;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			size_t c = cap ? cap * 2 : 16;
			struct task_row *b = realloc(a, c * sizeof(*b));
			if (!b)
				goto oom;
			a = b;
			cap = c;
		}
		if (read_task(st, &a[len]) < 0)
			goto oom;
		len++;
	}
	if (r != SQLITE_DONE) {
		db_error(s, err, what);
		goto fail;
	}
	sqlite3_reset(st);
	*rows = a;
	*n = len;
	return 0;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "store %s: %s: out of memory", s->path, what);
fail:
	sqlite3_reset(st);
	task_rows_free(a, len);
	return -1;
}

int store_task_get(struct store *s, int64_t job_id, int attempt, const char *role, int idx,
                   struct task_row *out, struct weir_error *err)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = stmt_get(s, ST_TASK_GET, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int(st, 2, attempt);
	sql_bind_text(st, 3, role);
	sqlite3_bind_int(st, 4, idx);
	struct task_row *rows;
	size_t n;
	if (collect_tasks(s, st, "reading a task", &rows, &n, err) < 0)
		return -1;
	if (n == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND,
		                      "no task %s:%d in attempt %d of job %" PRId64,
		                      role ? role : "", idx, attempt, job_id);
	*out = rows[0];
	free(rows);
	return 0;
}

int store_tasks_of_job(struct store *s, int64_t job_id, int attempt, struct task_row **rows,
                       size_t *n, struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = stmt_get(s, attempt > 0 ? ST_TASKS_ATTEMPT : ST_TASKS_ALL, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	if (attempt > 0)
		sqlite3_bind_int(st, 2, attempt);
	return collect_tasks(s, st, "listing tasks", rows, n, err);
}

int store_task_update(struct store *s, const struct task_row *row, struct weir_error *err)
{
	if (check_task_state(s, row->state, err) < 0)
		return -1;
	sqlite3_stmt *st = stmt_get(s, ST_TASK_UPDATE, err);
	if (!st)
		return -1;
	bind_task_fields(st, 1, row);
	sqlite3_bind_int64(st, 16, row->job_id);
	sqlite3_bind_int(st, 17, row->attempt);
	sql_bind_text(st, 18, row->role);
	sqlite3_bind_int(st, 19, row->idx);
	if (step_done(s, st, "updating a task", err) < 0)
		return -1;
	if (sqlite3_changes(s->db) == 0)
		return weir_error_set(
		    err, WEIR_E_NOT_FOUND, "no task %s:%d in attempt %d of job %" PRId64,
		    row->role ? row->role : "", row->idx, row->attempt, row->job_id);
	return 0;
}

/* ---- events ---- */

int store_event_add(struct store *s, int64_t job_id, int64_t time_ms, const char *kind,
                    const char *message, int64_t *id, struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(s, ST_EVENT_ADD, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, time_ms);
	sql_bind_text(st, 3, kind);
	sql_bind_text(st, 4, message);
	int r = sqlite3_step(st);
	sqlite3_reset(st);
	if (r != SQLITE_DONE) {
		if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_FOREIGNKEY)
			return weir_error_set(err, WEIR_E_NOT_FOUND, "no job %" PRId64, job_id);
		return db_error(s, err, "adding an event");
	}
	if (id)
		*id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

void event_row_release(struct event_row *row)
{
	if (!row)
		return;
	free(row->kind);
	free(row->message);
	row->kind = row->message = NULL;
}

void event_rows_free(struct event_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		event_row_release(&rows[i]);
	free(rows);
}

int store_events_of_job(struct store *s, int64_t job_id, struct event_row **rows, size_t *n,
                        struct weir_error *err)
{
	struct event_row *a = NULL;
	size_t len = 0, cap = 0;
	int r;
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = stmt_get(s, ST_EVENTS_OF_JOB, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			size_t c = cap ? cap * 2 : 16;
			struct event_row *b = realloc(a, c * sizeof(*b));
			if (!b)
				goto oom;
			a = b;
			cap = c;
		}
		struct event_row *e = &a[len];
		e->id = sqlite3_column_int64(st, 0);
		e->job_id = sqlite3_column_int64(st, 1);
		e->time = sqlite3_column_int64(st, 2);
		e->kind = sql_col_text(st, 3);
		e->message = sql_col_text(st, 4);
		len++;
		if (!e->kind || !e->message)
			goto oom;
	}
	if (r != SQLITE_DONE) {
		db_error(s, err, "listing events");
		goto fail;
	}
	sqlite3_reset(st);
	*rows = a;
	*n = len;
	return 0;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "store %s: listing events: out of memory", s->path);
fail:
	sqlite3_reset(st);
	event_rows_free(a, len);
	return -1;
}

/* ---- meta ---- */

int store_meta_get(struct store *s, const char *key, char **value, struct weir_error *err)
{
	*value = NULL;
	sqlite3_stmt *st = stmt_get(s, ST_META_GET, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, key);
	int r = sqlite3_step(st);
	int rc;
	if (r == SQLITE_ROW) {
		*value = sql_col_text(st, 0);
		rc = *value ? 0 : weir_error_set(err, WEIR_E_INTERNAL, "store: out of memory");
	} else if (r == SQLITE_DONE) {
		rc = 1;
	} else {
		rc = db_error(s, err, "reading meta");
	}
	sqlite3_reset(st);
	return rc;
}

int store_meta_set(struct store *s, const char *key, const char *value, struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(s, ST_META_SET, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, key);
	sql_bind_text(st, 2, value);
	return step_done(s, st, "writing meta", err);
}
