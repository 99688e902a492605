/* launch_routes.h: the launch protocol's routes, called by weir-launch
 * (docs/api.md, docs/internals/launch.md):
 *   POST /launch/register | started | exited   a task's steps (410: a stale attempt)
 *   GET  /launch/cluster?job&attempt[&wait]     the gang's addresses; with wait,
 *                                              a long poll until it is complete
 *   POST /launch/log?job&role&index&attempt&offset
 *                                              a chunk of a task's log (--log-to-server)
 * Errors in weir's dialect (api/reply.h).
 */
#ifndef WEIR_API_LAUNCH_ROUTES_H
#define WEIR_API_LAUNCH_ROUTES_H

#include <stdbool.h>
#include <stdint.h>

#include "api/http.h"
#include "api/job_api.h"

struct route_ctx;
struct route_match;

/* Whether the request brings what a launch secret looks like; else it is
 * refused here (401, or 403 for the API's own credentials), before any
 * body is read. */
bool launch_admit(const struct job_routes *jr, struct http_request *req);

/* The operations of the route table's /launch rows (api/route_table.c),
 * each after launch_admit(). */
void launch_register(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m);
void launch_cluster(const struct route_ctx *rc, struct http_request *req,
                    const struct route_match *m);
void launch_started(const struct route_ctx *rc, struct http_request *req,
                    const struct route_match *m);
void launch_exited(const struct route_ctx *rc, struct http_request *req,
                   const struct route_match *m);
void launch_log(const struct route_ctx *rc, struct http_request *req, const struct route_match *m);
/* POST /launch/dagRuns: a running task's read of a DAG's runs at some
 * logical dates (api/dag_admin_api.h's task_read_runs), opened by the
 * task's read key (WEIR_TASK_READ_KEY, exec/launch_secret.h), not its
 * launch secret: an Airflow ExternalTaskSensor whose execution_date_fn
 * runs in Python. */
void launch_dag_runs(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m);

/* The gang of `job` may have completed (or the attempt changed): its
 * cluster long polls ask again. */
void launch_routes_notify_cluster(const struct job_routes *jr, int64_t job);

#endif
