/* task_output.h: the program's output on its way to the task's log, with
 * the task's secrets masked (lib/mask.h).
 *
 * The launcher reads the program's stdout and stderr from a pipe whenever
 * they must pass through it: to ship them to the server (logship.h), or to
 * mask them because the task was given secrets (the register answer's
 * "mask": its connections' passwords and URIs, docs/connections.md) or its
 * launcher holds some (its launch secret, a shim's copy of the server's
 * token: docs/security.md).  What
 * it reads goes through task_output_write(): masked, then to the shipper,
 * or to the log file the launcher's own stdout is.  A task without secrets
 * and without shipping would keep writing straight into its file; every
 * launcher has its launch secret, so that is a launcher's started by hand
 * without one.
 */
#ifndef WEIR_LAUNCH_TASK_OUTPUT_H
#define WEIR_LAUNCH_TASK_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "launch/logship.h"
#include "lib/mask.h"

struct task_output {
	struct mask *mask;    /* NULL: nothing to mask */
	struct logship *ship; /* NULL: write to fd */
	int fd;               /* the log file when not shipping (1: the launcher's stdout) */
	/* bytes the log file refused (a full disk) since the last marker
	 * (TASK_OUTPUT_TRUNCATED), and why */
	uint64_t lost;
	int lost_errno;
};

/* The line a log file gets where bytes were lost (its disk was full): the
 * program goes on (its output is read and dropped), and the line comes
 * before the next bytes the file takes, or at the output's end
 * (docs/api.md, "A full disk"). */
#define TASK_OUTPUT_TRUNCATED "[weir launch: log truncated: %llu bytes of output lost here: %s]\n"

/* The register answer's "mask" (a list of strings; absent: none) and
 * extra[0..n_extra) (the launcher's own secrets: its launch secret, the
 * server's token; NULL entries skipped).  0, or -1 when out of memory (the
 * task must then not start). */
int task_output_set_mask(struct task_output *o, const json_t *list, const char *const *extra,
                         size_t n_extra);
/* Whether the output must go through the launcher (masking or shipping). */
bool task_output_needs_pipe(const struct task_output *o);
/* Bytes the program wrote, in order. */
void task_output_write(struct task_output *o, const char *data, size_t n);
/* The end of the program's output: what the masker held back goes out;
 * when bytes were lost and the marker could not be written yet, it is
 * tried again, for up to TASK_OUTPUT_MARKER_WAIT_MS while the disk stays
 * full (the task's end waits for it: a reader that sees the task ended
 * sees that its log is not whole). */
#define TASK_OUTPUT_MARKER_WAIT_MS 60000
void task_output_end(struct task_output *o);
/* Frees the masker. */
void task_output_release(struct task_output *o);

#endif
