/* airflow.h: the workflow routes, as Airflow's stable REST API v1 has them
 * (paths, query parameters, status codes, problem+json errors; docs/api.md
 * lists what is covered).
 *
 * This module owns routing under /api/v1/dags and /api/v1/importErrors (and
 * weir's /api/v1/ui, the web UI's one-request views of the same data),
 * validation of ids, query parameters and bodies, content negotiation and
 * continuation tokens for logs, and errors as RFC 7807 problems.  What runs
 * behind each route is the server's DAG manager, through a dag_api_ops table
 * (api/dag_api.h); api.c authenticates the request before handing it here.
 */
#ifndef WEIR_API_AIRFLOW_H
#define WEIR_API_AIRFLOW_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/dag_api.h"
#include "api/http.h"
#include "lib/error.h"

/* Longest dag_id, dag_run_id or task_id accepted (Airflow's ID_LEN). */
#define AIRFLOW_ID_MAX 250

/* Whether the first path segment is one of these routes ("dags", "importErrors", "ui"). */
bool airflow_owns(const char *first_segment);

/* Answers the request: seg[0..n) are the path's segments after /api/v1/
 * (already percent-decoded).  ops NULL: the server runs no DAG manager (503). */
void airflow_handle(const struct dag_api_ops *ops, void *ctx, struct http_request *req, char **seg,
                    int n);

/* An RFC 7807 answer: Content-Type application/problem+json and
 * {"type","title","status","detail"}. */
void airflow_respond_problem(struct http_request *req, int status, const char *detail);
/* The same for a filled weir_error (status from weir_error_http_status). */
void airflow_respond_error(struct http_request *req, const struct weir_error *err);

/* Adds Airflow's health fields ("metadatabase", "scheduler") to weir's
 * health object: a server that answers runs its scheduler on this loop. */
void airflow_health_add(json_t *health);

/* Helpers, exposed for tests. */
/* [A-Za-z0-9_.:+-]{1,250}, and neither "." nor "..". */
bool airflow_id_ok(const char *s);
/* Whether an Accept header prefers text/plain over application/json (as
 * Airflow decides: the higher quality wins, a tie goes to text/plain; no
 * header or neither acceptable: JSON). */
bool airflow_accept_text(const char *accept);
/* A log continuation token for `offset` (newly allocated; NULL on out of
 * memory), and the offset back from one (0, or -1 when it is not ours). */
char *airflow_log_token_encode(uint64_t offset, bool end_of_log);
int airflow_log_token_decode(const char *token, uint64_t *offset);

#endif
