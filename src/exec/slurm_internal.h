/* slurm_internal.h: what the files of the Slurm backend share, and nothing
 * outside them includes (exec/slurm.h is the backend's contract).
 *
 *   slurm.c         the executor: its ops (start, stop, adopt, find, alive),
 *                   the sjob list, cancelling, create and destroy
 *   slurm_cmd.c     running sbatch, squeue and scancel with uv_spawn
 *   slurm_script.c  batch scripts and sbatch's arguments, job arrays
 *   slurm_submit.c  batches of gangs waiting for sbatch, sbatch's answers,
 *                   the retry while Slurm is busy
 *   slurm_watch.c   following jobs with squeue to their end, and finding a
 *                   job whose sbatch answered no one (a crash in between)
 */
#ifndef WEIR_EXEC_SLURM_INTERNAL_H
#define WEIR_EXEC_SLURM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "exec/executor.h"
#include "exec/slurm.h"
#include "lib/error.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

struct hashmap;
struct slurm_executor;

struct sjob {
	int64_t job_id;
	int attempt;
	char slurm_id[32]; /* "" until sbatch answered */
	char state[32];    /* last state squeue showed */
	char reason[128];  /* last pending reason told */
	bool cancel_wanted;
	bool cancel_sent;
	char *script;   /* while looking for it by name after a restart (find_gang) */
	int find_tries; /* squeue failures while looking */
	struct sjob *prev, *next;
};

/* One sbatch to run: a gang of many tasks, or one-task gangs with the same
 * sbatch settings (`key`) gathered into a job array while they wait for the
 * end of the loop turn or a free sbatch slot. */
struct batch_member {
	int64_t job_id;
	int attempt;
	char *script; /* the gang's own batch script (the array element runs it) */
	char *dir;    /* its logs directory */
};

struct batch {
	char *key;         /* NULL: a gang of many tasks, never joined */
	struct strvec av;  /* sbatch's argv for the first member alone */
	struct strvec res; /* its resource and placement arguments (an array's) */
	struct batch_member *m;
	size_t n, cap;
	char *array_script; /* once written */
	struct batch *next;
};

struct cmd;
typedef void (*cmd_done_fn)(struct slurm_executor *sx, struct cmd *c);

struct cmd {
	uv_process_t proc;
	uv_pipe_t out, err;
	struct slurm_executor *sx; /* NULL once the executor is gone */
	cmd_done_fn done;
	int64_t job_id;
	int attempt;
	struct batch *batch;              /* an array's sbatch: the gangs it submits */
	struct strbuf out_text, err_text; /* what it printed on stdout, stderr */
	int64_t exit_status;
	int term_signal;
	bool truncated; /* it printed more than CMD_OUT_MAX: the rest was dropped */
	int open;       /* handles not yet closed */
	int pending;    /* exit and the two EOFs still to come */
	struct cmd *next;
};

struct slurm_executor {
	struct executor base;
	uv_loop_t *loop;
	char *partition, *account, *qos, *time;
	char **extra;
	size_t n_extra;
	char *launcher;
	bool lean;
	char *env_server;
	char *token; /* the key of launchers' secrets (exec/launch_secret.h) */
	executor_gang_fn on_gang;
	void *arg;
	struct sjob *jobs;           /* newest first */
	struct hashmap *jobs_by_key; /* "JOB.ATTEMPT" -> the sjob in `jobs` */
	struct cmd *cmds;
	uv_timer_t poll;
	bool polling;                          /* a squeue is in flight */
	struct batch *batches, **batches_tail; /* waiting for sbatch, oldest first */
	uv_timer_t flush;                      /* 0 ms: submits them once this loop turn is over */
	struct batch *later;                   /* refused because Slurm was busy: submitted again */
	uv_timer_t retry;                      /* when `later` goes back to `batches` */
	int retry_ms;                          /* the next wait; 0 after an sbatch Slurm took */
	int sbatch_running;
	int handles; /* poll, flush and retry, until closed */
};

/* ---- slurm.c ---- */

