/* test_log_window.c: where a log piece starts and ends for a file of a given
 * size (api/log_window.h): offsets from the start and from the end, past the
 * end, with and without a length. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/logs/log_window.h"

static void check(int64_t offset, int64_t length, uint64_t size, uint64_t want_start,
                  uint64_t want_end)
{
	struct log_window w = {.has_offset = true, .offset = offset, .length = length};
	uint64_t start = 7, end = 7;

	log_window_resolve(&w, size, &start, &end);
	assert_int_equal(start, want_start);
	assert_true(end == want_end);
}

static void test_resolve(void **state)
{
	(void)state;
	/* from the start, to the end (no length: UINT64_MAX, whatever the end is then) */
	check(0, -1, 1000, 0, UINT64_MAX);
	check(10, 100, 1000, 10, 110);
	/* a length past the end stays: the reader stops at the end of the file */
	check(990, 100, 1000, 990, 1090);
	/* past the end: at the end */
	check(5000, 10, 1000, 1000, 1010);
	/* negative: from the end; more than the file: from the start */
	check(-100, -1, 1000, 900, UINT64_MAX);
	check(-1000, 10, 1000, 0, 10);
	check(-262144, -1, 1000, 0, UINT64_MAX);
	/* an empty file */
	check(-10, 5, 0, 0, 5);
	check(0, 0, 0, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
