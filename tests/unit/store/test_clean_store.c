/* test_clean_store.c: removing old history (store/clean_store.h) on a
 * real SQLite file: a count changes nothing; batches remove exactly the
 * finished runs and ended jobs before the date with what hangs from them
 * (task instances, tries, tasks, events, the event log's old records),
 * never a running run, a job still running or anything newer; a DAG list
 * keeps other DAGs and the jobs of none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/clean_store.h"
#include "store/store.h"
#include "store_tmp.h"

struct fixture {
	char dir[256];
	char path[300];
	struct store *s;
};

static void sql(struct store *s, const char *text)
{
	char *msg = NULL;
	if (sqlite3_exec(store_db(s), text, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", text, msg ? msg : "?");
}

static int64_t count(struct store *s, const char *table)
{
	char q[128];
	sqlite3_stmt *st;
	int64_t n = -1;

	snprintf(q, sizeof q, "SELECT count(*) FROM %s", table);
	assert_int_equal(sqlite3_prepare_v2(store_db(s), q, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* A job (id) in `state`, ended at `ended` (0: not), with two tasks and
 * three events. */
static void job(struct store *s, int id, const char *state, int64_t ended)
{
	char q[1024], at[32] = "NULL";

	if (ended)
		snprintf(at, sizeof at, "%lld", (long long)ended);
	snprintf(q, sizeof q,
	         "INSERT INTO jobs (id, name, spec_json, state, submitted_at, ended_at)"
	         " VALUES (%d, 'j', '{}', '%s', 1, %s);"
	         "INSERT INTO tasks (job_id, attempt, role, idx, state) VALUES (%d, 1, 'w', 0,"
	         " 'succeeded'), (%d, 1, 'w', 1, 'succeeded');"
	         "INSERT INTO events (job_id, time, kind, message) VALUES (%d, 1, 'k', 'm'),"
	         " (%d, 2, 'k', 'm'), (%d, 3, 'k', 'm');",
	         id, state, at, id, id, id, id, id);
	sql(s, q);
}

/* A run of `dag` (whose DAG row is made when missing) in `state` ended at
 * `ended` (0: not), with two TIs run by jobs job_base and job_base + 1
 * (the first with an earlier try by job_base + 2). */
static void run(struct store *s, const char *dag, const char *run_id, const char *state,
                int64_t ended, int job_base, const char *job_state)
{
	char q[2048], at[32] = "NULL";
	static int date;

	if (ended)
		snprintf(at, sizeof at, "%lld", (long long)ended);

	job(s, job_base, job_state, ended);
	job(s, job_base + 1, job_state, ended);
	job(s, job_base + 2, "failed", ended ? ended - 1 : 5);
	snprintf(q, sizeof q,
	         "INSERT OR IGNORE INTO dags (dag_id) VALUES ('%s');"
	         "INSERT INTO dag_runs (dag_id, run_id, state, run_type, logical_date, end_date)"
	         " VALUES ('%s', '%s', '%s', 'manual', %d, %s);"
	         "INSERT INTO task_instances (dag_id, run_id, task_id, state, job_id) VALUES"
	         " ('%s', '%s', 'a', 'success', %d), ('%s', '%s', 'b', 'success', %d);"
	         "INSERT INTO task_instance_tries (dag_id, run_id, task_id, map_index, try_number,"
	         " job_id, state) VALUES ('%s', '%s', 'a', -1, 1, %d, 'failed');",
	         dag, dag, run_id, state, ++date, at, dag, run_id, job_base, dag, run_id,
	         job_base + 1, dag, run_id, job_base + 2);
	sql(s, q);
}

/* Old: d1/old1, d1/old2, d2/old3 (ended at 1000), the jobs of none 1 and
 * 2 (ended at 1000); new: d1/new (ended at 5000), job 3 (at 5000);
 * running: d1/live (its jobs running), job 4 (running). */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	struct weir_error err = {0};
	if (store_tmp_make(f->dir, sizeof f->dir, f->path, sizeof f->path, "weir-clean") < 0)
		return -1;
	f->s = store_open(f->path, &err);
	if (!f->s)
		fail_msg("store_open: %s", err.msg);
	job(f->s, 1, "succeeded", 1000);
	job(f->s, 2, "killed", 1000);
	job(f->s, 3, "succeeded", 5000);
	job(f->s, 4, "running", 0);
	run(f->s, "d1", "old1", "success", 1000, 10, "succeeded");
	run(f->s, "d1", "old2", "failed", 1000, 20, "failed");
	run(f->s, "d2", "old3", "success", 1000, 30, "succeeded");
	run(f->s, "d1", "new", "success", 5000, 40, "succeeded");
	run(f->s, "d1", "live", "running", 0, 50, "running");
	sql(f->s, "INSERT INTO event_log (dttm, event) VALUES (100, 'old'), (200, 'old'),"
	          " (9000, 'new')");
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

/* Batches of `limit` until none is left: what they removed, the jobs. */
static void clean_all(struct store *s, const struct store_clean_query *q, int limit,
                      struct store_clean_counts *c, struct store_clean_ids *ids, int *batches)
{
	struct weir_error err = {0};
	struct store_clean_query cursor = *q; /* each batch moves it on */
	bool more = true;

	*batches = 0;
	while (more) {
		assert_int_equal(store_begin(s, &err), 0);
		if (store_clean_batch(s, &cursor, limit, c, ids, &more, &err) < 0)
			fail_msg("batch: %s", err.msg);
		assert_int_equal(store_commit(s, &err), 0);
		assert_true(++*batches < 100);
	}
}

