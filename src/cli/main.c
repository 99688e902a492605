/* main.c: the `weir` program: the command table, usage, and dispatch.
 *
 * `weir server` and `weir launch` belong to their layers and get their own
 * argv (argv[0] is the command's name); every other command is a client of
 * the HTTP API and lives in cli_*.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_artifact.h"
#include "cli/cli_common.h"
#include "cli/cli_dags.h"
#include "cli/cli_db.h"
#include "cli/cli_jobs.h"
#include "cli/cli_logs.h"
#include "cli/cli_password.h"
#include "cli/cli_routes.h"
#include "cli/cli_run.h"
#include "cli/cli_secrets.h"
#include "cli/cli_submit.h"
#include "cli/cli_tasks.h"
#include "cli/cli_users.h"
#include "data/task.h"
#include "exec/artifact.h"
#include "launch/agent.h"
#include "launch/airflow_warm.h"
#include "launch/launch.h"
#include "launch/workdir.h"
#include "server/sensor_task.h"
#include "server/server.h"

static void usage(FILE *out)
{
	fputs(
	    "usage: weir [--server URL] [--home DIR] COMMAND [ARGS]\n"
	    "\n"
	    "Runs distributed training jobs (TonY-compatible) and DAG workflows on this machine.\n"
	    "\n"
	    "commands:\n"
	    "  server     run the weir server (the API, the scheduler, the local executor)\n"
	    "  submit     submit a job (a spec file, or tony.xml and TonY's flags) and follow it\n"
	    "  jobs       list, show or kill jobs\n"
	    "  logs       print or follow the logs of a job's tasks\n"
	    "  dags       workflows: list, show, trigger (and follow), runs, pause, backfill, "
	    "test\n"
	    "  tasks      a DAG run's task instances: state, clear, logs\n"
	    "  connections  connections to stores and services: add, list, get, delete\n"
	    "  variables  variables for DAGs: set, get, list, delete, import, export\n"
	    "  db clean   remove the history that ended before a date (Admin)\n"
	    "  users      the server's users: create, list, delete, reset-password, set-role\n"
	    "  tokens     API tokens that act as a user: create, list, revoke (Admin)\n"
	    "  run        run a Python program written for Ray (`import ray` gets weir's)\n"
	    "  hash-password  the hash of a password for a user in the server's weir.yaml\n"
	    "  launch     (internal) the parent of every task, started by the executor\n"
	    "  agent      the node's agent, parent of every local task (`weir agent status`)\n"
	    "  version    print the version of this program and of the server\n"
	    "  help CMD   the usage of a command\n"
	    "\n"
	    "Run by the name `airflow` (the link installed beside it), it takes Airflow's\n"
	    "commands that ops scripts call (`airflow dags trigger ID`, `airflow trigger_dag\n"
	    "ID`, ...; `airflow --help`; docs/airflow.md).\n"
	    "\n"
	    "global flags (before or after the command):\n"
	    "  --server URL  the server (default $WEIR_SERVER, else " CLI_DEFAULT_SERVER ");\n"
	    "                https://... is verified against the system's CAs and $WEIR_CA_FILE\n"
	    "  --home DIR    the home holding the token file (default $WEIR_HOME, else ~/.weir);\n"
	    "                the token is $WEIR_TOKEN when set\n"
	    "  --help, -h    this text;  --version: the version\n"
	    "\n"
	    "exit status: 0 success, 1 the job failed or the server refused, 2 bad input or\n"
	    "usage, 3 the server is unreachable.  See docs/cli.md.\n",
	    out);
}

static void version_usage(FILE *out)
{
	fputs("usage: weir version\n"
	      "\n"
	      "Prints this program's version and, when it answers, the server's.\n",
	      out);
}

static int version_main(int argc, char **argv, const struct cli_globals *g0)
{
	struct cli_globals g = *g0;
	struct weir_error err = {0};
	struct cli_ctx ctx = {0};
	struct cli_reply r;

	for (int i = 1; i < argc; i++) {
		int rc = cli_flag_global(argc, argv, &i, &g, &err);
		if (cli_flag_is_help(argv[i])) {
			version_usage(stdout);
			return CLI_EXIT_OK;
		}
		if (rc == 0)
			snprintf(err.msg, sizeof err.msg, "unknown argument %s", argv[i]);
		if (rc <= 0) {
			cli_error("%s", err.msg);
			version_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	printf("weir %s\n", WEIR_VERSION);
	fflush(stdout);
	if (cli_ctx_init(&ctx, &g, &err) < 0)
		return CLI_EXIT_OK;
	/* The server's version is a courtesy: no server is not an error here. */
	if (cli_call(&ctx, "GET", "/api/v1/health", NULL, 2000, &r) == 0 && cli_reply_ok(&r))
		printf("server %s: weir %s\n", ctx.server_url,
		       cli_json_str(r.json, "version", "?"));
	else
		printf("server %s: not reachable\n", ctx.server_url);
	cli_reply_release(&r);
	cli_ctx_release(&ctx);
	return CLI_EXIT_OK;
}

