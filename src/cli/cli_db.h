/* cli_db.h: `weir db clean`, Airflow's `airflow db clean`: the server
 * removes the history that ended before a date (POST and GET
 * /api/v1/weir/dbClean; docs/cli.md, "weir db clean").
 */
#ifndef WEIR_CLI_CLI_DB_H
#define WEIR_CLI_CLI_DB_H

#include <stdio.h>

#include "cli/cli_common.h"

/* argv[0] is "db".  Returns the exit status. */
int cli_db_main(int argc, char **argv, const struct cli_globals *g);
void cli_db_usage(FILE *out);

#endif
