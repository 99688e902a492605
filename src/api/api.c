/* api.c: routes of docs/api.md over api/http, long polls and log follow.
 *
 * Request paths never reach the file system: a log path comes from the job
 * manager, asked with a validated role name and integers.
 */
#include "api/api.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/airflow.h"
#include "api/log_append.h"
#include "api/log_window.h"
#include "api/ui_assets.h"
#include "api/ui_auth.h"
#include "lib/clock.h"
#include "lib/log.h"

#define TICK_MS 200
#define MAX_WAIT_S 600
#define MAX_SEGMENTS 8

/* A suspended long poll: a launcher waiting for its gang (WAIT_CLUSTER), or
 * a client waiting for a job to change from the version it has seen
 * (WAIT_JOB: GET /jobs/{id}?wait=S&since=VERSION). */
enum wait_kind { WAIT_CLUSTER, WAIT_JOB };

struct waiter {
	struct api *api;
	struct http_request *req;
	enum wait_kind kind;
	int64_t job;
	int attempt;           /* WAIT_CLUSTER */
	char since[17];        /* WAIT_JOB: the version the client has */
	int64_t deadline_ms; /* monotonic */
	struct waiter *prev, *next;
};

struct follower {
	struct api *api;
	struct http_request *req; /* NULL once the response is done */
	int64_t job;
	char role[64];
	int index;
	int attempt;
	char *path;
	int fd;
	uint64_t offset; /* where the response started in the file */
	uint64_t sent;   /* bytes handed to MHD so far */
	uint64_t end;    /* the byte after the last one to send (length=); UINT64_MAX: none */
	bool follow;
	bool ended; /* the task has ended: drain and stop */
	bool waiting;
	struct follower *prev, *next;
};

struct api {
	uv_loop_t *loop;
	char *token;
	const struct api_ops *ops;
	void *ctx;
	const struct dag_api_ops *dag_ops; /* NULL: workflow routes answer 503 */
	void *dag_ctx;
	struct basic_auth *basic; /* NULL: Bearer token only */
	struct ui_auth *ui;       /* the web UI's sessions */
	uv_timer_t tick;
	bool tick_on;
	struct waiter *waiters;
	struct follower *followers;
};

/* ---- helpers ---- */

bool api_auth_ok(const char *authorization, const char *token)
{
	const char *given;
	size_t gl, tl;
	unsigned char diff = 0;

	if (!authorization || !token || strncmp(authorization, "Bearer ", 7))
		return false;
	given = authorization + 7;
	while (*given == ' ')
		given++;
	gl = strlen(given);
	tl = strlen(token);
	/* the length is no secret; the bytes are compared without an early exit */
	for (size_t i = 0; i < tl; i++)
		diff |= (unsigned char)(token[i] ^ (i < gl ? given[i] : 0));
	return diff == 0 && gl == tl && tl > 0;
}

bool api_role_name_ok(const char *s)
{
	size_t n;

	if (!s || !(*s >= 'a' && *s <= 'z'))
		return false;
	n = strlen(s);
	if (n > 63)
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

int api_parse_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s || *s == '+' || (*s == '-' && min >= 0) || *s == ' ')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void respond_result(struct http_request *req, int status, json_t *body,
                           struct weir_error *err)
{
	if (body)
		http_request_respond_json(req, status, body);
	else
		http_request_respond_error(req, err);
}

static void respond_status(struct http_request *req, int status, const char *msg)
{
	http_request_respond_json(req, status,
	                          json_pack("{s:s, s:i}", "error", msg, "status", status));
}

static json_t *parse_body(struct http_request *req, struct weir_error *err)
{
	size_t len;
	const char *body = http_request_body(req, &len);
	json_error_t je;
	json_t *j;

	if (len == 0) {
		weir_error_set(err, WEIR_E_INVALID,
		               "request body: expected a JSON object, got nothing");
		return NULL;
	}
	j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		weir_error_set(err, WEIR_E_INVALID, "request body: invalid JSON at line %d: %s",
		               je.line, je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		weir_error_set(err, WEIR_E_INVALID, "request body: expected a JSON object");
		return NULL;
	}
	return j;
}

