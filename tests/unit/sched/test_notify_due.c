/* test_notify_due.c: a delivery's backoff (doubling, the cap, the last
 * attempt) and SLA misses (due times by anchor, met states, once only, the
 * next due time). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sched/notify_due.h"

static void test_backoff_doubles(void **state)
{
	(void)state;
	struct notify_retry r = notify_retry_decide(1, 3, 1000, 50000);
	assert_true(r.again);
	assert_int_equal(r.at_ms, 51000);
	r = notify_retry_decide(2, 3, 1000, 50000);
	assert_true(r.again);
	assert_int_equal(r.at_ms, 52000);
	r = notify_retry_decide(3, 3, 1000, 50000);
	assert_true(r.again);
	assert_int_equal(r.at_ms, 54000);
}

static void test_backoff_gives_up(void **state)
{
	(void)state;
	assert_false(notify_retry_decide(4, 3, 1000, 0).again);
	assert_false(notify_retry_decide(1, 0, 1000, 0).again);
	assert_false(notify_retry_decide(0, 3, 1000, 0).again);
}

static void test_backoff_capped(void **state)
{
	(void)state;
	struct notify_retry r = notify_retry_decide(20, 20, 10000, 0);
	assert_true(r.again);
	assert_int_equal(r.at_ms, NOTIFY_RETRY_CAP_MS);
	/* a huge first wait saturates at the cap, no overflow */
	r = notify_retry_decide(2, 5, INT64_MAX / 2, 7);
	assert_int_equal(r.at_ms, 7 + NOTIFY_RETRY_CAP_MS);
}

static void test_sla_due(void **state)
{
	(void)state;
	struct dag_sla logical = {.within_s = 60, .from = SLA_FROM_LOGICAL_DATE};
	struct dag_sla start = {.within_s = 60, .from = SLA_FROM_RUN_START};
	struct dag_sla none = {0};
	assert_int_equal(sla_due_ms(&logical, 1000, 5000), 61000);
	assert_int_equal(sla_due_ms(&start, 1000, 5000), 65000);
	assert_int_equal(sla_due_ms(&start, 1000, 0), 0); /* not started yet */
	assert_int_equal(sla_due_ms(&none, 1000, 5000), 0);
	assert_int_equal(sla_due_ms(NULL, 1000, 5000), 0);
}

static void test_sla_decide(void **state)
{
	(void)state;
	struct sla_item items[] = {
	    {.due_ms = 100, .state = DAG_TI_RUNNING},                   /* missed */
	    {.due_ms = 100, .state = DAG_TI_SUCCESS},                   /* met */
	    {.due_ms = 100, .state = DAG_TI_RUNNING, .recorded = true}, /* already told */
	    {.due_ms = 300, .state = DAG_TI_NONE},                      /* ahead */
	    {.due_ms = 200, .state = DAG_TI_QUEUED},                    /* ahead, sooner */
	    {.due_ms = 150, .state = DAG_TI_SKIPPED},                   /* cannot miss */
	    {.due_ms = 0, .state = DAG_TI_RUNNING},                     /* no SLA */
	    {.due_ms = 100, .state = DAG_TI_FAILED},                    /* missed: not succeeded */
	};
	size_t missed[8], n = 99;
	int64_t next = -1;

	sla_decide(items, 8, 100, missed, &n, &next);
	assert_int_equal(n, 2);
	assert_int_equal(missed[0], 0);
	assert_int_equal(missed[1], 7);
	assert_int_equal(next, 200);

	sla_decide(items, 8, 50, missed, &n, &next);
	assert_int_equal(n, 0);
	assert_int_equal(next, 100);

	sla_decide(items, 0, 50, missed, &n, &next);
	assert_int_equal(n, 0);
	assert_int_equal(next, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_backoff_doubles), cmocka_unit_test(test_backoff_gives_up),
	    cmocka_unit_test(test_backoff_capped),  cmocka_unit_test(test_sla_due),
	    cmocka_unit_test(test_sla_decide),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
