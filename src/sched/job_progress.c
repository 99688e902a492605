/* job_progress.c: a job's next step from its tasks and an event
 * (job_progress.h; the rules are in docs/internals/sched.md).
 *
 * Stateless on purpose: every decision is made from the whole task set of
 * the attempt, so recovery after a server restart (role NULL: "look at
 * everything") decides exactly as the live path would have.
 */
#include "sched/job_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *progress_outcome_name(enum progress_outcome o)
{
	switch (o) {
	case PROGRESS_NONE:
		return "none";
	case PROGRESS_JOB_SUCCEEDED:
		return "succeeded";
	case PROGRESS_JOB_FAILED:
		return "failed";
	case PROGRESS_JOB_KILLED:
		return "killed";
	case PROGRESS_RESTART_GANG:
		return "restart";
	}
	return "?";
}

bool job_progress_all_ended(const struct task_status *tasks, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!task_state_is_final(tasks[i].state))
			return false;
	}
	return true;
}

static bool is_failure(const struct task_status *t)
{
	return t->state == TASK_FAILED || t->state == TASK_KILLED || t->state == TASK_LOST;
}

int job_progress_effective_exit(const struct task_status *t)
{
	switch (t->state) {
	case TASK_SUCCEEDED:
		return t->exit_code;
	case TASK_LOST:
		/* the launcher vanished: most likely killed outright (OOM killer,
		 * kill -9); count it as a SIGKILL so the default range retries it */
		return 137;
	case TASK_FAILED:
	case TASK_KILLED:
		if (t->cause == END_CAUSE_OOM)
			return 137;
		if (t->signal > 0)
			return 128 + t->signal;
		return t->exit_code;
	default:
		return -1;
	}
}

static void failure_reason(const struct task_status *t, char *buf, size_t size)
{
	if (t->state == TASK_LOST)
		snprintf(buf, size, "%s:%d lost (its launcher vanished)", t->role, t->index);
	else if (t->cause == END_CAUSE_OOM)
		snprintf(buf, size, "%s:%d OOMKilled", t->role, t->index);
	else if (t->reason && t->reason[0])
		snprintf(buf, size, "%s:%d %s", t->role, t->index, t->reason);
	else if (t->signal > 0)
		snprintf(buf, size, "%s:%d killed by signal %d", t->role, t->index, t->signal);
	else if (t->exit_code >= 0)
		snprintf(buf, size, "%s:%d exited %d", t->role, t->index, t->exit_code);
	else
		snprintf(buf, size, "%s:%d %s", t->role, t->index, task_state_name(t->state));
}

struct ctx {
	const struct job_spec *spec;
	const struct role_spec *deciding;
	bool all_tracked; /* no role is tracked: count every role as tracked */
};

static bool role_tracked(const struct ctx *c, const struct role_spec *r)
{
	if (c->all_tracked)
		return true;
	return r && !r->untracked && !r->sidecar;
}

static bool task_tracked(const struct ctx *c, const struct task_status *t)
{
	return role_tracked(c, job_spec_find_role(c->spec, t->role));
}

/* How many tracked tasks the spec's gang has. */
static int64_t tracked_total(const struct ctx *c)
{
	int64_t total = 0;
	for (size_t i = 0; i < c->spec->n_roles; i++) {
		if (role_tracked(c, &c->spec->roles[i]))
			total += c->spec->roles[i].instances;
	}
	return total;
}

static bool is_deciding_task(const struct ctx *c, const struct task_status *t)
{
	return c->deciding && t->index == 0 && strcmp(t->role, c->deciding->name) == 0;
}

/* Whether this task's failure ends the attempt at once. */
static bool fails_fast(const struct ctx *c, const struct task_status *t)
{
	if (!is_failure(t))
		return false;
	const struct role_spec *r = job_spec_find_role(c->spec, t->role);
	if (r && r->stop_on_failure)
		return true;
	if (!role_tracked(c, r))
		return false;
	if (c->spec->success == SUCCESS_ALL_WORKERS)
		return true;
	if (is_deciding_task(c, t))
		return true;
	return c->spec->fail_on_worker_failure && strcmp(t->role, "worker") == 0;
}

