/* states.c: the rules of job and task states (states.h). */
#include "sched/states.h"

bool job_state_is_final(enum job_state s)
{
	return s == JOB_SUCCEEDED || s == JOB_FAILED || s == JOB_KILLED;
}

bool task_state_is_final(enum task_state s)
{
	return s == TASK_SUCCEEDED || s == TASK_FAILED || s == TASK_KILLED || s == TASK_LOST;
}

bool job_state_is_active(enum job_state s)
{
	return s == JOB_QUEUED || s == JOB_STARTING || s == JOB_RUNNING;
}

bool job_state_can_move(enum job_state from, enum job_state to)
{
	if ((unsigned)from >= JOB_STATE_COUNT || (unsigned)to >= JOB_STATE_COUNT || job_state_is_final(from))
		return false;
	if (from == to)
		return true;
	switch (from) {
	case JOB_QUEUED:
		return to == JOB_STARTING || to == JOB_FAILED || to == JOB_KILLED;
	case JOB_STARTING:
		/* back to queued: a restart after a registration timeout */
		return to == JOB_RUNNING || to == JOB_QUEUED || to == JOB_FAILED ||
		       to == JOB_KILLED;
	case JOB_RUNNING:
		return to != JOB_STARTING;
	default:
		return false;
	}
}

bool task_state_can_move(enum task_state from, enum task_state to)
{
	if ((unsigned)from >= TASK_STATE_COUNT || (unsigned)to >= TASK_STATE_COUNT || task_state_is_final(from))
		return false;
	if (task_state_is_final(to))
		return true;
	/* unended states are ordered pending < starting < running; a re-registering
	 * launcher may skip ahead, never back */
	return to >= from;
}
