/* store.c: the SQLite store (store.h): schema and migrations, prepared
 * statements kept in the handle, jobs, tasks and meta (a job's events:
 * job_events.c).
 *
 * One connection in WAL mode with synchronous=NORMAL: a server crash
 * (kill -9) loses no committed transaction; only a power cut can lose the
 * last few, which the launchers' retried reports then repair.
 */
#include "store/store.h"
#include "store/sql.h"
#include "store/store_internal.h"
#include "store/wal_batch.h"

#include "lib/clock.h"
#include "lib/metrics.h"

#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define JOB_COLS                                                                                   \
	"id, name, spec_json, framework, state, reason, priority, attempt, max_restarts,"          \
	" exit_code, restart_pending, submitted_at, queued_at, allocated_at, running_at,"          \
	" started_at, ended_at, cause, nonce"

#define TASK_COLS                                                                                  \
	"job_id, attempt, role, idx, state, reason, host, port, launcher_pid, pid, gpus,"          \
	" exit_code, signal, oom_killed, peak_memory_bytes, cpu_time_ms, registered_at,"           \
	" started_at, ended_at, cause"

enum stmt_id {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_JOB_INSERT,
	ST_JOB_INSERT_ROUTED,
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
	ST_META_GET,
	ST_META_SET,
	ST_OUTCOME_GET,
	ST_OUTCOME_SET,
	ST_ROUTE_GET,
	ST_ROUTE_SET,
	ST_BACKEND_GET,
	ST_BACKEND_SET,
	ST_JOB_GLANCE,
	ST_JOB_NONCE,
	ST_JOB_MAX_ID,
	ST_COUNT,
};

static const char *const stmt_sql[ST_COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_JOB_INSERT] = "INSERT INTO jobs (name, spec_json, framework, state, reason, priority,"
                      " attempt, max_restarts, exit_code, restart_pending, submitted_at,"
                      " queued_at, allocated_at, running_at, started_at, ended_at, cause, nonce)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_JOB_INSERT_ROUTED] = "INSERT INTO jobs (name, spec_json, framework, state, reason,"
                             " priority, attempt, max_restarts, exit_code, restart_pending,"
                             " submitted_at, queued_at, allocated_at, running_at, started_at,"
                             " ended_at, cause, nonce, route, route_queue)"
                             " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_JOB_GET] = "SELECT " JOB_COLS " FROM jobs WHERE id = ?",
    [ST_JOB_LIST] = "SELECT " JOB_COLS " FROM jobs ORDER BY id DESC LIMIT ?",
    [ST_JOB_LIST_STATE] = "SELECT " JOB_COLS " FROM jobs WHERE state = ? ORDER BY id DESC LIMIT ?",
    [ST_JOBS_ACTIVE] = "SELECT " JOB_COLS " FROM jobs"
                       " WHERE state IN (?,?,?)"
                       " ORDER BY priority DESC, id ASC",
    [ST_JOBS_QUEUED] = "SELECT " JOB_COLS " FROM jobs WHERE state = ?"
                       " ORDER BY priority DESC, id ASC",
    [ST_JOB_UPDATE] = "UPDATE jobs SET state = ?, reason = ?, priority = ?, attempt = ?,"
                      " exit_code = ?, restart_pending = ?, queued_at = ?, allocated_at = ?,"
                      " running_at = ?, started_at = ?, ended_at = ?, cause = ? WHERE id = ?",
    [ST_TASK_INSERT] = "INSERT INTO tasks (" TASK_COLS ")"
                       " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_TASK_GET] = "SELECT " TASK_COLS " FROM tasks"
                    " WHERE job_id = ? AND attempt = ? AND role = ? AND idx = ?",
    [ST_TASKS_ATTEMPT] = "SELECT " TASK_COLS " FROM tasks WHERE job_id = ? AND attempt = ?"
                         " ORDER BY attempt, rowid",
    [ST_TASKS_ALL] = "SELECT " TASK_COLS " FROM tasks WHERE job_id = ? ORDER BY attempt, rowid",
    [ST_TASK_UPDATE] = "UPDATE tasks SET state = ?, reason = ?, host = ?, port = ?,"
                       " launcher_pid = ?, pid = ?, gpus = ?, exit_code = ?, signal = ?,"
                       " oom_killed = ?, peak_memory_bytes = ?, cpu_time_ms = ?,"
                       " registered_at = ?, started_at = ?, ended_at = ?, cause = ?"
                       " WHERE job_id = ? AND attempt = ? AND role = ? AND idx = ?",
    [ST_META_GET] = "SELECT value FROM meta WHERE key = ?",
    [ST_META_SET] = "INSERT INTO meta (key, value) VALUES (?, ?)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    [ST_OUTCOME_GET] = "SELECT outcome_state, outcome_exit_code, outcome_cause, outcome_reason"
                       " FROM jobs WHERE id = ?",
    [ST_OUTCOME_SET] = "UPDATE jobs SET outcome_state = ?, outcome_exit_code = ?,"
                       " outcome_cause = ?, outcome_reason = ? WHERE id = ?",
    [ST_ROUTE_GET] = "SELECT route, route_queue FROM jobs WHERE id = ?",
    [ST_JOB_GLANCE] = "SELECT state, reason, started_at FROM jobs WHERE id = ?",
    [ST_JOB_NONCE] = "SELECT nonce FROM jobs WHERE id = ?",
    /* AUTOINCREMENT: the sequence holds the last id given, even when its
     * job was deleted since (weir db clean) */
    [ST_JOB_MAX_ID] = "SELECT max(coalesce((SELECT max(id) FROM jobs), 0),"
                      " coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'jobs'), 0))",
    [ST_ROUTE_SET] = "UPDATE jobs SET route = ?, route_queue = ? WHERE id = ?",
    [ST_BACKEND_GET] = "SELECT backend_attempt, backend_id FROM jobs WHERE id = ?",
    [ST_BACKEND_SET] = "UPDATE jobs SET backend_attempt = ?, backend_id = ? WHERE id = ?",
};

