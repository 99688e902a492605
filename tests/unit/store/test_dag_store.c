/* test_dag_store.c: the workflow tables against real SQLite files in a
 * temporary directory. */
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

#include "store/admin_store.h"
#include "store/dag_store.h"
#include "store/store.h"
#include "store_tmp.h"

struct fixture {
	char dir[256];
	char path[300];
	struct store *s;
	struct dag_store *ds;
};

static void open_both(struct fixture *f)
{
	struct weir_error err = {0};
	f->s = store_open(f->path, &err);
	if (!f->s)
		fail_msg("store_open: %s", err.msg);
	f->ds = dag_store_create(f->s, &err);
	if (!f->ds)
		fail_msg("dag_store_create: %s", err.msg);
}

static void close_both(struct fixture *f)
{
	dag_store_destroy(f->ds);
	store_close(f->s);
	f->ds = NULL;
	f->s = NULL;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (store_tmp_make(f->dir, sizeof f->dir, f->path, sizeof f->path, "weir-dag-store") < 0)
		return -1;
	open_both(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	close_both(f);
	store_tmp_remove(f->dir, f->path);
	free(f);
	return 0;
}

static void put_dag(struct dag_store *ds, const char *id, bool paused)
{
	struct weir_error err = {0};
	struct dag_row d = {.dag_id = (char *)id,
	                    .file = (char *)"dags/x.yaml",
	                    .paused = paused,
	                    .active = true,
	                    .last_parsed_at = 1000,
	                    .import_error = (char *)"",
	                    .spec_json = (char *)"{\"tasks\":[]}"};
	if (dag_store_dag_put(ds, &d, &err) != 0)
		fail_msg("dag put: %s", err.msg);
}

static void add_run(struct dag_store *ds, const char *dag, const char *run, const char *state,
                    int64_t logical)
{
	struct weir_error err = {0};
	struct dag_run_row r = {.dag_id = (char *)dag,
	                        .run_id = (char *)run,
	                        .logical_date = logical,
	                        .data_interval_start = logical,
	                        .data_interval_end = logical + 86400000,
	                        .conf = (char *)"{\"n\":1}",
	                        .queued_at = logical + 1};
	assert_int_equal(dag_run_state_from_name(state, &r.state), 0);
	snprintf(r.run_type, sizeof(r.run_type), "scheduled");
	int64_t id = 0;
	if (dag_store_run_insert(ds, &r, &id, &err) != 0)
		fail_msg("run insert: %s", err.msg);
	assert_true(id > 0);
}

static void add_ti(struct dag_store *ds, const char *dag, const char *run, const char *task,
                   int map_index, const char *state, int priority)
{
	struct weir_error err = {0};
	struct dag_ti_row t = {.dag_id = (char *)dag,
	                       .run_id = (char *)run,
	                       .task_id = (char *)task,
	                       .map_index = map_index,
	                       .max_tries = 3,
	                       .priority = priority};
	assert_int_equal(dag_ti_state_from_name(state, &t.state), 0);
	if (dag_store_ti_insert(ds, &t, &err) != 0)
		fail_msg("ti insert: %s", err.msg);
}

/* What dag_store_pool_use() hands over: rows, slots per DAG, the rows of
 * task etl.r1.e (a mapped instance). */
struct use_seen {
	int rows, etl_slots, ml_slots, etl_e;
};

static void note_use(void *arg, const struct dag_ti_use *t)
{
	struct use_seen *u = arg;
	u->rows++;
	assert_string_equal(t->pool, "default_pool");
	if (!strcmp(t->dag_id, "etl"))
		u->etl_slots += t->pool_slots;
	else if (!strcmp(t->dag_id, "ml"))
		u->ml_slots += t->pool_slots;
	if (!strcmp(t->dag_id, "etl") && !strcmp(t->run_id, "r1") && !strcmp(t->task_id, "e"))
		u->etl_e++;
}

/* The query lists exactly the two runs a and b, in that order. */
static void expect_two_runs(struct dag_store *ds, const struct dag_run_query *q, const char *a,
                            const char *b)
{
	struct weir_error err = {0};
	struct dag_run_row *rows;
	size_t n;

	assert_int_equal(dag_store_run_list(ds, q, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].run_id, a);
	assert_string_equal(rows[1].run_id, b);
	dag_run_rows_free(rows, n);
}

/* The pool pass's read: every queued and running TI, of any run, and
 * nothing else. */
static void test_pool_use(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct use_seen u = {0};

	put_dag(f->ds, "etl", false);
	put_dag(f->ds, "ml", false);
	add_run(f->ds, "etl", "r1", "running", 1000);
	add_run(f->ds, "ml", "r1", "failed", 1000);
	add_ti(f->ds, "etl", "r1", "a", -1, "queued", 0);
	add_ti(f->ds, "etl", "r1", "b", -1, "running", 0);
	add_ti(f->ds, "etl", "r1", "c", -1, "scheduled", 0);
	add_ti(f->ds, "etl", "r1", "d", -1, "success", 0);
	add_ti(f->ds, "etl", "r1", "e", 0, "queued", 0);
	add_ti(f->ds, "etl", "r1", "e", 1, "running", 0);
	add_ti(f->ds, "ml", "r1", "a", -1, "running", 0);
	add_ti(f->ds, "ml", "r1", "b", -1, "up_for_retry", 0);
	assert_int_equal(dag_store_pool_use(f->ds, note_use, &u, &err), 0);
	assert_int_equal(u.rows, 5);
	assert_int_equal(u.etl_slots, 4);
	assert_int_equal(u.ml_slots, 1);
	assert_int_equal(u.etl_e, 2); /* each mapped instance */
}

static int64_t add_job(struct store *s)
{
	struct job_row r = {
	    .name = (char *)"ti", .reason = (char *)"", .exit_code = -1, .submitted_at = 1};
	r.state = JOB_QUEUED;
	int64_t id = 0;
	struct weir_error err = {0};
	if (store_job_insert(s, &r, &id, &err) != 0)
		fail_msg("job insert: %s", err.msg);
	return id;
}

static void test_dags(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	assert_int_equal(store_schema_version(f->s), STORE_SCHEMA_VERSION);

	put_dag(f->ds, "etl", false);
	put_dag(f->ds, "train", true);
	bool exists = false;
	assert_int_equal(dag_store_dag_exists(f->ds, "train", &exists, &err), 0);
	assert_true(exists);
	assert_int_equal(dag_store_dag_exists(f->ds, "ghost", &exists, &err), 0);
	assert_false(exists);
	struct dag_row d;
	assert_int_equal(dag_store_dag_get(f->ds, "train", &d, &err), 0);
	assert_string_equal(d.dag_id, "train");
	assert_string_equal(d.file, "dags/x.yaml");
	assert_true(d.paused);
	assert_true(d.active);
	assert_int_equal(d.last_parsed_at, 1000);
	assert_string_equal(d.import_error, "");
	assert_string_equal(d.spec_json, "{\"tasks\":[]}");
	dag_row_release(&d);
	dag_row_release(NULL);

	/* a re-parse (put with paused false) keeps the pause; other fields move */
	struct dag_row again = {.dag_id = (char *)"train",
	                        .file = (char *)"dags/train.yaml",
	                        .active = true,
	                        .last_parsed_at = 2000,
	                        .import_error =
	                            (char *)"dags/train.yaml:3: tasks: expected a list"};
	assert_int_equal(dag_store_dag_put(f->ds, &again, &err), 0);
	assert_int_equal(dag_store_dag_get(f->ds, "train", &d, &err), 0);
	assert_true(d.paused);
	assert_string_equal(d.file, "dags/train.yaml");
	assert_int_equal(d.last_parsed_at, 2000);
	assert_string_equal(d.spec_json, "{}");
	assert_string_equal(d.import_error, "dags/train.yaml:3: tasks: expected a list");
	dag_row_release(&d);

	assert_int_equal(dag_store_dag_set_paused(f->ds, "train", false, &err), 0);
	assert_int_equal(dag_store_dag_get(f->ds, "train", &d, &err), 0);
	assert_false(d.paused);
	dag_row_release(&d);

	assert_int_equal(dag_store_dag_deactivate(f->ds, "etl", &err), 0);
	struct dag_row *rows;
	size_t n;
	assert_int_equal(dag_store_dag_list(f->ds, true, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].dag_id, "train");
	dag_rows_free(rows, n);
	assert_int_equal(dag_store_dag_list(f->ds, false, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].dag_id, "etl");
	assert_false(rows[0].active);
	dag_rows_free(rows, n);

	assert_int_equal(dag_store_dag_get(f->ds, "nope", &d, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_string_equal(err.msg, "no DAG nope");
	assert_int_equal(dag_store_dag_set_paused(f->ds, "nope", true, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	struct dag_row noid = {0};
	assert_int_equal(dag_store_dag_put(f->ds, &noid, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
}

static void test_import_errors(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	assert_int_equal(dag_store_import_error_set(f->ds, "a.yaml", 10, "a.yaml:1: bad", &err), 0);
	assert_int_equal(dag_store_import_error_set(f->ds, "b.yaml", 11, "b.yaml:2: bad", &err), 0);
	assert_int_equal(dag_store_import_error_set(f->ds, "a.yaml", 12, "a.yaml:5: worse", &err),
	                 0);
	struct dag_import_error_row *rows;
	size_t n;
	assert_int_equal(dag_store_import_error_list(f->ds, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].file, "a.yaml"); /* same id: replaced in place */
	assert_string_equal(rows[0].message, "a.yaml:5: worse");
	assert_int_equal(rows[0].time, 12);
	assert_true(rows[0].id < rows[1].id);
	dag_import_error_rows_free(rows, n);
	assert_int_equal(dag_store_import_error_clear(f->ds, "a.yaml", &err), 0);
	assert_int_equal(dag_store_import_error_clear(f->ds, "never.yaml", &err), 0);
	assert_int_equal(dag_store_import_error_list(f->ds, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].file, "b.yaml");
	dag_import_error_rows_free(rows, n);
}

static void test_runs(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	put_dag(f->ds, "etl", false);
	put_dag(f->ds, "other", false);
	add_run(f->ds, "etl", "scheduled__1", "success", 1000);
	add_run(f->ds, "etl", "scheduled__2", "running", 2000);
	add_run(f->ds, "etl", "manual__3", "queued", 3000);
	add_run(f->ds, "other", "r1", "failed", 0); /* logical date 0 is a date */

	struct dag_run_row r;
	bool found = true;
	/* the latest success before a date (prev_*_success): none before 1000 */
	assert_int_equal(dag_store_run_prev_success(f->ds, "etl", 1000, &r, &found, &err), 0);
	assert_false(found);
	assert_int_equal(dag_store_run_prev_success(f->ds, "etl", 3000, &r, &found, &err), 0);
	assert_true(found);
	assert_string_equal(r.run_id, "scheduled__1");
	dag_run_row_release(&r);
	assert_int_equal(dag_store_run_prev_success(f->ds, "other", 5000, &r, &found, &err), 0);
	assert_false(found); /* its one run failed */

	assert_int_equal(dag_store_run_get(f->ds, "etl", "scheduled__2", &r, &err), 0);
	assert_int_equal(r.state, DAG_RUN_RUNNING);
	assert_string_equal(r.run_type, "scheduled");
	assert_int_equal(r.logical_date, 2000);
	assert_int_equal(r.data_interval_end, 2000 + 86400000);
	assert_string_equal(r.conf, "{\"n\":1}");
	assert_string_equal(r.reason, "");
	assert_int_equal(r.queued_at, 2001);
	assert_int_equal(r.start_date, 0);

	/* update: state, times, reason */
	r.state = DAG_RUN_FAILED;
	free(r.reason);
	r.reason = strdup("task load failed");
	r.start_date = 2100;
	r.end_date = 2200;
	assert_int_equal(dag_store_run_update(f->ds, &r, &err), 0);
	dag_run_row_release(&r);
	assert_int_equal(dag_store_run_get(f->ds, "etl", "scheduled__2", &r, &err), 0);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	assert_string_equal(r.reason, "task load failed");
	assert_int_equal(r.end_date, 2200);
	dag_run_row_release(&r);

	/* duplicates: run_id, then logical date */
	struct dag_run_row dup = {
	    .dag_id = (char *)"etl", .run_id = (char *)"manual__3", .logical_date = 9999};
	dup.state = DAG_RUN_QUEUED;
	snprintf(dup.run_type, sizeof(dup.run_type), "manual");
	assert_int_equal(dag_store_run_insert(f->ds, &dup, NULL, &err), -1);
	assert_int_equal(err.kind, WEIR_E_CONFLICT);
	dup.run_id = (char *)"manual__new";
	dup.logical_date = 1000;
	assert_int_equal(dag_store_run_insert(f->ds, &dup, NULL, &err), -1);
	assert_int_equal(err.kind, WEIR_E_CONFLICT);
	assert_non_null(strstr(err.msg, "DAG etl already has a run"));
	/* an unknown DAG, a state out of range, a bad run type */
	dup.dag_id = (char *)"ghost";
	assert_int_equal(dag_store_run_insert(f->ds, &dup, NULL, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	dup.dag_id = (char *)"etl";
	dup.logical_date = 77;
	dup.state = (enum dag_run_state)DAG_RUN_STATE_COUNT;
	assert_int_equal(dag_store_run_insert(f->ds, &dup, NULL, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_non_null(strstr(err.msg, "run state 4 is out of range"));
	dup.state = DAG_RUN_QUEUED;
	snprintf(dup.run_type, sizeof(dup.run_type), "cron");
	assert_int_equal(dag_store_run_insert(f->ds, &dup, NULL, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	snprintf(dup.run_type, sizeof(dup.run_type), "backfill");
	dup.conf = NULL;
	assert_int_equal(dag_store_run_insert(f->ds, &dup, NULL, &err), 0);
	assert_int_equal(dag_store_run_get(f->ds, "etl", "manual__new", &r, &err), 0);
	assert_string_equal(r.conf, "{}");
	assert_string_equal(r.run_type, "backfill");
	dag_run_row_release(&r);

	/* listing: filters, order, paging, count */
	struct dag_run_row *rows;
	size_t n;
	struct dag_run_query q = {.dag_id = "etl"};
	assert_int_equal(dag_store_run_list(f->ds, &q, &rows, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(rows[0].logical_date, 77);
	assert_string_equal(rows[3].run_id, "manual__3");
	dag_run_rows_free(rows, n);
	q.newest_first = true;
	q.limit = 2;
	q.offset = 1;
	expect_two_runs(f->ds, &q, "scheduled__2", "scheduled__1");
	int64_t count = 0;
	assert_int_equal(dag_store_run_count(f->ds, &q, &count, &err), 0);
	assert_int_equal(count, 4);
	q = (struct dag_run_query){.by_state = true, .state = DAG_RUN_FAILED};
	assert_int_equal(dag_store_run_list(f->ds, &q, &rows, &n, &err), 0);
	assert_int_equal(n, 2); /* other's r1 and etl's scheduled__2 */
	assert_string_equal(rows[0].run_id, "r1");
	dag_run_rows_free(rows, n);
	q.state = (enum dag_run_state)99;
	assert_int_equal(dag_store_run_list(f->ds, &q, &rows, &n, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);

	assert_int_equal(dag_store_runs_active(f->ds, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].run_id, "manual__new"); /* logical date 77 */
	assert_string_equal(rows[1].run_id, "manual__3");
	dag_run_rows_free(rows, n);

	struct dag_run_row ghost = {.dag_id = (char *)"etl", .run_id = (char *)"nope"};
	ghost.state = DAG_RUN_FAILED;
	assert_int_equal(dag_store_run_update(f->ds, &ghost, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_string_equal(err.msg, "no run nope of DAG etl");
	assert_int_equal(dag_store_run_get(f->ds, "etl", "nope", &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
}

static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

/* What the store's statements did since the last call: rows stepped through
 * in full scans, sorts, and virtual machine steps (SQLite's own counters,
 * reset on reading). */
static int scans_and_sorts(struct store *s, int *scan_steps, int *sorts)
{
	int vm_steps = 0;

	*scan_steps = *sorts = 0;
	for (sqlite3_stmt *st = sqlite3_next_stmt(store_db(s), NULL); st;
	     st = sqlite3_next_stmt(store_db(s), st)) {
		*scan_steps += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1);
		*sorts += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_SORT, 1);
		vm_steps += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 1);
	}
	return vm_steps;
}

/* One DAG's runs, newest first, a page of them and their count (GET
 * /dags/{id}/dagRuns, the UI's grid): found by the DAG's index, whatever the
 * other DAGs' history, never a scan of every run and a sort of them. */
static void test_one_dags_runs_by_index(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	int64_t count = 0;
	int scan_steps, sorts;
	char id[32];

	put_dag(f->ds, "busy", false);
	put_dag(f->ds, "quiet", false);
	for (int i = 0; i < 200; i++) {
		snprintf(id, sizeof id, "r%03d", i);
		add_run(f->ds, "busy", id, "success", 1000 + i);
	}
	add_run(f->ds, "quiet", "q1", "success", 5000);
	add_run(f->ds, "quiet", "q2", "failed", 3000);
	add_run(f->ds, "quiet", "q3", "success", 4000);
	scans_and_sorts(f->s, &scan_steps, &sorts);

	struct dag_run_query q = {.dag_id = "quiet", .newest_first = true, .limit = 2};
	expect_two_runs(f->ds, &q, "q1", "q3");
	q.newest_first = false;
	q.offset = 1;
	expect_two_runs(f->ds, &q, "q3", "q1");
	assert_int_equal(dag_store_run_count(f->ds, &q, &count, &err), 0);
	assert_int_equal(count, 3);
	q = (struct dag_run_query){.dag_id = "quiet", .by_state = true, .state = DAG_RUN_SUCCESS};
	assert_int_equal(dag_store_run_count(f->ds, &q, &count, &err), 0);
	assert_int_equal(count, 2);
	q.newest_first = true;
	expect_two_runs(f->ds, &q, "q1", "q3");
	scans_and_sorts(f->s, &scan_steps, &sorts);
	assert_int_equal(scan_steps, 0);
	assert_int_equal(sorts, 0);
	/* the busy DAG's 200 runs counted without a step through them */
	q = (struct dag_run_query){.dag_id = "busy"};
	assert_int_equal(dag_store_run_count(f->ds, &q, &count, &err), 0);
	assert_int_equal(count, 200);
	assert_in_range(scans_and_sorts(f->s, &scan_steps, &sorts), 1, 50);

	/* an empty dag_id is every DAG's, as before */
	q = (struct dag_run_query){.dag_id = ""};
	assert_int_equal(dag_store_run_count(f->ds, &q, &count, &err), 0);
	assert_int_equal(count, 203);

	/* the counts follow a run's state, its deletion and its DAG's */
	struct dag_run_row r;
	assert_int_equal(dag_store_run_get(f->ds, "quiet", "q2", &r, &err), 0);
	r.state = DAG_RUN_SUCCESS;
	assert_int_equal(dag_store_run_update(f->ds, &r, &err), 0);
	dag_run_row_release(&r);
	assert_int_equal(dag_store_run_delete(f->ds, "quiet", "q1", &err), 0);
	q = (struct dag_run_query){.dag_id = "quiet", .by_state = true, .state = DAG_RUN_SUCCESS};
	assert_int_equal(dag_store_run_count(f->ds, &q, &count, &err), 0);
	assert_int_equal(count, 2);
	q.state = DAG_RUN_FAILED;
	assert_int_equal(dag_store_run_count(f->ds, &q, &count, &err), 0);
	assert_int_equal(count, 0);
	assert_int_equal(admin_dag_delete(f->s, "busy", &err), 0); /* its runs by cascade */
	q = (struct dag_run_query){.dag_id = "busy"};
	assert_int_equal(dag_store_run_count(f->ds, &q, &count, &err), 0);
	assert_int_equal(count, 0);

	/* a file set back by hand, its counts lost: counted again from the rows */
	close_both(f);
	raw_exec(f->path, "DELETE FROM dag_run_counts;"
	                  " UPDATE meta SET value = '13' WHERE key = 'schema_version'");
	open_both(f);
	q = (struct dag_run_query){.dag_id = "quiet"};
	assert_int_equal(dag_store_run_count(f->ds, &q, &count, &err), 0);
	assert_int_equal(count, 2);
}

static void test_task_instances_and_tries(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	put_dag(f->ds, "etl", false);
	add_run(f->ds, "etl", "old", "running", 1000);
	add_run(f->ds, "etl", "new", "running", 2000);
	add_ti(f->ds, "etl", "new", "extract", -1, "scheduled", 0);
	add_ti(f->ds, "etl", "new", "train", 0, "none", 0);
	add_ti(f->ds, "etl", "new", "train", 1, "none", 0);
	add_ti(f->ds, "etl", "new", "train", 2, "none", 0);
	add_ti(f->ds, "etl", "old", "extract", -1, "scheduled", 0);
	add_ti(f->ds, "etl", "old", "urgent", -1, "scheduled", 5);

	struct dag_ti_row t;
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "new", "train", 1, &t, &err), 0);
	assert_int_equal(t.state, DAG_TI_NONE);
	assert_int_equal(t.map_index, 1);
	assert_int_equal(t.try_number, 0);
	assert_int_equal(t.max_tries, 3);
	assert_int_equal(t.job_id, 0);
	assert_string_equal(t.pool, "default_pool");
	assert_int_equal(t.pool_slots, 1);
	assert_string_equal(t.outputs, "");
	assert_string_equal(t.rendered_command, "");

	/* the TI becomes a job: try 1 */
	int64_t job = add_job(f->s);
	t.state = DAG_TI_RUNNING;
	t.try_number = 1;
	t.job_id = job;
	t.queued_at = 3000;
	t.start_date = 3001;
	free(t.rendered_command);
	t.rendered_command = strdup("python train.py --item 'b'");
	free(t.outputs);
	t.outputs = strdup("{\"acc\":0.9}");
	free(t.pool);
	t.pool = strdup("gpu_pool");
	assert_int_equal(dag_store_ti_update(f->ds, &t, &err), 0);
	dag_ti_row_release(&t);

	/* a job's end finds its TI: the key, the try and the job's start alone */
	int64_t started = -1;
	assert_int_equal(dag_store_ti_key_by_job(f->ds, job, &t, &started, &err), 0);
	assert_int_equal(started, 0); /* the job has not started */
	assert_string_equal(t.dag_id, "etl");
	assert_string_equal(t.run_id, "new");
	assert_string_equal(t.task_id, "train");
	assert_int_equal(t.map_index, 1);
	assert_int_equal(t.try_number, 1);
	assert_null(t.rendered_command);
	assert_null(t.pool);
	assert_int_equal(t.state, DAG_TI_NONE); /* not read */
	dag_ti_row_release(&t);
	{
		struct job_row jr = {0};
		assert_int_equal(store_job_get(f->s, job, &jr, &err), 0);
		jr.state = JOB_RUNNING;
		jr.started_at = 4242;
		assert_int_equal(store_job_update(f->s, &jr, &err), 0);
		job_row_release(&jr);
		assert_int_equal(dag_store_ti_key_by_job(f->ds, job, &t, &started, &err), 0);
		assert_int_equal(started, 4242); /* its job's start, read with it */
		assert_string_equal(t.task_id, "train");
		assert_int_equal(t.try_number, 1);
		dag_ti_row_release(&t);
		assert_int_equal(dag_store_ti_key_by_job(f->ds, job + 999, &t, &started, &err), -1);
		assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
		assert_null(t.dag_id);
	}
	/* the whole row, by its key */
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "new", "train", 1, &t, &err), 0);
	assert_int_equal(t.job_id, job);
	assert_string_equal(t.task_id, "train");
	assert_int_equal(t.map_index, 1);
	assert_int_equal(t.state, DAG_TI_RUNNING);
	assert_string_equal(t.pool, "gpu_pool");
	assert_string_equal(t.outputs, "{\"acc\":0.9}");
	assert_string_equal(t.rendered_command, "python train.py --item 'b'");
	assert_int_equal(t.start_date, 3001);

	/* its end: the state's fields written, the rest left as stored (a
	 * job id, pool or command in memory that differs is not written) */
	t.state = DAG_TI_SUCCESS;
	t.end_date = 3005;
	t.max_tries = 4;
	free(t.reason);
	t.reason = strdup("done");
	free(t.outputs);
	t.outputs = strdup("{\"acc\":0.95}");
	t.job_id = job + 100;
	free(t.pool);
	t.pool = strdup("other");
	assert_int_equal(dag_store_ti_set_state(f->ds, &t, &err), 0);
	dag_ti_row_release(&t);
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "new", "train", 1, &t, &err), 0);
	assert_int_equal(t.job_id, job);
	assert_int_equal(t.state, DAG_TI_SUCCESS);
	assert_int_equal(t.end_date, 3005);
	assert_int_equal(t.start_date, 3001);
	assert_int_equal(t.max_tries, 4);
	assert_string_equal(t.reason, "done");
	assert_string_equal(t.outputs, "{\"acc\":0.95}");
	assert_string_equal(t.pool, "gpu_pool");
	assert_int_equal(t.try_number, 1);
	assert_string_equal(t.rendered_command, "python train.py --item 'b'");
	t.map_index = 7; /* no such TI */
	assert_int_equal(dag_store_ti_set_state(f->ds, &t, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	dag_ti_row_release(&t);
	assert_int_equal(dag_store_ti_key_by_job(f->ds, job + 100, &t, &started, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	/* a row found by its id, whose key changed in memory: the key's row is
	 * written, not the one with that id */
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "new", "train", 0, &t, &err), 0);
	assert_true(t.rowid > 0);
	t.map_index = 2;
	t.state = DAG_TI_SKIPPED;
	assert_int_equal(dag_store_ti_set_state(f->ds, &t, &err), 0);
	t.state = DAG_TI_QUEUED;
	assert_int_equal(dag_store_ti_update(f->ds, &t, &err), 0);
	dag_ti_row_release(&t);
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "new", "train", 0, &t, &err), 0);
	assert_int_equal(t.state, DAG_TI_NONE);
	dag_ti_row_release(&t);
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "new", "train", 2, &t, &err), 0);
	assert_int_equal(t.state, DAG_TI_QUEUED);
	t.state = DAG_TI_NONE;
	assert_int_equal(dag_store_ti_update(f->ds, &t, &err), 0);
	dag_ti_row_release(&t);

	/* a job that does not exist */
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "new", "extract", -1, &t, &err), 0);
	t.job_id = job + 100;
	assert_int_equal(dag_store_ti_update(f->ds, &t, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	t.job_id = 0;
	t.state = (enum dag_ti_state)DAG_TI_STATE_COUNT;
	assert_int_equal(dag_store_ti_update(f->ds, &t, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	dag_ti_row_release(&t);

	/* a run's TIs in insertion order */
	struct dag_ti_row *rows;
	size_t n;
	assert_int_equal(dag_store_tis_of_run(f->ds, "etl", "new", &rows, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(rows[0].task_id, "extract");
	assert_int_equal(rows[0].map_index, -1);
	assert_int_equal(rows[3].map_index, 2);
	dag_ti_rows_free(rows, n);

	/* scheduled across runs: priority, then the older run */
	assert_int_equal(dag_store_tis_in_state(f->ds, DAG_TI_SCHEDULED, &rows, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(rows[0].task_id, "urgent");
	assert_string_equal(rows[1].run_id, "old");
	assert_string_equal(rows[2].run_id, "new");
	dag_ti_rows_free(rows, n);

	/* keys: duplicate, missing run, no task_id */
	struct dag_ti_row dup = {.dag_id = (char *)"etl",
	                         .run_id = (char *)"new",
	                         .task_id = (char *)"train",
	                         .map_index = 2};
	dup.state = DAG_TI_NONE;
	assert_int_equal(dag_store_ti_insert(f->ds, &dup, &err), -1);
	assert_int_equal(err.kind, WEIR_E_CONFLICT);
	assert_string_equal(err.msg, "already have task train[2] of run new of DAG etl");
	dup.run_id = (char *)"ghost";
	assert_int_equal(dag_store_ti_insert(f->ds, &dup, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	dup.task_id = (char *)"";
	assert_int_equal(dag_store_ti_insert(f->ds, &dup, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "new", "train", 7, &t, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	/* every try is kept with its job */
	int64_t job2 = add_job(f->s);
	struct dag_try_row tr = {.dag_id = (char *)"etl",
	                         .run_id = (char *)"new",
	                         .task_id = (char *)"train",
	                         .map_index = 1,
	                         .try_number = 1,
	                         .job_id = job,
	                         .start_date = 3001,
	                         .reason = (char *)""};
	tr.state = DAG_TI_RUNNING;
	assert_int_equal(dag_store_try_put(f->ds, &tr, &err), 0);
	tr.state = DAG_TI_FAILED;
	tr.end_date = 3500;
	tr.reason = (char *)"exit 1";
	assert_int_equal(dag_store_try_put(f->ds, &tr, &err), 0); /* the same try, ended */
	tr.try_number = 2;
	tr.job_id = job2;
	tr.end_date = 0;
	tr.reason = (char *)"";
	tr.state = DAG_TI_RUNNING;
	assert_int_equal(dag_store_try_put(f->ds, &tr, &err), 0);
	struct dag_try_row *tries;
	assert_int_equal(dag_store_tries_of_ti(f->ds, "etl", "new", "train", 1, &tries, &n, &err),
	                 0);
	assert_int_equal(n, 2);
	assert_int_equal(tries[0].try_number, 1);
	assert_int_equal(tries[0].job_id, job);
	assert_int_equal(tries[0].state, DAG_TI_FAILED);
	assert_string_equal(tries[0].reason, "exit 1");
	assert_int_equal(tries[0].end_date, 3500);
	assert_int_equal(tries[1].job_id, job2);
	assert_int_equal(tries[1].end_date, 0);
	dag_try_rows_free(tries, n);
	struct dag_try_row one;
	assert_int_equal(dag_store_try_get(f->ds, "etl", "new", "train", 1, 2, &one, &err), 0);
	assert_int_equal(one.job_id, job2);
	dag_try_row_release(&one);
	/* a try's end, written without a read: the reason kept when NULL, the
	 * first end date kept */
	bool found = false;
	assert_int_equal(
	    dag_store_try_end(f->ds, &tr, DAG_TI_UP_FOR_RETRY, NULL, 4000, &found, &err), 0);
	assert_true(found);
	assert_int_equal(dag_store_try_end(f->ds, &tr, DAG_TI_FAILED, "exit 3", 4100, &found, &err),
	                 0);
	assert_int_equal(dag_store_try_get(f->ds, "etl", "new", "train", 1, 2, &one, &err), 0);
	assert_int_equal(one.state, DAG_TI_FAILED);
	assert_string_equal(one.reason, "exit 3");
	assert_int_equal(one.end_date, 4000);
	assert_int_equal(one.start_date, 3001);
	assert_int_equal(one.job_id, job2);
	dag_try_row_release(&one);
	tr.try_number = 9;
	assert_int_equal(dag_store_try_end(f->ds, &tr, DAG_TI_FAILED, NULL, 1, &found, &err), 0);
	assert_false(found);
	assert_int_equal(dag_store_try_get(f->ds, "etl", "new", "train", 1, 9, &one, &err), -1);
	tr.try_number = 2;
	assert_int_equal(dag_store_try_get(f->ds, "etl", "new", "train", 1, 3, &one, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_string_equal(err.msg, "no try 3 of task train[1] of run new of DAG etl");
	tr.task_id = (char *)"ghost";
	assert_int_equal(dag_store_try_put(f->ds, &tr, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	tr.try_number = 0;
	assert_int_equal(dag_store_try_put(f->ds, &tr, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);

	/* deleting a run takes its TIs and tries */
	assert_int_equal(dag_store_run_delete(f->ds, "etl", "new", &err), 0);
	assert_int_equal(dag_store_tis_of_run(f->ds, "etl", "new", &rows, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_null(rows);
	assert_int_equal(dag_store_tries_of_ti(f->ds, "etl", "new", "train", 1, &tries, &n, &err),
	                 0);
	assert_int_equal(n, 0);
	assert_int_equal(dag_store_run_delete(f->ds, "etl", "new", &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
}

/* a rolled back transaction leaves the DAG tables as they were; data
 * survives a reopen */
static void test_transactions_and_reopen(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	put_dag(f->ds, "etl", false);
	assert_int_equal(store_begin(f->s, &err), 0);
	add_run(f->ds, "etl", "r1", "queued", 1);
	add_ti(f->ds, "etl", "r1", "a", -1, "none", 0);
	assert_int_equal(store_rollback(f->s, &err), 0);
	struct dag_run_row r;
	assert_int_equal(dag_store_run_get(f->ds, "etl", "r1", &r, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	assert_int_equal(store_rollbacks(f->s), 1);
	/* a turn that only reads begins no transaction: its rollback is not counted */
	assert_int_equal(store_begin(f->s, &err), 0);
	assert_int_equal(dag_store_run_get(f->ds, "etl", "r1", &r, &err), -1);
	assert_true(sqlite3_get_autocommit(store_db(f->s)));
	assert_int_equal(store_rollback(f->s, &err), 0);
	assert_int_equal(store_rollbacks(f->s), 1);

	assert_int_equal(store_begin(f->s, &err), 0);
	assert_true(sqlite3_get_autocommit(store_db(f->s)));
	add_run(f->ds, "etl", "r1", "queued", 1);
	assert_false(sqlite3_get_autocommit(store_db(f->s))); /* BEGIN at the first write */
	add_ti(f->ds, "etl", "r1", "a", -1, "none", 0);
	assert_int_equal(store_commit(f->s, &err), 0);
	assert_true(sqlite3_get_autocommit(store_db(f->s)));
	close_both(f);
	open_both(f);
	assert_int_equal(dag_store_run_get(f->ds, "etl", "r1", &r, &err), 0);
	assert_int_equal(r.state, DAG_RUN_QUEUED);
	dag_run_row_release(&r);
	struct dag_ti_row t;
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "r1", "a", -1, &t, &err), 0);
	dag_ti_row_release(&t);
}

/* a version 2 file (before the DAG tables) gets them, keeping its jobs */
static void test_migration_from_2(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	int64_t job = add_job(f->s);
	close_both(f);
	raw_exec(f->path, "DROP TABLE task_instance_tries; DROP TABLE task_instances;"
	                  " DROP TABLE dag_runs; DROP TABLE dag_import_errors; DROP TABLE dags;"
	                  " UPDATE meta SET value = '2' WHERE key = 'schema_version'");
	open_both(f);
	assert_int_equal(store_schema_version(f->s), STORE_SCHEMA_VERSION);
	struct job_row j;
	assert_int_equal(store_job_get(f->s, job, &j, &err), 0);
	job_row_release(&j);
	put_dag(f->ds, "etl", false);
	add_run(f->ds, "etl", "r1", "queued", 1);
	struct dag_row *rows;
	size_t n;
	assert_int_equal(dag_store_dag_list(f->ds, false, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	dag_rows_free(rows, n);
}

/* notes on runs and TIs: set, read back with the row (and the grid's read),
 * kept through the row's own writes, cleared, bounded; a version 16 file
 * gets the columns */
static void test_notes(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct dag_run_row r = {0};
	struct dag_ti_row t = {0};
	char big[2 * DAG_NOTE_MAX + 3];

	put_dag(f->ds, "etl", false);
	add_run(f->ds, "etl", "r1", "running", 1000);
	add_ti(f->ds, "etl", "r1", "load", -1, "running", 0);
	add_ti(f->ds, "etl", "r1", "part", 2, "queued", 0);
	/* none yet: nothing allocated */
	assert_int_equal(dag_store_run_get(f->ds, "etl", "r1", &r, &err), 0);
	assert_null(r.note.text);
	dag_run_row_release(&r);

	assert_int_equal(
	    dag_store_run_set_note(f->ds, "etl", "r1", "rerun after the fix", "ann", 5000, &err),
	    0);
	assert_int_equal(
	    dag_store_ti_set_note(f->ds, "etl", "r1", "part", 2, "slow disk", "bob", 6000, &err),
	    0);
	/* the run's own write leaves its note */
	assert_int_equal(dag_store_run_get(f->ds, "etl", "r1", &r, &err), 0);
	r.state = DAG_RUN_SUCCESS;
	r.end_date = 7000;
	assert_int_equal(dag_store_run_update(f->ds, &r, &err), 0);
	dag_run_row_release(&r);
	assert_int_equal(dag_store_run_get(f->ds, "etl", "r1", &r, &err), 0);
	assert_string_equal(r.note.text, "rerun after the fix");
	assert_string_equal(r.note.user, "ann");
	assert_int_equal(r.note.at, 5000);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	dag_run_row_release(&r);

	/* the TI's whole write leaves it too; the other TI has none */
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "r1", "part", 2, &t, &err), 0);
	assert_string_equal(t.note.text, "slow disk");
	assert_string_equal(t.note.user, "bob");
	assert_int_equal(t.note.at, 6000);
	t.state = DAG_TI_SUCCESS;
	assert_int_equal(dag_store_ti_update(f->ds, &t, &err), 0);
	dag_ti_row_release(&t);
	struct dag_ti_row *rows;
	size_t n;
	assert_int_equal(dag_store_tis_of_latest_runs(f->ds, "etl", 5, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_null(rows[0].note.text);
	assert_string_equal(rows[1].note.text, "slow disk");
	assert_int_equal(rows[1].state, DAG_TI_SUCCESS);
	dag_ti_rows_free(rows, n);

	/* "" clears; a note past the bound is refused and changes nothing */
	assert_int_equal(
	    dag_store_ti_set_note(f->ds, "etl", "r1", "part", 2, "", "bob", 8000, &err), 0);
	assert_int_equal(dag_store_ti_get(f->ds, "etl", "r1", "part", 2, &t, &err), 0);
	assert_null(t.note.text);
	dag_ti_row_release(&t);
	/* characters, not bytes: 1001 two-byte ones are too many, 1000 are not */
	for (size_t i = 0; i < DAG_NOTE_MAX + 1; i++)
		memcpy(big + 2 * i, "\xc3\xa9", 2);
	big[2 * (DAG_NOTE_MAX + 1)] = '\0';
	assert_int_equal(dag_store_run_set_note(f->ds, "etl", "r1", big, "ann", 9000, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_non_null(strstr(err.msg, "note: at most 1000 characters"));
	big[2 * DAG_NOTE_MAX] = '\0';
	assert_int_equal(dag_store_run_set_note(f->ds, "etl", "r1", big, "ann", 9000, &err), 0);

	/* what is not there */
	assert_int_equal(dag_store_run_set_note(f->ds, "etl", "r9", "x", "ann", 1, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_int_equal(dag_store_ti_set_note(f->ds, "etl", "r1", "part", 3, "x", "ann", 1, &err),
	                 -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	/* the scheduler's reads leave notes out; a run deleted takes its notes */
	assert_int_equal(dag_store_tis_in_state(f->ds, DAG_TI_QUEUED, &rows, &n, &err), 0);
	dag_ti_rows_free(rows, n);
	add_run(f->ds, "etl", "r2", "running", 2000);
	add_ti(f->ds, "etl", "r2", "load", -1, "running", 0);
	assert_int_equal(
	    dag_store_ti_set_note(f->ds, "etl", "r2", "load", -1, "gone soon", "ann", 1, &err), 0);
	assert_int_equal(dag_store_run_delete(f->ds, "etl", "r2", &err), 0);
	sqlite3_stmt *count;
	assert_int_equal(sqlite3_prepare_v2(store_db(f->s),
	                                    "SELECT count(*) FROM task_instance_notes", -1, &count,
	                                    NULL),
	                 SQLITE_OK);
	assert_int_equal(sqlite3_step(count), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(count, 0), 0);
	sqlite3_finalize(count);

	/* a file of version 16 (without the tables) gets them; the rows stay */
	close_both(f);
	raw_exec(f->path, "DROP TABLE dag_run_notes; DROP TABLE task_instance_notes;"
	                  " UPDATE meta SET value = '16' WHERE key = 'schema_version'");
	open_both(f);
	assert_int_equal(store_schema_version(f->s), STORE_SCHEMA_VERSION);
	assert_int_equal(dag_store_run_get(f->ds, "etl", "r1", &r, &err), 0);
	assert_null(r.note.text);
	dag_run_row_release(&r);
	assert_int_equal(dag_store_run_set_note(f->ds, "etl", "r1", "again", "ann", 10, &err), 0);
	assert_int_equal(dag_store_run_get(f->ds, "etl", "r1", &r, &err), 0);
	assert_string_equal(r.note.text, "again");
	dag_run_row_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_dags, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_import_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_runs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_one_dags_runs_by_index, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_task_instances_and_tries, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pool_use, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_transactions_and_reopen, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_migration_from_2, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_notes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
