/* jobs_routes.c: the job routes, the job long poll and the task log route
 * (jobs_routes.h).
 *
 * Request paths never reach the file system: a log path comes from the job
 * manager, asked with a validated role name and integers.
 */
#include "api/jobs_routes.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/job_views.h"
#include "api/logs/log_stream.h"
#include "api/logs/log_window.h"
#include "api/long_poll.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"
#include "api/route_match.h"
#include "lib/clock.h"
#include "lib/strbuf.h"
#include "model/states.h"

#define MAX_WAIT_S 600

/* ---- the views of what the ops hand over ---- */

/* A job in full from an op's answer (rc, v, err), the view released; NULL
 * with err. */
static json_t *job_of(int rc, struct job_view *v, struct weir_error *err)
{
	json_t *r = NULL;

	if (rc < 0)
		return NULL;
	r = job_view_job(&v->row, &v->place, v->tasks, v->n_tasks);
	job_view_release(v);
	if (!r)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return r;
}

/* A job as the list shows it: its roles come from its stored spec. */
static json_t *job_brief(const struct job_view *v)
{
	json_t *sj = json_loads(v->row.spec_json ? v->row.spec_json : "{}", 0, NULL);
	struct job_spec *spec = sj ? job_spec_from_json(sj, NULL) : NULL;
	json_t *o = job_view_job_brief(&v->row, &v->place, spec, v->tasks, v->n_tasks);

	job_spec_destroy(spec);
	json_decref(sj);
	return o;
}

static json_t *collection_or_error(const char *key, json_t *items, struct weir_error *err)
{
	json_t *r = job_view_collection(key, items);

	if (!r)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return r;
}

/* ---- GET /jobs/{id}?wait=S&since=VERSION ---- */

/* A job as its answer's text, before the version and the events go in: its
 * compact JSON as job_view_job_write() writes it (always the same bytes for
 * the same job), written once, without a tree, and hashed as it is. */
struct job_text {
	struct strbuf sb;
	char version[17];
};

/* The text of view v (borrowed), and its version: FNV-1a of the text, as
 * 16 hex digits.  Any change a client could see changes it; the server
 * keeps no counter for it.  0, or -1 with err. */
static int job_text_make(const struct job_view *v, struct job_text *t, struct weir_error *err)
{
	uint64_t h = 1469598103934665603ULL;

	strbuf_init(&t->sb);
	if (job_view_job_write(&t->sb, &v->row, &v->place, v->tasks, v->n_tasks) < 0) {
		strbuf_release(&t->sb);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < t->sb.len; i++) {
		h ^= (unsigned char)t->sb.buf[i];
		h *= 1099511628211ULL;
	}
	snprintf(t->version, sizeof t->version, "%016llx", (unsigned long long)h);
	return 0;
}

/* "events=1" on a job's answer: it carries the job's events too, as GET
 * .../events lists them, so that a follower reads a change and what led to it
 * in one request.  Added after the version, which stays the job's alone.  A
 * failed read of the events leaves the key out (the client asks apart).
 *
 * "events_from=N" with it: only the events after the first N (a follower
 * that has those from an earlier answer), and "events_from" in the answer
 * says where its "events" start: N, or 0 (the whole list) when the job has
 * fewer than N. */
struct events_ask {
	int64_t job;  /* 0: no events */
	int64_t from; /* -1: no events_from, the whole list */
};

static bool wants_events(const struct http_request *req)
{
	const char *e = http_request_query(req, "events");

	return e && (!strcmp(e, "1") || !strcmp(e, "true"));
}

/* The request's events=1 and events_from for job `id`; -1 (answered 400)
 * when events_from is not a count. */
static int events_ask_of(struct http_request *req, int64_t id, struct events_ask *ea)
{
	const char *from = http_request_query(req, "events_from");

	ea->job = wants_events(req) ? id : 0;
	ea->from = -1;
	if (from && api_parse_int(from, 0, INT32_MAX, &ea->from) < 0) {
		reply_status(req, 400, "events_from: expected a whole number >= 0");
		return -1;
	}
	return 0;
}

