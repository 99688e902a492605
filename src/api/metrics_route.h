/* metrics_route.h: GET /metrics, the Prometheus text exposition of the
 * server (docs/metrics.md), and the HTTP requests' counters it shows.
 *
 * The page asks for the same credentials as the API (the token as
 * "Authorization: Bearer", a configured user with Basic, or the UI's
 * session): Prometheus sends a token with `authorization:` in its scrape
 * config.  It holds the server's gauges (api/observe_api.h), the registry
 * of lib/metrics.h, and weir_http_requests_total by method, route template
 * (api/route_table.h: a bounded set) and status code.
 */
#ifndef WEIR_API_METRICS_ROUTE_H
#define WEIR_API_METRICS_ROUTE_H

#include "api/http.h"
#include "api/observe_api.h"

/* Counts one answered request (the loop's thread: plain additions into a
 * fixed array). */
void metrics_route_count(const char *method, int route, int status);

/* Answers GET /metrics (HEAD too; other methods 405).  `ops` may be NULL
 * (no gauges); `version` is the server's, for weir_build_info. */
void metrics_route_handle(const struct observe_api_ops *ops, void *ctx, const char *version,
                          struct http_request *req);

/* Forgets the HTTP counts (unit tests). */
void metrics_route_reset(void);

#endif
