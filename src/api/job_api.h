/* job_api.h: what weir's own routes (/api/v1/jobs..., /api/v1/launch...,
 * docs/api.md) ask of the server's job manager.
 *
 * The API holds no job state: every route calls one of these ops, which
 * return JSON or fill an error.  Ownership: ops return new references (or
 * NULL with err); the API sends them.  Strings passed to ops are borrowed
 * for the call.
 */
#ifndef WEIR_API_JOB_API_H
#define WEIR_API_JOB_API_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/error.h"

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
};

#endif
