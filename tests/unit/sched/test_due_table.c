/* test_due_table.c: jobs' next timeouts: set, replace, remove, earliest, due. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "sched/due_table.h"
#include "sched/timers.h"

static void test_empty_table_has_nothing_due(void **state)
{
	struct due_table t = {0};
	size_t n = 7;
	(void)state;
	assert_true(due_table_earliest(&t) == TIMER_NEVER);
	assert_null(due_table_due(&t, INT64_MAX - 1, &n));
	assert_int_equal(n, 0);
	/* removing a job that is not there is fine */
	assert_int_equal(due_table_set(&t, 5, TIMER_NEVER), 0);
	assert_int_equal(t.n, 0);
	due_table_clear(&t);
}

static void test_set_replaces_and_never_removes(void **state)
{
	struct due_table t = {0};
	(void)state;
	assert_int_equal(due_table_set(&t, 1, 5000), 0);
	assert_int_equal(due_table_set(&t, 2, 3000), 0);
	assert_int_equal(due_table_set(&t, 3, 9000), 0);
	assert_true(due_table_earliest(&t) == 3000);
	/* one entry per job: a new time replaces the old */
	assert_int_equal(due_table_set(&t, 2, 7000), 0);
	assert_int_equal(t.n, 3);
	assert_true(due_table_earliest(&t) == 5000);
	assert_int_equal(due_table_set(&t, 1, TIMER_NEVER), 0);
	assert_int_equal(t.n, 2);
	assert_true(due_table_earliest(&t) == 7000);
	due_table_clear(&t);
	assert_true(due_table_earliest(&t) == TIMER_NEVER);
}

static void test_due_lists_the_jobs_at_or_before_now(void **state)
{
	struct due_table t = {0};
	size_t n = 0;
	int64_t *ids;
	(void)state;
	for (int64_t id = 1; id <= 200; id++) /* past the first growth */
		assert_int_equal(due_table_set(&t, id, 1000 * id), 0);
	ids = due_table_due(&t, 3000, &n);
	assert_non_null(ids);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		assert_true(ids[i] >= 1 && ids[i] <= 3);
	free(ids);
	/* they stay until set again */
	assert_true(due_table_earliest(&t) == 1000);
	assert_int_equal(t.n, 200);
	due_table_clear(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_table_has_nothing_due),
	    cmocka_unit_test(test_set_replaces_and_never_removes),
	    cmocka_unit_test(test_due_lists_the_jobs_at_or_before_now),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
