/* cli_submit.c: `weir submit`: parse locally, POST, follow to the end.
 *
 * Following is a long poll of GET
 * /api/v1/jobs/{id}?wait=1&since=VERSION&gather=100&events=1&events_from=N
 * (every 150 ms against a server without versions), starting from the
 * version and the events of the submission's answer: the server answers
 * 100 ms after the first change it saw, or at once when the job ended, so
 * that a short job is one answer.  Each answer carries the current
 * attempt's tasks and the job's events after the N the follower already
 * has (all of them from a server that ignores events_from; GET .../events
 * against one that leaves them out), and cli_watch turns successive
 * answers, with the events for what happened between two of them, into one
 * line per change.  The answer that says the job ended has all the summary
 * needs: no request follows it.  SIGINT and SIGTERM stay blocked and are
 * taken with sigtimedwait() while sleeping between polls, so that an HTTP
 * call is never cut in half by a signal and the job is killed exactly once.
 */
#include "cli/cli_submit.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli_watch.h"
#include "lib/clock.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "model/job_spec.h"
#include "model/job_spec_edit.h"
#include "model/states.h"
#include "model/tony.h"

#define POLL_MS 150
/* How long the server may gather a job's changes before it answers a
 * follow (GATHER_MS after the first; an end answers at once): the lines
 * still come within a blink, and a short job costs one wake-up. */
#define GATHER_MS 100
/* A server restart (even kill -9 and start) is survivable; a server gone
 * for this long is not coming back on its own. */
#define UNREACHABLE_GIVE_UP_MS (10 * 60 * 1000)

void cli_submit_usage(FILE *out)
{
	fputs("usage: weir submit [--detach] [--name NAME] [--priority P] SPEC.yaml|SPEC.json\n"
	      "       weir submit [--detach] [--name NAME] [--priority P] --conf_file tony.xml\n"
	      "                   [--src_dir DIR] [--executes FILE] [--task_params \"ARGS\"]\n"
	      "                   [--python_venv venv.zip] [--python_binary_path venv/bin/python]\n"
	      "                   [--shell_env K=V]... [--container_env K=V]... [--conf k=v]...\n"
	      "\n"
	      "Submits a job and follows it: one line per task state change, then a summary.\n"
	      "Exit status: 0 the job succeeded, 1 it failed or was killed, 2 bad input,\n"
	      "3 the server is unreachable.  Ctrl-C kills the job (twice: stop waiting).\n"
	      "\n"
	      "  --detach         print the job id and exit 0 right after submission\n"
	      "  --name NAME      the job's name (overrides the spec's)\n"
	      "  --priority P     higher runs first (overrides the spec's)\n"
	      "  --server URL     the server (default $WEIR_SERVER, else " CLI_DEFAULT_SERVER ")\n"
	      "  --home DIR       where the token file is (default $WEIR_HOME, else ~/.weir)\n",
	      out);
}

int cli_submit_split(int argc, char **argv, struct cli_submit_args *a, struct weir_error *err)
{
	char **tony = a->tony_argv;

	a->detach = false;
	a->help = false;
	a->name = NULL;
	a->priority = NULL;
	a->spec_file = NULL;
	a->tony_argc = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		int r;

		if (cli_flag_is(arg, "--detach", "-d")) {
			a->detach = true;
			continue;
		}
		if (cli_flag_is_help(arg)) {
			a->help = true;
			continue;
		}
		if ((r = cli_flag_global(argc, argv, &i, &a->globals, err)) != 0 ||
		    (r = cli_flag_value(argc, argv, &i, "--name", &a->name, err)) != 0 ||
		    (r = cli_flag_value(argc, argv, &i, "--priority", &a->priority, err)) != 0) {
			if (r < 0)
				return -1;
			continue;
		}
		if ((r = submit_flag_arity(argc, argv, i)) > 0) {
			/* TonY's, passed on with its value for the model layer's
			 * submit-flags parser to judge. */
			for (int k = 0; k < r; k++)
				tony[a->tony_argc++] = argv[i + k];
			i += r - 1;
			continue;
		}
		if (arg[0] == '-' && arg[1] != '\0')
			return weir_error_set(err, WEIR_E_INVALID, "unknown flag %s", arg);
		if (a->spec_file)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "more than one spec file: \"%s\" and \"%s\"",
			                      a->spec_file, arg);
		a->spec_file = arg;
	}
	tony[a->tony_argc] = NULL;
	if (a->help)
		return 0;
	if (a->spec_file && a->tony_argc > 0)
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "give either a spec file (%s) or TonY's flags (%s ...), not both", a->spec_file,
		    tony[0]);
	if (!a->spec_file && a->tony_argc == 0)
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "nothing to submit: give a spec file or --conf_file tony.xml");
	return 0;
}

