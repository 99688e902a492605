/* test_dynlib.c: libraries loaded at their first use (lib/dynlib.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "lib/dynlib.h"

#define M_FUNCS(X, t) X(t, cbrt) X(t, hypot)
DYNLIB_TABLE(m, M_FUNCS, "libm.so.6", "the test");

static void test_loads_once_and_calls(void **state)
{
	struct weir_error err = {0};
	(void)state;

	assert_false(dynlib_loaded(&m_lib));
	assert_int_equal(dynlib_load(&m_lib, m_syms, DYNLIB_COUNT(m_syms), &err), 0);
	assert_true(dynlib_loaded(&m_lib));
	assert_true(m.cbrt(27.0) > 2.999 && m.cbrt(27.0) < 3.001);
	assert_true(m.hypot(3.0, 4.0) > 4.999 && m.hypot(3.0, 4.0) < 5.001);
	/* a second load keeps the first */
	assert_int_equal(dynlib_load(&m_lib, m_syms, DYNLIB_COUNT(m_syms), &err), 0);
}

static void test_missing_library_is_named(void **state)
{
	struct dynlib lib = DYNLIB_INIT("libweir-no-such.so.0", "Frobnicated connections");
	struct weir_error err = {0};
	(void)state;

	assert_int_equal(dynlib_load(&lib, m_syms, DYNLIB_COUNT(m_syms), &err), -1);
	assert_int_equal(err.kind, WEIR_E_INTERNAL);
	assert_non_null(strstr(err.msg, "Frobnicated connections need libweir-no-such.so.0: "));
	assert_false(dynlib_loaded(&lib));
}

static void test_missing_function_is_named(void **state)
{
	struct dynlib lib = DYNLIB_INIT("libm.so.6", "the test");
	struct weir_error err = {0};
	double (*f)(double) = NULL;
	const struct dynlib_sym syms[] = {{"cbrt", &f}, {"weir_no_such_function", &f}};
	(void)state;

	assert_int_equal(dynlib_load(&lib, syms, DYNLIB_COUNT(syms), &err), -1);
	assert_non_null(strstr(err.msg, "the test need libm.so.6 with weir_no_such_function"));
	assert_false(dynlib_loaded(&lib));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loads_once_and_calls),
	    cmocka_unit_test(test_missing_library_is_named),
	    cmocka_unit_test(test_missing_function_is_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
