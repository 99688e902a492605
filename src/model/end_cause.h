/* end_cause.h: why a task or a job ended, as a type, and its names (one
 * table, end_cause.c).
 *
 * A task's end carries its cause from the launcher's `exited` report (the
 * field "cause", by name; docs/internals/launch.md) or from what the server
 * learns when a launcher is gone, through the task's row (its `cause`
 * column), to the job (the cause of the end that decided it: its row's
 * `cause`) and on to the DAG manager.  Decisions read the cause; exit codes
 * stay what the program or the launcher gave (users see them) and reasons
 * stay the words for people.
 *
 * Pure functions; no allocation.
 */
#ifndef WEIR_MODEL_END_CAUSE_H
#define WEIR_MODEL_END_CAUSE_H

enum end_cause {
	END_CAUSE_NONE = 0,          /* not ended (or nothing is known) */
	END_CAUSE_EXITED,            /* the program exited by itself, 0 or not */
	END_CAUSE_SIGNALLED,         /* a signal weir did not send ended the program */
	END_CAUSE_OOM,               /* out of memory (weir's limit, the kernel's, the cluster's) */
	END_CAUSE_EXEC_TIMEOUT,      /* weir's execution timeout (the launcher's or the server's) */
	END_CAUSE_GANG_TIMEOUT,      /* the gang did not form in time (registration) */
	END_CAUSE_ALLOC_TIMEOUT,     /* a job: no resources in time */
	END_CAUSE_STOPPED,           /* weir stopped it: its job wound down, or its launcher
	                              * was told to stop */
	END_CAUSE_KILLED,            /* a job: killed by a user */
	END_CAUSE_LAUNCHER_LOST,     /* its launcher vanished without a report */
	END_CAUSE_CLUSTER_CANCELLED, /* cancelled in the cluster by someone other than weir */
	END_CAUSE_CLUSTER_TIME_LIMIT, /* the cluster's time limit or deadline */
	END_CAUSE_LAUNCH_FAILED,      /* the launcher or the program could not be started */
	END_CAUSE_REJECTED, /* a job: it can never run (its spec, the queue, the cluster) */
};

#define END_CAUSE_COUNT (END_CAUSE_REJECTED + 1)

/* "exited", "oom", "execution_timeout", ...; never NULL ("?" out of range). */
const char *end_cause_name(enum end_cause c);
/* 0, or -1 when `name` is not a cause (NULL included); *out unchanged then. */
int end_cause_from_name(const char *name, enum end_cause *out);

#endif
