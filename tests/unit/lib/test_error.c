/* test_error.c: the one out-of-memory error (weir_error_oom). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/error.h"

static void test_oom_fills_the_error_and_returns_failure(void **state)
{
	struct weir_error err = {0};

	(void)state;
	assert_int_equal(weir_error_oom(&err), -1);
	assert_int_equal(err.kind, WEIR_E_INTERNAL);
	assert_string_equal(err.msg, "out of memory");
	weir_error_clear(&err);
	assert_null(weir_error_oom_null(&err));
	assert_string_equal(err.msg, "out of memory");
	/* with a place put in front, as the store does */
	weir_error_prefix(&err, "store %s", "x.db");
	assert_string_equal(err.msg, "store x.db: out of memory");
	/* no error to fill: still the failure */
	assert_int_equal(weir_error_oom(NULL), -1);
	assert_null(weir_error_oom_null(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_oom_fills_the_error_and_returns_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
