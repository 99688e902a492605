/* Tests of the schedules that are no cron expression (model/cron.h):
 * a relativedelta step (months clamped to the month's end, catchup, end
 * date, Airflow's latest interval without catchup), an events list (every
 * event in order, start and end dates not bounding it, a manual run
 * restricted to the events), @continuous (no grid: the server's pass makes
 * its runs, decided by sched/continuous_due.h), a custom timetable's list of
 * runs (each with its interval, due at its run_after), and an Airflow DAG's
 * manual run's interval (the period that ends at or before its date). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/cron.h"

#define T(y, mo, d, h, mi) schedule_make_time(y, mo, d, h, mi, 0)
#define DAY 86400000LL

static struct cron delta(int32_t months, int64_t ms)
{
	struct cron c;
	struct weir_error err = {0};
	if (cron_set_delta(&c, months, ms, "relativedelta(...)", &err) < 0)
		fail_msg("%s", err.msg);
	return c;
}

static void test_a_month_step_clamps_to_the_month_end(void **state)
{
	struct cron c = delta(1, 0);
	(void)state;
	/* dateutil: Jan 31 + 1 month is Feb 29 (2024), and Feb 29 + 1 month Mar 29 */
	assert_int_equal(cron_delta_add(&c, T(2024, 1, 31, 6, 0), 1), T(2024, 2, 29, 6, 0));
	assert_int_equal(cron_delta_add(&c, T(2024, 2, 29, 6, 0), 1), T(2024, 3, 29, 6, 0));
	assert_int_equal(cron_delta_add(&c, T(2024, 12, 15, 0, 0), 1), T(2025, 1, 15, 0, 0));
	assert_int_equal(cron_delta_add(&c, T(2024, 3, 31, 0, 0), -1), T(2024, 2, 29, 0, 0));
	/* months first, then the days and hours */
	c = delta(14, DAY + 3600000);
	assert_int_equal(cron_delta_add(&c, T(2023, 12, 31, 0, 0), 1), T(2025, 3, 1, 1, 0));
}

static void test_a_month_step_catches_up_to_its_end_date(void **state)
{
	struct cron c = delta(1, 0);
	int64_t out[8];
	size_t n;
	(void)state;
	n = schedule_due_runs(&c, T(2024, 1, 15, 0, 0), T(2024, 4, 1, 0, 0), true, CRON_NEVER,
	                      T(2024, 6, 1, 0, 0), out, 8);
	assert_int_equal(n, 3);
	assert_int_equal(out[0], T(2024, 1, 15, 0, 0));
	assert_int_equal(out[1], T(2024, 2, 15, 0, 0));
	assert_int_equal(out[2], T(2024, 3, 15, 0, 0));
	assert_int_equal(schedule_data_interval(&c, out[1]).end_ms, T(2024, 3, 15, 0, 0));
	/* an interval that has not ended is not due; the timer is set to its end */
	n = schedule_due_runs(&c, T(2024, 1, 15, 0, 0), CRON_NEVER, true, out[2],
	                      T(2024, 4, 20, 0, 0), out, 8);
	assert_int_equal(n, 0);
	assert_int_equal(schedule_next_due(&c, T(2024, 1, 15, 0, 0), CRON_NEVER, true,
	                                   T(2024, 3, 15, 0, 0), T(2024, 4, 20, 0, 0)),
	                 T(2024, 5, 15, 0, 0));
}

static void test_a_step_without_catchup_takes_the_latest_interval(void **state)
{
	struct cron c = delta(0, DAY);
	int64_t out[4];
	(void)state;
	/* Airflow rounds now down to the step, then one step back */
	assert_int_equal(schedule_due_runs(&c, T(2024, 1, 1, 0, 0), CRON_NEVER, false, CRON_NEVER,
	                                   T(2024, 5, 10, 13, 0), out, 4),
	                 1);
	assert_int_equal(out[0], T(2024, 5, 9, 0, 0));
	/* the views' "next run" (now far ahead): the step after the latest */
	assert_int_equal(schedule_due_runs(&c, T(2024, 1, 1, 0, 0), CRON_NEVER, false, out[0],
	                                   INT64_MAX / 2, out, 1),
	                 1);
	assert_int_equal(out[0], T(2024, 5, 10, 0, 0));
}

