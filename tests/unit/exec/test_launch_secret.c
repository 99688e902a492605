/* test_launch_secret.c: a launcher's secret is HMAC-SHA256 keyed by the
 * server's token over what names its task (or its attempt), and a task's
 * read key over another text naming it: the values
 * below are Python's hmac.new(b"tok", TEXT, hashlib.sha256).hexdigest()
 * (tests/system/launchtest.py computes them so). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "exec/launch_secret.h"

static void test_known_values(void **state)
{
	char s[LAUNCH_SECRET_HEX + 1];

	(void)state;
	launch_secret_task("tok", 7, "quick", 2, 3, s);
	assert_string_equal(s, "8f36b8a29807945c657e1da8a39afe16284882543ba6d816272cd09fd6b82c14");
	launch_secret_attempt("tok", 7, 3, s);
	assert_string_equal(s, "bd9b9ccb2885fc92275f9341ec4f02c99ac9f4d02a288d61888163e6581bcf62");
	/* a task's read key: another text, so never its launch secret */
	launch_secret_read("tok", 7, "quick", 2, 3, s);
	assert_string_equal(s, "c627774f0d0b149e18a72c328ae005c01a157414d26dc1508962ce34604e53d8");
}

static void test_each_task_its_own(void **state)
{
	char a[LAUNCH_SECRET_HEX + 1], b[LAUNCH_SECRET_HEX + 1];

	(void)state;
	launch_secret_task("tok", 7, "worker", 0, 1, a);
	launch_secret_task("tok", 7, "worker", 1, 1, b);
	assert_string_not_equal(a, b);
	launch_secret_task("tok", 7, "worker", 0, 2, b);
	assert_string_not_equal(a, b);
	launch_secret_task("other", 7, "worker", 0, 1, b);
	assert_string_not_equal(a, b);
	assert_int_equal(strlen(a), LAUNCH_SECRET_HEX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_values),
	    cmocka_unit_test(test_each_task_its_own),
	};
	return cmocka_run_group_tests_name("exec/launch_secret", tests, NULL, NULL);
}
