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

#include <stdint.h>

#include "api/http.h"
#include "api/job_api.h"

/* seg[0..n) are the path's segments after /api/v1/ (seg[0] is "launch"). */
void launch_routes_handle(const struct job_routes *jr, struct http_request *req, char **seg, int n);

/* The gang of `job` may have completed (or the attempt changed): its
 * cluster long polls ask again. */
void launch_routes_notify_cluster(const struct job_routes *jr, int64_t job);

#endif