static void test_events_run_in_order_unbounded_by_the_dates(void **state)
{
	int64_t times[] = {T(2020, 1, 1, 0, 0), T(2024, 3, 1, 10, 0), T(2030, 1, 1, 0, 0)};
	struct cron c;
	struct weir_error err = {0};
	int64_t out[4];
	size_t n;
	(void)state;
	assert_int_equal(cron_set_events(&c, times, 3, false, &err), 0);
	/* the start date is after the first event and catchup is off: Airflow runs it anyway */
	n = schedule_due_runs(&c, T(2024, 1, 1, 0, 0), T(2024, 2, 1, 0, 0), false, CRON_NEVER,
	                      T(2025, 1, 1, 0, 0), out, 4);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], times[0]);
	assert_int_equal(out[1], times[1]);
	assert_int_equal(schedule_data_interval(&c, out[1]).end_ms, times[1]);
	assert_int_equal(schedule_next_due(&c, 0, CRON_NEVER, true, times[1], T(2025, 1, 1, 0, 0)),
	                 times[2]);
	assert_int_equal(schedule_next_due(&c, 0, CRON_NEVER, true, times[2], T(2031, 1, 1, 0, 0)),
	                 CRON_NEVER);
	/* a manual run: its own time, or the latest event with restrict_to_events */
	assert_int_equal(schedule_manual_interval(&c, T(2025, 6, 1, 0, 0)).start_ms,
	                 T(2025, 6, 1, 0, 0));
	c.restrict_to_events = true;
	assert_int_equal(schedule_manual_interval(&c, T(2025, 6, 1, 0, 0)).start_ms, times[1]);
	assert_int_equal(schedule_manual_interval(&c, T(2019, 6, 1, 0, 0)).end_ms, times[0]);
	/* out of order or empty: refused */
	int64_t bad[] = {times[1], times[0]};
	assert_int_equal(cron_set_events(&c, bad, 2, false, &err), -1);
	assert_int_equal(cron_set_events(&c, bad, 0, false, &err), -1);
}

static void test_listed_runs_come_due_at_their_run_after(void **state)
{
	/* a custom timetable's runs: [00:00, 12:00) made at 13:00, and so on */
	struct schedule_run runs[] = {
	    {T(2024, 1, 1, 0, 0), T(2024, 1, 1, 12, 0), T(2024, 1, 1, 13, 0)},
	    {T(2024, 1, 1, 12, 0), T(2024, 1, 2, 0, 0), T(2024, 1, 2, 1, 0)},
	    {T(2024, 1, 2, 0, 0), T(2024, 1, 2, 12, 0), T(2024, 1, 2, 13, 0)},
	};
	struct cron c;
	struct weir_error err = {0};
	int64_t out[4];
	size_t n;
	(void)state;
	assert_int_equal(cron_set_runs(&c, runs, 3, "halves", &err), 0);
	assert_int_equal(c.kind, CRON_RUNS);
	assert_string_equal(c.text, "halves");
	/* at 12:30 the first run's interval has ended but its run_after has not come */
	n = schedule_due_runs(&c, T(2024, 1, 1, 0, 0), CRON_NEVER, true, CRON_NEVER,
	                      T(2024, 1, 1, 12, 30), out, 4);
	assert_int_equal(n, 0);
	assert_int_equal(schedule_next_due(&c, T(2024, 1, 1, 0, 0), CRON_NEVER, true, CRON_NEVER,
	                                   T(2024, 1, 1, 12, 30)),
	                 runs[0].after_ms);
	/* later: every listed run after the latest one, start and end dates aside (the
	 * timetable applied them) */
	n = schedule_due_runs(&c, T(2030, 1, 1, 0, 0), T(2020, 1, 1, 0, 0), false, runs[0].start_ms,
	                      T(2024, 1, 3, 0, 0), out, 4);
	assert_int_equal(n, 2);
	assert_true(out[0] == runs[1].start_ms && out[1] == runs[2].start_ms);
	assert_true(schedule_data_interval(&c, out[0]).end_ms == runs[1].end_ms);
	assert_true(schedule_due_at(&c, out[1]) == runs[2].after_ms);
	/* used up */
	assert_true(schedule_next_due(&c, 0, CRON_NEVER, true, runs[2].start_ms,
	                              T(2024, 1, 3, 0, 0)) == CRON_NEVER);
	/* a manual run: [D, D], its interval unlisted */
	assert_true(schedule_manual_interval(&c, runs[1].start_ms).end_ms == runs[1].start_ms);
	assert_true(schedule_data_interval(&c, T(2024, 1, 1, 5, 0)).end_ms == T(2024, 1, 1, 5, 0));
	/* none left is a list too; out of order or backwards intervals are refused */
	assert_int_equal(cron_set_runs(&c, runs, 0, "x", &err), 0);
	struct schedule_run bad[] = {runs[1], runs[0]};
	assert_int_equal(cron_set_runs(&c, bad, 2, "x", &err), -1);
	bad[0] = (struct schedule_run){T(2024, 1, 2, 0, 0), T(2024, 1, 1, 0, 0), 0};
	assert_int_equal(cron_set_runs(&c, bad, 1, "x", &err), -1);
}

