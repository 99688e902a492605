/* test_sensor.c: a sensor's verdicts and waits (sched/sensor.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sched/sensor.h"

static const struct sensor_policy plain = {.poke_interval_ms = 1000, .timeout_ms = 10000};

static void test_met_and_errors(void **state)
{
	(void)state;
	struct sensor_verdict v = sensor_after_poke(&plain, SENSOR_MET, 3, 0, 99999);
	assert_int_equal(v.action, SENSOR_SUCCEED); /* met wins over a passed timeout */
	v = sensor_after_poke(&plain, SENSOR_ERROR, 1, 0, 10);
	assert_int_equal(v.action, SENSOR_FAIL);
	assert_false(v.no_retry);
	v = sensor_after_poke(&plain, SENSOR_FAILED_STATE, 1, 0, 10);
	assert_int_equal(v.action, SENSOR_FAIL);
	assert_true(v.no_retry);
	v = sensor_after_poke(&plain, SENSOR_SKIP_STATE, 1, 0, 10);
	assert_int_equal(v.action, SENSOR_SKIP);
	assert_false(v.timed_out);
}

static void test_soft_fail_skips_a_failed_state(void **state)
{
	(void)state;
	struct sensor_policy soft = plain;
	soft.soft_fail = true;
	struct sensor_verdict v = sensor_after_poke(&soft, SENSOR_FAILED_STATE, 1, 0, 10);
	assert_int_equal(v.action, SENSOR_SKIP);
	assert_false(v.timed_out);
}

static void test_waits_then_times_out(void **state)
{
	(void)state;
	struct sensor_policy soft = plain;
	struct sensor_verdict v = sensor_after_poke(&plain, SENSOR_NOT_YET, 1, 5000, 5000);

	assert_int_equal(v.action, SENSOR_WAIT);
	assert_int_equal(v.next_poke_at, 6000);
	/* the last poke falls on the deadline, not after it */
	v = sensor_after_poke(&plain, SENSOR_NOT_YET, 9, 5000, 14500);
	assert_int_equal(v.action, SENSOR_WAIT);
	assert_int_equal(v.next_poke_at, 15000);
	v = sensor_after_poke(&plain, SENSOR_NOT_YET, 10, 5000, 15000);
	assert_int_equal(v.action, SENSOR_FAIL);
	assert_true(v.no_retry && v.timed_out);
	soft.soft_fail = true;
	v = sensor_after_poke(&soft, SENSOR_NOT_YET, 10, 5000, 15001);
	assert_int_equal(v.action, SENSOR_SKIP);
	assert_true(v.timed_out);
}

static void test_backoff(void **state)
{
	(void)state;
	struct sensor_policy p = {.poke_interval_ms = 100, .timeout_ms = 100000,
	                          .exponential_backoff = true};
	assert_int_equal(sensor_wait_ms(&p, 1), 100);
	assert_int_equal(sensor_wait_ms(&p, 2), 200);
	assert_int_equal(sensor_wait_ms(&p, 4), 800);
	assert_int_equal(sensor_wait_ms(&p, 200), 100000); /* the timeout caps it, no overflow */
	p.max_wait_ms = 500;
	assert_int_equal(sensor_wait_ms(&p, 4), 500);
	p.exponential_backoff = false;
	assert_int_equal(sensor_wait_ms(&p, 40), 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_met_and_errors),
	    cmocka_unit_test(test_waits_then_times_out),
	    cmocka_unit_test(test_backoff),
	    cmocka_unit_test(test_soft_fail_skips_a_failed_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
