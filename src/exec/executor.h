/* executor.h: the table every backend (local, later slurm) fills in.
 *
 * An executor carries out what the job manager decided: start one
 * launcher (`weir launch`) per task, signal it, say whether it is alive.
 * It decides nothing.  A backend reports the end of a launcher it started
 * through the executor_exit_fn given at creation; launchers it did not
 * start (found at recovery) are only visible through is_alive().
 *
 * Lifetime: an executor lives on one libuv loop; destroy() leaves running
 * launchers running (they survive the server by design) and frees the
 * executor's own handles.
 */
#ifndef WEIR_EXEC_EXECUTOR_H
#define WEIR_EXEC_EXECUTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "lib/error.h"

/* Where a gang backend places one gang (for Slurm: sbatch's --partition,
 * --account, --qos, --time and extra options).  NULL / 0: not set here.
 * Strings borrowed. */
struct executor_placement {
	const char *partition, *account, *qos;
	const char *time;           /* sbatch --time as written; NULL: from time_limit_s */
	const char *const *options; /* added as they are */
	size_t n_options;
};

/* `over`'s fields where set, else `base`'s; the options are base's then
 * over's (sbatch lets a later option win).  Either may be NULL.
 * out->options is new (free() it; its strings stay borrowed).  0, or -1
 * when out of memory. */
int executor_placement_merge(const struct executor_placement *base,
                             const struct executor_placement *over, struct executor_placement *out);

/* One task slot, as the executor needs it.  Strings belong to the caller
 * and are copied where kept. */
struct executor_task {
	int64_t job_id;
	const char *role;
	int index;
	int attempt;
	const char *log_path; /* stdout and stderr of the launcher (and the program) go here */
	int launcher_pid;     /* for stop_task / is_alive; 0 when unknown */
	/* one instance's resources (read by backends that ask a cluster for them) */
	int vcores;
	uint64_t memory_mb;
	int gpus;
	int64_t time_limit_s; /* the job's execution timeout; 0: none */
	/* gang backends: where the gang goes, the same for each of its tasks
	 * (tasks[0]'s is read); NULL: the backend's defaults */
	const struct executor_placement *place;
	/* The register answer of a task the job manager registered itself (a
	 * one-task job on a backend that takes_answer): what the launcher
	 * would have got from POST /launch/register, as JSON text (one
	 * object).  Borrowed; NULL: the launcher registers. */
	const char *answer;
	/* The job's nonce (store.h's job_row): a start to the node's agent
	 * carries it, so that a task of a job a power cut lost, under the
	 * same id, is never taken for this one's.  0: none known. */
	int64_t nonce;
};

/* What a gang backend (slurm) says about a gang it was given whole. */
enum executor_gang_event {
	EXECUTOR_GANG_SUBMITTED, /* backend_id: the cluster's id of it */
	EXECUTOR_GANG_REJECTED,  /* the cluster refused it; reason: the cluster's words */
	EXECUTOR_GANG_PENDING,   /* waiting in the cluster's queue; reason: why */
	EXECUTOR_GANG_RUNNING,
	EXECUTOR_GANG_ENDED, /* over; tasks that did not report are lost; reason: how */
	/* Over for a cause of the cluster's that names the job's own fault or
	 * someone's decision; reason: the words to show.  Tasks that did not
	 * report end failed (killed for CANCELLED); tasks that reported a failure
	 * take the reason (the cluster knows better why a SIGKILL came). */
	EXECUTOR_GANG_OOM,        /* out of memory: failed, oom_killed */
	EXECUTOR_GANG_TIME_LIMIT, /* the cluster's time limit or deadline: failed */
	EXECUTOR_GANG_CANCELLED,  /* cancelled by someone other than weir: killed */
};

typedef void (*executor_gang_fn)(void *arg, int64_t job_id, int attempt,
                                 enum executor_gang_event ev, const char *backend_id,
                                 const char *reason);

/* A launcher the executor started has ended.  `exit_status` is its exit
 * code, `term_signal` the signal that ended it (0: none). */
typedef void (*executor_exit_fn)(void *arg, int64_t job_id, const char *role, int index,
                                 int attempt, int launcher_pid, int64_t exit_status,
                                 int term_signal);

/* Reports of launchers that send them through the backend rather than
 * over HTTP (the agent): a JSON array of {"t": "started"|"exited", and the
 * body of the HTTP call of that name}, handled together (one turn, whose
 * end the backend asks for before it acknowledges them: local.h's
 * local_executor_set_end_turn). */
typedef void (*executor_reports_fn)(void *arg, json_t *batch);

struct executor;

