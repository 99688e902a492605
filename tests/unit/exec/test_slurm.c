/* test_slurm.c: what of the slurm backend needs no cluster: sh quoting of
 * the batch script's words, the `executor`, `slurm` and `queues` keys of
 * weir.yaml, a job's `slurm:` settings, their merging and sbatch's argv.
 * The backend itself runs against a real Slurm in tests/system/test_slurm_jobs.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "exec/slurm.h"
#include "model/job_spec.h"
#include "server/config.h"

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
	    {"slurm: {sbatch_options: [\"--a\\nb\"]}\n", "no control characters"},
	    {"slurm: {time: \"1 hour\"}\n", "slurm.time: expected a Slurm time"},
	    {"queues: {gpu: {partition: p}}\n", "queues.gpu: expected a mapping with executor"},
	    {"slurm: {shared_dir: shared}\n", "slurm.shared_dir: expected an absolute path"},
	    {"pools: {p: {slots: 1, queues: q}}\n", "pools.p: expected slots and queue only"},
	    {"queues: {gpu: {executor: slurm, node_cache_dir: x}}\n",
	     "queues.gpu.node_cache_dir: expected an absolute path"},
	    {"queues: {cpu: {executor: local, partition: p}}\n", "a local queue takes only"},
	    {"queues: {\"a b\": {executor: local}}\n", "queues.a b: expected a queue name"},
	    {"queues: {gpu: {executor: slurm, qos: \"\"}}\n", "queues.gpu.qos: expected a"},
	    {"queues: {gpu: {executor: slurm, sbatch_options: [x]}}\n",
	     "queues.gpu.sbatch_options[0]: expected an option starting with -"},
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

static void test_config_queues(void **state)
{
	struct server_config cfg;
	struct weir_error err = {0};
	const char *text = "executor: local\n"
	                   "slurm: {account: ml, sbatch_options: [--spread-job]}\n"
	                   "queues:\n"
	                   "  cpu: {executor: local}\n"
	                   "  gpu:\n"
	                   "    executor: slurm\n"
	                   "    partition: a100\n"
	                   "    time: 120\n"
	                   "    sbatch_options: [\"--constraint=nvlink\"]\n"
	                   "pools: {small: 2, big: {slots: 1, queue: gpu}}\n";

	(void)state;
	server_config_init(&cfg);
	assert_int_equal(server_config_apply_yaml(&cfg, text, strlen(text), "w.yaml", &err), 0);
	assert_false(cfg.executor_slurm);
	assert_int_equal(cfg.n_queues, 2);
	assert_string_equal(cfg.queues[0].name, "cpu");
	assert_false(cfg.queues[0].slurm);
	assert_string_equal(cfg.queues[1].name, "gpu");
	assert_true(cfg.queues[1].slurm);
	assert_string_equal(cfg.queues[1].opt.partition, "a100");
	assert_string_equal(cfg.queues[1].opt.time, "120");
	assert_int_equal(cfg.queues[1].opt.n_sbatch_options, 1);
	assert_string_equal(cfg.slurm.account, "ml");
	assert_int_equal(cfg.n_pools, 2);
	assert_null(cfg.pools[0].queue);
	assert_int_equal(cfg.pools[1].slots, 1);
	assert_string_equal(cfg.pools[1].queue, "gpu");
	server_config_release(&cfg);
}

/* A job's `slurm:` is read, written back and checked. */
static void test_job_slurm(void **state)
{
	struct weir_error err = {0};
	const char *good = "queue: gpu\n"
	                   "slurm:\n"
	                   "  partition: debug\n"
	                   "  time: 30\n"
	                   "  sbatch_options: [\"--exclusive\"]\n"
	                   "roles: {worker: {command: \"true\"}}\n";
	static const struct {
		const char *text, *says;
	} bad[] = {
	    {"slurm: {sbatch_options: [exclusive]}\nroles: {w: {command: x}}\n",
	     "slurm.sbatch_options[0]: expected an option starting with -"},
	    {"slurm: {sbatch_options: [\"--a\\n--b\"]}\nroles: {w: {command: x}}\n",
	     "slurm.sbatch_options[0]: expected no control characters"},
	    {"slurm: {partition: \"a\\tb\"}\nroles: {w: {command: x}}\n",
	     "slurm.partition: expected no control characters"},
	    {"slurm: {time: \"$(reboot)\"}\nroles: {w: {command: x}}\n",
	     "slurm.time: expected a Slurm time"},
	    {"slurm: {nodes: 2}\nroles: {w: {command: x}}\n", "slurm.nodes"},
	    {"queue: \"a/b\"\nroles: {w: {command: x}}\n", "queue: expected a queue name"},
	};
	struct job_spec *spec = job_spec_parse_string(good, strlen(good), "j.yaml", NULL, &err);
	json_t *j;

	(void)state;
	assert_non_null(spec);
	assert_string_equal(spec->queue, "gpu");
	assert_string_equal(spec->slurm.partition, "debug");
	assert_string_equal(spec->slurm.time, "30");
	assert_int_equal(spec->slurm.n_sbatch_options, 1);
	j = job_spec_to_json(spec);
	job_spec_destroy(spec);
	spec = job_spec_from_json(j, &err);
	json_decref(j);
	assert_non_null(spec);
	assert_string_equal(spec->queue, "gpu");
	assert_string_equal(spec->slurm.sbatch_options[0], "--exclusive");
	job_spec_destroy(spec);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct weir_error e2 = {0};
		spec = job_spec_parse_string(bad[i].text, strlen(bad[i].text), "j.yaml", NULL, &e2);
		if (spec || !strstr(e2.msg, bad[i].says))
			fail_msg("%s: got \"%s\", expected \"%s\"", bad[i].text, e2.msg,
			         bad[i].says);
	}
}

