/* test_metrics.c: the registry (lib/metrics.h): buckets cumulative, sums,
 * the DAG table's bound, label escapes, counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/metrics.h"

static int reset(void **state)
{
	(void)state;
	metrics_reset();
	return 0;
}

/* The value of the sample line that starts with `key` ("name{labels}"). */
static double sample(const char *page, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = page; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ' ') {
			double v = -1;
			sscanf(p + n + 1, "%lf", &v);
			return v;
		}
	fail_msg("no sample %s in the page", key);
	return -1;
}

static void test_histogram(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	metrics_observe(METRICS_STORE_COMMIT, 0.0002); /* <= 0.00025 */
	metrics_observe(METRICS_STORE_COMMIT, 0.003);  /* <= 0.005 */
	metrics_observe(METRICS_STORE_COMMIT, 100);    /* +Inf only */
	metrics_observe(METRICS_STORE_COMMIT, -1);     /* a clock that stepped: 0 */
	metrics_observe_ms(METRICS_JOB_RUN, 0, 5000);  /* a start never seen: nothing */
	metrics_observe_ms(METRICS_JOB_RUN, 1000, 3500);
	assert_int_equal(metrics_render(&out), 0);
	assert_true(sample(out.buf, "weir_store_commit_seconds_bucket{le=\"0.0001\"}") == 1);
	assert_true(sample(out.buf, "weir_store_commit_seconds_bucket{le=\"0.00025\"}") == 2);
	assert_true(sample(out.buf, "weir_store_commit_seconds_bucket{le=\"0.005\"}") == 3);
	assert_true(sample(out.buf, "weir_store_commit_seconds_bucket{le=\"2.5\"}") == 3);
	assert_true(sample(out.buf, "weir_store_commit_seconds_bucket{le=\"+Inf\"}") == 4);
	assert_true(sample(out.buf, "weir_store_commit_seconds_count") == 4);
	assert_true(sample(out.buf, "weir_store_commit_seconds_sum") > 100.003 &&
	            sample(out.buf, "weir_store_commit_seconds_sum") < 100.0033);
	assert_true(sample(out.buf, "weir_job_run_seconds_count") == 1);
	assert_true(sample(out.buf, "weir_job_run_seconds_sum") == 2.5);
	assert_true(sample(out.buf, "weir_job_run_seconds_bucket{le=\"1\"}") == 0);
	assert_true(sample(out.buf, "weir_job_run_seconds_bucket{le=\"5\"}") == 1);
	assert_non_null(strstr(out.buf, "# TYPE weir_store_commit_seconds histogram\n"));
	strbuf_release(&out);
}

static void test_dags_and_counters(void **state)
{
	struct strbuf out = STRBUF_INIT;
	char id[32], key[128];

	(void)state;
	metrics_dag_run_end("etl", true, 12);
	metrics_dag_run_end("etl", false, 3);
	metrics_dag_run_end("etl", true, 1);
	for (int i = 0; i < METRICS_DAG_MAX + 10; i++) {
		snprintf(id, sizeof id, "d%d", i);
		metrics_dag_run_end(id, true, 1);
	}
	metrics_count_notification(true);
	metrics_count_notification(false);
	metrics_count_notification(false);
	assert_int_equal(metrics_render(&out), 0);
	assert_true(sample(out.buf, "weir_dag_runs_total{dag_id=\"etl\",state=\"success\"}") == 2);
	assert_true(sample(out.buf, "weir_dag_runs_total{dag_id=\"etl\",state=\"failed\"}") == 1);
	assert_true(sample(out.buf, "weir_dag_run_duration_seconds_count{dag_id=\"etl\"}") == 3);
	assert_true(sample(out.buf, "weir_dag_run_duration_seconds_sum{dag_id=\"etl\"}") == 16);
	/* the table is full after etl and d0..d510: the rest count as _other */
	snprintf(key, sizeof key, "weir_dag_runs_total{dag_id=\"d%d\",state=\"success\"}",
	         METRICS_DAG_MAX - 2);
	assert_true(sample(out.buf, key) == 1);
	snprintf(key, sizeof key, "weir_dag_runs_total{dag_id=\"d%d\",", METRICS_DAG_MAX - 1);
	assert_null(strstr(out.buf, key));
	assert_true(sample(out.buf, "weir_dag_runs_total{dag_id=\"_other\",state=\"success\"}") ==
	            11);
	assert_true(sample(out.buf, "weir_notifications_total{result=\"sent\"}") == 1);
	assert_true(sample(out.buf, "weir_notifications_total{result=\"failed\"}") == 2);
	strbuf_release(&out);
}

static void test_label_escapes(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_int_equal(metrics_render_label_value(&out, "a\"b\\c\nd"), 0);
	assert_string_equal(out.buf, "a\\\"b\\\\c\\nd");
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_histogram, reset),
	    cmocka_unit_test_setup(test_dags_and_counters, reset),
	    cmocka_unit_test_setup(test_label_escapes, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
