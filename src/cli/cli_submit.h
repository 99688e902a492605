/* cli_submit.h: `weir submit`, native spec files and TonY's submit flags.
 *
 * Parses the input locally (bad input never reaches the server), posts the
 * native JSON, then follows the job until it ends: one line per state
 * change, a summary table, and an exit status (docs/cli.md).
 */
#ifndef WEIR_CLI_CLI_SUBMIT_H
#define WEIR_CLI_CLI_SUBMIT_H

#include <stdbool.h>

#include "cli/cli_common.h"

/* argv[0] is "submit".  `g` holds the global flags given before the
 * command; flags after it override them.  Returns the exit status. */
int cli_submit_main(int argc, char **argv, const struct cli_globals *g);
void cli_submit_usage(FILE *out);

/* Follows job `id` until it ends, printing each change and the summary;
 * SIGINT/SIGTERM (blocked by the caller, see cli_signals_block()) kill the
 * job first.  Returns 0 when it succeeded, 1 when it failed or was killed,
 * 3 when the server stayed unreachable.  `first` (may be NULL): the
 * submission's answer, the first look when it carries a version. */
int cli_submit_follow(struct cli_ctx *ctx, long long id, json_t *first);

/* Blocks SIGINT and SIGTERM so that they are taken only between HTTP calls
 * (cli_submit_follow() waits for them while it sleeps). */
void cli_signals_block(void);

/* Splits submit's arguments (argv[0] is "submit"): weir's own flags
 * (--detach, --name, --priority, --server, --home, --help), one positional
 * spec file, and TonY's flags (model/tony.h: submit_flag_arity()) with their
 * values, copied to tony_argv (flags only; the array needs argc + 1 slots).
 * A flag that is neither is an error.  Pure; 0 or -1 with err. */
struct cli_submit_args {
	bool detach;
	bool help;
	const char *name;
	const char *priority;
	const char *spec_file;
	struct cli_globals globals;
	int tony_argc;
	char **tony_argv; /* caller-provided, argc + 1 slots; NULL-terminated */
};
int cli_submit_split(int argc, char **argv, struct cli_submit_args *a, struct weir_error *err);

#endif
