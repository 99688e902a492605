/* notify_routes.h: weir's own routes for notifications and SLA misses
 * (Airflow's stable API has none; docs/api.md):
 *
 *   GET /notifications[?dag_id&dag_run_id&state&limit&offset]
 *   GET /dags/{dag_id}/dagRuns/{dag_run_id}/notifications[?state&limit&offset]
 *   GET /slaMisses[?dag_id&dag_run_id&limit&offset]
 *   GET /dags/{dag_id}/dagRuns/{dag_run_id}/slaMisses[?limit&offset]
 *
 * {"notifications" | "sla_misses": [...], "total_entries": N}, newest
 * first; errors are problem+json.  The router authenticates first.
 */
#ifndef WEIR_API_NOTIFY_ROUTES_H
#define WEIR_API_NOTIFY_ROUTES_H

#include <stdbool.h>

#include "api/http.h"
#include "api/notify_api.h"

struct route_ctx;
struct route_match;

/* GET of the notifications, of the SLA misses: every one (filtered by the
 * query), or a run's where the path names it (its ids checked, a 400); no
 * notify ops: 503. */
void notify_list(const struct route_ctx *rc, struct http_request *req, const struct route_match *m);
void notify_sla_misses(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m);

#endif
