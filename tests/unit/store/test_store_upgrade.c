/* test_store_upgrade.c: a store written by the previous schema (version 3,
 * tests/system/fixtures/store_v3.sql, made by that version's server) opens
 * with this one: every job, task, event, run, TI and try is found again,
 * with its state, the cause each end gets from what the old row says, and
 * the per-job facts moved out of the meta table into columns. */
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

#include "store/dag_store.h"
#include "store/store.h"
#include "store_tmp.h"

#define FIXTURE "tests/system/fixtures/store_v3.sql"

struct fixture {
	char dir[64];
	char path[128];
	struct store *s;
	struct dag_store *ds;
};

static char *read_all(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, fp) == (size_t)n)
		buf[n] = '\0';
	else {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return buf;
}

/* The dump loaded into a new file, as `sqlite3 weir.db < dump` would. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	struct weir_error err = {0};
	sqlite3 *db = NULL;
	char *sql = read_all(FIXTURE), *msg = NULL;

	assert_non_null(f);
	if (!sql)
		fail_msg("cannot read %s (run from the repository root)", FIXTURE);
	assert_int_equal(store_tmp_make(f->dir, sizeof f->dir, f->path, sizeof f->path,
	                                "weir-upgrade"), 0);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("loading the fixture: %s", msg ? msg : "?");
	sqlite3_close(db);
	free(sql);
	f->s = store_open(f->path, &err);
	if (!f->s)
		fail_msg("store_open: %s", err.msg);
	f->ds = dag_store_create(f->s, &err);
	assert_non_null(f->ds);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	dag_store_destroy(f->ds);
	store_close(f->s);
	store_tmp_remove(f->dir, f->path);
	free(f);
	return 0;
}

static void test_version_and_meta(void **state)
{
	struct fixture *f = *state;
	sqlite3 *db = store_db(f->s);
	sqlite3_stmt *st;

	assert_int_equal(store_schema_version(f->s), STORE_SCHEMA_VERSION);
	/* the per-job keys are gone from meta; the version stays */
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM meta WHERE key <> 'schema_version'",
	                                    -1, &st, NULL),
	                 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 0);
	sqlite3_finalize(st);
}

struct want_job {
	int64_t id;
	const char *name;
	enum job_state state;
	enum end_cause cause;
	int exit_code;
	int attempt;
	const char *reason;
};

