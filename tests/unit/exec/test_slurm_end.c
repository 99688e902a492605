/* test_slurm_end.c: what each final Slurm state means for weir (the table of
 * slurm_end_of), and the log_transport key of weir.yaml. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "exec/slurm.h"
#include "server/config.h"

static void test_end_table(void **state)
{
	static const struct {
		const char *state, *reason, *nodes;
		bool by_weir;
		enum executor_gang_event ev;
		const char *says;
	} rows[] = {
	    {"OUT_OF_MEMORY", "OutOfMemory", "n1", false, EXECUTOR_GANG_OOM,
	     "OOMKilled (Slurm OUT_OF_MEMORY)"},
	    {"TIMEOUT", "TimeLimit", "n1", false, EXECUTOR_GANG_TIME_LIMIT,
	     "timeout: Slurm time limit"},
	    {"DEADLINE", "DeadLine", "", false, EXECUTOR_GANG_TIME_LIMIT,
	     "timeout: Slurm deadline"},
	    {"NODE_FAIL", "NodeDown", "n2", false, EXECUTOR_GANG_ENDED, "node failure: n2"},
	    {"NODE_FAIL", "NodeDown", "", false, EXECUTOR_GANG_ENDED, "node failure: a node"},
	    {"BOOT_FAIL", "None", "n[1-2]", false, EXECUTOR_GANG_ENDED,
	     "node failure: n[1-2] did not boot (Slurm BOOT_FAIL)"},
	    {"PREEMPTED", "", "n1", false, EXECUTOR_GANG_ENDED, "preempted by Slurm"},
	    {"CANCELLED", "", "n1", false, EXECUTOR_GANG_CANCELLED,
	     "cancelled outside weir (Slurm job 42 CANCELLED)"},
	    {"CANCELLED", "", "n1", true, EXECUTOR_GANG_ENDED, "Slurm job 42 CANCELLED"},
	    {"COMPLETED", "", "n1", false, EXECUTOR_GANG_ENDED, "Slurm job 42 COMPLETED"},
	    {"FAILED", "NonZeroExitCode", "n1", false, EXECUTOR_GANG_ENDED,
	     "Slurm job 42 FAILED: NonZeroExitCode"},
	    {"GONE", "no longer known to Slurm", "", false, EXECUTOR_GANG_ENDED,
	     "Slurm job 42 GONE: no longer known to Slurm"},
	};
	char out[200];

	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		enum executor_gang_event ev = slurm_end_of("42", rows[i].state, rows[i].reason,
		                                           rows[i].nodes, rows[i].by_weir, out,
		                                           sizeof out);
		if (ev != rows[i].ev || strcmp(out, rows[i].says))
			fail_msg("%s: got %d \"%s\", expected %d \"%s\"", rows[i].state, (int)ev,
			         out, (int)rows[i].ev, rows[i].says);
	}
}

static void test_log_transport_key(void **state)
{
	struct server_config cfg;
	struct weir_error err = {0};
	const char *http = "log_transport: http\n", *bad = "log_transport: nfs\n";

	(void)state;
	server_config_init(&cfg);
	assert_int_equal(cfg.log_transport, SERVER_LOG_DEFAULT);
	assert_int_equal(server_config_apply_yaml(&cfg, http, strlen(http), "w.yaml", &err), 0);
	assert_int_equal(cfg.log_transport, SERVER_LOG_HTTP);
	assert_int_equal(server_config_apply_yaml(&cfg, bad, strlen(bad), "w.yaml", &err), -1);
	assert_non_null(strstr(err.msg, "w.yaml: log_transport: expected file or http"));
	server_config_release(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_end_table),
	    cmocka_unit_test(test_log_transport_key),
	};
	return cmocka_run_group_tests_name("exec/slurm_end", tests, NULL, NULL);
}
