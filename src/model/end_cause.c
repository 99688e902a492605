/* end_cause.c: the name table of end causes (end_cause.h). */
#include "model/end_cause.h"

#include <string.h>

static const char *const names[] = {
    [END_CAUSE_NONE] = "none",
    [END_CAUSE_EXITED] = "exited",
    [END_CAUSE_SIGNALLED] = "signalled",
    [END_CAUSE_OOM] = "oom",
    [END_CAUSE_EXEC_TIMEOUT] = "execution_timeout",
    [END_CAUSE_GANG_TIMEOUT] = "gang_timeout",
    [END_CAUSE_ALLOC_TIMEOUT] = "allocation_timeout",
    [END_CAUSE_STOPPED] = "stopped",
    [END_CAUSE_KILLED] = "killed",
    [END_CAUSE_LAUNCHER_LOST] = "launcher_lost",
    [END_CAUSE_CLUSTER_CANCELLED] = "cluster_cancelled",
    [END_CAUSE_CLUSTER_TIME_LIMIT] = "cluster_time_limit",
    [END_CAUSE_LAUNCH_FAILED] = "launch_failed",
    [END_CAUSE_REJECTED] = "rejected",
};

_Static_assert(sizeof(names) / sizeof(names[0]) == END_CAUSE_COUNT, "a name per cause");

const char *end_cause_name(enum end_cause c)
{
	return (unsigned)c < END_CAUSE_COUNT ? names[c] : "?";
}

int end_cause_from_name(const char *name, enum end_cause *out)
{
	if (!name)
		return -1;
	for (unsigned i = 0; i < END_CAUSE_COUNT; i++) {
		if (strcmp(name, names[i]) == 0) {
			*out = (enum end_cause)i;
			return 0;
		}
	}
	return -1;
}
