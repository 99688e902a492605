/* cli_logs.c: `weir logs`: one or several tasks' logs, whole or followed.
 *
 * Following several tasks runs one thread per task, each with its own HTTP
 * handle (a handle serves one request at a time) and its own line buffer;
 * lines are written whole under stdio's lock, so lines of two tasks never
 * interleave.  A follower reads what is there (GET from its offset), then
 * streams with follow=true; when the stream closes it checks the task: a
 * task that ended is drained and done, otherwise (the server restarted,
 * say) it resumes from its offset, so nothing is printed twice.
 */
#include "cli/cli_logs.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"

#define RETRY_MS 200
#define UNREACHABLE_GIVE_UP_MS (10 * 60 * 1000)

void cli_logs_usage(FILE *out)
{
	fputs("usage: weir logs JOB [--role R] [--index I] [--attempt N] [--follow|-f]\n"
	      "\n"
	      "Prints the logs (stdout and stderr together) of the job's tasks: those of role R\n"
	      "and/or index I, or every task when neither is given.  With several tasks each line\n"
	      "is prefixed \"role:index| \".  Every attempt is kept: --attempt N selects one\n"
	      "(default: the current attempt).  --follow streams new output until the tasks end.\n",
	      out);
}

void cli_line_writer_init(struct cli_line_writer *w, const char *prefix, FILE *out)
{
	memset(w, 0, sizeof *w);
	strbuf_init(&w->partial);
	w->prefix = prefix;
	w->out = out;
}

static void write_line(struct cli_line_writer *w, const char *a, size_t alen, const char *b,
                       size_t blen)
{
	flockfile(w->out);
	fputs(w->prefix, w->out);
	fwrite(a, 1, alen, w->out);
	fwrite(b, 1, blen, w->out);
	funlockfile(w->out);
}

int cli_line_writer_add(struct cli_line_writer *w, const char *data, size_t len)
{
	if (!w->prefix) {
		fwrite(data, 1, len, w->out);
		fflush(w->out);
		return 0;
	}
	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		if (!nl) {
			if (strbuf_add(&w->partial, data, len) < 0)
				return -1;
			break;
		}
		size_t n = (size_t)(nl - data) + 1;
		write_line(w, w->partial.buf, w->partial.len, data, n);
		strbuf_reset(&w->partial);
		data += n;
		len -= n;
	}
	fflush(w->out);
	return 0;
}

void cli_line_writer_finish(struct cli_line_writer *w)
{
	if (w->prefix && w->partial.len > 0) {
		write_line(w, w->partial.buf, w->partial.len, "\n", 1);
		strbuf_reset(&w->partial);
		fflush(w->out);
	}
}

void cli_line_writer_release(struct cli_line_writer *w)
{
	if (!w)
		return;
	strbuf_release(&w->partial);
	w->prefix = NULL;
	w->out = NULL;
}

/* One selected task. */
struct follower {
	struct cli_ctx *ctx; /* shared: URL, token (read-only) */
	struct http_client *http;
	long long job;
	long long attempt;
	char *role; /* URL-escaped */
	long long index;
	char name[128]; /* role:index */
	char prefix[136];
	struct cli_line_writer writer;
	uint64_t offset;
	bool single;
	int rc;
	pthread_t thread;
};

static int call(struct follower *f, const char *path, struct cli_reply *r)
{
	struct http_response resp;

	memset(r, 0, sizeof *r);
	if (http_client_request(f->http, "GET", path, NULL, 30000, &resp, &r->err) < 0) {
		http_response_release(&resp);
		return -1;
	}
	r->status = resp.status;
	r->body = resp.body;
	r->len = resp.len;
	if (r->len > 0 && r->body[0] == '{')
		r->json = json_loadb(r->body, r->len, 0, NULL);
	return 0;
}

