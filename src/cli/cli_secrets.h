/* cli_secrets.h: `weir connections` and `weir variables`, Airflow's CLI
 * commands of the same names, through the REST API (/api/v1/connections,
 * /api/v1/variables; docs/cli.md, docs/connections.md).
 */
#ifndef WEIR_CLI_CLI_SECRETS_H
#define WEIR_CLI_CLI_SECRETS_H

#include <stdio.h>

#include "cli/cli_common.h"

/* argv[0] is "connections" / "variables".  Returns the exit status. */
int cli_connections_main(int argc, char **argv, const struct cli_globals *g);
void cli_connections_usage(FILE *out);
int cli_variables_main(int argc, char **argv, const struct cli_globals *g);
void cli_variables_usage(FILE *out);

#endif
