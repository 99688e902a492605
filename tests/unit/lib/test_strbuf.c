/* Tests of lib/strbuf: the empty buffer, adding and growing, formatting,
 * removing, reset, detach and release, and bytes with NULs inside. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"

static void test_empty(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb.alloc, 0);
	strbuf_reset(&sb); /* must not write into the shared "" */
	strbuf_remove(&sb, 0, 5);
	assert_string_equal(strbuf_empty, "");
	strbuf_release(&sb);
	assert_ptr_equal(sb.buf, strbuf_empty);

	char *s = strbuf_detach(&sb, NULL);
	assert_non_null(s);
	assert_string_equal(s, "");
	assert_ptr_not_equal(s, strbuf_empty);
	free(s);
}

static void test_add_and_grow(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	assert_int_equal(strbuf_addstr(&sb, "abc"), 0);
	assert_int_equal(strbuf_addch(&sb, '-'), 0);
	assert_int_equal(strbuf_add(&sb, "xyz", 2), 0);
	assert_string_equal(sb.buf, "abc-xy");
	assert_int_equal(sb.len, 6);
	assert_true(sb.alloc > sb.len);

	/* well past the first allocation: contents survive each reallocation */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(strbuf_addch(&sb, 'a' + i % 26), 0);
	assert_int_equal(sb.len, 1006);
	assert_int_equal(strlen(sb.buf), 1006);
	assert_memory_equal(sb.buf, "abc-xyabcd", 10);
	assert_int_equal(sb.buf[1005], 'a' + 999 % 26);

	size_t before = sb.alloc;
	assert_int_equal(strbuf_grow(&sb, 10000), 0);
	assert_true(sb.alloc >= sb.len + 10001);
	assert_true(sb.alloc > before);
	char *at = sb.buf;
	assert_int_equal(strbuf_add(&sb, "q", 1), 0);
	assert_ptr_equal(sb.buf, at); /* grow reserved the room */

	assert_int_equal(strbuf_add(&sb, NULL, 0), 0);
	strbuf_release(&sb);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
}

static void test_addi(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	(void)state;
	assert_int_equal(strbuf_addi(&sb, 0), 0);
	strbuf_addch(&sb, ' ');
	strbuf_addi(&sb, -42);
	strbuf_addch(&sb, ' ');
	strbuf_addi(&sb, 123456789012LL);
	strbuf_addch(&sb, ' ');
	strbuf_addi(&sb, INT64_MIN);
	strbuf_addch(&sb, ' ');
	strbuf_addi(&sb, INT64_MAX);
	assert_string_equal(sb.buf, "0 -42 123456789012 -9223372036854775808 9223372036854775807");
	strbuf_release(&sb);
}

static void test_addf(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(strbuf_addf(&sb, "%s=%d", "n", 42), 0);
	assert_int_equal(strbuf_addf(&sb, "%s", ""), 0);
	assert_int_equal(strbuf_addf(&sb, ";%05.1f", 3.14159), 0);
	assert_string_equal(sb.buf, "n=42;003.1");
	assert_int_equal(sb.len, 10);

	char big[3000];
	memset(big, 'z', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(strbuf_addf(&sb, "[%s]", big), 0);
	assert_int_equal(sb.len, 10 + 2 + 2999);
	assert_int_equal(sb.buf[sb.len - 1], ']');
	assert_int_equal(sb.buf[11], 'z');
	strbuf_release(&sb);
}

static void test_remove_reset(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "0123456789");
	strbuf_remove(&sb, 0, 3);
	assert_string_equal(sb.buf, "3456789");
	strbuf_remove(&sb, 2, 2);
	assert_string_equal(sb.buf, "34789");
	strbuf_remove(&sb, 3, 100); /* clamped to the end */
	assert_string_equal(sb.buf, "347");
	strbuf_remove(&sb, 3, 1); /* at the end: nothing */
	assert_string_equal(sb.buf, "347");
	assert_int_equal(sb.len, 3);

	size_t alloc = sb.alloc;
	strbuf_reset(&sb);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb.alloc, alloc); /* memory kept */
	strbuf_addstr(&sb, "again");
	assert_string_equal(sb.buf, "again");
	strbuf_release(&sb);
}

static void test_detach(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	size_t len = 0;
	strbuf_add(&sb, "a\0b", 3);
	char *s = strbuf_detach(&sb, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(s, "a\0b", 4);
	/* the buffer is empty and usable again */
	assert_ptr_equal(sb.buf, strbuf_empty);
	assert_int_equal(sb.len, 0);
	strbuf_addstr(&sb, "x");
	assert_string_equal(sb.buf, "x");
	strbuf_release(&sb);
	free(s);
}

static void test_failed_is_sticky(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "kept");
	/* a size that cannot be allocated: the add fails, the text stays */
	assert_int_equal(strbuf_grow(&sb, SIZE_MAX - 2), -1);
	assert_true(sb.failed);
	assert_string_equal(sb.buf, "kept");
	assert_int_equal(strbuf_addstr(&sb, "more"), -1);
	assert_int_equal(strbuf_addf(&sb, "%d", 1), -1);
	assert_int_equal(strbuf_addch(&sb, 'c'), -1);
	assert_string_equal(sb.buf, "kept");
	assert_null(strbuf_detach(&sb, NULL)); /* released, nothing leaks */
	assert_false(sb.failed);

	strbuf_addstr(&sb, "x");
	assert_int_equal(strbuf_grow(&sb, SIZE_MAX), -1);
	strbuf_reset(&sb);
	assert_false(sb.failed);
	assert_int_equal(strbuf_addstr(&sb, "ok"), 0);
	assert_string_equal(sb.buf, "ok");
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),         cmocka_unit_test(test_add_and_grow),
		cmocka_unit_test(test_addf), cmocka_unit_test(test_addi),          cmocka_unit_test(test_remove_reset),
		cmocka_unit_test(test_detach),        cmocka_unit_test(test_failed_is_sticky),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
