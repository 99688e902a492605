/* job_api.h: what weir's own routes (/api/v1/jobs..., /api/v1/launch...,
 * docs/api.md) ask of the server's job manager.
 *
 * The API holds no job state: every route calls one of these ops.  The job
 * routes' ops hand over typed rows (api/job_views.h), which the routes
 * render; the launch protocol's return the JSON the launcher reads.  Each
 * op returns 0 (or a new reference), or -1 (NULL) with err.  Ownership:
 * what an op fills or returns is the caller's (job_view_release(),
 * task_rows_free(), event_rows_free(), json_decref()).  Strings passed to
 * ops are borrowed for the call.
 */
#ifndef WEIR_API_JOB_API_H
#define WEIR_API_JOB_API_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/job_views.h"
#include "lib/error.h"
#include "store/call_store.h"
#include "store/store.h"

/* attempt values for ops */
#define API_ATTEMPT_CURRENT 0
#define API_ATTEMPT_ALL (-1)

struct api_ops {
	/* POST /jobs: the body as parsed JSON; *out: the new job. */
	int (*submit)(void *ctx, json_t *body, struct job_view *out, struct weir_error *err);
	/* GET /jobs: state may be NULL; limit <= 0 none.  *jobs: a new array
	 * of *n views, newest first (job_views_free()). */
	int (*list_jobs)(void *ctx, const char *state, int limit, struct job_view **jobs, size_t *n,
	                 struct weir_error *err);
	/* GET /jobs/{id} (404 when there is no such job). */
	int (*get_job)(void *ctx, int64_t id, struct job_view *out, struct weir_error *err);
	/* DELETE /jobs/{id}: *out: the job after the kill (409 if ended). */
	int (*kill_job)(void *ctx, int64_t id, struct job_view *out, struct weir_error *err);
	/* The tasks of an attempt: N, API_ATTEMPT_CURRENT or API_ATTEMPT_ALL
	 * (task_rows_free()). */
	int (*tasks)(void *ctx, int64_t id, int attempt, struct task_row **rows, size_t *n,
	             struct weir_error *err);
	/* The job's journal, oldest first (event_rows_free()). */
	int (*events)(void *ctx, int64_t id, struct event_row **rows, size_t *n,
	              struct weir_error *err);
	/* Where a task's log is (*path newly allocated) and whether the task
	 * has ended.  404 when there is no such job / task. */
	int (*log_locate)(void *ctx, int64_t id, const char *role, int index, int attempt,
	                  char **path, bool *ended, struct weir_error *err);
	/* POST /jobs/{id}/calls: a batch of a warm worker's calls recorded
	 * (store/call_store.h; each row's job_id is ignored); *changed: the
	 * rows that changed.  404 when there is no such job. */
	int (*record_calls)(void *ctx, int64_t id, const struct call_row *rows, size_t n,
	                    size_t *changed, struct weir_error *err);
	/* GET /jobs/{id}/calls: the job's calls past call id `after`, at most
	 * `limit`, and the counts by state (call_rows_free()).  404 when there
	 * is no such job. */
	int (*calls)(void *ctx, int64_t id, int64_t after, int limit, struct call_row **rows,
	             size_t *n, int64_t counts[CALL_STATE_COUNT], struct weir_error *err);
	/* Launch protocol (410 for a stale attempt). */
	json_t *(*launch_register)(void *ctx, json_t *body, struct weir_error *err);
	/* *ready false: the gang is not complete yet (return value then NULL
	 * and no error). */
	json_t *(*launch_cluster)(void *ctx, int64_t job, int attempt, bool *ready,
	                          struct weir_error *err);
	json_t *(*launch_started)(void *ctx, json_t *body, struct weir_error *err);
	json_t *(*launch_exited)(void *ctx, json_t *body, struct weir_error *err);
};

/* The kinds of long polls of weir's routes (api/long_poll.h). */
enum api_wait_kind {
	API_WAIT_CLUSTER, /* a launcher waiting for its gang (key: the job) */
	API_WAIT_JOB      /* a client waiting for a job to change (key: the job) */
};

struct long_polls;
struct log_stream;

/* What weir's route groups work with: the ops, the long polls and the log
 * streamer, all owned by the api (api/api.h). */
struct job_routes {
	const struct api_ops *ops;
	void *ctx;
	struct long_polls *polls;
	struct log_stream *logs;
	/* the key of launchers' secrets (exec/launch_secret.h): the server's
	 * token, which the launch routes themselves refuse */
	const char *launch_key;
};

#endif
