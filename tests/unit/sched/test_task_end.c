/* test_task_end.c: how a task ends from a launcher's report, a launcher
 * gone (with and without a backend's verdict, while stopping or not), a
 * verdict on a task that did report, and a launcher that could not start;
 * and that job_progress reads those ends as the rules say (a lost task
 * restarts, a time limit does not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <string.h>

#include "sched/job_progress.h"
#include "sched/task_end.h"

static struct task_end report(int exit_code, int sig, bool oom, const char *why, bool stopping)
{
	/* the cause a launcher gives such an end */
	enum end_cause cause = oom ? END_CAUSE_OOM : sig ? END_CAUSE_SIGNALLED : END_CAUSE_EXITED;
	struct task_report r = {.cause = cause,
	                        .exit_code = exit_code,
	                        .signal = sig,
	                        .oom_killed = oom,
	                        .reason = why};
	struct task_end e;
	memset(&e, 0x5a, sizeof e); /* every field is written */
	task_end_reported(&r, stopping, &e);
	return e;
}

static void test_reported(void **state)
{
	(void)state;
	struct task_end e = report(0, 0, false, NULL, false);
	assert_int_equal(e.state, TASK_SUCCEEDED);
	assert_int_equal(e.exit_code, 0);
	assert_string_equal(e.reason, "");

	/* a success stays one while stopping, with the launcher's words */
	e = report(0, 0, false, "done early", true);
	assert_int_equal(e.state, TASK_SUCCEEDED);
	assert_string_equal(e.reason, "done early");

	e = report(1, 0, false, NULL, false);
	assert_int_equal(e.state, TASK_FAILED);
	assert_int_equal(e.exit_code, 1);
	assert_string_equal(e.reason, "exited 1");

	e = report(-1, SIGKILL, false, "", false);
	assert_int_equal(e.state, TASK_FAILED);
	assert_int_equal(e.signal, SIGKILL);
	assert_string_equal(e.reason, "killed by signal 9");

	e = report(124, 0, false, "execution timeout after 5s", false);
	assert_int_equal(e.state, TASK_FAILED);
	assert_string_equal(e.reason, "execution timeout after 5s");

	/* weir stops it: any other end is killed */
	e = report(143, SIGTERM, false, NULL, true);
	assert_int_equal(e.state, TASK_KILLED);
	assert_int_equal(e.exit_code, 143);
	assert_string_equal(e.reason, "stopped");
	e = report(1, 0, false, "gang stopped", true);
	assert_int_equal(e.state, TASK_KILLED);
	assert_string_equal(e.reason, "gang stopped");

	/* an OOM kill stays failed even while stopping; 137 when no code */
	e = report(-1, SIGKILL, true, "whatever", true);
	assert_int_equal(e.state, TASK_FAILED);
	assert_true(e.oom_killed);
	assert_int_equal(e.exit_code, 137);
	assert_string_equal(e.reason, "OOMKilled");
	e = report(3, 0, true, NULL, false);
	assert_int_equal(e.exit_code, 3);
}

static struct task_end gone(bool stopping, enum task_verdict v)
{
	struct task_end was = {.state = TASK_RUNNING, .exit_code = -1}, e;
	memset(&e, 0x5a, sizeof e);
	task_end_gone(&was, stopping, v, "launcher exited 1 without reporting", SIGKILL, &e);
	return e;
}

