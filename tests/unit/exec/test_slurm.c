/* test_slurm.c: what of the slurm backend needs no cluster: sh quoting of
 * the batch script's words, and the `executor` and `slurm` keys of weir.yaml.
 * The backend itself runs against a real Slurm in tests/system/test_slurm_jobs.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "exec/slurm.h"
#include "server/config.h"

static void test_sh_quote(void **state)
{
	char out[64] = "x ";
	char tiny[6] = "";

	(void)state;
	assert_int_equal(slurm_sh_quote(out, sizeof out, "worker"), 0);
	assert_string_equal(out, "x 'worker'");
	out[0] = '\0';
	assert_int_equal(slurm_sh_quote(out, sizeof out, "it's $(x)"), 0);
	assert_string_equal(out, "'it'\\''s $(x)'");
	out[0] = '\0';
	assert_int_equal(slurm_sh_quote(out, sizeof out, ""), 0);
	assert_string_equal(out, "''");
	assert_int_equal(slurm_sh_quote(tiny, sizeof tiny, "abcdef"), -1);
}

static void test_config(void **state)
{
	struct server_config cfg;
	struct weir_error err = {0};
	const char *text = "executor: slurm\n"
	                   "slurm:\n"
	                   "  partition: gpu\n"
	                   "  account: ml\n"
	                   "  qos: normal\n"
	                   "  sbatch_options: [\"--spread-job\", \"--constraint=a100\"]\n"
	                   "  shared_dir: /shared/weir\n";

	(void)state;
	server_config_init(&cfg);
	assert_false(cfg.executor_slurm);
	assert_int_equal(server_config_apply_yaml(&cfg, text, strlen(text), "w.yaml", &err), 0);
	assert_true(cfg.executor_slurm);
	assert_string_equal(cfg.slurm.partition, "gpu");
	assert_string_equal(cfg.slurm.account, "ml");
	assert_string_equal(cfg.slurm.qos, "normal");
	assert_string_equal(cfg.slurm.shared_dir, "/shared/weir");
	assert_int_equal(cfg.slurm.n_sbatch_options, 2);
	assert_string_equal(cfg.slurm.sbatch_options[1], "--constraint=a100");
	server_config_release(&cfg);
}

static void test_config_errors(void **state)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
	    {"executor: yarn\n", "executor: expected local or slurm"},
	    {"slurm: [a]\n", "slurm: expected a mapping"},
	    {"slurm: {partition: \"\"}\n", "slurm.partition: expected a non-empty string"},
	    {"slurm: {sbatch_options: [\"spread\"]}\n", "slurm.sbatch_options[0]"},
	    {"slurm: {nodes: 3}\n", "slurm.nodes: unknown key"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct server_config cfg;
		struct weir_error err = {0};
		server_config_init(&cfg);
		assert_int_equal(server_config_apply_yaml(&cfg, bad[i].text, strlen(bad[i].text),
		                                          "w.yaml", &err),
		                 -1);
		if (!strstr(err.msg, bad[i].says))
			fail_msg("%s: got \"%s\", expected \"%s\"", bad[i].text, err.msg,
			         bad[i].says);
		server_config_release(&cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sh_quote),
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_config_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
