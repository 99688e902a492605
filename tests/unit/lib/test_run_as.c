/* Tests of lib/run_as: a user resolved, written as WEIR_TASK_USER's text and
 * read back; malformed text refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "lib/run_as.h"

static void test_format_and_parse(void **state)
{
	(void)state;
	struct run_as ra = {
	    .set = true, .uid = 65534, .gid = 65534, .n_groups = 2, .groups = {65534, 27}};
	struct run_as back;
	char text[RUN_AS_TEXT_MAX];

	assert_int_equal(run_as_format(&ra, text, sizeof text), 0);
	assert_string_equal(text, "65534:65534:65534,27");
	assert_int_equal(run_as_parse(text, &back), 0);
	assert_true(back.set);
	assert_int_equal(back.uid, 65534);
	assert_int_equal(back.gid, 65534);
	assert_int_equal(back.n_groups, 2);
	assert_int_equal(back.groups[1], 27);
	ra.n_groups = 0;
	assert_int_equal(run_as_format(&ra, text, sizeof text), 0);
	assert_string_equal(text, "65534:65534:");
	assert_int_equal(run_as_parse(text, &back), 0);
	assert_true(back.set);
	assert_int_equal(back.n_groups, 0);
	/* too small a buffer */
	assert_int_equal(run_as_format(&ra, text, 5), -1);
}

static void test_parse_refuses(void **state)
{
	(void)state;
	struct run_as ra;
	const char *bad[] = {"x",      "1",        "1:2",   "1:2:a",  "-1:2:",
	                     "1:2:3,", "1:2:3,,4", " 1:2:", "1:2:3 ", "99999999999:1:"};

	assert_int_equal(run_as_parse(NULL, &ra), 0);
	assert_false(ra.set);
	assert_int_equal(run_as_parse("", &ra), 0);
	assert_false(ra.set);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(run_as_parse(bad[i], &ra), -1);
		assert_false(ra.set);
	}
}

static void test_resolve(void **state)
{
	(void)state;
	struct run_as ra;
	struct weir_error err = {0};

	assert_int_equal(run_as_resolve("root", &ra, &err), 0);
	assert_true(ra.set);
	assert_int_equal(ra.uid, 0);
	assert_int_equal(ra.gid, 0);
	assert_true(ra.n_groups >= 1);
	assert_int_equal(run_as_resolve("0", &ra, &err), 0); /* a uid */
	assert_int_equal(ra.uid, 0);
	assert_int_equal(run_as_resolve("no-such-user-here", &ra, &err), -1);
	assert_false(ra.set);
	assert_non_null(strstr(err.msg, "no user \"no-such-user-here\""));
	/* not set: nothing to become */
	memset(&ra, 0, sizeof ra);
	assert_int_equal(run_as_become(&ra), 0);
	assert_int_equal(run_as_become(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_format_and_parse),
	    cmocka_unit_test(test_parse_refuses),
	    cmocka_unit_test(test_resolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
