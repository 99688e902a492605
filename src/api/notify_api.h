/* notify_api.h: what weir's notification and SLA-miss routes
 * (api/notify_routes.h) ask of the server: each op returns a new JSON
 * reference in the routes' shape, or NULL with err (WEIR_E_NOT_FOUND ->
 * 404, WEIR_E_INVALID -> 400).  Strings are borrowed for the call.
 */
#ifndef WEIR_API_NOTIFY_API_H
#define WEIR_API_NOTIFY_API_H

#include <jansson.h>

#include "lib/error.h"

struct notify_api_query {
	const char *dag_id, *run_id; /* NULL: any */
	const char *state;           /* pending, sent, failed; NULL: any (notifications) */
	int limit, offset;           /* checked by the route: 1..1000, >= 0 */
};

struct notify_api_ops {
	/* {"notifications": [...], "total_entries": N}, newest first */
	json_t *(*list_notifications)(void *ctx, const struct notify_api_query *q,
	                              struct weir_error *err);
	/* {"sla_misses": [...], "total_entries": N}, newest first */
	json_t *(*list_sla_misses)(void *ctx, const struct notify_api_query *q,
	                           struct weir_error *err);
};

#endif