struct store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *stmt[ST_COUNT];
	sqlite3_stmt *events[STORE_EVENT_SLOTS]; /* job_events.c's */
	int version;
	bool in_tx;         /* store_begin() was called: the turn's writes share one transaction */
	bool tx_begun;      /* ... and its BEGIN ran (at the turn's first write) */
	uint64_t rollbacks; /* transactions with writes that were rolled back */
	uint64_t space_losses; /* sql_space_losses() when the transaction began */
	bool unsynced;         /* a commit wrote since the WAL was last synced here */
};

static int db_error(struct store *s, struct weir_error *err, const char *what)
{
	return sql_error_in(s->db, s->path, what, WEIR_E_INTERNAL, err);
}

int store_db_error(struct store *s, struct weir_error *err, const char *what)
{
	return db_error(s, err, what);
}

const char *store_path(struct store *s)
{
	return s->path;
}

sqlite3_stmt **store_event_slots(struct store *s)
{
	return s->events;
}

sqlite3_stmt *store_stmt_in(struct store *s, sqlite3_stmt **slot, const char *sql,
                            struct weir_error *err)
{
	sqlite3_stmt *st = *slot;
	if (!st) {
		if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
		    SQLITE_OK) {
			db_error(s, err, "preparing a statement");
			return NULL;
		}
		*slot = st;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (!sqlite3_stmt_readonly(st) && store_write_starts(s, err) < 0)
		return NULL;
	return st;
}

