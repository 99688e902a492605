/* dag_states.h: the states of DAG runs and task instances (Airflow's names),
 * and the legal moves between them.
 *
 * The names are the API's and the store's text; they are Airflow's so that
 * clients written for Airflow read them unchanged ("none" is Airflow's null).
 *
 * Task instance (TI):
 *   none -> scheduled -> queued -> running -> success | failed | up_for_retry
 *   none -> upstream_failed | skipped        (trigger rules, cascading)
 *   up_for_retry -> scheduled                (its retry time came)
 *   scheduled | queued | up_for_retry -> failed | success   (marked by a user)
 *   any -> none                              (cleared by a user)
 *   any -> removed                           (its task left the DAG file)
 *   a TI may skip forward among scheduled < queued < running (recovery may
 *   learn of a running job before its queued state was written).
 * Run:
 *   queued -> running -> success | failed
 *   queued -> success | failed               (marked by a user)
 *   success | failed -> queued               (cleared by a user)
 *   running -> queued                        (cleared while it ran: waits
 *                                             for max_active_runs again)
 *
 * Pure functions; no allocation.
 */
#ifndef WEIR_SCHED_DAG_STATES_H
#define WEIR_SCHED_DAG_STATES_H

#include <stdbool.h>

enum dag_ti_state {
	DAG_TI_NONE = 0,
	DAG_TI_SCHEDULED, /* its dependencies are met; waits for a pool slot */
	DAG_TI_QUEUED,    /* handed to the job path: a job exists */
	DAG_TI_RUNNING,   /* its job runs */
	DAG_TI_SUCCESS,
	DAG_TI_FAILED,
	DAG_TI_UP_FOR_RETRY,    /* failed; runs again at its retry time */
	DAG_TI_UPSTREAM_FAILED, /* will not run: an upstream failed */
	DAG_TI_SKIPPED,         /* will not run: the trigger rule said so */
	DAG_TI_REMOVED,         /* its task is no longer in the DAG file */
};

#define DAG_TI_STATE_COUNT (DAG_TI_REMOVED + 1)

enum dag_run_state {
	DAG_RUN_QUEUED = 0,
	DAG_RUN_RUNNING,
	DAG_RUN_SUCCESS,
	DAG_RUN_FAILED,
};

#define DAG_RUN_STATE_COUNT (DAG_RUN_FAILED + 1)

/* "none", "scheduled", ...; never NULL ("?" out of range). */
const char *dag_ti_state_name(enum dag_ti_state s);
const char *dag_run_state_name(enum dag_run_state s);

/* 0, or -1 when `name` is not a state (NULL included). */
int dag_ti_state_from_name(const char *name, enum dag_ti_state *out);
int dag_run_state_from_name(const char *name, enum dag_run_state *out);

/* Final: success, failed, upstream_failed, skipped, removed (Airflow's
 * "finished"; up_for_retry is not: it runs again). */
bool dag_ti_state_is_final(enum dag_ti_state s);
/* Holds a pool slot and counts for max_active_tasks: queued, running. */
bool dag_ti_state_is_active(enum dag_ti_state s);
/* Counts as a failure for the run's result and the trigger rules: failed,
 * upstream_failed. */
bool dag_ti_state_is_failure(enum dag_ti_state s);

bool dag_run_state_is_final(enum dag_run_state s);

/* Whether `from` -> `to` is legal (the top of this file).  from == to is
 * legal (an idempotent write). */
bool dag_ti_state_can_move(enum dag_ti_state from, enum dag_ti_state to);
bool dag_run_state_can_move(enum dag_run_state from, enum dag_run_state to);

#endif
