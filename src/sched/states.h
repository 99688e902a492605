/* states.h: job and task states, their names, and the legal moves between them.
 *
 * DESIGN.md puts the nouns in src/model/; these live in src/sched/ for now
 * because the scheduler is their first user.  The names are the API's and
 * the store's text ("queued", "running", ...; docs/api.md).
 *
 * Job:  queued -> starting -> running -> succeeded | failed | killed
 *       starting | running -> queued     (a gang restart: the next attempt)
 *       queued | starting -> failed | killed
 * Task: pending -> starting -> running -> succeeded | failed | killed | lost
 *       any unended state may move forward (a launcher that re-registers after
 *       a server restart may report `running` for a task still `pending`) or
 *       end; an ended state never moves.
 *
 * Pure functions; no allocation, no errors beyond the return value.
 */
#ifndef WEIR_SCHED_STATES_H
#define WEIR_SCHED_STATES_H

#include <stdbool.h>

enum job_state {
	JOB_QUEUED = 0,
	JOB_STARTING, /* gang allocated, launchers starting / registering */
	JOB_RUNNING,  /* every task registered: the gang is complete */
	JOB_SUCCEEDED,
	JOB_FAILED,
	JOB_KILLED,
};

enum task_state {
	TASK_PENDING = 0, /* allocated, launcher not yet registered */
	TASK_STARTING,    /* registered, waiting for the gang */
	TASK_RUNNING,     /* the user program runs */
	TASK_SUCCEEDED,
	TASK_FAILED,
	TASK_KILLED,
	TASK_LOST, /* its launcher vanished without reporting */
};

/* "queued", ...; never NULL ("?" for a value out of range). */
const char *job_state_name(enum job_state s);
const char *task_state_name(enum task_state s);

/* 0, or -1 when `name` is not a state (NULL included). */
int job_state_from_name(const char *name, enum job_state *out);
int task_state_from_name(const char *name, enum task_state *out);

bool job_state_is_final(enum job_state s);
bool task_state_is_final(enum task_state s);
/* Queued, starting or running: holds or waits for resources. */
bool job_state_is_active(enum job_state s);

/* Whether `from` -> `to` is a legal move (see the top of this file).
 * from == to is legal for unended states (an idempotent report). */
bool job_state_can_move(enum job_state from, enum job_state to);
bool task_state_can_move(enum task_state from, enum task_state to);

#endif
