/* dag_states.h: the legal moves between DAG run and task instance states
 * (the states, their Airflow names and what each is are in model/states.h).
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
 * Every move of a state goes through one setter per noun that asks these
 * first and refuses what they refuse (docs/internals/sched.md, "States").
 *
 * Pure functions; no allocation.
 */
#ifndef WEIR_SCHED_DAG_STATES_H
#define WEIR_SCHED_DAG_STATES_H

#include <stdbool.h>

#include "model/states.h"

/* Whether `from` -> `to` is legal (the top of this file).  from == to is
 * legal (an idempotent write). */
bool dag_ti_state_can_move(enum dag_ti_state from, enum dag_ti_state to);
bool dag_run_state_can_move(enum dag_run_state from, enum dag_run_state to);

#endif
