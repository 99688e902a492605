/* cli_watch.h: turning successive snapshots of a job into change lines.
 *
 * `weir submit` polls GET /api/v1/jobs/{id} and must print one line per
 * change, never the same state twice (no flood).  A cli_watch remembers what
 * it has already reported: each task's state (by attempt, role and index),
 * the job's attempt and its waiting/failure reason.  Pure: JSON in, lines
 * out, so it is unit tested without a server.
 *
 * A snapshot shows where a task is, not the states it passed through since
 * the last one.  Given the job's events (GET /api/v1/jobs/{id}/events), the
 * watch also says each state a task went through between two snapshots:
 * pending (its attempt's "starting: attempt N" event), starting (its
 * "ROLE:I registered" event) and running (its "ROLE:I running" event), each
 * once, in that order, before the state the snapshot shows.
 */
#ifndef WEIR_CLI_CLI_WATCH_H
#define WEIR_CLI_CLI_WATCH_H

#include <jansson.h>
#include <stddef.h>

struct cli_watch_task {
	char *key;   /* "role:index" */
	char *state; /* last reported */
};

/* Embedded; cli_watch_init() / cli_watch_release().  Owns its strings. */
struct cli_watch {
	long long job_id;
	long long attempt; /* last seen; 0 before the first snapshot */
	char *reason;      /* last reported job reason; NULL: none */
	struct cli_watch_task *tasks;
	size_t n_tasks, cap_tasks;
	json_t *events; /* borrowed (cli_watch_set_events); NULL: snapshots only */
};

/* Receives each change line (no newline, no time stamp). */
typedef void (*cli_watch_line_fn)(const char *line, void *arg);

void cli_watch_init(struct cli_watch *w, long long job_id);
void cli_watch_release(struct cli_watch *w);

/* Compares `job` (a Job object, with the current attempt's "tasks") with
 * what was reported before and calls `emit` once per change, in this
 * order: a new attempt ("job 12 restarted: attempt 2[: reason]"), a new
 * non-empty reason while the job is not final ("job 12 waiting: 4g memory",
 * "job 12 queued: REASON" when it does not start with "waiting"), then each
 * task whose state changed ("worker:0 running", "worker:1 failed (exit 1)",
 * "chief:0 failed (exit 137, OOMKilled)", "ps:0 killed (signal 15)").
 * The job's final state is not emitted: the caller prints a summary.
 * Returns the number of lines emitted, or -1 when out of memory. */
int cli_watch_update(struct cli_watch *w, json_t *job, cli_watch_line_fn emit, void *arg);

/* Lends the watch the job's events (the "events" array of GET
 * /api/v1/jobs/{id}/events) for the next updates; NULL takes them back.
 * The caller keeps them alive while they are lent. */
void cli_watch_set_events(struct cli_watch *w, json_t *events);

/* Only the task part of cli_watch_update(): `tasks` is an array of Task
 * objects of the attempt the watch is on.  `weir submit` uses it to report
 * how the previous attempt's tasks ended before it reports a restart.
 * Returns the number of lines, or -1 when out of memory. */
int cli_watch_tasks(struct cli_watch *w, json_t *tasks, cli_watch_line_fn emit, void *arg);

/* A task's reason worth printing beside its state and exit code: "" for
 * "exited 1" (the exit code says it), "launcher got SIGTERM" for a killed
 * task's "killed (launcher got SIGTERM)".  Into buf. */
char *cli_watch_task_reason(json_t *task, char *buf, size_t size);

/* The text after "worker:1 " for a Task: "running", "failed (exit 1)",
 * "failed (exit 137, OOMKilled)", "killed (signal 15)".  Into buf. */
char *cli_watch_task_text(json_t *task, char *buf, size_t size);

#endif
