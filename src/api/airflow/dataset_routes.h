/* dataset_routes.h: the dataset routes, as Airflow's stable REST API v1
 * has them (docs/api.md):
 *
 *   GET    /datasets[?limit&offset&order_by&uri_pattern&dag_ids]    DatasetCollection
 *   GET    /datasets/{uri}                                          Dataset
 *   GET    /datasets/events[?limit&offset&order_by&dataset_id&source_dag_id&
 *                           source_task_id&source_run_id&source_map_index]
 *   POST   /datasets/events  {dataset_uri, extra}                   DatasetEvent
 *   GET    /dags/{dag_id}/dagRuns/{dag_run_id}/upstreamDatasetEvents
 *   GET    /dags/{dag_id}/datasets/queuedEvent[?before]             QueuedEventCollection
 *   DELETE /dags/{dag_id}/datasets/queuedEvent[?before]             204
 *   GET    /dags/{dag_id}/datasets/queuedEvent/{uri}[?before]       QueuedEvent
 *   DELETE /dags/{dag_id}/datasets/queuedEvent/{uri}[?before]       204
 *   GET    /datasets/queuedEvent/{uri}[?before]                     QueuedEventCollection
 *   DELETE /datasets/queuedEvent/{uri}[?before]                     204
 *
 * A {uri} is the rest of the path, percent-encoded by the client (its
 * slashes too, as Airflow's clients send it); the server's HTTP layer has
 * decoded it.  Errors are problem+json (api/reply.h).  What runs behind
 * each route is a dataset_api_ops table (api/dataset_api.h); the router
 * authenticates the request before handing it here.
 */
#ifndef WEIR_API_DATASET_ROUTES_H
#define WEIR_API_DATASET_ROUTES_H

#include <stdbool.h>

#include "api/dataset_api.h"
#include "api/http.h"

/* Whether `path` (after /api/v1, "/datasets/...") is one of these routes.
 * Read before the path is split: a URI may hold any number of slashes. */
bool dataset_routes_owns(const char *path);

struct route_ctx;
struct route_match;

/* The operations of the route table's dataset rows (api/route_table.c), as
 * Airflow's operationIds name them.  Each reads the raw path (a URI holds
 * slashes): one that is not its route after all (a trailing '/') is a 404.
 * The entry has answered 503 where the server keeps no datasets. */
void airflow_get_datasets(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m);
void airflow_get_dataset(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m);
void airflow_get_dataset_events(const struct route_ctx *rc, struct http_request *req,
                                const struct route_match *m);
void airflow_create_dataset_event(const struct route_ctx *rc, struct http_request *req,
                                  const struct route_match *m);
void airflow_get_dataset_queued_events(const struct route_ctx *rc, struct http_request *req,
                                       const struct route_match *m);
void airflow_delete_dataset_queued_events(const struct route_ctx *rc, struct http_request *req,
                                          const struct route_match *m);
void airflow_get_dag_dataset_queued_events(const struct route_ctx *rc, struct http_request *req,
                                           const struct route_match *m);
void airflow_delete_dag_dataset_queued_events(const struct route_ctx *rc, struct http_request *req,
                                              const struct route_match *m);
void airflow_get_dag_dataset_queued_event(const struct route_ctx *rc, struct http_request *req,
                                          const struct route_match *m);
void airflow_delete_dag_dataset_queued_event(const struct route_ctx *rc, struct http_request *req,
                                             const struct route_match *m);
void airflow_get_upstream_dataset_events(const struct route_ctx *rc, struct http_request *req,
                                         const struct route_match *m);

#endif
