/* dag_ops.h: what the parts of the DAG manager's API ops share (dag_ops.c:
 * DAGs, runs, task instances, import errors; dag_list_ops.c: the lists and
 * their filters; dag_ui_ops.c: a DAG's structure, tries and the web UI's
 * views).  Not for use outside
 * src/server/dag_*.c.
 */
#ifndef WEIR_SERVER_DAG_OPS_H
#define WEIR_SERVER_DAG_OPS_H

#include <stdint.h>

#include <jansson.h>

#include "api/dag_api.h"
#include "lib/strvec.h"
#include "model/dag_spec.h"
#include "server/dag_internal.h"
#include "store/dag_store.h"

/* The logical date of the DAG's next scheduled run (the one after its
 * latest), CRON_NEVER when none is due (paused, removed, unscheduled, past
 * its end); *spec gets the DAG's last good parse (NULL: none). */
int64_t dm_next_dagrun(struct dag_manager *dm, const struct dag_row *row,
                       const struct dag_spec **spec);

/* 0, or a WEIR_E_NOT_FOUND naming the DAG when the store has no such DAG. */
int dm_dag_must_exist(struct dag_manager *dm, const char *dag_id, struct weir_error *err);
/* A task instance as the API shows it (TaskInstance), what its job says
 * included; a new reference (NULL: out of memory). */
json_t *dm_ti_json(struct dag_manager *dm, const struct dag_ti_row *r,
                   const struct dag_run_row *run);

/* Clears the chosen TIs (task_ids; none: every task) of one run, with
 * their downstream and only the failed ones as asked; appends the
 * references of what it clears (or, dry_run, would clear) to `out`.
 * Inside a turn. */
int dm_clear_run(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const struct strvec *task_ids, bool downstream, bool only_failed, bool dry_run,
                 json_t *out, struct weir_error *err);

/* dag_list_ops.c: GET /dags, .../dagRuns, .../taskInstances and the batch lists. */
json_t *dm_op_list_dags(void *ctx, const struct dag_list_query *q, struct weir_error *err);
json_t *dm_op_list_runs(void *ctx, const char *dag_id, const struct dag_run_list_query *q,
                        struct weir_error *err);
json_t *dm_op_list_tis(void *ctx, const char *dag_id, const char *run_id,
                       const struct dag_ti_list_query *q, struct weir_error *err);

#endif