/* ---- the tick: long poll deadlines and log followers ---- */

static void on_tick(uv_timer_t *t);

static void tick_update(struct api *api)
{
	bool want = api->waiters || api->followers;

	if (want && !api->tick_on) {
		uv_timer_start(&api->tick, on_tick, TICK_MS, TICK_MS);
		api->tick_on = true;
	} else if (!want && api->tick_on) {
		uv_timer_stop(&api->tick);
		api->tick_on = false;
	}
}

static void waiter_remove(struct waiter *w)
{
	struct api *api = w->api;

	if (w->prev)
		w->prev->next = w->next;
	else
		api->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	free(w);
	tick_update(api);
}

/* A job's version: FNV-1a of its JSON (compact, sorted keys), as 16 hex
 * digits.  Any change a client could see changes it; the server keeps no
 * counter for it.  Adds "version" to the job. */
static void job_add_version(json_t *job, char out[17])
{
	char *text = json_dumps(job, JSON_COMPACT | JSON_SORT_KEYS);
	uint64_t h = 1469598103934665603ULL;

	for (const char *p = text ? text : ""; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 1099511628211ULL;
	}
	free(text);
	snprintf(out, 17, "%016llx", (unsigned long long)h);
	json_object_set_new(job, "version", json_string(out));
}

static void waiter_add(struct api *api, struct waiter *w)
{
	w->api = api;
	w->next = api->waiters;
	if (api->waiters)
		api->waiters->prev = w;
	api->waiters = w;
	tick_update(api);
	http_request_suspend(w->req);
}

static void job_waiter_check(struct waiter *w, bool timed_out)
{
	struct weir_error err = {0};
	char version[17];
	json_t *r = w->api->ops->get_job(w->api->ctx, w->job, &err);

	if (r)
		job_add_version(r, version);
	if (!r || timed_out || strcmp(version, w->since) != 0) {
		respond_result(w->req, 200, r, &err);
		waiter_remove(w);
	} else {
		json_decref(r);
	}
}

/* Asks again; answers and frees the waiter when there is an answer. */
static void waiter_check(struct waiter *w, bool timed_out)
{
	struct weir_error err = {0};
	bool ready = false;

	if (w->kind == WAIT_JOB) {
		job_waiter_check(w, timed_out);
		return;
	}
	json_t *r = w->api->ops->launch_cluster(w->api->ctx, w->job, w->attempt, &ready, &err);

	if (r || err.kind != WEIR_OK) {
		respond_result(w->req, 200, r, &err);
		waiter_remove(w);
	} else if (timed_out) {
		http_request_respond_json(w->req, 200, json_pack("{s:b}", "ready", 0));
		waiter_remove(w);
	}
}

static void follower_check(struct follower *f)
{
	struct weir_error err = {0};
	char *path = NULL;
	bool ended = false;
	bool wake = false;
	struct stat st;

	if (!f->waiting || !f->req)
		return;
	if (f->api->ops->log_locate(f->api->ctx, f->job, f->role, f->index, f->attempt, &path,
	                            &ended, &err) < 0) {
		ended = true; /* the job went away: end the stream */
	}
	free(path);
	if (ended && !f->ended) {
		f->ended = true;
		wake = true;
	}
	if (f->fd < 0 && f->path)
		f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd >= 0 && fstat(f->fd, &st) == 0 && (uint64_t)st.st_size > f->offset + f->sent)
		wake = true;
	if (wake) {
		f->waiting = false;
		http_request_resume(f->req);
	}
}

static void on_tick(uv_timer_t *t)
{
	struct api *api = t->data;
	int64_t now = clock_mono_ms();
	struct waiter *w, *wn;

	for (w = api->waiters; w; w = wn) {
		wn = w->next;
		if (now >= w->deadline_ms)
			waiter_check(w, true);
	}
	for (struct follower *f = api->followers; f; f = f->next)
		follower_check(f);
}

