/* test_agent_pool.c: how many spare shims the agent keeps after each turn
 * (agent_pool_want): the largest burst seen lately, 2 to 16, and 2 again
 * after a quiet while. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "launch/agent_pool.h"

static void test_follows_the_largest_burst(void **state)
{
	int64_t burst_at = 0;
	int want = 2;

	(void)state;
	/* one or two starts a turn keep the floor */
	want = agent_pool_want(want, 1, 1000, &burst_at);
	assert_int_equal(want, 2);
	want = agent_pool_want(want, 2, 1010, &burst_at);
	assert_int_equal(want, 2);
	assert_int_equal(burst_at, 0);
	/* a gang of 8 in one turn: 8 spares for the next */
	want = agent_pool_want(want, 8, 2000, &burst_at);
	assert_int_equal(want, 8);
	assert_int_equal(burst_at, 2000);
	/* a smaller burst keeps the larger number, and counts as a burst */
	want = agent_pool_want(want, 4, 3000, &burst_at);
	assert_int_equal(want, 8);
	assert_int_equal(burst_at, 3000);
	/* no more than 16, whatever the burst */
	want = agent_pool_want(want, 100, 4000, &burst_at);
	assert_int_equal(want, AGENT_POOL_MAX);
	/* nothing at all in a turn: no change */
	want = agent_pool_want(want, 0, 5000, &burst_at);
	assert_int_equal(want, AGENT_POOL_MAX);
}

static void test_back_to_two_after_a_quiet_while(void **state)
{
	int64_t burst_at = 0;
	int want;

	(void)state;
	want = agent_pool_want(2, 10, 10000, &burst_at);
	assert_int_equal(want, 10);
	/* small turns do not make a burst, nor keep one alive */
	want = agent_pool_want(want, 2, 39999, &burst_at);
	assert_int_equal(want, 10);
	want = agent_pool_want(want, 1, 40000, &burst_at);
	assert_int_equal(want, 2);
	/* and a new burst after it grows it again */
	want = agent_pool_want(want, 5, 41000, &burst_at);
	assert_int_equal(want, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_follows_the_largest_burst),
	    cmocka_unit_test(test_back_to_two_after_a_quiet_while),
	};
	return cmocka_run_group_tests_name("launch/agent_pool", tests, NULL, NULL);
}
