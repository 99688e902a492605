/* Tests of DAG schedules: a table of next fire times (month ends, leap
 * days, the day-of-month/day-of-week OR rule, steps, year rollover,
 * presets, @once), previous fire times, data intervals, due runs with and
 * without catchup, every kind of bad expression, and the date helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "model/cron.h"

#define T(y, mo, d, h, mi) schedule_make_time(y, mo, d, h, mi, 0)

static struct cron parse_ok(const char *text)
{
	struct cron c;
	struct weir_error err = {0};
	if (cron_parse(text, &c, &err) < 0)
		fail_msg("\"%s\": %s", text, err.msg);
	return c;
}

static const char *fmt(int64_t ms, char *buf, size_t size)
{
	if (ms == CRON_NEVER)
		return "never";
	return schedule_format_ts(ms, buf, size);
}

struct next_case {
	const char *expr;
	int64_t after;
	int64_t want;
};

static void test_next_table(void **state)
{
	(void)state;
	const struct next_case cases[] = {
		/* steps */
		{"*/5 * * * *", T(2024, 1, 1, 0, 0), T(2024, 1, 1, 0, 5)},
		{"*/5 * * * *", T(2024, 1, 1, 0, 3) + 30000, T(2024, 1, 1, 0, 5)},
		{"*/5 * * * *", T(2024, 1, 1, 0, 55), T(2024, 1, 1, 1, 0)},
		{"0 1-10/3 * * *", T(2024, 1, 1, 4, 0), T(2024, 1, 1, 7, 0)},
		{"0 1-10/3 * * *", T(2024, 1, 1, 10, 0), T(2024, 1, 2, 1, 0)},
		{"10/20 * * * *", T(2024, 1, 1, 0, 31), T(2024, 1, 1, 0, 50)},
		{"1,15,30-31 * * * *", T(2024, 1, 1, 0, 15), T(2024, 1, 1, 0, 30)},
		/* strictly after, even on a fire time */
		{"* * * * *", T(2024, 1, 1, 0, 0), T(2024, 1, 1, 0, 1)},
		{"* * * * *", T(2024, 1, 1, 0, 0) - 1, T(2024, 1, 1, 0, 0)},
		/* month ends: day 31 skips short months, day 30 skips February */
		{"0 0 31 * *", T(2024, 1, 31, 0, 0), T(2024, 3, 31, 0, 0)},
		{"0 0 31 * *", T(2024, 3, 31, 0, 0), T(2024, 5, 31, 0, 0)},
		{"0 0 31 * *", T(2024, 7, 31, 0, 0), T(2024, 8, 31, 0, 0)},
		{"30 23 30 * *", T(2024, 1, 30, 23, 30), T(2024, 3, 30, 23, 30)},
		{"0 0 1 * *", T(2024, 1, 31, 12, 0), T(2024, 2, 1, 0, 0)},
		/* Feb 29: leap years only, and 2100 is not one */
		{"0 0 29 2 *", T(2023, 1, 1, 0, 0), T(2024, 2, 29, 0, 0)},
		{"0 0 29 2 *", T(2024, 3, 1, 0, 0), T(2028, 2, 29, 0, 0)},
		{"0 0 29 2 *", T(2096, 3, 1, 0, 0), T(2104, 2, 29, 0, 0)},
		{"0 0 28-29 2 *", T(2023, 2, 28, 0, 0), T(2024, 2, 28, 0, 0)},
		{"@daily", T(2024, 2, 28, 0, 0), T(2024, 2, 29, 0, 0)},
		{"@daily", T(2023, 2, 28, 0, 0), T(2023, 3, 1, 0, 0)},
		/* weekdays: names, 7 = Sunday, ranges through 7 */
		{"0 12 * * mon", T(2024, 1, 1, 12, 0), T(2024, 1, 8, 12, 0)},
		{"0 0 * * 7", T(2024, 1, 1, 0, 0), T(2024, 1, 7, 0, 0)},
		{"0 0 * * 0", T(2024, 1, 1, 0, 0), T(2024, 1, 7, 0, 0)},
		{"0 0 * * 5-7", T(2024, 1, 5, 0, 0), T(2024, 1, 6, 0, 0)},
		{"0 0 * * 5-7", T(2024, 1, 7, 0, 0), T(2024, 1, 12, 0, 0)},
		{"0 0 * * MON-FRI", T(2024, 1, 5, 0, 0), T(2024, 1, 8, 0, 0)},
		/* both day fields restricted: either matches (Vixie) */
		{"0 0 13 * fri", T(2024, 1, 1, 0, 0), T(2024, 1, 5, 0, 0)},
		{"0 0 13 * fri", T(2024, 1, 5, 0, 0), T(2024, 1, 12, 0, 0)},
		{"0 0 13 * fri", T(2024, 1, 12, 0, 0), T(2024, 1, 13, 0, 0)},
		/* one starts with '*': both must match (Jan 19 2024: odd and Friday) */
		{"0 0 */2 * fri", T(2024, 1, 5, 0, 0), T(2024, 1, 19, 0, 0)},
		{"0 0 1 * *", T(2024, 1, 1, 0, 0), T(2024, 2, 1, 0, 0)},
		/* months, names, year rollover */
		{"0 0 1 jan,jul *", T(2024, 1, 1, 0, 0), T(2024, 7, 1, 0, 0)},
		{"0 0 1 jan,jul *", T(2024, 7, 1, 0, 0), T(2025, 1, 1, 0, 0)},
		{"59 23 31 12 *", T(2024, 12, 31, 23, 59), T(2025, 12, 31, 23, 59)},
		{"* * * * *", T(2024, 12, 31, 23, 59), T(2025, 1, 1, 0, 0)},
		/* presets */
		{"@hourly", T(2024, 1, 1, 10, 30), T(2024, 1, 1, 11, 0)},
		{"@weekly", T(2024, 1, 1, 0, 0), T(2024, 1, 7, 0, 0)},
		{"@monthly", T(2024, 1, 31, 0, 0), T(2024, 2, 1, 0, 0)},
		{"@yearly", T(2024, 1, 1, 0, 0), T(2025, 1, 1, 0, 0)},
		{"@annually", T(2023, 6, 1, 0, 0), T(2024, 1, 1, 0, 0)},
		{"@midnight", T(2024, 1, 1, 0, 1), T(2024, 1, 2, 0, 0)},
		/* no grid */
		{"@once", T(2024, 1, 1, 0, 0), CRON_NEVER},
		{"none", T(2024, 1, 1, 0, 0), CRON_NEVER},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cron c = parse_ok(cases[i].expr);
		int64_t got = cron_next(&c, cases[i].after);
		char a[40], b[40], w[40];
		if (got != cases[i].want)
			fail_msg("next(\"%s\", %s) = %s, want %s", cases[i].expr,
				 fmt(cases[i].after, a, sizeof a), fmt(got, b, sizeof b),
				 fmt(cases[i].want, w, sizeof w));
		if (got != CRON_NEVER) {
			assert_true(cron_matches(&c, got));
			/* prev is next's inverse on the grid */
			assert_true(cron_prev(&c, got + 1) == got);
		}
	}
}

