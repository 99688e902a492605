/* cli_password.h: `weir hash-password`: the password hash a `users` entry of
 * the server's configuration holds (docs/api.md, Basic auth). */
#ifndef WEIR_CLI_PASSWORD_H
#define WEIR_CLI_PASSWORD_H

#include <stdio.h>

void cli_password_usage(FILE *out);

/* argv[0] is "hash-password".  Reads the password from the first line of
 * standard input (never from the command line, where `ps` would show it)
 * and prints its hash.  0, 2 on a usage error or an empty password. */
int cli_password_main(int argc, char **argv);

#endif
