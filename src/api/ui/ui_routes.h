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

struct route_ctx;
struct route_match;

/* The operations of the route table's /ui rows (api/route_table.c): GET
 * ui/dags, ui/dags/{dag_id}/grid, ui/dags/{dag_id}/stats; the entry has
 * answered 503 where no DAG manager runs. */
void ui_data_dags(const struct route_ctx *rc, struct http_request *req,
                  const struct route_match *m);
void ui_data_grid(const struct route_ctx *rc, struct http_request *req,
                  const struct route_match *m);
void ui_data_stats(const struct route_ctx *rc, struct http_request *req,
                   const struct route_match *m);

#endif
