/* agent_task_state.c: the agent's task states and their moves
 * (agent_task_state.h). */
#include "launch/agent_task_state.h"

const char *agent_task_state_name(enum agent_task_state s)
{
	static const char *const names[AGENT_TASK_STATE_COUNT] = {"new", "running", "stopping",
	                                                          "acked", "gone"};
	return (unsigned)s < AGENT_TASK_STATE_COUNT ? names[s] : "?";
}

bool agent_task_state_can_move(enum agent_task_state from, enum agent_task_state to)
{
	if ((unsigned)from >= AGENT_TASK_STATE_COUNT || (unsigned)to >= AGENT_TASK_STATE_COUNT)
		return false;
	if (from == to)
		return true;
	switch (from) {
	case AGENT_TASK_NEW:
		return to == AGENT_TASK_RUNNING || to == AGENT_TASK_GONE;
	case AGENT_TASK_RUNNING:
		return to == AGENT_TASK_STOPPING || to == AGENT_TASK_ACKED || to == AGENT_TASK_GONE;
	case AGENT_TASK_STOPPING:
		return to == AGENT_TASK_ACKED || to == AGENT_TASK_GONE;
	case AGENT_TASK_ACKED:
		return to == AGENT_TASK_GONE;
	case AGENT_TASK_GONE:
		return to == AGENT_TASK_RUNNING;
	}
	return false;
}

bool agent_task_state_alive(enum agent_task_state s)
{
	return s == AGENT_TASK_RUNNING || s == AGENT_TASK_STOPPING || s == AGENT_TASK_ACKED;
}
