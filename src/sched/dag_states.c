/* dag_states.c: DAG run and task instance state names and legal moves
 * (dag_states.h). */
#include "sched/dag_states.h"

#include <string.h>

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
};

static const char *const run_names[] = {
    [DAG_RUN_QUEUED] = "queued",
    [DAG_RUN_RUNNING] = "running",
    [DAG_RUN_SUCCESS] = "success",
    [DAG_RUN_FAILED] = "failed",
};

_Static_assert(sizeof(ti_names) / sizeof(ti_names[0]) == DAG_TI_STATE_COUNT, "a name per state");
_Static_assert(sizeof(run_names) / sizeof(run_names[0]) == DAG_RUN_STATE_COUNT, "a name per state");

const char *dag_ti_state_name(enum dag_ti_state s)
{
	if ((unsigned)s >= DAG_TI_STATE_COUNT)
		return "?";
	return ti_names[s];
}

const char *dag_run_state_name(enum dag_run_state s)
{
	if ((unsigned)s >= DAG_RUN_STATE_COUNT)
		return "?";
	return run_names[s];
}

int dag_ti_state_from_name(const char *name, enum dag_ti_state *out)
{
	if (!name)
		return -1;
	for (unsigned i = 0; i < DAG_TI_STATE_COUNT; i++) {
		if (strcmp(name, ti_names[i]) == 0) {
			*out = (enum dag_ti_state)i;
			return 0;
		}
	}
	return -1;
}

int dag_run_state_from_name(const char *name, enum dag_run_state *out)
{
	if (!name)
		return -1;
	for (unsigned i = 0; i < DAG_RUN_STATE_COUNT; i++) {
		if (strcmp(name, run_names[i]) == 0) {
			*out = (enum dag_run_state)i;
			return 0;
		}
	}
	return -1;
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

bool dag_ti_state_can_move(enum dag_ti_state from, enum dag_ti_state to)
{
	if ((unsigned)from >= DAG_TI_STATE_COUNT || (unsigned)to >= DAG_TI_STATE_COUNT)
		return false;
	/* a clear resets anything; a task that left the file removes anything */
	if (from == to || to == DAG_TI_NONE || to == DAG_TI_REMOVED)
		return true;
	switch (from) {
	case DAG_TI_NONE:
		return to == DAG_TI_SCHEDULED || to == DAG_TI_UPSTREAM_FAILED ||
		       to == DAG_TI_SKIPPED || to == DAG_TI_SUCCESS || to == DAG_TI_FAILED;
	case DAG_TI_SCHEDULED:
		return to == DAG_TI_QUEUED || to == DAG_TI_RUNNING || to == DAG_TI_SUCCESS ||
		       to == DAG_TI_FAILED || to == DAG_TI_SKIPPED;
	case DAG_TI_QUEUED:
		return to == DAG_TI_RUNNING || to == DAG_TI_SUCCESS || to == DAG_TI_FAILED ||
		       to == DAG_TI_UP_FOR_RETRY || to == DAG_TI_SKIPPED;
	case DAG_TI_RUNNING:
		return to == DAG_TI_SUCCESS || to == DAG_TI_FAILED || to == DAG_TI_UP_FOR_RETRY ||
		       to == DAG_TI_SKIPPED;
	case DAG_TI_UP_FOR_RETRY:
		return to == DAG_TI_SCHEDULED || to == DAG_TI_SUCCESS || to == DAG_TI_FAILED ||
		       to == DAG_TI_SKIPPED;
	case DAG_TI_SUCCESS:
	case DAG_TI_FAILED:
	case DAG_TI_UPSTREAM_FAILED:
	case DAG_TI_SKIPPED:
		/* a user may mark a finished TI the other way */
		return to == DAG_TI_SUCCESS || to == DAG_TI_FAILED;
	case DAG_TI_REMOVED:
		return false;
	}
	return false;
}

bool dag_run_state_can_move(enum dag_run_state from, enum dag_run_state to)
{
	if ((unsigned)from >= DAG_RUN_STATE_COUNT || (unsigned)to >= DAG_RUN_STATE_COUNT)
		return false;
	if (from == to)
		return true;
	switch (from) {
	case DAG_RUN_QUEUED:
		return true;
	case DAG_RUN_RUNNING:
		return to != DAG_RUN_RUNNING;
	case DAG_RUN_SUCCESS:
	case DAG_RUN_FAILED:
		/* cleared (back to the queue) or marked the other way */
		return to != DAG_RUN_RUNNING;
	}
	return false;
}
