/* test_state_doors.c: the one door of each server noun's state refuses an
 * illegal move, logs it naming the noun and both states, and leaves the
 * state as it was; a legal move goes through (jm_job_set_state,
 * jm_task_set_state, dm_ti_set_state, dm_run_set_state). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "log_capture.h"
#include "server/dag_manager/dm_internal.h"
#include "server/job_manager/jm_internal.h"

static int setup(void **state)
{
	(void)state;
	log_capture_start();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	log_capture_stop();
	return 0;
}

static void test_job_door(void **state)
{
	struct job_row job = {.id = 42, .state = JOB_QUEUED};

	(void)state;
	assert_int_equal(jm_job_set_state(&job, JOB_STARTING), 0);
	assert_int_equal(job.state, JOB_STARTING);
	assert_int_equal(jm_job_set_state(&job, JOB_RUNNING), 0);
	assert_int_equal(jm_job_set_state(&job, JOB_SUCCEEDED), 0);
	assert_string_equal(log_captured, "");
	/* an ended job never moves again */
	assert_int_equal(jm_job_set_state(&job, JOB_RUNNING), -1);
	assert_int_equal(job.state, JOB_SUCCEEDED);
	assert_non_null(strstr(log_captured, "job 42"));
	assert_non_null(strstr(log_captured, "succeeded -> running"));
	/* nor skips the gang's start */
	log_captured[0] = '\0';
	job.state = JOB_QUEUED;
	assert_int_equal(jm_job_set_state(&job, JOB_RUNNING), -1);
	assert_int_equal(job.state, JOB_QUEUED);
	assert_non_null(strstr(log_captured, "queued -> running"));
}

static void test_task_door(void **state)
{
	struct task_row t = {
	    .job_id = 7, .attempt = 2, .role = "worker", .idx = 3, .state = TASK_PENDING};

	(void)state;
	assert_int_equal(jm_task_set_state(&t, TASK_RUNNING), 0); /* a re-registering launcher */
	assert_int_equal(jm_task_set_state(&t, TASK_FAILED), 0);
	assert_string_equal(log_captured, "");
	assert_int_equal(jm_task_set_state(&t, TASK_SUCCEEDED), -1);
	assert_int_equal(t.state, TASK_FAILED);
	assert_non_null(strstr(log_captured, "job 7 task worker.3"));
	assert_non_null(strstr(log_captured, "failed -> succeeded"));
	/* an unended task never goes back */
	log_captured[0] = '\0';
	t.state = TASK_RUNNING;
	assert_int_equal(jm_task_set_state(&t, TASK_PENDING), -1);
	assert_int_equal(t.state, TASK_RUNNING);
	assert_non_null(strstr(log_captured, "running -> pending"));
}

static void test_task_end_apply_refused(void **state)
{
	struct task_row t = {
	    .job_id = 7, .role = "worker", .state = TASK_SUCCEEDED, .exit_code = 0};
	struct task_end e = {.state = TASK_LOST, .cause = END_CAUSE_LAUNCHER_LOST, .exit_code = -1};

	(void)state;
	/* a late end of an ended task changes nothing of it */
	assert_int_equal(jm_task_end_apply(&t, &e), -1);
	assert_int_equal(t.state, TASK_SUCCEEDED);
	assert_int_equal(t.exit_code, 0);
	assert_non_null(strstr(log_captured, "succeeded -> lost"));
}

static void test_ti_door(void **state)
{
	struct dag_ti_row r = {
	    .dag_id = "d", .run_id = "r1", .task_id = "t", .map_index = -1, .state = DAG_TI_NONE};

	(void)state;
	assert_int_equal(dm_ti_set_state(&r, DAG_TI_SCHEDULED), 0);
	assert_int_equal(dm_ti_set_state(&r, DAG_TI_QUEUED), 0);
	assert_int_equal(dm_ti_set_state(&r, DAG_TI_RUNNING), 0);
	assert_int_equal(dm_ti_set_state(&r, DAG_TI_SUCCESS), 0);
	assert_string_equal(log_captured, "");
	assert_int_equal(dm_ti_set_state(&r, DAG_TI_RUNNING), -1);
	assert_int_equal(r.state, DAG_TI_SUCCESS);
	assert_non_null(strstr(log_captured, "DAG d run r1 task t"));
	assert_non_null(strstr(log_captured, "success -> running"));
	/* a removed TI stays removed */
	log_captured[0] = '\0';
	assert_int_equal(dm_ti_set_state(&r, DAG_TI_REMOVED), 0);
	assert_int_equal(dm_ti_set_state(&r, DAG_TI_SCHEDULED), -1);
	assert_int_equal(r.state, DAG_TI_REMOVED);
	assert_non_null(strstr(log_captured, "removed -> scheduled"));
}

static void test_run_door(void **state)
{
	struct dag_run_row run = {.dag_id = "d", .run_id = "r1", .state = DAG_RUN_QUEUED};

	(void)state;
	assert_int_equal(dm_run_set_state(&run, DAG_RUN_RUNNING), 0);
	assert_int_equal(dm_run_set_state(&run, DAG_RUN_FAILED), 0);
	assert_string_equal(log_captured, "");
	/* an ended run runs again only through the queue (a clear) */
	assert_int_equal(dm_run_set_state(&run, DAG_RUN_RUNNING), -1);
	assert_int_equal(run.state, DAG_RUN_FAILED);
	assert_non_null(strstr(log_captured, "DAG d run r1"));
	assert_non_null(strstr(log_captured, "failed -> running"));
	assert_int_equal(dm_run_set_state(&run, DAG_RUN_QUEUED), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_job_door, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_task_door, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_task_end_apply_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ti_door, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_run_door, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