static void test_jobs(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	const struct want_job want[] = {
	    {1, "ok", JOB_SUCCEEDED, END_CAUSE_EXITED, 0, 1, ""},
	    {2, "bad", JOB_FAILED, END_CAUSE_EXITED, 1, 1, "worker:0 exited 1"},
	    {3, "flaky", JOB_SUCCEEDED, END_CAUSE_EXITED, 0, 2, ""},
	    {4, "slow", JOB_FAILED, END_CAUSE_EXEC_TIMEOUT, -1, 1, "execution timeout after 1s"},
	    {5, "killed", JOB_KILLED, END_CAUSE_KILLED, -1, 1, "killed by user"},
	    {6, "flaky.flaky", JOB_FAILED, END_CAUSE_EXITED, 1, 1, "task:0 exited 1"},
	    {7, "timeout.slow", JOB_FAILED, END_CAUSE_EXEC_TIMEOUT, 124, 1,
	     "task:0 execution timeout after 2s"},
	    {8, "flaky.flaky", JOB_FAILED, END_CAUSE_EXITED, 1, 1, "task:0 exited 1"},
	    {9, "flaky.flaky", JOB_SUCCEEDED, END_CAUSE_EXITED, 0, 1, ""},
	    {10, "stubborn", JOB_RUNNING, END_CAUSE_NONE, -1, 1, "stopping: killed by user"},
	};
	struct job_row *rows;
	size_t n;

	assert_int_equal(store_job_list(f->s, NULL, 0, &rows, &n, &err), 0);
	assert_int_equal(n, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < n; i++) {
		const struct job_row *r = &rows[n - 1 - i]; /* newest first */
		const struct want_job *w = &want[i];
		if (r->id != w->id || strcmp(r->name, w->name) || r->state != w->state ||
		    r->cause != w->cause || r->exit_code != w->exit_code ||
		    r->attempt != w->attempt || strcmp(r->reason, w->reason))
			fail_msg("job %lld: %s %s %s exit %d attempt %d \"%s\"", (long long)r->id,
			         r->name, job_state_name(r->state), end_cause_name(r->cause),
			         r->exit_code, r->attempt, r->reason);
	}
	job_rows_free(rows, n);

	/* every job kept its route; none had a backend id (all local) */
	for (int64_t id = 1; id <= 10; id++) {
		enum job_route route;
		char queue[32], bid[32];
		int attempt;
		assert_int_equal(store_job_route_get(f->s, id, &route, queue, sizeof queue, &err), 0);
		assert_int_equal(route, JOB_ROUTE_LOCAL);
		assert_string_equal(queue, "");
		assert_int_equal(store_job_backend_get(f->s, id, &attempt, bid, sizeof bid, &err), 1);
	}

	/* the kill waiting for its stubborn task: the outcome moved into the row */
	struct job_outcome o;
	assert_int_equal(store_job_outcome_get(f->s, 10, &o, &err), 0);
	assert_int_equal(o.state, JOB_KILLED);
	assert_int_equal(o.cause, END_CAUSE_KILLED);
	assert_int_equal(o.exit_code, -1);
	assert_string_equal(o.reason, "killed by user");
	/* the cleared ones ("") are no outcome */
	for (int64_t id = 1; id <= 9; id++)
		assert_int_equal(store_job_outcome_get(f->s, id, &o, &err), 1);
	/* the queue still finds the active one */
	assert_int_equal(store_jobs_active(f->s, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, 10);
	job_rows_free(rows, n);
}

static void test_tasks_and_events(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct task_row *t;
	size_t n;

	assert_int_equal(store_tasks_of_job(f->s, 3, 0, &t, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(t[0].state, TASK_FAILED);
	assert_int_equal(t[0].exit_code, 137);
	assert_int_equal(t[0].cause, END_CAUSE_EXITED); /* it exited 137 itself */
	assert_int_equal(t[1].state, TASK_SUCCEEDED);
	assert_int_equal(t[1].attempt, 2);
	assert_int_equal(t[1].cause, END_CAUSE_EXITED);
	task_rows_free(t, n);

	assert_int_equal(store_tasks_of_job(f->s, 4, 0, &t, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].state, TASK_KILLED); /* stopped at the server's timeout */
	assert_int_equal(t[0].cause, END_CAUSE_STOPPED);
	assert_int_equal(t[0].signal, 15);
	task_rows_free(t, n);

	assert_int_equal(store_tasks_of_job(f->s, 7, 0, &t, &n, &err), 0);
	assert_int_equal(t[0].cause, END_CAUSE_EXEC_TIMEOUT); /* the launcher's */
	assert_int_equal(t[0].exit_code, 124);
	task_rows_free(t, n);

	assert_int_equal(store_tasks_of_job(f->s, 10, 0, &t, &n, &err), 0);
	assert_int_equal(t[0].state, TASK_RUNNING);
	assert_int_equal(t[0].cause, END_CAUSE_NONE);
	assert_true(t[0].launcher_pid > 0);
	task_rows_free(t, n);

	/* every job's journal is there */
	for (int64_t id = 1; id <= 10; id++) {
		struct event_row *ev;
		assert_int_equal(store_events_of_job(f->s, id, &ev, &n, &err), 0);
		assert_true(n >= 3);
		assert_string_equal(ev[0].kind, "submitted");
		event_rows_free(ev, n);
	}
}

static void test_runs_tis_and_tries(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct dag_run_row r;
	struct dag_ti_row ti;
	struct dag_try_row *tries;
	size_t n;

	assert_int_equal(dag_store_run_get(f->ds, "flaky", "flaky_run", &r, &err), 0);
	assert_int_equal(r.state, DAG_RUN_SUCCESS);
	dag_run_row_release(&r);
	assert_int_equal(dag_store_run_get(f->ds, "timeout", "timeout_run", &r, &err), 0);
	assert_int_equal(r.state, DAG_RUN_FAILED);
	assert_non_null(strstr(r.reason, "task slow failed"));
	dag_run_row_release(&r);

	assert_int_equal(dag_store_ti_get(f->ds, "flaky", "flaky_run", "flaky", -1, &ti, &err), 0);
	assert_int_equal(ti.state, DAG_TI_SUCCESS);
	assert_int_equal(ti.try_number, 3);
	assert_int_equal(ti.job_id, 9);
	dag_ti_row_release(&ti);
	assert_int_equal(dag_store_tries_of_ti(f->ds, "flaky", "flaky_run", "flaky", -1, &tries, &n,
	                                       &err),
	                 0);
	assert_int_equal(n, 3);
	assert_int_equal(tries[0].state, DAG_TI_UP_FOR_RETRY);
	assert_int_equal(tries[0].job_id, 6);
	assert_int_equal(tries[1].state, DAG_TI_UP_FOR_RETRY);
	assert_int_equal(tries[2].state, DAG_TI_SUCCESS);
	assert_int_equal(tries[2].job_id, 9);
	dag_try_rows_free(tries, n);

	assert_int_equal(dag_store_ti_get(f->ds, "timeout", "timeout_run", "after", -1, &ti, &err),
	                 0);
	assert_int_equal(ti.state, DAG_TI_UPSTREAM_FAILED);
	dag_ti_row_release(&ti);
	assert_int_equal(dag_store_ti_get(f->ds, "timeout", "timeout_run", "slow", -1, &ti, &err),
	                 0);
	assert_int_equal(ti.state, DAG_TI_FAILED);
	assert_int_equal(ti.try_number, 1);
	dag_ti_row_release(&ti);
}

/* What the new columns hold round-trips, and a state name no table knows
 * (a file edited by hand) is an error, not a guess. */
static void test_new_columns_and_unknown_names(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct job_outcome o = {.state = JOB_FAILED, .exit_code = 3, .cause = END_CAUSE_OOM};
	enum job_route route;
	char queue[32], bid[32];
	int attempt;
	struct job_row j;

	snprintf(o.reason, sizeof o.reason, "chief:0 OOMKilled");
	assert_int_equal(store_job_outcome_set(f->s, 2, &o, &err), 0);
	memset(&o, 0, sizeof o);
	assert_int_equal(store_job_outcome_get(f->s, 2, &o, &err), 0);
	assert_int_equal(o.state, JOB_FAILED);
	assert_int_equal(o.cause, END_CAUSE_OOM);
	assert_int_equal(o.exit_code, 3);
	assert_string_equal(o.reason, "chief:0 OOMKilled");
	assert_int_equal(store_job_outcome_set(f->s, 2, NULL, &err), 0);
	assert_int_equal(store_job_outcome_get(f->s, 2, &o, &err), 1);
	assert_int_equal(store_job_outcome_set(f->s, 99, NULL, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	assert_int_equal(store_job_route_set(f->s, 2, JOB_ROUTE_GANG, "gpu", &err), 0);
	assert_int_equal(store_job_route_get(f->s, 2, &route, queue, sizeof queue, &err), 0);
	assert_int_equal(route, JOB_ROUTE_GANG);
	assert_string_equal(queue, "gpu");
	assert_int_equal(store_job_backend_set(f->s, 2, 1, "4242", &err), 0);
	assert_int_equal(store_job_backend_get(f->s, 2, &attempt, bid, sizeof bid, &err), 0);
	assert_int_equal(attempt, 1);
	assert_string_equal(bid, "4242");

	/* a row store_job_update() writes keeps those columns */
	assert_int_equal(store_job_get(f->s, 2, &j, &err), 0);
	j.cause = END_CAUSE_SIGNALLED;
	assert_int_equal(store_job_update(f->s, &j, &err), 0);
	job_row_release(&j);
	assert_int_equal(store_job_get(f->s, 2, &j, &err), 0);
	assert_int_equal(j.cause, END_CAUSE_SIGNALLED);
	job_row_release(&j);
	assert_int_equal(store_job_route_get(f->s, 2, &route, queue, sizeof queue, &err), 0);
	assert_int_equal(route, JOB_ROUTE_GANG);

	char *msg = NULL;
	assert_int_equal(sqlite3_exec(store_db(f->s), "UPDATE tasks SET cause = 'gremlins'"
	                                              " WHERE job_id = 1",
	                              NULL, NULL, &msg),
	                 SQLITE_OK);
	struct task_row *t;
	size_t n;
	assert_int_equal(store_tasks_of_job(f->s, 1, 0, &t, &n, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INTERNAL);
	assert_non_null(strstr(err.msg, "does not know"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_version_and_meta, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_jobs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tasks_and_events, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_runs_tis_and_tries, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_new_columns_and_unknown_names, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
