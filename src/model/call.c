/* call.c: a call's states, their names and the rule of their moves
 * (call.h). */
#include "model/call.h"

#include <string.h>

static const char *const names[CALL_STATE_COUNT] = {
    [CALL_RUNNING] = "running",     [CALL_SUCCEEDED] = "succeeded", [CALL_FAILED] = "failed",
    [CALL_CANCELLED] = "cancelled", [CALL_CRASHED] = "crashed",
};

const char *call_state_name(enum call_state s)
{
	return (unsigned)s < CALL_STATE_COUNT ? names[s] : "?";
}

int call_state_from_name(const char *name, enum call_state *out)
{
	if (!name)
		return -1;
	for (int i = 0; i < CALL_STATE_COUNT; i++)
		if (!strcmp(name, names[i])) {
			*out = (enum call_state)i;
			return 0;
		}
	return -1;
}

bool call_state_final(enum call_state s)
{
	return s != CALL_RUNNING;
}

bool call_state_may_move(enum call_state from, enum call_state to)
{
	(void)to;
	return !call_state_final(from);
}
