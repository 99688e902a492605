/* cli_jobs.c: `weir jobs list|show|kill`: the job table, one job in
 * detail (its tasks and events), and killing a job. */
#include "cli/cli_jobs.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/str.h"

#define KILL_WAIT_MS (60 * 1000)

void cli_jobs_usage(FILE *out)
{
	fputs("usage: weir jobs list [--state S] [--limit N] [--json]\n"
	      "       weir jobs show ID [--json]\n"
	      "       weir jobs kill ID [--no-wait]\n"
	      "\n"
	      "  list    the jobs, newest first: id, name, state, attempt, submitted, duration,\n"
	      "          reason.  --state: only jobs in state S (queued, starting, running,\n"
	      "          succeeded, failed, killed); --limit: at most N jobs\n"
	      "  show    one job: its fields, its current attempt's tasks (host:port, pid, gpus,\n"
	      "          exit, peak memory, cpu time) and its events\n"
	      "  kill    kills the job and all its tasks, then waits (at most 60 s) until it has\n"
	      "          ended; --no-wait: return once the server took the request\n"
	      "  --json  the server's JSON instead of a table\n",
	      out);
}

static int usage_error(const char *fmt, const char *what)
{
	fflush(stdout);
	fputs("weir: error: ", stderr);
	fprintf(stderr, fmt, what);
	fputc('\n', stderr);
	cli_jobs_usage(stderr);
	return CLI_EXIT_USAGE;
}

static void print_json(json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
}

static int parse_job_id(const char *text, long long *id)
{
	struct weir_error err;
	if (cli_parse_int(text, "job id", 1, 0x7fffffffffffffffLL, id, &err) < 0) {
		cli_error("%s", err.msg);
		cli_jobs_usage(stderr);
		return -1;
	}
	return 0;
}

static int jobs_list(struct cli_ctx *ctx, const char *state, const char *limit, bool as_json)
{
	static const char *const header[] = {"ID",        "NAME",     "STATE", "ATTEMPT",
	                                     "SUBMITTED", "DURATION", "REASON"};
	char path[512];
	char *state_esc = NULL;
	json_t *reply = NULL, *job;
	struct cli_table t;
	size_t i;
	int rc;
	int64_t now = clock_now_ms();

	if (state) {
		state_esc = http_url_escape(state);
		if (!state_esc)
			return CLI_EXIT_FAILED;
	}
	snprintf(path, sizeof path, "/api/v1/jobs%s%s%s%s%s", state || limit ? "?" : "",
	         state ? "state=" : "", state ? state_esc : "", state && limit ? "&" : "",
	         limit ? "limit=" : "");
	if (limit)
		str_append(path, sizeof path, limit);
	free(state_esc);
	rc = cli_get_json(ctx, path, &reply);
	if (rc != CLI_EXIT_OK)
		return rc;
	if (as_json) {
		print_json(reply);
		json_decref(reply);
		return CLI_EXIT_OK;
	}
	if (cli_table_init(&t, 7, header) < 0) {
		json_decref(reply);
		return CLI_EXIT_FAILED;
	}
	json_array_foreach(json_object_get(reply, "jobs"), i, job)
	{
		char id[32], attempt[32], submitted[32], dur[32];
		snprintf(id, sizeof id, "%lld", cli_json_int(job, "id", 0));
		snprintf(attempt, sizeof attempt, "%lld", cli_json_int(job, "attempt", 0));
		const char *row[] = {
		    id,
		    cli_json_str(job, "name", ""),
		    cli_json_str(job, "state", "?"),
		    attempt,
		    cli_format_datetime(cli_json_time(job, "submitted_at"), submitted,
		                        sizeof submitted),
		    cli_format_duration(cli_object_duration_ms(job, now), dur, sizeof dur),
		    cli_json_str(job, "reason", ""),
		};
		cli_table_add(&t, row);
	}
	if (t.n_rows == 1)
		printf("no jobs%s%s\n", state ? " in state " : "", state ? state : "");
	else
		cli_table_print(&t, stdout);
	cli_table_release(&t);
	json_decref(reply);
	return CLI_EXIT_OK;
}

static void print_field(const char *name, const char *value)
{
	printf("  %-11s %s\n", name, value && *value ? value : "-");
}

