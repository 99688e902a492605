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
struct route_ctx;
struct route_match;

/* The operations of the route table's /dags and /importErrors rows that
 * read and trigger (api/route_table.c), as Airflow's operationIds name
 * them; the rest are airflow_admin.h's.  Each checks the path's ids (a
 * 400) before anything is read; the entry has answered 503 where no DAG
 * manager runs. */
void airflow_get_dags(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m);
void airflow_get_dag(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m);
void airflow_patch_dag(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m);
void airflow_get_dag_details(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m);
void airflow_get_tasks(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m);
void airflow_post_clear_task_instances(const struct route_ctx *rc, struct http_request *req,
                                       const struct route_match *m);
void airflow_get_dag_runs(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m);
void airflow_post_dag_run(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m);
void airflow_get_dag_runs_batch(const struct route_ctx *rc, struct http_request *req,
                                const struct route_match *m);
void airflow_get_dag_run(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m);
void airflow_update_dag_run_state(const struct route_ctx *rc, struct http_request *req,
                                  const struct route_match *m);
void airflow_get_task_instances(const struct route_ctx *rc, struct http_request *req,
                                const struct route_match *m);
void airflow_get_task_instances_batch(const struct route_ctx *rc, struct http_request *req,
                                      const struct route_match *m);
void airflow_get_task_instance(const struct route_ctx *rc, struct http_request *req,
                               const struct route_match *m);
void airflow_get_mapped_task_instance(const struct route_ctx *rc, struct http_request *req,
                                      const struct route_match *m);
void airflow_get_task_instance_tries(const struct route_ctx *rc, struct http_request *req,
                                     const struct route_match *m);
void airflow_get_mapped_task_instance_tries(const struct route_ctx *rc, struct http_request *req,
                                            const struct route_match *m);
void airflow_get_log(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m);
void airflow_get_import_errors(const struct route_ctx *rc, struct http_request *req,
                               const struct route_match *m);
/* A path under /dags or /importErrors no row serves (seg, n: after
 * /api/v1): a 400 for a bad id or number in it (as the route it would be
 * reads them), else a 404. */
void airflow_unmatched(const struct dag_api_ops *ops, struct http_request *req, char **seg, int n);

/* A scheduler whose last pass is older than this is unhealthy (Airflow's
 * scheduler_health_check_threshold). */
#define AIRFLOW_HEARTBEAT_MAX_AGE_MS 30000
/* Adds Airflow's health fields to weir's health object: "metadatabase"
 * {"status"} healthy when the store answered, "scheduler" {"status",
 * "latest_scheduler_heartbeat"} from its last pass, healthy when that is
 * recent.  `st` NULL: not known (statuses and heartbeat null). */
void airflow_health_add(json_t *health, const struct api_health *st);

#endif
