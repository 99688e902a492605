/* dag_answers.h: the answers of the workflow routes: each function calls
 * one DAG op (api/dag_api.h), renders the typed rows it hands back
 * (api/dag_views.h) and frees them.  The route handlers (api/airflow/,
 * api/ui/) answer with these; so do `weir dags test`'s report and the
 * tests, which read the same JSON.
 *
 * Each returns a new reference (or, the _text ones, newly allocated JSON
 * text, *len its length, without a tree per item: what clients poll), or
 * NULL with err: the op's error, or WEIR_E_INTERNAL out of memory.  Strings
 * and bodies are borrowed for the call.
 */
#ifndef WEIR_API_DAG_ANSWERS_H
#define WEIR_API_DAG_ANSWERS_H

#include <stddef.h>

#include <jansson.h>

#include "api/dag_api.h"
#include "lib/error.h"

/* GET /dags: DAGCollection. */
json_t *dag_answer_list_dags(const struct dag_api_ops *ops, void *ctx,
                             const struct dag_list_query *q, struct weir_error *err);
/* GET /dags/{dag_id}: DAG. */
json_t *dag_answer_get_dag(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                           struct weir_error *err);
/* PATCH /dags/{dag_id}: the DAG after. */
json_t *dag_answer_patch_dag(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                             json_t *body, struct weir_error *err);
/* GET .../dagRuns and the batch list: DAGRunCollection. */
json_t *dag_answer_list_runs(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                             const struct dag_run_list_query *q, struct weir_error *err);
/* POST .../dagRuns: the new DAGRun. */
json_t *dag_answer_trigger_run(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                               json_t *body, struct weir_error *err);
/* A DAGRun as a tree (the DAG tests' report, unit tests). */
json_t *dag_answer_get_run(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                           const char *run_id, struct weir_error *err);
/* GET .../dagRuns/{run_id}: the same DAGRun as its text. */
char *dag_answer_get_run_text(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                              const char *run_id, size_t *len, struct weir_error *err);
/* PATCH .../dagRuns/{run_id}: the DAGRun after. */
json_t *dag_answer_patch_run(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                             const char *run_id, json_t *body, struct weir_error *err);
/* PATCH .../dagRuns/{run_id}/setNote: the DAGRun after (ops->set_run_note). */
json_t *dag_answer_set_run_note(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                                const char *run_id, const char *text, const char *user,
                                struct weir_error *err);
/* PATCH .../taskInstances/{task_id}[/{map_index}]/setNote: the TaskInstance
 * after (ops->set_ti_note). */
json_t *dag_answer_set_ti_note(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                               const char *run_id, const char *task_id, int map_index,
                               const char *text, const char *user, struct weir_error *err);
/* TaskInstanceCollection as a tree (the DAG tests' report, unit tests, the
 * admin routes): the text of dag_answer_list_tis_text, read back. */
json_t *dag_answer_list_tis(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                            const char *run_id, const struct dag_ti_list_query *q,
                            struct weir_error *err);
/* GET .../taskInstances and the batch list: TaskInstanceCollection as its
 * text (the bytes json_dumps(JSON_COMPACT) writes of its tree). */
char *dag_answer_list_tis_text(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                               const char *run_id, const struct dag_ti_list_query *q, size_t *len,
                               struct weir_error *err);
/* GET .../taskInstances/{task_id}: TaskInstance. */
json_t *dag_answer_get_ti(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                          const char *run_id, const char *task_id, int map_index,
                          struct weir_error *err);
/* POST /dags/{dag_id}/clearTaskInstances: {"task_instances":[reference...]}. */
json_t *dag_answer_clear_tis(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                             json_t *body, struct weir_error *err);
/* GET /importErrors: ImportErrorCollection, of the errors `rd` may see
 * (NULL: all). */
json_t *dag_answer_import_errors(const struct dag_api_ops *ops, void *ctx,
                                 const struct dag_reader *rd, int limit, int offset,
                                 struct weir_error *err);
/* GET /dags/{dag_id}/tasks: {"tasks":[Task...],"total_entries":N}. */
json_t *dag_answer_dag_tasks(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                             struct weir_error *err);
/* GET /dags/{dag_id}/details: DAGDetail. */
json_t *dag_answer_dag_details(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                               struct weir_error *err);
/* GET .../taskInstances/{task_id}/tries: a TaskInstance per try. */
json_t *dag_answer_ti_tries(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                            const char *run_id, const char *task_id, int map_index,
                            struct weir_error *err);
/* GET /ui/dags: {"dags","total_entries","import_errors"}. */
json_t *dag_answer_ui_dags(const struct dag_api_ops *ops, void *ctx,
                           const struct dag_reader *reader, int limit, int offset,
                           struct weir_error *err);
/* GET /ui/dags/{dag_id}/grid. */
json_t *dag_answer_ui_grid(const struct dag_api_ops *ops, void *ctx, const char *dag_id, int limit,
                           struct weir_error *err);
/* GET /ui/dags/{dag_id}/stats. */
json_t *dag_answer_ui_stats(const struct dag_api_ops *ops, void *ctx, const char *dag_id, int limit,
                            struct weir_error *err);

#endif