/* A timeout that ends the job is never retried, whatever the exit code. */
static bool retryable(const struct job_spec *spec, int attempt, enum end_cause cause, int exit_code)
{
	if (cause == END_CAUSE_EXEC_TIMEOUT || cause == END_CAUSE_CLUSTER_TIME_LIMIT)
		return false;
	return attempt <= spec->max_restarts && exit_code >= spec->retry_exit_min &&
	       exit_code <= spec->retry_exit_max;
}

static enum end_cause timer_cause(enum timer_kind k)
{
	switch (k) {
	case TIMER_ALLOCATION:
		return END_CAUSE_ALLOC_TIMEOUT;
	case TIMER_REGISTRATION:
		return END_CAUSE_GANG_TIMEOUT;
	case TIMER_EXECUTION:
		return END_CAUSE_EXEC_TIMEOUT;
	case TIMER_NONE:
		break;
	}
	return END_CAUSE_NONE;
}

static void stop_unended(const struct task_status *tasks, size_t n, struct progress_decision *d,
                         bool only_untracked, const struct ctx *c)
{
	for (size_t i = 0; i < n; i++) {
		if (task_state_is_final(tasks[i].state))
			continue;
		if (only_untracked && task_tracked(c, &tasks[i]))
			continue;
		d->stop[i] = true;
		d->n_stop++;
	}
}

static void copy_text(char *dst, size_t size, const char *src)
{
	size_t len = strlen(src);
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

int job_progress_decide(const struct job_spec *spec, int attempt, const struct task_status *tasks,
                        size_t n, const struct progress_event *ev, struct progress_decision *out,
                        struct weir_error *err)
{
	memset(out, 0, sizeof(*out));
	out->exit_code = -1;

	struct ctx c = {
	    .spec = spec, .deciding = job_spec_deciding_role(spec), .all_tracked = true};
	for (size_t i = 0; i < spec->n_roles; i++) {
		if (!spec->roles[i].untracked && !spec->roles[i].sidecar)
			c.all_tracked = false;
	}

	const struct task_status *ended = NULL;
	if (ev->kind == PROGRESS_TASK_ENDED && ev->role) {
		for (size_t i = 0; i < n && !ended; i++) {
			if (tasks[i].index == ev->index && strcmp(tasks[i].role, ev->role) == 0)
				ended = &tasks[i];
		}
		if (!ended)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "job progress: task %s:%d is not in the attempt",
			                      ev->role, ev->index);
	}

	if (n > 0) {
		out->stop = calloc(n, sizeof(*out->stop));
		if (!out->stop)
			return weir_error_set(err, WEIR_E_INTERNAL, "job progress: out of memory");
	}
	out->n_tasks = n;

	switch (ev->kind) {
	case PROGRESS_KILL:
		out->outcome = PROGRESS_JOB_KILLED;
		out->cause = END_CAUSE_KILLED;
		copy_text(out->reason, sizeof(out->reason), "killed by user");
		stop_unended(tasks, n, out, false, &c);
		return 0;
	case PROGRESS_TIMEOUT:
		if (ev->reason)
			copy_text(out->reason, sizeof(out->reason), ev->reason);
		else
			snprintf(out->reason, sizeof(out->reason), "%s timeout",
			         timer_kind_name(ev->timer));
		out->cause = timer_cause(ev->timer);
		if (ev->timer == TIMER_REGISTRATION && attempt <= spec->max_restarts)
			out->outcome = PROGRESS_RESTART_GANG;
		else
			out->outcome = PROGRESS_JOB_FAILED;
		stop_unended(tasks, n, out, false, &c);
		return 0;
	case PROGRESS_TASK_ENDED:
		break;
	}

	/* the task that just ended first, so its failure is the one reported */
	const struct task_status *fast = NULL;
	if (ended && fails_fast(&c, ended))
		fast = ended;
	for (size_t i = 0; i < n && !fast; i++) {
		if (fails_fast(&c, &tasks[i]))
			fast = &tasks[i];
	}
	if (fast) {
		int code = job_progress_effective_exit(fast);
		failure_reason(fast, out->reason, sizeof(out->reason));
		out->exit_code = code;
		out->cause = fast->cause;
		out->outcome = retryable(spec, attempt, fast->cause, code) ? PROGRESS_RESTART_GANG
		                                                           : PROGRESS_JOB_FAILED;
		stop_unended(tasks, n, out, false, &c);
		return 0;
	}

	const struct task_status *deciding = NULL;
	int64_t tracked_ended = 0;
	for (size_t i = 0; i < n; i++) {
		if (!task_tracked(&c, &tasks[i]))
			continue;
		if (!task_state_is_final(tasks[i].state))
			return 0; /* a tracked task still runs: nothing to decide */
		if (is_deciding_task(&c, &tasks[i]))
			deciding = &tasks[i];
		tracked_ended++;
	}
	/* a tracked task the caller does not list has not ended (e.g. a gang
	 * whose rows are not all written yet): never judge a partial gang */
	if (tracked_ended < tracked_total(&c))
		return 0;

	/* every tracked task has ended and no failure was fatal */
	const struct task_status *failed = NULL;
	if (spec->success == SUCCESS_CHIEF && deciding) {
		if (deciding->state != TASK_SUCCEEDED)
			failed = deciding; /* not a failure state, yet not a success */
	} else {
		for (size_t i = 0; i < n && !failed; i++) {
			if (task_tracked(&c, &tasks[i]) && tasks[i].state != TASK_SUCCEEDED)
				failed = &tasks[i];
		}
	}
	if (failed) {
		int code = job_progress_effective_exit(failed);
		failure_reason(failed, out->reason, sizeof(out->reason));
		out->exit_code = code;
		out->cause = failed->cause;
		out->outcome = retryable(spec, attempt, failed->cause, code) ? PROGRESS_RESTART_GANG
		                                                             : PROGRESS_JOB_FAILED;
		stop_unended(tasks, n, out, false, &c);
		return 0;
	}
	out->outcome = PROGRESS_JOB_SUCCEEDED;
	out->cause = END_CAUSE_EXITED;
	out->exit_code = 0;
	stop_unended(tasks, n, out, true, &c);
	return 0;
}

