/* cli_password.c: `weir hash-password`. */
#include "cli/cli_password.h"

#include <stdlib.h>
#include <string.h>

#include "api/basic_auth.h"
#include "cli/cli_common.h"

void cli_password_usage(FILE *out)
{
	fputs("usage: weir hash-password [--iterations N] < password\n"
	      "\n"
	      "Reads a password from the first line of standard input and prints the hash to put\n"
	      "in a `users` entry of the server's weir.yaml (PBKDF2-HMAC-SHA256, a fresh salt).\n"
	      "  printf '%s\\n' \"$PASSWORD\" | weir hash-password\n",
	      out);
}

int cli_password_main(int argc, char **argv)
{
	struct weir_error err = {0};
	unsigned iterations = 0;
	char line[4096], *hash = NULL;

	for (int i = 1; i < argc; i++) {
		if (cli_flag_is_help(argv[i])) {
			cli_password_usage(stdout);
			return CLI_EXIT_OK;
		}
		if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
			char *end;
			unsigned long n = strtoul(argv[++i], &end, 10);
			if (*end || n == 0 || n > 10000000) {
				cli_error("hash-password: --iterations: expected 1000 to 10000000, "
				          "got \"%s\"",
				          argv[i]);
				return CLI_EXIT_USAGE;
			}
			iterations = (unsigned)n;
			continue;
		}
		cli_error("hash-password: unexpected \"%s\" (the password is read from standard "
		          "input)",
		          argv[i]);
		cli_password_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!fgets(line, sizeof line, stdin)) {
		cli_error("hash-password: expected the password on standard input");
		return CLI_EXIT_USAGE;
	}
	line[strcspn(line, "\r\n")] = '\0';
	if (!line[0]) {
		cli_error("hash-password: the password is empty");
		return CLI_EXIT_USAGE;
	}
	int rc = basic_auth_hash_password(line, iterations, &hash, &err);
	memset(line, 0, sizeof line);
	if (rc < 0) {
		cli_error("hash-password: %s", err.msg);
		return CLI_EXIT_USAGE;
	}
	printf("%s\n", hash);
	free(hash);
	return CLI_EXIT_OK;
}