void api_notify_cluster(struct api *api, int64_t job_id)
{
	struct waiter *w, *wn;

	if (!api)
		return;
	for (w = api->waiters; w; w = wn) {
		wn = w->next;
		if (w->kind == WAIT_CLUSTER && w->job == job_id)
			waiter_check(w, false);
	}
}

void api_notify_jobs(struct api *api)
{
	struct waiter *w, *wn;

	if (!api)
		return;
	for (w = api->waiters; w; w = wn) {
		wn = w->next;
		if (w->kind == WAIT_JOB)
			waiter_check(w, false);
	}
}

void api_notify_logs(struct api *api, int64_t job_id)
{
	if (!api)
		return;
	for (struct follower *f = api->followers; f; f = f->next)
		if (f->job == job_id)
			follower_check(f);
}

/* ---- log streaming ---- */

static ssize_t follower_read(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct follower *f = arg;
	ssize_t n;

	(void)pos;
	if (f->offset + f->sent >= f->end)
		return HTTP_STREAM_END;
	if (max > f->end - (f->offset + f->sent))
		max = (size_t)(f->end - (f->offset + f->sent));
	if (f->fd < 0 && f->path)
		f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd >= 0) {
		n = pread(f->fd, buf, max, (off_t)(f->offset + f->sent));
		if (n > 0) {
			f->sent += (uint64_t)n;
			return n;
		}
		if (n < 0)
			return HTTP_STREAM_ERROR;
	}
	if (!f->follow || f->ended)
		return HTTP_STREAM_END;
	f->waiting = true;
	return HTTP_STREAM_WAIT;
}

static void follower_free(void *arg)
{
	struct follower *f = arg;
	struct api *api = f->api;

	if (api) {
		if (f->prev)
			f->prev->next = f->next;
		else
			api->followers = f->next;
		if (f->next)
			f->next->prev = f->prev;
		tick_update(api);
	}
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f);
}

static void route_logs(struct api *api, struct http_request *req, int64_t id, const char *role,
                       const char *index_s)
{
	struct weir_error err = {0};
	int64_t index, attempt = API_ATTEMPT_CURRENT;
	const char *q;
	char *path = NULL;
	bool ended = false;
	struct follower *f;
	struct stat st;
	struct log_window win;
	uint64_t size = 0, start, end;
	char msg[200], name[128];

	if (!api_role_name_ok(role)) {
		respond_status(req, 400, "role: expected a name like worker ([a-z][a-z0-9_-]*)");
		return;
	}
	if (api_parse_int(index_s, 0, 1000000, &index) < 0) {
		respond_status(req, 400, "index: expected a whole number >= 0");
		return;
	}
	if ((q = http_request_query(req, "attempt")) &&
	    api_parse_int(q, 1, 1000000, &attempt) < 0) {
		respond_status(req, 400, "attempt: expected a whole number >= 1");
		return;
	}
	if (log_window_parse(req, &win, msg, sizeof msg) < 0) {
		respond_status(req, 400, msg);
		return;
	}
	if (api->ops->log_locate(api->ctx, id, role, (int)index, (int)attempt, &path, &ended,
	                         &err) < 0) {
		http_request_respond_error(req, &err);
		return;
	}
	f = calloc(1, sizeof *f);
	if (!f) {
		free(path);
		respond_status(req, 500, "out of memory");
		return;
	}
	f->api = api;
	f->req = req;
	f->job = id;
	snprintf(f->role, sizeof f->role, "%s", role);
	f->index = (int)index;
	f->attempt = (int)attempt;
	f->path = path;
	q = http_request_query(req, "follow");
	f->follow = q && (!strcmp(q, "true") || !strcmp(q, "1"));
	f->ended = ended;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd >= 0 && fstat(f->fd, &st) == 0)
		size = (uint64_t)st.st_size;
	log_window_resolve(&win, size, &start, &end);
	f->offset = start;
	f->end = end;
	snprintf(name, sizeof name, "job-%lld-%s-%lld.log", (long long)id, role, (long long)index);
	log_window_headers(req, &win, size, start, ended, name);
	f->next = api->followers;
	if (api->followers)
		api->followers->prev = f;
	api->followers = f;
	tick_update(api);
	http_request_respond_stream(req, 200, "text/plain; charset=utf-8", follower_read, f,
	                            follower_free);
}

