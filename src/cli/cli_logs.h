/* cli_logs.h: `weir logs JOB [--role R] [--index I] [--attempt N] [--follow]`.
 *
 * Which tasks: those matching --role and --index (each optional), of
 * attempt N (default: the current one); with neither, every task of the
 * attempt.  One task's log is printed as it is; several are printed with
 * each line prefixed "role:index| ".  --follow streams until the tasks end.
 */
#ifndef WEIR_CLI_CLI_LOGS_H
#define WEIR_CLI_CLI_LOGS_H

#include <stddef.h>
#include <stdio.h>

#include "cli/cli_common.h"
#include "lib/strbuf.h"

int cli_logs_main(int argc, char **argv, const struct cli_globals *g);
void cli_logs_usage(FILE *out);

/* Splits a byte stream into lines, each written to `out` with `prefix` in
 * front (prefix NULL: bytes pass through unchanged).  A partial line waits
 * for its end; cli_line_writer_finish() ends it with a newline.  Embedded;
 * owns its buffer. */
struct cli_line_writer {
	const char *prefix; /* borrowed */
	FILE *out;
	struct strbuf partial; /* the line so far, without its end */
};

void cli_line_writer_init(struct cli_line_writer *w, const char *prefix, FILE *out);
/* 0, or -1 when out of memory. */
int cli_line_writer_add(struct cli_line_writer *w, const char *data, size_t len);
void cli_line_writer_finish(struct cli_line_writer *w);
void cli_line_writer_release(struct cli_line_writer *w);

#endif