static void test_prev(void **state)
{
	(void)state;
	struct cron c = parse_ok("@daily");
	assert_true(cron_prev(&c, T(2024, 1, 2, 0, 0)) == T(2024, 1, 1, 0, 0));
	assert_true(cron_prev(&c, T(2024, 1, 2, 0, 0) + 1) == T(2024, 1, 2, 0, 0));
	assert_true(cron_prev(&c, T(2024, 3, 1, 0, 0)) == T(2024, 2, 29, 0, 0));
	c = parse_ok("0 0 31 * *");
	assert_true(cron_prev(&c, T(2024, 5, 1, 0, 0)) == T(2024, 3, 31, 0, 0));
	c = parse_ok("0 0 29 2 *");
	assert_true(cron_prev(&c, T(2024, 2, 29, 0, 0)) == T(2020, 2, 29, 0, 0));
	c = parse_ok("*/15 * * * *");
	assert_true(cron_prev(&c, T(2025, 1, 1, 0, 0)) == T(2024, 12, 31, 23, 45));
	c = parse_ok("@once");
	assert_true(cron_prev(&c, T(2025, 1, 1, 0, 0)) == CRON_NEVER);
	assert_false(cron_matches(&c, T(2025, 1, 1, 0, 0)));
}

static void test_data_interval(void **state)
{
	(void)state;
	struct cron c = parse_ok("@daily");
	struct schedule_interval iv = schedule_data_interval(&c, T(2024, 2, 28, 0, 0));
	assert_true(iv.start_ms == T(2024, 2, 28, 0, 0));
	assert_true(iv.end_ms == T(2024, 2, 29, 0, 0));
	c = parse_ok("@monthly");
	iv = schedule_data_interval(&c, T(2024, 2, 1, 0, 0));
	assert_true(iv.end_ms == T(2024, 3, 1, 0, 0));
	c = parse_ok("@once");
	iv = schedule_data_interval(&c, T(2024, 2, 1, 6, 0));
	assert_true(iv.start_ms == iv.end_ms);
	/* a manual run off the grid: [D, next fire) */
	c = parse_ok("@daily");
	iv = schedule_data_interval(&c, T(2024, 2, 1, 6, 0));
	assert_true(iv.end_ms == T(2024, 2, 2, 0, 0));
}