void progress_decision_release(struct progress_decision *d)
{
	if (!d)
		return;
	free(d->stop);
	d->stop = NULL;
	d->n_tasks = 0;
	d->n_stop = 0;
}

bool job_progress_result(const struct progress_decision *d, enum job_state *state, int *exit_code)
{
	switch (d->outcome) {
	case PROGRESS_JOB_SUCCEEDED:
		*state = JOB_SUCCEEDED;
		*exit_code = 0;
		return true;
	case PROGRESS_JOB_FAILED:
		*state = JOB_FAILED;
		*exit_code = d->exit_code;
		return true;
	case PROGRESS_JOB_KILLED:
		*state = JOB_KILLED;
		*exit_code = d->exit_code;
		return true;
	case PROGRESS_NONE:
	case PROGRESS_RESTART_GANG:
		break;
	}
	return false;
}

void job_progress_kill_idle(struct progress_decision *out)
{
	memset(out, 0, sizeof(*out));
	out->outcome = PROGRESS_JOB_KILLED;
	out->cause = END_CAUSE_KILLED;
	out->exit_code = -1;
	copy_text(out->reason, sizeof(out->reason), "killed by the user");
}

enum progress_gang_end job_progress_gang_end(const struct progress_gang *g)
{
	if (!g->all_ended)
		return PROGRESS_GANG_WAIT;
	if (!g->final && g->result_waits)
		return PROGRESS_GANG_RECORD;
	if (g->final)
		return PROGRESS_GANG_FINAL;
	if (g->restart_pending)
		return PROGRESS_GANG_RESTART;
	return PROGRESS_GANG_WAIT;
}
