/* cli_dag_test.h: `weir dags test DAG_FILE`: one run of a DAG file in this
 * process, without a server, for CI.
 *
 * It makes a temporary home and DAG folder, assembles the same parts as
 * `weir server` (server/server.h: store, job manager, DAG manager, the API
 * on an ephemeral loopback port for the launchers, the local executor with
 * its real processes and limits), triggers one manual run, follows it to
 * its end printing one line per task-instance state change, then a summary
 * and the log tail of every failed task, waits until every job of the run
 * has ended, and removes the home (unless told to keep it).
 *
 * A DAG with a schedule runs once anyway: the copy the manager loads has
 * its start_date moved past the end of the calendar, so the schedule makes
 * no run of its own (the manual run's data interval still follows it).
 * The server's configuration is read as `weir server` reads it (--config,
 * else HOME/weir.yaml when there is one): its queues, pools, executor and
 * resources; only the home, DAG folder and port are the test's own.
 * `executor_local` runs the work the configuration sends to Slurm on this
 * machine instead.  A pool the DAG names that the configuration lacks gets
 * the slots of its largest task (pool_slots; a server would leave its tasks
 * waiting), with a line saying so.
 * --conn and --var win over every other source of connections and variables
 * for the run (server/secrets.h); this process's own WEIR_CONN_<ID> and
 * WEIR_VAR_<KEY> are the environment source, as the server's would be.
 * Every error names the file the user gave: a queue the server lacks is
 * checked on it before the manager loads its copy.
 */
#ifndef WEIR_CLI_DAG_TEST_H
#define WEIR_CLI_DAG_TEST_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct dag_test_opts {
	const char *file;         /* the DAG file (YAML, JSON, or Python defining one DAG); with
	                           * dags_dir: the DAG's id */
	const char *dags_dir;     /* a DAG folder (walked as the server walks it) whose DAG
	                           * `file` names, or NULL */
	json_t *conf;             /* a JSON object over the DAG's params, or NULL; borrowed */
	const char *logical_date; /* any form schedule_parse_time() reads, or NULL: now */
	bool keep;                /* keep the temporary home (its path is printed) */
	const char *home;         /* the server's home, whose weir.yaml is read; NULL: the
	                           * server's default ($HOME/.weir) */
	const char *config;       /* the server's configuration file; NULL: HOME/weir.yaml */
	bool executor_local;      /* Slurm-routed work runs locally */
	json_t *conns;            /* --conn ID=URI, a list of strings, or NULL; borrowed */
	json_t *vars;             /* --var KEY=VALUE likewise */
	const char *task_id;      /* `tasks test`: run this task alone (its upstream ignored,
	                           * as Airflow's `tasks test`) and print its log whole; `file`
	                           * may then be a DAG id of the server's DAG folder */
};

/* Exit statuses. */
#define DAG_TEST_SUCCESS 0
#define DAG_TEST_FAILED 1 /* the run failed, or the test could not be carried out */
#define DAG_TEST_BAD_INPUT                                                                         \
	2 /* the file does not load, the configuration does not read, or                           \
	   * --conf/--logical-date/--conn/--var is refused */
#define DAG_TEST_INTERRUPTED 130

/* `weir dags check PATH...`: a folder's DAG files found as the server's
 * walk finds them (dag_manager_walk()), and each file loaded as the server
 * does (a YAML or JSON file parsed; a Python file imported by the DAG
 * processor, the folder given or its own as the DAG folder, killed after
 * the configuration's
 * dagbag_import_timeout) and prints one line per DAG ("FILE: DAG ID:
 * schedule S; N tasks: T..."), or the file's import error ("FILE: import
 * error: " and the message: file, line, traceback), then a count.  Runs
 * no task.  `home` and `config` as in struct dag_test_opts.  Returns
 * DAG_TEST_SUCCESS, DAG_TEST_FAILED when a file did not load, or
 * DAG_TEST_BAD_INPUT when the configuration does not read. */
int dag_check_run(const char *const *paths, size_t n_paths, const char *home, const char *config);

/* Runs the test; prints to stdout (progress, summary, log tails) and stderr
 * (errors).  Returns one of the statuses above.  SIGINT and SIGTERM during
 * the run kill its jobs and return DAG_TEST_INTERRUPTED. */
int dag_test_run(const struct dag_test_opts *opts);

#endif
