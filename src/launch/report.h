/* report.h: the launcher's `exited` report, both ends of it: the launcher
 * writes it (launch.c) and the server reads it (server/job_manager/protocol.c),
 * so its fields are named in one place (docs/internals/launch.md).
 *
 * The fields: exit_code, signal (null: none), oom_killed, peak_memory_bytes,
 * cpu_time_ms, reason (words for people) and cause (model/end_cause.h, by
 * name).  A report without a cause, or with one this weir does not know,
 * comes from a launcher of the previous version still running across an
 * upgrade: its cause is derived here, once, from what it does carry.
 */
#ifndef WEIR_LAUNCH_REPORT_H
#define WEIR_LAUNCH_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "model/end_cause.h"

struct exit_report {
	enum end_cause cause;
	int exit_code; /* -1: none */
	int signal;    /* 0: none */
	bool oom_killed;
	int64_t peak_memory_bytes; /* -1: not reported */
	int64_t cpu_time_ms;       /* -1: not reported */
	const char *reason;        /* borrowed; NULL or "": none */
};

/* Sets the report's fields on `body` (the task's key is the caller's).
 * 0, or -1 when out of memory. */
int exit_report_to_json(const struct exit_report *r, json_t *body);

/* Reads the fields of `body`; strings are borrowed from it. */
void exit_report_from_json(const json_t *body, struct exit_report *out);

/* The cause of a report that names none, from what it carries: oom_killed
 * is oom; the previous launcher's words for the ends it caused itself
 * ("execution timeout after Ns", "gang registration timeout after Ns",
 * "launch failed: ...", "killed (launcher got SIG...)") give those; a
 * signal is signalled; else exited. */
enum end_cause exit_report_derive_cause(int signal, bool oom_killed, const char *reason);

#endif