/* 1 when the task has ended, 0 when not, -1 when unknown (no answer). */
static int task_ended(struct follower *f)
{
	char path[256];
	struct cli_reply r;
	json_t *task;
	size_t i;
	int ended = -1;

	snprintf(path, sizeof path, "/api/v1/jobs/%lld/tasks?attempt=%lld", f->job, f->attempt);
	if (call(f, path, &r) < 0 || !cli_reply_ok(&r)) {
		cli_reply_release(&r);
		return -1;
	}
	json_array_foreach(json_object_get(r.json, "tasks"), i, task)
	{
		char name[128];
		if (!strcmp(cli_task_name(task, name, sizeof name), f->name)) {
			ended = cli_task_state_is_final(cli_json_str(task, "state", "")) ? 1 : 0;
			break;
		}
	}
	cli_reply_release(&r);
	return ended < 0 ? 1 : ended; /* gone from the attempt: nothing more will come */
}

static int on_chunk(const char *data, size_t len, void *arg)
{
	struct follower *f = arg;
	f->offset += len;
	return cli_line_writer_add(&f->writer, data, len) < 0 ? 1 : 0;
}

static void log_path(struct follower *f, char *buf, size_t size, bool follow)
{
	snprintf(buf, size, "/api/v1/jobs/%lld/tasks/%s/%lld/logs?attempt=%lld&offset=%llu%s",
	         f->job, f->role, f->index, f->attempt, (unsigned long long)f->offset,
	         follow ? "&follow=true" : "");
}

/* Reads the log once from the offset; 0 done reading, 1 not there yet,
 * -1 no answer, else an exit status was reported (returns 100 + status). */
static int read_once(struct follower *f)
{
	char path[512];
	struct cli_reply r;
	int rc;

	log_path(f, path, sizeof path, false);
	if (call(f, path, &r) < 0) {
		cli_reply_release(&r);
		return -1;
	}
	if (cli_reply_ok(&r)) {
		on_chunk(r.body, r.len, f);
		rc = 0;
	} else if (r.status == 404) {
		rc = 1;
	} else {
		rc = 100 + cli_report(f->ctx, &r);
	}
	cli_reply_release(&r);
	return rc;
}

static void *follow_task(void *arg)
{
	struct follower *f = arg;
	int64_t lost_since = -1;

	f->rc = CLI_EXIT_OK;
	for (;;) {
		int ended = task_ended(f);
		int got = ended < 0 ? -1 : read_once(f);
		if (got < 0) {
			int64_t now = clock_mono_ms();
			if (lost_since < 0)
				lost_since = now;
			if (now - lost_since > UNREACHABLE_GIVE_UP_MS) {
				struct cli_reply r = {0};
				snprintf(r.err.msg, sizeof r.err.msg, "no answer for %d s",
				         UNREACHABLE_GIVE_UP_MS / 1000);
				cli_report(f->ctx, &r);
				f->rc = CLI_EXIT_UNREACHABLE;
				break;
			}
			clock_sleep_ms(500);
			continue;
		}
		lost_since = -1;
		if (got >= 100) {
			f->rc = got - 100;
			break;
		}
		if (ended == 1)
			break; /* what we just read was all of it */
		if (got == 1) {
			clock_sleep_ms(RETRY_MS); /* no log yet: the task is starting */
			continue;
		}
		char path[512];
		long status = 0;
		uint64_t before = f->offset;
		int64_t t0 = clock_mono_ms();
		struct weir_error err;
		log_path(f, path, sizeof path, true);
		http_client_stream(f->http, path, on_chunk, f, &status, &err);
		/* A server that closes at once (no follow support, or an error)
		 * must not turn this into a busy loop. */
		if (f->offset == before && clock_mono_ms() - t0 < RETRY_MS)
			clock_sleep_ms(RETRY_MS);
	}
	cli_line_writer_finish(&f->writer);
	return NULL;
}

