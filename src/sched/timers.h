/* timers.h: a job's three timeouts, decided from times passed in.
 *
 *  allocation:   queued (this attempt) for longer than allocation_timeout_s
 *                -> failed "allocation timeout after Ns" (not retried);
 *  registration: gang allocated but not every task registered within
 *                registration_timeout_s -> "registration timeout after Ns",
 *                retryable (a gang restart while restarts are left);
 *  execution:    running (this attempt) for longer than execution_timeout_s
 *                -> failed "execution timeout after Ns" (not retried).
 * A timeout of 0 is no limit.  Each is measured within the current attempt.
 *
 * Pure: now_ms is passed in.  The server arms one libuv timer for the
 * earliest next_due_ms over its jobs.
 */
#ifndef WEIR_SCHED_TIMERS_H
#define WEIR_SCHED_TIMERS_H

#include <stdint.h>

#include "model/job_spec.h"
#include "sched/states.h"

enum timer_kind {
	TIMER_NONE = 0,
	TIMER_ALLOCATION,
	TIMER_REGISTRATION,
	TIMER_EXECUTION,
};

#define TIMER_NEVER INT64_MAX

struct timer_job {
	const struct job_spec *spec; /* borrowed: the timeouts */
	enum job_state state;
	int64_t queued_at_ms;    /* when the current attempt was queued */
	int64_t allocated_at_ms; /* when its gang was allocated (state starting) */
	int64_t running_at_ms;   /* when its gang completed (state running) */
};

#define TIMER_REASON_MAX 128

struct timer_result {
	enum timer_kind expired;       /* TIMER_NONE: none expired */
	char reason[TIMER_REASON_MAX]; /* "execution timeout after 600s" */
	int64_t next_due_ms;           /* the next timeout of this job if none expired;
	                                * TIMER_NEVER when there is none */
};

/* Checks the timeout that applies to the job's state (queued: allocation;
 * starting: registration; running: execution; ended: none). */
void timers_check(const struct timer_job *job, int64_t now_ms, struct timer_result *out);

const char *timer_kind_name(enum timer_kind k);

#endif
