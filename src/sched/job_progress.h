/* job_progress.h: what a job does next, from its tasks' states and an event.
 *
 * Pure.  The server calls job_progress_decide() after a task of the current
 * attempt ends, when a user kills the job, or when a timer expired, and
 * carries out the decision: stop the tasks marked, then record the job's
 * result, or (RESTART_GANG) re-queue it with attempt + 1 once every task of
 * the attempt has ended.  Once a decision other than NONE is taken the job
 * is winding down: the server does not ask again for that attempt (late
 * exits of stopped tasks are only recorded).
 *
 * Rules (docs/internals/sched.md):
 *  - tracked tasks are those of roles that are not untracked (sidecars are
 *    untracked);
 *  - a task fails when it ends failed, killed (not by us) or lost; its exit
 *    code for retry purposes is 137 if lost (its launcher vanished: taken
 *    as a SIGKILL), 137 for the cause oom, 128+signal if signalled, else
 *    its exit code;
 *  - SUCCESS_CHIEF: the deciding role's (job_spec_deciding_role) index 0
 *    failing fails the job at once; another tracked task failing is ignored
 *    unless fail_on_worker_failure (a `worker`) or its role has
 *    stop_on_failure; SUCCESS_ALL_WORKERS: any tracked failure fails at
 *    once; an untracked role fails the job only with stop_on_failure;
 *  - a failure at once is a RESTART_GANG when its exit code is in
 *    [retry_exit_min, retry_exit_max] and attempt <= max_restarts, unless
 *    its cause is a timeout that ends the job (execution_timeout,
 *    cluster_time_limit: never retried, whatever the exit code), else
 *    JOB_FAILED with that exit code; every unended task is stopped;
 *  - when every tracked task has ended without that, the policy gives the
 *    result (the deciding task's, or all succeeded) and unended untracked
 *    tasks are stopped;
 *  - kill by the user: JOB_KILLED, never retried;
 *  - allocation and execution timeouts: JOB_FAILED; a registration timeout
 *    restarts while restarts are left;
 *  - the decision's cause: the failing (or deciding) task's, killed for a
 *    kill, the timer's (allocation_timeout, gang_timeout, execution_timeout)
 *    for a timeout, exited for a success.
 */
#ifndef WEIR_SCHED_JOB_PROGRESS_H
#define WEIR_SCHED_JOB_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"
#include "model/end_cause.h"
#include "model/job_spec.h"
#include "sched/states.h"
#include "sched/timers.h"

/* One task of the current attempt, as the server knows it. */
struct task_status {
	const char *role; /* borrowed */
	int index;
	enum task_state state;
	enum end_cause cause; /* when ended */
	int exit_code;        /* when ended; -1: none */
	int signal;           /* 0: none */
	const char *reason;   /* borrowed; why it ended as the launcher said it
	                       * ("execution timeout after 60s"); NULL or "": none */
};

enum progress_event_kind {
	PROGRESS_TASK_ENDED = 0, /* role/index: the task that just ended; role NULL:
	                          * re-evaluate every task (recovery) */
	PROGRESS_KILL,           /* the user asked */
	PROGRESS_TIMEOUT,        /* timer says which */
};

struct progress_event {
	enum progress_event_kind kind;
	const char *role; /* PROGRESS_TASK_ENDED */
	int index;
	enum timer_kind timer; /* PROGRESS_TIMEOUT */
	const char *reason;    /* PROGRESS_TIMEOUT: timers_check()'s text; may be NULL */
};

enum progress_outcome {
	PROGRESS_NONE = 0,
	PROGRESS_JOB_SUCCEEDED,
	PROGRESS_JOB_FAILED,
	PROGRESS_JOB_KILLED,
	PROGRESS_RESTART_GANG,
};

#define PROGRESS_REASON_MAX 256

struct progress_decision {
	enum progress_outcome outcome;
	enum end_cause cause; /* why (the rules above); END_CAUSE_NONE for NONE */
	int exit_code; /* JOB_SUCCEEDED: 0; JOB_FAILED: the failing task's (-1 for a timeout) */
	char reason[PROGRESS_REASON_MAX]; /* "worker:1 exited 1", "chief:0 OOMKilled",
	                                   * "worker:0 killed by signal 9", ...; "" for NONE */
	bool *stop; /* stop[i]: stop tasks[i]; owned, n_tasks entries (NULL when 0) */
	size_t n_tasks;
	size_t n_stop; /* how many are true */
};

/* Decides for a job at `attempt` (from 1) given all `n` tasks of that
 * attempt.  0 with `out` filled (release it), or -1 with err (out of
 * memory, or an event naming a task not in `tasks`: WEIR_E_INVALID). */
int job_progress_decide(const struct job_spec *spec, int attempt, const struct task_status *tasks,
                        size_t n, const struct progress_event *ev, struct progress_decision *out,
                        struct weir_error *err);

void progress_decision_release(struct progress_decision *d);

/* Whether every task in `tasks` has ended (the server's cue to re-queue a
 * restarting job or release its allocation). */
bool job_progress_all_ended(const struct task_status *tasks, size_t n);

/* The exit code a task's end counts as (see the rules above); -1 when it
 * has not ended or succeeded without one. */
int job_progress_effective_exit(const struct task_status *t);

/* The job's result a final decision gives (SUCCEEDED, FAILED, KILLED):
 * true with *state and *exit_code (0 for a success, else the decision's);
 * false for NONE and RESTART_GANG. */
bool job_progress_result(const struct progress_decision *d, enum job_state *state, int *exit_code);

/* A kill of a job that has nothing running in its current attempt (queued,
 * or its gang already being stopped for a restart): JOB_KILLED at once,
 * cause killed, "killed by the user", no exit code, nothing to stop. */
void job_progress_kill_idle(struct progress_decision *out);

/* What the end of a decided attempt means, once the server looks at it
 * (after a decision, or a late task end while winding down). */
struct progress_gang {
	bool all_ended;       /* every task of the current attempt has ended */
	bool final;           /* the job's state is final already */
	bool result_waits;    /* a decided result waits for the last task */
	bool restart_pending; /* RESTART_GANG was decided for the attempt */
};

enum progress_gang_end {
	PROGRESS_GANG_WAIT = 0, /* a task still runs, or nothing was decided */
	PROGRESS_GANG_RECORD,   /* the waiting result becomes the job's; then as FINAL */
	PROGRESS_GANG_FINAL,    /* the job has ended: its resources go back */
	PROGRESS_GANG_RESTART,  /* back to the queue as attempt + 1 */
};

/* A result waiting wins over a restart (a kill while restarting). */
enum progress_gang_end job_progress_gang_end(const struct progress_gang *g);

const char *progress_outcome_name(enum progress_outcome o);

#endif
