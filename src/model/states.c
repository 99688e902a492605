/* states.c: the one name table of each state enum (states.h). */
#include "model/states.h"

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

static const char *const ti_names[] = {
    [DAG_TI_NONE] = "none",
    [DAG_TI_SCHEDULED] = "scheduled",
    [DAG_TI_QUEUED] = "queued",
    [DAG_TI_RUNNING] = "running",
    [DAG_TI_SUCCESS] = "success",
    [DAG_TI_FAILED] = "failed",
    [DAG_TI_UP_FOR_RETRY] = "up_for_retry",
    [DAG_TI_UPSTREAM_FAILED] = "upstream_failed",
    [DAG_TI_SKIPPED] = "skipped",
    [DAG_TI_REMOVED] = "removed",
    [DAG_TI_UP_FOR_RESCHEDULE] = "up_for_reschedule",
};

static const char *const run_names[] = {
    [DAG_RUN_QUEUED] = "queued",
    [DAG_RUN_RUNNING] = "running",
    [DAG_RUN_SUCCESS] = "success",
    [DAG_RUN_FAILED] = "failed",
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

_Static_assert(N_OF(job_names) == JOB_STATE_COUNT, "a name per job state");
_Static_assert(N_OF(task_names) == TASK_STATE_COUNT, "a name per task state");
_Static_assert(N_OF(ti_names) == DAG_TI_STATE_COUNT, "a name per TI state");
_Static_assert(N_OF(run_names) == DAG_RUN_STATE_COUNT, "a name per run state");

static const char *name_of(const char *const *names, unsigned n, unsigned v)
{
	return v < n ? names[v] : "?";
}

/* The index of `name` in `names`, or -1. */
static int index_of(const char *const *names, unsigned n, const char *name)
{
	if (!name)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		if (strcmp(name, names[i]) == 0)
			return (int)i;
	}
	return -1;
}

const char *job_state_name(enum job_state s)
{
	return name_of(job_names, JOB_STATE_COUNT, (unsigned)s);
}

const char *task_state_name(enum task_state s)
{
	return name_of(task_names, TASK_STATE_COUNT, (unsigned)s);
}

const char *dag_ti_state_name(enum dag_ti_state s)
{
	return name_of(ti_names, DAG_TI_STATE_COUNT, (unsigned)s);
}

const char *dag_run_state_name(enum dag_run_state s)
{
	return name_of(run_names, DAG_RUN_STATE_COUNT, (unsigned)s);
}

int job_state_from_name(const char *name, enum job_state *out)
{
	int i = index_of(job_names, JOB_STATE_COUNT, name);
	if (i < 0)
		return -1;
	*out = (enum job_state)i;
	return 0;
}

int task_state_from_name(const char *name, enum task_state *out)
{
	int i = index_of(task_names, TASK_STATE_COUNT, name);
	if (i < 0)
		return -1;
	*out = (enum task_state)i;
	return 0;
}

int dag_ti_state_from_name(const char *name, enum dag_ti_state *out)
{
	int i = index_of(ti_names, DAG_TI_STATE_COUNT, name);
	if (i < 0)
		return -1;
	*out = (enum dag_ti_state)i;
	return 0;
}

int dag_run_state_from_name(const char *name, enum dag_run_state *out)
{
	int i = index_of(run_names, DAG_RUN_STATE_COUNT, name);
	if (i < 0)
		return -1;
	*out = (enum dag_run_state)i;
	return 0;
}

/* ---- what a state is ---- */

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

bool dag_ti_state_is_final(enum dag_ti_state s)
{
	return s == DAG_TI_SUCCESS || s == DAG_TI_FAILED || s == DAG_TI_UPSTREAM_FAILED ||
	       s == DAG_TI_SKIPPED || s == DAG_TI_REMOVED;
}

bool dag_ti_state_is_active(enum dag_ti_state s)
{
	return s == DAG_TI_QUEUED || s == DAG_TI_RUNNING;
}

bool dag_ti_state_is_failure(enum dag_ti_state s)
{
	return s == DAG_TI_FAILED || s == DAG_TI_UPSTREAM_FAILED;
}

bool dag_run_state_is_final(enum dag_run_state s)
{
	return s == DAG_RUN_SUCCESS || s == DAG_RUN_FAILED;
}