static void test_placement_merge(void **state)
{
	const char *qopts[] = {"--constraint=a100"};
	const char *jopts[] = {"--exclusive", "--constraint=h100"};
	struct executor_placement queue = {.partition = "gpu", .account = "ml", .time = "60",
	                                   .options = qopts, .n_options = 1};
	struct executor_placement job = {.partition = "debug", .qos = "high", .options = jopts,
	                                 .n_options = 2};
	struct executor_placement out;

	(void)state;
	assert_int_equal(executor_placement_merge(&queue, &job, &out), 0);
	assert_string_equal(out.partition, "debug");
	assert_string_equal(out.account, "ml");
	assert_string_equal(out.qos, "high");
	assert_string_equal(out.time, "60");
	assert_int_equal(out.n_options, 3);
	assert_string_equal(out.options[0], "--constraint=a100");
	assert_string_equal(out.options[2], "--constraint=h100");
	free((void *)out.options);
	assert_int_equal(executor_placement_merge(NULL, NULL, &out), 0);
	assert_null(out.partition);
	assert_int_equal(out.n_options, 0);
	free((void *)out.options);
}

static bool argv_has(const struct strvec *av, const char *s)
{
	for (size_t i = 0; i < av->n; i++)
		if (!strcmp(av->v[i], s))
			return true;
	return false;
}

/* The server's defaults, the queue's and the job's settings end up as
 * single argv elements, later ones after earlier ones; a value with
 * spaces or quotes stays one element. */
static void test_sbatch_argv(void **state)
{
	const char *dopts[] = {"--spread-job"};
	const char *popts[] = {"--comment=it's a $(test)"};
	struct executor_placement defaults = {.partition = "batch", .account = "ml",
	                                      .options = dopts, .n_options = 1};
	struct executor_placement place = {.partition = "gpu", .time = "1-12",
	                                   .options = popts, .n_options = 1};
	struct executor_task t[2] = {
	    {.job_id = 7, .role = "worker", .index = 0, .attempt = 2, .vcores = 2,
	     .memory_mb = 1024, .gpus = 1, .time_limit_s = 600, .place = &place},
	    {.job_id = 7, .role = "worker", .index = 1, .attempt = 2, .vcores = 2,
	     .memory_mb = 1024, .gpus = 1, .time_limit_s = 600, .place = &place},
	};
	struct strvec av = STRVEC_INIT;
	struct weir_error err = {0};
	size_t spread = 0, comment = 0;

	(void)state;
	assert_int_equal(slurm_sbatch_argv(&defaults, t, 2, "/h/slurm-%j.out", "/h/s.sh", &av,
	                                   &err),
	                 0);
	assert_string_equal(av.v[0], "sbatch");
	assert_true(argv_has(&av, "--job-name=weir-7-2"));
	assert_true(argv_has(&av, "--ntasks=2"));
	assert_true(argv_has(&av, "--cpus-per-task=2"));
	assert_true(argv_has(&av, "--mem-per-cpu=512"));
	assert_true(argv_has(&av, "--gpus-per-task=1"));
	assert_true(argv_has(&av, "--partition=gpu"));
	assert_false(argv_has(&av, "--partition=batch"));
	assert_true(argv_has(&av, "--account=ml"));
	assert_true(argv_has(&av, "--time=1-12")); /* the job's time wins over the timeout's */
	assert_true(argv_has(&av, "--comment=it's a $(test)"));
	for (size_t i = 0; i < av.n; i++) {
		if (!strcmp(av.v[i], "--spread-job"))
			spread = i;
		if (!strncmp(av.v[i], "--comment=", 10))
			comment = i;
	}
	assert_true(spread > 0 && comment > spread);
	assert_string_equal(av.v[av.n - 1], "/h/s.sh");
	strvec_release(&av);

	/* no placement: the defaults, and --time from the timeout plus a minute */
	t[0].place = NULL;
	t[1].gpus = 0; /* a second component: a heterogeneous job */
	assert_int_equal(slurm_sbatch_argv(&defaults, t, 2, "/h/o", "/h/s.sh", &av, &err), 0);
	assert_true(argv_has(&av, "--partition=batch"));
	assert_true(argv_has(&av, "--time=11"));
	assert_true(argv_has(&av, ":"));
	strvec_release(&av);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_config_errors),
	    cmocka_unit_test(test_config_queues),
	    cmocka_unit_test(test_job_slurm),
	    cmocka_unit_test(test_placement_merge),
	    cmocka_unit_test(test_sbatch_argv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
