/* dag_manager.h: workflows in the server: the DAG folder, runs, and the
 * wiring from run decisions (sched/dag_run.h, sched/dag_pool.h) to jobs.
 *
 * The manager reads every *.yaml, *.yml and *.json file of its folder
 * (model/dag_spec.h), keeps the DAG tables (store/dag_store.h) in step with
 * it, and watches the folder (an fs event plus a rescan by mtime every 2 s):
 * a file added, changed or removed is picked up without a restart; a broken
 * file is an import error and never stops the others.
 *
 * Runs come from triggers (the API) and from schedules (a timer armed for
 * the next due time).  Every event (a run start, a task instance's job that
 * ended, a retry time, a clear, a mark) goes through dag_run_decide(); its
 * changes are written in the job manager's transaction of that loop turn,
 * then scheduled task instances become jobs through dag_pool_decide() and
 * job_manager_submit_spec().  A job that ends reaches the manager through
 * the job manager's end callback, in the same turn, so the successors it
 * made ready are submitted before the loop waits again.
 *
 * It fills the dag_api_ops table (api/dag_api.h) with Airflow-shaped JSON.
 *
 * Ownership: the manager borrows the loop, store and job manager (which
 * must outlive it); it copies the strings and pools it is given.
 */
#ifndef WEIR_SERVER_DAG_MANAGER_H
#define WEIR_SERVER_DAG_MANAGER_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "api/dag_api.h"
#include "api/dataset_api.h"
#include "lib/error.h"
#include "model/dag_spec.h"
#include "server/config.h"
#include "server/job_manager.h"
#include "store/store.h"

struct dag_manager; /* opaque */

/* `home` (absolute) holds the try files (HOME/dag_runs); `dags_dir` is the
 * DAG folder (created when absent).  `pools` are copied; a default_pool of
 * 128 slots is added unless one is given.  Registers the job manager's end
 * callback.  NULL with err. */
struct dag_manager *dag_manager_create(uv_loop_t *loop, struct store *store, struct job_manager *jm,
                                       const char *home, const char *dags_dir,
                                       const struct server_pool *pools, size_t n_pools,
                                       struct weir_error *err);

/* Stops watching and the timers; runs and their jobs go on (a restart
 * picks them up).  NULL is a no-op. */
void dag_manager_destroy(struct dag_manager *dm);

/* Where templates read var.* and conn.*, and where a try checks the
 * connections its task lists (server/secrets.h); borrowed. */
struct secrets;
void dag_manager_set_secrets(struct dag_manager *dm, struct secrets *secrets);
/* Variable `key` was set or deleted (the API, the CLI, a task's
 * Variable.set): each Python DAG file whose latest parse read it at its
 * top level is parsed again (server/dag_manager/pyfiles.c). */
void dag_manager_variable_changed(struct dag_manager *dm, const char *key);

/* `dag_folder_symlinks: never` (true): a DAG file that is a symbolic link
 * is never read; false (the default, `inside`): read when its target is
 * inside the DAG folder.  Either way a refused link is an import error that
 * names the link, never the target's content. */
void dag_manager_set_symlinks_never(struct dag_manager *dm, bool never);

/* `dags_are_paused_at_creation: true`: a DAG the store does not have yet
 * is written paused (a DAG already there keeps its own pause); false, the
 * default: unpaused. */
void dag_manager_set_paused_at_creation(struct dag_manager *dm, bool paused);

/* `dagbag_import_timeout: SECONDS` (default 30): a Python DAG file whose
 * import takes longer is killed, an import error.  -1 when `seconds` is
 * not in (0, 86400]. */
/* The users of the server (the configuration's and the store's), copied: a DAG's access list
 * naming neither a role nor one of them is a warning in the log when the
 * DAG loads (it lets nobody in; docs/security.md).  0, -1 out of memory. */
int dag_manager_set_users(struct dag_manager *dm, const char *const *names, size_t n);
int dag_manager_set_import_timeout(struct dag_manager *dm, double seconds);
/* Walks the DAG folder `dir` as the server reads it: its subfolders (not
 * hidden ones, not __pycache__, no link to a folder, 32 deep at most),
 * each folder's .airflowignore, holding below that folder (Airflow's
 * syntaxes: POSIX extended regular expressions searched in the path
 * relative to `dir`; with `glob`, gitignore-style globs relative to the
 * folder of the .airflowignore, `!` keeping a path: lib/gitglob.h), and
 * calls visit() with each file whose name is a DAG file's (.yaml, .yml,
 * .json, .py; newly allocated, visit() takes it) and whether it is in
 * `dir` itself (below it, a YAML or JSON file is a DAG file only when it
 * names a dag_id: dag_manager_names_dag_id()). */
