/* jm_internal.h: the job manager's pieces and what they promise each other.
 *
 * Not for use outside src/server/job_manager/ (the outside contract is
 * server/job_manager.h).  The manager is one struct job_manager (this
 * file) holding a context per concern, each created and destroyed with it
 * by the file that owns it:
 *
 *   manager.c   the manager itself: lifetime, the journal (a turn's events
 *               written at its end), specs of active jobs, paths
 *   turn.c      the loop turn and its one end (a uv_prepare and a uv_check
 *               handle; before an answer or a message leaves): ended jobs
 *               told to the DAG manager, the commit
 *   rows.c      the rows of active jobs kept in memory: the job's row, its
 *               waiting result, its current attempt's tasks, its route
 *               (changes written behind, once, at the turn's end)
 *   placement.c where work goes: the backends, the server's queues, each job's
 *               route and where its gang is shipped and placed
 *   queue.c     the two allocators and the queue pass (sched decides)
 *   start.c     starting a gang: task rows, launchers or a whole gang
 *   progress.c  carrying out sched's decisions: stop tasks, wind down,
 *               record a result or re-queue for a restart
 *   protocol.c  the launch protocol: register, cluster, started, exited
 *   answer.c    the register answer written as text (answer.h)
 *   ops.c       the operations the API calls (typed rows; api/ renders them)
 *   watch.c     launchers to look at again, backends' verdicts, the
 *               housekeeping tick
 *   recover.c   recovery at start
 *   timeouts.c  sched's timeouts: the due table and its timer
 *
 * Every internal function takes the manager and runs inside the turn,
 * which is always open (turn.c): nothing here begins or ends one.
 */
#ifndef WEIR_SERVER_JOB_MANAGER_JM_INTERNAL_H
#define WEIR_SERVER_JOB_MANAGER_JM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <uv.h>

#include "lib/str.h"
#include "lib/strbuf.h"
#include "sched/job_progress.h"
#include "sched/states.h"
#include "sched/task_end.h"
#include "server/job_manager.h"
#include "store/store.h"

struct hashmap;      /* lib/hashmap.h */
struct jm_placement; /* placement.c */
struct jm_queue;     /* queue.c */
struct jm_watch;     /* watch.c */
struct jm_timeouts;  /* timeouts.c */
struct jm_events;    /* manager.c */
struct jm_turn;      /* turn.c */

struct jm_ended_job {
	int64_t job_id;
	enum job_state state;
	enum end_cause cause;
	int exit_code;
	int64_t started_at;
	char *reason;
	struct jm_ended_job *next;
};

struct job_manager {
	uv_loop_t *loop;
	struct store *store;
	struct node_resources node;
	char *home;
	struct job_manager_observer observer; /* job_manager_set_observer() */
	struct jm_placement *placement;
	struct jm_queue *queue;
	struct jm_watch *watch;
	struct jm_timeouts *timeouts;
	struct hashmap *specs;   /* job id -> its parsed spec, while active */
	struct hashmap *rows;    /* job id -> its rows while active (rows.c) */
	uint64_t rows_rollbacks; /* store_rollbacks() the rows were read under */
	int64_t *unwritten;      /* jobs whose kept rows the store has not yet (rows.c) */
	size_t n_unwritten, cap_unwritten;
	struct jm_events *events; /* the turn's events, not yet written (manager.c) */
	struct jm_turn *turn;     /* turn.c */
	bool open;                /* job_manager_open(): work is handed out */
	/* jobs that reached a final state in this turn: told to end_fn at the
	 * end of the turn, before the commit (the DAG manager's reaction shares
	 * the transaction and the loop turn) */
	struct jm_ended_job *ended;
	job_manager_end_fn end_fn;
	void *end_arg;
	struct job_manager_turn_hooks hooks; /* job_manager_set_turn_hooks() */
	struct secrets *secrets; /* a task's connections (server/secrets.h); NULL: none */
	const char *read_key;    /* the key of tasks' read keys (the server's token,
	                          * borrowed); NULL: no task gets one */
};

/* ---- manager.c ---- */

