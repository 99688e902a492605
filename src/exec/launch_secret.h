/* launch_secret.h: the secret a task's launcher proves itself with on the
 * launch routes (docs/security.md, "The launch routes and a task's
 * environment").
 *
 * Derived, never stored: HMAC-SHA256 keyed by the server's token over what
 * names the task (its job, role, index and attempt), as 64 hex digits.  The
 * server computes it again for each launch call from the task the call
 * names, so a launcher can act for its own task only, and nothing else can
 * (the token itself is refused there).  A Slurm batch script starts one
 * launcher per task from one environment (a step of many tasks picks its
 * task at its SLURM_PROCID), so its launchers get the attempt's secret
 * instead: the same HMAC over the job and attempt alone, good for any task
 * of that attempt.
 *
 * Pure (nettle's HMAC): no I/O.
 */
#ifndef WEIR_EXEC_LAUNCH_SECRET_H
#define WEIR_EXEC_LAUNCH_SECRET_H

#include <stdint.h>

#define LAUNCH_SECRET_HEX 64 /* its length, without the NUL */

/* The secret of task ROLE:INDEX of job's attempt, keyed by `key` (the
 * server's token), into out (NUL-terminated). */
void launch_secret_task(const char *key, int64_t job, const char *role, int index, int attempt,
                        char out[LAUNCH_SECRET_HEX + 1]);

/* The read key of task ROLE:INDEX of job's attempt: what its program
 * (not its launcher) is given, as WEIR_TASK_READ_KEY, when its spec asks
 * for it (WEIR_TASK_READS=dag_runs in its environment), and what opens
 * POST /launch/dagRuns for that task alone: a read of DAGs' runs, never a
 * launch call (its text differs from the launch secret's in its first
 * word, so neither is the other). */
void launch_secret_read(const char *key, int64_t job, const char *role, int index, int attempt,
                        char out[LAUNCH_SECRET_HEX + 1]);

/* The secret of every task of job's attempt (the Slurm backend's). */
void launch_secret_attempt(const char *key, int64_t job, int attempt,
                           char out[LAUNCH_SECRET_HEX + 1]);

#endif
