/* dataset_store.h: the store's datasets (docs/internals/store.md): the
 * dataset URIs, their events (a task's outlet or an outside announcement),
 * the events queued for the DAGs scheduled on them (Airflow's
 * DatasetDagRunQueue), the events each dataset-triggered run consumed, and
 * the trigger_dag tasks waiting for the run they started.
 *
 * This layer checks nothing but what SQLite does: callers validate URIs
 * (model/dataset.h) and ids.  Lists are filtered and paged in SQL; every
 * value is a bound parameter, the order a column from a fixed list.
 *
 * Errors: -1 with err: WEIR_E_NOT_FOUND (no such row), WEIR_E_INVALID (an
 * order_by that is no column), WEIR_E_INTERNAL (SQLite, out of memory).
 * Rows returned are owned by the caller (the _free functions).
 */
#ifndef WEIR_STORE_DATASET_STORE_H
#define WEIR_STORE_DATASET_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/states.h"
#include "store/store.h"

struct dataset_store; /* opaque */

struct dataset_store *dataset_store_create(struct store *s, struct weir_error *err);
void dataset_store_destroy(struct dataset_store *ds);

/* ---- datasets ---- */

struct dataset_row {
	int64_t id;
	char *uri;
	char *extra; /* a JSON object's text */
	int64_t created_at;
	int64_t updated_at;
};

/* The dataset of `uri`, added (created now) when it is not there; *id (may
 * be NULL) gets its id. */
int dataset_store_ensure(struct dataset_store *ds, const char *uri, int64_t now, int64_t *id,
                         struct weir_error *err);
int dataset_store_get(struct dataset_store *ds, const char *uri, struct dataset_row *out,
                      struct weir_error *err);

struct dataset_query {
	const char *uri_pattern; /* NULL: any; else a substring of the URI */
	const char *uris_json;   /* NULL: any; else a JSON list: only these URIs */
	const char *order_by; /* id (default), uri, created_at, updated_at; '-' first: descending */
	int limit, offset;
};
int dataset_store_list(struct dataset_store *ds, const struct dataset_query *q,
                       struct dataset_row **rows, size_t *n, int64_t *total,
                       struct weir_error *err);
void dataset_row_release(struct dataset_row *r);
void dataset_rows_free(struct dataset_row *rows, size_t n);

/* ---- events ---- */

struct dataset_event_row {
	int64_t id;
	int64_t dataset_id;
	char *uri;
	char *extra;         /* a JSON object's text */
	char *source_dag_id; /* "" when announced from outside */
	char *source_task_id;
	char *source_run_id;
	int source_map_index; /* -1 for a task that is no foreach instance */
	bool has_source;
	int64_t timestamp;
};

/* Records an event (ev->dataset_id, extra, source, timestamp); *id gets its id. */
int dataset_store_event_add(struct dataset_store *ds, const struct dataset_event_row *ev,
                            int64_t *id, struct weir_error *err);

struct dataset_event_query {
	int64_t dataset_id;        /* 0: any */
	const char *source_dag_id; /* NULL: any */
	const char *source_task_id;
	const char *source_run_id;
	bool has_map_index;
	int source_map_index;
	int64_t run_row_id;   /* 0: any; else the events that run consumed */
	const char *alias;    /* NULL: any; else the events added through that alias */
	const char *order_by; /* timestamp (default), id, dataset_id, source_dag_id, ... */
	int limit, offset;
};
int dataset_store_events(struct dataset_store *ds, const struct dataset_event_query *q,
                         struct dataset_event_row **rows, size_t *n, int64_t *total,
                         struct weir_error *err);
void dataset_event_rows_free(struct dataset_event_row *rows, size_t n);

/* The events of the URIs in `uris_json` (a JSON list), and of the datasets
 * linked to the aliases in `aliases_json` (a JSON list; NULL: none) from
 * the first event added through one of them on, that no run of `dag_id`
 * has consumed yet, newer than the last one one did: what its next
 * dataset-triggered run consumes.  Oldest first. */
int dataset_store_events_pending(struct dataset_store *ds, const char *dag_id,
                                 const char *uris_json, const char *aliases_json,
                                 struct dataset_event_row **rows, size_t *n,
                                 struct weir_error *err);

/* ---- aliases: events a task added through a DatasetAlias ---- */

/* The event was added through the alias (once per alias and event). */
int dataset_store_alias_event_add(struct dataset_store *ds, const char *alias, int64_t event_id,
                                  struct weir_error *err);

/* An alias and a dataset an event was added through it for. */
struct dataset_alias_link_row {
	char *alias;
	char *uri;
};
/* The links (uri NULL: all; else those of that dataset), by alias and URI. */
int dataset_store_alias_links(struct dataset_store *ds, const char *uri,
                              struct dataset_alias_link_row **rows, size_t *n,
                              struct weir_error *err);
void dataset_alias_link_rows_free(struct dataset_alias_link_row *rows, size_t n);
/* The run (its row id) consumed the event. */
int dataset_store_consume(struct dataset_store *ds, int64_t run_row_id, int64_t event_id,
                          struct weir_error *err);

/* The runs an event started (Airflow's created_dagruns): their DAG, run
 * id, state and dates. */
struct dataset_run_ref {
	char *dag_id;
	char *run_id;
	enum dag_run_state state;
	int64_t logical_date, start_date, end_date, data_interval_start, data_interval_end;
};
int dataset_store_event_runs(struct dataset_store *ds, int64_t event_id,
                             struct dataset_run_ref **rows, size_t *n, struct weir_error *err);
void dataset_run_refs_free(struct dataset_run_ref *rows, size_t n);

/* ---- the queue: events waiting for the DAGs scheduled on them ---- */

struct dataset_queue_row {
	char *uri;
	char *dag_id;
	int64_t created_at;
};

/* Queues the dataset for the DAG (kept as it was when already queued). */
int dataset_store_queue_add(struct dataset_store *ds, int64_t dataset_id, const char *dag_id,
                            int64_t now, struct weir_error *err);
/* The queue, by DAG and URI (dag_id, uri NULL: any; before > 0: created before it). */
int dataset_store_queue_list(struct dataset_store *ds, const char *dag_id, const char *uri,
                             int64_t before, struct dataset_queue_row **rows, size_t *n,
                             struct weir_error *err);
/* Deletes what queue_list would list; *n (may be NULL) gets how many. */
int dataset_store_queue_delete(struct dataset_store *ds, const char *dag_id, const char *uri,
                               int64_t before, size_t *n, struct weir_error *err);
void dataset_queue_rows_free(struct dataset_queue_row *rows, size_t n);

/* ---- trigger_dag tasks that wait for their run ---- */

struct dag_trigger_wait_row {
	char *dag_id, *run_id, *task_id; /* the waiting task instance */
	int map_index;
	int try_number;
	char *target_dag_id, *target_run_id; /* the run it started */
	enum dag_run_state target_state;     /* as the store has it now (waits_ended) */
};

int dataset_store_wait_add(struct dataset_store *ds, const struct dag_trigger_wait_row *w,
                           int64_t now, struct weir_error *err);
/* The waits whose run has ended (success or failed), or whose run is gone
 * (target_state failed then). */
int dataset_store_waits_ended(struct dataset_store *ds, struct dag_trigger_wait_row **rows,
                              size_t *n, struct weir_error *err);
int dataset_store_wait_delete(struct dataset_store *ds, const struct dag_trigger_wait_row *w,
                              struct weir_error *err);
void dag_trigger_wait_rows_free(struct dag_trigger_wait_row *rows, size_t n);

#endif