void jm_set_reason(char **dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Journals an event of the job (errors are logged): inside a turn it is
 * written at the turn's end, with the turn's other events in one statement,
 * in the order they came. */
void jm_event(struct job_manager *jm, int64_t job_id, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Writes what the turn wrote behind (jm_rows_flush) and its events: before
 * a read of jobs, tasks or events from the store inside a turn, and at its
 * end. */
void jm_settle(struct job_manager *jm);
/* Whether a transaction rolled back since *seen (which it updates): what
 * was kept from the store must be read again. */
bool jm_rolled_back(struct job_manager *jm, uint64_t *seen);
/* Tell the observer (job_manager_set_observer) that a job's cluster view
 * or its logs changed; no-ops without one. */
void jm_notify_cluster(struct job_manager *jm, int64_t job_id);
void jm_notify_logs(struct job_manager *jm, int64_t job_id);
/* ---- turn.c ---- */

/* The turn's handles on the manager's loop, and the turn opened; NULL with
 * err.  _destroy commits what the last turn wrote (without the hooks) and
 * closes the handles. */
struct jm_turn *jm_turn_create(struct job_manager *jm, struct weir_error *err);
void jm_turn_destroy(struct job_manager *jm);
/* Notes a job that reached its final state, for end_fn at the turn's end. */
void jm_ended_add(struct job_manager *jm, const struct job_row *job);

bool jm_job_final(const struct job_row *job);
bool jm_task_final(const struct task_row *t);
/* The one door of a job's (a task's) state: the row moves to `s` when
 * sched/states.h allows it (a new row, zeroed, is born queued or pending
 * through it too); else the move is refused, logged as an error naming the
 * job (task) and both states, and the row left as it was.  0, or -1 when
 * refused.  Reading a row from the store is not a move; writing it back
 * stays the caller's (jm_job_save(), jm_task_add()...). */
int jm_job_set_state(struct job_row *job, enum job_state s);
int jm_task_set_state(struct task_row *t, enum task_state s);
/* The row's end as sched reads it, and sched's answer written back (its
 * state through jm_task_set_state(): -1 and nothing written when refused). */
void jm_task_end_of(const struct task_row *t, struct task_end *out);
int jm_task_end_apply(struct task_row *t, const struct task_end *e);
/* The executor's view of the task (borrowing its strings). */
struct executor_task jm_executor_task(const struct task_row *t);
/* The rows as sched's task_status (borrowing their strings); NULL when out
 * of memory. */
struct task_status *jm_task_statuses(const struct task_row *rows, size_t n);

/* Ended, or on its way to an end or a restart: late reports are recorded
 * and nothing new is decided. */
bool jm_winding(struct job_manager *jm, const struct job_row *job);

/* New paths under the home; NULL when out of memory. */
char *jm_log_path(struct job_manager *jm, int64_t job_id, const char *role, int index, int attempt);
char *jm_workdir_path(struct job_manager *jm, int64_t job_id, const char *role, int index,
                      int attempt);
/* The path task ROLE-INDEX's log of `attempt` is read from: jm_log_path(),
 * or the earlier layout's HOME/jobs/ID/logs/... when only that one exists
 * (a job run before the upgrade).  NULL when out of memory. */
char *jm_log_path_found(struct job_manager *jm, int64_t job_id, const char *role, int index,
                        int attempt);

/* The job's parsed spec, cached while it is active (borrowed); NULL with err. */
const struct job_spec *jm_spec_of(struct job_manager *jm, const struct job_row *job,
                                  struct weir_error *err);
/* Keeps `spec` (taken; NULL: nothing) as the job's, as jm_spec_of() would
 * parse it from the row. */
void jm_spec_keep(struct job_manager *jm, int64_t job_id, struct job_spec *spec);
void jm_spec_forget(struct job_manager *jm, int64_t job_id);

/* Where one job runs: stored in the job's row (store_job_route_set) at
 * submission, so that a restart follows the job with the same backend
 * whatever the config says by then. */
struct jm_route {
	bool gang;
	char queue[72]; /* "" when none */
};

/* ---- rows.c ---- */

/* A job's rows as the manager reads and writes them.  While the job is
 * active they are kept in memory (read from the store once, written
 * through at each change): read them here, never from the store, and write
 * them here, never to the store directly.  What the loads give is a copy
 * (the caller releases it: job_row_release, task_rows_free,
 * task_row_release).  0, or -1 with err (WEIR_E_NOT_FOUND: no such row). */
int jm_job_load(struct job_manager *jm, int64_t job_id, struct job_row *out,
                struct weir_error *err);
/* Writes the job's row (behind, inside a turn: see jm_rows_flush); its
 * timeouts are looked at again at the turn's end. */
int jm_job_save(struct job_manager *jm, const struct job_row *job, struct weir_error *err);
/* A new job's row with its route (store_job_insert_routed, now: row->id
 * gets its id), both kept. */
int jm_job_add(struct job_manager *jm, struct job_row *row, const struct jm_route *route,
               struct weir_error *err);
/* The job's nonce (store.h's job_row): from its kept row, else the
 * store.  0 with *nonce, 1 when there is no such job, -1 (logged). */
int jm_job_nonce(struct job_manager *jm, int64_t job_id, int64_t *nonce);
/* A job's result is recorded once its last task has ended (so a killed
 * job reads `killed` only when nothing of it runs any more).  Until then
 * the decided outcome waits in the job's row (store_job_outcome_set),
 * which makes it survive a server restart.  Kept with the job's rows (read
 * from the store once, written behind as a row is). */
bool jm_outcome_get(struct job_manager *jm, int64_t job_id, struct job_outcome *o);
/* NULL clears it. */
void jm_outcome_set(struct job_manager *jm, int64_t job_id, const struct job_outcome *o);
/* The tasks of the job's attempt, in the store's order (the order the rows
 * were added in). */
int jm_tasks_load(struct job_manager *jm, int64_t job_id, int attempt, struct task_row **rows,
                  size_t *n, struct weir_error *err);
int jm_task_load(struct job_manager *jm, int64_t job_id, int attempt, const char *role, int index,
                 struct task_row *out, struct weir_error *err);
/* A new task row (store_task_insert), and a changed one (store_task_update),
 * both written behind inside a turn. */
int jm_task_add(struct job_manager *jm, const struct task_row *t, struct weir_error *err);
int jm_task_save(struct job_manager *jm, const struct task_row *t, struct weir_error *err);
/* The job's route as kept (false: not kept; placement.c reads the store), and
 * kept (`make`: for a new job, whose entry is made now). */
bool jm_rows_route(struct job_manager *jm, int64_t job_id, struct jm_route *r);
void jm_rows_keep_route(struct job_manager *jm, int64_t job_id, const struct jm_route *r,
                        bool make);
/* Writes every kept row, result and task the store has not yet, each
 * once, in the turn's transaction: at the turn's end, before the DAG
 * manager hears of ended jobs, and before anything reads jobs or tasks
 * from the store in a turn (the queue pass, the API's views).  A write that
 * fails is logged and drops its job's entry. */
void jm_rows_flush(struct job_manager *jm);
/* Drops the job's rows, written first (with its spec: jm_spec_forget), and
 * all of them. */
void jm_rows_forget(struct job_manager *jm, int64_t job_id);
void jm_rows_destroy(struct job_manager *jm);

/* ---- placement.c ---- */

struct jm_placement *jm_placement_create(struct weir_error *err);
void jm_placement_destroy(struct jm_placement *r);
/* Where work goes at submission: `queue` (NULL: none) decides gang or
 * local; 0, or -1 with err (WEIR_E_UNFIT: no such queue, no Slurm). */
int jm_route_choose(struct job_manager *jm, const char *queue, bool *gang, struct weir_error *err);
/* A job stored before routes existed (no key) runs where work without a
 * queue runs. */
void jm_route_get(struct job_manager *jm, int64_t job_id, struct jm_route *r);
/* The job's backend; NULL when the server has none for it. */
struct executor *jm_exec_of(struct job_manager *jm, int64_t job_id);
/* The local backend (NULL: none). */
struct executor *jm_local_exec(struct job_manager *jm);
/* Tells every backend that the turn's transaction ended: stored, or rolled
 * back (executor op turn_end). */
void jm_backends_turn_end(struct job_manager *jm, bool stored);
/* The gang backend (NULL: none) and its name for messages. */
struct executor *jm_gang_exec(struct job_manager *jm);
const char *jm_gang_name(struct job_manager *jm, const char *none);
/* Where a gang job's archives go and are unpacked: its queue's shared_dir,
 * else the server's; NULL *shared when the job ships nothing (a local job,
 * or none is configured).  *node_cache: new, with %n for the node. */
void jm_job_shipping(struct job_manager *jm, int64_t job_id, const char **shared,
                     char **node_cache);
/* The archive as the job's tasks read it: shipped to the shared folder when
 * the job ships (placed there now if it is not yet: once per content). */
char *jm_shipped_path(struct job_manager *jm, const char *shared, const char *archive,
                      struct weir_error *err);
/* Where a gang goes: its queue's settings, the job's own `slurm:` over
 * them (the backend adds its defaults under both).  place->options is new
 * (free() it).  0, or -1 when out of memory. */
int jm_job_placement(struct job_manager *jm, int64_t job_id, const struct job_spec *spec,
                     struct executor_placement *place);

/* ---- queue.c ---- */

struct jm_queue *jm_queue_create(const struct node_resources *node, struct weir_error *err);
void jm_queue_destroy(struct jm_queue *q);
/* Makes the gang backend's allocator (unbounded) when there is none yet. */
int jm_queue_want_gang(struct job_manager *jm, struct weir_error *err);
/* The allocator the job's route takes from. */
struct alloc_state *jm_alloc_of(struct job_manager *jm, int64_t job_id);
/* The job's resources back to whichever allocator holds them. */
void jm_release_alloc(struct job_manager *jm, int64_t job_id);
/* The job's row is written queued: the next pass looks at it. */
void jm_queue_note(struct job_manager *jm, int64_t job_id);
/* Starts what can start; a pass asked for during a pass runs after it.  It
 * looks at the noted jobs' kept rows (the store's queue when they are not
 * known: at start, after a rollback), and at nothing when none is.  Before
 * job_manager_open() it does nothing (the open runs the first pass). */
void jm_queue_pass(struct job_manager *jm);
/* The turn's transaction ended: when it was rolled back (a full disk), the
 * resources its starts took are given back, as their rows were. */
void jm_queue_turn_end(struct job_manager *jm, bool stored);
/* A job that cannot run at all (its stored spec, the queue's refusal)
 * fails at once. */
void jm_fail_job_now(struct job_manager *jm, int64_t job_id, const char *reason);

/* ---- start.c ---- */

/* The job's gang as allocated: rows, then launchers (or the whole gang). */
void jm_start_gang(struct job_manager *jm, int64_t job_id, const struct job_alloc *a);
/* Recovery: task `t` (of a job of `n_tasks` tasks), whose start never
 * reached a backend that keeps its tasks (executor.keeps_tasks), is started
 * again with the answer its registration gives now (a gang's task keeps
 * its port; a task still pending registers itself).  Whether it started;
 * if not, it ended `lost` (saved), as a first start that fails. */
bool jm_start_again(struct job_manager *jm, struct task_row *t, size_t n_tasks);

/* ---- progress.c ---- */

/* Asks sched what follows the event for the job and carries it out. */
void jm_progress(struct job_manager *jm, int64_t job_id, const struct progress_event *ev);
/* Carries out a decision: the result waits (or the restart is pending),
 * the tasks marked are stopped, then wind down. */
void jm_apply_decision(struct job_manager *jm, struct job_row *job, const struct task_row *tasks,
                       size_t n, const struct progress_decision *d);
/* A task of the job's current attempt ended. */
void jm_task_ended(struct job_manager *jm, int64_t job_id, const char *role, int index);
/* When every task of the current attempt has ended: a final job gives its
 * resources back; a restarting one goes back to the queue as attempt + 1. */
void jm_wind_down(struct job_manager *jm, int64_t job_id);

/* ---- protocol.c: api_ops of the launch protocol (ctx: the manager) ---- */

json_t *jm_launch_register(void *ctx, json_t *body, struct weir_error *err);

/* A task's registration, as POST /launch/register says it or as the
 * manager makes it for a shim it starts itself: host NULL and port -1 keep
 * the row's, pid 0 none. */
struct jm_register_call {
	int64_t job_id;
	const char *role;
	int index, attempt;
	const char *host;
	int port, pid;
};

/* Registers the task (pending -> starting; the gang complete: the job
 * running) and appends its register answer (answer.h) to *answer.  0, or
 * -1 with err (WEIR_E_GONE: no longer current). */
int jm_register(struct job_manager *jm, const struct jm_register_call *c, struct strbuf *answer,
                struct weir_error *err);
json_t *jm_launch_cluster(void *ctx, int64_t id, int attempt, bool *ready, struct weir_error *err);
json_t *jm_launch_started(void *ctx, json_t *body, struct weir_error *err);
json_t *jm_launch_exited(void *ctx, json_t *body, struct weir_error *err);

/* ---- watch.c ---- */

struct jm_watch *jm_watch_create(struct job_manager *jm, struct weir_error *err);
/* Stops its tick; the context goes when its handle has closed. */
void jm_watch_destroy(struct jm_watch *w);
/* A launcher to look at again: ended without reporting (due_ms, monotonic:
 * then it is gone), or found alive at recovery (due_ms 0: polled with
 * is_alive until it is gone).  `v`: the backend's verdict for it.  -1 when
 * out of memory. */
int jm_watch_add(struct job_manager *jm, int64_t job_id, int attempt, const char *role, int index,
                 int launcher_pid, int64_t due_ms, const char *why, enum task_verdict v);

/* ---- timeouts.c ---- */

struct jm_timeouts *jm_timeouts_create(struct job_manager *jm, struct weir_error *err);
/* Stops its timer; the context goes when its handle has closed. */
void jm_timeouts_destroy(struct jm_timeouts *t);
/* The job changed: its timeouts are looked at again at the turn's end. */
void jm_timers_touch(struct job_manager *jm, int64_t job_id);
/* The job has ended: not looked at again unless touched anew. */
void jm_timers_forget(struct job_manager *jm, int64_t job_id);
/* At a turn's end: files the noted jobs' next timeouts, acts on expired
 * ones, arms the timer for the earliest. */
void jm_timers_check(struct job_manager *jm);

#endif
