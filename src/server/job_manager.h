/* job_manager.h: the wiring between the API, the store, the scheduler and
 * the executor.
 *
 * Every event (a submission, a launcher's report, a launcher process that
 * ended, a kill, a timer) is handled the same way: update the store in one
 * transaction, ask sched/ what follows (queue_schedule_routes, task_end_*,
 * job_progress_decide, job_progress_gang_end, timers_check) and carry it out
 * through the executor.  The manager makes no decision of its own beyond
 * bookkeeping (which attempt is current, when every task of an attempt has
 * ended).  It is built in pieces, one concern each, in
 * server/job_manager/ (jm_internal.h has the map).
 *
 * It fills the api_ops table (api/api.h) and lives on one libuv loop.
 * Ownership: the manager borrows the store, executor and node resources,
 * which must outlive it.
 */
#ifndef WEIR_SERVER_JOB_MANAGER_H
#define WEIR_SERVER_JOB_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "api/api.h"
#include "exec/executor.h"
#include "lib/error.h"
#include "model/end_cause.h"
#include "model/job_spec.h"
#include "model/states.h"
#include "sched/alloc.h"
#include "store/store.h"

struct job_manager; /* opaque */

/* `home` is absolute and copied.  NULL with err on out of memory. */
struct job_manager *job_manager_create(uv_loop_t *loop, struct store *store,
                                       const struct node_resources *node, const char *home,
                                       struct weir_error *err);
/* Stops the manager's timers; running tasks keep running.  NULL is a no-op. */
void job_manager_destroy(struct job_manager *jm);

/* A queue of the server's: a name jobs (`queue:`) and DAG tasks are routed
 * by, to the local backend or to the gang backend (Slurm) with its
 * placement (over the backend's defaults; the job's `slurm:` wins). */
struct job_manager_queue {
	const char *name;
	bool gang;
	struct executor_placement place;
	/* environment shipping (gang queues): NULL: the server's (set_shipping) */
	const char *shared_dir, *node_cache_dir;
};

/* The server-wide shared_dir and node_cache_dir of gang work (copied; NULL:
 * none: archives are read where they are, unpacked into the home's cache).
 * A job on the gang backend with a shared_dir has each archive placed in
 * SHARED/artifacts/<sha256>.<ext> before its submission, and its tasks
 * unpack it into the node cache (node_cache_dir, else SHARED/nodes/%n; the
 * launcher puts its node's name for %n). */
void job_manager_set_shipping(struct job_manager *jm, const char *shared_dir,
                              const char *node_cache_dir);

/* Set before recovery; borrowed.  The one backend for all work (a gang
 * backend, e.g. Slurm, or the local one). */
void job_manager_set_executor(struct job_manager *jm, struct executor *ex);

/* Whether the server has a queue `name`; `names` (of `size`) gets the
 * names it has, ", "-separated, for a message. */
bool job_manager_has_queue(struct job_manager *jm, const char *name, char *names, size_t size);

/* Set before recovery.  The backends (borrowed; either may be NULL): work
 * without a queue goes to `gang` when default_gang, else to `local`; a
 * job's `queue:` must name one of `queues` (copied).  Each job's backend
 * and queue are stored at submission (a restart follows them).  Jobs of
 * the gang backend bypass the local node's allocator (the cluster
 * allocates).  0, or -1 with err (out of memory). */
int job_manager_set_routes(struct job_manager *jm, struct executor *local, struct executor *gang,
                           bool default_gang, const struct job_manager_queue *queues, size_t n,
                           struct weir_error *err);
/* Who hears of what the job manager changed, so that waiting clients ask
 * again (server.c wires it to the api's api_notify_*: the long polls and
 * log followers).  The manager calls up to no layer above it: it calls
 * these.  Each callback may be NULL; all are called on the loop. */
struct job_manager_observer {
	/* a job's gang completed, its attempt changed or it ended */
	void (*cluster_changed)(void *ctx, int64_t job_id);
	/* a turn committed: any job may have changed */
	void (*jobs_changed)(void *ctx);
	/* a job's log grew, or one of its tasks ended */
	void (*logs_changed)(void *ctx, int64_t job_id);
	void *ctx;
};
/* Copies `obs` (NULL: nobody hears). */
void job_manager_set_observer(struct job_manager *jm, const struct job_manager_observer *obs);
/* Where a task's `connections:` are resolved when its launcher registers
 * (server/secrets.h); borrowed, must outlive the manager.  Without it a
 * job that lists connections fails to launch, saying so. */
struct secrets;
void job_manager_set_secrets(struct job_manager *jm, struct secrets *secrets);
/* The key (the server's token: borrowed, it outlives jm) the read keys of
 * tasks whose environment asks for one (WEIR_TASK_READS=dag_runs) are
 * derived from (exec/launch_secret.h); unset: no task gets one. */
void job_manager_set_read_key(struct job_manager *jm, const char *key);

/* The api_ops of the manager (ctx: the manager). */
const struct api_ops *job_manager_api_ops(void);

/* The executor_gang_fn to give a gang backend (arg: the manager): records
 * the backend's id, a refusal (the job fails with the backend's words), a
 * pending reason, and an end that left tasks unreported (they become lost). */
void job_manager_on_gang_event(void *arg, int64_t job_id, int attempt, enum executor_gang_event ev,
                               const char *backend_id, const char *reason);

/* The executor_exit_fn to give the executor (arg: the manager). */
/* executor_reports_fn (exec/executor.h): the agent's started and exited
 * reports of one read, recorded in the turn as the HTTP calls of the same
 * names would record them. */
