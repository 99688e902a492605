/* timers.c: allocation, registration and execution timeouts (timers.h). */
#include "sched/timers.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *timer_kind_name(enum timer_kind k)
{
	switch (k) {
	case TIMER_NONE:
		return "none";
	case TIMER_ALLOCATION:
		return "allocation";
	case TIMER_REGISTRATION:
		return "registration";
	case TIMER_EXECUTION:
		return "execution";
	}
	return "?";
}

void timers_check(const struct timer_job *job, int64_t now_ms, struct timer_result *out)
{
	memset(out, 0, sizeof(*out));
	out->expired = TIMER_NONE;
	out->next_due_ms = TIMER_NEVER;

	enum timer_kind kind = TIMER_NONE;
	int64_t since = 0, limit_s = 0;
	switch (job->state) {
	case JOB_QUEUED:
		kind = TIMER_ALLOCATION;
		since = job->queued_at_ms;
		limit_s = job->spec->allocation_timeout_s;
		break;
	case JOB_STARTING:
		kind = TIMER_REGISTRATION;
		since = job->allocated_at_ms;
		limit_s = job->spec->registration_timeout_s;
		break;
	case JOB_RUNNING:
		kind = TIMER_EXECUTION;
		since = job->running_at_ms;
		limit_s = job->spec->execution_timeout_s;
		break;
	default:
		return;
	}
	/* no start time recorded: nothing to measure from */
	if (limit_s <= 0 || since <= 0)
		return;
	int64_t due = since + limit_s * 1000;
	if (now_ms < due) {
		out->next_due_ms = due;
		return;
	}
	out->expired = kind;
	snprintf(out->reason, sizeof(out->reason), "%s timeout after %" PRId64 "s",
	         timer_kind_name(kind), limit_s);
}