static void test_due_runs(void **state)
{
	(void)state;
	struct cron c = parse_ok("@daily");
	int64_t out[8];
	int64_t start = T(2024, 1, 1, 0, 0), now = T(2024, 1, 4, 0, 30);

	/* catchup: every ended day; the run for day D is due after D ends */
	size_t n = schedule_due_runs(&c, start, CRON_NEVER, true, CRON_NEVER, now, out, 8);
	assert_int_equal(n, 3);
	assert_true(out[0] == T(2024, 1, 1, 0, 0));
	assert_true(out[1] == T(2024, 1, 2, 0, 0));
	assert_true(out[2] == T(2024, 1, 3, 0, 0));
	/* at most `max`, then ask again from the last */
	n = schedule_due_runs(&c, start, CRON_NEVER, true, CRON_NEVER, now, out, 2);
	assert_int_equal(n, 2);
	n = schedule_due_runs(&c, start, CRON_NEVER, true, out[1], now, out, 8);
	assert_int_equal(n, 1);
	assert_true(out[0] == T(2024, 1, 3, 0, 0));
	/* without catchup: the latest ended interval only */
	n = schedule_due_runs(&c, start, CRON_NEVER, false, CRON_NEVER, now, out, 8);
	assert_int_equal(n, 1);
	assert_true(out[0] == T(2024, 1, 3, 0, 0));
	/* nothing more until Jan 5 00:00, when Jan 4 has ended */
	n = schedule_due_runs(&c, start, CRON_NEVER, false, T(2024, 1, 3, 0, 0), now, out, 8);
	assert_int_equal(n, 0);
	assert_true(schedule_next_due(&c, start, CRON_NEVER, false, T(2024, 1, 3, 0, 0), now) ==
		    T(2024, 1, 5, 0, 0));
	assert_true(schedule_next_due(&c, start, CRON_NEVER, true, CRON_NEVER, now) ==
		    T(2024, 1, 2, 0, 0));
	/* a start date off the grid: the first interval starts at the next fire */
	n = schedule_due_runs(&c, T(2024, 1, 1, 6, 0), CRON_NEVER, true, CRON_NEVER,
			      T(2024, 1, 3, 0, 0), out, 8);
	assert_int_equal(n, 1);
	assert_true(out[0] == T(2024, 1, 2, 0, 0));
	/* end_date: no run with a logical date after it */
	n = schedule_due_runs(&c, start, T(2024, 1, 2, 0, 0), true, CRON_NEVER, now, out, 8);
	assert_int_equal(n, 2);
	assert_true(schedule_next_due(&c, start, T(2024, 1, 2, 0, 0), true, out[1], now) ==
		    CRON_NEVER);
	/* before the start date: nothing yet */
	n = schedule_due_runs(&c, start, CRON_NEVER, true, CRON_NEVER, T(2023, 12, 31, 0, 0), out,
			      8);
	assert_int_equal(n, 0);

	/* @once: one run at the start date, due once it has come */
	c = parse_ok("@once");
	n = schedule_due_runs(&c, start, CRON_NEVER, true, CRON_NEVER, start - 1, out, 8);
	assert_int_equal(n, 0);
	assert_true(schedule_next_due(&c, start, CRON_NEVER, true, CRON_NEVER, start - 1) == start);
	n = schedule_due_runs(&c, start, CRON_NEVER, false, CRON_NEVER, now, out, 8);
	assert_int_equal(n, 1);
	assert_true(out[0] == start);
	n = schedule_due_runs(&c, start, CRON_NEVER, false, start, now, out, 8);
	assert_int_equal(n, 0);
	assert_true(schedule_next_due(&c, start, CRON_NEVER, false, start, now) == CRON_NEVER);

	/* none: only triggers */
	c = parse_ok(NULL);
	assert_int_equal(c.kind, CRON_NONE);
	n = schedule_due_runs(&c, start, CRON_NEVER, true, CRON_NEVER, now, out, 8);
	assert_int_equal(n, 0);
	assert_true(schedule_next_due(&c, start, CRON_NEVER, true, CRON_NEVER, now) == CRON_NEVER);

	/* hourly without catchup after a long pause: one run, the last hour */
	c = parse_ok("@hourly");
	n = schedule_due_runs(&c, start, CRON_NEVER, false, T(2024, 1, 1, 3, 0),
			      T(2024, 3, 1, 10, 15), out, 8);
	assert_int_equal(n, 1);
	assert_true(out[0] == T(2024, 3, 1, 9, 0));
}

