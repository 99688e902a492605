/* test_job_progress.c: job progression rules, timers and state moves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/job_progress.h"
#include "sched/states.h"
#include "sched/timers.h"

struct spec_buf {
	struct role_spec roles[4];
	struct job_spec spec;
};

static struct job_spec *mk(struct spec_buf *b, size_t n, const struct role_spec *roles)
{
	memset(b, 0, sizeof(*b));
	for (size_t i = 0; i < n; i++)
		b->roles[i] = roles[i];
	b->spec.name = (char *)"job";
	b->spec.roles = b->roles;
	b->spec.n_roles = n;
	b->spec.retry_exit_min = 128;
	b->spec.retry_exit_max = 255;
	b->spec.registration_timeout_s = 300;
	return &b->spec;
}

#define ROLE(n, i)                                                                                 \
	{                                                                                          \
		.name = (char *)(n), .instances = (i), .memory_mb = 1024, .vcores = 1              \
	}

#define RUN(r, i)                                                                                  \
	{                                                                                          \
		.role = (r), .index = (i), .state = TASK_RUNNING, .exit_code = -1                  \
	}

/* chief x1, worker x2, ps x1 (untracked) */
static struct job_spec *tf_job(struct spec_buf *b)
{
	struct role_spec r[] = {ROLE("chief", 1), ROLE("worker", 2), ROLE("ps", 1)};
	r[2].untracked = true;
	return mk(b, 3, r);
}

static void end_task(struct task_status *t, int exit_code, int sig, bool oom)
{
	t->exit_code = exit_code;
	t->signal = sig;
	t->cause = oom ? END_CAUSE_OOM : sig ? END_CAUSE_SIGNALLED : END_CAUSE_EXITED;
	t->state = (exit_code == 0 && sig == 0 && !oom) ? TASK_SUCCEEDED : TASK_FAILED;
}

static void decide(const struct job_spec *spec, int attempt, struct task_status *t, size_t n,
                   const char *role, int index, struct progress_decision *d)
{
	struct progress_event ev = {.kind = PROGRESS_TASK_ENDED, .role = role, .index = index};
	struct weir_error err = {0};
	if (job_progress_decide(spec, attempt, t, n, &ev, d, &err) != 0)
		fail_msg("decide: %s", err.msg);
}

static void expect_stopped(const struct progress_decision *d, const bool *want, size_t n)
{
	size_t count = 0;
	assert_int_equal(d->n_tasks, n);
	for (size_t i = 0; i < n; i++) {
		if (d->stop[i] != want[i])
			fail_msg("task %zu: stop=%d, expected %d", i, d->stop[i], want[i]);
		count += want[i];
	}
	assert_int_equal(d->n_stop, count);
}

