/* run_ctx.h: a run in memory for one turn (run_ctx.c): its rows read
 * once, the graph and TIs that sched/dag_run.h decides on, and every
 * decision written through it to the store.  dm_run_get(), dm_run_step()
 * and dm_run_event() are declared in server/dag_internal.h.
 */
#ifndef WEIR_SERVER_DAG_MANAGER_RUN_CTX_H
#define WEIR_SERVER_DAG_MANAGER_RUN_CTX_H

#include <stdbool.h>

#include <jansson.h>

#include "lib/error.h"
#include "model/dag_spec.h"
#include "server/dag_internal.h"
#include "store/dag_store.h"

/* Drops the run copies of this turn (the store alone holds the truth
 * between turns). */
void dm_run_cache_drop(struct dag_manager *dm);

/* Inserts the TIs of task `t` for a run: one, or one per foreach item of
 * the run's `params`.  0, or -1 with err. */
int dm_insert_task_tis(struct dag_manager *dm, const struct dag_spec *spec, const char *run_id,
                       const struct dag_task *t, const json_t *params, struct weir_error *err);

/* The TI index of (task_id, map_index) in the run, or -1. */
long dm_run_find_ti(const struct run_ctx *rc, const char *task_id, int map_index);

/* Records the TI's current try as `state` (its reason when not NULL; its
 * end time when `ended`), creating the try row when it has none.  Errors
 * are logged. */
void dm_try_update(struct dag_manager *dm, const struct dag_ti_row *r, const char *state,
                   const char *reason, bool ended);

#endif