static void test_gone(void **state)
{
	(void)state;
	struct task_end e = gone(false, TASK_VERDICT_NONE);
	assert_int_equal(e.state, TASK_LOST);
	assert_int_equal(e.exit_code, -1);
	assert_int_equal(e.signal, 0);
	assert_false(e.oom_killed);
	assert_string_equal(e.reason, "launcher exited 1 without reporting");

	e = gone(false, TASK_VERDICT_OOM);
	assert_int_equal(e.state, TASK_FAILED);
	assert_true(e.oom_killed);
	assert_int_equal(e.exit_code, 137);
	assert_int_equal(e.signal, SIGKILL);

	e = gone(false, TASK_VERDICT_TIME_LIMIT);
	assert_int_equal(e.state, TASK_FAILED);
	assert_int_equal(e.exit_code, 124);
	assert_int_equal(e.signal, 0);
	assert_false(e.oom_killed);

	e = gone(false, TASK_VERDICT_CANCELLED);
	assert_int_equal(e.state, TASK_KILLED);
	assert_int_equal(e.exit_code, 137);
	assert_int_equal(e.signal, SIGKILL);

	/* weir was stopping it: killed, whatever the verdict */
	for (int v = TASK_VERDICT_NONE; v <= TASK_VERDICT_CANCELLED; v++) {
		e = gone(true, (enum task_verdict)v);
		assert_int_equal(e.state, TASK_KILLED);
		assert_int_equal(e.exit_code, -1);
		assert_string_equal(e.reason, "stopped");
	}

	/* what the row had is kept where the rules set nothing */
	struct task_end was = {.state = TASK_RUNNING, .exit_code = 5, .signal = 2}, out;
	task_end_gone(&was, false, TASK_VERDICT_NONE, NULL, SIGKILL, &out);
	assert_int_equal(out.exit_code, 5);
	assert_int_equal(out.signal, 2);
	assert_string_equal(out.reason, "");
}

static void test_verdict_on_reported(void **state)
{
	(void)state;
	struct task_retold t;

	/* a reported failure takes the verdict; so does the failed job */
	task_end_verdict(TASK_FAILED, 1, JOB_FAILED, 1, TASK_VERDICT_OOM, &t);
	assert_true(t.task);
	assert_true(t.oom_killed);
	assert_true(t.job);

	/* the job not ended yet, or ended in another attempt, or succeeded */
	task_end_verdict(TASK_KILLED, 1, JOB_RUNNING, 1, TASK_VERDICT_CANCELLED, &t);
	assert_true(t.task);
	assert_false(t.oom_killed);
	assert_false(t.job);
	task_end_verdict(TASK_FAILED, 1, JOB_FAILED, 2, TASK_VERDICT_TIME_LIMIT, &t);
	assert_true(t.task);
	assert_false(t.job);
	task_end_verdict(TASK_FAILED, 1, JOB_SUCCEEDED, 1, TASK_VERDICT_OOM, &t);
	assert_true(t.task);
	assert_false(t.job);

	/* a success, an unended task, no verdict: nothing changes */
	task_end_verdict(TASK_SUCCEEDED, 1, JOB_FAILED, 1, TASK_VERDICT_OOM, &t);
	assert_false(t.task);
	assert_false(t.job);
	task_end_verdict(TASK_RUNNING, 1, JOB_FAILED, 1, TASK_VERDICT_OOM, &t);
	assert_false(t.task);
	task_end_verdict(TASK_FAILED, 1, JOB_FAILED, 1, TASK_VERDICT_NONE, &t);
	assert_false(t.task);
}

static void test_not_started(void **state)
{
	(void)state;
	struct task_end was = {.state = TASK_PENDING, .exit_code = -1}, e;
	task_end_not_started(&was, "no executor", &e);
	assert_int_equal(e.state, TASK_LOST);
	assert_int_equal(e.exit_code, -1);
	assert_string_equal(e.reason, "cannot start: no executor");
}

/* The ends as job_progress reads them: a lost worker restarts the gang
 * while restarts are left; the cluster's time limit (124) does not. */
static void test_ends_decide(void **state)
{
	(void)state;
	struct role_spec role = {.name = (char *)"worker", .instances = 1, .memory_mb = 1,
	                         .vcores = 1};
	struct job_spec spec = {.name = (char *)"job", .roles = &role, .n_roles = 1,
	                        .retry_exit_min = 128, .retry_exit_max = 255, .max_restarts = 1};
	struct progress_event ev = {.kind = PROGRESS_TASK_ENDED, .role = "worker", .index = 0};
	struct progress_decision d;
	enum task_verdict verdicts[] = {TASK_VERDICT_NONE, TASK_VERDICT_OOM,
	                                TASK_VERDICT_TIME_LIMIT, TASK_VERDICT_CANCELLED};
	enum progress_outcome want[] = {PROGRESS_RESTART_GANG, PROGRESS_RESTART_GANG,
	                                PROGRESS_JOB_FAILED, PROGRESS_RESTART_GANG};

	for (size_t i = 0; i < 4; i++) {
		struct task_end e = gone(false, verdicts[i]);
		struct task_status t = {.role = "worker", .index = 0, .state = e.state,
		                        .exit_code = e.exit_code, .signal = e.signal,
		                        .cause = e.cause, .reason = e.reason};
		assert_int_equal(job_progress_decide(&spec, 1, &t, 1, &ev, &d, NULL), 0);
		if (d.outcome != want[i])
			fail_msg("verdict %zu: %s", i, progress_outcome_name(d.outcome));
		progress_decision_release(&d);
	}
}

