/* cli_db.c: `weir db clean` (cli_db.h): the flags read, the clean asked of
 * the server, its end awaited (GET /api/v1/weir/dbClean until it is no
 * longer running) and its counts printed. */
#include "cli/cli_db.h"

#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"

void cli_db_usage(FILE *out)
{
	fputs("usage: weir db clean --older-than DURATION [--dry-run] [--dags ID,ID...] "
	      "[--no-wait]\n"
	      "\n"
	      "Removes, on the server, the history that ended more than DURATION ago (\"30d\",\n"
	      "\"12h\"): finished DAG runs (success or failed) with their task instances, tries\n"
	      "and jobs; ended jobs of no DAG; the event log's records; and the jobs' logs and\n"
	      "files under the server's home.  A queued or running run, and a job that has not\n"
	      "ended, are never removed.  The server removes in batches, answering requests in\n"
	      "between.  Needs the Admin role.\n"
	      "\n"
	      "  --older-than D  what ended more than D ago (s, m, h, d; at most a year)\n"
	      "  --dry-run       print what would be removed; remove nothing\n"
	      "  --dags A,B      only the runs of these DAGs (and their jobs)\n"
	      "  --no-wait       return once the clean has begun\n",
	      out);
}

static const char *const fields[] = {"dag_runs", "task_instances", "jobs",
                                     "tasks",    "events",         "event_log"};

static void print_counts(const char *title, json_t *counts)
{
	printf("%s\n", title);
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		printf("  %-15s %lld\n", fields[i], cli_json_int(counts, fields[i], 0));
}

/* The body of the POST (owned), or NULL after printing the error. */
static char *request_body(const char *older, bool dry, const char *dags)
{
	json_t *o = json_pack("{s:s, s:b}", "older_than", older, "dry_run", dry);
	char *text;

	if (dags) {
		json_t *ids = json_array();
		char *copy = strdup(dags), *save = NULL;
		for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t;
		     t = strtok_r(NULL, ",", &save))
			json_array_append_new(ids, json_string(t));
		free(copy);
		if (json_array_size(ids) == 0) {
			cli_error("--dags \"%s\": expected DAG ids separated by commas", dags);
			json_decref(ids);
			json_decref(o);
			return NULL;
		}
		json_object_set_new(o, "dag_ids", ids);
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

/* GETs the clean's state until it is no longer running; prints it. */
static int wait_end(struct cli_ctx *ctx)
{
	for (;;) {
		json_t *st = NULL;
		int rc = cli_get_json(ctx, "/api/v1/weir/dbClean", &st);
		const char *state;
		if (rc != 0)
			return rc;
		state = cli_json_str(st, "state", "?");
		if (strcmp(state, "running")) {
			rc = strcmp(state, "done") ? CLI_EXIT_FAILED : CLI_EXIT_OK;
			print_counts("removed:", json_object_get(st, "removed"));
			if (rc != CLI_EXIT_OK)
				cli_error("the clean stopped (%s): %s", state,
				          cli_json_str(st, "error", "?"));
			json_decref(st);
			return rc;
		}
		json_decref(st);
		clock_sleep_ms(200);
	}
}

static int clean_main(int argc, char **argv, struct cli_globals *g)
{
	const char *older = NULL, *dags = NULL;
	bool dry = false, no_wait = false;
	const struct cli_opt opts[] = {{"--older-than", &older, NULL, NULL},
	                               {"--dags", &dags, NULL, NULL},
	                               {"--dry-run", NULL, &dry, NULL},
	                               {"--no-wait", NULL, &no_wait, NULL}};
	struct weir_error err = {0};
	struct cli_ctx ctx = {0};
	struct cli_reply r = {0};
	size_t n_pos = 0;
	char *body;
	int rc;

	rc = cli_parse_args(argc, argv, opts, sizeof opts / sizeof opts[0], NULL, 0, &n_pos, g,
	                    cli_db_usage);
	if (rc != 0)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (!older) {
		cli_error("db clean: --older-than is required (for example --older-than 30d)");
		cli_db_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!(body = request_body(older, dry, dags)))
		return CLI_EXIT_USAGE;
	if (cli_ctx_init(&ctx, g, &err) < 0) {
		cli_error("%s", err.msg);
		free(body);
		return CLI_EXIT_USAGE;
	}
	if (cli_call(&ctx, "POST", "/api/v1/weir/dbClean", body, 30000, &r) < 0 ||
	    !cli_reply_ok(&r)) {
		rc = cli_report(&ctx, &r);
	} else {
		printf("before %s\n", cli_json_str(r.json, "before", "?"));
		print_counts(dry ? "would remove:" : "to remove:",
		             json_object_get(r.json, "would_remove"));
		rc = dry || no_wait ? CLI_EXIT_OK : wait_end(&ctx);
	}
	cli_reply_release(&r);
	cli_ctx_release(&ctx);
	free(body);
	return rc;
}

int cli_db_main(int argc, char **argv, const struct cli_globals *g0)
{
	struct cli_globals g = *g0;

	if (argc >= 2 && cli_flag_is_help(argv[1])) {
		cli_db_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "clean"))
		return clean_main(argc - 1, argv + 1, &g);
	cli_error(argc >= 2 ? "db: unknown subcommand \"%s\"" : "db: a subcommand is needed%s",
	          argc >= 2 ? argv[1] : "");
	cli_db_usage(stderr);
	return CLI_EXIT_USAGE;
}