void job_manager_on_agent_reports(void *arg, json_t *batch);
/* Whether the store knows job `job_id` with this nonce (the node's
 * agent's task keys carry it): false for a job a power cut lost, even when
 * a later job has its id (docs/internals/recovery.md, "A power cut").
 * `arg` is the job manager. */
bool job_manager_knows_nonce(void *arg, int64_t job_id, int64_t nonce);

void job_manager_on_launcher_exit(void *arg, int64_t job_id, const char *role, int index,
                                  int attempt, int launcher_pid, int64_t exit_status,
                                  int term_signal);

/* Recovery at start: rebuilds allocations from the active jobs' tasks,
 * marks tasks whose launcher is gone `lost` and lets sched decide.  No
 * job starts before job_manager_open().  0, or -1 with err when the store
 * cannot be read. */
int job_manager_recover(struct job_manager *jm, struct weir_error *err);

/* The server has finished starting (the job manager's recovery read, the
 * DAGs loaded and their runs recovered, every backend made): the manager
 * hands work out from now on, and the backends tell what they heard
 * meanwhile (executor ops' `open`: the agent's reports kept while no server
 * listened).  Runs the first queue pass.  Until then a manager starts
 * nothing: a queue pass waits for this call, so that no job is started
 * while its backend, its allocation or its DAG is not known yet. */
void job_manager_open(struct job_manager *jm);

/* ---- hooks for the DAG manager (server/dag_manager.h) ---- */

/* Told once when a job reaches a final state (succeeded, failed, killed):
 * the cause of its end (model/end_cause.h), its exit code (-1: none),
 * reason ("execution timeout after 5s", ...) and when it started (its
 * started_at; 0: it never did).
 * Called at the end of the loop turn that ended it, inside that turn's
 * transaction, so what the callee writes and submits commits with it.
 * Strings are borrowed for the call. */
typedef void (*job_manager_end_fn)(void *arg, int64_t job_id, enum job_state state,
                                   enum end_cause cause, int exit_code, const char *reason,
                                   int64_t started_at);
void job_manager_set_end_callback(struct job_manager *jm, job_manager_end_fn fn, void *arg);

/* Validates `spec` and queues it as a new job, as POST /api/v1/jobs does;
 * a queue pass follows at once.  `spec` is taken (destroyed on failure):
 * on success it stays the job's spec as built, written to the store as
 * text but never parsed back.  0 with *job_id, or -1 with err
 * (WEIR_E_INVALID, WEIR_E_UNFIT: it can never fit this node). */
int job_manager_submit_spec(struct job_manager *jm, struct job_spec *spec, int64_t *job_id,
                            struct weir_error *err);
/* job_manager_submit_spec for a spec that passed job_spec_validate() and
 * was not changed since (the DAG manager's, built by dag_job_build(), which
 * validates it): not checked again. */
int job_manager_submit_valid(struct job_manager *jm, struct job_spec *spec, int64_t *job_id,
                             struct weir_error *err);

/* Kills a job as DELETE /api/v1/jobs/ID does.  WEIR_E_NOT_FOUND,
 * WEIR_E_CONFLICT (already ended). */
int job_manager_kill(struct job_manager *jm, int64_t job_id, struct weir_error *err);

/* The turn (job_manager/turn.c): what the loop does between two waits,
 * in one transaction, always open; entry points just do their work.  This
 * ends it, and is called when the loop is about to wait, once the events of
 * a wait are in, and before anything leaves the process (an HTTP answer, a
 * message to the agent: server.c wires them), in this order: the jobs that
 * ended are told to end_fn, the timers are checked, the turn hooks'
 * before_commit runs (the DAG manager's work pass and write-behind rows),
 * again until no job ended; the job manager's rows written behind are
 * written; the commit (a failed one rolls back) and the next turn opened;
 * the observer's jobs_changed when the turn wrote (waiting clients see
 * what was stored); the hooks' after_commit (the wake-up timer, armed
 * once).  Called from within its own end it returns at once; with nothing
 * in the turn it costs a few checks. */
void job_manager_turn_end(struct job_manager *jm);
/* job_manager_turn_end() for an entry point that answers: -1 with the
 * commit's error (a full disk: WEIR_E_UNAVAILABLE, "... the disk is full
 * ...") when the turn it ended was rolled back, else 0. */
int job_manager_turn_end_stored(struct job_manager *jm, struct weir_error *err);
/* job_manager_turn_end_stored() whose commit is durable
 * (store_commit_durable(): the WAL synced, so the turn and every one before
 * it survive a power cut): for what tells its receiver it may forget (the
 * agent's acknowledgements).  -1 with the error when the turn was rolled
 * back or the sync failed: nothing may be acknowledged. */
int job_manager_turn_end_durable(struct job_manager *jm, struct weir_error *err);

/* The turn's other party (the DAG manager): see job_manager_turn_end().
 * Each callback may be NULL; `h` is copied (NULL: none). */
struct job_manager_turn_hooks {
	void (*before_commit)(void *ctx);
	void (*after_commit)(void *ctx);
	void *ctx;
};
void job_manager_set_turn_hooks(struct job_manager *jm, const struct job_manager_turn_hooks *h);

/* Forgets what is kept in memory of an ended job whose rows are removed
 * (server/db_clean.c): its spec and rows, written first. */
void job_manager_forget_ended(struct job_manager *jm, int64_t job_id);

/* Counts for the start-up line. */
void job_manager_counts(struct job_manager *jm, int *active_jobs, int *running_tasks);

#endif