void dag_manager_walk(const char *dir, bool glob, void (*visit)(void *arg, char *path, bool top),
                      void *arg);
/* `dag_ignore_file_syntax: regexp|glob` (Airflow's [core] key; default
 * regexp): how the server's walk reads .airflowignore (dag_manager_walk()). */
void dag_manager_set_ignore_glob(struct dag_manager *dm, bool glob);

/* Whether the file's text has `dag_id` as a mapping key (`dag_id:`,
 * `"dag_id":`; a job's spec or a template kept beside the DAGs does not),
 * as Airflow's heuristic reads a Python file's text. */
bool dag_manager_names_dag_id(const char *path);

/* Runs the DAG processor on the Python DAG file `file` as the server runs
 * it (the same interpreter and `airflow` folder, the environment a task
 * gets, the tasks' user, `dags_dir` as its DAG folder and working folder,
 * killed after `timeout_s`: dagbag_import_timeout) in a loop of its own,
 * and waits for it: `weir dags check` and `weir dags test FILE.py`.  The
 * file's DAG documents (a JSON array, owned by the caller; empty when the
 * file does not mention both "airflow" and "dag"), or NULL with *error
 * (newly allocated, the caller frees: the import error, "FILE:LINE: ..."
 * and its traceback; NULL too when out of memory). */
json_t *dag_manager_py_documents(const char *file, const char *dags_dir, double timeout_s,
                                 char **error);

/* The folder a DAG's job files and tony.xml must be in (copied; NULL: the
 * DAG folder): `weir dags test` runs a copy of a DAG file kept elsewhere,
 * whose files are in the original's folder. */
void dag_manager_set_paths_root(struct dag_manager *dm, const char *dir);

/* Where notifications and SLA misses go (server/notifier.h); NULL: none.
 * Borrowed: it outlives the manager. */
struct notifier;
void dag_manager_set_notifier(struct dag_manager *dm, struct notifier *n);

/* Reads the folder once (before the job manager's recovery, so that jobs
 * it settles find their DAGs).  0, or -1 with err when the store fails. */
int dag_manager_load(struct dag_manager *dm, struct weir_error *err);

/* After the job manager's recovery: settles task instances whose jobs
 * ended while the server was down (from the jobs' stored results),
 * re-evaluates every active run, starts what may start and arms the
 * timers.  Nothing finished runs again; a TI whose job still runs is left
 * to it.  0, or -1 with err. */
int dag_manager_recover(struct dag_manager *dm, struct weir_error *err);

/* What a DAG file needs of this server: every queue its tasks name is one
 * the job manager has, and no task takes more slots (pool_slots) than its
 * pool has.  Else -1 with the import error the manager records
 * ("FILE:LINE: tasks[2].queue: no queue ...", "FILE:LINE:
 * tasks[1].pool_slots: task fit takes 3 slots, but pool gpu has 2"), `file`
 * being the DAG file as the user wrote it. */
int dag_manager_check_spec(struct dag_manager *dm, const struct dag_spec *spec, const char *file,
                           struct weir_error *err);

/* The ops table for the Airflow routes (ctx: the manager). */
const struct dag_api_ops *dag_manager_api_ops(void);

/* The dataset routes' ops (api/dataset_api.h): datasets, their events, the
 * queues of the DAGs scheduled on them, the events a run consumed (ctx:
 * the manager). */
const struct dataset_api_ops *dag_manager_dataset_ops(void);

/* When the manager's periodic pass (recovery, then a rescan of the folder
 * and a pool pass every 2 s) last ended, ms since the epoch; 0 before the
 * first.  The scheduler's heartbeat of GET /health. */
int64_t dag_manager_last_pass(const struct dag_manager *dm);

/* How many times the wake-up timer was armed (or stopped): once a turn
 * that a DAG entry point joined, whatever the number of entry points
 * (tests check it). */
uint64_t dag_manager_wake_arms(const struct dag_manager *dm);

/* Drops the copies of runs and task instances kept in memory (their rows
 * waiting are written first): before rows are removed from the store
 * behind the manager's back (server/db_clean.c). */
void dag_manager_forget_runs(struct dag_manager *dm);

/* For the start-up line. */
void dag_manager_counts(struct dag_manager *dm, int *dags, int *import_errors, int *active_runs);

#endif
