/* cli_tasks.c: `weir tasks state|clear|logs`: one task instance's state, clearing task
 * instances so that they run again, and a try's log, whole or followed.
 *
 * Logs come from GET .../taskInstances/{task}/logs/{try} as JSON: `content` and Airflow's
 * `continuation_token`, which asks for what came after.  Following polls with the token and
 * stops once the try has ended (the TI moved past it) and a last read brought nothing new.
 * A server that gives no token sends the whole log each time: then only what is past what
 * was printed is printed, so a line is never printed twice either way.
 */
#include "cli/cli_tasks.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli_dags.h"
#include "cli/cli_ti.h"
#include "lib/clock.h"
#include "model/states.h"

#define POLL_MS 200
#define CALL_TIMEOUT_MS 30000
#define UNREACHABLE_GIVE_UP_MS (10 * 60 * 1000)

void cli_tasks_usage(FILE *out)
{
	fputs("usage: weir tasks state DAG RUN TASK [--map-index I] [--json]\n"
	      "       weir tasks clear DAG RUN [--task T]... [--downstream] [--only-failed]\n"
	      "                        [--dry-run]\n"
	      "       weir tasks logs DAG RUN TASK [--try N] [--map-index I] [--follow|-f]\n"
	      "       weir tasks test DAG_ID|DAG_FILE TASK [DATE] [--dags DIR] [--conf JSON]\n"
	      "                       [--keep] [--config FILE] [--executor local]\n"
	      "                       [--conn ID=URI]... [--var KEY=VALUE]...\n"
	      "\n"
	      "  state   a task instance's state (none, scheduled, queued, running, success,\n"
	      "          failed, up_for_retry, upstream_failed, skipped); --map-index: the\n"
	      "          instance I of a foreach task\n"
	      "  clear   resets task instances so that they run again (their run too):\n"
	      "          every task of the run, or those named by --task (repeatable);\n"
	      "          --downstream: and the tasks downstream of them; --only-failed: only\n"
	      "          failed and upstream_failed ones; --dry-run: list what would be cleared\n"
	      "  logs    the log of try N (default: the latest); --follow: and what it writes\n"
	      "          until that try ends\n"
	      "  test    runs one task in this process, as `weir dags test` runs a DAG, with\n"
	      "          its upstream ignored (Airflow's `tasks test`), and prints its log; the\n"
	      "          DAG from a file, else from --dags DIR, else the server's DAG folder;\n"
	      "          DATE its logical date (default now); the other flags as `dags test`\n",
	      out);
}

/* The TI's path, with "?map_index=I" when map >= 0 and `rest` before it. */
static char *ti_path(const char *dag, const char *run, const char *task, const char *rest,
                     long long map)
{
	char *task_esc = http_url_escape(task);
	char tail[512];
	char *out = NULL;

	if (!task_esc)
		return NULL;
	if (map >= 0)
		snprintf(tail, sizeof tail, "/taskInstances/%s%s?map_index=%lld", task_esc,
		         rest ? rest : "", map);
	else
		snprintf(tail, sizeof tail, "/taskInstances/%s%s", task_esc, rest ? rest : "");
	if (strlen(tail) < sizeof tail - 1)
		out = cli_dag_path(dag, run, tail);
	free(task_esc);
	return out;
}

static int get_ti(struct cli_ctx *ctx, const char *path, json_t **ti)
{
	struct cli_reply r;
	int rc = CLI_EXIT_OK;

	*ti = NULL;
	cli_call(ctx, "GET", path, NULL, CALL_TIMEOUT_MS, &r);
	if (!cli_reply_ok(&r) || !r.json)
		rc = cli_dag_report(ctx, &r);
	else
		*ti = json_incref(r.json);
	cli_reply_release(&r);
	return rc;
}

