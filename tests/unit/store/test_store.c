/* test_store.c: the store against real SQLite files in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "store_tmp.h"

struct fixture {
	char dir[256];
	char path[300];
	struct store *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (store_tmp_make(f->dir, sizeof f->dir, f->path, sizeof f->path, "weir-store") < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	store_close(f->s);
	store_tmp_remove(f->dir, f->path);
	free(f);
	return 0;
}

static struct store *open_ok(const char *path)
{
	struct weir_error err = {0};
	struct store *s = store_open(path, &err);
	if (!s)
		fail_msg("store_open: %s", err.msg);
	return s;
}

static int64_t add_job(struct store *s, const char *name, int priority, const char *state,
                       int64_t at)
{
	struct job_row r = {
	    .name = (char *)name,
	    .spec_json = (char *)"{\"roles\":{}}",
	    .framework = (char *)"pytorch",
	    .reason = (char *)"",
	    .priority = priority,
	    .attempt = 1,
	    .max_restarts = 2,
	    .exit_code = -1,
	    .submitted_at = at,
	    .queued_at = at,
	};
	assert_int_equal(job_state_from_name(state, &r.state), 0);
	int64_t id = 0;
	struct weir_error err = {0};
	if (store_job_insert(s, &r, &id, &err) != 0)
		fail_msg("insert: %s", err.msg);
	return id;
}

static void add_task(struct store *s, int64_t job, int attempt, const char *role, int idx)
{
	struct task_row t = {.job_id = job,
	                     .attempt = attempt,
	                     .role = (char *)role,
	                     .idx = idx,
	                     .exit_code = -1,
	                     .gpus = (char *)""};
	t.state = TASK_PENDING;
	struct weir_error err = {0};
	if (store_task_insert(s, &t, &err) != 0)
		fail_msg("task insert: %s", err.msg);
}

static void test_jobs(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	f->s = open_ok(f->path);
	assert_int_equal(store_schema_version(f->s), STORE_SCHEMA_VERSION);

	int64_t a = add_job(f->s, "a", 0, "queued", 1000);
	int64_t b = add_job(f->s, "b", 5, "queued", 2000);
	int64_t c = add_job(f->s, "c", 0, "running", 3000);
	int64_t d = add_job(f->s, "d", 0, "succeeded", 4000);
	assert_true(a < b && b < c && c < d);

	struct job_row r;
	assert_int_equal(store_job_get(f->s, b, &r, &err), 0);
	assert_string_equal(r.name, "b");
	assert_string_equal(r.framework, "pytorch");
	assert_int_equal(r.state, JOB_QUEUED);
	assert_string_equal(r.reason, "");
	assert_string_equal(r.spec_json, "{\"roles\":{}}");
	assert_int_equal(r.priority, 5);
	assert_int_equal(r.attempt, 1);
	assert_int_equal(r.max_restarts, 2);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.submitted_at, 2000);
	assert_int_equal(r.started_at, 0);

	/* update */
	r.state = JOB_FAILED;
	free(r.reason);
	r.reason = strdup("worker:1 exited 1");
	r.exit_code = 1;
	r.attempt = 2;
	r.started_at = 2500;
	r.ended_at = 2600;
	assert_int_equal(store_job_update(f->s, &r, &err), 0);
	job_row_release(&r);
	assert_int_equal(store_job_get(f->s, b, &r, &err), 0);
	assert_int_equal(r.state, JOB_FAILED);
	assert_string_equal(r.reason, "worker:1 exited 1");
	assert_int_equal(r.exit_code, 1);
	assert_int_equal(r.attempt, 2);
	assert_int_equal(r.ended_at, 2600);
	/* exit code 0 is a value, not "none" */
	r.exit_code = 0;
	assert_int_equal(store_job_update(f->s, &r, &err), 0);
	job_row_release(&r);
	assert_int_equal(store_job_get(f->s, b, &r, &err), 0);
	assert_int_equal(r.exit_code, 0);

	/* a state out of range and a missing job */
	r.state = (enum job_state)JOB_STATE_COUNT;
	assert_int_equal(store_job_update(f->s, &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	r.state = JOB_FAILED;
	r.id = 999;
	assert_int_equal(store_job_update(f->s, &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	job_row_release(&r);
	job_row_release(&r); /* released twice: harmless */
	assert_int_equal(store_job_get(f->s, 999, &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_string_equal(err.msg, "no job 999");

	/* lists: newest first, by state, limited */
	struct job_row *rows;
	size_t n;
	assert_int_equal(store_job_list(f->s, NULL, 0, &rows, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(rows[0].id, d);
	assert_int_equal(rows[3].id, a);
	job_rows_free(rows, n);
	assert_int_equal(store_job_list(f->s, NULL, 2, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].id, d);
	job_rows_free(rows, n);
	assert_int_equal(store_job_list(f->s, &(enum job_state){JOB_QUEUED}, 0, &rows, &n, &err),
	                 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, a);
	job_rows_free(rows, n);
	assert_int_equal(store_job_list(f->s, &(enum job_state){JOB_KILLED}, 0, &rows, &n, &err),
	                 0);
	assert_int_equal(n, 0);
	assert_null(rows);
	assert_int_equal(
	    store_job_list(f->s, &(enum job_state){(enum job_state)99}, 0, &rows, &n, &err), -1);

	/* active: priority DESC, id ASC */
	int64_t e = add_job(f->s, "e", 9, "starting", 5000);
	int64_t g = add_job(f->s, "g", 0, "queued", 6000);
	assert_int_equal(store_jobs_active(f->s, &rows, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(rows[0].id, e);
	assert_int_equal(rows[1].id, a);
	assert_int_equal(rows[2].id, c);
	assert_int_equal(rows[3].id, g);
	job_rows_free(rows, n);
	/* queued only, in the same order */
	assert_int_equal(store_jobs_queued(f->s, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].id, a);
	assert_int_equal(rows[1].id, g);
	job_rows_free(rows, n);
}

static void test_tasks_every_attempt(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	f->s = open_ok(f->path);
	int64_t j = add_job(f->s, "t", 0, "running", 1000);
	add_task(f->s, j, 1, "worker", 0);
	add_task(f->s, j, 1, "worker", 1);
	add_task(f->s, j, 1, "ps", 0);
	add_task(f->s, j, 2, "worker", 0);
	add_task(f->s, j, 2, "worker", 1);
	add_task(f->s, j, 2, "ps", 0);

	/* duplicates and orphans */
	struct task_row t = {.job_id = j, .attempt = 1, .role = (char *)"worker", .idx = 0};
	t.state = TASK_PENDING;
	assert_int_equal(store_task_insert(f->s, &t, &err), -1);
	assert_int_equal(err.kind, WEIR_E_CONFLICT);
	t.job_id = 4242;
	assert_int_equal(store_task_insert(f->s, &t, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	t.job_id = j;
	t.state = (enum task_state)TASK_STATE_COUNT;
	assert_int_equal(store_task_insert(f->s, &t, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);

	/* update attempt 1's worker 1 with everything */
	struct task_row r;
	assert_int_equal(store_task_get(f->s, j, 1, "worker", 1, &r, &err), 0);
	assert_int_equal(r.state, TASK_PENDING);
	assert_string_equal(r.host, "");
	assert_string_equal(r.gpus, "");
	assert_int_equal(r.exit_code, -1);
	r.state = TASK_FAILED;
	free(r.reason);
	r.reason = strdup("OOMKilled");
	free(r.host);
	r.host = strdup("127.0.0.1");
	free(r.gpus);
	r.gpus = strdup("0,1");
	r.port = 40411;
	r.launcher_pid = 100;
	r.pid = 101;
	r.exit_code = 137;
	r.signal = 9;
	r.oom_killed = true;
	r.peak_memory_bytes = 5000000000LL;
	r.cpu_time_ms = 5310;
	r.registered_at = 1100;
	r.started_at = 1200;
	r.ended_at = 1300;
	assert_int_equal(store_task_update(f->s, &r, &err), 0);
	task_row_release(&r);
	assert_int_equal(store_task_get(f->s, j, 1, "worker", 1, &r, &err), 0);
	assert_int_equal(r.state, TASK_FAILED);
	assert_string_equal(r.reason, "OOMKilled");
	assert_string_equal(r.host, "127.0.0.1");
	assert_string_equal(r.gpus, "0,1");
	assert_int_equal(r.port, 40411);
	assert_int_equal(r.launcher_pid, 100);
	assert_int_equal(r.pid, 101);
	assert_int_equal(r.exit_code, 137);
	assert_int_equal(r.signal, 9);
	assert_true(r.oom_killed);
	assert_true(r.peak_memory_bytes == 5000000000LL);
	assert_int_equal(r.cpu_time_ms, 5310);
	assert_int_equal(r.registered_at, 1100);
	assert_int_equal(r.started_at, 1200);
	assert_int_equal(r.ended_at, 1300);
	r.idx = 7;
	assert_int_equal(store_task_update(f->s, &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	task_row_release(&r);
	assert_int_equal(store_task_get(f->s, j, 3, "worker", 0, &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	/* one attempt, in insertion order; all attempts by attempt */
	struct task_row *rows;
	size_t n;
	assert_int_equal(store_tasks_of_job(f->s, j, 2, &rows, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(rows[0].role, "worker");
	assert_int_equal(rows[1].idx, 1);
	assert_string_equal(rows[2].role, "ps");
	assert_int_equal(rows[2].attempt, 2);
	assert_int_equal(rows[1].state, TASK_PENDING); /* attempt 2 untouched */
	task_rows_free(rows, n);
	assert_int_equal(store_tasks_of_job(f->s, j, 0, &rows, &n, &err), 0);
	assert_int_equal(n, 6);
	assert_int_equal(rows[0].attempt, 1);
	assert_int_equal(rows[1].state, TASK_FAILED);
	assert_int_equal(rows[5].attempt, 2);
	task_rows_free(rows, n);
}

static void test_events_and_meta(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	f->s = open_ok(f->path);
	int64_t j = add_job(f->s, "e", 0, "queued", 1000);
	int64_t id1 = 0, id2 = 0;
	assert_int_equal(store_event_add(f->s, j, 1000, "submitted", "by alice", &id1, &err), 0);
	assert_int_equal(store_event_add(f->s, j, 1001, "state", "queued -> starting", &id2, &err),
	                 0);
	assert_true(id2 > id1);
	assert_int_equal(store_event_add(f->s, 999, 1, "x", "y", NULL, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	struct event_row *ev;
	size_t n;
	assert_int_equal(store_events_of_job(f->s, j, &ev, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ev[0].kind, "submitted");
	assert_string_equal(ev[0].message, "by alice");
	assert_int_equal(ev[1].time, 1001);
	assert_int_equal(ev[1].job_id, j);
	event_rows_free(ev, n);

	char *v = NULL;
	assert_int_equal(store_meta_get(f->s, "node", &v, &err), 1);
	assert_null(v);
	assert_int_equal(store_meta_set(f->s, "node", "a", &err), 0);
	assert_int_equal(store_meta_set(f->s, "node", "b", &err), 0);
	assert_int_equal(store_meta_get(f->s, "node", &v, &err), 0);
	assert_string_equal(v, "b");
	free(v);
	assert_int_equal(store_meta_get(f->s, "schema_version", &v, &err), 0);
	char want[16];
	snprintf(want, sizeof(want), "%d", STORE_SCHEMA_VERSION);
	assert_string_equal(v, want);
	free(v);
}

/* A turn's events written together: every size of statement (16, 8, 4, 2,
 * 1 rows) in one call, ids ascending in the array's order, read back as
 * one by one would have stored them; a missing job fails the call. */
static void test_events_in_batches(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct event_row in[31], *ev;
	char msg[31][16];
	size_t n;
	f->s = open_ok(f->path);
	int64_t a = add_job(f->s, "a", 0, "queued", 1000),
	        b = add_job(f->s, "b", 0, "queued", 1000);
	int64_t before = 0;
	assert_int_equal(store_event_add(f->s, a, 1, "submitted", "first", &before, &err), 0);
	for (int i = 0; i < 31; i++) {
		snprintf(msg[i], sizeof msg[i], "e%d 'x'", i);
		in[i] = (struct event_row){.job_id = i % 3 ? a : b,
		                           .time = 100 + i,
		                           .kind = (char *)(i % 2 ? "task" : "state"),
		                           .message = msg[i]};
	}
	assert_int_equal(store_events_add(f->s, in, 31, &err), 0);
	assert_int_equal(store_events_of_job(f->s, a, &ev, &n, &err), 0);
	assert_int_equal(n, 1 + 20);
	assert_string_equal(ev[0].message, "first");
	for (size_t i = 1, k = 0; i < n; i++, k++) {
		while (k % 3 == 0)
			k++;
		assert_true(ev[i].id > ev[i - 1].id);
		assert_string_equal(ev[i].message, msg[k]);
		assert_int_equal(ev[i].time, 100 + (int64_t)k);
		assert_string_equal(ev[i].kind, k % 2 ? "task" : "state");
	}
	event_rows_free(ev, n);
	assert_int_equal(store_events_of_job(f->s, b, &ev, &n, &err), 0);
	assert_int_equal(n, 11);
	assert_true(ev[0].id > before);
	assert_string_equal(ev[10].message, msg[30]);
	event_rows_free(ev, n);
	in[0].job_id = 999;
	assert_int_equal(store_events_add(f->s, in, 3, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
}

/* A job inserted with its route reads it back as store_job_route_set wrote
 * it; an unset route is refused. */
static void test_insert_routed(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct job_row r = {.name = (char *)"r",
	                    .spec_json = (char *)"{}",
	                    .reason = (char *)"",
	                    .attempt = 1,
	                    .exit_code = -1,
	                    .state = JOB_QUEUED,
	                    .submitted_at = 5};
	enum job_route route = JOB_ROUTE_UNSET;
	char queue[72];
	int64_t id = 0, id2 = 0;
	f->s = open_ok(f->path);
	assert_int_equal(store_job_insert_routed(f->s, &r, JOB_ROUTE_GANG, "gpu.q", &id, &err), 0);
	assert_int_equal(store_job_route_get(f->s, id, &route, queue, sizeof queue, &err), 0);
	assert_int_equal(route, JOB_ROUTE_GANG);
	assert_string_equal(queue, "gpu.q");
	assert_int_equal(store_job_insert_routed(f->s, &r, JOB_ROUTE_LOCAL, NULL, &id2, &err), 0);
	assert_int_equal(store_job_route_get(f->s, id2, &route, queue, sizeof queue, &err), 0);
	assert_int_equal(route, JOB_ROUTE_LOCAL);
	assert_string_equal(queue, "");
	assert_int_equal(store_job_insert_routed(f->s, &r, JOB_ROUTE_UNSET, NULL, &id2, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
}

static void test_reopen_keeps_data(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	f->s = open_ok(f->path);
	int64_t j = add_job(f->s, "kept", 3, "running", 1000);
	add_task(f->s, j, 1, "chief", 0);
	assert_int_equal(store_event_add(f->s, j, 1000, "submitted", "", NULL, &err), 0);
	store_close(f->s);
	f->s = open_ok(f->path);
	struct job_row r;
	assert_int_equal(store_job_get(f->s, j, &r, &err), 0);
	assert_string_equal(r.name, "kept");
	assert_int_equal(r.priority, 3);
	job_row_release(&r);
	struct task_row t;
	assert_int_equal(store_task_get(f->s, j, 1, "chief", 0, &t, &err), 0);
	task_row_release(&t);
	/* ids keep growing after a reopen (AUTOINCREMENT: never reused) */
	int64_t k = add_job(f->s, "next", 0, "queued", 2000);
	assert_true(k > j);

	/* the file is in WAL mode */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db;
	char *msg = NULL;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

static int raw_count(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* The number of `op` instructions in the program of `sql` on `db`. */
static int explain_count(sqlite3 *db, const char *sql, const char *op)
{
	char q[512];
	sqlite3_stmt *st;
	int n = 0;
	snprintf(q, sizeof q, "EXPLAIN %s", sql);
	assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		n += strcmp((const char *)sqlite3_column_text(st, 1), op) == 0;
	sqlite3_finalize(st);
	return n;
}

/* Version 11 writes the state CHECKs as comparisons: they hold as before,
 * and a write that sets a state builds no temporary index of the allowed
 * values, on the connection that migrated as on a new one. */
static void test_state_checks_compare(void **state)
{
	struct fixture *f = *state;
	const char *writes[] = {
	    "UPDATE jobs SET state = 'failed' WHERE id = 1",
	    "UPDATE tasks SET state = 'lost' WHERE job_id = 1",
	    "UPDATE dag_runs SET state = 'success', run_type = 'manual' WHERE id = 1",
	    "UPDATE task_instances SET state = 'skipped' WHERE job_id = 1",
	    "UPDATE task_instance_tries SET state = 'removed' WHERE job_id = 1",
	};

	f->s = open_ok(f->path);
	for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++)
		assert_int_equal(explain_count(store_db(f->s), writes[i], "OpenEphemeral"), 0);
	int64_t j = add_job(f->s, "checked", 0, "queued", 1000);
	char bad[128];
	snprintf(bad, sizeof bad, "UPDATE jobs SET state = 'sleeping' WHERE id = %lld",
	         (long long)j);
	assert_int_equal(sqlite3_exec(store_db(f->s), bad, NULL, NULL, NULL),
	                 SQLITE_CONSTRAINT_CHECK);
	snprintf(bad, sizeof bad, "UPDATE jobs SET state = 'killed' WHERE id = %lld", (long long)j);
	assert_int_equal(sqlite3_exec(store_db(f->s), bad, NULL, NULL, NULL), SQLITE_OK);
	store_close(f->s);
	f->s = NULL;

	/* a file set back to version 5 comes up to the last in place: 6 -> 7
	 * rebuilds the TI tables with their CHECKs as IN lists (up_for_reschedule
	 * among them), which 10 -> 11 rewrites as comparisons */
	raw_exec(f->path, "UPDATE meta SET value = '5' WHERE key = 'schema_version'");
	f->s = open_ok(f->path);
	assert_int_equal(store_schema_version(f->s), STORE_SCHEMA_VERSION);
	assert_int_equal(explain_count(store_db(f->s), writes[0], "OpenEphemeral"), 0);
	assert_int_equal(raw_count(f->path,
	                           "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
	                           " AND sql LIKE '%CHECK (state IN%'"),
	                 0);
	assert_int_equal(raw_count(f->path, "SELECT count(*) FROM jobs WHERE state = 'killed'"), 1);
	/* 11 -> 12: the tries keyed by their primary key alone, no index by
	 * job; 13 -> 14: the index by job again (weir db clean deletes jobs) */
	assert_int_equal(raw_count(f->path, "SELECT count(*) FROM sqlite_master"
	                                    " WHERE name = 'task_instance_tries'"
	                                    " AND sql LIKE '%WITHOUT ROWID'"),
	                 1);
	assert_int_equal(raw_count(f->path, "SELECT count(*) FROM sqlite_master"
	                                    " WHERE tbl_name = 'task_instance_tries'"
	                                    " AND type = 'index'"),
	                 1);
	assert_int_equal(raw_count(f->path, "SELECT count(*) FROM sqlite_master"
	                                    " WHERE name = 'task_instance_tries_by_job'"
	                                    " AND sql LIKE '%WHERE job_id IS NOT NULL'"),
	                 1);
}

static void test_migrations(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};

	/* a version 1 file (the first schema, without the version 2 indexes)
	 * holding a job */
	f->s = open_ok(f->path);
	int64_t j = add_job(f->s, "old", 0, "queued", 1000);
	store_close(f->s);
	f->s = NULL;
	raw_exec(f->path, "DROP INDEX jobs_by_state; DROP INDEX events_by_job;"
	                  "UPDATE meta SET value = '1' WHERE key = 'schema_version'");
	assert_int_equal(raw_count(f->path, "SELECT count(*) FROM sqlite_master WHERE type='index'"
	                                    " AND name IN ('jobs_by_state','events_by_job')"),
	                 0);

	f->s = open_ok(f->path);
	assert_int_equal(store_schema_version(f->s), STORE_SCHEMA_VERSION);
	struct job_row r;
	assert_int_equal(store_job_get(f->s, j, &r, &err), 0);
	assert_string_equal(r.name, "old");
	job_row_release(&r);
	store_close(f->s);
	f->s = NULL;
	assert_int_equal(raw_count(f->path, "SELECT count(*) FROM sqlite_master WHERE type='index'"
	                                    " AND name IN ('jobs_by_state','events_by_job')"),
	                 2);

	/* a newer file is refused, untouched */
	raw_exec(f->path, "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
	assert_null(store_open(f->path, &err));
	assert_non_null(strstr(err.msg, "schema version 99 is newer"));
	raw_exec(f->path, "UPDATE meta SET value = '2' WHERE key = 'schema_version'");

	/* an SQLite file of something else gets our schema beside its tables */
	char other[400];
	snprintf(other, sizeof(other), "%s/other.db", f->dir);
	raw_exec(other, "CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('hi')");
	struct store *s2 = open_ok(other);
	assert_int_equal(store_schema_version(s2), STORE_SCHEMA_VERSION);
	store_close(s2);
	assert_int_equal(raw_count(other, "SELECT count(*) FROM notes"), 1);
	char p[420];
	const char *suffix[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", other, suffix[i]);
		unlink(p);
	}

	/* a file that is not a database */
	char junk[400];
	snprintf(junk, sizeof(junk), "%s/junk.db", f->dir);
	FILE *fp = fopen(junk, "w");
	assert_non_null(fp);
	fputs("this is not an SQLite database, not even close; just some text to fill a page\n",
	      fp);
	fclose(fp);
	assert_null(store_open(junk, &err));
	assert_non_null(strstr(err.msg, junk));
	unlink(junk);
}

static void test_transactions(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	f->s = open_ok(f->path);

	/* a committed turn */
	assert_int_equal(store_begin(f->s, &err), 0);
	assert_true(store_in_transaction(f->s));
	assert_int_equal(store_begin(f->s, &err), -1); /* no nesting */
	int64_t j = add_job(f->s, "ok", 0, "queued", 1000);
	add_task(f->s, j, 1, "worker", 0);
	assert_int_equal(store_commit(f->s, &err), 0);
	assert_false(store_in_transaction(f->s));

	/* a turn that fails half way rolls back all of it */
	assert_int_equal(store_begin(f->s, &err), 0);
	int64_t k = add_job(f->s, "lost", 0, "queued", 2000);
	add_task(f->s, k, 1, "worker", 0);
	assert_int_equal(store_event_add(f->s, k, 2000, "submitted", "", NULL, &err), 0);
	struct task_row t = {.job_id = k, .attempt = 1, .role = (char *)"worker", .idx = 0};
	t.state = TASK_PENDING;
	assert_int_equal(store_task_insert(f->s, &t, &err), -1); /* duplicate */
	/* reads inside the transaction see its writes */
	struct job_row *rows;
	size_t n;
	assert_int_equal(store_job_list(f->s, NULL, 0, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	job_rows_free(rows, n);
	assert_int_equal(store_rollback(f->s, &err), 0);
	assert_false(store_in_transaction(f->s));
	assert_int_equal(store_rollback(f->s, &err), 0); /* no-op */

	struct job_row r;
	assert_int_equal(store_job_get(f->s, k, &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	struct event_row *ev;
	assert_int_equal(store_events_of_job(f->s, k, &ev, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_job_list(f->s, NULL, 0, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, j);
	job_rows_free(rows, n);

	/* an uncommitted turn is gone after a close (a crash mid-turn) */
	assert_int_equal(store_begin(f->s, &err), 0);
	add_job(f->s, "crash", 0, "queued", 3000);
	store_close(f->s);
	f->s = open_ok(f->path);
	assert_int_equal(store_job_list(f->s, NULL, 0, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	job_rows_free(rows, n);
	assert_int_equal(store_commit(f->s, &err), -1); /* nothing open */
}

/* A full disk (SQLite's max_page_count stands in for it: the same
 * SQLITE_FULL): the write that found no room is WEIR_E_UNAVAILABLE naming
 * the cause, the turn it was in is not committed, and once there is room
 * the next turn commits and the store says space returned. */
static void test_disk_full(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	sqlite3_stmt *st;
	struct job_row r = {.name = (char *)"big",
	                    .framework = (char *)"none",
	                    .reason = (char *)"",
	                    .attempt = 1,
	                    .exit_code = -1};
	char *big = malloc(256 * 1024);
	int64_t id = 0, pages;
	struct job_row *rows;
	size_t n;

	f->s = open_ok(f->path);
	assert_non_null(big);
	memset(big, 'x', 256 * 1024 - 1);
	big[256 * 1024 - 1] = '\0';
	r.spec_json = big;
	r.state = JOB_QUEUED;
	assert_int_equal(sqlite3_prepare_v2(store_db(f->s), "PRAGMA page_count", -1, &st, NULL),
	                 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	pages = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	char pragma[64];
	snprintf(pragma, sizeof pragma, "PRAGMA max_page_count = %lld", (long long)pages);
	assert_int_equal(sqlite3_exec(store_db(f->s), pragma, NULL, NULL, NULL), SQLITE_OK);
	assert_false(store_disk_full(f->s));

	assert_int_equal(store_begin(f->s, &err), 0);
	assert_int_equal(store_job_insert(f->s, &r, &id, &err), -1);
	assert_int_equal(err.kind, WEIR_E_UNAVAILABLE);
	assert_non_null(strstr(err.msg, "the disk is full"));
	assert_true(store_disk_full(f->s));
	/* the turn is not committed, though its commit would find room */
	assert_int_equal(store_commit(f->s, &err), -1);
	assert_int_equal(err.kind, WEIR_E_UNAVAILABLE);
	assert_int_equal(store_rollback(f->s, &err), 0);

	assert_int_equal(
	    sqlite3_exec(store_db(f->s), "PRAGMA max_page_count = 1000000", NULL, NULL, NULL),
	    SQLITE_OK);
	assert_int_equal(store_begin(f->s, &err), 0);
	add_job(f->s, "after", 0, "queued", 1000);
	assert_int_equal(store_commit(f->s, &err), 0);
	assert_false(store_disk_full(f->s)); /* the temporary folder has room */
	assert_int_equal(store_job_list(f->s, NULL, 0, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].name, "after");
	job_rows_free(rows, n);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_jobs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tasks_every_attempt, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_events_and_meta, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_events_in_batches, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_insert_routed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reopen_keeps_data, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_migrations, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_state_checks_compare, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_transactions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
