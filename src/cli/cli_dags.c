/* cli_dags.c: `weir dags ...`: the DAG table with its import errors, one DAG, triggering a
 * run (and following it to its result), a run's state, the runs of a DAG, pausing, and
 * backfilling a range of schedule intervals.
 *
 * Everything goes through Airflow's stable REST API paths (docs/api.md), so this command is
 * also a working example of a script against them.  Following a run polls
 * GET .../dagRuns/{run} and its taskInstances every POLL_MS: the Airflow routes have no long
 * poll, and a fifth of a second is well under a task's own start cost.
 */
#include "cli/cli_dags.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli_dag_test.h"
#include "cli/cli_ti.h"
#include "lib/clock.h"
#include "model/cron.h"
#include "model/states.h"

#define POLL_MS 200
#define CALL_TIMEOUT_MS 30000
#define UNREACHABLE_GIVE_UP_MS (10 * 60 * 1000)
#define BACKFILL_MAX_RUNS 1000
#define PAGE 100

void cli_dags_usage(FILE *out)
{
	fputs(
	    "usage: weir dags list [--json]\n"
	    "       weir dags show DAG [--json]\n"
	    "       weir dags trigger DAG [--conf JSON] [--run-id ID] [--logical-date T] [--wait]\n"
	    "       weir dags state DAG RUN\n"
	    "       weir dags runs DAG [--state S] [--limit N] [--json]\n"
	    "       weir dags pause DAG | unpause DAG\n"
	    "       weir dags backfill DAG --from D --to D [--conf JSON] [--wait]\n"
	    "       weir dags check [--config FILE] PATH...\n"
	    "       weir dags test DAG_FILE|DAG_ID --dags DIR [--conf JSON] [--logical-date T] "
	    "[--keep]\n"
	    "                      [--conn ID=URI]... [--var KEY=VALUE]...\n"
	    "                      [--config FILE] [--executor local]\n"
	    "\n"
	    "  list      the DAGs (id, schedule, paused, tags, file), then the DAG files that\n"
	    "            did not load (import errors: file, line and message)\n"
	    "  show      one DAG's fields and its latest runs\n"
	    "  trigger   creates a run now.  --conf: a JSON object over the DAG's params;\n"
	    "            --run-id: the run's id (default manual__LOGICAL_DATE); --logical-date:\n"
	    "            a date or time (2024-03-01, 2024-03-01T06:00:00Z; default now);\n"
	    "            --wait: follow the run, one line per task state change, and exit 0\n"
	    "            when it succeeds, 1 when it fails\n"
	    "  state     a run's state (queued, running, success, failed)\n"
	    "  runs      a DAG's runs, newest first; --state: only runs in state S\n"
	    "  pause     no new scheduled runs (running ones go on); unpause: again\n"
	    "  backfill  one run per schedule interval whose logical date is in [--from, --to]\n"
	    "            (ids backfill__LOGICAL_DATE; runs that exist already are kept);\n"
	    "            --wait: follow them and exit 0 when all succeeded\n"
	    "  check     loads each DAG file (a folder: its files, as the server walks it) as\n"
	    "            the server does (YAML parsed, Python imported by the DAG processor,\n"
	    "            with dagbag_import_timeout) and prints its DAGs\n"
	    "            (id, schedule, tasks) or its import error; runs nothing; exit 0 when\n"
	    "            all loaded, 1 when one did not: a DAG repository's CI check\n"
	    "  test      runs one DAG file once, in this process, without a server: a\n"
	    "            temporary home and store, the server's configuration (--config,\n"
	    "            default HOME/weir.yaml: queues, pools, executor, resources), real\n"
	    "            processes; one line per task state change, a summary, the log tail\n"
	    "            of each failed task; exit 0 when the run succeeds, 1 when it fails,\n"
	    "            2 for a bad file, configuration or --conf, 130 on Ctrl-C (its jobs\n"
	    "            are killed).  --keep: keep the temporary home (logs, store) and\n"
	    "            print its path; --executor local: run Slurm-routed tasks here;\n"
	    "            --conn ID=URI and --var KEY=VALUE (repeatable): connections and\n"
	    "            variables for this run, over every other source; --dags DIR: run\n"
	    "            the DAG DAG_ID of the DAG folder DIR (walked as the server does)\n"
	    "  --json    the server's JSON instead of a table\n"
	    "\n"
	    "exit status: 0 done (a followed run succeeded), 1 the run failed or the server\n"
	    "refused, 2 bad input, 3 the server is unreachable.\n",
	    out);
}

/* ---- shared helpers -------------------------------------------------------------------- */

char *cli_dag_path(const char *dag, const char *run, const char *rest)
{
	char *dag_esc = http_url_escape(dag);
	char *run_esc = run ? http_url_escape(run) : NULL;
	char *out = NULL;
	size_t n;

	if (!dag_esc || (run && !run_esc))
		goto out;
	n = strlen("/api/v1/dags/") + strlen(dag_esc) +
	    (run ? strlen("/dagRuns/") + strlen(run_esc) : 0) + (rest ? strlen(rest) : 0) + 1;
	out = malloc(n);
	if (!out)
		goto out;
	snprintf(out, n, "/api/v1/dags/%s%s%s%s", dag_esc, run ? "/dagRuns/" : "",
	         run ? run_esc : "", rest ? rest : "");
out:
	free(dag_esc);
	free(run_esc);
	return out;
}

