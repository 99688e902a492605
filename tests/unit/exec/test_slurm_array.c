/* test_slurm_array.c: one-task gangs as a Slurm job array: the array's
 * script and its sbatch argv, finding an element in a script again, and
 * squeue's ids of array elements (split off or collapsed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exec/slurm.h"

static bool argv_has(const struct strvec *av, const char *s)
{
	for (size_t i = 0; i < av->n; i++)
		if (!strcmp(av->v[i], s))
			return true;
	return false;
}

static void test_array_script(void **state)
{
	const char *scripts[] = {"/h/jobs/3/logs/slurm-1.sh", "/h/jobs/4/logs/slurm-2.sh",
	                         "/h o/jobs/5/logs/slurm-1.sh"};
	const char *dirs[] = {"/h/jobs/3/logs", "/h/jobs/4/logs", "/h o/it's/logs"};
	char *s = slurm_array_script(scripts, dirs, 3);
	size_t idx = 99;

	(void)state;
	assert_non_null(s);
	assert_true(!strncmp(s, "#!/bin/sh\n", 10));
	assert_non_null(strstr(s, "case \"$SLURM_ARRAY_TASK_ID\" in\n"));
	assert_non_null(strstr(s, "\n0) exec /bin/sh '/h/jobs/3/logs/slurm-1.sh' "
	                          ">>'/h/jobs/3/logs/slurm-'\"$SLURM_ARRAY_JOB_ID\"_0.out 2>&1 ;;\n"));
	assert_non_null(strstr(s, "\n1) exec /bin/sh '/h/jobs/4/logs/slurm-2.sh' "));
	/* paths are quoted: a space or a quote stays one word */
	assert_non_null(strstr(s, "\n2) exec /bin/sh '/h o/jobs/5/logs/slurm-1.sh' "
	                          ">>'/h o/it'\\''s/logs/slurm-'"));
	/* an index with no element fails loudly */
	assert_non_null(strstr(s, "*) echo \"weir: no job for array index"));
	assert_non_null(strstr(s, "exit 1 ;;\nesac\n"));

	/* found again by its script (a crash in the sbatch window) */
	assert_int_equal(slurm_array_index(s, "/h/jobs/4/logs/slurm-2.sh", &idx), 0);
	assert_int_equal(idx, 1);
	assert_int_equal(slurm_array_index(s, "/h o/jobs/5/logs/slurm-1.sh", &idx), 0);
	assert_int_equal(idx, 2);
	assert_int_equal(slurm_array_index(s, "/h/jobs/3/logs/slurm-1.sh", &idx), 0);
	assert_int_equal(idx, 0);
	/* another attempt, a prefix, a job not in it */
	assert_int_equal(slurm_array_index(s, "/h/jobs/4/logs/slurm-1.sh", &idx), -1);
	assert_int_equal(slurm_array_index(s, "/h/jobs/3/logs/slurm-1", &idx), -1);
	assert_int_equal(slurm_array_index(s, "/h/jobs/33/logs/slurm-1.sh", &idx), -1);
	assert_int_equal(slurm_array_index("", "/h/x.sh", &idx), -1);
	free(s);
}