/* ---- routes ---- */

static void route_cluster(struct api *api, struct http_request *req)
{
	struct weir_error err = {0};
	int64_t job, attempt, wait = 0;
	bool ready = false;
	json_t *r;
	const char *q;

	if (api_parse_int(http_request_query(req, "job"), 1, INT64_MAX, &job) < 0 ||
	    api_parse_int(http_request_query(req, "attempt"), 1, 1000000, &attempt) < 0) {
		respond_status(req, 400,
		               "launch/cluster: expected ?job=ID&attempt=N[&wait=SECONDS]");
		return;
	}
	if ((q = http_request_query(req, "wait")) && api_parse_int(q, 0, MAX_WAIT_S, &wait) < 0) {
		respond_status(req, 400, "wait: expected seconds 0..600");
		return;
	}
	r = api->ops->launch_cluster(api->ctx, job, (int)attempt, &ready, &err);
	if (r || err.kind != WEIR_OK) {
		respond_result(req, 200, r, &err);
		return;
	}
	if (wait == 0) {
		http_request_respond_json(req, 200, json_pack("{s:b}", "ready", 0));
		return;
	}
	struct waiter *w = calloc(1, sizeof *w);
	if (!w) {
		respond_status(req, 500, "out of memory");
		return;
	}
	w->req = req;
	w->kind = WAIT_CLUSTER;
	w->job = job;
	w->attempt = (int)attempt;
	w->deadline_ms = clock_mono_ms() + wait * 1000;
	waiter_add(api, w);
}

/* GET /jobs/{id}[?wait=S&since=VERSION]: answers at once unless the job is
 * still at `since`; then when it changes or after S seconds. */
static void route_get_job(struct api *api, struct http_request *req, int64_t id)
{
	struct weir_error err = {0};
	const char *since = http_request_query(req, "since");
	const char *wait_text = http_request_query(req, "wait");
	int64_t wait = 0;
	char version[17];

	if (wait_text && api_parse_int(wait_text, 0, MAX_WAIT_S, &wait) < 0) {
		respond_status(req, 400, "wait: expected whole seconds from 0 to 600");
		return;
	}
	json_t *r = api->ops->get_job(api->ctx, id, &err);
	if (!r) {
		respond_result(req, 200, NULL, &err);
		return;
	}
	job_add_version(r, version);
	if (wait == 0 || !since || strcmp(since, version) != 0) {
		respond_result(req, 200, r, &err);
		return;
	}
	json_decref(r);
	struct waiter *w = calloc(1, sizeof *w);
	if (!w) {
		respond_status(req, 500, "out of memory");
		return;
	}
	w->req = req;
	w->kind = WAIT_JOB;
	w->job = id;
	snprintf(w->since, sizeof w->since, "%s", version);
	w->deadline_ms = clock_mono_ms() + wait * 1000;
	waiter_add(api, w);
}

typedef json_t *(*body_op_fn)(void *ctx, json_t *body, struct weir_error *err);

static void route_body_op(struct api *api, struct http_request *req, body_op_fn op, int status)
{
	struct weir_error err = {0};
	json_t *body = parse_body(req, &err);
	json_t *r = NULL;

	if (body)
		r = op(api->ctx, body, &err);
	json_decref(body);
	respond_result(req, status, r, &err);
}

static bool method_is(struct http_request *req, const char *m)
{
	return !strcmp(http_request_method(req), m);
}

static void no_method(struct http_request *req)
{
	char msg[256];
	snprintf(msg, sizeof msg, "%s %s: method not allowed", http_request_method(req),
	         http_request_path(req));
	respond_status(req, 405, msg);
}

