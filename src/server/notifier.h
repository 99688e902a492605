/* notifier.h: delivering notifications: a DAG's on_failure, on_retry,
 * on_success and on_sla_miss (model/notify.h), each delivery recorded in
 * the store (store/notify_store.h) and retried with backoff
 * (sched/notify_due.h).
 *
 * Nothing here blocks the loop: a webhook's POST and a mail's SMTP
 * exchange run as libuv work (the thread pool), a command as a child
 * process; their outcome comes back to the loop, which records it and arms
 * the next attempt's timer.  A delivery's outcome never reaches a task or
 * a run: a failed one is only recorded (and logged, and counted in
 * weir_notifications_total, lib/metrics.h).
 *
 * Connections (conn:) are resolved on the loop at every attempt, so a
 * connection changed meanwhile is used at the next one; their passwords
 * go into the request (an Authorization header, SMTP AUTH) and nowhere
 * else: records and logs carry notify_target_masked()'s text and errors
 * that name no secret.
 *
 * A server that stops with deliveries pending leaves them failed at the
 * next start (notifier_recover()), with that reason: the events are not
 * replayed.
 */
#ifndef WEIR_SERVER_NOTIFIER_H
#define WEIR_SERVER_NOTIFIER_H

#include <jansson.h>
#include <uv.h>

#include "lib/error.h"
#include "model/notify.h"
#include "store/notify_store.h"
#include "store/store.h"

struct notifier; /* opaque */
struct secrets;

/* `secrets` may be NULL (every conn: then fails to resolve).  NULL with err. */
struct notifier *notifier_create(uv_loop_t *loop, struct store *store, struct secrets *secrets,
                                 struct weir_error *err);
/* The server's URL ("http://127.0.0.1:8270"), for the events' log_url. */
int notifier_set_base_url(struct notifier *n, const char *url);
/* Pending rows of an earlier server: failed ("the server stopped before
 * delivering"). */
int notifier_recover(struct notifier *n, struct weir_error *err);
/* Stops every timer and process; work in the thread pool finishes and is
 * dropped unrecorded.  The notifier frees itself when nothing of it is
 * left on the loop.  NULL: nothing. */
void notifier_stop(struct notifier *n);

/* Hands `p` to every target of `targets` (NULL or empty: nothing): a row
 * each, pending, and its first attempt started.  Errors are logged. */
void notifier_emit(struct notifier *n, const struct notify_list *targets,
                   const struct notify_payload *p);

/* The log URL of a TI's try (the Airflow log route) or of a run (the UI's
 * page), for payloads.  Newly allocated; "" when no base URL is set. */
char *notifier_log_url(struct notifier *n, const char *dag_id, const char *run_id,
                       const char *task_id, int map_index, int try_number);

/* The store's tables, for the API's ops and the SLA pass. */
struct notify_store *notifier_store(struct notifier *n);

/* ---- notifier_ops.c: the JSON the routes answer (api/notify_api.h) ---- */

/* A notification row and an SLA miss row as the API shows them. */
json_t *notifier_row_json(const struct notify_row *r);
json_t *notifier_sla_json(const struct sla_miss_row *r);
/* The TI's SLA miss as `sla_miss` of its JSON (null when none); new
 * reference, NULL only when out of memory.  n NULL: null. */
json_t *notifier_ti_sla_miss(struct notifier *n, const char *dag_id, const char *run_id,
                             const char *task_id, int map_index);
/* Whether any TI of the run has an SLA miss (true when the store cannot
 * tell: the caller then asks TI by TI).  n NULL: false. */
bool notifier_run_has_sla_miss(struct notifier *n, const char *dag_id, const char *run_id);
struct notify_api_ops;
const struct notify_api_ops *notifier_api_ops(void);

#endif
