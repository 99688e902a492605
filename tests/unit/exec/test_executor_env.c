/* test_executor_env.c: the environment a launcher starts with
 * (executor_launcher_env): what it adds, what it never passes on, and room
 * for every entry (run under AddressSanitizer by make sanitize-check). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "exec/executor.h"

static size_t count(char **env, const char *prefix)
{
	size_t n = 0, pl = strlen(prefix);
	for (size_t i = 0; env[i]; i++)
		n += !strncmp(env[i], prefix, pl);
	return n;
}

/* Every optional entry given, nothing of ours dropped and no WEIR_LOG of
 * ours: the most the array ever holds, each entry once. */
static void test_every_entry(void **state)
{
	(void)state;
	unsetenv("WEIR_LOG");
	char **env = executor_launcher_env("WEIR_SERVER=http://127.0.0.1:1", "WEIR_LAUNCH_SECRET=s",
	                                   "WEIR_MASK_TOKEN=m", "WEIR_TASK_USER=65534:65534");
	assert_non_null(env);
	assert_int_equal(count(env, "WEIR_SERVER=http://127.0.0.1:1"), 1);
	assert_int_equal(count(env, "WEIR_LAUNCH_SECRET=s"), 1);
	assert_int_equal(count(env, "WEIR_MASK_TOKEN=m"), 1);
	assert_int_equal(count(env, "WEIR_TASK_USER=65534:65534"), 1);
	assert_int_equal(count(env, "WEIR_LOG=warn"), 1);
	free(env);
}

/* What the server holds for itself never reaches a launcher: its token,
 * its own address and task user (replaced by the ones given). */
static void test_never_passed_on(void **state)
{
	(void)state;
	setenv("WEIR_TOKEN", "t0ken", 1);
	setenv("WEIR_TASK_USER", "0:0", 1);
	setenv("WEIR_SERVER", "http://elsewhere", 1);
	char **env = executor_launcher_env("WEIR_SERVER=http://127.0.0.1:1", NULL, NULL,
	                                   "WEIR_TASK_USER=65534:65534");
	assert_non_null(env);
	assert_int_equal(count(env, "WEIR_SERVER="), 1);
	assert_int_equal(count(env, "WEIR_SERVER=http://127.0.0.1:1"), 1);
	assert_int_equal(count(env, "WEIR_TASK_USER="), 1);
	assert_int_equal(count(env, "WEIR_TASK_USER=65534:65534"), 1);
	assert_int_equal(count(env, "WEIR_TOKEN="), 0);
	free(env);
	unsetenv("WEIR_TOKEN");
	unsetenv("WEIR_TASK_USER");
	unsetenv("WEIR_SERVER");
}

/* None of the optional entries: the server's address and the log level. */
static void test_no_optional_entry(void **state)
{
	(void)state;
	setenv("WEIR_LOG", "info", 1);
	char **env = executor_launcher_env("WEIR_SERVER=http://127.0.0.1:1", NULL, NULL, NULL);
	assert_non_null(env);
	assert_int_equal(count(env, "WEIR_SERVER="), 1);
	assert_int_equal(count(env, "WEIR_LAUNCH_SECRET="), 0);
	assert_int_equal(count(env, "WEIR_LOG=warn"), 0);
	assert_int_equal(count(env, "WEIR_LOG=info"), 1);
	free(env);
	unsetenv("WEIR_LOG");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_entry),
	    cmocka_unit_test(test_never_passed_on),
	    cmocka_unit_test(test_no_optional_entry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
