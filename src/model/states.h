/* states.h: the states of jobs, tasks, DAG runs and task instances, and
 * their names: one name table per enum (states.c).
 *
 * These are nouns: the store keeps them, the scheduler moves them, the API
 * and the CLI show them.  The names are the text of the API, of the store's
 * columns and of DAG files ("queued", "up_for_retry", ...; docs/api.md);
 * the DAG names are Airflow's so that its clients read them unchanged
 * ("none" is Airflow's null).  A name is turned into its enum once, where
 * text comes in (SQL, JSON, a query parameter), and back where it goes out.
 *
 * What a state is (final, active, a failure) goes with it, here: the CLI
 * and the API need it as much as the scheduler.  Which moves are legal is
 * the scheduler's rule, beside the decisions that follow it:
 * sched/states.h and sched/dag_states.h.
 *
 * Pure functions; no allocation.
 */
#ifndef WEIR_MODEL_STATES_H
#define WEIR_MODEL_STATES_H

#include <stdbool.h>

enum job_state {
	JOB_QUEUED = 0,
	JOB_STARTING, /* gang allocated, launchers starting / registering */
	JOB_RUNNING,  /* every task registered: the gang is complete */
	JOB_SUCCEEDED,
	JOB_FAILED,
	JOB_KILLED,
};

#define JOB_STATE_COUNT (JOB_KILLED + 1)

enum task_state {
	TASK_PENDING = 0, /* allocated, launcher not yet registered */
	TASK_STARTING,    /* registered, waiting for the gang */
	TASK_RUNNING,     /* the user program runs */
	TASK_SUCCEEDED,
	TASK_FAILED,
	TASK_KILLED,
	TASK_LOST, /* its launcher vanished without reporting */
};

#define TASK_STATE_COUNT (TASK_LOST + 1)

enum dag_ti_state {
	DAG_TI_NONE = 0,
	DAG_TI_SCHEDULED, /* its dependencies are met; waits for a pool slot */
	DAG_TI_QUEUED,    /* handed to the job path: a job exists */
	DAG_TI_RUNNING,   /* its job runs */
	DAG_TI_SUCCESS,
	DAG_TI_FAILED,
	DAG_TI_UP_FOR_RETRY,      /* failed; runs again at its retry time */
	DAG_TI_UPSTREAM_FAILED,   /* will not run: an upstream failed */
	DAG_TI_SKIPPED,           /* will not run: the trigger rule said so */
	DAG_TI_REMOVED,           /* its task is no longer in the DAG file */
	DAG_TI_UP_FOR_RESCHEDULE, /* a sensor in mode reschedule between pokes: holds no
	                           * slot and no process; the server pokes it when due */
};

#define DAG_TI_STATE_COUNT (DAG_TI_UP_FOR_RESCHEDULE + 1)

enum dag_run_state {
	DAG_RUN_QUEUED = 0,
	DAG_RUN_RUNNING,
	DAG_RUN_SUCCESS,
	DAG_RUN_FAILED,
};

#define DAG_RUN_STATE_COUNT (DAG_RUN_FAILED + 1)

/* "queued", ...; never NULL ("?" for a value out of range). */
const char *job_state_name(enum job_state s);
const char *task_state_name(enum task_state s);
const char *dag_ti_state_name(enum dag_ti_state s);
const char *dag_run_state_name(enum dag_run_state s);

/* 0, or -1 when `name` is not a state (NULL included); *out unchanged then. */
int job_state_from_name(const char *name, enum job_state *out);
int task_state_from_name(const char *name, enum task_state *out);
int dag_ti_state_from_name(const char *name, enum dag_ti_state *out);
int dag_run_state_from_name(const char *name, enum dag_run_state *out);

/* ---- what a state is ---- */

bool job_state_is_final(enum job_state s);
bool task_state_is_final(enum task_state s);
/* Queued, starting or running: holds or waits for resources. */
bool job_state_is_active(enum job_state s);

/* Final: success, failed, upstream_failed, skipped, removed (Airflow's
 * "finished"; up_for_retry is not: it runs again). */
bool dag_ti_state_is_final(enum dag_ti_state s);
/* Holds a pool slot and counts for max_active_tasks: queued, running. */
bool dag_ti_state_is_active(enum dag_ti_state s);
/* Counts as a failure for the run's result and the trigger rules: failed,
 * upstream_failed. */
bool dag_ti_state_is_failure(enum dag_ti_state s);

bool dag_run_state_is_final(enum dag_run_state s);

#endif