int cli_dag_report(const struct cli_ctx *ctx, const struct cli_reply *r)
{
	const char *title = r->json ? json_string_value(json_object_get(r->json, "title")) : NULL;
	const char *detail = r->json ? json_string_value(json_object_get(r->json, "detail")) : NULL;

	/* problem+json (Airflow's errors); the rest, 401's hint included, is the common report. */
	if (r->status == 0 || r->status == 401 || (!title && !detail))
		return cli_report(ctx, r);
	if (title && detail && *detail)
		cli_error("%s: %s", title, detail);
	else
		cli_error("%s", detail && *detail ? detail : title);
	if (r->status == 400 || r->status == 422)
		return CLI_EXIT_USAGE;
	return CLI_EXIT_FAILED;
}

json_t *cli_dags_parse_conf(const char *text, struct weir_error *err)
{
	json_error_t jerr;
	json_t *conf = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);

	if (!conf) {
		weir_error_set(err, WEIR_E_INVALID,
		               "--conf: not valid JSON: %s at line %d, column %d; expected a JSON "
		               "object such as '{\"table\": \"events\"}'",
		               jerr.text, jerr.line, jerr.column);
		return NULL;
	}
	if (!json_is_object(conf)) {
		weir_error_set(err, WEIR_E_INVALID,
		               "--conf: a JSON object was expected (params by name), not %s",
		               json_is_array(conf) ? "an array" : "a single value");
		json_decref(conf);
		return NULL;
	}
	return conf;
}

const char *cli_dag_schedule_text(json_t *dag)
{
	json_t *s = json_object_get(dag, "schedule_interval");
	const char *text = NULL;

	if (json_is_string(s))
		text = json_string_value(s);
	else if (json_is_object(s))
		text = json_string_value(json_object_get(s, "value"));
	return text && *text ? text : "none";
}

const char *cli_dag_timezone(json_t *details)
{
	static char name[TZ_NAME_MAX];
	const char *text = json_string_value(json_object_get(details, "timezone"));
	size_t n;
	if (!text)
		return NULL;
	if (!strncmp(text, "Timezone('", 10) && (n = strlen(text)) > 12 &&
	    !strcmp(text + n - 2, "')") && n - 12 < sizeof name) {
		memcpy(name, text + 10, n - 12);
		name[n - 12] = '\0';
		return name;
	}
	return text;
}

int cli_dags_backfill_steps(json_t *schedule_interval, int64_t from_ms, int64_t to_ms, int64_t *out,
                            size_t max, size_t *n, struct weir_error *err)
{
	static const char *const parts[] = {"years", "months",  "days",
	                                    "hours", "minutes", "seconds"};
	static const int64_t ms[] = {0, 0, 86400000, 3600000, 60000, 1000};
	int64_t v[6];
	struct cron c;

	const char *type = json_string_value(json_object_get(schedule_interval, "__type"));

	if (!type || strcmp(type, "RelativeDelta"))
		return 0;
	for (size_t i = 0; i < 6; i++)
		v[i] = json_integer_value(json_object_get(schedule_interval, parts[i]));
	if (cron_set_delta(&c, (int32_t)(v[0] * 12 + v[1]),
	                   v[2] * ms[2] + v[3] * ms[3] + v[4] * ms[4] + v[5] * ms[5],
	                   "relativedelta", err) < 0) {
		weir_error_prefix(err, "the DAG's schedule");
		return -1;
	}
	if (to_ms < from_ms)
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "--to is before --from; expected --from D --to D with D <= D");
	*n = 0;
	for (int64_t t = from_ms; t <= to_ms; t = cron_delta_add(&c, t, 1)) {
		if (*n == max)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "the range holds more than %zu steps of the DAG's "
			                      "schedule; backfill a shorter range at a time",
			                      max);
		out[(*n)++] = t;
	}
	return 1;
}

int cli_dags_backfill_refusal(json_t *details, struct weir_error *err)
{
	const char *kind = json_string_value(json_object_get(details, "schedule_kind"));
	const char *what = NULL;

	if (kind && !strcmp(kind, "timetable"))
		what = "a custom timetable";
	else if (kind && !strcmp(kind, "events"))
		what = "an EventsTimetable";
	if (!what)
		return 0;
	return weir_error_set(err, WEIR_E_INVALID,
	                      "the DAG's schedule is %s (\"%s\"): backfill cuts cron and delta "
	                      "schedules only, not a timetable's list of runs; trigger runs "
	                      "with --logical-date instead",
	                      what, cli_dag_schedule_text(details));
}

int cli_dags_backfill_dates(const char *schedule, const char *timezone, int64_t from_ms,
                            int64_t to_ms, int64_t *out, size_t max, size_t *n,
                            struct weir_error *err)
{
	struct cron c;
	int64_t t;

	*n = 0;
	if (cron_parse(schedule, &c, err) < 0) {
		weir_error_prefix(err, "the DAG's schedule");
		return -1;
	}
	if (timezone && cron_set_zone(&c, timezone, err) < 0) {
		weir_error_prefix(err, "the DAG's timezone");
		return -1;
	}
	if (c.kind != CRON_EXPR)
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "the DAG's schedule is \"%s\": backfill needs a cron schedule "
		    "to cut the range into intervals; trigger runs with "
		    "--logical-date instead",
		    schedule);
	if (to_ms < from_ms)
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "--to is before --from; expected --from D --to D with D <= D");
	/* Fire times in [from, to]: cron_next is strictly after, so start a millisecond early. */
	for (t = cron_next(&c, from_ms - 1); t != CRON_NEVER && t <= to_ms; t = cron_next(&c, t)) {
		if (*n == max)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "the range holds more than %zu schedule intervals "
			                      "of \"%s\"; backfill a shorter range at a time",
			                      max, schedule);
		out[(*n)++] = t;
	}
	if (*n == 0)
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "no schedule interval of \"%s\" starts between --from and --to", schedule);
	return 0;
}

