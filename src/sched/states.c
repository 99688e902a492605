/* states.c: the legal moves between job and task states (states.h). */
#include "sched/states.h"

bool job_state_can_move(enum job_state from, enum job_state to)
{
	if ((unsigned)from >= JOB_STATE_COUNT || (unsigned)to >= JOB_STATE_COUNT ||
	    job_state_is_final(from))
		return false;
	if (from == to)
		return true;
	switch (from) {
	case JOB_QUEUED:
		return to == JOB_STARTING || to == JOB_FAILED || to == JOB_KILLED;
	case JOB_STARTING:
		/* back to queued: a restart after a registration timeout; to
		 * succeeded: its tasks ended while the store still says starting,
		 * the turns that recorded their registrations lost to a power cut
		 * (docs/internals/recovery.md, "A power cut") */
		return to == JOB_RUNNING || to == JOB_QUEUED || to == JOB_SUCCEEDED ||
		       to == JOB_FAILED || to == JOB_KILLED;
	case JOB_RUNNING:
		return to != JOB_STARTING;
	default:
		return false;
	}
}

bool task_state_can_move(enum task_state from, enum task_state to)
{
	if ((unsigned)from >= TASK_STATE_COUNT || (unsigned)to >= TASK_STATE_COUNT ||
	    task_state_is_final(from))
		return false;
	if (task_state_is_final(to))
		return true;
	/* unended states are ordered pending < starting < running; a re-registering
	 * launcher may skip ahead, never back */
	return to >= from;
}
