/* airflow.h: the workflow routes, as Airflow's stable REST API v1 has them
 * (paths, query parameters, status codes, problem+json errors; docs/api.md
 * lists what is covered): /api/v1/dags... and /api/v1/importErrors.
 *
 * This group owns the routing under those paths and the validation of ids,
 * query parameters and bodies (api/airflow_request.h); the task instance
 * log route is api/airflow_logs.h.  What runs behind each route is the
 * server's DAG manager, through a dag_api_ops table (api/dag_api.h); the
 * router (api/api.h) authenticates the request before handing it here.
 */
#ifndef WEIR_API_AIRFLOW_H
#define WEIR_API_AIRFLOW_H

#include <stdbool.h>

#include <jansson.h>

#include "api/dag_api.h"
#include "api/http.h"
#include "api/logs/log_stream.h"

/* Answers the request: seg[0..n) are the path's segments after /api/v1/
 * (already percent-decoded).  ops NULL: the server runs no DAG manager
 * (503).  `logs` streams the text/plain logs. */
void airflow_handle(const struct dag_api_ops *ops, void *ctx, struct log_stream *logs,
                    struct http_request *req, char **seg, int n);

/* A scheduler whose last pass is older than this is unhealthy (Airflow's
 * scheduler_health_check_threshold). */
#define AIRFLOW_HEARTBEAT_MAX_AGE_MS 30000
/* Adds Airflow's health fields to weir's health object: "metadatabase"
 * {"status"} healthy when the store answered, "scheduler" {"status",
 * "latest_scheduler_heartbeat"} from its last pass, healthy when that is
 * recent.  `st` NULL: not known (statuses and heartbeat null). */
void airflow_health_add(json_t *health, const struct api_health *st);

#endif