static void no_route(struct http_request *req)
{
	char msg[512];
	snprintf(msg, sizeof msg, "%s %.300s: no such route (see docs/api.md)",
	         http_request_method(req), http_request_path(req));
	respond_status(req, 404, msg);
}

static int split_path(char *path, char **seg, int max)
{
	int n = 0;
	char *save;
	for (char *s = strtok_r(path, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
		if (n == max)
			return -1;
		seg[n++] = s;
	}
	return n;
}

static void route_jobs(struct api *api, struct http_request *req, char **seg, int n)
{
	struct weir_error err = {0};
	int64_t id;
	json_t *r;

	if (n == 1) {
		if (method_is(req, "POST")) {
			route_body_op(api, req, api->ops->submit, 201);
		} else if (method_is(req, "GET")) {
			const char *state = http_request_query(req, "state");
			const char *lim = http_request_query(req, "limit");
			int64_t limit = 0;
			if (lim && api_parse_int(lim, 0, 1000000, &limit) < 0) {
				respond_status(req, 400, "limit: expected a whole number >= 0");
				return;
			}
			if (state && !*state)
				state = NULL;
			r = api->ops->list_jobs(api->ctx, state, (int)limit, &err);
			respond_result(req, 200, r, &err);
		} else {
			no_method(req);
		}
		return;
	}
	if (api_parse_int(seg[1], 1, INT64_MAX, &id) < 0) {
		char msg[200];
		snprintf(msg, sizeof msg, "job id: expected a whole number >= 1, got \"%.100s\"",
		         seg[1]);
		respond_status(req, 400, msg);
		return;
	}
	if (n == 2) {
		if (method_is(req, "GET")) {
			route_get_job(api, req, id);
			return;
		} else if (method_is(req, "DELETE"))
			r = api->ops->kill_job(api->ctx, id, &err);
		else {
			no_method(req);
			return;
		}
		respond_result(req, method_is(req, "DELETE") ? 202 : 200, r, &err);
		return;
	}
	if (!method_is(req, "GET")) {
		no_method(req);
		return;
	}
	if (n == 3 && !strcmp(seg[2], "tasks")) {
		const char *a = http_request_query(req, "attempt");
		int64_t attempt = API_ATTEMPT_CURRENT;
		if (a && !strcmp(a, "all"))
			attempt = API_ATTEMPT_ALL;
		else if (a && api_parse_int(a, 1, 1000000, &attempt) < 0) {
			respond_status(req, 400, "attempt: expected a number >= 1 or \"all\"");
			return;
		}
		r = api->ops->tasks(api->ctx, id, (int)attempt, &err);
		respond_result(req, 200, r, &err);
	} else if (n == 3 && !strcmp(seg[2], "events")) {
		r = api->ops->events(api->ctx, id, &err);
		respond_result(req, 200, r, &err);
	} else if (n == 6 && !strcmp(seg[2], "tasks") && !strcmp(seg[5], "logs")) {
		route_logs(api, req, id, seg[3], seg[4]);
	} else {
		no_route(req);
	}
}

/* POST /launch/log?job&role&index&attempt&offset: a chunk of a task's log
 * from its launcher (--log-to-server); api/log_append.h says where it goes. */
static void route_launch_log(struct api *api, struct http_request *req)
{
	struct weir_error err = {0};
	int64_t job, index, attempt, offset;
	const char *role = http_request_query(req, "role");
	const char *data;
	char *path = NULL;
	bool ended;
	uint64_t size = 0;
	size_t len;
	int r;

	if (api_parse_int(http_request_query(req, "job"), 1, INT64_MAX, &job) < 0 || !role ||
	    !api_role_name_ok(role) ||
	    api_parse_int(http_request_query(req, "index"), 0, 1000000, &index) < 0 ||
	    api_parse_int(http_request_query(req, "attempt"), 1, 1000000, &attempt) < 0 ||
	    api_parse_int(http_request_query(req, "offset"), 0, INT64_MAX / 2, &offset) < 0) {
		respond_status(req, 400,
		               "launch/log: expected ?job=ID&role=NAME&index=N&attempt=N&offset=BYTES "
		               "and the bytes as the body");
		return;
	}
	if (api->ops->log_locate(api->ctx, job, role, (int)index, (int)attempt, &path, &ended,
	                         &err) < 0) {
		http_request_respond_error(req, &err);
		return;
	}
	data = http_request_body(req, &len);
	r = log_append_at(path, (uint64_t)offset, data, len, &size, &err);
	free(path);
	if (r < 0) {
		http_request_respond_error(req, &err);
		return;
	}
	if (r > 0) {
		char msg[160];
		snprintf(msg, sizeof msg, "offset %lld: the log has %llu bytes; send from there",
		         (long long)offset, (unsigned long long)size);
		http_request_respond_json(req, 409,
		                          json_pack("{s:s, s:i, s:I}", "error", msg, "status", 409,
		                                    "size", (json_int_t)size));
		return;
	}
	http_request_respond_json(req, 200, json_pack("{s:I}", "size", (json_int_t)size));
}

static void route_launch(struct api *api, struct http_request *req, char **seg, int n)
{
	if (n != 2) {
		no_route(req);
		return;
	}
	if (!strcmp(seg[1], "cluster")) {
		if (!method_is(req, "GET"))
			no_method(req);
		else
			route_cluster(api, req);
		return;
	}
	if (!strcmp(seg[1], "log")) {
		if (!method_is(req, "POST"))
			no_method(req);
		else
			route_launch_log(api, req);
		return;
	}
	body_op_fn op = NULL;
	if (!strcmp(seg[1], "register"))
		op = api->ops->launch_register;
	else if (!strcmp(seg[1], "started"))
		op = api->ops->launch_started;
	else if (!strcmp(seg[1], "exited"))
		op = api->ops->launch_exited;
	if (!op)
		no_route(req);
	else if (!method_is(req, "POST"))
		no_method(req);
	else
		route_body_op(api, req, op, 200);
}

/* The Bearer token, or a configured user with HTTP Basic. */
static bool request_auth_ok(struct api *api, struct http_request *req)
{
	const char *h = http_request_header(req, "Authorization");

	return api_auth_ok(h, api->token) || basic_auth_check(api->basic, h);
}

/* The web UI's session cookie; a state-changing request must bring the
 * session's CSRF token too, else it is answered 403 here. */
static enum ui_auth_result cookie_auth(struct api *api, struct http_request *req,
                                       const char *first)
{
	enum ui_auth_result r = ui_auth_cookie(api->ui, req);

	if (r != UI_AUTH_BAD_CSRF)
		return r;
	if (airflow_owns(first))
		airflow_respond_problem(req, 403, "missing or wrong CSRF token");
	else
		respond_status(req, 403, "missing or wrong CSRF token: send the session's "
		                         "csrf_token in the X-CSRF-Token header");
	return r;
}

void api_handle(struct http_request *req, void *arg)
{
	struct api *api = arg;
	const char *p = http_request_path(req);
	char *copy = NULL;
	char *seg[MAX_SEGMENTS];
	char why[300];
	enum ui_auth_result auth;
	int n;

	if (!ui_auth_method_safe(http_request_method(req)) &&
	    !ui_auth_origin_ok(req, why, sizeof why)) {
		if (strncmp(p, "/api/v1/jobs", 12) && strncmp(p, "/api/v1/launch", 14))
			airflow_respond_problem(req, 403, why);
		else
			respond_status(req, 403, why);
		return;
	}
	if (ui_auth_owns(p)) {
		ui_auth_handle(api->ui, req, api->token, api->basic);
		return;
	}
	if (ui_assets_owns(p)) {
		ui_assets_handle(req);
		return;
	}
	if (strncmp(p, "/api/v1/", 8) && strcmp(p, "/api/v1")) {
		no_route(req);
		return;
	}
	copy = strdup(p + 7);
	if (!copy) {
		respond_status(req, 500, "out of memory");
		return;
	}
	n = split_path(copy, seg, MAX_SEGMENTS);
	if (n <= 0) {
		/* too deep: seg[] holds the first MAX_SEGMENTS segments */
		if (n < 0 && airflow_owns(seg[0]))
			airflow_respond_problem(req, 404, "no such route (see docs/api.md)");
		else
			no_route(req);
		goto out;
	}
	if (n == 1 && !strcmp(seg[0], "health")) {
		if (!method_is(req, "GET")) {
			no_method(req);
		} else {
			json_t *h = json_pack("{s:s, s:s}", "status", "ok", "version", API_VERSION);
			if (h)
				airflow_health_add(h);
			http_request_respond_json(req, 200, h);
		}
		goto out;
	}
	if (!request_auth_ok(api, req) && (auth = cookie_auth(api, req, seg[0])) != UI_AUTH_OK) {
		if (auth == UI_AUTH_BAD_CSRF)
			goto out;
		/* a Basic challenge to the UI's fetch() would pop the browser's
		 * own password dialog: the UI has its login page */
		http_request_add_header(req, "WWW-Authenticate",
		                        basic_auth_count(api->basic) && !ui_auth_from_script(req)
		                            ? "Basic realm=\"weir\""
		                            : "Bearer realm=\"weir\"");
		if (airflow_owns(seg[0]))
			airflow_respond_problem(
			    req, 401,
			    "missing or wrong credentials: send \"Authorization: Bearer TOKEN\" "
			    "or HTTP Basic auth of a user in the server's configuration");
		else
			respond_status(
			    req, 401,
			    "missing or wrong token: send \"Authorization: Bearer TOKEN\" with "
			    "the token from the server's home (HOME/token) or WEIR_TOKEN");
		goto out;
	}
	if (airflow_owns(seg[0]))
		airflow_handle(api->dag_ops, api->dag_ctx, req, seg, n);
	else if (!strcmp(seg[0], "jobs"))
		route_jobs(api, req, seg, n);
	else if (!strcmp(seg[0], "launch"))
		route_launch(api, req, seg, n);
	else
		no_route(req);
out:
	free(copy);
}

void api_set_dag_ops(struct api *api, const struct dag_api_ops *ops, void *ctx)
{
	api->dag_ops = ops;
	api->dag_ctx = ctx;
}

int api_set_users(struct api *api, const struct basic_user *users, size_t n, struct weir_error *err)
{
	struct basic_auth *ba = basic_auth_create(users, n, err);

	if (!ba)
		return -1;
	basic_auth_destroy(api->basic);
	api->basic = ba;
	return 0;
}

/* ---- lifetime ---- */

struct api *api_create(uv_loop_t *loop, const char *token, const struct api_ops *ops, void *ctx)
{
	struct api *api = calloc(1, sizeof *api);

	if (!api)
		return NULL;
	api->token = strdup(token ? token : "");
	if (!api->token) {
		free(api);
		return NULL;
	}
	api->ui = ui_auth_create(loop);
	if (!api->ui) {
		free(api->token);
		free(api);
		return NULL;
	}
	api->loop = loop;
	api->ops = ops;
	api->ctx = ctx;
	uv_timer_init(loop, &api->tick);
	api->tick.data = api;
	return api;
}

static void api_closed(uv_handle_t *h)
{
	free(h->data);
}

void api_destroy(struct api *api)
{
	if (!api)
		return;
	while (api->waiters) {
		struct waiter *w = api->waiters;
		http_request_respond_json(
		    w->req, 503,
		    json_pack("{s:s, s:i}", "error", "the server is stopping", "status", 503));
		waiter_remove(w);
	}
	/* followers are freed by their responses; make them forget us */
	for (struct follower *f = api->followers; f; f = f->next) {
		f->api = NULL;
		f->ended = true;
		f->follow = false;
	}
	api->followers = NULL;
	uv_timer_stop(&api->tick);
	ui_auth_destroy(api->ui);
	basic_auth_destroy(api->basic);
	free(api->token);
	uv_close((uv_handle_t *)&api->tick, api_closed);
}
