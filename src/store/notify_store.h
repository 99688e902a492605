/* notify_store.h: the notifications and sla_misses tables, on the store's
 * SQLite file.
 *
 * A notification row is one delivery of one event to one target: its
 * state (pending while attempts remain, then sent or failed), how many
 * attempts were made, the last error and when the next attempt is due.
 * The target column holds what model/notify.h's notify_target_masked()
 * makes of it, never a password, header value or query.  An SLA miss row
 * is one task instance that missed its SLA, written once (the key is the
 * TI), with whether its notifications were handed out.
 *
 * Same contract as store.h: it keeps and returns, it decides nothing.
 * Times are epoch ms; map_index -1 and task_id "" (a run's event) as in
 * dag_store.h.  Rows own their strings: *_rows_free().  Errors: -1 with err
 * (WEIR_E_INTERNAL for SQLite's, WEIR_E_INVALID for a state name).
 */
#ifndef WEIR_STORE_NOTIFY_STORE_H
#define WEIR_STORE_NOTIFY_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "store/store.h"

struct notify_store; /* opaque */

struct notify_store *notify_store_create(struct store *s, struct weir_error *err);
void notify_store_destroy(struct notify_store *ns);

enum notify_state {
	NOTIFY_PENDING = 0,
	NOTIFY_SENT,
	NOTIFY_FAILED,
};

const char *notify_state_name(enum notify_state s);
int notify_state_from_name(const char *name, enum notify_state *out);

struct notify_row {
	int64_t id;
	char *dag_id, *run_id, *task_id;
	int map_index;
	int try_number;
	char *event;       /* model/notify.h's notify_event_name() */
	char *target_kind; /* webhook, email, command */
	char *target;      /* masked */
	enum notify_state state;
	int attempts, max_attempts;
	char *last_error;
	int64_t created_at, updated_at, next_attempt_at; /* next: 0 when none */
};

/* A new row (its id into *id); row->id is ignored. */
int notify_store_add(struct notify_store *ns, const struct notify_row *row, int64_t *id,
                     struct weir_error *err);
/* An attempt's outcome: state, attempts, last error ("" clears), next
 * attempt (0: none), at `now`. */
int notify_store_update(struct notify_store *ns, int64_t id, enum notify_state state, int attempts,
                        const char *last_error, int64_t next_attempt_at, int64_t now,
                        struct weir_error *err);

struct notify_query {
	const char *dag_id, *run_id; /* NULL: any */
	int state;                   /* -1: any, else enum notify_state */
	int limit, offset;           /* limit 0: 100 */
};

/* Newest first; *total (may be NULL) the count without limit and offset. */
int notify_store_list(struct notify_store *ns, const struct notify_query *q,
                      struct notify_row **rows, size_t *n, int64_t *total, struct weir_error *err);
void notify_rows_free(struct notify_row *rows, size_t n);

/* Pending rows left by a server that stopped: failed with `why`. */
int notify_store_fail_pending(struct notify_store *ns, const char *why, int64_t now,
                              struct weir_error *err);

struct sla_miss_row {
	char *dag_id, *run_id, *task_id;
	int map_index;
	int64_t due_at, recorded_at;
	char *state;          /* the TI's state when it was seen */
	int64_t logical_date; /* the run's */
	char *description;    /* why: "not succeeded within 30 s of the logical date" */
	bool notified;        /* its on_sla_miss deliveries were handed out */
	bool email_sent;      /* and one of them was an email */
};

/* Records a miss once: *added false when that TI already had one. */
int sla_store_add(struct notify_store *ns, const struct sla_miss_row *row, bool *added,
                  struct weir_error *err);
/* A miss's notifications were handed out (key->email_sent: one was an email). */
int sla_store_set_notified(struct notify_store *ns, const struct sla_miss_row *key,
                           struct weir_error *err);

struct sla_query {
	const char *dag_id, *run_id, *task_id; /* NULL: any */
	int map_index;                         /* with task_id */
	int limit, offset;                     /* limit 0: 100 */
};

/* Newest first; *total (may be NULL) the count without limit and offset. */
int sla_store_list(struct notify_store *ns, const struct sla_query *q, struct sla_miss_row **rows,
                   size_t *n, int64_t *total, struct weir_error *err);
void sla_miss_rows_free(struct sla_miss_row *rows, size_t n);
/* Whether any TI of the run has an SLA miss, into *has. */
int sla_store_run_has(struct notify_store *ns, const char *dag_id, const char *run_id, bool *has,
                      struct weir_error *err);

#endif
