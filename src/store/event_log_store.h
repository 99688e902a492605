/* event_log_store.h: the event log's table (who changed what, when:
 * docs/internals/event_log.md), and the counts by state the metrics page
 * shows.
 *
 * A row holds Airflow's EventLog fields; `extra` is a JSON object's text
 * that the API layer builds (method, route, status, peer, the names of the
 * body's fields: never a value that may be a secret).  This layer stores
 * what it is given.  Rows returned are owned by the caller
 * (event_log_rows_free).  Errors: -1 with err (WEIR_E_INVALID for a
 * query's order_by no column answers, WEIR_E_NOT_FOUND for an id with no
 * row, WEIR_E_INTERNAL for SQLite or memory).
 */
#ifndef WEIR_STORE_EVENT_LOG_STORE_H
#define WEIR_STORE_EVENT_LOG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "store/store.h"

struct event_log_row {
	int64_t id;      /* event_log_id; set by the insert */
	int64_t when_ms; /* epoch ms */
	char *dag_id;    /* NULL: none */
	char *task_id;   /* NULL: none */
	char *run_id;    /* NULL: none */
	bool has_map_index;
	int map_index;
	bool has_try_number;
	int try_number;
	char *event;            /* "api.post_dag_run", "ui.login", ... */
	int64_t execution_date; /* the run's logical date (epoch ms); 0: none/unknown */
	bool has_execution_date;
	char *owner; /* who: a user, or "token" */
	char *extra; /* a JSON object's text; NULL: none */
};

struct event_log_query {
	const char *dag_id, *task_id, *run_id, *event, *owner; /* NULL: any */
	bool has_map_index;
	int map_index;
	bool has_try_number;
	int try_number;
	int64_t before_ms;           /* when < before; 0: no bound */
	int64_t after_ms;            /* when > after; 0: no bound */
	const char *const *included; /* event in this list (n_included > 0) */
	size_t n_included;
	const char *const *excluded; /* event not in this list */
	size_t n_excluded;
	const char *const *hidden_dags; /* records of these DAGs left out (a reader's refusals) */
	size_t n_hidden_dags;
	const char
	    *order_by; /* Airflow's field name, '-' first for descending; NULL: event_log_id */
	int limit;     /* > 0 */
	int offset;
};

/* The fields order_by takes, NULL-ended (Airflow's EventLog names). */
extern const char *const event_log_order_fields[];

/* Inserts `row` (its id, and execution_date when the row names a run the
 * store has, are filled in).  Inside the store's open transaction when
 * there is one. */
int event_log_insert(struct store *s, struct event_log_row *row, struct weir_error *err);
/* One page of rows by the query, and the count of every row it matches. */
int event_log_list(struct store *s, const struct event_log_query *q, struct event_log_row **rows,
                   size_t *n, int64_t *total, struct weir_error *err);
int event_log_get(struct store *s, int64_t id, struct event_log_row *out, struct weir_error *err);
/* Removes the rows older than `before_ms` (0: no age bound) and all but the
 * newest `keep` (0: no count bound); *removed gets how many went. */
int event_log_prune(struct store *s, int64_t before_ms, int64_t keep, int64_t *removed,
                    struct weir_error *err);

void event_log_row_release(struct event_log_row *r);
void event_log_rows_free(struct event_log_row *rows, size_t n);

/* ---- counts by state, for the metrics' gauges ---- */

enum state_count_table {
	STATE_COUNT_JOBS,           /* jobs */
	STATE_COUNT_TASKS,          /* the tasks of each job's current attempt */
	STATE_COUNT_DAG_RUNS,       /* DAG runs */
	STATE_COUNT_TASK_INSTANCES, /* DAG task instances */
};

/* Calls fn(arg, state_name, count) for every state that has rows. */
int store_count_by_state(struct store *s, enum state_count_table t,
                         void (*fn)(void *arg, const char *state, int64_t n), void *arg,
                         struct weir_error *err);

#endif
