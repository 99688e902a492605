/* cli_jobs.h: `weir jobs list|show|kill`. */
#ifndef WEIR_CLI_CLI_JOBS_H
#define WEIR_CLI_CLI_JOBS_H

#include <stdio.h>

#include "cli/cli_common.h"

/* argv[0] is "jobs".  Returns the exit status (docs/cli.md). */
int cli_jobs_main(int argc, char **argv, const struct cli_globals *g);
void cli_jobs_usage(FILE *out);

#endif
