/* test_report.c: the `exited` report as the launcher writes it and the
 * server reads it back, and the cause of a report from a launcher of the
 * previous version (no "cause" field) derived from what it carries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "launch/report.h"

static void test_round_trip(void **state)
{
	(void)state;
	struct exit_report r = {.cause = END_CAUSE_EXEC_TIMEOUT,
	                        .exit_code = 124,
	                        .signal = 0,
	                        .oom_killed = false,
	                        .peak_memory_bytes = 1 << 20,
	                        .cpu_time_ms = 42,
	                        .reason = "execution timeout after 5s"},
	                   back;
	json_t *body = json_object();

	assert_int_equal(exit_report_to_json(&r, body), 0);
	assert_string_equal(json_string_value(json_object_get(body, "cause")), "execution_timeout");
	assert_true(json_is_null(json_object_get(body, "signal")));
	exit_report_from_json(body, &back);
	assert_int_equal(back.cause, END_CAUSE_EXEC_TIMEOUT);
	assert_int_equal(back.exit_code, 124);
	assert_int_equal(back.signal, 0);
	assert_false(back.oom_killed);
	assert_int_equal(back.peak_memory_bytes, 1 << 20);
	assert_int_equal(back.cpu_time_ms, 42);
	assert_string_equal(back.reason, "execution timeout after 5s");
	json_decref(body);

	/* the cause is what the launcher says, whatever the exit code */
	body = json_pack("{s:i, s:i, s:b, s:s, s:s}", "exit_code", 0, "signal", 9, "oom_killed", 0,
	                 "reason", "", "cause", "oom");
	exit_report_from_json(body, &back);
	assert_int_equal(back.cause, END_CAUSE_OOM);
	assert_int_equal(back.signal, 9);
	json_decref(body);
}

/* A report of the previous launcher: its cause from exit, signal, OOM and
 * the words it wrote for its own ends. */
static void test_previous_launcher(void **state)
{
	(void)state;
	struct {
		const char *json;
		enum end_cause want;
	} cases[] = {
	    {"{\"exit_code\":0,\"signal\":null,\"oom_killed\":false,\"reason\":\"\"}", END_CAUSE_EXITED},
	    {"{\"exit_code\":3,\"signal\":null,\"oom_killed\":false,\"reason\":\"exited 3\"}",
	     END_CAUSE_EXITED},
	    {"{\"exit_code\":137,\"signal\":9,\"oom_killed\":false,\"reason\":\"killed by SIGKILL\"}",
	     END_CAUSE_SIGNALLED},
	    {"{\"exit_code\":137,\"signal\":9,\"oom_killed\":true,\"reason\":\"OOMKilled (peak 9 MiB"
	     " of 8 MiB)\"}",
	     END_CAUSE_OOM},
	    {"{\"exit_code\":0,\"oom_killed\":true}", END_CAUSE_OOM},
	    {"{\"exit_code\":124,\"signal\":null,\"oom_killed\":false,\"reason\":\"execution timeout"
	     " after 2s\"}",
	     END_CAUSE_EXEC_TIMEOUT},
	    {"{\"exit_code\":124,\"reason\":\"gang registration timeout after 30s\"}",
	     END_CAUSE_GANG_TIMEOUT},
	    {"{\"exit_code\":125,\"reason\":\"launch failed: no such directory\"}",
	     END_CAUSE_LAUNCH_FAILED},
	    {"{\"exit_code\":143,\"signal\":15,\"reason\":\"killed (launcher got SIGTERM)\"}",
	     END_CAUSE_STOPPED},
	    /* a cause this weir does not know, or none: derived the same way */
	    {"{\"exit_code\":1,\"cause\":\"meteor\"}", END_CAUSE_EXITED},
	    {"{\"exit_code\":1,\"signal\":2,\"cause\":\"none\"}", END_CAUSE_SIGNALLED},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *body = json_loads(cases[i].json, 0, NULL);
		struct exit_report r;
		assert_non_null(body);
		exit_report_from_json(body, &r);
		if (r.cause != cases[i].want)
			fail_msg("%s: %s", cases[i].json, end_cause_name(r.cause));
		json_decref(body);
	}

	/* absent numbers read as absent */
	json_t *body = json_object();
	struct exit_report r;
	exit_report_from_json(body, &r);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.peak_memory_bytes, -1);
	assert_int_equal(r.cpu_time_ms, -1);
	assert_null(r.reason);
	json_decref(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_previous_launcher),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
