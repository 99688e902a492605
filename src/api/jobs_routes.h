/* jobs_routes.h: weir's job routes (docs/api.md):
 *   POST   /jobs                       submit
 *   GET    /jobs[?state&limit]         list
 *   GET    /jobs/{id}[?wait&since]     one job; with wait, a long poll until
 *                                      its version differs from since
 *   DELETE /jobs/{id}                  kill (202)
 *   GET    /jobs/{id}/tasks[?attempt]  tasks of an attempt, or all
 *   GET    /jobs/{id}/events
 *   GET    /jobs/{id}/tasks/{role}/{index}/logs[?attempt&offset&length&download&follow]
 * Errors in weir's dialect (api/reply.h).
 */
#ifndef WEIR_API_JOBS_ROUTES_H
#define WEIR_API_JOBS_ROUTES_H

#include "api/http.h"
#include "api/job_api.h"

/* seg[0..n) are the path's segments after /api/v1/ (seg[0] is "jobs"). */
void jobs_routes_handle(const struct job_routes *jr, struct http_request *req, char **seg, int n);

/* Something may have changed: job long polls compare their job's version
 * again. */
void jobs_routes_notify(const struct job_routes *jr);

#endif
