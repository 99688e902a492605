/* dag_ui_views.h: the JSON of a DAG's structure (Airflow's Task and
 * DAGDetail), of every try of a task instance, and of the web UI's
 * one-request views (the DAG list with recent runs, the grid of runs by
 * tasks, run durations and counts), rendered from typed rows
 * (store/dag_store.h) and DAG specs (model/dag_spec.h).
 *
 * Pure, as api/dag_views.h: new references or NULL out of memory, inputs
 * borrowed.
 */
#ifndef WEIR_API_DAG_UI_VIEWS_H
#define WEIR_API_DAG_UI_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/dag_views.h"
#include "model/dag_spec.h"
#include "model/states.h"
#include "store/dag_store.h"

/* The run states the stats count: every one, indexed by enum dag_run_state. */
#define DAG_VIEW_RUN_STATES DAG_RUN_STATE_COUNT

/* {"tasks":[Task...],"total_entries":N}, by task_id. */
json_t *dag_view_tasks(const struct dag_spec *s);
/* DAGDetail: the DAG (dag_view_dag) with its params as Param objects,
 * catchup, dates and the rest. */
json_t *dag_view_details(const struct dag_row *row, const struct dag_spec *s, int64_t next_ms);
/* {"task_instances":[one per try],"total_entries":n}: tries of one TI of
 * `run`; jobs[i] what try i's job says (NULL, or .known false: nothing). */
json_t *dag_view_tries(const struct dag_try_row *tries, size_t n, const struct dag_job_view *jobs,
                       const struct dag_run_row *run);
/* A run in short: {dag_run_id, state, run_type, logical_date, start_date,
 * end_date, queued_at}. */
json_t *dag_view_run_brief(const struct dag_run_row *r);
/* A DAG of the UI's list: dag_view_dag plus "last_runs" (runs, oldest
 * first, in short). */
json_t *dag_view_ui_dag(const struct dag_row *row, const struct dag_spec *s, int64_t next_ms,
                        const struct dag_run_row *runs, size_t n_runs);
/* An import error as the UI lists it: its line read from the message. */
json_t *dag_view_ui_import_error(const struct dag_import_error_row *r);
/* The grid: runs (oldest first) and per task, in a topological order, one
 * cell per run summing up its instances.  tis: every TI of those runs;
 * jobs[i] what TI i's job says (NULL: nothing).  spec NULL: no tasks. */
json_t *dag_view_grid(const char *dag_id, const struct dag_spec *s, const struct dag_run_row *runs,
                      size_t n_runs, const struct dag_ti_row *tis, size_t n_tis,
                      const struct dag_job_view *jobs);
/* The stats: runs with their durations, and the count of runs in each
 * state (counts[state]). */
json_t *dag_view_stats(const char *dag_id, const struct dag_run_row *runs, size_t n_runs,
                       const int64_t counts[DAG_VIEW_RUN_STATES]);

/* ---- the DAG ops' rows (api/dag_rows.h) ---- */

/* {"task_instances":[one per try],"total_entries":n}, each try a whole
 * TaskInstance: the TI's fields (dag_view_ti_of) under the try's own. */
json_t *dag_view_ti_tries(const struct dag_ti_tries *t);
/* {"dags":[dag_view_ui_dag...],"total_entries":total,
 * "import_errors":[dag_view_ui_import_error...]}. */
json_t *dag_view_ui_dags(const struct dag_ui_dags *d);

#endif
