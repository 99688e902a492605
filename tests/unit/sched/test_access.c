/* test_access.c: the roles (model/role.h) and what each may do
 * (sched/access.h): ordered Viewer < User < Op < Admin, a route asking for
 * none open to all, no role short of any, the names both ways. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "model/role.h"
#include "sched/access.h"

static void test_order(void **state)
{
	(void)state;
	for (int have = ROLE_NONE; have < ROLE_COUNT; have++) {
		assert_true(access_allowed((enum weir_role)have, ROLE_NONE));
		for (int need = ROLE_VIEWER; need < ROLE_COUNT; need++)
			assert_int_equal(access_allowed((enum weir_role)have, (enum weir_role)need),
			                 have >= need);
	}
	assert_true(access_allowed(ROLE_ADMIN, ROLE_OP));
	assert_false(access_allowed(ROLE_USER, ROLE_OP));
	assert_false(access_allowed(ROLE_VIEWER, ROLE_USER));
	assert_false(access_allowed(ROLE_NONE, ROLE_VIEWER));
	/* out of range: may do nothing that asks for a role */
	assert_false(access_allowed((enum weir_role)99, ROLE_VIEWER));
	assert_false(access_allowed(ROLE_ADMIN, (enum weir_role)99));
	assert_true(access_allowed((enum weir_role)99, ROLE_NONE));
}

static void test_names(void **state)
{
	enum weir_role r = ROLE_NONE;

	(void)state;
	assert_string_equal(role_name(ROLE_VIEWER), "Viewer");
	assert_string_equal(role_name(ROLE_USER), "User");
	assert_string_equal(role_name(ROLE_OP), "Op");
	assert_string_equal(role_name(ROLE_ADMIN), "Admin");
	assert_string_equal(role_name(ROLE_NONE), "none");
	assert_string_equal(role_name((enum weir_role)42), "?");
	for (int k = ROLE_VIEWER; k < ROLE_COUNT; k++) {
		assert_int_equal(role_from_name(role_name((enum weir_role)k), &r), 0);
		assert_int_equal(r, k);
	}
	assert_int_equal(role_from_name("op", &r), 0);
	assert_int_equal(r, ROLE_OP);
	assert_int_equal(role_from_name("VIEWER", &r), 0);
	assert_int_equal(r, ROLE_VIEWER);
	r = ROLE_USER;
	assert_int_equal(role_from_name("none", &r), -1);
	assert_int_equal(role_from_name("Superuser", &r), -1);
	assert_int_equal(role_from_name("", &r), -1);
	assert_int_equal(role_from_name(NULL, &r), -1);
	assert_int_equal(r, ROLE_USER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order),
	    cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