/* The kept statement `id`, reset and unbound; NULL with err. */
static sqlite3_stmt *stmt_get(struct store *s, enum stmt_id id, struct weir_error *err)
{
	return store_stmt_in(s, &s->stmt[id], stmt_sql[id], err);
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

/* A state or cause column read back into its enum (model/states.h,
 * model/end_cause.h): false for a name the table does not know. */
static bool col_job_state(sqlite3_stmt *st, int i, enum job_state *out)
{
	return job_state_from_name((const char *)sqlite3_column_text(st, i), out) == 0;
}

static bool col_task_state(sqlite3_stmt *st, int i, enum task_state *out)
{
	return task_state_from_name((const char *)sqlite3_column_text(st, i), out) == 0;
}

static bool col_cause(sqlite3_stmt *st, int i, enum end_cause *out)
{
	return end_cause_from_name((const char *)sqlite3_column_text(st, i), out) == 0;
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

/* Whether `table` has `column` (the names are the schema's, not input). */
static int has_column(struct store *s, const char *table, const char *column, bool *has,
                      struct weir_error *err)
{
	sqlite3_stmt *st = NULL;
	char sql[128];
	int r;

	*has = false;
	snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?", table);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(s, err, "reading the schema");
	sql_bind_text(st, 1, column);
	r = sqlite3_step(st);
	sqlite3_finalize(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return db_error(s, err, "reading the schema");
	*has = r == SQLITE_ROW;
	return 0;
}

/* The columns migration `version` adds, each where it is missing. */
static int add_columns(struct store *s, int version, const char *what, struct weir_error *err)
{
	size_t n;
	const struct store_column *c = store_migration_columns(version, &n);

	for (size_t i = 0; i < n; i++) {
		char sql[256];
		bool has;
		if (has_column(s, c[i].table, c[i].column, &has, err) < 0)
			return -1;
		if (has)
			continue;
		snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", c[i].table,
		         c[i].column, c[i].decl);
		if (exec_sql(s, sql, what, err) < 0)
			return -1;
	}
	return 0;
}

/* After a migration that edited sqlite_master: the schema cookie one up,
 * so that this connection and every other one read the tables' new SQL. */
static int bump_schema_cookie(struct store *s, const char *what, struct weir_error *err)
{
	sqlite3_stmt *st;
	char sql[64];
	int cookie;

	if (sqlite3_prepare_v2(s->db, "PRAGMA schema_version", -1, &st, NULL) != SQLITE_OK)
		return db_error(s, err, what);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_error(s, err, what);
	}
	cookie = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	snprintf(sql, sizeof sql, "PRAGMA schema_version = %d", cookie + 1);
	return exec_sql(s, sql, what, err);
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
		if (add_columns(s, version, what, err) < 0 ||
		    exec_sql(s, store_migration(version), what, err) < 0 ||
		    (store_migration_edits_schema(version) &&
		     bump_schema_cookie(s, what, err) < 0) ||
		    exec_sql(s, set, what, err) < 0 || exec_sql(s, "COMMIT", what, err) < 0) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
		version++;
	}
	s->version = version;
	return 0;
}

/* SQLite counts every allocation it makes for sqlite3_memory_used() (which
 * weir never asks) under one global mutex: ~300 allocations a DAG task.  Off,
 * once, before the library starts (the first store opened does it; a call
 * after the start is refused by SQLite and changes nothing). */
static void sqlite_no_memstatus(void)
{
	static bool done;

	if (!done) {
		done = true;
		(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	}
}

/* The store's series on the metrics page (lib/metrics.h). */
static struct metrics_hist commit_seconds = METRICS_HIST(
    "weir_store_commit_seconds", "Time one commit of the store's SQLite transaction took.", short);

static void render_series(struct strbuf *out)
{
	metrics_render_hist(out, &commit_seconds);
	metrics_render_header(out, "weir_store_disk_full", "gauge",
	                      "1 while the store's disk is full: changes are refused.");
	strbuf_addf(out, "weir_store_disk_full %d\n", sql_space_short() ? 1 : 0);
	metrics_render_header(out, "weir_store_disk_full_writes_total", "counter",
	                      "Writes of the store that found its disk full (nothing stored).");
	strbuf_addf(out, "weir_store_disk_full_writes_total %llu\n",
	            (unsigned long long)sql_space_losses());
}

static void reset_series(void)
{
	memset(&commit_seconds.cells, 0, sizeof commit_seconds.cells);
}

static struct metrics_source series = {render_series, reset_series, NULL};

void store_series_add(void)
{
	metrics_add_source(&series);
}

struct store *store_open(const char *path, struct weir_error *err)
{
	struct store *s;

	sqlite_no_memstatus();
	store_series_add();
	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		weir_error_set(err, WEIR_E_INTERNAL, "store %s: out of memory", path);
		return NULL;
	}
	/* the log a process before left (killed: nothing synced it) is synced
	 * at the first durable commit, even one that writes nothing */
	s->unsynced = true;
	/* one thread uses the connection (the server's loop), so SQLite's own
	 * locks around each call are not needed (they were 5 % of a task) */
	/* a commit's WAL frames in one write, not two a page (store/wal_batch.h) */
	if (sqlite3_open_v2(path, &s->db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
	                    wal_batch_vfs()) != SQLITE_OK) {
		weir_error_set(err, WEIR_E_INTERNAL, "store %s: cannot open: %s", path,
		               s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 5000);
	/* migrations may edit sqlite_master (schema.h) */
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 0, (int *)NULL);
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
	for (int i = 0; i < STORE_EVENT_SLOTS; i++)
		sqlite3_finalize(s->events[i]);
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
	/* BEGIN waits for the first write (store_write_starts()): a turn that
	 * only reads costs no transaction and no commit */
	s->in_tx = true;
	s->tx_begun = false;
	return 0;
}

