/* ui_routes.h: the web UI's one-request views of the workflows, in the
 * problem dialect (docs/api.md):
 *   GET /api/v1/ui/dags[?limit&offset]            DAGs with their recent runs
 *   GET /api/v1/ui/dags/{dag_id}/grid[?limit]     runs by tasks
 *   GET /api/v1/ui/dags/{dag_id}/stats[?limit]    run durations and counts
 * answered by the DAG manager's ops (api/dag_api.h).  The UI's login
 * routes are api/ui_auth.h, its files api/ui_assets.h.
 */
#ifndef WEIR_API_UI_ROUTES_H
#define WEIR_API_UI_ROUTES_H

#include <stdbool.h>

#include "api/dag_api.h"
#include "api/http.h"

/* seg[0..n) are the path's segments after /api/v1/.  ops NULL: 503. */
void ui_routes_handle(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                      char **seg, int n);

#endif
