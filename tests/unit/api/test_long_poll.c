/* test_long_poll.c: what a long poll's check last saw of a key, kept until
 * the next notice of its kind (api/long_poll.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <uv.h>

#include "api/long_poll.h"

static void test_seen_until_a_notice(void **state)
{
	uv_loop_t loop;
	struct long_polls *lp;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	lp = long_polls_create(&loop);
	assert_non_null(lp);
	assert_false(long_polls_still(lp, 1, 7, "v1"));
	long_polls_seen(lp, 1, 7, "v1");
	assert_true(long_polls_still(lp, 1, 7, "v1"));
	/* another version, key or kind is not what was seen */
	assert_false(long_polls_still(lp, 1, 7, "v2"));
	assert_false(long_polls_still(lp, 1, 8, "v1"));
	assert_false(long_polls_still(lp, 0, 7, "v1"));
	assert_false(long_polls_still(lp, 1, 7, ""));
	/* a notice of another kind changes nothing of this one */
	long_polls_notify(lp, 0, LONG_POLL_ANY_KEY);
	assert_true(long_polls_still(lp, 1, 7, "v1"));
	/* one of its kind, for any key, forgets it */
	long_polls_notify(lp, 1, 3);
	assert_false(long_polls_still(lp, 1, 7, "v1"));
	/* seen again: remembered again, the newer version replacing the older */
	long_polls_seen(lp, 1, 7, "v1");
	long_polls_seen(lp, 1, 7, "v2");
	assert_false(long_polls_still(lp, 1, 7, "v1"));
	assert_true(long_polls_still(lp, 1, 7, "v2"));
	/* kinds out of range and texts too long are not remembered */
	long_polls_seen(lp, LONG_POLL_KINDS, 7, "v1");
	assert_false(long_polls_still(lp, LONG_POLL_KINDS, 7, "v1"));
	long_polls_seen(lp, 1, 9, "0123456789abcdef0123456789abcdef0");
	assert_false(long_polls_still(lp, 1, 9, "0123456789abcdef0123456789abcdef0"));
	long_polls_destroy(lp);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_a_few_keys_the_oldest_forgotten(void **state)
{
	uv_loop_t loop;
	struct long_polls *lp;
	char v[16];

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	lp = long_polls_create(&loop);
	assert_non_null(lp);
	for (int64_t k = 1; k <= 40; k++) {
		snprintf(v, sizeof v, "v%lld", (long long)k);
		long_polls_seen(lp, 1, k, v);
	}
	/* the latest are still there, the first long gone */
	assert_true(long_polls_still(lp, 1, 40, "v40"));
	assert_true(long_polls_still(lp, 1, 39, "v39"));
	assert_false(long_polls_still(lp, 1, 1, "v1"));
	long_polls_destroy(lp);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seen_until_a_notice),
	    cmocka_unit_test(test_a_few_keys_the_oldest_forgotten),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