/* "configuration: tony.xml, then CONF_DIR/tony-site.xml, then --conf": the
 * files TonY's lookup read, in the order they were layered. */
static void print_conf_read(const struct strvec *read, const struct cli_submit_args *a)
{
	bool conf = false;
	for (int i = 0; i < a->tony_argc; i++)
		if (!strncmp(a->tony_argv[i], "--conf", 6) &&
		    (a->tony_argv[i][6] == '\0' || a->tony_argv[i][6] == '='))
			conf = true;
	fputs("configuration:", stderr);
	for (size_t i = 0; i < read->n; i++)
		fprintf(stderr, "%s %s", i ? ", then" : "", read->v[i]);
	if (read->n == 0)
		fputs(" no file", stderr);
	fputs(conf ? ", then --conf\n" : "\n", stderr);
}

/* Loads the spec from the file or TonY's flags; prints TonY's warnings. */
static struct job_spec *load_spec(const struct cli_submit_args *a, struct weir_error *err)
{
	struct job_spec *spec = NULL;

	if (a->spec_file) {
		spec = job_spec_parse_file(a->spec_file, err);
	} else {
		struct strvec warnings = STRVEC_INIT, read = STRVEC_INIT;
		const char *dir = getenv("TONY_CONF_DIR");
		struct tony_lookup lookup = {dir ? dir : TONY_DEFAULT_CONF_DIR, &read};
		spec = submit_flags_load(a->tony_argc, a->tony_argv, &lookup, &warnings, err);
		fflush(stdout);
		/* stderr, so that stdout still starts with "job N submitted" */
		if (spec)
			print_conf_read(&read, a);
		for (size_t i = 0; i < warnings.n; i++)
			fprintf(stderr, "warning: %s\n", warnings.v[i]);
		strvec_release(&warnings);
		strvec_release(&read);
	}
	if (!spec)
		return NULL;
	if (a->name && job_spec_set_string(&spec->name, a->name, err) < 0)
		goto fail;
	if (a->priority) {
		long long p;
		if (cli_parse_int(a->priority, "--priority", -JOB_SPEC_MAX_PRIORITY,
		                  JOB_SPEC_MAX_PRIORITY, &p, err) < 0)
			goto fail;
		spec->priority = (int)p;
	}
	if ((a->name || a->priority) && job_spec_validate(spec, err) < 0)
		goto fail;
	return spec;
fail:
	job_spec_destroy(spec);
	return NULL;
}

