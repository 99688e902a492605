/* states.c: job and task state names and the legal moves (states.h). */
#include "sched/states.h"

#include <string.h>

static const char *const job_names[] = {
    [JOB_QUEUED] = "queued",       [JOB_STARTING] = "starting", [JOB_RUNNING] = "running",
    [JOB_SUCCEEDED] = "succeeded", [JOB_FAILED] = "failed",     [JOB_KILLED] = "killed",
};

static const char *const task_names[] = {
    [TASK_PENDING] = "pending",     [TASK_STARTING] = "starting", [TASK_RUNNING] = "running",
    [TASK_SUCCEEDED] = "succeeded", [TASK_FAILED] = "failed",     [TASK_KILLED] = "killed",
    [TASK_LOST] = "lost",
};

#define N_JOB (sizeof(job_names) / sizeof(job_names[0]))
#define N_TASK (sizeof(task_names) / sizeof(task_names[0]))

const char *job_state_name(enum job_state s)
{
	if ((unsigned)s >= N_JOB)
		return "?";
	return job_names[s];
}

const char *task_state_name(enum task_state s)
{
	if ((unsigned)s >= N_TASK)
		return "?";
	return task_names[s];
}

int job_state_from_name(const char *name, enum job_state *out)
{
	if (!name)
		return -1;
	for (unsigned i = 0; i < N_JOB; i++) {
		if (strcmp(name, job_names[i]) == 0) {
			*out = (enum job_state)i;
			return 0;
		}
	}
	return -1;
}

int task_state_from_name(const char *name, enum task_state *out)
{
	if (!name)
		return -1;
	for (unsigned i = 0; i < N_TASK; i++) {
		if (strcmp(name, task_names[i]) == 0) {
			*out = (enum task_state)i;
			return 0;
		}
	}
	return -1;
}

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
	if ((unsigned)from >= N_JOB || (unsigned)to >= N_JOB || job_state_is_final(from))
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
	if ((unsigned)from >= N_TASK || (unsigned)to >= N_TASK || task_state_is_final(from))
		return false;
	if (task_state_is_final(to))
		return true;
	/* unended states are ordered pending < starting < running; a re-registering
	 * launcher may skip ahead, never back */
	return to >= from;
}
