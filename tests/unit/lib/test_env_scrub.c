/* Tests of lib/env_scrub: which variables of the server's environment a
 * task's side must not inherit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/env_scrub.h"

static void test_drops(void **state)
{
	(void)state;
	/* the server's credentials, connections and variables */
	assert_true(env_scrub_drops("WEIR_TOKEN=abc"));
	assert_true(env_scrub_drops("WEIR_LAUNCH_SECRET=abc"));
	assert_true(env_scrub_drops("WEIR_MASK_TOKEN=abc"));
	assert_true(env_scrub_drops("WEIR_CONN_WAREHOUSE=postgres://u:p@h/db"));
	assert_true(env_scrub_drops("WEIR_VAR_KEY=v"));
	assert_true(env_scrub_drops("AIRFLOW_CONN_X=redis://h"));
	assert_true(env_scrub_drops("AIRFLOW_VAR_X=1"));
	/* secret-looking names, any case, anywhere in the name */
	assert_true(env_scrub_drops("PGPASSWORD=x"));
	assert_true(env_scrub_drops("hf_token=x"));
	assert_true(env_scrub_drops("AWS_SECRET_ACCESS_KEY=x"));
	assert_true(env_scrub_drops("OPENAI_API_KEY=x"));
	assert_true(env_scrub_drops("GOOGLE_APPLICATION_CREDENTIALS=/k.json"));
	assert_true(env_scrub_drops("AIRFLOW__CORE__FERNET_SECRET=x"));
	assert_true(env_scrub_drops("WEIR_TOKEN"));
	/* what tasks need */
	assert_false(env_scrub_drops("PATH=/usr/bin:/bin"));
	assert_false(env_scrub_drops("HOME=/home/u"));
	assert_false(env_scrub_drops("LANG=C.UTF-8"));
	assert_false(env_scrub_drops("WEIR_HOME=/h"));
	assert_false(env_scrub_drops("WEIR_CGROUP=none"));
	assert_false(env_scrub_drops("WEIR_SERVER=http://127.0.0.1:1"));
	/* a prefix alone names nothing; only the name is read, not the value */
	assert_false(env_scrub_drops("WEIR_CONN_=x"));
	assert_false(env_scrub_drops("NOTE=my password is in the value"));
}

static void test_count(void **state)
{
	char *env[] = {"PATH=/bin", "WEIR_TOKEN=t", "X=1", "DB_PASSWORD=p", NULL};

	(void)state;
	assert_int_equal(env_scrub_count(env), 2);
	assert_int_equal(env_scrub_count(env + 4), 0);
	assert_int_equal(env_scrub_count(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_drops),
	    cmocka_unit_test(test_count),
	};
	return cmocka_run_group_tests_name("lib/env_scrub", tests, NULL, NULL);
}
