/* cli_common.h: what every `weir` client command shares.
 *
 * The connection to the server (URL, token, HTTP handle), flag splitting,
 * the exit statuses, JSON accessors, and the formatting of times, durations,
 * sizes and tables for people.  The client commands talk to nothing but the
 * HTTP API (docs/api.md); everything here is either pure or wraps that.
 */
#ifndef WEIR_CLI_CLI_COMMON_H
#define WEIR_CLI_CLI_COMMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/error.h"
#include "lib/http_client.h"

/* The version comes from the Makefile (-DWEIR_VERSION), which reads it from
 * python/weir/_version.py: one source for the program and the Python package. */
#ifndef WEIR_VERSION
#error "WEIR_VERSION is set by the Makefile, from python/weir/_version.py"
#endif

#define CLI_DEFAULT_SERVER "http://127.0.0.1:8270"

/* Exit statuses of every client command (docs/cli.md). */
enum cli_exit {
	CLI_EXIT_OK = 0,          /* done; a watched job succeeded */
	CLI_EXIT_FAILED = 1,      /* the job failed or was killed; the server refused */
	CLI_EXIT_USAGE = 2,       /* bad flags or bad input (local, or a 400/422) */
	CLI_EXIT_UNREACHABLE = 3, /* no answer from the server */
};

/* The global flags, as given (NULL: not given).  Borrowed from argv. */
struct cli_globals {
	const char *server;
	const char *home;
};

/* A connection to the server.  Owns every member. */
struct cli_ctx {
	char *server_url; /* --server, else WEIR_SERVER, else CLI_DEFAULT_SERVER */
	char *home;       /* --home, else WEIR_HOME, else ~/.weir */
	char *token;      /* WEIR_TOKEN, else HOME/token; NULL when neither exists */
	char *ca_file;    /* WEIR_CA_FILE made absolute; NULL: the system's CAs only */
	struct http_client *http;
};

/* Resolves URL, home and token and opens the HTTP handle.  0, or -1 with
 * err (only when out of memory: a missing token is not an error here, the
 * server answers 401 and cli_report() explains). */
int cli_ctx_init(struct cli_ctx *ctx, const struct cli_globals *g, struct weir_error *err);
/* Another HTTP handle on the server (a log follower's): https:// URLs
 * verified against the system's CAs and ctx->ca_file (lib/tls.h).  NULL on
 * out of memory. */
struct http_client *cli_ctx_http(const struct cli_ctx *ctx);
/* Frees what init allocated; safe on a zeroed or released ctx. */
void cli_ctx_release(struct cli_ctx *ctx);

/* Flag splitting.  Flags are `--name value` or `--name=value`.
 *
 * cli_flag_value(): if argv[*i] is the flag `name` (with its leading dashes,
 * e.g. "--limit"), stores its value in *value (borrowed from argv), moves *i
 * to the last argument it used and returns 1; 0 when argv[*i] is another
 * flag; -1 with err when the value is missing. */
int cli_flag_value(int argc, char **argv, int *i, const char *name, const char **value,
                   struct weir_error *err);
/* Same for the global flags --server and --home, into g. */
int cli_flag_global(int argc, char **argv, int *i, struct cli_globals *g, struct weir_error *err);
/* true if `arg` is exactly `name` or `alias` (alias may be NULL). */
bool cli_flag_is(const char *arg, const char *name, const char *alias);
/* true for "-h" and "--help". */
bool cli_flag_is_help(const char *arg);

/* One flag of a subcommand for cli_parse_args(): a value flag (`value` set)
 * stores its value into *value, borrowed from argv, and also appends it to
 * `list` when that is set (a repeatable flag); a switch (`on` set) sets *on. */
struct cli_opt {
	const char *name;
	const char **value;
	bool *on;
	json_t *list;
};
/* Splits argv[1..] (argv[0] is the subcommand) into the flags of `opts`, the
 * global flags (into g) and at most max_pos positional arguments (into pos,
 * their count in *n_pos).  Returns 0, 1 after printing usage for --help, or
 * -1 after printing the error and usage (an unknown flag, a missing value,
 * one positional too many). */
int cli_parse_args(int argc, char **argv, const struct cli_opt *opts, size_t n_opts,
                   const char **pos, size_t max_pos, size_t *n_pos, struct cli_globals *g,
                   void (*usage)(FILE *));

/* Strict number parsing for flag values: the whole text must be a decimal
 * integer in [min, max].  0, or -1 with err naming `what`. */
