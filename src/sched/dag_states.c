/* dag_states.c: the legal moves between DAG run and TI states (dag_states.h). */
#include "sched/dag_states.h"

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
		       to == DAG_TI_FAILED || to == DAG_TI_SKIPPED ||
		       to == DAG_TI_UP_FOR_RESCHEDULE;
	case DAG_TI_UP_FOR_RESCHEDULE:
		/* a waiting sensor's poke ended it (or a timeout), or a user marked it */
		return to == DAG_TI_SUCCESS || to == DAG_TI_FAILED || to == DAG_TI_UP_FOR_RETRY ||
		       to == DAG_TI_SKIPPED;
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
