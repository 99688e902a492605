/* slurm.h: the slurm backend: one weir gang is one Slurm job (or one element
 * of a job array, for one-task gangs started together).
 *
 * start_gang writes a batch script (one `srun` step per task, each running
 * weir's launcher on its node) and submits it with `sbatch`; stop_task
 * cancels the whole Slurm job with `scancel`; a timer polls `squeue` about
 * once a second while Slurm jobs of ours are active and tells the job
 * manager through the executor_gang_fn.  Every command is run with uv_spawn
 * and an argv array: no shell on the server's side, nothing blocks the loop.
 * WEIR_SERVER and WEIR_TOKEN reach the launchers through the environment
 * sbatch exports, never through a command line.  Nothing of a job spec is
 * written into the script but the role names (validated identifiers, quoted
 * anyway): launchers fetch their command over the launch protocol.
 *
 * Tasks that differ in resources make a heterogeneous job (one component
 * per distinct vcores/memory/gpus; each step says its --het-group).  After a
 * restart, adopt_gang follows again a Slurm job by the id sbatch gave.
 */
#ifndef WEIR_EXEC_SLURM_H
#define WEIR_EXEC_SLURM_H

#include <uv.h>

#include "exec/executor.h"
#include "lib/strvec.h"

/* Where and how to submit; NULL or empty: Slurm's defaults. */
struct slurm_options {
	const char *partition;
	const char *account;
	const char *qos;
	const char *time; /* sbatch --time; NULL: from the job's execution timeout */
	const char *const *sbatch_options; /* added as they are, before the script */
	size_t n_sbatch_options;
};

/* Everything is copied.  `launcher` is the program the nodes run (NULL:
 * weir-launch beside this program, else this program's `launch`).  NULL
 * with err on out of memory. */
struct executor *slurm_executor_create(uv_loop_t *loop, const struct slurm_options *opt,
                                       const char *launcher, const char *server_url,
                                       const char *token, executor_gang_fn on_gang, void *arg,
                                       struct weir_error *err);

/* sbatch's argv for one gang (the script at `script`, Slurm's output to
 * `outpat`): tasks[0].place merged over `defaults` (executor_placement_merge),
 * each value one argv element, never through a shell.  0, or -1 with err. */
int slurm_sbatch_argv(const struct executor_placement *defaults, const struct executor_task *tasks,
                      size_t n, const char *outpat, const char *script, struct strvec *av,
                      struct weir_error *err);

/* What a Slurm job's final state means for weir (pure; docs/slurm.md's
 * table).  `state` and `reason` as squeue's %T and %r, `nodes` its %N (may
 * be empty), `by_weir`: weir cancelled it.  Writes the words to show into
 * out (e.g. "OOMKilled (Slurm OUT_OF_MEMORY)", "node failure: n1") and
 * returns the event to tell: EXECUTOR_GANG_ENDED (tasks that did not report
 * are lost: COMPLETED, FAILED, NODE_FAIL, BOOT_FAIL, PREEMPTED, gone, a
 * cancel of weir's) or EXECUTOR_GANG_OOM / _TIME_LIMIT / _CANCELLED. */
enum executor_gang_event slurm_end_of(const char *slurm_id, const char *state, const char *reason,
                                      const char *nodes, bool by_weir, char *out, size_t size);

/* One-task gangs started in the same loop turn with the same sbatch
 * settings are submitted as one job array (at most 1000; at most 4 sbatch
 * processes at once).  Element I runs the I-th gang's own batch script; its
 * backend id is "<array id>_<I>". */

/* The array's script: a `case` over SLURM_ARRAY_TASK_ID, element I exec'ing
 * `scripts[I]` with its output appended to `dirs[I]`/slurm-<array>_<I>.out.
 * Paths quoted.  New (free() it), NULL when out of memory. */
char *slurm_array_script(const char *const *scripts, const char *const *dirs, size_t n);

/* The element of an array script's `text` that runs `script`: 0 with
 * *index, or -1 when none does. */
int slurm_array_index(const char *text, const char *script, size_t *index);

/* sbatch's argv for an array of `n` one-task gangs like `task` (named
 * weir-array, --array=0-(n-1), the script at `script`).  0, or -1 with err. */
int slurm_array_argv(const struct executor_placement *defaults, const struct executor_task *task,
                     size_t n, const char *outpat, const char *script, struct strvec *av,
                     struct weir_error *err);

/* Whether squeue's %i `shown` stands for our id `ours`: the same id, a
 * heterogeneous job's component (ID+k for ID), or a collapsed array's pending
 * elements (ID_[0-3,7,9-11%4] for ID_8 is false, ID_9 true). */
bool slurm_id_covers(const char *shown, const char *ours);

/* Whether sbatch's complaint says Slurm cannot take a job for now rather than
 * never: "Resource temporarily unavailable" (MaxJobCount job records exist, or
 * the controller is overloaded) after sbatch's own retries ("Slurm temporarily
 * unable to accept job").  The executor submits such a batch again later,
 * waiting 2 s, then twice as long each time up to a minute, and shows the
 * gangs pending with that reason meanwhile. */
bool slurm_sbatch_busy(const char *why);

#endif