/* The report's cause decides, not its exit code: an OOM is failed OOMKilled
 * even with exit 0, an execution timeout is failed even when the program
 * then exited 0; the verdicts and a failed start give their causes. */
static void test_causes(void **state)
{
	(void)state;
	struct task_report r = {.cause = END_CAUSE_OOM, .exit_code = 0};
	struct task_end e;

	task_end_reported(&r, false, &e);
	assert_int_equal(e.state, TASK_FAILED);
	assert_int_equal(e.cause, END_CAUSE_OOM);
	assert_true(e.oom_killed);
	assert_string_equal(e.reason, "OOMKilled");
	assert_int_equal(e.exit_code, 0); /* as reported */

	r = (struct task_report){.cause = END_CAUSE_EXEC_TIMEOUT, .exit_code = 0,
	                         .reason = "execution timeout after 5s"};
	task_end_reported(&r, false, &e);
	assert_int_equal(e.state, TASK_FAILED);
	assert_int_equal(e.cause, END_CAUSE_EXEC_TIMEOUT);
	/* while weir stops it, it is stopped */
	task_end_reported(&r, true, &e);
	assert_int_equal(e.state, TASK_KILLED);
	assert_int_equal(e.cause, END_CAUSE_STOPPED);
	/* a program that exits 0 after weir's signal still succeeded */
	r = (struct task_report){.cause = END_CAUSE_STOPPED, .exit_code = 0};
	task_end_reported(&r, true, &e);
	assert_int_equal(e.state, TASK_SUCCEEDED);
	r = (struct task_report){.cause = END_CAUSE_LAUNCH_FAILED, .exit_code = 125,
	                         .reason = "launch failed: x"};
	task_end_reported(&r, false, &e);
	assert_int_equal(e.state, TASK_FAILED);
	assert_int_equal(e.cause, END_CAUSE_LAUNCH_FAILED);

	struct task_end was = {.state = TASK_RUNNING, .exit_code = -1};
	const enum task_verdict v[] = {TASK_VERDICT_NONE, TASK_VERDICT_OOM, TASK_VERDICT_TIME_LIMIT,
	                               TASK_VERDICT_CANCELLED};
	const enum end_cause want[] = {END_CAUSE_LAUNCHER_LOST, END_CAUSE_OOM,
	                               END_CAUSE_CLUSTER_TIME_LIMIT, END_CAUSE_CLUSTER_CANCELLED};
	for (size_t i = 0; i < 4; i++) {
		task_end_gone(&was, false, v[i], "gone", SIGKILL, &e);
		assert_int_equal(e.cause, want[i]);
		task_end_gone(&was, true, v[i], "gone", SIGKILL, &e);
		assert_int_equal(e.cause, END_CAUSE_STOPPED);
	}
	/* the signal number is the caller's */
	task_end_gone(&was, false, TASK_VERDICT_OOM, "gone", 31, &e);
	assert_int_equal(e.signal, 31);
	assert_int_equal(e.exit_code, 128 + 31);

	struct task_retold told;
	task_end_verdict(TASK_FAILED, 1, JOB_FAILED, 1, TASK_VERDICT_TIME_LIMIT, &told);
	assert_int_equal(told.cause, END_CAUSE_CLUSTER_TIME_LIMIT);
	task_end_not_started(&was, "no executor", &e);
	assert_int_equal(e.cause, END_CAUSE_LAUNCH_FAILED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reported),
	    cmocka_unit_test(test_gone),
	    cmocka_unit_test(test_verdict_on_reported),
	    cmocka_unit_test(test_not_started),
	    cmocka_unit_test(test_ends_decide),
	    cmocka_unit_test(test_causes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
