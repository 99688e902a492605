/* Tests of schedules in a time zone (model/cron.h over lib/tz.h): the zone's
 * offsets from TZif files and their footer rule, wall-clock times placed on
 * the time line (the spring gap, the autumn repeat), next and previous fire
 * times of fixed and stepping crons in Europe/Amsterdam and America/New_York
 * across both 2024 changes, data intervals and due runs with catchup.
 *
 * The expected values are those of _weir_airflow/intervals.py run with
 * pendulum (Airflow 2.x's CronDataIntervalTimetable rules), in UTC, but for one
 * case marked below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/tz.h"
#include "model/cron.h"

#define T(y, mo, d, h, mi) schedule_make_time(y, mo, d, h, mi, 0)
#define S(ms) ((ms) / 1000)

static const struct tz_zone *zone(const char *name)
{
	struct weir_error err = {0};
	const struct tz_zone *z = tz_zone_get(name, &err);
	if (!z)
		fail_msg("%s: %s", name, err.msg);
	return z;
}

static struct cron zoned(const char *expr, const char *tz)
{
	struct cron c;
	struct weir_error err = {0};
	if (cron_parse(expr, &c, &err) < 0 || cron_set_zone(&c, tz, &err) < 0)
		fail_msg("\"%s\" in %s: %s", expr, tz, err.msg);
	return c;
}

static void expect_time(int64_t got, int64_t want, const char *what)
{
	char g[40], w[40];
	if (got != want)
		fail_msg("%s: got %s, want %s", what,
		         got == CRON_NEVER ? "never" : schedule_format_ts(got, g, sizeof g),
		         schedule_format_ts(want, w, sizeof w));
}

static void test_offsets(void **state)
{
	(void)state;
	const struct tz_zone *ams = zone("Europe/Amsterdam");
	const struct tz_zone *ny = zone("America/New_York");
	assert_string_equal(tz_zone_name(ams), "Europe/Amsterdam");
	assert_false(tz_zone_is_utc(ams));
	assert_true(tz_zone_is_utc(zone("UTC")));
	assert_true(tz_zone_is_utc(NULL));
	/* Amsterdam: CEST from 31 March 01:00Z to 27 October 01:00Z */
	assert_int_equal(tz_offset_at(ams, S(T(2024, 3, 31, 0, 59))), 3600);
	assert_int_equal(tz_offset_at(ams, S(T(2024, 3, 31, 1, 0))), 7200);
	assert_int_equal(tz_offset_at(ams, S(T(2024, 10, 27, 0, 59))), 7200);
	assert_int_equal(tz_offset_at(ams, S(T(2024, 10, 27, 1, 0))), 3600);
	/* New York: EDT from 10 March 07:00Z to 3 November 06:00Z */
	assert_int_equal(tz_offset_at(ny, S(T(2024, 3, 10, 6, 59))), -5 * 3600);
	assert_int_equal(tz_offset_at(ny, S(T(2024, 3, 10, 7, 0))), -4 * 3600);
	assert_int_equal(tz_offset_at(ny, S(T(2024, 11, 3, 5, 59))), -4 * 3600);
	assert_int_equal(tz_offset_at(ny, S(T(2024, 11, 3, 6, 0))), -5 * 3600);
	/* far past the files' transitions: the footer's rule */
	assert_int_equal(tz_offset_at(ams, S(T(2100, 7, 1, 0, 0))), 7200);
	assert_int_equal(tz_offset_at(ams, S(T(2100, 1, 1, 0, 0))), 3600);
	assert_int_equal(tz_offset_at(ams, S(T(2100, 3, 28, 0, 59))), 3600); /* last Sunday */
	assert_int_equal(tz_offset_at(ams, S(T(2100, 3, 28, 1, 0))), 7200);
	/* the southern hemisphere: summer time across the new year */
	const struct tz_zone *syd = zone("Australia/Sydney");
	assert_int_equal(tz_offset_at(syd, S(T(2090, 1, 1, 0, 0))), 11 * 3600);
	assert_int_equal(tz_offset_at(syd, S(T(2090, 7, 1, 0, 0))), 10 * 3600);
	/* the same zone twice is the same object */
	assert_ptr_equal(zone("Europe/Amsterdam"), ams);
}

static void test_bad_zones(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "../etc/passwd",     "/etc/localtime", "Europe/../../etc",
	    "Europe//Amsterdam", "Mars/Olympus",   "",
	    "Europe/Amster dam", "zone.tab",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct weir_error err = {0};
		if (tz_zone_get(bad[i], &err))
			fail_msg("\"%s\" accepted", bad[i]);
		assert_non_null(strstr(err.msg, "time zone"));
	}
	struct cron c;
	struct weir_error err = {0};
	assert_int_equal(cron_parse("@daily", &c, &err), 0);
	assert_int_equal(cron_set_zone(&c, "Mars/Olympus", &err), -1);
	assert_non_null(strstr(err.msg, "\"Mars/Olympus\": unknown"));
}

