/* api.h: the REST API of docs/api.md: the router and what the server sees
 * of it.
 *
 * One handler serves every path: weir's job and launch routes
 * (api/jobs_routes.h, api/launch_routes.h, answering through the job
 * manager's api_ops, api/job_api.h), the workflow routes in Airflow's
 * shape (api/airflow.h, api/ui_routes.h, through the DAG manager's
 * dag_api_ops, api/dag_api.h), the web UI's files (api/ui_assets.h) and
 * its login sessions (api/ui_auth.h), whose cookie authenticates API
 * routes as the token does.  The router checks the origin, looks the path
 * up in the route table (api/route_table.h: the row, the entry that answers
 * it), checks the credentials the entry asks for and dispatches it to the
 * row's operation of the method (route_dispatch()).
 *
 * The API holds no job state.  What it does own is the waiting: cluster
 * long polls (suspended until api_notify_cluster() or their deadline), job
 * long polls (until api_notify_jobs() finds a new version, or their
 * deadline) and log followers (woken when the server appends to their file,
 * when a task ends, or by a fallback look at a file others write;
 * api/log_stream.h).
 */
#ifndef WEIR_API_API_H
#define WEIR_API_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "api/basic_auth.h"
#include "api/dag_api.h"
#include "api/http.h"
#include "api/job_api.h"
#include "api/observe_api.h"
#include "api/request.h"
#include "api/secrets_api.h"
#include "lib/error.h"

/* The server's version in /health and /version: weir's own, set by the Makefile from
 * python/weir/_version.py (the one source of the version). */
#ifndef WEIR_VERSION
#error "WEIR_VERSION is set by the Makefile, from python/weir/_version.py"
#endif
#define API_VERSION WEIR_VERSION

struct api; /* opaque */

/* `token` is copied; `ops` and `ctx` must outlive the api.  NULL on out
 * of memory. */
struct api *api_create(uv_loop_t *loop, const char *token, const struct api_ops *ops, void *ctx);
/* Answers every waiting long poll and ends every follower; NULL is a no-op.
 * Destroy the api before the http server. */
void api_destroy(struct api *api);

/* The workflow routes (/api/v1/dags..., /api/v1/importErrors, /api/v1/ui)
 * answer through `ops` (the server's DAG manager); until this is called they
 * answer 503.  `ops` and `ctx` must outlive the api; NULL turns them off. */
void api_set_dag_ops(struct api *api, const struct dag_api_ops *ops, void *ctx);
/* The dataset routes (/api/v1/datasets..., api/dataset_routes.h) answer
 * through `ops` (the server's, server/dataset_ops.h); until set, 503. */
struct dataset_api_ops;
void api_set_dataset_ops(struct api *api, const struct dataset_api_ops *ops, void *ctx);
/* The connection and variable routes (/api/v1/connections, /api/v1/variables)
 * answer through `ops` (the server's, server/secrets_ops.h); until this is
 * called they answer 503. */
/* The notification and SLA-miss routes' ops (api/notify_api.h). */
struct notify_api_ops;
void api_set_notification_ops(struct api *api, const struct notify_api_ops *ops, void *ctx);
void api_set_secrets_ops(struct api *api, const struct secrets_api_ops *ops, void *ctx);
/* What GET /config answers (Airflow's Config: {"sections":[{name, options:
 * [{key, value}]}]}, no secret in it); `view` is stolen.  Until this is
 * called /config answers 403. */
void api_set_config_view(struct api *api, json_t *view);
/* Where GET /health learns whether the store answers and when the scheduler
 * last passed (dag_api.h); until this is called both read null. */
void api_set_health(struct api *api, api_health_fn fn, void *ctx);
/* Users who may authenticate with HTTP Basic and the UI's login besides
 * the Bearer token (the server's configuration's and its store's; see
 * api/basic_auth.h), and whose roles a person's token carries.  Copied;
 * replaces the list before (server/users.c calls it again at every change
 * of the store's users).  0, or -1 with err naming a bad hash (the list before stays). */
int api_set_users(struct api *api, const struct basic_user *users, size_t n,
                  struct weir_error *err);

/* Whether the web UI's session cookie always says Secure (a server reached
 * over https through a proxy); else it does when the request came over TLS. */
void api_set_secure_cookie(struct api *api, bool always);

/* The http_handler_fn to give http_server_create() (arg: the api). */
void api_handle(struct http_request *req, void *arg);
/* For the server's before-answer hook (api/http.h), when the turn the
 * answer reports could not be stored (a full disk: `err`): an answer of
 * success to a request that changes state (any method but GET and HEAD)
 * is taken back and replaced by a 503 naming the cause, in the route's
 * voice (a problem on Airflow's routes); any other answer stands (a read
 * is still true, an error still an error). */
void api_answer_unstored(struct http_request *req, const struct weir_error *err);
/* The http_done_fn to give http_server_set_done() (arg: the api): counts
 * the request in the metrics and records it in the event log when it is
 * one that changes state (api/event_log_note.h). */
void api_request_done(struct http_request *req, int status, void *arg);
/* GET /metrics's gauges and the event log (record, /api/v1/eventLogs) go
 * through `ops` (server/observe.h); until this is called the page has no
 * gauges, nothing is recorded and /eventLogs answers 503. */
void api_set_observe_ops(struct api *api, const struct observe_api_ops *ops, void *ctx);
/* /api/v1/weir/dbClean goes through `ops` (server/db_clean.h); until this
 * is called it answers 503. */
struct db_clean_api_ops;
void api_set_db_clean_ops(struct api *api, const struct db_clean_api_ops *ops, void *ctx);
/* The users of the store and the person's tokens (weir users, weir
 * tokens) go through `ops` (server/users.h); until this is called a
 * Bearer token other than the home's is refused and /api/v1/weir/users
 * answers 503. */
struct users_api_ops;
void api_set_users_ops(struct api *api, const struct users_api_ops *ops, void *ctx);

/* The gang of `job_id` may have completed (or the attempt changed):
 * re-evaluates that job's cluster long polls now. */
void api_notify_cluster(struct api *api, int64_t job_id);
/* Something may have changed: job long polls (GET /jobs/{id}?wait&since)
 * compare their job's version again and answer those that changed. */
void api_notify_jobs(struct api *api);
/* A task ended: log followers of the job check at once. */
void api_notify_logs(struct api *api, int64_t job_id);

#endif
