/* test_continuous_due.c: @continuous's next run (sched/continuous_due.h):
 * one run at a time, each interval from the previous one's end to now,
 * none before the start date or past the end date. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sched/continuous_due.h"

#define T(y, mo, d, h, mi) schedule_make_time(y, mo, d, h, mi, 0)

static void test_continuous_runs_one_at_a_time(void **state)
{
	struct schedule_interval iv;
	int64_t start = T(2024, 1, 1, 0, 0), now = T(2024, 5, 1, 12, 0);
	(void)state;
	/* the first: from start_date to now */
	assert_true(schedule_continuous_due(start, CRON_NEVER, CRON_NEVER, false, now, &iv));
	assert_int_equal(iv.start_ms, start);
	assert_int_equal(iv.end_ms, now);
	/* none while one is active */
	assert_false(schedule_continuous_due(start, CRON_NEVER, now, true, now + 5, &iv));
	/* the next: from the previous one's end */
	assert_true(schedule_continuous_due(start, CRON_NEVER, now, false, now + 5, &iv));
	assert_int_equal(iv.start_ms, now);
	assert_int_equal(iv.end_ms, now + 5);
}

static void test_continuous_waits_for_its_dates(void **state)
{
	struct schedule_interval iv;
	int64_t start = T(2024, 1, 1, 0, 0), now = T(2024, 5, 1, 12, 0);
	(void)state;
	/* start_date to come: not yet */
	assert_false(schedule_continuous_due(now + 60000, CRON_NEVER, CRON_NEVER, false, now, &iv));
	/* no start date: never */
	assert_false(schedule_continuous_due(CRON_NEVER, CRON_NEVER, CRON_NEVER, false, now, &iv));
	/* past end_date: none */
	assert_false(schedule_continuous_due(start, now - 1, now - 10, false, now, &iv));
	/* the first one ending at end_date exactly: due */
	assert_true(schedule_continuous_due(start, now, CRON_NEVER, false, now, &iv));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_continuous_runs_one_at_a_time),
	    cmocka_unit_test(test_continuous_waits_for_its_dates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
