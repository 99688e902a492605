/* test_observe_series.c: the server's series on the metrics page
 * (server/observe_series.h) and the store's: a job's times, the DAG
 * table's bound, counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/metrics.h"
#include "metrics_page.h"
#include "server/observe_series.h"
#include "store/store.h"

static int reset(void **state)
{
	(void)state;
	store_series_add();
	observe_series_add();
	metrics_reset();
	return 0;
}

static void test_job_times(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	observe_series_time_ms(OBSERVE_JOB_RUN, 0, 5000); /* a start never seen: nothing */
	observe_series_time_ms(OBSERVE_JOB_RUN, 1000, 3500);
	assert_int_equal(metrics_render(&out), 0);
	assert_true(sample(out.buf, "weir_job_run_seconds_count") == 1);
	assert_true(sample(out.buf, "weir_job_run_seconds_sum") == 2.5);
	assert_true(sample(out.buf, "weir_job_run_seconds_bucket{le=\"1\"}") == 0);
	assert_true(sample(out.buf, "weir_job_run_seconds_bucket{le=\"5\"}") == 1);
	/* the store's series is on the same page */
	assert_non_null(strstr(out.buf, "# TYPE weir_store_commit_seconds histogram\n"));
	strbuf_release(&out);
}

static void test_dags_and_counters(void **state)
{
	struct strbuf out = STRBUF_INIT;
	char id[32], key[128];

	(void)state;
	observe_series_dag_run_end("etl", true, 12);
	observe_series_dag_run_end("etl", false, 3);
	observe_series_dag_run_end("etl", true, 1);
	for (int i = 0; i < OBSERVE_DAG_MAX + 10; i++) {
		snprintf(id, sizeof id, "d%d", i);
		observe_series_dag_run_end(id, true, 1);
	}
	observe_series_notification(true);
	observe_series_notification(false);
	observe_series_notification(false);
	assert_int_equal(metrics_render(&out), 0);
	assert_true(sample(out.buf, "weir_dag_runs_total{dag_id=\"etl\",state=\"success\"}") == 2);
	assert_true(sample(out.buf, "weir_dag_runs_total{dag_id=\"etl\",state=\"failed\"}") == 1);
	assert_true(sample(out.buf, "weir_dag_run_duration_seconds_count{dag_id=\"etl\"}") == 3);
	assert_true(sample(out.buf, "weir_dag_run_duration_seconds_sum{dag_id=\"etl\"}") == 16);
	/* the table is full after etl and d0..d510: the rest count as _other */
	snprintf(key, sizeof key, "weir_dag_runs_total{dag_id=\"d%d\",state=\"success\"}",
	         OBSERVE_DAG_MAX - 2);
	assert_true(sample(out.buf, key) == 1);
	snprintf(key, sizeof key, "weir_dag_runs_total{dag_id=\"d%d\",", OBSERVE_DAG_MAX - 1);
	assert_null(strstr(out.buf, key));
	assert_true(sample(out.buf, "weir_dag_runs_total{dag_id=\"_other\",state=\"success\"}") ==
	            11);
	assert_true(sample(out.buf, "weir_notifications_total{result=\"sent\"}") == 1);
	assert_true(sample(out.buf, "weir_notifications_total{result=\"failed\"}") == 2);
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_job_times, reset),
	    cmocka_unit_test_setup(test_dags_and_counters, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
