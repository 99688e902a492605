/* airflow_admin.h: the routes of Airflow's stable REST API v1 under
 * /api/v1/dags and /api/v1/importErrors that api/airflow.h's group does not
 * answer: PATCH /dags, DELETE /dags/{dag_id}, POST
 * /dags/{dag_id}/updateTaskInstancesState, GET /dags/{dag_id}/tasks/{task_id},
 * DELETE and clear of a run, PATCH of a task instance (and its mapped
 * form), its xcomEntries, dependencies, links, listMapped and tries/{n},
 * and GET /importErrors/{id} (docs/api.md).  What runs behind them is
 * ops->admin (api/dag_admin_api.h).
 */
#ifndef WEIR_API_AIRFLOW_ADMIN_H
#define WEIR_API_AIRFLOW_ADMIN_H

#include <stdbool.h>

#include "api/dag_admin_api.h"
#include "api/dag_api.h"
#include "api/http.h"

/* Answers the request and returns true when it is one of these routes;
 * false (nothing answered) for the routes of api/airflow.c.  seg[0] is
 * "dags" or "importErrors"; ops is not NULL. */
bool airflow_admin_route(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                         char **seg, int n);

#endif