struct executor_ops {
	const char *name;
	/* Starts the task's launcher; *launcher_pid gets its pid.  0 or -1 with
	 * err (nothing started). */
	int (*start_task)(struct executor *ex, const struct executor_task *task, int *launcher_pid,
	                  struct weir_error *err);
	/* Optional (NULL: start_task per task).  Starts a whole gang (every
	 * task of one attempt) as one unit; the outcome comes later through the
	 * backend's executor_gang_fn.  0, or -1 with err (nothing started). */
	int (*start_gang)(struct executor *ex, const struct executor_task *tasks, size_t n,
	                  struct weir_error *err);
	/* Sends `sig` to the launcher (it forwards to the program and reports).
	 * With SIGTERM the backend also arms a last resort: after the kill grace
	 * plus 2 s, SIGKILL to everything the launcher started.  0 or -1 with err
	 * (no such process is not an error).  A gang backend stops the task's
	 * whole gang (launcher_pid may be 0 there). */
	int (*stop_task)(struct executor *ex, const struct executor_task *task, int sig,
	                 struct weir_error *err);
	/* Optional (gang backends).  Follows again a gang submitted before a
	 * server restart, by the id the backend gave it (EXECUTOR_GANG_SUBMITTED);
	 * its end comes through the executor_gang_fn.  0, or -1 with err. */
	int (*adopt_gang)(struct executor *ex, int64_t job_id, int attempt, const char *backend_id,
	                  struct weir_error *err);
	/* Optional (gang backends).  After a restart, looks for the gang of an
	 * attempt whose submission had not answered when the server stopped (so
	 * no id was stored), by what start_gang submitted it with (`log_path`:
	 * a task's, as start_gang got it).  Found: followed as by adopt_gang,
	 * told with EXECUTOR_GANG_SUBMITTED; not found: EXECUTOR_GANG_ENDED.
	 * Until then is_alive says yes for its tasks.  0, or -1 with err. */
	int (*find_gang)(struct executor *ex, int64_t job_id, int attempt, const char *log_path,
	                 struct weir_error *err);
	/* Whether the task's launcher still exists. */
	bool (*is_alive)(struct executor *ex, const struct executor_task *task);
	/* Optional (backends whose tasks run where the server can tell a free
	 * port: local).  A TCP port free now on the host the backend runs its
	 * tasks on, for a task whose register answer the server writes
	 * (takes_answer gangs); the task binds it again first thing.  The port,
	 * or -1 with err.  Call it through executor_pick_port(). */
	int (*pick_port)(struct executor *ex, struct weir_error *err);
	/* Optional (backends that may hear of their tasks before the server
	 * asks: the agent's reports, kept while no server listened).  The
	 * server has finished starting (its recovery read, every part made):
	 * from now on the backend may call its callbacks with what it hears.
	 * Before, it keeps it (read, not told), and only settles what it holds
	 * (is_alive answers from the start). */
	void (*open)(struct executor *ex);
	/* Optional (backends that hold back what a turn asked of them until
	 * the loop runs again: the agent's starts and kills).  The server's turn
	 * ended: `stored`, its commit went through and what it asked goes out;
	 * else it was rolled back (a full disk) and what it asked since the
	 * last such call is dropped, as its rows were (nothing runs that the
	 * store does not know of). */
	void (*turn_end)(struct executor *ex, bool stored);
	/* Frees the executor; launchers keep running.  NULL is a no-op. */
	void (*destroy)(struct executor *ex);
};

/* Every backend's struct starts with this. */
struct executor {
	const struct executor_ops *ops;
	/* Launchers send the task's output to the server over HTTP (weir launch
	 * --log-to-server) instead of writing the log file; set by the server
	 * after creation (default false). */
	bool log_to_server;
	/* The backend places and confines each task itself (Slurm's step: its
	 * CPUs, memory, devices and processes): launchers keep the devices it
	 * bound and make no cgroup of their own.  Set by the backend. */
	bool confines_tasks;
	/* The backend hands a one-task job's register answer to its launcher
	 * (executor_task.answer; the agent's shims): the job manager registers
	 * such a task itself as it starts it, and no gang wait is needed.  Set
	 * by the backend. */
	bool takes_answer;
	/* The backend holds every task it was given until the server has
	 * recorded its end, across server restarts (the agent: its journals),
	 * and a start reaches it only after the turn that made it committed.
	 * So after a restart, a task it does not hold that never reported
	 * `started` never reached it (the server stopped between the commit and
	 * the write): the job manager starts it again, nothing counted.  Set by
	 * the backend. */
	bool keeps_tasks;
};

/* ex->ops->pick_port, or -1 with err when the backend (or a NULL `ex`)
 * has none. */
int executor_pick_port(struct executor *ex, struct weir_error *err);

/* The environment a launcher (or the node's agent, or sbatch) starts with:
 * this process's, less WEIR_SERVER, WEIR_TASK_USER (lib/run_as.h) and what
 * lib/env_scrub.h drops (the token, the server's connections and variables,
 * secret-looking names), plus `env_server` ("WEIR_SERVER=...", borrowed),
 * `env_secret` ("WEIR_LAUNCH_SECRET=...") and `env_mask`
 * ("WEIR_MASK_TOKEN=...": the token, for the launcher to mask in its task's
 * output; it wipes both from its environment at its start), `env_task_user`
 * ("WEIR_TASK_USER=...", the user its tasks run as; NULL: the launcher's
 * own) (each borrowed, NULL: none) and WEIR_LOG=warn unless WEIR_LOG is
 * set.  The array is new (free() it); its strings are borrowed.  NULL when
 * out of memory. */
char **executor_launcher_env(const char *env_server, const char *env_secret, const char *env_mask,
                             const char *env_task_user);

/* The launcher a backend runs for a task: weir-launch beside this program
 * when it is there (*lean set: the lean build starts in a fraction of the
 * full binary's time, paid once per task), else this program itself (its
 * `launch` command).  New (free() it); NULL when this program's path cannot
 * be read. */
char *executor_find_launcher(bool *lean);

/* uv_spawn of `file` with UV_PROCESS_DETACHED (its own session: it outlives
 * the server), stdin `in_fd`, stdout and stderr `out_fd` (both stay the
 * caller's to close).  libuv's result: 0, or a negative error (the handle
 * is initialized either way: uv_close it). */
int executor_spawn_detached(uv_loop_t *loop, uv_process_t *p, const char *file, char **args,
                            char **env, int in_fd, int out_fd, uv_exit_cb on_exit);

#endif