int store_write_starts(struct store *s, struct weir_error *err)
{
	sqlite3_stmt *st;

	if (!s->in_tx || s->tx_begun)
		return 0;
	st = s->stmt[ST_BEGIN];
	if (!st) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[ST_BEGIN], -1, SQLITE_PREPARE_PERSISTENT,
		                       &st, NULL) != SQLITE_OK)
			return db_error(s, err, "preparing a statement");
		s->stmt[ST_BEGIN] = st;
	}
	sqlite3_reset(st);
	s->space_losses = sql_space_losses();
	if (step_done(s, st, "beginning a transaction", err) < 0)
		return -1;
	s->tx_begun = true;
	return 0;
}

int store_commit(struct store *s, struct weir_error *err)
{
	if (!s->in_tx)
		return weir_error_set(err, WEIR_E_INTERNAL,
		                      "store %s: commit without a transaction", s->path);
	if (s->tx_begun) {
		sqlite3_stmt *st;
		int64_t t0 = clock_mono_ns();
		/* a write of the turn found the disk full: the rest is not
		 * committed without it (still open: the caller rolls back) */
		if (sql_space_losses() != s->space_losses)
			return weir_error_set(
			    err, WEIR_E_UNAVAILABLE,
			    "store %s: a write of this change found the disk full: "
			    "nothing was stored; try again once space is freed",
			    s->path);
		st = stmt_get(s, ST_COMMIT, err);
		if (!st || step_done(s, st, "committing", err) < 0)
			return -1; /* still open: the caller rolls back */
		metrics_hist_observe(&commit_seconds, (double)(clock_mono_ns() - t0) / 1e9);
		sql_space_back(s->path);
		s->unsynced = true;
	}
	s->in_tx = false;
	s->tx_begun = false;
	return 0;
}

int store_commit_durable(struct store *s, struct weir_error *err)
{
	sqlite3_file *wal = NULL;
	int rc;

	if (s->in_tx && store_commit(s, err) < 0)
		return -1;
	if (!s->unsynced)
		return 0; /* the WAL was synced since the last commit that wrote */
	/* the WAL (through wal_batch.c: its buffered frames are written
	 * first), synced as synchronous=FULL would have at the commit; the
	 * pragma may not change inside the transaction, and the turn's BEGIN
	 * came before anyone knew an acknowledgement would follow */
	rc = sqlite3_file_control(s->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal);
	if (rc == SQLITE_OK && wal && wal->pMethods) {
		rc = wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
		if (rc != SQLITE_OK)
			return weir_error_set(err, WEIR_E_UNAVAILABLE,
			                      "store %s: syncing the log to the disk failed (%s)",
			                      s->path, sqlite3_errstr(rc));
	}
	s->unsynced = false;
	return 0;
}

int store_rollback(struct store *s, struct weir_error *err)
{
	bool begun = s->tx_begun;

	if (!s->in_tx)
		return 0;
	s->in_tx = false;
	s->tx_begun = false;
	if (!begun)
		return 0;
	s->rollbacks++;
	/* reset every kept statement first: a pending read would hold the
	 * transaction open */
	for (int i = 0; i < ST_COUNT; i++) {
		if (s->stmt[i])
			sqlite3_reset(s->stmt[i]);
	}
	sqlite3_stmt *st = stmt_get(s, ST_ROLLBACK, err);
	if (!st)
		return -1;
	if (step_done(s, st, "rolling back", err) < 0)
		return sqlite3_get_autocommit(s->db) ? 0 : -1;
	return 0;
}