static void expect_bad(const char *text, const char *needle)
{
	struct cron c;
	struct weir_error err = {0};
	if (cron_parse(text, &c, &err) == 0)
		fail_msg("\"%s\" parsed, expected an error containing \"%s\"", text, needle);
	if (!strstr(err.msg, needle))
		fail_msg("\"%s\": error \"%s\" lacks \"%s\"", text, err.msg, needle);
	assert_int_equal(err.kind, WEIR_E_INVALID);
}

static void test_bad_expressions(void **state)
{
	(void)state;
	expect_bad("61 * * * *", "minute field \"61\": expected 0-59");
	expect_bad("* 24 * * *", "hour field \"24\": expected 0-23");
	expect_bad("* * 0 * *", "day-of-month field \"0\": expected 1-31");
	expect_bad("* * 32 * *", "day-of-month field \"32\"");
	expect_bad("* * * 13 *", "month field \"13\": expected 1-12 or jan-dec");
	expect_bad("* * * foo *", "month field \"foo\"");
	expect_bad("* * * * 8", "day-of-week field \"8\": expected 0-7");
	expect_bad("* * * * funday", "day-of-week field \"funday\"");
	expect_bad("*/0 * * * *", "expected a step");
	expect_bad("*/61 * * * *", "expected a step");
	expect_bad("5-1 * * * *", "low <= high");
	expect_bad("1,,2 * * * *", "minute field \"1,,2\"");
	expect_bad("1, * * * *", "minute field \"1,\"");
	expect_bad("-1 * * * *", "minute field \"-1\"");
	expect_bad("1-2-3 * * * *", "minute field");
	expect_bad("1000 * * * *", "minute field");
	expect_bad("* * * *", "expected 5 fields");
	expect_bad("* * * * * *", "got 6 fields");
	expect_bad("@sometimes", "expected @hourly");
	expect_bad("0 0 30 2 *", "never fires");
	expect_bad("0 0 31 4,6,9,11 *", "never fires");
	char longer[200];
	memset(longer, '1', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	expect_bad(longer, "at most 127 characters");
	/* and a few that are fine */
	parse_ok("  0 0 * * *  ");
	parse_ok("0 0 * * sun,SAT");
	parse_ok("0\t0\t1\t*\t*");
	parse_ok("@DAILY");
	parse_ok("None");
}

static void test_time_helpers(void **state)
{
	(void)state;
	int64_t t;
	char buf[40];
	struct weir_error err = {0};

	assert_int_equal(schedule_parse_time("2024-02-29", "start_date", &t, &err), 0);
	assert_true(t == T(2024, 2, 29, 0, 0));
	assert_string_equal(schedule_format_ts(t, buf, sizeof buf), "2024-02-29T00:00:00+00:00");
	assert_string_equal(schedule_format_ds(t, false, buf, sizeof buf), "2024-02-29");
	assert_string_equal(schedule_format_ds(t, true, buf, sizeof buf), "20240229");
	assert_int_equal(schedule_parse_time("2024-01-31T06:30:15Z", "x", &t, &err), 0);
	assert_true(t == T(2024, 1, 31, 6, 30) + 15000);
	assert_int_equal(schedule_parse_time("2024-01-31 06:30", "x", &t, &err), 0);
	assert_true(t == T(2024, 1, 31, 6, 30));
	assert_int_equal(schedule_parse_time("2024-01-31T06:30:00.250+02:00", "x", &t, &err), 0);
	assert_true(t == T(2024, 1, 31, 4, 30));
	assert_int_equal(schedule_parse_time("2024-01-01T01:00:00-0130", "x", &t, &err), 0);
	assert_true(t == T(2024, 1, 1, 2, 30));
	assert_int_equal(schedule_parse_time("1970-01-01", "x", &t, &err), 0);
	assert_true(t == 0);
	assert_string_equal(schedule_format_ts(T(2100, 3, 1, 23, 59), buf, sizeof buf),
			    "2100-03-01T23:59:00+00:00");

	assert_int_equal(schedule_parse_time("2023-02-29", "start_date", &t, &err), -1);
	assert_non_null(strstr(err.msg, "start_date: \"2023-02-29\" is not a date"));
	assert_int_equal(schedule_parse_time("yesterday", "end_date", &t, &err), -1);
	assert_non_null(strstr(err.msg, "end_date: expected a date like 2024-01-31"));
	assert_int_equal(schedule_parse_time("2024-01-01T25:00", "x", &t, &err), -1);
	assert_int_equal(schedule_parse_time("2024-01-01T10:00x", "x", &t, &err), -1);
	assert_int_equal(schedule_parse_time("2024-1-01", "x", &t, &err), -1);
	assert_int_equal(schedule_parse_time("", "x", &t, &err), -1);

	/* the calendar round-trips over four centuries of days */
	for (int64_t d = -1000; d < 146097 + 1000; d += 13) {
		int64_t ms = d * 86400000LL + 3723000;
		schedule_format_ts(ms, buf, sizeof buf);
		int64_t back;
		if (d >= 0) {
			assert_int_equal(schedule_parse_time(buf, "x", &back, &err), 0);
			assert_true(back == ms);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_table),      cmocka_unit_test(test_prev),
		cmocka_unit_test(test_data_interval),   cmocka_unit_test(test_due_runs),
		cmocka_unit_test(test_bad_expressions), cmocka_unit_test(test_time_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
