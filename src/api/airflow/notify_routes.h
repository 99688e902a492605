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

/* Answers it; ops NULL: 503. */
void notify_routes_handle(const struct notify_api_ops *ops, void *ctx, struct http_request *req,
                          char **seg, int n);

#endif
