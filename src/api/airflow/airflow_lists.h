/* airflow_lists.h: the list routes of Airflow's stable REST API v1 (DAGs,
 * runs, task instances, import errors), their batch forms under
 * /dags/~/..., and what each reads from its query or body.
 *
 * Every parameter Airflow documents for a route is either honoured or
 * refused with a 400 that names it; a parameter the route does not take is
 * a 400 too, so a filter is never dropped without a word.  The filters go to
 * the DAG manager in the shapes of api/dag_api.h; `fields` is applied here,
 * to the items of the answer.
 */
#ifndef WEIR_API_AIRFLOW_LISTS_H
#define WEIR_API_AIRFLOW_LISTS_H

#include "api/dag_api.h"
#include "api/http.h"

/* GET /dags */
void airflow_list_dags(const struct dag_api_ops *ops, void *ctx, struct http_request *req);
/* GET /importErrors */
void airflow_list_import_errors(const struct dag_api_ops *ops, void *ctx, struct http_request *req);
/* GET /dags/{dag_id}/dagRuns (dag_id "~": every DAG) */
void airflow_list_runs(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                       const char *dag_id);
/* POST /dags/~/dagRuns/list (ListDagRunsForm) */
void airflow_list_runs_batch(const struct dag_api_ops *ops, void *ctx, struct http_request *req);
/* GET /dags/{dag_id}/dagRuns/{run_id}/taskInstances ("~" for either: every one) */
void airflow_list_tis(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                      const char *dag_id, const char *run_id);
/* GET .../taskInstances/{task_id}/listMapped: a foreach task's instances */
void airflow_list_mapped(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                         const char *dag_id, const char *run_id, const char *task_id);
/* POST /dags/~/dagRuns/~/taskInstances/list (ListTaskInstanceForm) */
void airflow_list_tis_batch(const struct dag_api_ops *ops, void *ctx, struct http_request *req);

#endif
