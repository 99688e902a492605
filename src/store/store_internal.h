/* store_internal.h: what store.c shares with the other files that
 * implement store.h (job_events.c: a job's events).  Not for use outside
 * src/store/. */
#ifndef WEIR_STORE_STORE_INTERNAL_H
#define WEIR_STORE_STORE_INTERNAL_H

#include <sqlite3.h>

#include "lib/error.h"

struct store;

/* The slots job_events.c keeps its statements in (finalized with the
 * store): [0] the SELECT of a job's events, [n] the INSERT of n events. */
#define STORE_EVENT_SLOTS 17 /* STORE_EVENTS_MAX + 1 (job_events.c checks) */
sqlite3_stmt **store_event_slots(struct store *s);

/* The statement kept in *slot (prepared from `sql` on first use), reset
 * and unbound, the turn's transaction begun for a write; NULL with err. */
sqlite3_stmt *store_stmt_in(struct store *s, sqlite3_stmt **slot, const char *sql,
                            struct weir_error *err);

/* The file's path, for messages. */
const char *store_path(struct store *s);

/* err from the connection's last error, naming the store and `what`; -1. */
int store_db_error(struct store *s, struct weir_error *err, const char *what);

#endif