static int tasks_state(struct cli_ctx *ctx, const char *dag, const char *run, const char *task,
                       long long map, bool as_json)
{
	char *path = ti_path(dag, run, task, NULL, map);
	json_t *ti = NULL;
	int rc;

	if (!path)
		return CLI_EXIT_FAILED;
	rc = get_ti(ctx, path, &ti);
	if (rc == CLI_EXIT_OK) {
		if (as_json) {
			json_dumpf(ti, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			putchar('\n');
		} else {
			printf("%s\n", cli_ti_state(ti));
		}
	}
	json_decref(ti);
	free(path);
	return rc;
}

static int tasks_clear(struct cli_ctx *ctx, const char *dag, const char *run, json_t *tasks,
                       bool downstream, bool only_failed, bool dry_run)
{
	char *path = cli_dag_path(dag, NULL, "/clearTaskInstances");
	json_t *body = json_pack("{sssbsbsb}", "dag_run_id", run, "include_downstream", downstream,
	                         "only_failed", only_failed, "dry_run", dry_run);
	char *text = NULL;
	struct cli_reply r = {0};
	json_t *ti;
	size_t i, n;
	int rc = CLI_EXIT_FAILED;

	if (!path || !body)
		goto out;
	if (json_array_size(tasks) > 0)
		json_object_set(body, "task_ids", tasks);
	text = json_dumps(body, JSON_COMPACT);
	if (!text)
		goto out;
	cli_call(ctx, "POST", path, text, CALL_TIMEOUT_MS, &r);
	if (!cli_reply_ok(&r) || !r.json) {
		rc = cli_dag_report(ctx, &r);
		goto out;
	}
	json_t *list = json_object_get(r.json, "task_instances");
	n = json_array_size(list);
	printf("%s %zu task instance%s of run %s%s\n", dry_run ? "would clear" : "cleared", n,
	       n == 1 ? "" : "s", run, n ? ":" : "");
	json_array_foreach(list, i, ti)
	{
		char name[300];
		printf("  %s\n", cli_ti_name(ti, name, sizeof name));
	}
	rc = CLI_EXIT_OK;
out:
	cli_reply_release(&r);
	free(text);
	free(path);
	json_decref(body);
	return rc;
}

/* Where a follower stands with try N: -1 not started yet, 0 running, 1 ended. */
static int try_progress(json_t *ti, long long n)
{
	long long current = cli_json_int(ti, "try_number", 0);
	const char *state = cli_ti_state(ti);

	/* The server counts a try when it starts it (docs/internals/dags.md). */
	if (current < n)
		return -1;
	enum dag_ti_state ts;
	if (current == n && dag_ti_state_from_name(state, &ts) == 0 && dag_ti_state_is_active(ts))
		return 0;
	return 1;
}

struct log_reader {
	struct cli_ctx *ctx;
	char *base; /* the log route without query */
	long long map;
	char *token;    /* Airflow's continuation_token, once one came */
	size_t printed; /* without a token: bytes of the whole log printed so far */
};

/* One read.  Returns 1 when something new was printed, 0 when nothing was, -1 when no
 * answer came (*why holds it), or 100 + the exit status when the server refused (*status
 * gets the HTTP status; printed unless it is a 404). */
static int log_read(struct log_reader *lr, struct cli_reply *why, long *status)
{
	char *path = NULL, *tok = lr->token ? http_url_escape(lr->token) : NULL;
	struct cli_reply r;
	const char *content = NULL;
	size_t len = 0;
	int out = 0;
	size_t n;

	memset(why, 0, sizeof *why);
	n = strlen(lr->base) + (tok ? strlen(tok) : 0) + 64;
	path = malloc(n);
	if (!path || (lr->token && !tok)) {
		free(path);
		free(tok);
		*status = 0;
		return 100 + CLI_EXIT_FAILED;
	}
	snprintf(path, n, "%s", lr->base);
	if (lr->map >= 0)
		snprintf(path + strlen(path), n - strlen(path), "?map_index=%lld", lr->map);
	if (tok)
		snprintf(path + strlen(path), n - strlen(path), "%stoken=%s",
		         lr->map >= 0 ? "&" : "?", tok);
	free(tok);
	if (cli_call(lr->ctx, "GET", path, NULL, CALL_TIMEOUT_MS, &r) < 0) {
		free(path);
		*why = r;
		return -1;
	}
	free(path);
	*status = r.status;
	if (!cli_reply_ok(&r)) {
		out = 100 + (r.status == 404 ? CLI_EXIT_FAILED : cli_dag_report(lr->ctx, &r));
		if (r.status == 404)
			*why = r; /* the caller decides whether a missing try is an error */
		else
			cli_reply_release(&r);
		return out;
	}
	json_t *c = r.json ? json_object_get(r.json, "content") : NULL;
	const char *next =
	    r.json ? json_string_value(json_object_get(r.json, "continuation_token")) : NULL;
	if (r.json && json_is_string(c)) {
		content = json_string_value(c);
		len = json_string_length(c);
	} else if (!r.json) {
		content = r.body; /* text/plain */
		len = r.len;
	}
	if (next && *next) {
		/* Token mode: content is what came after the token we sent. */
		free(lr->token);
		lr->token = strdup(next);
		if (len > 0) {
			fwrite(content, 1, len, stdout);
			out = 1;
		}
	} else if (len > lr->printed) {
		fwrite(content + lr->printed, 1, len - lr->printed, stdout);
		lr->printed = len;
		out = 1;
	}
	fflush(stdout);
	cli_reply_release(&r);
	return out;
}

static int tasks_logs(struct cli_ctx *ctx, const char *dag, const char *run, const char *task,
                      long long map, long long try_n, bool follow)
{
	char *path = ti_path(dag, run, task, NULL, map);
	char rest[64];
	struct log_reader lr = {.ctx = ctx, .map = map};
	json_t *ti = NULL;
	int64_t lost_since = -1;
	bool ended = false;
	int rc;

	if (!path)
		return CLI_EXIT_FAILED;
	rc = get_ti(ctx, path, &ti);
	if (rc != CLI_EXIT_OK)
		goto out;
	if (try_n <= 0) {
		try_n = cli_json_int(ti, "try_number", 0);
		if (try_n <= 0 && !follow) {
			cli_error("task %s of run %s has not run yet (state %s); --follow waits "
			          "for its first try",
			          task, run, cli_ti_state(ti));
			rc = CLI_EXIT_FAILED;
			goto out;
		}
		if (try_n <= 0)
			try_n = 1;
	}
	snprintf(rest, sizeof rest, "/logs/%lld", try_n);
	lr.base = ti_path(dag, run, task, rest, -1);
	if (!lr.base) {
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	for (;;) {
		struct cli_reply why;
		long status = 0;
		int st = log_read(&lr, &why, &status);

		if (st < 0) {
			int64_t now = (int64_t)time(NULL) * 1000;
			if (!follow) {
				rc = cli_report(ctx, &why);
				cli_reply_release(&why);
				goto out;
			}
			if (lost_since < 0) {
				lost_since = now;
				fprintf(stderr,
				        "weir: lost contact with the weir server at %s: %s; "
				        "retrying\n",
				        ctx->server_url, cli_reply_why(ctx, &why));
			} else if (now - lost_since > UNREACHABLE_GIVE_UP_MS) {
				rc = cli_report(ctx, &why);
				cli_reply_release(&why);
				goto out;
			}
			cli_reply_release(&why);
			clock_sleep_ms(500);
			continue;
		}
		if (lost_since >= 0) {
			fprintf(stderr, "weir: reconnected to %s\n", ctx->server_url);
			lost_since = -1;
		}
		if (st >= 100) {
			/* A try that has not started has no log yet: a follower waits for it. */
			if (status == 404 && follow && !ended) {
				cli_reply_release(&why);
				st = 0;
			} else {
				if (status == 404)
					cli_dag_report(ctx, &why);
				cli_reply_release(&why);
				rc = st - 100;
				goto out;
			}
		}
		if (st == 1)
			continue; /* more may be there already */
		if (!follow || ended)
			break;
		/* Nothing new: has the try ended?  If so, one more read drains what it wrote
		 * between our last read and its end. */
		json_t *now_ti = NULL;
		rc = get_ti(ctx, path, &now_ti);
		if (rc != CLI_EXIT_OK)
			goto out;
		ended = try_progress(now_ti, try_n) > 0;
		json_decref(now_ti);
		if (!ended)
			clock_sleep_ms(POLL_MS);
	}
	rc = CLI_EXIT_OK;
out:
	free(lr.base);
	free(lr.token);
	free(path);
	json_decref(ti);
	return rc;
}

int cli_tasks_main(int argc, char **argv, const struct cli_globals *g0)
{
	struct cli_globals g = *g0;
	struct weir_error err = {0};
	struct cli_ctx ctx = {0};
	const char *pos[3] = {NULL, NULL, NULL};
	const char *map_text = NULL, *try_text = NULL, *task = NULL;
	bool as_json = false, downstream = false, only_failed = false, dry_run = false;
	bool follow = false;
	long long map = -1, try_n = 0;
	json_t *tasks = json_array();
	size_t n_pos = 0, want = 3;
	const char *sub;
	int rc = CLI_EXIT_USAGE;

	if (!tasks)
		return CLI_EXIT_FAILED;
	if (argc < 2 || cli_flag_is_help(argv[1])) {
		json_decref(tasks);
		cli_tasks_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	sub = argv[1];
	if (!strcmp(sub, "test")) {
		json_decref(tasks);
		return cli_dag_test_main(argc - 1, argv + 1, &g, true, cli_tasks_usage);
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		int r;

		if (cli_flag_is_help(a)) {
			cli_tasks_usage(stdout);
			rc = CLI_EXIT_OK;
			goto out;
		}
		if (a[0] != '-' || !a[1]) {
			if (n_pos == 3) {
				cli_error("unexpected argument \"%s\"", a);
				goto usage;
			}
			pos[n_pos++] = a;
			continue;
		}
		if ((r = cli_flag_global(argc, argv, &i, &g, &err)) != 0 ||
		    (r = cli_flag_value(argc, argv, &i, "--map-index", &map_text, &err)) != 0 ||
		    (r = cli_flag_value(argc, argv, &i, "--try", &try_text, &err)) != 0) {
			if (r < 0)
				goto bad_err;
			continue;
		}
		if ((r = cli_flag_value(argc, argv, &i, "--task", &task, &err)) != 0) {
			if (r < 0)
				goto bad_err;
			json_array_append_new(tasks, json_string(task));
			continue;
		}
		if (!strcmp(a, "--json"))
			as_json = true;
		else if (!strcmp(a, "--downstream"))
			downstream = true;
		else if (!strcmp(a, "--only-failed"))
			only_failed = true;
		else if (!strcmp(a, "--dry-run"))
			dry_run = true;
		else if (cli_flag_is(a, "--follow", "-f"))
			follow = true;
		else {
			cli_error("unknown flag %s", a);
			goto usage;
		}
	}
	/* Each subcommand takes only its own flags. */
	bool is_state = !strcmp(sub, "state"), is_clear = !strcmp(sub, "clear"),
	     is_logs = !strcmp(sub, "logs");
	if (!is_state && !is_clear && !is_logs) {
		cli_error("no command \"tasks %s\"", sub);
		goto usage;
	}
	if (is_clear)
		want = 2;
	if ((!is_clear && (json_array_size(tasks) || downstream || only_failed || dry_run)) ||
	    (!is_logs && (try_text || follow)) || (is_clear && map_text) || (is_logs && as_json)) {
		cli_error("a flag given is not one of `tasks %s`", sub);
		goto usage;
	}
	if (n_pos != want) {
		cli_error("tasks %s needs %s", sub,
		          want == 2 ? "a DAG id and a run id" : "a DAG id, a run id and a task id");
		goto usage;
	}
	if (map_text && cli_parse_int(map_text, "--map-index", 0, 1000000, &map, &err) < 0)
		goto bad_err;
	if (try_text && cli_parse_int(try_text, "--try", 1, 1000000, &try_n, &err) < 0)
		goto bad_err;
	if (cli_ctx_init(&ctx, &g, &err) < 0) {
		cli_error("%s", err.msg);
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	if (is_state)
		rc = tasks_state(&ctx, pos[0], pos[1], pos[2], map, as_json);
	else if (is_clear)
		rc = tasks_clear(&ctx, pos[0], pos[1], tasks, downstream, only_failed, dry_run);
	else
		rc = tasks_logs(&ctx, pos[0], pos[1], pos[2], map, try_n, follow);
	cli_ctx_release(&ctx);
	goto out;
bad_err:
	cli_error("%s", err.msg);
usage:
	cli_tasks_usage(stderr);
	rc = CLI_EXIT_USAGE;
out:
	json_decref(tasks);
	return rc;
}