/* ---- argument parsing ------------------------------------------------------------------ */

static void print_json(json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
}

/* One call to an Airflow route that must succeed; *out gets the JSON (new reference).
 * Returns the exit status (printed when not 0). */
static int dag_call(struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                    json_t **out)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct cli_reply r;
	int rc = CLI_EXIT_OK;

	if (out)
		*out = NULL;
	cli_call(ctx, method, path, text, CALL_TIMEOUT_MS, &r);
	free(text);
	if (!cli_reply_ok(&r)) {
		rc = cli_dag_report(ctx, &r);
	} else if (out && !r.json) {
		cli_error("%s %s: the server's answer is not JSON", method, path);
		rc = CLI_EXIT_FAILED;
	} else if (out) {
		*out = json_incref(r.json);
	}
	cli_reply_release(&r);
	return rc;
}

/* A duration from Airflow's start_date/end_date (now when still running); -1: not started. */
static int64_t span_ms(json_t *obj, int64_t now)
{
	int64_t start = cli_json_time(obj, "start_date");
	int64_t end = cli_json_time(obj, "end_date");

	if (start < 0)
		return -1;
	if (end < 0)
		end = now;
	return end >= start ? end - start : 0;
}

static const char *tags_text(json_t *dag, char *buf, size_t size)
{
	json_t *tag;
	size_t i, len = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(dag, "tags"), i, tag)
	{
		const char *name =
		    json_is_string(tag) ? json_string_value(tag) : cli_json_str(tag, "name", "");
		int w = snprintf(buf + len, size - len, "%s%s", i ? "," : "", name);
		if (w < 0 || (size_t)w >= size - len)
			break;
		len += (size_t)w;
	}
	return buf;
}

/* ---- list, show ------------------------------------------------------------------------ */

static void print_import_errors(json_t *errors)
{
	json_t *e;
	size_t i;

	if (json_array_size(errors) == 0)
		return;
	printf("\nimport errors (these files did not load; fix them and they load without a "
	       "restart):\n");
	json_array_foreach(errors, i, e)
	{
		const char *file = cli_json_str(e, "filename", "?");
		const char *msg = cli_json_str(e, "stack_trace", "");
		const char *base = strrchr(file, '/');
		size_t msg_len = strlen(msg);

		while (msg_len > 0 && msg[msg_len - 1] == '\n')
			msg_len--;
		base = base ? base + 1 : file;
		/* The parser's message names FILE:LINE already; say the file only when not. */
		if (!strncmp(msg, file, strlen(file)) || !strncmp(msg, base, strlen(base)))
			printf("  %.*s\n", (int)msg_len, msg);
		else
			printf("  %s: %.*s\n", file, (int)msg_len, msg);
	}
}

/* GET a collection whole, a page at a time (Airflow caps `limit`, at 100 by default): *out
 * gets {key: [...all...], "total_entries": N}.  Returns the exit status. */
