/* cli_users.h: `weir users create|list|delete|reset-password|set-role`
 * (Airflow's `airflow users` flags) and `weir tokens create|list|revoke`,
 * over weir's /api/v1/weir/users and /api/v1/weir/tokens (Admin; docs/cli.md,
 * docs/security.md).  A password is read from standard input when not
 * given and hashed here (api/basic_auth.h): only its hash is sent.
 */
#ifndef WEIR_CLI_CLI_USERS_H
#define WEIR_CLI_CLI_USERS_H

#include <stdio.h>

#include "cli/cli_common.h"

/* argv[0] is "users".  Returns the exit status. */
int cli_users_main(int argc, char **argv, const struct cli_globals *g);
void cli_users_usage(FILE *out);
/* argv[0] is "tokens".  Returns the exit status. */
int cli_tokens_main(int argc, char **argv, const struct cli_globals *g);
void cli_tokens_usage(FILE *out);

#endif
