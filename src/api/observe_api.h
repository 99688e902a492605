/* observe_api.h: what the metrics page (GET /metrics) and the event log
 * (Airflow's /api/v1/eventLogs, api/event_log_routes.h) ask of the server.
 *
 * The server (server/observe.c) fills this table.  Strings and rows passed
 * in are borrowed for the call; rows handed back are the caller's
 * (event_log_rows_free).  Errors: -1 with err (WEIR_E_INVALID -> 400,
 * WEIR_E_NOT_FOUND -> 404).
 */
#ifndef WEIR_API_OBSERVE_API_H
#define WEIR_API_OBSERVE_API_H

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/strbuf.h"
#include "store/event_log_store.h"

struct observe_api_ops {
	/* Appends the gauges (how many jobs, tasks, runs, task instances are in
	 * each state) in the text exposition format. */
	int (*gauges)(void *ctx, struct strbuf *out, struct weir_error *err);
	/* Records one (copied; written to the store by the end of the loop's
	 * turn, and before any list or get). */
	int (*event_record)(void *ctx, struct event_log_row *row, struct weir_error *err);
	int (*event_list)(void *ctx, const struct event_log_query *q, struct event_log_row **rows,
	                  size_t *n, int64_t *total, struct weir_error *err);
	int (*event_get)(void *ctx, int64_t id, struct event_log_row *out, struct weir_error *err);
};

#endif
