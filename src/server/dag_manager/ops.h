/* ops.h: what the DAG manager's API ops share (ops.c: DAGs, runs, task
 * instances, import errors, the dag_api_ops table; list_ops.c: the lists
 * and their filters; ui_ops.c: a DAG's structure, tries and the web UI's
 * views; admin_ops.c, read_ops.c and dataset_ops.c use them too).  The ops
 * sit on top of the manager's core (dm_internal.h), which never includes
 * this.  Not for use outside the ops files of src/server/dag_manager/.
 */
#ifndef WEIR_SERVER_DAG_MANAGER_OPS_H
#define WEIR_SERVER_DAG_MANAGER_OPS_H

#include <stdint.h>

#include <jansson.h>

#include "api/dag_api.h"
#include "lib/strvec.h"
#include "model/dag_spec.h"
#include "server/dag_manager/dm_internal.h"
#include "store/dag_store.h"

/* ops.c: what a DAG's view needs beside its row (d->row filled): its spec
 * and next scheduled run. */
void dm_dag_view_fill(struct dag_manager *dm, struct dag_view *d);
/* A run (DAGRun), a new reference: for the admin ops, which answer JSON. */
json_t *dm_run_json(const struct dag_run_row *r);
/* A task instance and its run, or a not-found error naming the DAG, run or task that is
 * missing; on success the caller releases both rows. */
int dm_ti_lookup(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const char *task_id, int map_index, struct dag_run_row *run, struct dag_ti_row *ti,
                 struct weir_error *err);

/* admin_ops.c: the rest of Airflow's operations (api/dag_admin_api.h). */
const struct dag_admin_ops *dm_admin_ops(void);

/* ui_ops.c: the ops of the DAG structure and web UI routes (api/dag_api.h). */
int dm_op_dag_tasks(void *ctx, const char *dag_id, struct dag_view *out, struct weir_error *err);
int dm_op_dag_details(void *ctx, const char *dag_id, struct dag_view *out, struct weir_error *err);
int dm_op_ti_tries(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                   int map_index, struct dag_ti_tries *out, struct weir_error *err);
int dm_op_ui_dags(void *ctx, const struct dag_reader *reader, int limit, int offset,
                  struct dag_ui_dags *out, struct weir_error *err);
int dm_op_ui_grid(void *ctx, const char *dag_id, int limit, struct dag_grid *out,
                  struct weir_error *err);
int dm_op_ui_stats(void *ctx, const char *dag_id, int limit, struct dag_run_stats *out,
                   struct weir_error *err);

/* The logical date of the DAG's next scheduled run (the one after its
 * latest), CRON_NEVER when none is due (paused, removed, unscheduled, past
 * its end); *spec gets the DAG's last good parse (NULL: none). */
int64_t dm_next_dagrun(struct dag_manager *dm, const struct dag_row *row,
                       const struct dag_spec **spec);

/* 0, or a WEIR_E_NOT_FOUND naming the DAG when the store has no such DAG. */
int dm_dag_check_exists(struct dag_manager *dm, const char *dag_id, struct weir_error *err);
/* Run `run_id` of DAG `dag_id` into *row (dag_run_row_release it): 0; -1
 * with err, WEIR_E_NOT_FOUND "DAG D has no run R" when the store has no
 * such run, the store's own error else. */
int dm_run_row(struct dag_manager *dm, const char *dag_id, const char *run_id,
               struct dag_run_row *row, struct weir_error *err);
/* What the TI's job says, into *v (zeroed by the caller), and its task's
 * class from the DAG's spec; *job (zeroed) holds the row v borrows from:
 * job_row_release it.  The job is read only when the view needs more than
 * that it exists (dag_view_ti_needs_job). */
struct dag_job_view;
struct job_row;
void dm_ti_job_view(struct dag_manager *dm, const struct dag_ti_row *r, struct job_row *job,
                    struct dag_job_view *v);
/* A task instance as the API shows it (TaskInstance), what its job says
 * included; a new reference (NULL: out of memory).  For the admin ops and
 * the tries, which answer JSON. */
json_t *dm_ti_json(struct dag_manager *dm, const struct dag_ti_row *r,
                   const struct dag_run_row *run);
/* Completes the typed row of a TI (t->row and t->logical_date filled):
 * what its job says (`job`, dm_ti_job_view's, copied) and its SLA miss,
 * unless no_sla_miss (the caller knows the TI's run has none,
 * notifier_run_has_sla_miss).  0; -1 out of memory. */
int dm_ti_view_fill(struct dag_manager *dm, struct dag_ti_view *t, const struct dag_job_view *job,
                    bool no_sla_miss, struct weir_error *err);

/* Clears the chosen TIs (task_ids; none: every task) of one run, with
 * their downstream and only the failed ones as asked; appends the
 * references of what it clears (or, dry_run, would clear) to `out`.
 * Inside a turn. */
int dm_clear_run(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const struct strvec *task_ids, bool downstream, bool only_failed, bool dry_run,
                 struct dag_ti_refs *out, struct weir_error *err);

/* markers.c: the references out->v[from..] were cleared (or, dry_run,
 * would be); each of them whose task is an ExternalTaskMarker (a spec's
 * `marker:`) clears its task of the other DAG's run of the same logical
 * date, with that task's downstream, appending to `out`, and follows the
 * markers among those in turn.  depth: how many markers led here (0 at the
 * API's clear); past a marker's recursion_depth, WEIR_E_INVALID. */
int dm_clear_markers(struct dag_manager *dm, struct dag_ti_refs *out, size_t from, bool only_failed,
                     bool dry_run, int depth, struct weir_error *err);

/* list_ops.c: GET /dags, .../dagRuns, .../taskInstances and the batch lists. */
int dm_op_list_dags(void *ctx, const struct dag_list_query *q, struct dag_list *out,
                    struct weir_error *err);
int dm_op_list_runs(void *ctx, const char *dag_id, const struct dag_run_list_query *q,
                    struct dag_run_list *out, struct weir_error *err);
int dm_op_list_tis(void *ctx, const char *dag_id, const char *run_id,
                   const struct dag_ti_list_query *q, struct dag_ti_list *out,
                   struct weir_error *err);

#endif
