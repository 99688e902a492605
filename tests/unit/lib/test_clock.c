/* Tests of lib/clock's formats (ISO with milliseconds, Airflow's with
 * microseconds), their parse back, sleeping, and lib/json_util's nulls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/json_util.h"

/* 2024-01-31T06:00:00Z */
#define T0 1706680800000LL

static void test_formats(void **state)
{
	(void)state;
	char buf[48];
	assert_string_equal(clock_format_iso(T0 + 123, buf, sizeof buf), "2024-01-31T06:00:00.123Z");
	assert_string_equal(clock_format_airflow(T0, buf, sizeof buf), "2024-01-31T06:00:00+00:00");
	assert_string_equal(clock_format_airflow(T0 + 250, buf, sizeof buf),
			    "2024-01-31T06:00:00.250000+00:00");
	assert_string_equal(clock_format_airflow(T0 + 1, buf, sizeof buf),
			    "2024-01-31T06:00:00.001000+00:00");
	assert_string_equal(clock_format_airflow(0, buf, sizeof buf), "1970-01-01T00:00:00+00:00");
	/* before the epoch: the fraction counts forward from the second below */
	assert_string_equal(clock_format_airflow(-250, buf, sizeof buf),
			    "1969-12-31T23:59:59.750000+00:00");

	int64_t ms = 0;
	assert_int_equal(clock_parse_iso("2024-01-31T06:00:00+00:00", &ms), 0);
	assert_true(ms == T0);
	assert_int_equal(clock_parse_iso("2024-01-31T06:00:00.250000+00:00", &ms), 0);
	assert_true(ms == T0 + 250);
}

static void test_sleep(void **state)
{
	(void)state;
	int64_t t = clock_mono_ms();
	clock_sleep_ms(30);
	assert_true(clock_mono_ms() - t >= 30);
	t = clock_mono_ms();
	clock_sleep_ms(0);
	clock_sleep_ms(-5);
	assert_true(clock_mono_ms() - t < 20);
}

static void test_json(void **state)
{
	(void)state;
	json_t *j = json_util_time_iso(0);
	assert_true(json_is_null(j));
	json_decref(j);
	j = json_util_time_iso(T0 + 5);
	assert_string_equal(json_string_value(j), "2024-01-31T06:00:00.005Z");
	json_decref(j);
	j = json_util_time_airflow(-1);
	assert_true(json_is_null(j));
	json_decref(j);
	j = json_util_time_airflow(T0);
	assert_string_equal(json_string_value(j), "2024-01-31T06:00:00+00:00");
	json_decref(j);

	j = json_util_string(NULL);
	assert_true(json_is_null(j));
	json_decref(j);
	json_t *o = json_object();
	assert_int_equal(json_util_set_string(o, "a", "x"), 0);
	assert_int_equal(json_util_set_string(o, "b", NULL), 0);
	assert_string_equal(json_string_value(json_object_get(o, "a")), "x");
	assert_true(json_is_null(json_object_get(o, "b")));
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_sleep),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
