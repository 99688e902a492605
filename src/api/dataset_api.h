/* dataset_api.h: what the dataset routes (Airflow's /api/v1/datasets...,
 * docs/api.md) ask of the server.
 *
 * The routes (api/dataset_routes.h) own the paths, methods, the query
 * parameters' names and types and the body's being a JSON object of known
 * fields; the server (server/dataset_ops.c) owns the rest and fills this
 * table.  Each op returns a new JSON reference in Airflow's shape
 * (Dataset, DatasetCollection, DatasetEvent, DatasetEventCollection,
 * QueuedEvent, QueuedEventCollection), or NULL / -1 with err
 * (WEIR_E_INVALID -> 400, WEIR_E_NOT_FOUND -> 404).  Strings are borrowed
 * for the call.
 */
#ifndef WEIR_API_DATASET_API_H
#define WEIR_API_DATASET_API_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/error.h"

struct dataset_list_params {
	int limit, offset;
	const char *order_by;    /* NULL: by id */
	const char *uri_pattern; /* NULL: any; a substring of the URI */
	const char *dag_ids;     /* NULL: any; comma-separated: datasets they consume or produce */
};

struct dataset_event_params {
	int limit, offset;
	const char *order_by;                                       /* NULL: by timestamp */
	int64_t dataset_id;                                         /* 0: any */
	const char *source_dag_id, *source_task_id, *source_run_id; /* NULL: any */
	bool has_map_index;
	int source_map_index;
};

struct dataset_api_ops {
	json_t *(*list)(void *ctx, const struct dataset_list_params *q, struct weir_error *err);
	json_t *(*get)(void *ctx, const char *uri, struct weir_error *err);
	json_t *(*events)(void *ctx, const struct dataset_event_params *q, struct weir_error *err);
	/* POST /datasets/events: body {dataset_uri, extra} */
	json_t *(*create_event)(void *ctx, json_t *body, struct weir_error *err);
	json_t *(*upstream_events)(void *ctx, const char *dag_id, const char *run_id,
	                           struct weir_error *err);
	/* Queued events: of a DAG (uri NULL), of a URI (dag_id NULL), or the one
	 * of both (a QueuedEvent).  before: NULL, or a date (those queued earlier). */
	json_t *(*queued)(void *ctx, const char *dag_id, const char *uri, const char *before,
	                  struct weir_error *err);
	int (*delete_queued)(void *ctx, const char *dag_id, const char *uri, const char *before,
	                     struct weir_error *err);
};

#endif