/* Prints a task's log once (no follow). */
static int print_task(struct follower *f)
{
	int got;
	int64_t deadline = clock_mono_ms() + 5000;

	while ((got = read_once(f)) < 0 && clock_mono_ms() < deadline)
		clock_sleep_ms(500);
	cli_line_writer_finish(&f->writer);
	if (got < 0) {
		struct cli_reply r = {0};
		snprintf(r.err.msg, sizeof r.err.msg, "no answer");
		return cli_report(f->ctx, &r);
	}
	if (got == 1 && f->single) {
		cli_error("no log for %s of job %lld (attempt %lld) yet", f->name, f->job,
		          f->attempt);
		return CLI_EXIT_FAILED;
	}
	return got >= 100 ? got - 100 : CLI_EXIT_OK;
}

static bool task_selected(json_t *task, const char *role, long long index)
{
	if (role && strcmp(cli_json_str(task, "role", ""), role) != 0)
		return false;
	if (index >= 0 && cli_json_int(task, "index", -1) != index)
		return false;
	return true;
}

/* The tasks of the attempt, waiting for them with --follow while the job
 * is queued.  New reference, or NULL after reporting (*rc). */
static json_t *fetch_tasks(struct cli_ctx *ctx, long long job, long long *attempt, bool follow,
                           int *rc)
{
	char path[256];
	json_t *reply = NULL;

	for (;;) {
		json_t *j = NULL;
		snprintf(path, sizeof path, "/api/v1/jobs/%lld", job);
		*rc = cli_get_json(ctx, path, &j);
		if (*rc != CLI_EXIT_OK)
			return NULL;
		long long current = cli_json_int(j, "attempt", 1);
		bool final = cli_job_state_is_final(cli_json_str(j, "state", ""));
		if (*attempt <= 0)
			*attempt = current;
		if (*attempt > current) {
			cli_error("job %lld has no attempt %lld (its current attempt is %lld)", job,
			          *attempt, current);
			json_decref(j);
			*rc = CLI_EXIT_FAILED;
			return NULL;
		}
		json_decref(j);
		snprintf(path, sizeof path, "/api/v1/jobs/%lld/tasks?attempt=%lld", job, *attempt);
		*rc = cli_get_json(ctx, path, &reply);
		if (*rc != CLI_EXIT_OK)
			return NULL;
		if (json_array_size(json_object_get(reply, "tasks")) > 0 || !follow || final)
			return reply;
		json_decref(reply);
		clock_sleep_ms(RETRY_MS);
	}
}