uint64_t store_rollbacks(const struct store *s)
{
	return s->rollbacks;
}

bool store_tx_wrote(const struct store *s)
{
	return s->in_tx && s->tx_begun;
}

bool store_disk_full(const struct store *s)
{
	(void)s;
	return sql_space_short();
}

bool store_in_transaction(struct store *s)
{
	return s->in_tx;
}

/* ---- jobs ---- */

/* -1 when out of memory, -2 for a state or cause no table names. */
static int read_job(sqlite3_stmt *st, void *row)
{
	struct job_row *r = row;
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	r->name = sql_col_text(st, 1);
	r->spec_json = sql_col_text(st, 2);
	r->framework = sql_col_text(st, 3);
	bool known = col_job_state(st, 4, &r->state) && col_cause(st, 17, &r->cause);
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
	r->nonce = sqlite3_column_int64(st, 18);
	if (!r->name || !r->spec_json || !r->framework || !r->reason || !known) {
		job_row_release(r);
		return known ? -1 : -2;
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

static void release_job(void *row)
{
	job_row_release(row);
}

/* How sql_collect reads job rows. */
static const struct sql_rows job_rows = {sizeof(struct job_row), read_job, release_job};

/* A state and a cause to write: each must have a name. */
static int check_job_enums(struct store *s, enum job_state state, enum end_cause cause,
                           struct weir_error *err)
{
	if ((unsigned)state >= JOB_STATE_COUNT || (unsigned)cause >= END_CAUSE_COUNT)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "store %s: job state %d or cause %d is out of range", s->path,
		                      (int)state, (int)cause);
	return 0;
}

static int check_task_enums(struct store *s, enum task_state state, enum end_cause cause,
                            struct weir_error *err)
{
	if ((unsigned)state >= TASK_STATE_COUNT || (unsigned)cause >= END_CAUSE_COUNT)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "store %s: task state %d or cause %d is out of range",
		                      s->path, (int)state, (int)cause);
	return 0;
}

/* The error of a row read back with a name the tables do not know. */
static int unknown_name(struct store *s, const char *what, struct weir_error *err)
{
	return weir_error_set(err, WEIR_E_INTERNAL,
	                      "store %s: %s: a state or cause this weir does not know", s->path,
	                      what);
}

static const char *const route_names[] = {[JOB_ROUTE_LOCAL] = "local", [JOB_ROUTE_GANG] = "slurm"};