/* A job's events as an array (GET .../events); NULL with err. */
static json_t *job_events(const struct api_ops *ops, void *ctx, int64_t id, struct weir_error *err)
{
	struct event_row *rows = NULL;
	size_t n = 0;

	if (ops->events(ctx, id, &rows, &n, err) < 0)
		return NULL;
	json_t *events = job_view_events(rows, n);
	event_rows_free(rows, n);
	if (!events)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return events;
}

/* `,"events":[...]` into sb: a job's events from the `from`th on (all of
 * them when it has fewer), then `,"events_from":N` when the request named
 * one.  A failed read of the events writes nothing. */
static void write_events(const struct api_ops *ops, void *ctx, const struct events_ask *ea,
                         struct strbuf *sb)
{
	struct weir_error err = {0};
	struct event_row *rows = NULL;
	size_t n = 0, from;

	if (ops->events(ctx, ea->job, &rows, &n, &err) < 0)
		return;
	from = ea->from > 0 && (uint64_t)ea->from <= n ? (size_t)ea->from : 0;
	strbuf_addstr(sb, ",\"events\":");
	if (job_view_events_write(sb, n > 0 ? rows + from : rows, n - from) < 0)
		sb->failed = true;
	if (ea->from >= 0)
		strbuf_addf(sb, ",\"events_from\":%zu", from);
	event_rows_free(rows, n);
}

/* Answers `status` with the job's text (taken) and its "version", then its
 * "events" (and "events_from") as `ea` asks, as if they had been set on the
 * job and the whole dumped.  `answer` (stolen; NULL: none) is what the
 * request's done callback reads. */
static void reply_job_text(const struct api_ops *ops, void *ctx, struct http_request *req,
                           int status, struct job_text *t, const struct events_ask *ea,
                           json_t *answer)
{
	struct strbuf *sb = &t->sb;
	size_t len;
	char *text;

	sb->len--; /* the closing brace, put back below */
	strbuf_addf(sb, ",\"version\":\"%s\"", t->version);
	if (ea->job > 0)
		write_events(ops, ctx, ea, sb);
	strbuf_addch(sb, '}');
	if (sb->failed) {
		strbuf_release(sb);
		json_decref(answer);
		reply_status(req, 500, "out of memory");
		return;
	}
	text = strbuf_detach(sb, &len);
	http_request_respond_json_text(req, status, text, len, answer);
}

/* "gather=MS" on a long poll: a follower that reads every state a task
 * passed through from the job's events needs no answer per change.  A job
 * that changes from `since` but has not ended answers MS milliseconds after
 * the first change the waiter saw (when the job had already changed as the
 * request came: MS after it came), or at its deadline if that is sooner;
 * a job that has ended, or that has a reason, answers at once, as without
 * gather.  The answer is read when it goes, so it carries every change of
 * the MS, and only what was committed (the checks run after a turn's
 * commit or from a timer, never inside a turn). */
#define MAX_GATHER_MS 60000

struct job_wait {
	const struct api_ops *ops;
	void *ctx;
	struct long_polls *polls;
	int64_t job;
	struct events_ask events;
	int64_t gather_ms; /* 0: answer each change at once */
	bool gathering;    /* a change is waiting for the gather's end */
	char since[17];    /* the version the client has */
};

/* Whether a change to view v can wait for more: the job has not ended and
 * has no reason to show (a job's reason, "waiting: 4g memory" or
 * "restarting: worker:0 exited 137", may last only until its next change,
 * and a follower prints it: it answers at once, as without gather). */
static bool job_gatherable(const struct job_view *v)
{
	return !job_state_is_final(v->row.state) && !(v->row.reason && v->row.reason[0]);
}

/* Whether a gathered wait of view v goes on gathering: the job changed and
 * the change can wait.  Then the waiter of `req` answers at the latest
 * w->gather_ms from now. */
static bool job_wait_gathers(struct job_wait *w, struct http_request *req, const struct job_view *v)
{
	if (w->gather_ms <= 0 || !job_gatherable(v))
		return false;
	if (!w->gathering) {
		w->gathering = true;
		long_polls_hurry(w->polls, req, clock_mono_ms() + w->gather_ms);
	}
	return true;
}

