/* observe.h: what the server tells about itself: the metrics page's gauges
 * and the event loop's lag and turn times (lib/metrics.h), the event log's
 * writes, reads and pruning (api/observe_api.h, store/event_log_store.h).
 *
 * Pruning (docs/internals/event_log.md): at start and every hour, records
 * older than OBSERVE_EVENT_LOG_MAX_AGE_DAYS days go, and all but the newest
 * OBSERVE_EVENT_LOG_MAX_ROWS.
 */
#ifndef WEIR_SERVER_OBSERVE_H
#define WEIR_SERVER_OBSERVE_H

#include <uv.h>

#include "api/observe_api.h"
#include "lib/error.h"
#include "store/store.h"

#define OBSERVE_EVENT_LOG_MAX_AGE_DAYS 90
#define OBSERVE_EVENT_LOG_MAX_ROWS 1000000
#define OBSERVE_HEARTBEAT_MS 1000
#define OBSERVE_PRUNE_EVERY_MS (3600 * 1000)

struct observe; /* opaque */

/* Starts watching `loop` (handles that keep it from nothing: unreferenced)
 * and prunes the event log once.  `store` must outlive it.  NULL with err. */
struct observe *observe_create(uv_loop_t *loop, struct store *store, struct weir_error *err);
/* Closes its handles (run the loop once more to finish); frees itself when
 * they are closed.  NULL is a no-op. */
void observe_destroy(struct observe *o);

/* The table to give api_set_observe_ops() with the observe as ctx. */
const struct observe_api_ops *observe_api_ops(void);

#endif