int cli_parse_int(const char *text, const char *what, long long min, long long max, long long *out,
                  struct weir_error *err);

/* One API call's answer.  Owns body and json. */
struct cli_reply {
	long status; /* HTTP status; 0 when no answer came */
	char *body;  /* NUL-terminated; "" when empty */
	size_t len;
	json_t *json;          /* the body parsed as JSON, or NULL */
	struct weir_error err; /* when status is 0: why */
};

/* METHOD path with an optional JSON body.  Fills r in every case (release
 * it).  Returns 0 when an answer came (any status), -1 when none did. */
int cli_call(struct cli_ctx *ctx, const char *method, const char *path, const char *body,
             long timeout_ms, struct cli_reply *r);
void cli_reply_release(struct cli_reply *r);
bool cli_reply_ok(const struct cli_reply *r); /* 2xx */

/* Prints why a call did not succeed ("cannot reach the weir server at URL:
 * ...; is `weir server` running?", the server's message, a hint on 401) on
 * stderr and returns the exit status for it: 3 no answer, 2 for 400/422,
 * 1 otherwise. */
int cli_report(const struct cli_ctx *ctx, const struct cli_reply *r);

/* Why no answer came (r->status 0), without the URL the message would
 * repeat.  Points into r. */
const char *cli_reply_why(const struct cli_ctx *ctx, const struct cli_reply *r);

/* GET path; on a 2xx stores the parsed JSON (new reference) in *out and
 * returns 0; else prints (cli_report) and returns the exit status. */
int cli_get_json(struct cli_ctx *ctx, const char *path, json_t **out);

/* Prints "weir: error: MSG" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* JSON accessors that tolerate missing keys and nulls. */
const char *cli_json_str(json_t *obj, const char *key, const char *dflt);
/* Integer value of obj[key]; dflt when absent, null or not a number. */
long long cli_json_int(json_t *obj, const char *key, long long dflt);
/* An ISO 8601 time at obj[key] as epoch ms; -1 when absent or bad. */
int64_t cli_json_time(json_t *obj, const char *key);

/* Terminal states of jobs and tasks. */
bool cli_job_state_is_final(const char *state);
bool cli_task_state_is_final(const char *state);
/* true when every task in job["tasks"] is in a terminal state: a job's
 * state turns final before its last tasks have been stopped. */
bool cli_job_tasks_final(json_t *job);

/* Formatting for people.  Each writes into buf (size >= 32 is always
 * enough) and returns buf.
 * cli_format_duration: 350 -> "350ms", 29100 -> "29.1s", 184000 -> "3m04s",
 *   7380000 -> "2h03m", 93600000 -> "1d02h"; negative -> "-".
 * cli_format_bytes: binary units, 3 significant digits at most: 512 ->
 *   "512 B", 1536 -> "1.5 KiB", 327155712 -> "312 MiB"; negative -> "-".
 * cli_format_clock: local "HH:MM:SS".
 * cli_format_datetime: local "YYYY-MM-DD HH:MM:SS"; negative -> "-". */
char *cli_format_duration(int64_t ms, char *buf, size_t size);
char *cli_format_bytes(int64_t bytes, char *buf, size_t size);
char *cli_format_clock(int64_t epoch_ms, char *buf, size_t size);
char *cli_format_datetime(int64_t epoch_ms, char *buf, size_t size);

/* How long a job or task ran: ended_at - started_at, or now - started_at
 * while it runs; -1 when it never started. */
int64_t cli_object_duration_ms(json_t *obj, int64_t now_ms);

/* "role:index" of a Task object into buf. */
char *cli_task_name(json_t *task, char *buf, size_t size);
/* A task's exit for a table: "0", "137", "signal 9" or "-"; returns buf. */
char *cli_task_exit_text(json_t *task, char *buf, size_t size);

/* A table printed with columns padded to their widest cell.  Cells are
 * copied.  The last column is not padded (no trailing blanks). */
struct cli_table {
	size_t n_cols;
	size_t n_rows; /* including the header */
	char **cells;  /* n_rows * n_cols */
	size_t cap_rows;
};

/* header: n_cols column titles. 0, or -1 on out of memory. */
int cli_table_init(struct cli_table *t, size_t n_cols, const char *const *header);
/* Adds a row of n_cols cells (NULL prints as "-"). 0 or -1. */
int cli_table_add(struct cli_table *t, const char *const *row);
/* Writes the table to `out`. */
void cli_table_print(const struct cli_table *t, FILE *out);
void cli_table_release(struct cli_table *t);

#endif