static void test_local_to_utc(void **state)
{
	(void)state;
	const struct tz_zone *ams = zone("Europe/Amsterdam");
	/* an ordinary time */
	assert_int_equal(tz_local_to_utc(ams, S(T(2024, 6, 1, 6, 0))), S(T(2024, 6, 1, 4, 0)));
	/* 02:30 on 31 March does not exist: 03:30 CEST */
	assert_int_equal(tz_local_to_utc(ams, S(T(2024, 3, 31, 2, 30))), S(T(2024, 3, 31, 1, 30)));
	/* 02:30 on 27 October occurs twice: the second, CET */
	assert_int_equal(tz_local_to_utc(ams, S(T(2024, 10, 27, 2, 30))),
	                 S(T(2024, 10, 27, 1, 30)));
	int64_t ms;
	struct weir_error err = {0};
	assert_int_equal(schedule_parse_time_in("2024-03-29", "start_date", ams, &ms, &err), 0);
	expect_time(ms, T(2024, 3, 28, 23, 0), "a naive date in Amsterdam");
	assert_int_equal(
	    schedule_parse_time_in("2024-03-29T00:00:00Z", "start_date", ams, &ms, &err), 0);
	expect_time(ms, T(2024, 3, 29, 0, 0), "Z wins over the zone");
}

struct zcase {
	const char *tz, *expr;
	int64_t at, next, prev;
};

static void test_next_prev(void **state)
{
	(void)state;
	static const char *const AMS = "Europe/Amsterdam", *const NY = "America/New_York";
	const struct zcase cases[] = {
	    /* daily at 02:30: the gap moves it to 03:30, the repeat takes the second */
	    {AMS, "30 2 * * *", T(2024, 3, 30, 1, 30), T(2024, 3, 31, 1, 30),
	     T(2024, 3, 29, 1, 30)},
	    /* (Airflow's prev here is 31 March 01:30Z itself, the time asked about:
	     * weir's previous fire time is strictly before it) */
	    {AMS, "30 2 * * *", T(2024, 3, 31, 1, 30), T(2024, 4, 1, 0, 30), T(2024, 3, 30, 1, 30)},
	    {AMS, "30 2 * * *", T(2024, 10, 26, 0, 30), T(2024, 10, 27, 1, 30),
	     T(2024, 10, 25, 0, 30)},
	    {AMS, "30 2 * * *", T(2024, 10, 27, 1, 30), T(2024, 10, 28, 1, 30),
	     T(2024, 10, 26, 0, 30)},
	    /* hourly keeps firing every hour through both changes */
	    {AMS, "0 * * * *", T(2024, 3, 31, 0, 0), T(2024, 3, 31, 1, 0), T(2024, 3, 30, 23, 0)},
	    {AMS, "0 * * * *", T(2024, 3, 31, 1, 0), T(2024, 3, 31, 2, 0), T(2024, 3, 31, 0, 0)},
	    {AMS, "0 * * * *", T(2024, 10, 27, 0, 0), T(2024, 10, 27, 1, 0),
	     T(2024, 10, 26, 23, 0)},
	    {AMS, "0 * * * *", T(2024, 10, 27, 1, 0), T(2024, 10, 27, 2, 0), T(2024, 10, 27, 0, 0)},
	    {AMS, "0 6 * * *", T(2024, 3, 30, 5, 0), T(2024, 3, 31, 4, 0), T(2024, 3, 29, 5, 0)},
	    {AMS, "0 6 * * *", T(2024, 10, 26, 4, 0), T(2024, 10, 27, 5, 0), T(2024, 10, 25, 4, 0)},
	    {NY, "0 6 * * *", T(2024, 3, 9, 11, 0), T(2024, 3, 10, 10, 0), T(2024, 3, 8, 11, 0)},
	    {NY, "0 6 * * *", T(2024, 11, 2, 10, 0), T(2024, 11, 3, 11, 0), T(2024, 11, 1, 10, 0)},
	    {NY, "30 2 * * *", T(2024, 3, 9, 7, 30), T(2024, 3, 10, 7, 30), T(2024, 3, 8, 7, 30)},
	    {NY, "30 1 * * *", T(2024, 11, 2, 5, 30), T(2024, 11, 3, 6, 30), T(2024, 11, 1, 5, 30)},
	    {NY, "0 * * * *", T(2024, 11, 3, 5, 0), T(2024, 11, 3, 6, 0), T(2024, 11, 3, 4, 0)},
	    {NY, "0 * * * *", T(2024, 11, 3, 6, 0), T(2024, 11, 3, 7, 0), T(2024, 11, 3, 5, 0)},
	    {NY, "0 * * * *", T(2024, 3, 10, 6, 0), T(2024, 3, 10, 7, 0), T(2024, 3, 10, 5, 0)},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct zcase *k = &cases[i];
		struct cron c = zoned(k->expr, k->tz);
		char what[128], at[40];
		snprintf(what, sizeof what, "%s in %s after %s", k->expr, k->tz,
		         schedule_format_ts(k->at, at, sizeof at));
		expect_time(cron_next(&c, k->at), k->next, what);
		expect_time(cron_prev(&c, k->at), k->prev, what);
		assert_true(cron_matches(&c, k->next));
		assert_false(cron_matches(&c, k->next + 60000));
	}
}