static int get_all(struct cli_ctx *ctx, const char *base, const char *key, json_t **out)
{
	json_t *all = json_array();
	long long total = -1;
	int rc = CLI_EXIT_OK;

	*out = NULL;
	if (!all)
		return CLI_EXIT_FAILED;
	while (total < 0 || (long long)json_array_size(all) < total) {
		char path[512];
		json_t *page = NULL;

		snprintf(path, sizeof path, "%s?limit=%d&offset=%zu", base, PAGE,
		         json_array_size(all));
		rc = dag_call(ctx, "GET", path, NULL, &page);
		if (rc != CLI_EXIT_OK)
			break;
		json_t *items = json_object_get(page, key);
		total = cli_json_int(page, "total_entries", 0);
		json_array_extend(all, items);
		json_decref(page);
		if (json_array_size(items) == 0)
			break; /* a total that lies must not loop us */
	}
	if (rc != CLI_EXIT_OK) {
		json_decref(all);
		return rc;
	}
	*out = json_pack("{sosI}", key, all, "total_entries", (json_int_t)json_array_size(all));
	return *out ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

static int dags_list(struct cli_ctx *ctx, bool as_json)
{
	static const char *const header[] = {"DAG", "SCHEDULE", "PAUSED", "TAGS", "FILE"};
	json_t *dags = NULL, *errors = NULL, *dag;
	struct cli_table t;
	size_t i;
	int rc;

	rc = get_all(ctx, "/api/v1/dags", "dags", &dags);
	if (rc != CLI_EXIT_OK)
		return rc;
	rc = get_all(ctx, "/api/v1/importErrors", "import_errors", &errors);
	if (rc != CLI_EXIT_OK)
		goto out;
	if (as_json) {
		json_t *both = json_pack("{sOsO}", "dags", json_object_get(dags, "dags"),
		                         "import_errors", json_object_get(errors, "import_errors"));
		print_json(both);
		json_decref(both);
		goto out;
	}
	if (cli_table_init(&t, 5, header) < 0) {
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	json_array_foreach(json_object_get(dags, "dags"), i, dag)
	{
		char tags[256];
		json_t *paused = json_object_get(dag, "is_paused");
		const char *row[] = {
		    cli_json_str(dag, "dag_id", "?"),    cli_dag_schedule_text(dag),
		    json_is_true(paused) ? "yes" : "no", tags_text(dag, tags, sizeof tags),
		    cli_json_str(dag, "fileloc", ""),
		};
		cli_table_add(&t, row);
	}
	if (t.n_rows == 1)
		printf("no DAGs\n");
	else
		cli_table_print(&t, stdout);
	cli_table_release(&t);
	print_import_errors(json_object_get(errors, "import_errors"));
out:
	json_decref(dags);
	json_decref(errors);
	return rc;
}

static void print_field(const char *name, const char *value)
{
	printf("  %-17s %s\n", name, value && *value ? value : "-");
}

static void print_runs_table(json_t *runs)
{
	static const char *const header[] = {"RUN",  "STATE",   "LOGICAL DATE",
	                                     "TYPE", "STARTED", "DURATION"};
	struct cli_table t;
	json_t *run;
	size_t i;
	int64_t now = clock_now_ms();

	if (cli_table_init(&t, 6, header) < 0)
		return;
	json_array_foreach(runs, i, run)
	{
		char started[32], dur[32];
		const char *row[] = {
		    cli_json_str(run, "dag_run_id", "?"),
		    cli_json_str(run, "state", "?"),
		    cli_json_str(run, "logical_date", cli_json_str(run, "execution_date", "")),
		    cli_json_str(run, "run_type", ""),
		    cli_format_datetime(cli_json_time(run, "start_date"), started, sizeof started),
		    cli_format_duration(span_ms(run, now), dur, sizeof dur),
		};
		cli_table_add(&t, row);
	}
	cli_table_print(&t, stdout);
	cli_table_release(&t);
}

static int dags_show(struct cli_ctx *ctx, const char *id, bool as_json)
{
	char *path = cli_dag_path(id, NULL, NULL);
	char *runs_path = cli_dag_path(id, NULL, "/dagRuns?order_by=-execution_date&limit=5");
	json_t *dag = NULL, *runs = NULL;
	char buf[256];
	int rc = CLI_EXIT_FAILED;

	if (!path || !runs_path)
		goto out;
	rc = dag_call(ctx, "GET", path, NULL, &dag);
	if (rc != CLI_EXIT_OK)
		goto out;
	if (as_json) {
		print_json(dag);
		goto out;
	}
	printf("dag %s\n", cli_json_str(dag, "dag_id", id));
	print_field("description:", cli_json_str(dag, "description", ""));
	print_field("schedule:", cli_dag_schedule_text(dag));
	print_field("paused:", json_is_true(json_object_get(dag, "is_paused")) ? "yes" : "no");
	print_field("tags:", tags_text(dag, buf, sizeof buf));
	print_field("file:", cli_json_str(dag, "fileloc", ""));
	if (json_object_get(dag, "max_active_runs")) {
		snprintf(buf, sizeof buf, "%lld", cli_json_int(dag, "max_active_runs", 0));
		print_field("max_active_runs:", buf);
	}
	if (json_object_get(dag, "max_active_tasks")) {
		snprintf(buf, sizeof buf, "%lld", cli_json_int(dag, "max_active_tasks", 0));
		print_field("max_active_tasks:", buf);
	}
	print_field("next run:", cli_json_str(dag, "next_dagrun", ""));
	/* The runs are extra: the DAG is shown even if they cannot be read. */
	if (dag_call(ctx, "GET", runs_path, NULL, &runs) == CLI_EXIT_OK &&
	    json_array_size(json_object_get(runs, "dag_runs")) > 0) {
		printf("\nlatest runs:\n");
		print_runs_table(json_object_get(runs, "dag_runs"));
	}
out:
	free(path);
	free(runs_path);
	json_decref(dag);
	json_decref(runs);
	return rc;
}

/* ---- following a run ------------------------------------------------------------------- */

/* What a follower has printed so far: "state/try" by TI name. */
struct run_watch {
	const char *dag;
	const char *run;
	char *run_path;
	char *tis_path;
	json_t *seen;
	json_t *last_tis;
	bool prefix_run; /* several runs: prefix lines with the run id */
};

static void print_ti_table(json_t *tis)
{
	static const char *const header[] = {"TASK", "STATE", "TRY", "STARTED", "DURATION"};
	struct cli_table t;
	json_t *ti;
	size_t i;
	int64_t now = clock_now_ms();

	if (cli_table_init(&t, 5, header) < 0)
		return;
	json_array_foreach(tis, i, ti)
	{
		char name[300], try_n[32], started[32], dur[32];
		snprintf(try_n, sizeof try_n, "%lld", cli_json_int(ti, "try_number", 0));
		const char *row[] = {
		    cli_ti_name(ti, name, sizeof name),
		    cli_ti_state(ti),
		    try_n,
		    cli_format_datetime(cli_json_time(ti, "start_date"), started, sizeof started),
		    cli_format_duration(span_ms(ti, now), dur, sizeof dur),
		};
		cli_table_add(&t, row);
	}
	cli_table_print(&t, stdout);
	cli_table_release(&t);
}

static int watch_init(struct run_watch *w, const char *dag, const char *run)
{
	memset(w, 0, sizeof *w);
	w->dag = dag;
	w->run = run;
	w->run_path = cli_dag_path(dag, run, NULL);
	w->tis_path = cli_dag_path(dag, run, "/taskInstances");
	w->seen = json_object();
	return w->run_path && w->tis_path && w->seen ? 0 : -1;
}

static void watch_release(struct run_watch *w)
{
	free(w->run_path);
	free(w->tis_path);
	json_decref(w->seen);
	json_decref(w->last_tis);
	memset(w, 0, sizeof *w);
}

/* One look at a run: prints TI changes.  Returns 1 when the run has ended (*state gets its
 * final state, borrowed from a static string), 0 when not, -1 when no answer came (r holds
 * why), or the exit status + 100 when the server refused (printed). */
static int watch_step(struct cli_ctx *ctx, struct run_watch *w, const char **state,
                      struct cli_reply *why)
{
	struct cli_reply r, rt;
	int out = 0;

	memset(why, 0, sizeof *why);
	if (cli_call(ctx, "GET", w->run_path, NULL, CALL_TIMEOUT_MS, &r) < 0) {
		*why = r;
		return -1;
	}
	if (!cli_reply_ok(&r) || !r.json) {
		out = 100 + cli_dag_report(ctx, &r);
		cli_reply_release(&r);
		return out;
	}
	if (cli_call(ctx, "GET", w->tis_path, NULL, CALL_TIMEOUT_MS, &rt) < 0) {
		cli_reply_release(&r);
		*why = rt;
		return -1;
	}
	if (cli_reply_ok(&rt) && rt.json) {
		json_t *tis = json_object_get(rt.json, "task_instances");
		cli_ti_print_changes(w->seen, tis, w->prefix_run ? w->run : NULL);
		json_decref(w->last_tis);
		w->last_tis = json_incref(tis);
	}
	cli_reply_release(&rt);
	enum dag_run_state rs;
	if (dag_run_state_from_name(cli_json_str(r.json, "state", ""), &rs) == 0 &&
	    dag_run_state_is_final(rs)) {
		*state = dag_run_state_name(rs);
		out = 1;
	}
	cli_reply_release(&r);
	return out;
}

/* Follows runs until each has ended.  Returns 0 when every one succeeded, 1 when one failed,
 * 3 when the server stayed away for UNREACHABLE_GIVE_UP_MS, or the status of a refusal. */
static int watch_runs(struct cli_ctx *ctx, struct run_watch *ws, size_t n)
{
	int64_t lost_since = -1, started = clock_mono_ms();
	size_t left = n;
	bool *done = calloc(n, sizeof *done);
	bool failed = false;
	int rc = CLI_EXIT_OK;

	if (!done)
		return CLI_EXIT_FAILED;
	while (left > 0) {
		for (size_t i = 0; i < n && left > 0; i++) {
			struct cli_reply why;
			const char *state = NULL;
			int st;

			if (done[i])
				continue;
			st = watch_step(ctx, &ws[i], &state, &why);
			if (st < 0) {
				int64_t now = clock_mono_ms();
				if (lost_since < 0) {
					lost_since = now;
					fflush(stdout);
					fprintf(
					    stderr,
					    "weir: lost contact with the weir server at %s: %s; "
					    "retrying\n",
					    ctx->server_url, cli_reply_why(ctx, &why));
				} else if (now - lost_since > UNREACHABLE_GIVE_UP_MS) {
					cli_report(ctx, &why);
					cli_reply_release(&why);
					rc = CLI_EXIT_UNREACHABLE;
					goto out;
				}
				cli_reply_release(&why);
				break;
			}
			if (lost_since >= 0) {
				fprintf(stderr, "weir: reconnected to %s\n", ctx->server_url);
				lost_since = -1;
			}
			if (st >= 100) {
				rc = st - 100;
				goto out;
			}
			if (st == 1) {
				char dur[32];
				done[i] = true;
				left--;
				enum dag_run_state rs;
				if (dag_run_state_from_name(state, &rs) == 0 &&
				    rs == DAG_RUN_FAILED)
					failed = true;
				if (n == 1) {
					putchar('\n');
					print_ti_table(ws[i].last_tis);
				}
				printf("dag run %s of %s %s in %s\n", ws[i].run, ws[i].dag, state,
				       cli_format_duration(clock_mono_ms() - started, dur,
				                           sizeof dur));
				fflush(stdout);
			}
		}
		if (left > 0)
			clock_sleep_ms(lost_since >= 0 ? 500 : POLL_MS);
	}
	rc = failed ? CLI_EXIT_FAILED : CLI_EXIT_OK;
out:
	free(done);
	return rc;
}

/* ---- trigger, state, runs, pause, backfill --------------------------------------------- */

/* POST .../dagRuns.  *run_id gets the created run's id (newly allocated).  Returns the exit
 * status; a 409 (the run exists) is returned as is, unprinted, when quiet_conflict. */
static int trigger_one(struct cli_ctx *ctx, const char *dag, json_t *conf, const char *run_id,
                       const char *logical_date, bool quiet_conflict, char **out_id)
{
	char *path = cli_dag_path(dag, NULL, "/dagRuns");
	json_t *body = json_object();
	char *text = NULL;
	struct cli_reply r = {0};
	int rc = CLI_EXIT_FAILED;

	*out_id = NULL;
	if (!path || !body)
		goto out;
	if (conf)
		json_object_set(body, "conf", conf);
	if (run_id)
		json_object_set_new(body, "dag_run_id", json_string(run_id));
	if (logical_date)
		json_object_set_new(body, "logical_date", json_string(logical_date));
	text = json_dumps(body, JSON_COMPACT);
	if (!text)
		goto out;
	cli_call(ctx, "POST", path, text, CALL_TIMEOUT_MS, &r);
	if (r.status == 409 && quiet_conflict) {
		rc = 409;
		goto out;
	}
	if (!cli_reply_ok(&r)) {
		rc = cli_dag_report(ctx, &r);
		goto out;
	}
	const char *id = cli_json_str(r.json, "dag_run_id", NULL);
	if (!id) {
		cli_error("POST %s: the answer names no dag_run_id", path);
		goto out;
	}
	*out_id = strdup(id);
	rc = *out_id ? CLI_EXIT_OK : CLI_EXIT_FAILED;
out:
	cli_reply_release(&r);
	free(text);
	free(path);
	json_decref(body);
	return rc;
}

/* --logical-date: any form schedule_parse_time takes, sent as Airflow's ISO form. */
static int parse_date_flag(const char *text, const char *flag, int64_t *ms, char *iso, size_t size)
{
	struct weir_error err = {0};

	if (schedule_parse_time(text, flag, ms, &err) < 0) {
		cli_error("%s", err.msg);
		return -1;
	}
	if (iso)
		schedule_format_ts(*ms, iso, size);
	return 0;
}

static int dags_trigger(struct cli_ctx *ctx, const char *dag, const char *conf_text,
                        const char *run_id, const char *date_text, bool wait)
{
	struct weir_error err = {0};
	json_t *conf = NULL;
	char iso[64];
	char *id = NULL;
	int64_t ms;
	int rc;

	if (conf_text) {
		conf = cli_dags_parse_conf(conf_text, &err);
		if (!conf) {
			cli_error("%s", err.msg);
			return CLI_EXIT_USAGE;
		}
	}
	if (date_text && parse_date_flag(date_text, "--logical-date", &ms, iso, sizeof iso) < 0) {
		json_decref(conf);
		return CLI_EXIT_USAGE;
	}
	rc = trigger_one(ctx, dag, conf, run_id, date_text ? iso : NULL, false, &id);
	json_decref(conf);
	if (rc != CLI_EXIT_OK)
		return rc;
	printf("dag run %s triggered\n", id);
	fflush(stdout);
	if (wait) {
		struct run_watch w;
		if (watch_init(&w, dag, id) < 0)
			rc = CLI_EXIT_FAILED;
		else
			rc = watch_runs(ctx, &w, 1);
		watch_release(&w);
	}
	free(id);
	return rc;
}

static int dags_state(struct cli_ctx *ctx, const char *dag, const char *run)
{
	char *path = cli_dag_path(dag, run, NULL);
	json_t *r = NULL;
	int rc = CLI_EXIT_FAILED;

	if (!path)
		return rc;
	rc = dag_call(ctx, "GET", path, NULL, &r);
	if (rc == CLI_EXIT_OK)
		printf("%s\n", cli_json_str(r, "state", "none"));
	json_decref(r);
	free(path);
	return rc;
}

static int dags_runs(struct cli_ctx *ctx, const char *dag, const char *state, const char *limit,
                     bool as_json)
{
	struct weir_error err = {0};
	long long n = 100;
	char rest[256];
	char *state_esc = state ? http_url_escape(state) : NULL;
	char *path = NULL;
	json_t *runs = NULL;
	int rc = CLI_EXIT_FAILED;

	if (limit && cli_parse_int(limit, "--limit", 1, 100000, &n, &err) < 0) {
		cli_error("%s", err.msg);
		rc = CLI_EXIT_USAGE;
		goto out;
	}
	if (state && !state_esc)
		goto out;
	snprintf(rest, sizeof rest, "/dagRuns?order_by=-execution_date&limit=%lld%s%s", n,
	         state ? "&state=" : "", state ? state_esc : "");
	path = cli_dag_path(dag, NULL, rest);
	if (!path)
		goto out;
	rc = dag_call(ctx, "GET", path, NULL, &runs);
	if (rc != CLI_EXIT_OK)
		goto out;
	if (as_json)
		print_json(runs);
	else if (json_array_size(json_object_get(runs, "dag_runs")) == 0)
		printf("no runs of %s%s%s\n", dag, state ? " in state " : "", state ? state : "");
	else
		print_runs_table(json_object_get(runs, "dag_runs"));
out:
	free(state_esc);
	free(path);
	json_decref(runs);
	return rc;
}

static int dags_pause(struct cli_ctx *ctx, const char *dag, bool pause)
{
	char *path = cli_dag_path(dag, NULL, NULL);
	json_t *body = json_pack("{sb}", "is_paused", pause);
	json_t *r = NULL;
	int rc = CLI_EXIT_FAILED;

	if (path && body)
		rc = dag_call(ctx, "PATCH", path, body, &r);
	if (rc == CLI_EXIT_OK)
		printf("dag %s %s\n", dag,
		       json_is_false(json_object_get(r, "is_paused")) ? "unpaused" : "paused");
	json_decref(r);
	json_decref(body);
	free(path);
	return rc;
}

static int dags_backfill(struct cli_ctx *ctx, const char *dag, const char *from, const char *to,
                         const char *conf_text, bool wait)
{
	struct weir_error err = {0};
	int64_t from_ms, to_ms, *dates = NULL;
	size_t n = 0, n_runs = 0;
	char *path = NULL;
	json_t *info = NULL, *conf = NULL;
	struct run_watch *ws = NULL;
	int rc = CLI_EXIT_USAGE;

	if (!from || !to) {
		cli_error("backfill needs --from D and --to D");
		cli_dags_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (parse_date_flag(from, "--from", &from_ms, NULL, 0) < 0 ||
	    parse_date_flag(to, "--to", &to_ms, NULL, 0) < 0)
		return CLI_EXIT_USAGE;
	if (conf_text) {
		conf = cli_dags_parse_conf(conf_text, &err);
		if (!conf) {
			cli_error("%s", err.msg);
			return CLI_EXIT_USAGE;
		}
	}
	path = cli_dag_path(dag, NULL, "/details");
	dates = calloc(BACKFILL_MAX_RUNS, sizeof *dates);
	ws = calloc(BACKFILL_MAX_RUNS, sizeof *ws);
	if (!path || !dates || !ws) {
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	rc = dag_call(ctx, "GET", path, NULL, &info);
	if (rc != CLI_EXIT_OK)
		goto out;
	if (cli_dags_backfill_refusal(info, &err) < 0) {
		cli_error("%s: %s", dag, err.msg);
		rc = CLI_EXIT_USAGE;
		goto out;
	}
	const char *schedule = cli_dag_schedule_text(info);
	int steps = cli_dags_backfill_steps(json_object_get(info, "schedule_interval"), from_ms,
	                                    to_ms, dates, BACKFILL_MAX_RUNS, &n, &err);
	if (steps < 0 ||
	    (steps == 0 && cli_dags_backfill_dates(schedule, cli_dag_timezone(info), from_ms, to_ms,
	                                           dates, BACKFILL_MAX_RUNS, &n, &err) < 0)) {
		cli_error("%s: %s", dag, err.msg);
		rc = CLI_EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char iso[64], run_id[96], *id = NULL;

		schedule_format_ts(dates[i], iso, sizeof iso);
		snprintf(run_id, sizeof run_id, "backfill__%s", iso);
		rc = trigger_one(ctx, dag, conf, run_id, iso, true, &id);
		if (rc == 409) {
			printf("dag run %s exists already: kept\n", run_id);
			id = strdup(run_id);
			if (!id) {
				rc = CLI_EXIT_FAILED;
				goto out;
			}
		} else if (rc != CLI_EXIT_OK) {
			goto out;
		} else {
			printf("dag run %s triggered\n", id);
		}
		fflush(stdout);
		if (watch_init(&ws[n_runs], dag, id) < 0) {
			free(id);
			rc = CLI_EXIT_FAILED;
			goto out;
		}
		/* The watch borrows id; it is freed with the watch below. */
		ws[n_runs].prefix_run = true;
		n_runs++;
	}
	rc = CLI_EXIT_OK;
	if (wait)
		rc = watch_runs(ctx, ws, n_runs);
out:
	for (size_t i = 0; ws && i < n_runs; i++) {
		free((char *)ws[i].run);
		watch_release(&ws[i]);
	}
	free(ws);
	free(dates);
	free(path);
	json_decref(info);
	json_decref(conf);
	return rc;
}

/* `dags test` and `tasks test` run in this process (cli/cli_dag_test.h): no
 * server, no HTTP client. */
int cli_dag_test_main(int argc, char **argv, const struct cli_globals *g0, bool one_task,
                      void (*usage)(FILE *))
{
	struct cli_globals g = *g0;
	struct weir_error err = {0};
	const char *pos[3] = {NULL, NULL, NULL};
	const char *conf = NULL, *date = NULL, *config = NULL, *executor = NULL, *conn = NULL;
	const char *var = NULL, *dags_dir = NULL;
	bool keep = false;
	size_t n_pos = 0;
	json_t *conns = json_array(), *vars = json_array();
	struct cli_opt opts[] = {
	    {"--conf", &conf, NULL, NULL},         {"--logical-date", &date, NULL, NULL},
	    {"--keep", NULL, &keep, NULL},         {"--config", &config, NULL, NULL},
	    {"--executor", &executor, NULL, NULL}, {"--conn", &conn, NULL, conns},
	    {"--var", &var, NULL, vars},           {"--dags", &dags_dir, NULL, NULL}};
	struct dag_test_opts o = {0};
	int rc = CLI_EXIT_USAGE;

	if (!conns || !vars)
		goto out;
	rc = cli_parse_args(argc, argv, opts, sizeof opts / sizeof opts[0], pos, one_task ? 3 : 1,
	                    &n_pos, &g, usage);
	if (rc != 0) {
		rc = rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
		goto out;
	}
	rc = CLI_EXIT_USAGE;
	if (n_pos < (one_task ? 2u : 1u)) {
		cli_error(one_task ? "tasks test needs a DAG (id or file) and a task id"
		                   : "dags test needs a DAG file");
		usage(stderr);
		goto out;
	}
	if (one_task && n_pos == 3 && date) {
		cli_error("tasks test: the logical date given twice (%s and --logical-date %s)",
		          pos[2], date);
		goto out;
	}
	if (executor && strcmp(executor, "local")) {
		cli_error("--executor \"%s\": expected local (Slurm-routed tasks run here)",
		          executor);
		goto out;
	}
	o.file = pos[0];
	o.task_id = one_task ? pos[1] : NULL;
	o.dags_dir = dags_dir;
	o.logical_date = one_task && n_pos == 3 ? pos[2] : date;
	o.keep = keep;
	o.config = config;
	o.conns = conns;
	o.vars = vars;
	o.home = g.home && *g.home ? g.home : getenv("WEIR_HOME");
	o.executor_local = executor != NULL;
	if (o.home && !*o.home)
		o.home = NULL;
	if (conf) {
		o.conf = cli_dags_parse_conf(conf, &err);
		if (!o.conf) {
			cli_error("%s", err.msg);
			goto out;
		}
	}
	rc = dag_test_run(&o);
	json_decref(o.conf);
out:
	json_decref(conns);
	json_decref(vars);
	return rc;
}

/* `dags check [--config FILE] FILE...` runs in this process too: it reads
 * the files, not a server. */
static int dags_check(int argc, char **argv, const char *home)
{
	const char *config = NULL;
	const char **files = calloc((size_t)argc + 1, sizeof *files);
	size_t n = 0;
	int rc;

	if (!files)
		return CLI_EXIT_FAILED;
	for (int i = 0; i < argc; i++) {
		if (cli_flag_is_help(argv[i])) {
			free(files);
			cli_dags_usage(stdout);
			return CLI_EXIT_OK;
		}
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			config = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("dags check: unknown flag %s", argv[i]);
			free(files);
			cli_dags_usage(stderr);
			return CLI_EXIT_USAGE;
		} else {
			files[n++] = argv[i];
		}
	}
	if (!n) {
		cli_error("dags check needs a DAG file");
		free(files);
		cli_dags_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	rc = dag_check_run(files, n, home && *home ? home : getenv("WEIR_HOME"), config);
	free(files);
	return rc;
}

/* ---- dispatch -------------------------------------------------------------------------- */

int cli_dags_main(int argc, char **argv, const struct cli_globals *g0)
{
	struct cli_globals g = *g0;
	struct weir_error err = {0};
	struct cli_ctx ctx = {0};
	const char *pos[2] = {NULL, NULL};
	const char *conf = NULL, *run_id = NULL, *date = NULL, *from = NULL, *to = NULL;
	const char *state = NULL, *limit = NULL;
	bool wait = false, as_json = false;
	size_t n_pos = 0, want = 1;
	const char *sub;
	int rc;

	if (argc < 2 || cli_flag_is_help(argv[1])) {
		cli_dags_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	sub = argv[1];
	if (!strcmp(sub, "check"))
		return dags_check(argc - 2, argv + 2, g.home);
	if (!strcmp(sub, "test"))
		return cli_dag_test_main(argc - 1, argv + 1, &g, false, cli_dags_usage);
	struct cli_opt trigger_opts[] = {{"--conf", &conf, NULL, NULL},
	                                 {"--run-id", &run_id, NULL, NULL},
	                                 {"--logical-date", &date, NULL, NULL},
	                                 {"--wait", NULL, &wait, NULL}};
	/* The flags each subcommand takes. */
	struct cli_opt *use = NULL;
	size_t n_use = 0;
	struct cli_opt list_opts[] = {{"--json", NULL, &as_json, NULL}};
	struct cli_opt bf_opts[] = {{"--from", &from, NULL, NULL},
	                            {"--to", &to, NULL, NULL},
	                            {"--conf", &conf, NULL, NULL},
	                            {"--wait", NULL, &wait, NULL}};
	struct cli_opt runs_opts[] = {{"--state", &state, NULL, NULL},
	                              {"--limit", &limit, NULL, NULL},
	                              {"--json", NULL, &as_json, NULL}};

	if (!strcmp(sub, "list")) {
		want = 0;
		use = list_opts;
		n_use = 1;
	} else if (!strcmp(sub, "show")) {
		use = list_opts;
		n_use = 1;
	} else if (!strcmp(sub, "trigger")) {
		use = trigger_opts;
		n_use = 4;
	} else if (!strcmp(sub, "state")) {
		want = 2;
	} else if (!strcmp(sub, "runs")) {
		use = runs_opts;
		n_use = 3;
	} else if (!strcmp(sub, "pause") || !strcmp(sub, "unpause")) {
		/* no flags */
	} else if (!strcmp(sub, "backfill")) {
		use = bf_opts;
		n_use = 4;
	} else {
		cli_error("no command \"dags %s\"", sub);
		cli_dags_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	rc = cli_parse_args(argc - 1, argv + 1, use, n_use, pos, want, &n_pos, &g, cli_dags_usage);
	if (rc != 0)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (n_pos < want) {
		cli_error("dags %s needs %s", sub,
		          want == 2 ? "a DAG id and a run id" : "a DAG id");
		cli_dags_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (cli_ctx_init(&ctx, &g, &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_FAILED;
	}
	if (!strcmp(sub, "list"))
		rc = dags_list(&ctx, as_json);
	else if (!strcmp(sub, "show"))
		rc = dags_show(&ctx, pos[0], as_json);
	else if (!strcmp(sub, "trigger"))
		rc = dags_trigger(&ctx, pos[0], conf, run_id, date, wait);
	else if (!strcmp(sub, "state"))
		rc = dags_state(&ctx, pos[0], pos[1]);
	else if (!strcmp(sub, "runs"))
		rc = dags_runs(&ctx, pos[0], state, limit, as_json);
	else if (!strcmp(sub, "pause") || !strcmp(sub, "unpause"))
		rc = dags_pause(&ctx, pos[0], !strcmp(sub, "pause"));
	else
		rc = dags_backfill(&ctx, pos[0], from, to, conf, wait);
	cli_ctx_release(&ctx);
	return rc;
}