void cli_signals_block(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* Sleeps up to ms; returns the signal taken meanwhile, or 0. */
static int sleep_for_signal(long ms)
{
	sigset_t set;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	do {
		sig = sigtimedwait(&set, NULL, &ts);
	} while (sig < 0 && errno == EINTR);
	return sig > 0 ? sig : 0;
}

static void print_line(const char *line, void *arg)
{
	char clock[32];
	(void)arg;
	printf("%s %s\n", cli_format_clock(clock_now_ms(), clock, sizeof clock), line);
}

/* The table that ends `weir submit`, and the job's result line. */
static void print_summary(json_t *job)
{
	static const char *const header[] = {"TASK",     "STATE",    "EXIT",
	                                     "DURATION", "PEAK MEM", "REASON"};
	struct cli_table t;
	json_t *tasks = json_object_get(job, "tasks");
	json_t *task;
	size_t i;
	int64_t now = clock_now_ms();
	char dur[32];

	if (json_array_size(tasks) > 0 && cli_table_init(&t, 6, header) == 0) {
		json_array_foreach(tasks, i, task)
		{
			char name[128], code[32], tdur[32], mem[32], why[256];

			cli_task_exit_text(task, code, sizeof code);
			const char *row[] = {
			    cli_task_name(task, name, sizeof name),
			    cli_json_str(task, "state", "?"),
			    code,
			    cli_format_duration(cli_object_duration_ms(task, now), tdur,
			                        sizeof tdur),
			    cli_format_bytes(cli_json_int(task, "peak_memory_bytes", -1), mem,
			                     sizeof mem),
			    cli_watch_task_reason(task, why, sizeof why),
			};
			cli_table_add(&t, row);
		}
		putchar('\n');
		cli_table_print(&t, stdout);
		cli_table_release(&t);
	}
	const char *reason = cli_json_str(job, "reason", "");
	long long attempt = cli_json_int(job, "attempt", 1);
	printf("job %lld %s", cli_json_int(job, "id", 0), cli_json_str(job, "state", "?"));
	if (cli_object_duration_ms(job, now) >= 0)
		printf(" in %s",
		       cli_format_duration(cli_object_duration_ms(job, now), dur, sizeof dur));
	if (attempt > 1)
		printf(" (attempt %lld)", attempt);
	if (*reason)
		printf(": %s", reason);
	putchar('\n');
}

static int final_status(json_t *job)
{
	enum job_state st;
	return job_state_from_name(cli_json_str(job, "state", ""), &st) == 0 && st == JOB_SUCCEEDED
	           ? CLI_EXIT_OK
	           : CLI_EXIT_FAILED;
}

/* DELETE the job; 0 when the server answered (409: it had already ended). */
static int kill_job(struct cli_ctx *ctx, const char *path)
{
	struct cli_reply r;
	int rc = cli_call(ctx, "DELETE", path, NULL, 10000, &r);
	if (rc == 0 && !cli_reply_ok(&r) && r.status != 409)
		cli_report(ctx, &r);
	cli_reply_release(&r);
	return rc;
}

/* A job's result can come before its last tasks are stopped (a failed
 * chief fails the job at once); the summary waits a little for them. */
#define SETTLE_MS 10000

/* Milliseconds since the first call (which starts the clock at *since). */
static int64_t ended_since_ms(int64_t *since)
{
	int64_t now = clock_mono_ms();
	if (*since < 0)
		*since = now;
	return now - *since;
}

/* A gang that failed and restarted between two looks would hide how its
 * tasks ended: ask for the attempt the watch was on before saying more. */
static void report_previous_attempt(struct cli_ctx *ctx, struct cli_watch *w, json_t *job)
{
	char path[128];
	struct cli_reply r;

	if (w->attempt == 0 || cli_json_int(job, "attempt", 1) == w->attempt)
		return;
	snprintf(path, sizeof path, "/api/v1/jobs/%lld/tasks?attempt=%lld", w->job_id, w->attempt);
	if (cli_call(ctx, "GET", path, NULL, 10000, &r) == 0 && cli_reply_ok(&r))
		cli_watch_tasks(w, json_object_get(r.json, "tasks"), print_line, NULL);
	cli_reply_release(&r);
}

/* The job's events as far as this look: the answer's own, after those of
 * the earlier answers when it carries only the later ones ("events_from",
 * where they start), else those of GET .../events (a server before
 * events=1, or a list that does not follow on from what *all has).  *all
 * (owned) keeps them for the next look; NULL when none could be read. */
static json_t *look_events(struct cli_ctx *ctx, json_t *job, const char *path, json_t **all)
{
	json_t *events = json_object_get(job, "events");
	json_t *from = json_object_get(job, "events_from");
	long long f = json_is_integer(from) ? json_integer_value(from) : 0;
	struct cli_reply ev = {0};
	char ev_path[160];

	if (json_is_array(events) && f == 0) {
		json_decref(*all);
		*all = json_incref(events);
		return *all;
	}
	if (json_is_array(events) && *all && (size_t)f == json_array_size(*all) &&
	    json_array_extend(*all, events) == 0)
		return *all;
	/* the events say what happened between this look and the last: a
	 * task that went by running is reported so */
	json_decref(*all);
	*all = NULL;
	snprintf(ev_path, sizeof ev_path, "%s/events", path);
	if (cli_call(ctx, "GET", ev_path, NULL, 10000, &ev) == 0 && cli_reply_ok(&ev) &&
	    json_is_array(json_object_get(ev.json, "events")))
		*all = json_incref(json_object_get(ev.json, "events"));
	cli_reply_release(&ev);
	return *all;
}

/* One look at the job: its lines printed (with its events, look_events),
 * and true with *rc when the job has ended and its summary is printed. */
static bool follow_look(struct cli_ctx *ctx, struct cli_watch *w, json_t *job, const char *path,
                        json_t **events, int64_t *ended_at, int *rc)
{
	cli_watch_set_events(w, look_events(ctx, job, path, events));
	report_previous_attempt(ctx, w, job);
	cli_watch_update(w, job, print_line, NULL);
	cli_watch_set_events(w, NULL);
	if (cli_job_state_is_final(cli_json_str(job, "state", "")) &&
	    (cli_job_tasks_final(job) || ended_since_ms(ended_at) > SETTLE_MS)) {
		print_summary(job);
		*rc = final_status(job);
		return true;
	}
	return false;
}

int cli_submit_follow(struct cli_ctx *ctx, long long id, json_t *first)
{
	struct cli_watch w;
	char path[64];
	int interrupts = 0;
	bool kill_pending = false;
	int64_t lost_since = -1;
	int64_t ended_at = -1;
	int rc = CLI_EXIT_FAILED;
	char since[17] = "";
	json_t *events = NULL; /* the job's events as far as the last look */

	snprintf(path, sizeof path, "/api/v1/jobs/%lld", id);
	cli_watch_init(&w, id);
	/* A signal during the submission itself waits here. */
	if (sleep_for_signal(0)) {
		interrupts = 1;
		kill_pending = true;
	}
	/* The submission's answer is the first look when it has a version:
	 * the first request is then already a long poll. */
	if (!kill_pending && first && json_is_string(json_object_get(first, "version"))) {
		snprintf(since, sizeof since, "%s", cli_json_str(first, "version", ""));
		if (follow_look(ctx, &w, first, path, &events, &ended_at, &rc))
			goto out;
		fflush(stdout);
	}
	for (;;) {
		struct cli_reply r;

		if (kill_pending) {
			printf("interrupted: killing job %lld\n", id);
			fflush(stdout);
			if (kill_job(ctx, path) == 0)
				kill_pending = false;
		}
		/* A long poll: the server answers when the job changes from the
		 * version we have (GATHER_MS after the first change, at once when
		 * the job ended), or after a second (so Ctrl-C is seen soon),
		 * with the job's events in the same answer. */
		char poll_path[192];
		if (since[0] && events)
			snprintf(poll_path, sizeof poll_path,
			         "%s?wait=1&since=%s&gather=%d&events=1&events_from=%zu", path,
			         since, GATHER_MS, json_array_size(events));
		else if (since[0])
			snprintf(poll_path, sizeof poll_path,
			         "%s?wait=1&since=%s&gather=%d&events=1", path, since, GATHER_MS);
		else
			snprintf(poll_path, sizeof poll_path, "%s?events=1", path);
		if (cli_call(ctx, "GET", poll_path, NULL, 10000, &r) < 0) {
			since[0] = '\0';
			int64_t now = clock_mono_ms();
			if (lost_since < 0) {
				lost_since = now;
				fflush(stdout);
				fprintf(stderr,
				        "weir: lost contact with the weir server at %s: %s; "
				        "retrying\n",
				        ctx->server_url, cli_reply_why(ctx, &r));
			} else if (now - lost_since > UNREACHABLE_GIVE_UP_MS) {
				cli_report(ctx, &r);
				cli_reply_release(&r);
				rc = CLI_EXIT_UNREACHABLE;
				break;
			}
			cli_reply_release(&r);
		} else if (!cli_reply_ok(&r) || !r.json) {
			rc = cli_report(ctx, &r);
			cli_reply_release(&r);
			break;
		} else {
			if (lost_since >= 0) {
				fprintf(stderr, "weir: reconnected to %s\n", ctx->server_url);
				lost_since = -1;
			}
			snprintf(since, sizeof since, "%s", cli_json_str(r.json, "version", ""));
			bool done = follow_look(ctx, &w, r.json, path, &events, &ended_at, &rc);
			cli_reply_release(&r);
			if (done)
				break;
		}
		fflush(stdout);
		if (sleep_for_signal(lost_since >= 0 ? 500 : since[0] ? 0 : POLL_MS)) {
			if (++interrupts == 1) {
				kill_pending = true;
			} else {
				fflush(stdout);
				fprintf(stderr,
				        "weir: not waiting any longer; job %lld is being "
				        "killed (see `weir jobs show %lld`)\n",
				        id, id);
				rc = 130;
				break;
			}
		}
	}
out:
	fflush(stdout);
	json_decref(events);
	cli_watch_release(&w);
	return rc;
}

int cli_submit_main(int argc, char **argv, const struct cli_globals *g)
{
	struct cli_submit_args a = {.globals = *g};
	struct weir_error err = {0};
	struct job_spec *spec = NULL;
	struct cli_ctx ctx = {0};
	struct cli_reply r = {0};
	struct strbuf body = STRBUF_INIT;
	int rc = CLI_EXIT_USAGE;

	a.tony_argv = calloc((size_t)argc + 1, sizeof *a.tony_argv);
	if (!a.tony_argv) {
		cli_error("out of memory");
		return CLI_EXIT_FAILED;
	}
	if (cli_submit_split(argc, argv, &a, &err) < 0) {
		cli_error("submit: %s", err.msg);
		cli_submit_usage(stderr);
		goto out;
	}
	if (a.help) {
		cli_submit_usage(stdout);
		rc = CLI_EXIT_OK;
		goto out;
	}
	spec = load_spec(&a, &err);
	if (!spec) {
		cli_error("%s", err.msg);
		goto out;
	}
	/* the body is the spec's JSON as the model writes it, without a tree */
	if (job_spec_write_json(&body, spec) < 0) {
		cli_error("out of memory");
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	if (cli_ctx_init(&ctx, &a.globals, &err) < 0) {
		cli_error("%s", err.msg);
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	if (!a.detach)
		cli_signals_block();
	if (cli_call(&ctx, "POST", a.detach ? "/api/v1/jobs" : "/api/v1/jobs?events=1", body.buf,
	             60000, &r) < 0 ||
	    !cli_reply_ok(&r)) {
		rc = cli_report(&ctx, &r);
		goto out;
	}
	long long id = cli_json_int(r.json, "id", -1);
	if (id < 0) {
		cli_error("the server accepted the job but its answer has no id: %.200s", r.body);
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	printf("job %lld submitted\n", id);
	fflush(stdout);
	rc = a.detach ? CLI_EXIT_OK : cli_submit_follow(&ctx, id, r.json);
out:
	cli_reply_release(&r);
	cli_ctx_release(&ctx);
	strbuf_release(&body);
	job_spec_destroy(spec);
	free(a.tony_argv);
	return rc;
}
