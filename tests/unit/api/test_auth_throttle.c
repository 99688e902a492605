/* Tests of api/auth_throttle: the per-address share of password checks in
 * its window, a success clearing it, the table full. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "api/auth_throttle.h"

static void test_share_then_wait(void **state)
{
	(void)state;
	struct auth_throttle *t = auth_throttle_create(3, 10000);
	assert_non_null(t);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(auth_throttle_wait_ms(t, "10.0.0.1", 1000 + i), 0);
		auth_throttle_note(t, "10.0.0.1", 1000 + i);
	}
	/* the share is spent: wait for the window's end, counted from its start */
	assert_int_equal(auth_throttle_wait_ms(t, "10.0.0.1", 1002), 9998);
	assert_int_equal(auth_throttle_wait_ms(t, "10.0.0.1", 10999), 1);
	/* another address has its own share */
	assert_int_equal(auth_throttle_wait_ms(t, "10.0.0.2", 1002), 0);
	/* the next window */
	assert_int_equal(auth_throttle_wait_ms(t, "10.0.0.1", 11000), 0);
	auth_throttle_note(t, "10.0.0.1", 11000);
	assert_int_equal(auth_throttle_wait_ms(t, "10.0.0.1", 11000), 0);
	auth_throttle_destroy(t);
}

static void test_success_clears(void **state)
{
	(void)state;
	struct auth_throttle *t = auth_throttle_create(2, 60000);
	auth_throttle_note(t, "::1", 0);
	auth_throttle_note(t, "::1", 1);
	assert_true(auth_throttle_wait_ms(t, "::1", 2) > 0);
	auth_throttle_clear(t, "::1");
	assert_int_equal(auth_throttle_wait_ms(t, "::1", 2), 0);
	/* an unknown address is one address */
	auth_throttle_note(t, "", 0);
	auth_throttle_note(t, NULL, 0);
	assert_true(auth_throttle_wait_ms(t, "", 1) > 0);
	assert_true(auth_throttle_wait_ms(t, NULL, 1) > 0);
	auth_throttle_destroy(t);
}

static void test_defaults_and_a_full_table(void **state)
{
	(void)state;
	struct auth_throttle *t = auth_throttle_create(0, 0);
	char addr[32];

	for (unsigned i = 0; i < AUTH_THROTTLE_DEFAULT_ATTEMPTS; i++)
		auth_throttle_note(t, "192.0.2.1", 5);
	assert_int_equal(auth_throttle_wait_ms(t, "192.0.2.1", 5), AUTH_THROTTLE_DEFAULT_WINDOW_MS);
	/* more addresses than slots: the one seen least recently gives its slot up,
	 * the busiest stays */
	for (int i = 0; i < AUTH_THROTTLE_SLOTS; i++) {
		snprintf(addr, sizeof addr, "198.51.100.%d/%d", i % 256, i);
		auth_throttle_note(t, addr, 10 + i);
		auth_throttle_note(t, "192.0.2.1", 10 + i); /* seen again: kept */
	}
	assert_true(auth_throttle_wait_ms(t, "192.0.2.1", 10 + AUTH_THROTTLE_SLOTS) > 0);
	auth_throttle_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_share_then_wait),
	    cmocka_unit_test(test_success_clears),
	    cmocka_unit_test(test_defaults_and_a_full_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
