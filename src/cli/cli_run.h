/* cli_run.h: `weir run PROGRAM.py [ARGS]`: a Python program written for Ray
 * (or Airflow) run with weir's compatible modules as its `ray` and `airflow`
 * (docs/ray.md); and the `airflow` command, a module of weir's Python package
 * run the same way (docs/airflow.md). */
#ifndef WEIR_CLI_RUN_H
#define WEIR_CLI_RUN_H

#include <stdio.h>

#include "cli/cli_common.h"

void cli_run_usage(FILE *out);

/* argv[0] is "run".  Finds weir's Python package (WEIR_PYTHON_DIR, else the
 * python/ folder beside the program's build/ or bin/ folder), exports the
 * server and home the global flags name (WEIR_SERVER, WEIR_HOME), puts the
 * package on PYTHONPATH and replaces this process with `PYTHON -m weir.run
 * PROGRAM ARGS` (PYTHON: --python, else $WEIR_RUN_PYTHON, else python3), so
 * that the program's exit status and signals are its own.  Returns only on
 * an error: 2 for bad usage or no package found, 1 when the exec failed. */
int cli_run_main(int argc, char **argv, const struct cli_globals *g);

/* Replaces this process with `PYTHON -m MODULE ARGV...` (PYTHON NULL or "":
 * python3), weir's Python package first on PYTHONPATH, the server and home
 * of `g` exported, WEIR_BIN this program (unless set).  `who` names the
 * command in errors.  Returns only on an error: 2 when no package is found,
 * 1 when the exec failed. */
int cli_python_exec(const char *python, const char *module, int argc, char **argv,
                    const struct cli_globals *g, const char *who);

/* The program run by the name `airflow` (a link to weir): Airflow's command
 * line for ops scripts, python/weir/compat/airflow/cli.py, run as
 * cli_python_exec() runs a module (its interpreter $WEIR_RUN_PYTHON, else
 * python3).  argv[0] is the program's name.  Returns only on an error. */
int cli_airflow_main(int argc, char **argv);

#endif