/* `weir help CMD` and `weir CMD --help` print the same text. */
static int help_main(const char *cmd)
{
	char help[] = "--help";
	char name[32];
	char *argv[3] = {name, help, NULL};

	if (!cmd) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	snprintf(name, sizeof name, "%s", cmd);
	if (!strcmp(cmd, "submit"))
		cli_submit_usage(stdout);
	else if (!strcmp(cmd, "jobs"))
		cli_jobs_usage(stdout);
	else if (!strcmp(cmd, "logs"))
		cli_logs_usage(stdout);
	else if (!strcmp(cmd, "dags"))
		cli_dags_usage(stdout);
	else if (!strcmp(cmd, "tasks"))
		cli_tasks_usage(stdout);
	else if (!strcmp(cmd, "connections"))
		cli_connections_usage(stdout);
	else if (!strcmp(cmd, "variables"))
		cli_variables_usage(stdout);
	else if (!strcmp(cmd, "db"))
		cli_db_usage(stdout);
	else if (!strcmp(cmd, "users"))
		cli_users_usage(stdout);
	else if (!strcmp(cmd, "tokens"))
		cli_tokens_usage(stdout);
	else if (!strcmp(cmd, "hash-password"))
		cli_password_usage(stdout);
	else if (!strcmp(cmd, "run"))
		cli_run_usage(stdout);
	else if (!strcmp(cmd, "version"))
		version_usage(stdout);
	else if (!strcmp(cmd, "server"))
		return server_main(2, argv);
	else if (!strcmp(cmd, "launch"))
		return launch_main(2, argv);
	else if (!strcmp(cmd, "agent"))
		return agent_main(2, argv);
	else if (!strcmp(cmd, "help"))
		usage(stdout);
	else {
		cli_error("no command \"%s\"", cmd);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct cli_globals g = {0};
	struct weir_error err = {0};
	int i;

	/* called by the name `airflow` (a link to weir): Airflow's command line */
	const char *base = strrchr(argv[0], '/');
	if (!strcmp(base ? base + 1 : argv[0], "airflow"))
		return cli_airflow_main(argc, argv);
	/* server and launch parse everything themselves, flags included. */
	if (argc >= 2 && !strcmp(argv[1], "server"))
		return server_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "launch")) {
		workdir_set_unpacker(artifact_unpack_cached);
		return launch_main(argc - 1, argv + 1);
	}
	if (argc >= 2 && !strcmp(argv[1], "agent")) {
		workdir_set_unpacker(artifact_unpack_cached);
		return agent_main(argc - 1, argv + 1);
	}
	/* a task's command: an Airflow Python task run warm (launch/airflow_warm.h) */
	if (argc >= 2 && !strcmp(argv[1], "airflow-warm"))
		return airflow_warm_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "artifact-unpack"))
		return cli_artifact_unpack(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "hash-password"))
		return cli_password_main(argc - 1, argv + 1);
	/* hidden: the route table and its roles, for the tests */
	if (argc >= 2 && !strcmp(argv[1], "routes"))
		return cli_routes_main(argc - 1, argv + 1);
	/* what a DAG's sql: and transfer: tasks run (data/task.h) */
	if (argc >= 2 && !strcmp(argv[1], "task-sql"))
		return data_task_sql_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "task-sensor"))
		return sensor_task_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "task-transfer"))
		return data_task_transfer_main(argc - 1, argv + 1);

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		int r;
		if (cli_flag_is_help(argv[i])) {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		if (cli_flag_is(argv[i], "--version", "-V")) {
			printf("weir %s\n", WEIR_VERSION);
			return CLI_EXIT_OK;
		}
		r = cli_flag_global(argc, argv, &i, &g, &err);
		if (r == 0)
			snprintf(err.msg, sizeof err.msg, "unknown flag %s", argv[i]);
		if (r <= 0) {
			cli_error("%s", err.msg);
			usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	const char *cmd = argv[i];
	int sub_argc = argc - i;
	char **sub_argv = argv + i;

	if (!strcmp(cmd, "submit"))
		return cli_submit_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "jobs"))
		return cli_jobs_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "logs"))
		return cli_logs_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "dags"))
		return cli_dags_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "tasks"))
		return cli_tasks_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "connections"))
		return cli_connections_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "variables"))
		return cli_variables_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "db"))
		return cli_db_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "users"))
		return cli_users_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "tokens"))
		return cli_tokens_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "version"))
		return version_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "run"))
		return cli_run_main(sub_argc, sub_argv, &g);
	if (!strcmp(cmd, "help"))
		return help_main(sub_argc > 1 ? sub_argv[1] : NULL);
	if (!strcmp(cmd, "server") || !strcmp(cmd, "launch")) {
		cli_error("`weir %s` takes no global flags before it; put them after: weir %s "
		          "--help",
		          cmd, cmd);
		return CLI_EXIT_USAGE;
	}
	cli_error("unknown command \"%s\"", cmd);
	usage(stderr);
	return CLI_EXIT_USAGE;
}
