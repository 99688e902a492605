/* test_airflow_warm.c: the client's socket names agree with the zygote's
 * (_weir_airflow/zygote.py socket_name(), root_name()), and the variables a
 * launcher gives its program for the Airflow warm interpreter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "launch/airflow_warm.h"

/* the names zygote.py gives the same texts */
static void names_are_the_zygotes(void **state)
{
	char name[32];
	(void)state;

	airflow_warm_socket_name("/dags/a.py\n12\n34\n56\n78\n0\n/usr/bin/python3", name,
	                         sizeof name);
	assert_string_equal(name, "b613bf198557810b.sock");
	airflow_warm_socket_name("0\n/usr/bin/python3", name, sizeof name);
	assert_string_equal(name, "a528c291668828a8.sock"); /* the root's, after "any-" */
	airflow_warm_socket_name("", name, sizeof name);
	assert_string_equal(name, "cbf29ce484222325.sock");
}

static void release(char **out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(out[i]);
}

static void env_by_case(void **state)
{
	char *out[4];
	size_t n = 9;
	(void)state;

	unsetenv("WEIR_AIRFLOW_WARM");
	/* not offered: nothing */
	assert_int_equal(airflow_warm_env(NULL, "/h/airflow-warm", NULL, 0, out, &n), 0);
	assert_int_equal(n, 0);
	assert_null(out[0]);
	/* not offered, one inherited: masked */
	setenv("WEIR_AIRFLOW_WARM", "/elsewhere/weir", 1);
	assert_int_equal(airflow_warm_env(NULL, NULL, NULL, 0, out, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(out[0], "WEIR_AIRFLOW_WARM=");
	release(out, n);
	unsetenv("WEIR_AIRFLOW_WARM");
	/* a memory limit held by polling the process group: cold */
	assert_int_equal(airflow_warm_env("/b/weir-launch", "/h/airflow-warm", NULL, 512, out, &n),
	                 0);
	assert_int_equal(n, 1);
	assert_string_equal(out[0], "WEIR_AIRFLOW_WARM=");
	release(out, n);
	/* no limit, no group: warm */
	assert_int_equal(airflow_warm_env("/b/weir-launch", "/h/airflow-warm", NULL, 0, out, &n),
	                 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0], "WEIR_AIRFLOW_WARM=/b/weir-launch");
	assert_string_equal(out[1], "WEIR_AIRFLOW_WARM_DIR=/h/airflow-warm");
	assert_null(out[2]);
	release(out, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(names_are_the_zygotes),
	    cmocka_unit_test(env_by_case),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
