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

/* A DAG's access list: unset lets the roles decide; set, an Admin passes,
 * the others get what the entries naming their user or their role (or a
 * role below it) give; edit includes read */
static void test_dag_access(void **state)
{
	struct dag_access_entry v[] = {
	    {(char *)"ann", DAG_ACCESS_READ | DAG_ACCESS_EDIT},
	    {(char *)"viewer", DAG_ACCESS_READ},
	    {(char *)"Op", DAG_ACCESS_READ | DAG_ACCESS_EDIT},
	    {(char *)"eve", 0},
	};
	struct dag_access a = {v, 4, true}, none = {0}, empty = {NULL, 0, true};

	(void)state;
	assert_true(access_dag_allowed(NULL, "bob", ROLE_VIEWER, ACCESS_EDIT));
	assert_true(access_dag_allowed(&none, "bob", ROLE_USER, ACCESS_EDIT));
	assert_false(access_dag_allowed(&empty, "bob", ROLE_OP, ACCESS_READ));
	assert_true(access_dag_allowed(&empty, "bob", ROLE_ADMIN, ACCESS_EDIT));
	/* by name: ann acts (edit includes read) */
	assert_true(access_dag_allowed(&a, "ann", ROLE_USER, ACCESS_EDIT));
	assert_true(access_dag_allowed(&a, "ann", ROLE_VIEWER, ACCESS_READ));
	/* by role, case-insensitive, and the roles above it: Viewer: read */
	assert_true(access_dag_allowed(&a, "bob", ROLE_USER, ACCESS_READ));
	assert_false(access_dag_allowed(&a, "bob", ROLE_USER, ACCESS_EDIT));
	assert_true(access_dag_allowed(&a, "bob", ROLE_OP, ACCESS_EDIT));
	/* an entry of nothing gives nothing, though the role gives read */
	assert_true(access_dag_allowed(&a, "eve", ROLE_VIEWER, ACCESS_READ));
	assert_false(access_dag_allowed(&a, "eve", ROLE_VIEWER, ACCESS_EDIT));
	/* no role at all: only what names the user */
	assert_false(access_dag_allowed(&a, "bob", ROLE_NONE, ACCESS_READ));
	assert_true(access_dag_allowed(&a, "ann", ROLE_NONE, ACCESS_READ));
	/* names are exact: a user's name is not matched in another case */
	assert_false(access_dag_allowed(&a, "ANN", ROLE_NONE, ACCESS_READ));
	assert_false(access_dag_allowed(&a, NULL, ROLE_NONE, ACCESS_READ));
	assert_false(access_dag_allowed(&a, "", ROLE_NONE, ACCESS_READ));
	assert_true(access_names_role("viewer"));
	assert_true(access_names_role("ADMIN"));
	assert_false(access_names_role("ann"));
	assert_false(access_names_role(NULL));
}

static void test_denied_text(void **state)
{
	char buf[300], small[24];

	(void)state;
	access_denied_text(buf, sizeof buf, "payroll", "ann", ROLE_USER, ACCESS_READ);
	assert_string_equal(buf,
	                    "DAG payroll: its access list does not let ann (role User) read it");
	access_denied_text(buf, sizeof buf, "payroll", "", ROLE_VIEWER, ACCESS_EDIT);
	assert_string_equal(buf,
	                    "DAG payroll: its access list does not let this request (role Viewer) "
	                    "act on it");
	access_denied_text(small, sizeof small, "payroll", "ann", ROLE_USER, ACCESS_READ);
	assert_int_equal(strlen(small), sizeof small - 1); /* cut, ended */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order),
	    cmocka_unit_test(test_dag_access),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_denied_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
