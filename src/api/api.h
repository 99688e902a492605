/* api.h: the REST API of docs/api.md: routing, auth, bodies, long polls
 * and log streaming.  The same handler serves the web UI's files
 * (api/ui_assets.h) and its login sessions (api/ui_auth.h), whose cookie
 * authenticates API routes as the token does.
 *
 * The API holds no job state: every route calls one of the api_ops the
 * server fills in (the job manager), which return JSON or fill an error.
 * What the API does own is the waiting: cluster long polls (suspended until
 * api_notify_cluster() or their deadline), job long polls (until
 * api_notify_jobs() finds a new version, or their deadline) and log followers (a 200 ms tick
 * resumes those whose file grew or whose task ended).
 *
 * Ownership: ops return new references (or NULL with err); the API sends
 * them.  Strings passed to ops are borrowed for the call.
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
#include "lib/error.h"

#define API_VERSION "0.1.0"

/* attempt values for ops */
#define API_ATTEMPT_CURRENT 0
#define API_ATTEMPT_ALL (-1)

struct api_ops {
	/* POST /jobs: the body as parsed JSON; the new Job. */
	json_t *(*submit)(void *ctx, json_t *body, struct weir_error *err);
	/* GET /jobs: state may be NULL; limit <= 0 none. {"jobs":[...]} */
	json_t *(*list_jobs)(void *ctx, const char *state, int limit, struct weir_error *err);
	json_t *(*get_job)(void *ctx, int64_t id, struct weir_error *err);
	/* DELETE /jobs/{id}: the Job (409 if ended). */
	json_t *(*kill_job)(void *ctx, int64_t id, struct weir_error *err);
	/* {"tasks":[...]}; attempt: N, API_ATTEMPT_CURRENT or API_ATTEMPT_ALL. */
	json_t *(*tasks)(void *ctx, int64_t id, int attempt, struct weir_error *err);
	json_t *(*events)(void *ctx, int64_t id, struct weir_error *err);
	/* Where a task's log is (*path newly allocated) and whether the task
	 * has ended.  404 when there is no such job / task. */
	int (*log_locate)(void *ctx, int64_t id, const char *role, int index, int attempt,
	                  char **path, bool *ended, struct weir_error *err);
	/* Launch protocol (410 for a stale attempt). */
	json_t *(*launch_register)(void *ctx, json_t *body, struct weir_error *err);
	/* *ready false: the gang is not complete yet (return value then NULL
	 * and no error). */
	json_t *(*launch_cluster)(void *ctx, int64_t job, int attempt, bool *ready,
	                          struct weir_error *err);
	json_t *(*launch_started)(void *ctx, json_t *body, struct weir_error *err);
	json_t *(*launch_exited)(void *ctx, json_t *body, struct weir_error *err);
};

struct api; /* opaque */

/* `token` is copied; `ops` and `ctx` must outlive the api.  NULL on out
 * of memory. */
struct api *api_create(uv_loop_t *loop, const char *token, const struct api_ops *ops, void *ctx);
/* Answers every waiting long poll and ends every follower; NULL is a no-op.
 * Destroy the api before the http server. */
void api_destroy(struct api *api);

/* The workflow routes (/api/v1/dags..., /api/v1/importErrors; api/airflow.h)
 * answer through `ops` (the server's DAG manager); until this is called they
 * answer 503.  `ops` and `ctx` must outlive the api; NULL turns them off. */
void api_set_dag_ops(struct api *api, const struct dag_api_ops *ops, void *ctx);
/* Users who may authenticate with HTTP Basic besides the Bearer token (from
 * the server's configuration; see api/basic_auth.h).  Copied; replaces the
 * list before.  0, or -1 with err naming a bad hash (the list before stays). */
int api_set_users(struct api *api, const struct basic_user *users, size_t n,
                  struct weir_error *err);

/* The http_handler_fn to give http_server_create() (arg: the api). */
void api_handle(struct http_request *req, void *arg);

/* The gang of `job_id` may have completed (or the attempt changed):
 * re-evaluates that job's cluster long polls now. */
void api_notify_cluster(struct api *api, int64_t job_id);
/* Something may have changed: job long polls (GET /jobs/{id}?wait&since)
 * compare their job's version again and answer those that changed. */
void api_notify_jobs(struct api *api);
/* A task ended: log followers of the job check at once. */
void api_notify_logs(struct api *api, int64_t job_id);

/* Helpers, exposed for tests. */
/* Whether an Authorization header value carries `token` (constant time in
 * the token's length). */
bool api_auth_ok(const char *authorization, const char *token);
/* [a-z][a-z0-9_-]*, at most 63 characters. */
bool api_role_name_ok(const char *s);
/* A decimal integer in [min, max] with no junk, no '+' and a '-' only when min < 0; 0 or -1. */
int api_parse_int(const char *s, int64_t min, int64_t max, int64_t *out);

#endif
