/* task_end.c: a task's end from a report, a launcher gone, a backend's
 * verdict or a failed start (task_end.h; docs/internals/sched.md). */
#include "sched/task_end.h"

#include <stdio.h>
#include <string.h>

static void keep(const struct task_end *was, struct task_end *out)
{
	out->exit_code = was->exit_code;
	out->signal = was->signal;
	out->oom_killed = was->oom_killed;
}

void task_end_reported(const struct task_report *r, bool stopping, struct task_end *out)
{
	const char *why = r->reason && r->reason[0] ? r->reason : NULL;
	bool program_ended = r->cause == END_CAUSE_EXITED || r->cause == END_CAUSE_STOPPED;

	memset(out, 0, sizeof *out);
	out->cause = r->cause;
	out->exit_code = r->exit_code;
	out->signal = r->signal;
	out->oom_killed = r->oom_killed;
	if (r->cause == END_CAUSE_OOM) {
		out->state = TASK_FAILED;
		out->oom_killed = true;
		snprintf(out->reason, sizeof out->reason, "OOMKilled");
		if (out->exit_code < 0)
			out->exit_code = 137;
	} else if (program_ended && r->exit_code == 0 && r->signal == 0) {
		out->state = TASK_SUCCEEDED;
		snprintf(out->reason, sizeof out->reason, "%s", why ? why : "");
	} else if (stopping) {
		out->state = TASK_KILLED;
		out->cause = END_CAUSE_STOPPED;
		snprintf(out->reason, sizeof out->reason, "%s", why ? why : "stopped");
	} else {
		out->state = TASK_FAILED;
		if (why)
			snprintf(out->reason, sizeof out->reason, "%s", why);
		else if (r->signal > 0)
			snprintf(out->reason, sizeof out->reason, "killed by signal %d", r->signal);
		else
			snprintf(out->reason, sizeof out->reason, "exited %d", r->exit_code);
	}
}

void task_end_gone(const struct task_end *was, bool stopping, enum task_verdict v, const char *why,
                   int sigkill, struct task_end *out)
{
	memset(out, 0, sizeof *out);
	keep(was, out);
	if (stopping) {
		out->state = TASK_KILLED;
		out->cause = END_CAUSE_STOPPED;
		snprintf(out->reason, sizeof out->reason, "stopped");
		return;
	}
	switch (v) {
	case TASK_VERDICT_OOM:
		out->state = TASK_FAILED;
		out->cause = END_CAUSE_OOM;
		out->oom_killed = true;
		out->exit_code = 128 + sigkill;
		out->signal = sigkill;
		break;
	case TASK_VERDICT_TIME_LIMIT:
		out->state = TASK_FAILED;
		out->cause = END_CAUSE_CLUSTER_TIME_LIMIT;
		out->exit_code = 124; /* what timeout(1) gives, as weir's own timeout */
		break;
	case TASK_VERDICT_CANCELLED:
		out->state = TASK_KILLED;
		out->cause = END_CAUSE_CLUSTER_CANCELLED;
		out->signal = sigkill;
		out->exit_code = 128 + sigkill;
		break;
	case TASK_VERDICT_NONE:
		out->state = TASK_LOST;
		out->cause = END_CAUSE_LAUNCHER_LOST;
		break;
	}
	snprintf(out->reason, sizeof out->reason, "%s", why ? why : "");
}

void task_end_verdict(enum task_state state, int task_attempt, enum job_state job_state,
                      int job_attempt, enum task_verdict v, struct task_retold *out)
{
	memset(out, 0, sizeof *out);
	if (v == TASK_VERDICT_NONE || !task_state_is_final(state) || state == TASK_SUCCEEDED)
		return;
	out->task = true;
	out->oom_killed = v == TASK_VERDICT_OOM;
	switch (v) {
	case TASK_VERDICT_OOM:
		out->cause = END_CAUSE_OOM;
		break;
	case TASK_VERDICT_TIME_LIMIT:
		out->cause = END_CAUSE_CLUSTER_TIME_LIMIT;
		break;
	case TASK_VERDICT_CANCELLED:
		out->cause = END_CAUSE_CLUSTER_CANCELLED;
		break;
	case TASK_VERDICT_NONE:
		break;
	}
	out->job = job_attempt == task_attempt && job_state_is_final(job_state) &&
	           job_state != JOB_SUCCEEDED;
}

void task_end_not_started(const struct task_end *was, const char *why, struct task_end *out)
{
	memset(out, 0, sizeof *out);
	keep(was, out);
	out->state = TASK_LOST;
	out->cause = END_CAUSE_LAUNCH_FAILED;
	snprintf(out->reason, sizeof out->reason, "cannot start: %s", why ? why : "");
}
