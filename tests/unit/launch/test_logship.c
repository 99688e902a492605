/* test_logship.c: the launcher's bounded log buffer: bytes come out in
 * order across the ring's wrap, in chunks of at most the size asked; beyond
 * the bound the oldest go and a note saying how many comes out first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "launch/logship.h"

static void test_in_order_across_the_wrap(void **state)
{
	struct logbuf b;
	char out[16];
	(void)state;

	assert_int_equal(logbuf_init(&b, 10), 0);
	logbuf_append(&b, "abcdef", 6);
	assert_int_equal(logbuf_take(&b, out, 4), 4);
	assert_memory_equal(out, "abcd", 4);
	logbuf_append(&b, "ghijklm", 7); /* wraps: ef + ghijklm = 9 of 10 */
	assert_int_equal(b.len, 9);
	assert_int_equal(b.dropped, 0);
	assert_int_equal(logbuf_take(&b, out, sizeof out), 9);
	assert_memory_equal(out, "efghijklm", 9);
	assert_int_equal(logbuf_take(&b, out, sizeof out), 0);
	logbuf_append(&b, "a\0b", 3); /* any bytes */
	assert_int_equal(logbuf_take(&b, out, sizeof out), 3);
	assert_memory_equal(out, "a\0b", 3);
	logbuf_release(&b);
}

static void test_oldest_dropped_with_a_note(void **state)
{
	struct logbuf b;
	char out[256];
	size_t n;
	(void)state;

	assert_int_equal(logbuf_init(&b, 8), 0);
	logbuf_append(&b, "0123456", 7);
	logbuf_append(&b, "789ab", 5); /* 12 into 8: 0123 go */
	assert_int_equal(b.dropped, 4);
	n = logbuf_take(&b, out, sizeof out - 1);
	out[n] = '\0';
	assert_non_null(strstr(out, "4 bytes of output dropped"));
	assert_int_equal(b.dropped, 0);
	assert_int_equal(logbuf_take(&b, out, sizeof out), 8);
	assert_memory_equal(out, "456789ab", 8);
	/* one append larger than the whole bound keeps its newest bytes */
	logbuf_append(&b, "xy", 2);
	logbuf_append(&b, "ABCDEFGHIJKL", 12);
	assert_int_equal(b.dropped, 2 + 4);
	n = logbuf_take(&b, out, sizeof out - 1);
	out[n] = '\0';
	assert_non_null(strstr(out, "6 bytes of output dropped"));
	assert_int_equal(logbuf_take(&b, out, 5), 5);
	assert_memory_equal(out, "EFGHI", 5);
	assert_int_equal(logbuf_take(&b, out, 5), 3);
	assert_memory_equal(out, "JKL", 3);
	logbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_in_order_across_the_wrap),
	    cmocka_unit_test(test_oldest_dropped_with_a_note),
	};
	return cmocka_run_group_tests_name("launch/logship", tests, NULL, NULL);
}
