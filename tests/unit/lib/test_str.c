/* Tests of lib/str: str_set, str_dup_or_null, str_append, str_to_int64,
 * str_url_has_control. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/str.h"

static void test_set(void **state)
{
	(void)state;
	char *s = NULL;
	assert_int_equal(str_set(&s, "one"), 0);
	assert_string_equal(s, "one");
	char *first = s;
	assert_int_equal(str_set(&s, first), 0); /* from itself: copied before freed */
	assert_string_equal(s, "one");
	assert_int_equal(str_set(&s, "two"), 0);
	assert_string_equal(s, "two");
	assert_int_equal(str_set(&s, NULL), 0);
	assert_null(s);
	assert_int_equal(str_set(&s, ""), 0);
	assert_string_equal(s, "");
	free(s);
}

static void test_dup_or_null(void **state)
{
	(void)state;
	assert_null(str_dup_or_null(NULL));
	char *s = str_dup_or_null("x");
	assert_string_equal(s, "x");
	free(s);
}

static void test_append(void **state)
{
	(void)state;
	char buf[8] = "ab";
	assert_int_equal(str_append(buf, sizeof buf, "cd"), 0);
	assert_string_equal(buf, "abcd");
	assert_int_equal(str_append(buf, sizeof buf, ""), 0);
	assert_int_equal(str_append(buf, sizeof buf, "efg"), 0); /* exactly full */
	assert_string_equal(buf, "abcdefg");
	assert_int_equal(str_append(buf, sizeof buf, "h"), -1);
	assert_string_equal(buf, "abcdefg");

	char cut[6] = "";
	assert_int_equal(str_append(cut, sizeof cut, "123456789"), -1);
	assert_string_equal(cut, "12345");

	char unterminated[3] = {'x', 'y', 'z'};
	assert_int_equal(str_append(unterminated, sizeof unterminated, "a"), -1);
	assert_memory_equal(unterminated, "xyz", 3);
}

static void test_to_int64(void **state)
{
	(void)state;
	int64_t v = 7;
	assert_int_equal(str_to_int64("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(str_to_int64("10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(str_to_int64("-5", -10, 10, &v), 0);
	assert_int_equal(v, -5);
	assert_int_equal(str_to_int64("+5", 0, 10, &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(str_to_int64("9223372036854775807", INT64_MIN, INT64_MAX, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(str_to_int64("-9223372036854775808", INT64_MIN, INT64_MAX, &v), 0);
	assert_true(v == INT64_MIN);

	v = 99;
	const char *bad[] = {"", " 1", "1 ", "1x", "0x10", "+", "-", "--1", "11",
			     "-11", "9223372036854775808", "1.5", NULL};
	for (int i = 0; bad[i]; i++)
		if (str_to_int64(bad[i], -10, 10, &v) == 0)
			fail_msg("\"%s\" was read as %lld", bad[i], (long long)v);
	assert_int_equal(v, 99); /* untouched by failures */
	assert_int_equal(str_to_int64(NULL, 0, 1, &v), -1);
}

static void test_url_has_control(void **state)
{
	(void)state;
	const char *bad[] = {"/api/v1/variables/k4%00zzz",
	                     "/a%0a",
	                     "/a%0A",
	                     "/a%1b",
	                     "/a%1F",
	                     "/a%7f",
	                     "/a%7F",
	                     "/a?x=%09",
	                     "/a\x01",
	                     "%00",
	                     NULL};
	const char *good[] = {"/api/v1/variables/k4",
	                      "/a%20b",
	                      "/a%2Fb",
	                      "/a%",
	                      "/a%0",
	                      "/a%zz",
	                      "/a%g0",
	                      "/a%80",
	                      "/a?x=%7e",
	                      "",
	                      NULL};
	for (int i = 0; bad[i]; i++)
		if (!str_url_has_control(bad[i]))
			fail_msg("\"%s\": no control character seen", bad[i]);
	for (int i = 0; good[i]; i++)
		if (str_url_has_control(good[i]))
			fail_msg("\"%s\": a control character seen", good[i]);
	assert_false(str_url_has_control(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_dup_or_null),
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_to_int64),
		cmocka_unit_test(test_url_has_control),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
