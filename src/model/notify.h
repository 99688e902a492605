/* notify.h: notifications and SLAs as a DAG file declares them, and the
 * event a delivery carries.
 *
 * A task (or default_args, or the DAG for its runs) may list deliveries
 * under on_failure, on_retry, on_success and on_sla_miss; each delivery is
 * one of
 *
 *   webhook: {url: http[s]://..., headers: {...}, conn: ID}   a JSON POST
 *   email:   {conn: ID, to: [a@b, ...], subject: TEMPLATE}   over SMTP
 *   command: "notify.sh --page"                             a process
 *
 * with optional `retries` (deliveries after the first, default
 * NOTIFY_DEFAULT_RETRIES) and `retry_delay` (the first wait, doubled each
 * time: sched/notify_due.h).  `sla:` on a task is a duration after the
 * run's logical date (`sla: 30m`) or {within: 30m, from: run_start}.
 *
 * Ownership: a dag_notify owns its lists and the JSON it was read from;
 * dag_notify_destroy() frees it all.
 */
#ifndef WEIR_MODEL_NOTIFY_H
#define WEIR_MODEL_NOTIFY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/strvec.h"
#include "model/field_reader.h"

#define NOTIFY_DEFAULT_RETRIES 3
#define NOTIFY_DEFAULT_RETRY_DELAY_S 10
#define NOTIFY_MAX_RETRIES 20
#define NOTIFY_MAX_TARGETS 32

/* What happened: a try failed for good, failed with a retry to come,
 * succeeded, a task missed its SLA; a run failed or succeeded. */
enum notify_event {
	NOTIFY_ON_FAILURE = 0,
	NOTIFY_ON_RETRY,
	NOTIFY_ON_SUCCESS,
	NOTIFY_ON_SLA_MISS,
	NOTIFY_N_EVENTS,
};

/* "on_failure", ...; and back (-1 when `name` is none). */
const char *notify_event_key(enum notify_event e);
int notify_event_from_key(const char *name, enum notify_event *out);
/* What a record and a payload call it: "task_failure", "task_retry",
 * "task_success", "sla_miss", "run_failure", "run_success". */
const char *notify_event_name(enum notify_event e, bool run_level);

enum notify_kind {
	NOTIFY_WEBHOOK = 0,
	NOTIFY_EMAIL,
	NOTIFY_COMMAND,
};

/* "webhook", "email", "command". */
const char *notify_kind_name(enum notify_kind k);

struct notify_target {
	enum notify_kind kind;
	char *url;         /* webhook: http[s]://HOST[:PORT]/PATH, or a path under the conn's URL;
	                    * NULL: the conn's */
	json_t *headers;   /* webhook: {name: value}; NULL: none */
	char *conn;        /* webhook: an http connection (optional); email: an smtp one */
	struct strvec to;  /* email: the recipients */
	char *subject;     /* email: a template of the event's fields; NULL: the default */
	char *command;     /* command: its text */
	bool as_task_user; /* command: run as the user tasks run as (not the server's) */
	int retries;       /* deliveries after the first */
	int64_t retry_delay_s;
};

struct notify_list {
	struct notify_target *v;
	size_t n;
};

/* The notification keys of one task, of default_args or of the DAG. */
struct dag_notify {
	struct notify_list on[NOTIFY_N_EVENTS];
	bool given[NOTIFY_N_EVENTS];
	json_t *json; /* {key: list} as read, for dag_spec_to_json() */
};

/* Whether `key` is one of on_failure, on_retry, on_success, on_sla_miss. */
bool notify_is_key(const char *key);

/* Reads key: a list of deliveries (or one delivery) at prefix.key into
 * *n, created when NULL.  0, or -1 with r's error naming the field. */
int notify_read_key(struct field_reader *r, const char *prefix, const char *key, json_t *val,
                    struct dag_notify **n);

void dag_notify_destroy(struct dag_notify *n);

/* Into `out` (an object): the keys as read, header values as "***" (a
 * secret belongs in a connection; the store keeps this JSON). */
int dag_notify_to_json(const struct dag_notify *n, json_t *out);

/* ---- SLAs ---- */

enum sla_anchor {
	SLA_FROM_LOGICAL_DATE = 0,
	SLA_FROM_RUN_START,
};

struct dag_sla {
	int64_t within_s; /* 0: no SLA */
	enum sla_anchor from;
};

/* `sla:` at `r->path`: a duration, or {within: DURATION, from:
 * logical_date|run_start}. */
int notify_read_sla(struct field_reader *r, const char *prefix, json_t *val, struct dag_sla *out);
/* Its JSON (a duration in seconds, or the mapping); NULL when none. */
json_t *notify_sla_to_json(const struct dag_sla *sla);

/* ---- the event a delivery carries ---- */

struct notify_payload {
	enum notify_event event;
	bool run_level; /* a run's end (task_id "") */
	const char *dag_id;
	const char *run_id;
	const char *task_id; /* "" for a run's event */
	int map_index;       /* -1: not mapped */
	int try_number;      /* 0 for a run's event */
	const char *state;   /* the TI's or run's state name */
	const char *reason;  /* "" when none */
	const char *log_url; /* "" when none */
	int64_t logical_date_ms;
};

/* The one line a person reads (Slack's and Teams' `text`). */
char *notify_payload_text(const struct notify_payload *p);
/* The webhook's JSON body: every field above and `text`.  New reference. */
json_t *notify_payload_json(const struct notify_payload *p);
/* A template with {{ dag_id }}, {{ run_id }}, {{ task_id }}, {{ state }},
 * {{ event }}, {{ try_number }}, {{ reason }} replaced; other text as is.
 * NULL only when out of memory. */
char *notify_render(const char *tmpl, const struct notify_payload *p);

/* What a record shows of a target: no password, header or query; a
 * webhook's URL as scheme://host:port/… ; a command's program only. */
char *notify_target_masked(const struct notify_target *t);

#endif
