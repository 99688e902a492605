/* log_stream.h: the one streamer behind both log routes (weir's
 * GET /jobs/{id}/tasks/{role}/{index}/logs and Airflow's text/plain
 * GET .../taskInstances/{task_id}/logs/{try}): a window [start, end) of a
 * task's log file as a text/plain body, and, with follow, the bytes that
 * arrive later until the task has ended.
 *
 * Where the server writes the file itself (a chunk shipped by a launcher,
 * POST /launch/log, through log_stream_append()), its followers wake when
 * the bytes are written.  A file written by someone else (a local launcher
 * with log_transport: file, the default) is watched while its follower
 * waits (inotify, through libuv's uv_fs_event): a write on this machine
 * wakes it.  Every waiting follower also looks at its file now and then:
 * every LOG_STREAM_RECHECK_MS once it has been told of a write (an append
 * or a notice), for a task end that came without a notice; every
 * LOG_STREAM_POLL_MS until then, for a file written where this kernel
 * cannot see it (a Slurm step on another node, a shared file system).
 * The task's end reaches followers through log_stream_notify_job() (the job
 * manager's api_notify_logs()): they drain what is left and end.
 *
 * Lifetime: a follower lives as long as its response; destroying the
 * streamer ends every follow (each response ends after its bytes).
 */
#ifndef WEIR_API_LOG_STREAM_H
#define WEIR_API_LOG_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "api/http.h"
#include "lib/error.h"

#define LOG_STREAM_POLL_MS 200
#define LOG_STREAM_RECHECK_MS 1000

/* Whether the followed task has ended (or is gone). */
typedef bool (*log_stream_ended_fn)(void *arg);

/* One answer.  path and ended_arg are taken (freed with the response);
 * fd (>= 0: taken) is the file already open, -1 to open path when it
 * appears. */
struct log_stream_source {
	char *path;
	int fd;
	uint64_t start;               /* the first byte */
	uint64_t end;                 /* the byte after the last; UINT64_MAX: to the end */
	bool follow;                  /* wait for more bytes until the task has ended */
	bool ended;                   /* the task has ended already */
	int64_t job;                  /* for log_stream_notify_job(); 0: none */
	log_stream_ended_fn ended_fn; /* may be NULL without follow */
	void *ended_arg;              /* malloc'ed, or NULL */
};

struct log_stream; /* opaque */

/* NULL on out of memory. */
struct log_stream *log_stream_create(uv_loop_t *loop);
/* Ends every follow and closes the timer (run the loop once more to finish
 * closing it).  NULL is a no-op. */
void log_stream_destroy(struct log_stream *ls);

/* How long waiting followers go between looks at their files (defaults:
 * LOG_STREAM_POLL_MS, LOG_STREAM_RECHECK_MS).  Tests make both long, so
 * that only a wake-up can deliver bytes. */
void log_stream_set_looks(struct log_stream *ls, int64_t poll_ms, int64_t recheck_ms);

/* Answers `req` 200 text/plain with the source's bytes (headers added
 * before this call go with it).  Takes what src owns, also on failure.
 * 0, or -1 out of memory (`req` not answered: the route answers in its
 * dialect). */
int log_stream_respond(struct log_stream *ls, struct http_request *req,
                       struct log_stream_source *src);

/* A task of `job` ended: its followers look at once. */
void log_stream_notify_job(struct log_stream *ls, int64_t job);

/* log_append_at() (api/log_append.h), then wakes the followers of `path`
 * when bytes were written.  Same returns. */
int log_stream_append(struct log_stream *ls, const char *path, uint64_t offset, const char *data,
                      size_t len, uint64_t *size, struct weir_error *err);

#endif
