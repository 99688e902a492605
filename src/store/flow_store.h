/* flow_store.h: the reads and writes of a run's flow that the DAG tables'
 * statements (dag_store.h) have no form for: a run's previous run (for
 * depends_on_past) and a task's instances replaced when a foreach over an
 * upstream's output expands.
 */
#ifndef WEIR_STORE_FLOW_STORE_H
#define WEIR_STORE_FLOW_STORE_H

#include <stdint.h>

#include "lib/error.h"
#include "store/store.h"

/* The run id of the DAG's run with the latest logical date before
 * `logical_date` into *run_id (newly allocated; NULL when there is none).
 * 0, or -1 with err. */
int flow_store_previous_run(struct store *s, const char *dag_id, int64_t logical_date,
                            char **run_id, struct weir_error *err);

/* Deletes every instance of task `task_id` in the run, with their tries.
 * 0, or -1 with err. */
int flow_store_task_tis_delete(struct store *s, const char *dag_id, const char *run_id,
                               const char *task_id, struct weir_error *err);

#endif