static bool job_wait_check(struct http_request *req, void *arg, bool timed_out)
{
	struct job_wait *w = arg;
	struct weir_error err = {0};
	struct job_view v = {0};
	struct job_text t;
	int rc;

	if (w->ops->get_job(w->ctx, w->job, &v, &err) < 0) {
		reply_result(req, 200, NULL, &err);
		return true;
	}
	/* gathering: only the job's end answers before the gather's; no
	 * text, no version is needed to know that */
	if (w->gathering && !timed_out && job_wait_gathers(w, req, &v)) {
		job_view_release(&v);
		return false;
	}
	rc = job_text_make(&v, &t, &err);
	if (rc < 0) {
		job_view_release(&v);
		reply_result(req, 200, NULL, &err);
		return true;
	}
	long_polls_seen(w->polls, API_WAIT_JOB, w->job, t.version);
	if (!timed_out && (!strcmp(t.version, w->since) || job_wait_gathers(w, req, &v))) {
		job_view_release(&v);
		strbuf_release(&t.sb);
		return false;
	}
	job_view_release(&v);
	reply_job_text(w->ops, w->ctx, req, 200, &t, &w->events, NULL);
	return true;
}

/* Answers at once unless the job is still at `since` (or, with gather, has
 * changed without ending or getting a reason); then when it changes (with
 * gather: as job_wait_check says) or after S seconds.  A
 * follower asks again right after each answer, with the version it got:
 * when no job has changed since that answer was written (no notice came),
 * the job is not read again to find it the same. */
static void route_get_job(const struct job_routes *jr, struct http_request *req, int64_t id)
{
	struct weir_error err = {0};
	const char *since = http_request_query(req, "since");
	const char *wait_text = http_request_query(req, "wait");
	const char *gather_text = http_request_query(req, "gather");
	int64_t wait = 0, gather = 0, now;
	struct job_view v = {0};
	struct job_text t;
	struct job_wait *w;
	struct events_ask ea;
	bool gathering = false;

	if (wait_text && api_parse_int(wait_text, 0, MAX_WAIT_S, &wait) < 0) {
		reply_status(req, 400, "wait: expected whole seconds from 0 to 600");
		return;
	}
	if (gather_text && api_parse_int(gather_text, 0, MAX_GATHER_MS, &gather) < 0) {
		reply_status(req, 400, "gather: expected whole milliseconds from 0 to 60000");
		return;
	}
	if (events_ask_of(req, id, &ea) < 0)
		return;
	if (wait == 0 || !since || !long_polls_still(jr->polls, API_WAIT_JOB, id, since)) {
		if (jr->ops->get_job(jr->ctx, id, &v, &err) < 0 ||
		    job_text_make(&v, &t, &err) < 0) {
			job_view_release(&v);
			reply_result(req, 200, NULL, &err);
			return;
		}
		long_polls_seen(jr->polls, API_WAIT_JOB, id, t.version);
		gathering =
		    gather > 0 && strcmp(since ? since : "", t.version) != 0 && job_gatherable(&v);
		job_view_release(&v);
		if (wait == 0 || !since || (strcmp(since, t.version) != 0 && !gathering)) {
			reply_job_text(jr->ops, jr->ctx, req, 200, &t, &ea, NULL);
			return;
		}
		strbuf_release(&t.sb);
	}
	w = calloc(1, sizeof *w);
	if (w) {
		w->ops = jr->ops;
		w->ctx = jr->ctx;
		w->polls = jr->polls;
		w->job = id;
		w->events = ea;
		w->gather_ms = gather;
		w->gathering = gathering;
		snprintf(w->since, sizeof w->since, "%s", since);
	}
	now = clock_mono_ms();
	long_polls_add(jr->polls, req, API_WAIT_JOB, id,
	               now + (gathering && gather < wait * 1000 ? gather : wait * 1000),
	               job_wait_check, w);
}

void jobs_routes_notify(const struct job_routes *jr)
{
	long_polls_notify(jr->polls, API_WAIT_JOB, LONG_POLL_ANY_KEY);
}

/* ---- GET /jobs/{id}/tasks/{role}/{index}/logs ---- */

/* What a follower asks the job manager about its task. */
struct task_ref {
	const struct api_ops *ops;
	void *ctx;
	int64_t job;
	char role[64];
	int index;
	int attempt;
};