static int show_logs(struct cli_ctx *ctx, long long job, const char *role, long long index,
                     long long attempt, bool follow)
{
	struct follower *fs = NULL;
	json_t *reply, *task;
	size_t n = 0, i;
	int rc;

	reply = fetch_tasks(ctx, job, &attempt, follow, &rc);
	if (!reply)
		return rc;
	json_t *tasks = json_object_get(reply, "tasks");
	fs = calloc(json_array_size(tasks) + 1, sizeof *fs);
	if (!fs) {
		json_decref(reply);
		return CLI_EXIT_FAILED;
	}
	json_array_foreach(tasks, i, task)
	{
		if (!task_selected(task, role, index))
			continue;
		struct follower *f = &fs[n++];
		f->ctx = ctx;
		f->job = job;
		f->attempt = attempt;
		f->index = cli_json_int(task, "index", 0);
		f->role = http_url_escape(cli_json_str(task, "role", ""));
		f->http = cli_ctx_http(ctx);
		cli_task_name(task, f->name, sizeof f->name);
		snprintf(f->prefix, sizeof f->prefix, "%s| ", f->name);
		if (!f->role || !f->http) {
			rc = CLI_EXIT_FAILED;
			cli_error("out of memory");
			goto out;
		}
	}
	if (n == 0) {
		char want[160];
		snprintf(want, sizeof want, "%s:%s", role ? role : "*", "*");
		if (index >= 0)
			snprintf(want, sizeof want, "%s:%lld", role ? role : "*", index);
		if (json_array_size(tasks) == 0)
			cli_error("job %lld has no tasks in attempt %lld yet", job, attempt);
		else
			cli_error("job %lld has no task %s in attempt %lld", job, want, attempt);
		rc = CLI_EXIT_FAILED;
		goto out;
	}
	for (i = 0; i < n; i++) {
		fs[i].single = n == 1;
		cli_line_writer_init(&fs[i].writer, n == 1 ? NULL : fs[i].prefix, stdout);
	}
	rc = CLI_EXIT_OK;
	if (!follow) {
		for (i = 0; i < n; i++) {
			int r = print_task(&fs[i]);
			if (r != CLI_EXIT_OK)
				rc = r;
		}
	} else if (n == 1) {
		follow_task(&fs[0]);
		rc = fs[0].rc;
	} else {
		size_t started = 0;
		for (i = 0; i < n; i++, started++)
			if (pthread_create(&fs[i].thread, NULL, follow_task, &fs[i]) != 0)
				break;
		if (started < n) {
			cli_error("cannot start a thread to follow %s", fs[started].name);
			rc = CLI_EXIT_FAILED;
		}
		for (i = 0; i < started; i++) {
			pthread_join(fs[i].thread, NULL);
			if (fs[i].rc != CLI_EXIT_OK)
				rc = fs[i].rc;
		}
	}
out:
	for (i = 0; i < n; i++) {
		cli_line_writer_release(&fs[i].writer);
		http_client_destroy(fs[i].http);
		free(fs[i].role);
	}
	free(fs);
	json_decref(reply);
	return rc;
}

static int usage_error(const char *msg, const char *what)
{
	cli_error("%s%s", msg, what ? what : "");
	cli_logs_usage(stderr);
	return CLI_EXIT_USAGE;
}

int cli_logs_main(int argc, char **argv, const struct cli_globals *g0)
{
	struct cli_globals g = *g0;
	struct weir_error err = {0};
	struct cli_ctx ctx = {0};
	const char *role = NULL, *index_text = NULL, *attempt_text = NULL, *job_text = NULL;
	long long job = 0, index = -1, attempt = 0;
	bool follow = false;
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		int r;

		if (cli_flag_is_help(arg)) {
			cli_logs_usage(stdout);
			return CLI_EXIT_OK;
		}
		if (cli_flag_is(arg, "--follow", "-f")) {
			follow = true;
			continue;
		}
		if ((r = cli_flag_global(argc, argv, &i, &g, &err)) == 0 &&
		    (r = cli_flag_value(argc, argv, &i, "--role", &role, &err)) == 0 &&
		    (r = cli_flag_value(argc, argv, &i, "--index", &index_text, &err)) == 0)
			r = cli_flag_value(argc, argv, &i, "--attempt", &attempt_text, &err);
		if (r < 0)
			return usage_error(err.msg, NULL);
		if (r > 0)
			continue;
		if (arg[0] == '-' && arg[1] != '\0')
			return usage_error("unknown flag ", arg);
		if (job_text)
			return usage_error("unexpected argument ", arg);
		job_text = arg;
	}
	if (!job_text)
		return usage_error("logs needs a job id", NULL);
	if (cli_parse_int(job_text, "job id", 1, 0x7fffffffffffffffLL, &job, &err) < 0 ||
	    (index_text && cli_parse_int(index_text, "--index", 0, 1 << 30, &index, &err) < 0) ||
	    (attempt_text &&
	     cli_parse_int(attempt_text, "--attempt", 1, 1 << 30, &attempt, &err) < 0))
		return usage_error(err.msg, NULL);
	if (cli_ctx_init(&ctx, &g, &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_FAILED;
	}
	rc = show_logs(&ctx, job, role, index, attempt, follow);
	cli_ctx_release(&ctx);
	return rc;
}
