/* runs.h: where runs come from and when they start (runs.c): schedules
 * (with catchup), the queue of runs under max_active_runs, due retries.
 * dm_check_run_id() and dm_create_run() are in server/dag_internal.h.
 * Each pass runs inside a turn and sets dm->pass_again when it moved
 * something that another pass may follow.
 */
#ifndef WEIR_SERVER_DAG_MANAGER_RUNS_H
#define WEIR_SERVER_DAG_MANAGER_RUNS_H

#include "server/dag_internal.h"

/* Scheduled runs that are due now are created (paused DAGs make none). */
void dm_schedule_pass(struct dag_manager *dm);

/* Runs with a due retry are told so (DAG_EV_TIMER); later ones are noted
 * for the wake-up timer. */
void dm_retry_pass(struct dag_manager *dm);

/* Queued runs start as max_active_runs allows (paused DAGs wait). */
void dm_start_runs(struct dag_manager *dm);

#endif