static void test_a_manual_interval_ending_at_the_date(void **state)
{
	struct cron daily, trig, months;
	struct weir_error err = {0};
	struct schedule_interval iv;
	(void)state;
	assert_int_equal(cron_parse("@daily", &daily, &err), 0);
	/* Airflow's CronDataIntervalTimetable: @daily triggered at 05-06 00:00 or 10:30
	 * covers 05-05 to 05-06 (weir's own rule: 05-06 to 05-07, or from 10:30) */
	iv = schedule_manual_interval_ending(&daily, T(2024, 5, 6, 0, 0), 0);
	assert_true(iv.start_ms == T(2024, 5, 5, 0, 0) && iv.end_ms == T(2024, 5, 6, 0, 0));
	iv = schedule_manual_interval_ending(&daily, T(2024, 5, 6, 10, 30), 0);
	assert_true(iv.start_ms == T(2024, 5, 5, 0, 0) && iv.end_ms == T(2024, 5, 6, 0, 0));
	iv = schedule_manual_interval(&daily, T(2024, 5, 6, 0, 0));
	assert_true(iv.start_ms == T(2024, 5, 6, 0, 0) && iv.end_ms == T(2024, 5, 7, 0, 0));
	/* a timedelta: that long before the date, off the grid too */
	iv = schedule_manual_interval_ending(&daily, T(2024, 5, 6, 10, 30), 3600000);
	assert_true(iv.start_ms == T(2024, 5, 6, 9, 30) && iv.end_ms == T(2024, 5, 6, 10, 30));
	/* a relativedelta of a month: the step back, clamped to the month's end */
	months = delta(1, 0);
	iv = schedule_manual_interval_ending(&months, T(2024, 3, 31, 0, 0), 0);
	assert_true(iv.start_ms == T(2024, 2, 29, 0, 0) && iv.end_ms == T(2024, 3, 31, 0, 0));
	/* a trigger cron keeps weir's rule */
	assert_int_equal(cron_parse("@daily", &trig, &err), 0);
	trig.trigger = true;
	iv = schedule_manual_interval_ending(&trig, T(2024, 5, 6, 10, 30), 0);
	assert_true(iv.start_ms == T(2024, 5, 6, 10, 30));
}

static void test_continuous_has_no_grid(void **state)
{
	struct cron c;
	struct weir_error err = {0};
	int64_t start = T(2024, 1, 1, 0, 0), now = T(2024, 5, 1, 12, 0);
	(void)state;
	assert_int_equal(cron_parse("@continuous", &c, &err), 0);
	assert_int_equal(c.kind, CRON_CONTINUOUS);
	/* start_date to come: the timer waits for it (whether a run is due
	 * is sched/continuous_due.h's: tests/unit/sched/test_continuous_due.c) */
	assert_int_equal(schedule_next_due(&c, now + 60000, CRON_NEVER, false, CRON_NEVER, now),
	                 now + 60000);
	assert_int_equal(schedule_next_due(&c, start, CRON_NEVER, false, start, now), CRON_NEVER);
	/* schedule_due_runs makes none: the server's pass does */
	int64_t out[2];
	assert_int_equal(schedule_due_runs(&c, start, CRON_NEVER, true, CRON_NEVER, now, out, 2),
	                 0);
}

static void test_bad_deltas(void **state)
{
	struct cron c;
	struct weir_error err = {0};
	(void)state;
	assert_int_equal(cron_set_delta(&c, 0, 0, "x", &err), -1);
	assert_int_equal(cron_set_delta(&c, -1, DAY, "x", &err), -1);
	assert_int_equal(cron_set_delta(&c, CRON_DELTA_MONTHS_MAX + 1, 0, "x", &err), -1);
	assert_int_equal(cron_set_delta(&c, 12, 0, "x", &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_month_step_clamps_to_the_month_end),
	    cmocka_unit_test(test_a_month_step_catches_up_to_its_end_date),
	    cmocka_unit_test(test_a_step_without_catchup_takes_the_latest_interval),
	    cmocka_unit_test(test_events_run_in_order_unbounded_by_the_dates),
	    cmocka_unit_test(test_listed_runs_come_due_at_their_run_after),
	    cmocka_unit_test(test_a_manual_interval_ending_at_the_date),
	    cmocka_unit_test(test_continuous_has_no_grid),
	    cmocka_unit_test(test_bad_deltas),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