/* store_job_insert(), with the route's columns when `route` is set. */
static int job_insert(struct store *s, const struct job_row *row, enum job_route route,
                      const char *queue, int64_t *id, struct weir_error *err)
{
	if (check_job_enums(s, row->state, row->cause, err) < 0)
		return -1;
	if (route != JOB_ROUTE_UNSET && route != JOB_ROUTE_LOCAL && route != JOB_ROUTE_GANG)
		return weir_error_set(err, WEIR_E_INVALID, "store %s: route %d is out of range",
		                      s->path, (int)route);
	sqlite3_stmt *st =
	    stmt_get(s, route == JOB_ROUTE_UNSET ? ST_JOB_INSERT : ST_JOB_INSERT_ROUTED, err);
	if (!st)
		return -1;
	if (route != JOB_ROUTE_UNSET) {
		sql_bind_text(st, 19, route_names[route]);
		sql_bind_text_or_null(st, 20, queue);
	}
	sql_bind_text(st, 1, row->name && *row->name ? row->name : "job");
	sql_bind_text(st, 2, row->spec_json ? row->spec_json : "{}");
	sql_bind_text(st, 3, row->framework && *row->framework ? row->framework : "none");
	sql_bind_text(st, 4, job_state_name(row->state));
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
	sql_bind_text(st, 17, end_cause_name(row->cause));
	sqlite3_bind_int64(st, 18, row->nonce);
	if (step_done(s, st, "inserting a job", err) < 0)
		return -1;
	if (id)
		*id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int store_job_insert(struct store *s, const struct job_row *row, int64_t *id,
                     struct weir_error *err)
{
	return job_insert(s, row, JOB_ROUTE_UNSET, NULL, id, err);
}

int store_job_insert_routed(struct store *s, const struct job_row *row, enum job_route route,
                            const char *queue, int64_t *id, struct weir_error *err)
{
	if (route == JOB_ROUTE_UNSET)
		return weir_error_set(err, WEIR_E_INVALID, "store %s: a job's route must be set",
		                      s->path);
	return job_insert(s, row, route, queue, id, err);
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
	if (sql_collect(st, &job_rows, s->path, "reading a job", &rows, &n, err) < 0)
		return -1;
	if (n == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no job %" PRId64, id);
	*out = rows[0];
	free(rows);
	return 0;
}

int store_job_list(struct store *s, const enum job_state *state, int limit, struct job_row **rows,
                   size_t *n, struct weir_error *err)
{
	sqlite3_stmt *st;
	*rows = NULL;
	*n = 0;
	if (state) {
		if (check_job_enums(s, *state, END_CAUSE_NONE, err) < 0)
			return -1;
		if (!(st = stmt_get(s, ST_JOB_LIST_STATE, err)))
			return -1;
		sql_bind_text(st, 1, job_state_name(*state));
		sqlite3_bind_int(st, 2, limit > 0 ? limit : -1);
	} else {
		if (!(st = stmt_get(s, ST_JOB_LIST, err)))
			return -1;
		sqlite3_bind_int(st, 1, limit > 0 ? limit : -1);
	}
	return sql_collect(st, &job_rows, s->path, "listing jobs", rows, n, err);
}

int store_jobs_active(struct store *s, struct job_row **rows, size_t *n, struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = stmt_get(s, ST_JOBS_ACTIVE, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, job_state_name(JOB_QUEUED));
	sql_bind_text(st, 2, job_state_name(JOB_STARTING));
	sql_bind_text(st, 3, job_state_name(JOB_RUNNING));
	return sql_collect(st, &job_rows, s->path, "listing active jobs", rows, n, err);
}

int store_jobs_queued(struct store *s, struct job_row **rows, size_t *n, struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = stmt_get(s, ST_JOBS_QUEUED, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, job_state_name(JOB_QUEUED));
	return sql_collect(st, &job_rows, s->path, "listing queued jobs", rows, n, err);
}

int store_job_update(struct store *s, const struct job_row *row, struct weir_error *err)
{
	if (check_job_enums(s, row->state, row->cause, err) < 0)
		return -1;
	sqlite3_stmt *st = stmt_get(s, ST_JOB_UPDATE, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, job_state_name(row->state));
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
	sql_bind_text(st, 12, end_cause_name(row->cause));
	sqlite3_bind_int64(st, 13, row->id);
	if (step_done(s, st, "updating a job", err) < 0)
		return -1;
	if (sqlite3_changes(s->db) == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no job %" PRId64, row->id);
	return 0;
}

/* ---- tasks ---- */

/* -1 when out of memory, -2 for a state or cause no table names. */
static int read_task(sqlite3_stmt *st, void *row)
{
	struct task_row *r = row;
	memset(r, 0, sizeof(*r));
	r->job_id = sqlite3_column_int64(st, 0);
	r->attempt = sqlite3_column_int(st, 1);
	r->role = sql_col_text(st, 2);
	r->idx = sqlite3_column_int(st, 3);
	bool known = col_task_state(st, 4, &r->state) && col_cause(st, 19, &r->cause);
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
	if (!r->role || !r->reason || !r->host || !r->gpus || !known) {
		task_row_release(r);
		return known ? -1 : -2;
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

static void release_task(void *row)
{
	task_row_release(row);
}

/* How sql_collect reads task rows. */
static const struct sql_rows task_rows = {sizeof(struct task_row), read_task, release_task};

/* Binds the fields every task write carries, from index `at`. */
static void bind_task_fields(sqlite3_stmt *st, int at, const struct task_row *row)
{
	sql_bind_text(st, at, task_state_name(row->state));
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
	sql_bind_text(st, at + 15, end_cause_name(row->cause));
}

int store_task_insert(struct store *s, const struct task_row *row, struct weir_error *err)
{
	if (check_task_enums(s, row->state, row->cause, err) < 0)
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
	if (sql_collect(st, &task_rows, s->path, "reading a task", &rows, &n, err) < 0)
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
	return sql_collect(st, &task_rows, s->path, "listing tasks", rows, n, err);
}

int store_task_update(struct store *s, const struct task_row *row, struct weir_error *err)
{
	if (check_task_enums(s, row->state, row->cause, err) < 0)
		return -1;
	sqlite3_stmt *st = stmt_get(s, ST_TASK_UPDATE, err);
	if (!st)
		return -1;
	bind_task_fields(st, 1, row);
	sqlite3_bind_int64(st, 17, row->job_id);
	sqlite3_bind_int(st, 18, row->attempt);
	sql_bind_text(st, 19, row->role);
	sqlite3_bind_int(st, 20, row->idx);
	if (step_done(s, st, "updating a task", err) < 0)
		return -1;
	if (sqlite3_changes(s->db) == 0)
		return weir_error_set(
		    err, WEIR_E_NOT_FOUND, "no task %s:%d in attempt %d of job %" PRId64,
		    row->role ? row->role : "", row->idx, row->attempt, row->job_id);
	return 0;
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

/* ---- per-job facts: columns store_job_update() leaves alone ---- */

/* Steps a write of one job's columns; WEIR_E_NOT_FOUND when no job has the id. */
static int job_fact_write(struct store *s, sqlite3_stmt *st, int64_t job_id, const char *what,
                          struct weir_error *err)
{
	if (step_done(s, st, what, err) < 0)
		return -1;
	if (sqlite3_changes(s->db) == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no job %" PRId64, job_id);
	return 0;
}

/* Steps a read of one job's columns: 0 at its row, -1 with err. */
static int job_fact_read(struct store *s, sqlite3_stmt *st, int64_t job_id, const char *what,
                         struct weir_error *err)
{
	sqlite3_bind_int64(st, 1, job_id);
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		return 0;
	if (r == SQLITE_DONE)
		weir_error_set(err, WEIR_E_NOT_FOUND, "no job %" PRId64, job_id);
	else
		db_error(s, err, what);
	sqlite3_reset(st);
	return -1;
}

int store_job_outcome_get(struct store *s, int64_t job_id, struct job_outcome *out,
                          struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(s, ST_OUTCOME_GET, err);
	int rc = 1;

	memset(out, 0, sizeof *out);
	out->exit_code = -1;
	if (!st || job_fact_read(s, st, job_id, "reading a job's outcome", err) < 0)
		return -1;
	if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
		const unsigned char *reason = sqlite3_column_text(st, 3);
		if (!col_job_state(st, 0, &out->state) || !col_cause(st, 2, &out->cause)) {
			rc = unknown_name(s, "reading a job's outcome", err);
		} else {
			out->exit_code = col_exit(st, 1);
			snprintf(out->reason, sizeof out->reason, "%s",
			         reason ? (const char *)reason : "");
			rc = 0;
		}
	}
	sqlite3_reset(st);
	return rc;
}

int store_job_outcome_set(struct store *s, int64_t job_id, const struct job_outcome *o,
                          struct weir_error *err)
{
	if (o && check_job_enums(s, o->state, o->cause, err) < 0)
		return -1;
	sqlite3_stmt *st = stmt_get(s, ST_OUTCOME_SET, err);
	if (!st)
		return -1;
	if (o) {
		sql_bind_text(st, 1, job_state_name(o->state));
		bind_exit(st, 2, o->exit_code);
		sql_bind_text(st, 3, end_cause_name(o->cause));
		sql_bind_text(st, 4, o->reason);
	} /* else every column NULL: none waits */
	sqlite3_bind_int64(st, 5, job_id);
	return job_fact_write(s, st, job_id, "writing a job's outcome", err);
}

int store_job_route_set(struct store *s, int64_t job_id, enum job_route route, const char *queue,
                        struct weir_error *err)
{
	if (route != JOB_ROUTE_LOCAL && route != JOB_ROUTE_GANG)
		return weir_error_set(err, WEIR_E_INVALID, "store %s: route %d is out of range",
		                      s->path, (int)route);
	sqlite3_stmt *st = stmt_get(s, ST_ROUTE_SET, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, route_names[route]);
	sql_bind_text_or_null(st, 2, queue);
	sqlite3_bind_int64(st, 3, job_id);
	return job_fact_write(s, st, job_id, "writing a job's route", err);
}

int store_job_route_get(struct store *s, int64_t job_id, enum job_route *route, char *queue,
                        size_t size, struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(s, ST_ROUTE_GET, err);

	*route = JOB_ROUTE_UNSET;
	if (size)
		queue[0] = '\0';
	if (!st || job_fact_read(s, st, job_id, "reading a job's route", err) < 0)
		return -1;
	const char *name = (const char *)sqlite3_column_text(st, 0);
	const unsigned char *q = sqlite3_column_text(st, 1);
	for (size_t i = 0; name && i < sizeof route_names / sizeof route_names[0]; i++) {
		if (route_names[i] && strcmp(name, route_names[i]) == 0)
			*route = (enum job_route)i;
	}
	if (q && size)
		snprintf(queue, size, "%s", (const char *)q);
	sqlite3_reset(st);
	return 0;
}

int store_job_glance(struct store *s, int64_t job_id, struct job_row *out, struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(s, ST_JOB_GLANCE, err);
	bool known;

	memset(out, 0, sizeof(*out));
	if (!st || job_fact_read(s, st, job_id, "reading a job", err) < 0)
		return -1;
	out->id = job_id;
	known = col_job_state(st, 0, &out->state);
	out->reason = sql_col_text(st, 1);
	out->started_at = sql_col_i64(st, 2);
	sqlite3_reset(st);
	if (!known || !out->reason)
		job_row_release(out);
	if (!known)
		return weir_error_set(err, WEIR_E_INTERNAL,
		                      "store %s: job %" PRId64 ": a state this weir does not know",
		                      s->path, job_id);
	if (!out->reason)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return 0;
}

int store_job_nonce_get(struct store *s, int64_t job_id, int64_t *nonce, struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(s, ST_JOB_NONCE, err);

	*nonce = 0;
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		*nonce = sqlite3_column_int64(st, 0);
	else if (r != SQLITE_DONE)
		db_error(s, err, "reading a job's nonce");
	sqlite3_reset(st);
	return r == SQLITE_ROW ? 0 : r == SQLITE_DONE ? 1 : -1;
}

int store_job_max_id(struct store *s, int64_t *id, struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(s, ST_JOB_MAX_ID, err);

	*id = 0;
	if (!st)
		return -1;
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	else
		db_error(s, err, "reading the last job's id");
	sqlite3_reset(st);
	return r == SQLITE_ROW ? 0 : -1;
}

int64_t store_job_nonce_new(void)
{
	uint64_t v = 0;

	/* getrandom of 8 bytes does not fail short (at most 256 bytes are
	 * atomic); a failure (no entropy yet, at boot with GRND_NONBLOCK not
	 * asked: it blocks instead) leaves the clock's and the pid's mix */
	if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
		v = (uint64_t)clock_now_ms() * 6364136223846793005ULL ^ (uint64_t)getpid();
	v &= (1ULL << 53) - 1; /* exact in any JSON reader (a double's mantissa) */
	return v ? (int64_t)v : 1;
}

int store_job_backend_set(struct store *s, int64_t job_id, int attempt, const char *backend_id,
                          struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(s, ST_BACKEND_SET, err);
	if (!st)
		return -1;
	sqlite3_bind_int(st, 1, attempt);
	sql_bind_text(st, 2, backend_id);
	sqlite3_bind_int64(st, 3, job_id);
	return job_fact_write(s, st, job_id, "writing a job's backend id", err);
}

int store_job_backend_get(struct store *s, int64_t job_id, int *attempt, char *id, size_t size,
                          struct weir_error *err)
{
	sqlite3_stmt *st = stmt_get(s, ST_BACKEND_GET, err);
	int rc = 1;

	*attempt = 0;
	if (size)
		id[0] = '\0';
	if (!st || job_fact_read(s, st, job_id, "reading a job's backend id", err) < 0)
		return -1;
	const unsigned char *v = sqlite3_column_text(st, 1);
	if (sqlite3_column_type(st, 0) != SQLITE_NULL && v) {
		*attempt = sqlite3_column_int(st, 0);
		if (size)
			snprintf(id, size, "%s", (const char *)v);
		rc = 0;
	}
	sqlite3_reset(st);
	return rc;
}
