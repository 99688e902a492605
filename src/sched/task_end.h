/* task_end.h: how a task ends, from what is known of its end.
 *
 * Pure.  The job manager asks when a launcher reports `exited`, when a
 * launcher is gone without a report (its process ended, it vanished while
 * the server was down, or a gang backend says the gang is over), when a
 * backend gives a verdict on a task that did report, and when a task's
 * launcher could not be started; it writes the answer into the task's row
 * and then asks job_progress_decide() what follows for the job.
 *
 * Every rule reads the report's cause (model/end_cause.h), never its words
 * or an exit code as a marker.  Rules (docs/internals/sched.md, "Task ends"):
 *  - a report: cause oom is failed "OOMKilled" (exit 137 when it gave none)
 *    whatever the exit code; a program that exited (or was stopped) with 0
 *    and no signal is succeeded; while weir stops the task (the job winds
 *    down, or the attempt is not current) any other end is killed, cause
 *    stopped ("stopped" unless the launcher said why); else failed with
 *    the report's cause and the launcher's words, "killed by signal N" or
 *    "exited N";
 *  - a launcher gone without a report: killed, stopped, "stopped" while
 *    weir stops the task; else by the backend's verdict: out of memory is
 *    failed, oom, exit 128 + SIGKILL, SIGKILL; the cluster's time limit is
 *    failed, cluster_time_limit, exit 124 (like weir's own execution
 *    timeout, never retried); cancelled by someone else is killed,
 *    cluster_cancelled, exit 128 + SIGKILL, SIGKILL; no verdict is lost,
 *    launcher_lost (job_progress counts that as a SIGKILL); the reason is
 *    `why`.  The caller gives SIGKILL's number (sched includes no system
 *    header);
 *  - a verdict on a task that reported a failure: the task takes the
 *    verdict's cause and words (and oom_killed for an OOM); so does the
 *    job's reason when this attempt already gave the job a final state
 *    other than succeeded;
 *  - a launcher that cannot be started: lost, launch_failed, "cannot start:
 *    WHY".
 */
#ifndef WEIR_SCHED_TASK_END_H
#define WEIR_SCHED_TASK_END_H

#include <stdbool.h>

#include "model/end_cause.h"
#include "sched/states.h"

/* What a gang backend says about an attempt that is over, for its tasks. */
enum task_verdict {
	TASK_VERDICT_NONE = 0,   /* gone, nobody says why */
	TASK_VERDICT_OOM,        /* out of memory */
	TASK_VERDICT_TIME_LIMIT, /* the cluster's time limit or deadline */
	TASK_VERDICT_CANCELLED,  /* cancelled by someone other than weir */
};

#define TASK_END_REASON_MAX 1024

/* A task's end as its row keeps it. */
struct task_end {
	enum task_state state;
	enum end_cause cause;
	int exit_code; /* -1: none */
	int signal;    /* 0: none */
	bool oom_killed;
	char reason[TASK_END_REASON_MAX];
};

/* A launcher's `exited` report. */
struct task_report {
	enum end_cause cause; /* as reported (launch/report.h) */
	int exit_code;        /* -1: none */
	int signal;           /* 0: none */
	bool oom_killed;
	const char *reason; /* the launcher's words; NULL or "": none */
};

/* The end a report gives; `stopping`: weir is stopping the task. */
void task_end_reported(const struct task_report *r, bool stopping, struct task_end *out);

/* A launcher gone without reporting.  `was`: the task as it stands (its
 * exit_code, signal and oom_killed are kept where the rules set none);
 * `why`: the words for it ("launcher exited 1 without reporting", the
 * backend's). */
void task_end_gone(const struct task_end *was, bool stopping, enum task_verdict v, const char *why,
                   int sigkill, struct task_end *out);

/* A verdict (not TASK_VERDICT_NONE) on a task that has already ended
 * `state` in attempt `task_attempt`, for a job in `job_state` at
 * `job_attempt`. */
struct task_retold {
	bool task;            /* the task's reason becomes the verdict's words */
	enum end_cause cause; /* ... and its cause this one */
	bool oom_killed;      /* ... and it is marked OOM-killed */
	bool job;             /* the job's reason becomes "ROLE:INDEX WORDS" */
};
void task_end_verdict(enum task_state state, int task_attempt, enum job_state job_state,
                      int job_attempt, enum task_verdict v, struct task_retold *out);

/* A launcher that could not be started (`why`: the error). */
void task_end_not_started(const struct task_end *was, const char *why, struct task_end *out);

#endif
