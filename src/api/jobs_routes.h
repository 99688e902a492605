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
struct route_ctx;
struct route_match;

/* The operations of the route table's /jobs rows (api/route_table.c):
 * the path's job id is checked (a 400) before anything is read. */
void jobs_list(const struct route_ctx *rc, struct http_request *req, const struct route_match *m);
void jobs_submit(const struct route_ctx *rc, struct http_request *req, const struct route_match *m);
void jobs_get(const struct route_ctx *rc, struct http_request *req, const struct route_match *m);
void jobs_kill(const struct route_ctx *rc, struct http_request *req, const struct route_match *m);
void jobs_tasks(const struct route_ctx *rc, struct http_request *req, const struct route_match *m);
void jobs_events(const struct route_ctx *rc, struct http_request *req, const struct route_match *m);
void jobs_task_log(const struct route_ctx *rc, struct http_request *req,
                   const struct route_match *m);
/* A path under /jobs no row matches (seg, n: after /api/v1): a 400 for a
 * bad job id or task index, else a 404. */
void jobs_unmatched(const struct job_routes *jr, struct http_request *req, char **seg, int n);

/* Something may have changed: job long polls compare their job's version
 * again. */
void jobs_routes_notify(const struct job_routes *jr);

#endif
