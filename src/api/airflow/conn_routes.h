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

/* Answers the request: seg[0..n) after /api/v1/.  ops NULL: 503.  tests:
 * where POST /connections/test waits (NULL: that route answers 501). */
void conn_routes_handle(const struct secrets_api_ops *ops, void *ctx, struct conn_tests *tests,
                        struct http_request *req, char **seg, int n);

#endif
