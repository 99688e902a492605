/* airflow_request.h: what the workflow and UI routes read from a request,
 * the way Airflow's stable REST API v1 reads it: ids, pages (limit,
 * offset), map_index, bodies checked against the fields a schema allows,
 * the Accept header of the log route and its continuation tokens.
 *
 * The checks that can fail on a client's input answer the request
 * themselves with a 400 (or 413) problem (api/reply.h) and return false /
 * NULL / -1; the caller then only returns.
 */
#ifndef WEIR_API_AIRFLOW_REQUEST_H
#define WEIR_API_AIRFLOW_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/dag_api.h"
#include "api/http.h"

struct route_match; /* api/route_match.h */

/* Longest dag_id, dag_run_id or task_id accepted (Airflow's ID_LEN). */
#define AIRFLOW_ID_MAX 250
#define AIRFLOW_PAGE_DEFAULT 100
#define AIRFLOW_PAGE_MAX 1000

/* [A-Za-z0-9_.:+-]{1,250}, and neither "." nor "..". */
bool airflow_id_ok(const char *s);
/* airflow_id_ok, or a 400 naming `what`. */
bool airflow_check_id(struct http_request *req, const char *what, const char *s);

/* airflow_check_id, except that "~" (every one) is taken where `all` (the
 * list routes); elsewhere "~" is a 400 that names the routes that take it. */
bool airflow_check_id_or_all(struct http_request *req, const char *what, const char *s, bool all);
/* The ids of a route's path (api/route_table.h's match): {dag_id} and
 * {dag_run_id} by airflow_check_id_or_all (all_dags, all_runs), then
 * {task_id} by airflow_check_id, each where the template names it. */
bool airflow_path_ids_ok(struct http_request *req, const struct route_match *m, bool all_dags,
                         bool all_runs);
/* A number of the path (a map index, a try): min..1000000, or a 400 naming
 * `what`. */
bool airflow_path_number(struct http_request *req, const char *what, const char *s, int min,
                         int *out);
/* The values of a task instance's path in the places its segments after
 * /api/v1 have them: seg[1] dag_id, seg[3] dag_run_id, seg[5] task_id,
 * seg[7] xcom_key or task_try_number; NULL where the template names none. */
void airflow_path_segments(const struct route_match *m, const char *seg[8]);

/* limit and offset: limit 0 means the default, more than the maximum is
 * cut to it, a negative one is an error. */
bool airflow_page_query(struct http_request *req, int *limit, int *offset);
/* Every query parameter is one of `allowed` (NULL-ended), or a 400 naming
 * the first that is not and listing what the route takes. */
bool airflow_query_known(struct http_request *req, const char *const *allowed);
/* Every value of a repeatable parameter (?state=a&state=b, in order, empty
 * ones left out) into v[0..max); a 400 when there are more. */
bool airflow_query_list(struct http_request *req, const char *key, const char **v, size_t max,
                        size_t *n);
/* A boolean parameter (true/false, 1/0, any case); absent gives `def`. */
bool airflow_query_bool(struct http_request *req, const char *key, bool def, bool *out);
/* A number parameter (duration_gte=1.5); *has false when absent. */
bool airflow_query_number(struct http_request *req, const char *key, bool *has, double *out);
/* ?map_index=N (N >= -1); -1 when absent. */
bool airflow_map_index_query(struct http_request *req, int *map_index);
/* The request's principal as a list's reader (api/dag_api.h): who it
 * authenticated as, its role, and what it needs of each DAG listed. */
struct dag_reader airflow_reader(const struct http_request *req, enum access_need need);
/* The body as a JSON object whose keys are all in `allowed` (NULL-ended). */
json_t *airflow_read_body(struct http_request *req, const char *const *allowed);
/* A boolean field of `body`: absent gives `def`. */
int airflow_body_bool(struct http_request *req, json_t *body, const char *key, bool def, bool *out);

/* Whether an Accept header prefers text/plain over application/json (as
 * Airflow decides: the higher quality wins, a tie goes to text/plain; no
 * header or neither acceptable: JSON). */
bool airflow_accept_text(const char *accept);
/* A log continuation token for `offset` (newly allocated; NULL on out of
 * memory), and the offset back from one (0, or -1 when it is not ours). */
char *airflow_log_token_encode(uint64_t offset, bool end_of_log);
int airflow_log_token_decode(const char *token, uint64_t *offset);

#endif
