/* event_log_routes.h: reading the event log (who changed what, from where,
 * when; api/event_log_note.h records it).
 *
 * Routes (Airflow's stable REST API v1, problem+json errors):
 *   GET /api/v1/eventLogs                  EventLogCollection
 *   GET /api/v1/eventLogs/{event_log_id}   EventLog, 404 when none
 */
#ifndef WEIR_API_EVENT_LOG_ROUTES_H
#define WEIR_API_EVENT_LOG_ROUTES_H

#include <stdbool.h>

#include "api/http.h"
#include "api/observe_api.h"

struct route_ctx;
struct route_match;

/* GET /eventLogs (filtered, paged) and GET /eventLogs/{event_log_id} (a
 * 400 for a bad id): the route table's operations; the entry has answered
 * 503 where the server keeps no event log. */
void airflow_get_event_logs(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m);
void airflow_get_event_log(const struct route_ctx *rc, struct http_request *req,
                           const struct route_match *m);
/* A path under /eventLogs no row matches (seg, n after /api/v1), the event
 * log there: 405 or 400 for /eventLogs/{not a number}, else 404. */
void event_log_unmatched(struct http_request *req, char **seg, int n);

#endif