static void print_tasks(json_t *tasks, int64_t now)
{
	static const char *const header[] = {"TASK", "STATE",    "HOST:PORT", "PID",      "GPUS",
	                                     "EXIT", "PEAK MEM", "CPU TIME",  "DURATION", "REASON"};
	struct cli_table t;
	json_t *task;
	size_t i;

	if (cli_table_init(&t, 10, header) < 0)
		return;
	json_array_foreach(tasks, i, task)
	{
		char name[128], hostport[300], pid[32], code[32], mem[32], cpu[32], dur[32];
		const char *host = cli_json_str(task, "host", NULL);
		long long port = cli_json_int(task, "port", -1);
		long long p = cli_json_int(task, "pid", -1);

		if (host && port > 0)
			snprintf(hostport, sizeof hostport, "%s:%lld", host, port);
		else
			snprintf(hostport, sizeof hostport, "%s", host ? host : "-");
		snprintf(pid, sizeof pid, p > 0 ? "%lld" : "-", p);
		cli_task_exit_text(task, code, sizeof code);
		const char *gpus = cli_json_str(task, "gpus", "");
		const char *row[] = {
		    cli_task_name(task, name, sizeof name),
		    cli_json_str(task, "state", "?"),
		    hostport,
		    pid,
		    *gpus ? gpus : "-",
		    code,
		    cli_format_bytes(cli_json_int(task, "peak_memory_bytes", -1), mem, sizeof mem),
		    cli_format_duration(cli_json_int(task, "cpu_time_ms", -1), cpu, sizeof cpu),
		    cli_format_duration(cli_object_duration_ms(task, now), dur, sizeof dur),
		    cli_json_str(task, "reason", ""),
		};
		cli_table_add(&t, row);
	}
	cli_table_print(&t, stdout);
	cli_table_release(&t);
}

static void print_events(json_t *events)
{
	json_t *ev;
	size_t i;

	json_array_foreach(events, i, ev)
	{
		char when[32];
		printf("  %s  %-12s %s\n",
		       cli_format_datetime(cli_json_time(ev, "time"), when, sizeof when),
		       cli_json_str(ev, "kind", ""), cli_json_str(ev, "message", ""));
	}
}

static int jobs_show(struct cli_ctx *ctx, long long id, bool as_json)
{
	char path[96], buf[64], attempt[64];
	json_t *job = NULL;
	struct cli_reply ev;
	int64_t now = clock_now_ms();
	int rc;

	snprintf(path, sizeof path, "/api/v1/jobs/%lld", id);
	rc = cli_get_json(ctx, path, &job);
	if (rc != CLI_EXIT_OK)
		return rc;
	/* Events are extra: a server without them still shows the job. */
	snprintf(path, sizeof path, "/api/v1/jobs/%lld/events", id);
	cli_call(ctx, "GET", path, NULL, 30000, &ev);
	json_t *events = cli_reply_ok(&ev) ? json_object_get(ev.json, "events") : NULL;
	if (as_json) {
		if (events)
			json_object_set(job, "events", events);
		print_json(job);
		goto out;
	}
	printf("job %lld: %s\n", id, cli_json_str(job, "name", ""));
	print_field("state:", cli_json_str(job, "state", "?"));
	print_field("reason:", cli_json_str(job, "reason", ""));
	print_field("framework:", cli_json_str(job, "framework", ""));
	snprintf(buf, sizeof buf, "%lld", cli_json_int(job, "priority", 0));
	print_field("priority:", buf);
	snprintf(attempt, sizeof attempt, "%lld of at most %lld", cli_json_int(job, "attempt", 0),
	         cli_json_int(job, "max_restarts", 0) + 1);
	print_field("attempt:", attempt);
	long long ec = cli_json_int(job, "exit_code", -1);
	snprintf(buf, sizeof buf, ec >= 0 ? "%lld" : "-", ec);
	print_field("exit code:", buf);
	print_field("submitted:",
	            cli_format_datetime(cli_json_time(job, "submitted_at"), buf, sizeof buf));
	print_field("started:",
	            cli_format_datetime(cli_json_time(job, "started_at"), buf, sizeof buf));
	print_field("ended:", cli_format_datetime(cli_json_time(job, "ended_at"), buf, sizeof buf));
	print_field("duration:",
	            cli_format_duration(cli_object_duration_ms(job, now), buf, sizeof buf));
	json_t *tasks = json_object_get(job, "tasks");
	if (json_array_size(tasks) > 0) {
		printf("\ntasks (attempt %lld):\n", cli_json_int(job, "attempt", 0));
		print_tasks(tasks, now);
	}
	if (json_array_size(events) > 0) {
		printf("\nevents:\n");
		print_events(events);
	}
out:
	cli_reply_release(&ev);
	json_decref(job);
	return CLI_EXIT_OK;
}