/* Tells the job manager about a gang (reason NULL: ""). */
void slurm_emit(struct slurm_executor *sx, const struct sjob *j, enum executor_gang_event ev,
                const char *reason);
/* The sjob of a gang's attempt, or NULL. */
struct sjob *sjob_find(struct slurm_executor *sx, int64_t job_id, int attempt);
/* Links a new one first in the list and indexes it: 0, or -1 when out of
 * memory (j not linked). */
int sjob_add(struct slurm_executor *sx, struct sjob *j);
/* Unlinks and frees one. */
void sjob_remove(struct slurm_executor *sx, struct sjob *j);
/* scancel, once (cancel_sent). */
void sjob_cancel(struct slurm_executor *sx, struct sjob *j);

/* ---- slurm_cmd.c ---- */

/* Runs argv[0] (found on PATH); `done` gets its exit and output.  `batch`
 * (taken) is freed with the command.  0 or -1 with err. */
int slurm_cmd_spawn(struct slurm_executor *sx, char **argv, cmd_done_fn done, int64_t job_id,
                    int attempt, struct batch *batch, struct weir_error *err);
/* The same without a batch. */
int slurm_cmd_run(struct slurm_executor *sx, char **argv, cmd_done_fn done, int64_t job_id,
                  int attempt, struct weir_error *err);
/* The command's complaint, on one line, for a reason. */
void slurm_cmd_complaint(const struct cmd *c, char *out, size_t size);

/* ---- slurm_script.c ---- */

/* The folder of a job's Slurm files (batch scripts, the batch step's
 * output): logs/ beside the task's log at `log_path` (HOME/jobs/ID/logs,
 * where they always were), or NULL when out of memory. */
char *slurm_dir_of(const char *log_path);

/* Tasks with the same resources share a component of the Slurm job; more
 * than one component makes it a heterogeneous job.  comp[i]: task i's
 * component; first[k]: a task of component k; count[k]: its tasks.
 * slurm_components_of(): 0, or -1 when out of memory. */
struct components {
	size_t n;
	size_t *comp, *first, *count;
};
int slurm_components_of(const struct executor_task *tasks, size_t n, struct components *c);
void slurm_components_release(struct components *c);

/* The batch script.  One task: the batch step runs the launcher itself (it
 * already holds the task's CPUs, memory and GPUs; a step would only add its
 * start).  Logs over HTTP: one srun step per component, each of its tasks
 * a launcher that finds its task by SLURM_PROCID (one step starts much
 * sooner than many).  Logs to files: one step per task, each appending to
 * its own log.  NULL when out of memory. */
char *slurm_batch_script(struct slurm_executor *sx, const struct executor_task *tasks, size_t n,
                         const struct components *c);
/* The executor's own defaults (`slurm:` of weir.yaml) as a placement. */
void slurm_defaults(const struct slurm_executor *sx, struct executor_placement *pl);
/* A one-task gang's resource and placement arguments: what the gangs of one
 * array must share.  0 or -1 when out of memory. */
int slurm_gang_res(const struct executor_placement *defaults, const struct executor_task *t,
                   struct strvec *res);
/* sbatch's argv for an array of n elements with the resources `res`. */
int slurm_array_args(const struct strvec *res, size_t n, const char *outpat, const char *script,
                     struct strvec *av);

/* ---- slurm_submit.c ---- */

/* Puts a gang in a batch: a one-task gang joins a waiting batch of the same
 * settings (below the array limit), else each starts its own.  Takes `av`
 * (sbatch's argv for this gang alone). */
int slurm_batch_add(struct slurm_executor *sx, const struct executor_task *tasks, size_t n,
                    const struct executor_placement *defaults, struct strvec *av,
                    const char *script, const char *dir, struct weir_error *err);
void slurm_batch_free(struct batch *b);

/* ---- slurm_watch.c ---- */

/* Polls again in a second while a submitted job of ours is not over. */
void slurm_poll_arm(struct slurm_executor *sx);
/* executor_ops.find_gang. */
int slurm_find_gang(struct executor *ex, int64_t job_id, int attempt, const char *log_path,
                    struct weir_error *err);

#endif