static bool task_ended(void *arg)
{
	struct task_ref *t = arg;
	struct weir_error err = {0};
	char *path = NULL;
	bool ended = false;

	if (t->ops->log_locate(t->ctx, t->job, t->role, t->index, t->attempt, &path, &ended, &err) <
	    0)
		ended = true; /* the job went away: end the stream */
	free(path);
	return ended;
}

static void route_logs(const struct job_routes *jr, struct http_request *req, int64_t id,
                       const char *role, const char *index_s)
{
	struct weir_error err = {0};
	int64_t index, attempt = API_ATTEMPT_CURRENT;
	const char *q;
	char *path = NULL;
	bool ended = false;
	struct task_ref *ref;
	struct stat st;
	struct log_window win;
	struct log_stream_source src = {.fd = -1};
	uint64_t size = 0;
	char msg[200], name[128];

	if (!api_role_name_ok(role)) {
		reply_status(req, 400, "role: expected a name like worker ([a-z][a-z0-9_-]*)");
		return;
	}
	if (api_parse_int(index_s, 0, 1000000, &index) < 0) {
		reply_status(req, 400, "index: expected a whole number >= 0");
		return;
	}
	if ((q = http_request_query(req, "attempt")) &&
	    api_parse_int(q, 1, 1000000, &attempt) < 0) {
		reply_status(req, 400, "attempt: expected a whole number >= 1");
		return;
	}
	if (log_window_parse(req, &win, msg, sizeof msg) < 0) {
		reply_status(req, 400, msg);
		return;
	}
	if (jr->ops->log_locate(jr->ctx, id, role, (int)index, (int)attempt, &path, &ended, &err) <
	    0) {
		http_request_respond_error(req, &err);
		return;
	}
	ref = calloc(1, sizeof *ref);
	if (!ref) {
		free(path);
		reply_status(req, 500, "out of memory");
		return;
	}
	ref->ops = jr->ops;
	ref->ctx = jr->ctx;
	ref->job = id;
	snprintf(ref->role, sizeof ref->role, "%s", role);
	ref->index = (int)index;
	ref->attempt = (int)attempt;
	q = http_request_query(req, "follow");
	src.path = path;
	src.follow = q && (!strcmp(q, "true") || !strcmp(q, "1"));
	src.ended = ended;
	src.job = id;
	src.ended_fn = task_ended;
	src.ended_arg = ref;
	src.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (src.fd >= 0 && fstat(src.fd, &st) == 0)
		size = (uint64_t)st.st_size;
	log_window_resolve(&win, size, &src.start, &src.end);
	snprintf(name, sizeof name, "job-%lld-%s-%lld.log", (long long)id, role, (long long)index);
	log_window_headers(req, &win, size, src.start, ended, name);
	if (log_stream_respond(jr->logs, req, &src) < 0)
		reply_status(req, 500, "out of memory");
}

/* ---- dispatch ---- */

static void route_list(const struct job_routes *jr, struct http_request *req)
{
	struct weir_error err = {0};
	const char *state = http_request_query(req, "state");
	const char *lim = http_request_query(req, "limit");
	int64_t limit = 0;
	struct job_view *jobs = NULL;
	size_t n = 0;
	json_t *r = NULL;

	if (lim && api_parse_int(lim, 0, 1000000, &limit) < 0) {
		reply_status(req, 400, "limit: expected a whole number >= 0");
		return;
	}
	if (state && !*state)
		state = NULL;
	if (jr->ops->list_jobs(jr->ctx, state, (int)limit, &jobs, &n, &err) == 0) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < n; i++)
			json_array_append_new(a, job_brief(&jobs[i]));
		job_views_free(jobs, n);
		r = collection_or_error("jobs", a, &err);
	}
	reply_result(req, 200, r, &err);
}