static int jobs_kill(struct cli_ctx *ctx, long long id, bool wait)
{
	char path[96];
	struct cli_reply r;
	int rc;

	snprintf(path, sizeof path, "/api/v1/jobs/%lld", id);
	if (cli_call(ctx, "DELETE", path, NULL, 30000, &r) < 0 || !cli_reply_ok(&r)) {
		rc = cli_report(ctx, &r);
		cli_reply_release(&r);
		return rc;
	}
	if (!wait) {
		printf("job %lld being killed\n", id);
		cli_reply_release(&r);
		return CLI_EXIT_OK;
	}
	cli_reply_release(&r);
	/* The job's state turns final at once; its processes are gone only
	 * when every task has ended, which is what a caller of kill waits for. */
	int64_t deadline = clock_mono_ms() + KILL_WAIT_MS;
	while (clock_mono_ms() < deadline) {
		struct timespec ts = {0, 100 * 1000000L};
		if (cli_call(ctx, "GET", path, NULL, 10000, &r) == 0 && cli_reply_ok(&r)) {
			const char *state = cli_json_str(r.json, "state", "");
			if (cli_job_state_is_final(state) && cli_job_tasks_final(r.json)) {
				const char *reason = cli_json_str(r.json, "reason", "");
				printf("job %lld %s%s%s\n", id, state, *reason ? ": " : "", reason);
				cli_reply_release(&r);
				return CLI_EXIT_OK;
			}
		}
		cli_reply_release(&r);
		nanosleep(&ts, NULL);
	}
	printf("job %lld being killed (its tasks have not all ended after %d s; see "
	       "`weir jobs show %lld`)\n",
	       id, KILL_WAIT_MS / 1000, id);
	return CLI_EXIT_FAILED;
}

int cli_jobs_main(int argc, char **argv, const struct cli_globals *g0)
{
	struct cli_globals g = *g0;
	struct weir_error err = {0};
	struct cli_ctx ctx = {0};
	const char *sub, *state = NULL, *limit = NULL, *id_text = NULL;
	bool as_json = false, no_wait = false;
	long long id = 0, n;
	int rc;

	if (argc < 2 || cli_flag_is_help(argv[1])) {
		cli_jobs_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	sub = argv[1];
	if (strcmp(sub, "list") && strcmp(sub, "show") && strcmp(sub, "kill"))
		return usage_error("unknown jobs command \"%s\"", sub);
	for (int i = 2; i < argc; i++) {
		const char *arg = argv[i];
		int r = 0;

		if (cli_flag_is_help(arg)) {
			cli_jobs_usage(stdout);
			return CLI_EXIT_OK;
		}
		if ((r = cli_flag_global(argc, argv, &i, &g, &err)) == 0 && !strcmp(sub, "list")) {
			if ((r = cli_flag_value(argc, argv, &i, "--state", &state, &err)) == 0)
				r = cli_flag_value(argc, argv, &i, "--limit", &limit, &err);
		}
		if (r < 0) {
			cli_error("%s", err.msg);
			cli_jobs_usage(stderr);
			return CLI_EXIT_USAGE;
		}
		if (r > 0)
			continue;
		if (!strcmp(arg, "--json") && strcmp(sub, "kill") != 0)
			as_json = true;
		else if (!strcmp(arg, "--no-wait") && !strcmp(sub, "kill"))
			no_wait = true;
		else if (arg[0] == '-' && arg[1] != '\0')
			return usage_error("unknown flag %s", arg);
		else if (!strcmp(sub, "list") || id_text)
			return usage_error("unexpected argument \"%s\"", arg);
		else
			id_text = arg;
	}
	if (strcmp(sub, "list") != 0) {
		if (!id_text)
			return usage_error("jobs %s needs a job id", sub);
		if (parse_job_id(id_text, &id) < 0)
			return CLI_EXIT_USAGE;
	}
	if (limit && cli_parse_int(limit, "--limit", 1, 1000000, &n, &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	if (cli_ctx_init(&ctx, &g, &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_FAILED;
	}
	if (!strcmp(sub, "list"))
		rc = jobs_list(&ctx, state, limit, as_json);
	else if (!strcmp(sub, "show"))
		rc = jobs_show(&ctx, id, as_json);
	else
		rc = jobs_kill(&ctx, id, !no_wait);
	cli_ctx_release(&ctx);
	return rc;
}