static void test_intervals_and_catchup(void **state)
{
	(void)state;
	/* 06:00 in Amsterdam from 29 March: 05:00Z in winter, 04:00Z in summer */
	struct cron c = zoned("0 6 * * *", "Europe/Amsterdam");
	struct schedule_interval iv = schedule_data_interval(&c, T(2024, 3, 30, 5, 0));
	expect_time(iv.start_ms, T(2024, 3, 30, 5, 0), "start");
	expect_time(iv.end_ms, T(2024, 3, 31, 4, 0), "the day of 23 hours");
	iv = schedule_data_interval(&c, T(2024, 10, 26, 4, 0));
	expect_time(iv.end_ms, T(2024, 10, 27, 5, 0), "the day of 25 hours");

	int64_t start = T(2024, 3, 28, 23, 0); /* 29 March 00:00 CET */
	int64_t end = T(2024, 4, 1, 22, 0);    /* 2 April 00:00 CEST */
	int64_t out[8];
	size_t n = schedule_due_runs(&c, start, end, true, CRON_NEVER, T(2024, 5, 1, 0, 0), out, 8);
	const int64_t want[] = {T(2024, 3, 29, 5, 0), T(2024, 3, 30, 5, 0), T(2024, 3, 31, 4, 0),
	                        T(2024, 4, 1, 4, 0)};
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		expect_time(out[i], want[i], "catchup");
	/* now is 1 April 05:00Z: the run of 31 March ended at 04:00Z, the next is not due */
	n = schedule_due_runs(&c, start, end, true, CRON_NEVER, T(2024, 4, 1, 3, 59), out, 8);
	assert_int_equal(n, 2);
	expect_time(
	    schedule_next_due(&c, start, end, true, T(2024, 3, 30, 5, 0), T(2024, 4, 1, 3, 59)),
	    T(2024, 4, 1, 4, 0), "next due");
	/* without catchup: the latest interval that has ended */
	n = schedule_due_runs(&c, start, CRON_NEVER, false, CRON_NEVER, T(2024, 4, 3, 4, 30), out,
	                      8);
	assert_int_equal(n, 1);
	expect_time(out[0], T(2024, 4, 2, 4, 0), "no catchup");
	/* a start date off the grid starts at the next fire time */
	n = schedule_due_runs(&c, T(2024, 3, 31, 5, 0), CRON_NEVER, true, CRON_NEVER,
	                      T(2024, 4, 2, 4, 0), out, 8);
	assert_int_equal(n, 1);
	expect_time(out[0], T(2024, 4, 1, 4, 0), "aligned");
}

static void test_a_trigger_schedule(void **state)
{
	(void)state;
	/* CronTriggerTimetable("0 6 * * *", timezone="Europe/Amsterdam", interval=1h): a run
	 * at each 06:00, its logical date an hour before, due at the fire time */
	struct cron c = zoned("0 6 * * *", "Europe/Amsterdam");
	c.trigger = true;
	c.trigger_interval_ms = 3600000;
	struct schedule_interval iv = schedule_data_interval(&c, T(2024, 3, 31, 3, 0));
	expect_time(iv.start_ms, T(2024, 3, 31, 3, 0), "trigger start");
	expect_time(iv.end_ms, T(2024, 3, 31, 4, 0), "trigger end: the fire time");
	int64_t start = T(2024, 3, 28, 23, 0), out[8];
	size_t n = schedule_due_runs(&c, start, CRON_NEVER, true, CRON_NEVER, T(2024, 3, 31, 4, 0),
	                             out, 8);
	const int64_t want[] = {T(2024, 3, 29, 4, 0), T(2024, 3, 30, 4, 0), T(2024, 3, 31, 3, 0)};
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		expect_time(out[i], want[i], "trigger catchup");
	expect_time(schedule_next_due(&c, start, CRON_NEVER, true, want[2], T(2024, 3, 31, 4, 0)),
	            T(2024, 4, 1, 4, 0), "the next fire time");
	/* without catchup: the latest fire time that has come, once */
	n = schedule_due_runs(&c, start, CRON_NEVER, false, CRON_NEVER, T(2024, 4, 3, 9, 0), out,
	                      8);
	assert_int_equal(n, 1);
	expect_time(out[0], T(2024, 4, 3, 3, 0), "trigger without catchup");
	n = schedule_due_runs(&c, start, CRON_NEVER, false, out[0], T(2024, 4, 3, 9, 0), out, 8);
	assert_int_equal(n, 0);
	/* end_date bounds the fire times (05:00Z in winter), not the logical dates */
	n = schedule_due_runs(&c, start, T(2024, 3, 30, 5, 0), true, CRON_NEVER,
	                      T(2024, 5, 1, 0, 0), out, 8);
	assert_int_equal(n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_offsets),
	    cmocka_unit_test(test_bad_zones),
	    cmocka_unit_test(test_local_to_utc),
	    cmocka_unit_test(test_next_prev),
	    cmocka_unit_test(test_intervals_and_catchup),
	    cmocka_unit_test(test_a_trigger_schedule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