static void test_array_argv(void **state)
{
	const char *opts[] = {"--comment=a b"};
	struct executor_placement defaults = {.partition = "batch", .options = opts, .n_options = 1};
	struct executor_placement place = {.qos = "low"};
	struct executor_task t = {.job_id = 9, .role = "task", .attempt = 1, .vcores = 2,
	                          .memory_mb = 100, .time_limit_s = 60, .place = &place};
	struct strvec av = STRVEC_INIT;
	struct weir_error err = {0};

	(void)state;
	assert_int_equal(
	    slurm_array_argv(&defaults, &t, 500, "/h/slurm-array-%A_%a.out", "/h/a.sh", &av, &err),
	    0);
	assert_string_equal(av.v[0], "sbatch");
	assert_true(argv_has(&av, "--parsable"));
	assert_true(argv_has(&av, "--job-name=weir-array"));
	assert_true(argv_has(&av, "--array=0-499"));
	assert_true(argv_has(&av, "--output=/h/slurm-array-%A_%a.out"));
	assert_true(argv_has(&av, "--ntasks=1"));
	assert_true(argv_has(&av, "--cpus-per-task=2"));
	assert_true(argv_has(&av, "--mem-per-cpu=50"));
	assert_true(argv_has(&av, "--partition=batch"));
	assert_true(argv_has(&av, "--qos=low"));
	assert_true(argv_has(&av, "--time=2")); /* 60 s and a minute */
	assert_true(argv_has(&av, "--comment=a b")); /* one element, no shell */
	assert_false(argv_has(&av, ":"));
	assert_string_equal(av.v[av.n - 1], "/h/a.sh");
	strvec_release(&av);
	assert_int_equal(slurm_array_argv(&defaults, &t, 0, "/o", "/s", &av, &err), -1);
	assert_non_null(strstr(err.msg, "empty"));
}

/* sbatch's words, as Debian's Slurm 22.05 prints them with MaxJobCount reached
 * (the bench's cluster hit it), against refusals that stay refusals. */
static void test_sbatch_busy(void **state)
{
	(void)state;
	assert_true(slurm_sbatch_busy(
	    "sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying "
	    "sbatch: error: Batch job submission failed: Resource temporarily unavailable"));
	assert_true(slurm_sbatch_busy(
	    "sbatch: error: Batch job submission failed: Resource temporarily unavailable"));
	assert_false(slurm_sbatch_busy("sbatch: error: Batch job submission failed: Requested "
	                               "node configuration is not available"));
	assert_false(slurm_sbatch_busy(
	    "sbatch: error: Batch job submission failed: Invalid partition name specified"));
	assert_false(slurm_sbatch_busy(""));
}

static void test_id_covers(void **state)
{
	(void)state;
	/* plain jobs and heterogeneous components */
	assert_true(slurm_id_covers("42", "42"));
	assert_true(slurm_id_covers("42+1", "42"));
	assert_false(slurm_id_covers("421", "42"));
	assert_false(slurm_id_covers("42", "4"));
	/* array elements split off: exact */
	assert_true(slurm_id_covers("42_7", "42_7"));
	assert_false(slurm_id_covers("42_71", "42_7"));
	assert_false(slurm_id_covers("42_7", "42_71"));
	assert_false(slurm_id_covers("42_7", "42"));
	assert_false(slurm_id_covers("43_7", "42_7"));
	/* collapsed pending elements */
	assert_true(slurm_id_covers("42_[0-499]", "42_0"));
	assert_true(slurm_id_covers("42_[0-499]", "42_499"));
	assert_false(slurm_id_covers("42_[0-499]", "42_500"));
	assert_false(slurm_id_covers("42_[1-4]", "42_0"));
	assert_true(slurm_id_covers("42_[1,3,5-9]", "42_3"));
	assert_true(slurm_id_covers("42_[1,3,5-9]", "42_6"));
	assert_false(slurm_id_covers("42_[1,3,5-9]", "42_4"));
	assert_true(slurm_id_covers("42_[0-10:5]", "42_10"));
	assert_false(slurm_id_covers("42_[0-10:5]", "42_6"));
	assert_true(slurm_id_covers("42_[2-9%4]", "42_9"));
	assert_false(slurm_id_covers("42_[2-9%4]", "42_4%"));
	assert_false(slurm_id_covers("421_[0-9]", "42_1"));
	assert_false(slurm_id_covers("42_[x]", "42_1"));
	assert_false(slurm_id_covers("42_[0-9]", "42_"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_array_script),
	    cmocka_unit_test(test_array_argv),
	    cmocka_unit_test(test_id_covers),
	    cmocka_unit_test(test_sbatch_busy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
