/* access.c: a role against the role a route asks for (sched/access.h). */
#include "sched/access.h"

bool access_allowed(enum weir_role have, enum weir_role need)
{
	if (need == ROLE_NONE)
		return true;
	if ((unsigned)have >= ROLE_COUNT || (unsigned)need >= ROLE_COUNT)
		return false;
	return have >= need;
}
