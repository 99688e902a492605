/* conn_routes.h: the connection and variable routes, as Airflow's stable
 * REST API v1 has them (docs/api.md):
 *
 *   GET    /connections[?limit&offset&order_by]   ConnectionCollection
 *   POST   /connections                           Connection (200; 409 when the id exists)
 *   GET    /connections/{connection_id}           Connection
 *   PATCH  /connections/{connection_id}[?update_mask=a,b]
 *   DELETE /connections/{connection_id}           204
 *   POST   /connections/test                      {"status", "message"} (conn_test_route.h)
 *   and the same under /variables (POST adds or replaces, as Airflow's does).
 *
 * Errors are problem+json (api/reply.h).  What runs behind each route is
 * a secrets_api_ops table (api/secrets_api.h); the router authenticates the
 * request before handing it here.
 */
#ifndef WEIR_API_CONN_ROUTES_H
#define WEIR_API_CONN_ROUTES_H

#include <stdbool.h>

#include "api/airflow/conn_test_route.h"
#include "api/http.h"
#include "api/secrets_api.h"

struct route_ctx;
struct route_match;

/* The operations of the route table's /connections and /variables rows
 * (api/route_table.c), as Airflow's operationIds name them; the entry has
 * answered 503 where the server keeps no secrets.  The path's id is checked
 * ([A-Za-z0-9_.-]{1,250}, a 400) before anything is read.
 * airflow_test_connection suspends the request until the test ends (501
 * without conn_tests). */
void airflow_get_connections(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m);
void airflow_post_connection(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m);
void airflow_test_connection(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m);
void airflow_get_connection(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m);
void airflow_patch_connection(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m);
void airflow_delete_connection(const struct route_ctx *rc, struct http_request *req,
                               const struct route_match *m);
void airflow_get_variables(const struct route_ctx *rc, struct http_request *req,
                           const struct route_match *m);
void airflow_post_variables(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m);
void airflow_get_variable(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m);
void airflow_patch_variable(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m);
void airflow_delete_variable(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m);

#endif