static void route_tasks(const struct job_routes *jr, struct http_request *req, int64_t id)
{
	struct weir_error err = {0};
	const char *a = http_request_query(req, "attempt");
	int64_t attempt = API_ATTEMPT_CURRENT;
	struct task_row *rows = NULL;
	size_t n = 0;
	json_t *r = NULL;

	if (a && !strcmp(a, "all"))
		attempt = API_ATTEMPT_ALL;
	else if (a && api_parse_int(a, 1, 1000000, &attempt) < 0) {
		reply_status(req, 400, "attempt: expected a number >= 1 or \"all\"");
		return;
	}
	if (jr->ops->tasks(jr->ctx, id, (int)attempt, &rows, &n, &err) == 0) {
		r = collection_or_error("tasks", job_view_tasks(rows, n), &err);
		task_rows_free(rows, n);
	}
	reply_result(req, 200, r, &err);
}

static void route_events(const struct job_routes *jr, struct http_request *req, int64_t id)
{
	struct weir_error err = {0};
	json_t *events = job_events(jr->ops, jr->ctx, id, &err);

	reply_result(req, 200, events ? collection_or_error("events", events, &err) : NULL, &err);
}

static void route_submit(const struct job_routes *jr, struct http_request *req)
{
	struct weir_error err = {0};
	json_t *body = request_json_object(req, &err);
	struct job_view v = {0};
	struct job_text t;
	int rc = -1;

	if (body)
		rc = jr->ops->submit(jr->ctx, body, &v, &err);
	json_decref(body);
	/* the job with the version a follower's first long poll starts from,
	 * as GET gives it */
	if (rc < 0 || job_text_make(&v, &t, &err) < 0) {
		job_view_release(&v);
		reply_result(req, 201, NULL, &err);
		return;
	}
	long_polls_seen(jr->polls, API_WAIT_JOB, v.row.id, t.version);
	struct events_ask ea = {wants_events(req) ? v.row.id : 0, -1};
	/* what the event log reads of the answer: the new job's id */
	json_t *answer = json_pack("{s:I}", "id", (json_int_t)v.row.id);
	reply_job_text(jr->ops, jr->ctx, req, 201, &t, &ea, answer);
	job_view_release(&v);
}

static void route_kill(const struct job_routes *jr, struct http_request *req, int64_t id)
{
	struct weir_error err = {0};
	struct job_view v = {0};

	reply_result(req, 202, job_of(jr->ops->kill_job(jr->ctx, id, &v, &err), &v, &err), &err);
}

/* ---- the operations (api/route_table.c's rows) ---- */

/* The job id of the path, or a 400. */
static bool job_id(struct http_request *req, const char *s, int64_t *id)
{
	char msg[200];

	if (api_parse_int(s, 1, INT64_MAX, id) == 0)
		return true;
	snprintf(msg, sizeof msg, "job id: expected a whole number >= 1, got \"%.100s\"", s);
	reply_status(req, 400, msg);
	return false;
}

void jobs_list(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	(void)m;
	route_list(&rc->jobs, req);
}

void jobs_submit(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	(void)m;
	route_submit(&rc->jobs, req);
}

void jobs_get(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	int64_t id;

	if (job_id(req, route_match_param(m, "job_id"), &id))
		route_get_job(&rc->jobs, req, id);
}

void jobs_kill(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	int64_t id;

	if (job_id(req, route_match_param(m, "job_id"), &id))
		route_kill(&rc->jobs, req, id);
}

void jobs_tasks(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	int64_t id;

	if (job_id(req, route_match_param(m, "job_id"), &id))
		route_tasks(&rc->jobs, req, id);
}

void jobs_events(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	int64_t id;

	if (job_id(req, route_match_param(m, "job_id"), &id))
		route_events(&rc->jobs, req, id);
}

void jobs_task_log(const struct route_ctx *rc, struct http_request *req,
                   const struct route_match *m)
{
	int64_t id;

	if (job_id(req, route_match_param(m, "job_id"), &id))
		route_logs(&rc->jobs, req, id, route_match_param(m, "role"),
		           route_match_param(m, "index"));
}

void jobs_unmatched(const struct job_routes *jr, struct http_request *req, char **seg, int n)
{
	int64_t id;

	if (n < 2 || !job_id(req, seg[1], &id))
		; /* /jobs itself is a row; a bad id answered */
	else if (n == 6 && !strcmp(seg[2], "tasks") && !strcmp(seg[5], "logs"))
		route_logs(jr, req, id, seg[3], seg[4]); /* its 400 for a bad index */
	else
		reply_no_route(req);
}
