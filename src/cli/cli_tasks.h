/* cli_tasks.h: `weir tasks state|clear|logs`: the task instances of a DAG run, through
 * Airflow's REST API paths (docs/api.md). */
#ifndef WEIR_CLI_CLI_TASKS_H
#define WEIR_CLI_CLI_TASKS_H

#include <stdio.h>

#include "cli/cli_common.h"

/* argv[0] is "tasks".  Returns the exit status (docs/cli.md). */
int cli_tasks_main(int argc, char **argv, const struct cli_globals *g);
void cli_tasks_usage(FILE *out);

#endif