static void test_chief_fails_at_once(void **state)
{
	(void)state;
	struct spec_buf b;
	struct job_spec *spec = tf_job(&b);
	struct task_status t[] = {RUN("chief", 0), RUN("worker", 0), RUN("worker", 1),
	                          RUN("ps", 0)};
	struct progress_decision d;
	end_task(&t[0], 1, 0, false);
	decide(spec, 1, t, 4, "chief", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_int_equal(d.exit_code, 1);
	assert_string_equal(d.reason, "chief:0 exited 1");
	expect_stopped(&d, (bool[]){false, true, true, true}, 4);
	progress_decision_release(&d);
}

static void test_worker_failure_ignored_under_chief(void **state)
{
	(void)state;
	struct spec_buf b;
	struct job_spec *spec = tf_job(&b);
	struct task_status t[] = {RUN("chief", 0), RUN("worker", 0), RUN("worker", 1),
	                          RUN("ps", 0)};
	struct progress_decision d;
	end_task(&t[2], 1, 0, false);
	decide(spec, 1, t, 4, "worker", 1, &d);
	assert_int_equal(d.outcome, PROGRESS_NONE);
	assert_int_equal(d.n_stop, 0);
	progress_decision_release(&d);

	/* the chief then succeeds, the other worker too: the job succeeds and
	 * the untracked ps is stopped */
	end_task(&t[0], 0, 0, false);
	decide(spec, 1, t, 4, "chief", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_NONE); /* worker 0 still runs */
	progress_decision_release(&d);
	end_task(&t[1], 0, 0, false);
	decide(spec, 1, t, 4, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_SUCCEEDED);
	assert_int_equal(d.exit_code, 0);
	expect_stopped(&d, (bool[]){false, false, false, true}, 4);
	progress_decision_release(&d);

	/* with fail_on_worker_failure the same worker failure fails the job */
	spec->fail_on_worker_failure = true;
	struct task_status t2[] = {RUN("chief", 0), RUN("worker", 0), RUN("worker", 1),
	                           RUN("ps", 0)};
	end_task(&t2[2], 1, 0, false);
	decide(spec, 1, t2, 4, "worker", 1, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_string_equal(d.reason, "worker:1 exited 1");
	expect_stopped(&d, (bool[]){true, true, false, true}, 4);
	progress_decision_release(&d);
}

static void test_worker0_decides_without_chief(void **state)
{
	(void)state;
	struct spec_buf b;
	struct role_spec r[] = {ROLE("worker", 2)};
	struct job_spec *spec = mk(&b, 1, r);
	struct task_status t[] = {RUN("worker", 0), RUN("worker", 1)};
	struct progress_decision d;
	end_task(&t[0], 0, 9, false);
	decide(spec, 1, t, 2, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED); /* no restarts left */
	assert_int_equal(d.exit_code, 137);
	assert_string_equal(d.reason, "worker:0 killed by signal 9");
	expect_stopped(&d, (bool[]){false, true}, 2);
	progress_decision_release(&d);
}

static void test_restart_on_137(void **state)
{
	(void)state;
	struct spec_buf b;
	struct role_spec r[] = {ROLE("worker", 2)};
	struct job_spec *spec = mk(&b, 1, r);
	spec->max_restarts = 2;
	struct task_status t[] = {RUN("worker", 0), RUN("worker", 1)};
	struct progress_decision d;
	end_task(&t[0], 137, 0, false);
	decide(spec, 1, t, 2, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_RESTART_GANG);
	assert_string_equal(d.reason, "worker:0 exited 137");
	expect_stopped(&d, (bool[]){false, true}, 2);
	progress_decision_release(&d);

	/* attempt 2 restarts too; attempt 3 (restarts used up) fails */
	decide(spec, 2, t, 2, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_RESTART_GANG);
	progress_decision_release(&d);
	decide(spec, 3, t, 2, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_int_equal(d.exit_code, 137);
	progress_decision_release(&d);

	/* an OOM kill counts as 137 */
	struct task_status t2[] = {RUN("worker", 0), RUN("worker", 1)};
	end_task(&t2[0], -1, 9, true);
	decide(spec, 1, t2, 2, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_RESTART_GANG);
	assert_string_equal(d.reason, "worker:0 OOMKilled");
	progress_decision_release(&d);
}

static void test_exit_1_fails(void **state)
{
	(void)state;
	struct spec_buf b;
	struct role_spec r[] = {ROLE("chief", 1), ROLE("worker", 1)};
	struct job_spec *spec = mk(&b, 2, r);
	spec->max_restarts = 3;
	struct task_status t[] = {RUN("chief", 0), RUN("worker", 0)};
	struct progress_decision d;
	end_task(&t[0], 1, 0, false);
	decide(spec, 1, t, 2, "chief", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_int_equal(d.exit_code, 1);
	progress_decision_release(&d);

	/* a wider retry range makes it retryable */
	spec->retry_exit_min = 1;
	decide(spec, 1, t, 2, "chief", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_RESTART_GANG);
	progress_decision_release(&d);
}

/* The launcher's own timeout is exit 124 with its reason: not retried, and
 * the reason says why rather than a bare exit code. */
static void test_launcher_timeout_reason_not_retried(void **state)
{
	(void)state;
	struct spec_buf b;
	struct role_spec r[] = {ROLE("worker", 2)};
	struct job_spec *spec = mk(&b, 1, r);
	spec->max_restarts = 2;
	struct task_status t[] = {RUN("worker", 0), RUN("worker", 1)};
	struct progress_decision d;
	end_task(&t[0], 124, 0, false);
	t[0].reason = "execution timeout after 2s";
	decide(spec, 1, t, 2, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_int_equal(d.exit_code, 124);
	assert_string_equal(d.reason, "worker:0 execution timeout after 2s");
	expect_stopped(&d, (bool[]){false, true}, 2);
	progress_decision_release(&d);
}

static void test_all_workers_policy(void **state)
{
	(void)state;
	struct spec_buf b;
	struct job_spec *spec = tf_job(&b);
	spec->success = SUCCESS_ALL_WORKERS;
	struct task_status t[] = {RUN("chief", 0), RUN("worker", 0), RUN("worker", 1),
	                          RUN("ps", 0)};
	struct progress_decision d;
	end_task(&t[0], 0, 0, false);
	decide(spec, 1, t, 4, "chief", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_NONE);
	progress_decision_release(&d);
	end_task(&t[2], 2, 0, false);
	decide(spec, 1, t, 4, "worker", 1, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_string_equal(d.reason, "worker:1 exited 2");
	assert_int_equal(d.exit_code, 2);
	expect_stopped(&d, (bool[]){false, true, false, true}, 4);
	progress_decision_release(&d);

	/* all succeed: succeeded, ps stopped */
	struct task_status ok[] = {RUN("chief", 0), RUN("worker", 0), RUN("worker", 1),
	                           RUN("ps", 0)};
	for (int i = 0; i < 3; i++)
		end_task(&ok[i], 0, 0, false);
	decide(spec, 1, ok, 4, "worker", 1, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_SUCCEEDED);
	expect_stopped(&d, (bool[]){false, false, false, true}, 4);
	progress_decision_release(&d);
}

static void test_untracked_failure_and_stop_on_failure(void **state)
{
	(void)state;
	struct spec_buf b;
	struct job_spec *spec = tf_job(&b);
	struct task_status t[] = {RUN("chief", 0), RUN("worker", 0), RUN("worker", 1),
	                          RUN("ps", 0)};
	struct progress_decision d;
	/* ps failing is ignored ... */
	end_task(&t[3], 1, 0, false);
	decide(spec, 1, t, 4, "ps", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_NONE);
	progress_decision_release(&d);
	/* ... unless its role stops on failure */
	spec->roles[2].stop_on_failure = true;
	decide(spec, 1, t, 4, "ps", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_string_equal(d.reason, "ps:0 exited 1");
	expect_stopped(&d, (bool[]){true, true, true, false}, 4);
	progress_decision_release(&d);

	/* stop_on_failure on a non-deciding tracked role */
	spec->roles[2].stop_on_failure = false;
	spec->roles[1].stop_on_failure = true;
	struct task_status t2[] = {RUN("chief", 0), RUN("worker", 0), RUN("worker", 1),
	                           RUN("ps", 0)};
	end_task(&t2[1], 3, 0, false);
	decide(spec, 1, t2, 4, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_string_equal(d.reason, "worker:0 exited 3");
	progress_decision_release(&d);
}

static void test_lost_kill_and_timeouts(void **state)
{
	(void)state;
	struct spec_buf b;
	struct role_spec r[] = {ROLE("worker", 2)};
	struct job_spec *spec = mk(&b, 1, r);
	spec->max_restarts = 1;
	struct task_status t[] = {RUN("worker", 0), RUN("worker", 1)};
	struct progress_decision d;
	struct weir_error err = {0};

	/* a lost deciding task restarts the gang (counts as 137) */
	t[0].state = TASK_LOST;
	decide(spec, 1, t, 2, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_RESTART_GANG);
	assert_string_equal(d.reason, "worker:0 lost (its launcher vanished)");
	progress_decision_release(&d);
	t[0].state = TASK_RUNNING;

	/* kill: never retried, every unended task stopped */
	struct progress_event kill = {.kind = PROGRESS_KILL};
	end_task(&t[1], 0, 0, false);
	assert_int_equal(job_progress_decide(spec, 1, t, 2, &kill, &d, &err), 0);
	assert_int_equal(d.outcome, PROGRESS_JOB_KILLED);
	expect_stopped(&d, (bool[]){true, false}, 2);
	progress_decision_release(&d);

	/* registration timeout restarts while restarts are left; execution fails */
	struct progress_event reg = {.kind = PROGRESS_TIMEOUT,
	                             .timer = TIMER_REGISTRATION,
	                             .reason = "registration timeout after 300s"};
	assert_int_equal(job_progress_decide(spec, 1, t, 2, &reg, &d, &err), 0);
	assert_int_equal(d.outcome, PROGRESS_RESTART_GANG);
	progress_decision_release(&d);
	assert_int_equal(job_progress_decide(spec, 2, t, 2, &reg, &d, &err), 0);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_string_equal(d.reason, "registration timeout after 300s");
	assert_int_equal(d.exit_code, -1);
	progress_decision_release(&d);
	struct progress_event ex = {.kind = PROGRESS_TIMEOUT, .timer = TIMER_EXECUTION};
	assert_int_equal(job_progress_decide(spec, 1, t, 2, &ex, &d, &err), 0);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_string_equal(d.reason, "execution timeout");
	progress_decision_release(&d);

	/* an event naming a task not in the attempt is the caller's error */
	struct progress_event bad = {.kind = PROGRESS_TASK_ENDED, .role = "chief", .index = 0};
	assert_int_equal(job_progress_decide(spec, 1, t, 2, &bad, &d, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
}

static void test_recovery_reevaluates(void **state)
{
	(void)state;
	struct spec_buf b;
	struct role_spec r[] = {ROLE("worker", 2)};
	struct job_spec *spec = mk(&b, 1, r);
	struct task_status t[] = {RUN("worker", 0), RUN("worker", 1)};
	struct progress_decision d;
	end_task(&t[0], 0, 0, false);
	end_task(&t[1], 0, 0, false);
	decide(spec, 1, t, 2, NULL, 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_SUCCEEDED);
	assert_int_equal(d.n_stop, 0);
	assert_true(job_progress_all_ended(t, 2));
	progress_decision_release(&d);
	t[1].state = TASK_RUNNING;
	assert_false(job_progress_all_ended(t, 2));
	decide(spec, 1, t, 2, NULL, 0, &d);
	assert_int_equal(d.outcome, PROGRESS_NONE);
	progress_decision_release(&d);

	/* a partial gang (rows not all there, or none) is never judged */
	end_task(&t[1], 0, 0, false);
	decide(spec, 1, t, 1, NULL, 0, &d);
	assert_int_equal(d.outcome, PROGRESS_NONE);
	progress_decision_release(&d);
	decide(spec, 1, t, 0, NULL, 0, &d);
	assert_int_equal(d.outcome, PROGRESS_NONE);
	assert_null(d.stop);
	progress_decision_release(&d);
	/* but a fatal failure among the rows there is */
	end_task(&t[0], 1, 0, false);
	decide(spec, 1, t, 1, NULL, 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	progress_decision_release(&d);
}

static void test_effective_exit(void **state)
{
	(void)state;
	struct task_status t = RUN("worker", 0);
	assert_int_equal(job_progress_effective_exit(&t), -1);
	end_task(&t, 3, 0, false);
	assert_int_equal(job_progress_effective_exit(&t), 3);
	end_task(&t, -1, 15, false);
	assert_int_equal(job_progress_effective_exit(&t), 143);
	end_task(&t, 1, 0, true);
	assert_int_equal(job_progress_effective_exit(&t), 137);
}

static void test_timers(void **state)
{
	(void)state;
	struct spec_buf b;
	struct role_spec r[] = {ROLE("worker", 1)};
	struct job_spec *spec = mk(&b, 1, r);
	spec->allocation_timeout_s = 60;
	spec->registration_timeout_s = 300;
	spec->execution_timeout_s = 600;
	struct timer_job j = {.spec = spec, .state = JOB_QUEUED, .queued_at_ms = 1000000};
	struct timer_result res;

	timers_check(&j, 1000000 + 59999, &res);
	assert_int_equal(res.expired, TIMER_NONE);
	assert_int_equal(res.next_due_ms, 1000000 + 60000);
	timers_check(&j, 1000000 + 60000, &res);
	assert_int_equal(res.expired, TIMER_ALLOCATION);
	assert_string_equal(res.reason, "allocation timeout after 60s");

	j.state = JOB_STARTING;
	j.allocated_at_ms = 2000000;
	timers_check(&j, 2000000 + 1000, &res);
	assert_int_equal(res.expired, TIMER_NONE);
	assert_int_equal(res.next_due_ms, 2000000 + 300000);
	timers_check(&j, 2000000 + 300000, &res);
	assert_int_equal(res.expired, TIMER_REGISTRATION);
	assert_string_equal(res.reason, "registration timeout after 300s");

	j.state = JOB_RUNNING;
	j.running_at_ms = 3000000;
	timers_check(&j, 3000000 + 599999, &res);
	assert_int_equal(res.expired, TIMER_NONE);
	assert_int_equal(res.next_due_ms, 3600000);
	timers_check(&j, 3000000 + 700000, &res);
	assert_int_equal(res.expired, TIMER_EXECUTION);
	assert_string_equal(res.reason, "execution timeout after 600s");

	/* no limit, or an ended job: nothing due */
	spec->execution_timeout_s = 0;
	timers_check(&j, 9000000, &res);
	assert_int_equal(res.expired, TIMER_NONE);
	assert_true(res.next_due_ms == TIMER_NEVER);
	j.state = JOB_SUCCEEDED;
	spec->execution_timeout_s = 1;
	timers_check(&j, 9000000, &res);
	assert_int_equal(res.expired, TIMER_NONE);
	assert_true(res.next_due_ms == TIMER_NEVER);
}

static void test_states(void **state)
{
	(void)state;
	enum job_state js;
	enum task_state ts;
	for (int i = JOB_QUEUED; i <= JOB_KILLED; i++) {
		assert_int_equal(job_state_from_name(job_state_name(i), &js), 0);
		assert_int_equal(js, i);
	}
	for (int i = TASK_PENDING; i <= TASK_LOST; i++) {
		assert_int_equal(task_state_from_name(task_state_name(i), &ts), 0);
		assert_int_equal(ts, i);
	}
	assert_int_equal(job_state_from_name("done", &js), -1);
	assert_int_equal(task_state_from_name(NULL, &ts), -1);
	assert_string_equal(job_state_name((enum job_state)42), "?");

	assert_true(job_state_can_move(JOB_QUEUED, JOB_STARTING));
	assert_true(job_state_can_move(JOB_STARTING, JOB_RUNNING));
	assert_true(job_state_can_move(JOB_RUNNING, JOB_QUEUED)); /* restart */
	assert_true(job_state_can_move(JOB_RUNNING, JOB_SUCCEEDED));
	assert_true(job_state_can_move(JOB_STARTING, JOB_SUCCEEDED)); /* after a power cut */
	assert_true(job_state_can_move(JOB_QUEUED, JOB_KILLED));
	assert_false(job_state_can_move(JOB_QUEUED, JOB_RUNNING));
	assert_false(job_state_can_move(JOB_QUEUED, JOB_SUCCEEDED));
	assert_false(job_state_can_move(JOB_SUCCEEDED, JOB_QUEUED));
	assert_false(job_state_can_move(JOB_FAILED, JOB_FAILED));
	assert_true(job_state_is_active(JOB_STARTING));
	assert_false(job_state_is_active(JOB_KILLED));

	assert_true(task_state_can_move(TASK_PENDING, TASK_STARTING));
	assert_true(task_state_can_move(TASK_PENDING, TASK_RUNNING));
	assert_true(task_state_can_move(TASK_RUNNING, TASK_LOST));
	assert_false(task_state_can_move(TASK_RUNNING, TASK_STARTING));
	assert_false(task_state_can_move(TASK_SUCCEEDED, TASK_FAILED));
	assert_false(task_state_can_move(TASK_LOST, TASK_RUNNING));
}

static void test_gang_end(void **state)
{
	(void)state;
	struct progress_gang g = {0};

	/* a task of the attempt still runs: wait, whatever was decided */
	g.result_waits = g.restart_pending = true;
	assert_int_equal(job_progress_gang_end(&g), PROGRESS_GANG_WAIT);
	/* all ended: a waiting result wins over a restart (a kill while restarting) */
	g.all_ended = true;
	assert_int_equal(job_progress_gang_end(&g), PROGRESS_GANG_RECORD);
	g.result_waits = false;
	assert_int_equal(job_progress_gang_end(&g), PROGRESS_GANG_RESTART);
	g.restart_pending = false;
	assert_int_equal(job_progress_gang_end(&g), PROGRESS_GANG_WAIT);
	/* already final (failed at once, late ends): its resources go back */
	g.final = true;
	assert_int_equal(job_progress_gang_end(&g), PROGRESS_GANG_FINAL);
	g.result_waits = true;
	assert_int_equal(job_progress_gang_end(&g), PROGRESS_GANG_FINAL);
}

static void test_result_and_idle_kill(void **state)
{
	(void)state;
	struct progress_decision d = {.outcome = PROGRESS_JOB_FAILED, .exit_code = 3};
	enum job_state s;
	int code = 99;

	assert_true(job_progress_result(&d, &s, &code));
	assert_int_equal(s, JOB_FAILED);
	assert_int_equal(code, 3);
	d.outcome = PROGRESS_JOB_SUCCEEDED;
	assert_true(job_progress_result(&d, &s, &code));
	assert_int_equal(s, JOB_SUCCEEDED);
	assert_int_equal(code, 0);
	d.outcome = PROGRESS_RESTART_GANG;
	code = 99;
	assert_false(job_progress_result(&d, &s, &code));
	assert_int_equal(code, 99);
	d.outcome = PROGRESS_NONE;
	assert_false(job_progress_result(&d, &s, &code));

	job_progress_kill_idle(&d);
	assert_int_equal(d.outcome, PROGRESS_JOB_KILLED);
	assert_int_equal(d.exit_code, -1);
	assert_string_equal(d.reason, "killed by the user");
	assert_int_equal(d.n_stop, 0);
	assert_null(d.stop);
	assert_true(job_progress_result(&d, &s, &code));
	assert_int_equal(s, JOB_KILLED);
	assert_int_equal(code, -1);
}

/* Decisions read the cause: an execution timeout or the cluster's time limit
 * is never retried whatever its exit code and retry range; an OOM counts as
 * 137 whatever the program's exit code; the decision carries the cause. */
static void test_decisions_by_cause(void **state)
{
	(void)state;
	struct spec_buf b;
	struct role_spec roles[] = {ROLE("worker", 1)};
	struct job_spec *spec = mk(&b, 1, roles);
	struct progress_decision d;
	struct task_status t[] = {RUN("worker", 0)};

	spec->max_restarts = 3;
	spec->retry_exit_min = 0;
	spec->retry_exit_max = 255; /* everything retries ... */
	t[0].state = TASK_FAILED;
	t[0].cause = END_CAUSE_EXEC_TIMEOUT;
	t[0].exit_code = 137; /* ... and the code is in the range */
	decide(spec, 1, t, 1, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_int_equal(d.cause, END_CAUSE_EXEC_TIMEOUT);
	assert_int_equal(d.exit_code, 137);
	progress_decision_release(&d);

	t[0].cause = END_CAUSE_CLUSTER_TIME_LIMIT;
	t[0].exit_code = 124;
	decide(spec, 1, t, 1, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_FAILED);
	assert_int_equal(d.cause, END_CAUSE_CLUSTER_TIME_LIMIT);
	progress_decision_release(&d);

	/* the same exit code without that cause restarts */
	t[0].cause = END_CAUSE_EXITED;
	decide(spec, 1, t, 1, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_RESTART_GANG);
	assert_int_equal(d.cause, END_CAUSE_EXITED);
	progress_decision_release(&d);

	/* an OOM with any exit code is an OOM: 137, in the default range */
	spec->retry_exit_min = 128;
	for (int code = -1; code <= 3; code += 2) {
		t[0].cause = END_CAUSE_OOM;
		t[0].exit_code = code;
		t[0].signal = 0;
		decide(spec, 1, t, 1, "worker", 0, &d);
		assert_int_equal(d.outcome, PROGRESS_RESTART_GANG);
		assert_int_equal(d.exit_code, 137);
		assert_int_equal(d.cause, END_CAUSE_OOM);
		assert_string_equal(d.reason, "worker:0 OOMKilled");
		progress_decision_release(&d);
	}

	/* a success, a kill, the timers */
	t[0].state = TASK_SUCCEEDED;
	t[0].cause = END_CAUSE_EXITED;
	t[0].exit_code = 0;
	decide(spec, 1, t, 1, "worker", 0, &d);
	assert_int_equal(d.outcome, PROGRESS_JOB_SUCCEEDED);
	assert_int_equal(d.cause, END_CAUSE_EXITED);
	progress_decision_release(&d);
	struct task_status run[] = {RUN("worker", 0)};
	struct progress_event ev = {.kind = PROGRESS_KILL};
	assert_int_equal(job_progress_decide(spec, 1, run, 1, &ev, &d, NULL), 0);
	assert_int_equal(d.cause, END_CAUSE_KILLED);
	progress_decision_release(&d);
	const enum timer_kind timers[] = {TIMER_ALLOCATION, TIMER_REGISTRATION, TIMER_EXECUTION};
	const enum end_cause causes[] = {END_CAUSE_ALLOC_TIMEOUT, END_CAUSE_GANG_TIMEOUT,
	                                 END_CAUSE_EXEC_TIMEOUT};
	for (size_t i = 0; i < 3; i++) {
		ev = (struct progress_event){.kind = PROGRESS_TIMEOUT, .timer = timers[i]};
		assert_int_equal(job_progress_decide(spec, 1, run, 1, &ev, &d, NULL), 0);
		assert_int_equal(d.cause, causes[i]);
		progress_decision_release(&d);
	}
	job_progress_kill_idle(&d);
	assert_int_equal(d.cause, END_CAUSE_KILLED);
	progress_decision_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chief_fails_at_once),
	    cmocka_unit_test(test_worker_failure_ignored_under_chief),
	    cmocka_unit_test(test_worker0_decides_without_chief),
	    cmocka_unit_test(test_restart_on_137),
	    cmocka_unit_test(test_exit_1_fails),
	    cmocka_unit_test(test_launcher_timeout_reason_not_retried),
	    cmocka_unit_test(test_all_workers_policy),
	    cmocka_unit_test(test_untracked_failure_and_stop_on_failure),
	    cmocka_unit_test(test_lost_kill_and_timeouts),
	    cmocka_unit_test(test_recovery_reevaluates),
	    cmocka_unit_test(test_effective_exit),
	    cmocka_unit_test(test_timers),
	    cmocka_unit_test(test_states),
	    cmocka_unit_test(test_gang_end),
	    cmocka_unit_test(test_result_and_idle_kill),
	    cmocka_unit_test(test_decisions_by_cause),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
