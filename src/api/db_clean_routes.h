/* db_clean_routes.h: POST and GET /api/v1/weir/dbClean (docs/api.md,
 * "Removing old history"), in weir's own voice: the body read and checked,
 * the server's clean asked (api/db_clean_api.h). */
#ifndef WEIR_API_DB_CLEAN_ROUTES_H
#define WEIR_API_DB_CLEAN_ROUTES_H

#include "api/route_ctx.h"
#include "api/route_match.h"

/* POST: {"older_than": "30d", "dry_run": false, "dag_ids": ["a"]}; a dry
 * run 200 with what it would remove, else 202 with what it will. */
void db_clean_post(const struct route_ctx *rc, struct http_request *req,
                   const struct route_match *m);
/* GET: the clean under way, or the last one. */
void db_clean_get(const struct route_ctx *rc, struct http_request *req,
                  const struct route_match *m);

#endif