static void test_count_changes_nothing(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct store_clean_counts c;
	struct store_clean_query q = {.before_ms = 2000};
	int64_t jobs = count(f->s, "jobs");

	assert_int_equal(store_clean_count(f->s, &q, &c, &err), 0);
	assert_int_equal(c.dag_runs, 3);
	assert_int_equal(c.task_instances, 6);
	assert_int_equal(c.jobs, 3 * 3 + 2); /* each old run's three, jobs 1 and 2 */
	assert_int_equal(c.tasks, 2 * c.jobs);
	assert_int_equal(c.events, 3 * c.jobs);
	assert_int_equal(c.event_log, 2);
	assert_int_equal(count(f->s, "jobs"), jobs);
	assert_int_equal(count(f->s, "dag_runs"), 5);
	assert_int_equal(count(f->s, "event_log"), 3);
}

static void test_batches_remove_exactly(void **state)
{
	struct fixture *f = *state;
	struct store_clean_counts c = {0}, would;
	struct store_clean_query q = {.before_ms = 2000};
	struct weir_error err = {0};
	struct store_clean_ids ids = {0};
	int batches;

	assert_int_equal(store_clean_count(f->s, &q, &would, &err), 0);
	clean_all(f->s, &q, 1, &c, &ids, &batches);
	assert_true(batches >= 3); /* one run a batch */
	assert_memory_equal(&c, &would, sizeof c);
	assert_int_equal(ids.n_jobs, (size_t)would.jobs);
	assert_int_equal(ids.n_runs, 3);
	/* left: the new run and the running one, their jobs, jobs 3 and 4 */
	assert_int_equal(count(f->s, "dag_runs"), 2);
	assert_int_equal(count(f->s, "dag_runs WHERE run_id IN ('new', 'live')"), 2);
	assert_int_equal(count(f->s, "task_instances"), 4);
	assert_int_equal(count(f->s, "task_instance_tries"), 2);
	assert_int_equal(count(f->s, "jobs"), 2 + 3 + 3);
	assert_int_equal(count(f->s, "jobs WHERE id IN (3, 4, 40, 41, 42, 50, 51, 52)"), 8);
	assert_int_equal(count(f->s, "tasks"), 2 * 8);
	assert_int_equal(count(f->s, "events"), 3 * 8);
	assert_int_equal(count(f->s, "event_log"), 1);
	/* nothing more */
	assert_int_equal(store_clean_count(f->s, &q, &would, &err), 0);
	assert_int_equal(would.dag_runs + would.jobs + would.event_log, 0);
	store_clean_ids_release(&ids);
}

/* a batch takes no more TIs than its limit (but always one run) */
static void test_batch_bounded_by_tis(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct store_clean_counts c = {0};
	struct store_clean_query q = {.before_ms = 2000};
	struct store_clean_ids ids = {0};
	bool more = false;

	assert_int_equal(store_begin(f->s, &err), 0);
	assert_int_equal(store_clean_batch(f->s, &q, 4, &c, &ids, &more, &err), 0);
	assert_int_equal(store_commit(f->s, &err), 0);
	assert_int_equal(c.dag_runs, 2); /* 2 TIs each: a third would make 6 */
	assert_int_equal(c.task_instances, 4);
	assert_true(more);
	c = (struct store_clean_counts){0};
	assert_int_equal(store_begin(f->s, &err), 0);
	assert_int_equal(store_clean_batch(f->s, &q, 1, &c, &ids, &more, &err), 0);
	assert_int_equal(store_commit(f->s, &err), 0);
	assert_int_equal(c.dag_runs, 1); /* more TIs than the limit: still one */
	assert_int_equal(c.task_instances, 2);
	assert_int_equal(count(f->s, "dag_runs"), 2);
	store_clean_ids_release(&ids);
}

static void test_running_never_removed(void **state)
{
	struct fixture *f = *state;
	struct store_clean_counts c = {0};
	struct store_clean_query q = {.before_ms = INT64_MAX};
	struct store_clean_ids ids = {0};
	int batches;

	clean_all(f->s, &q, 500, &c, &ids, &batches);
	assert_int_equal(count(f->s, "dag_runs"), 1);
	assert_int_equal(count(f->s, "dag_runs WHERE run_id = 'live'"), 1);
	/* the running jobs and the live run's ended earlier try */
	assert_int_equal(count(f->s, "jobs"), 4);
	assert_int_equal(count(f->s, "jobs WHERE id IN (4, 50, 51, 52)"), 4);
	store_clean_ids_release(&ids);
}

static void test_dag_list(void **state)
{
	struct fixture *f = *state;
	struct store_clean_counts c = {0};
	struct store_clean_query q = {.before_ms = 2000, .dags_json = "[\"d2\"]"};
	struct store_clean_ids ids = {0};
	int batches;

	clean_all(f->s, &q, 500, &c, &ids, &batches);
	assert_int_equal(c.dag_runs, 1);
	assert_int_equal(c.jobs, 3);
	assert_int_equal(count(f->s, "dag_runs WHERE dag_id = 'd1'"), 4);
	assert_int_equal(count(f->s, "jobs WHERE id IN (1, 2)"), 2); /* of no DAG: kept */
	assert_int_equal(count(f->s, "jobs WHERE id IN (30, 31, 32)"), 0);
	store_clean_ids_release(&ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_count_changes_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_batches_remove_exactly, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_batch_bounded_by_tis, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_running_never_removed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dag_list, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
