/* test_agent_pool.c: how many spare shims the agent keeps after each turn
 * (agent_pool_want): the largest burst seen lately, 2 to 16, and 2 again
 * after a quiet while; and when new ones are forked (agent_pool_refill_waits,
 * agent_pool_wake): once the starts given have begun, or a while after. */
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

/* New spares wait for the programs of the starts just given, but not long */
static void test_refill_waits_for_starts_to_begin(void **state)
{
	struct agent_pool p = {0};

	(void)state;
	p.on = true;
	p.want = 8;
	/* nothing given: no wait, no wake */
	assert_false(agent_pool_refill_waits(&p, 1000));
	assert_true(agent_pool_wake(&p) == INT64_MAX);
	/* three starts given at 1000, none begun yet */
	p.n_unbegun = 3;
	p.given_at = 1000;
	assert_true(agent_pool_refill_waits(&p, 1000));
	assert_true(agent_pool_refill_waits(&p, 1000 + AGENT_POOL_REFILL_WAIT_MS - 1));
	assert_true(agent_pool_wake(&p) == 1000 + AGENT_POOL_REFILL_WAIT_MS);
	/* not forever: a program that never starts holds no spare back */
	assert_false(agent_pool_refill_waits(&p, 1000 + AGENT_POOL_REFILL_WAIT_MS));
	/* a full pool has nothing to wake for */
	p.n_spares = 8;
	assert_true(agent_pool_wake(&p) == INT64_MAX);
	p.n_spares = 0;
	/* all begun: the refill goes at once */
	p.n_unbegun = 0;
	assert_false(agent_pool_refill_waits(&p, 1001));
	assert_true(agent_pool_wake(&p) == INT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_follows_the_largest_burst),
	    cmocka_unit_test(test_back_to_two_after_a_quiet_while),
	    cmocka_unit_test(test_refill_waits_for_starts_to_begin),
	};
	return cmocka_run_group_tests_name("launch/agent_pool", tests, NULL, NULL);
}
