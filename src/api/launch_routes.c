/* launch_routes.c: the launch protocol's routes, the cluster long poll and
 * shipped log chunks (launch_routes.h), each answered to its task's
 * launcher alone (its launch secret). */
#include "api/launch_routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/dag_admin_api.h"
#include "api/logs/log_stream.h"
#include "api/long_poll.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"
#include "exec/launch_secret.h"
#include "lib/clock.h"

#define MAX_WAIT_S 600

/* ---- who may call ---- */

/* Whether the request's "Authorization: Bearer SECRET" is the launch secret
 * of task ROLE:INDEX of the job's attempt, or the attempt's own (a Slurm
 * script's launchers); role NULL: only the attempt's is known to ask for. */
static bool secret_ok(const struct job_routes *jr, struct http_request *req, int64_t job,
                      const char *role, int index, int attempt)
{
	const char *h = http_request_header(req, "Authorization");
	char want[LAUNCH_SECRET_HEX + 1];
	bool ok = false;

	if (!h)
		return false;
	if (role) {
		launch_secret_task(jr->launch_key, job, role, index, attempt, want);
		ok = api_auth_ok(h, want);
	}
	if (!ok) {
		launch_secret_attempt(jr->launch_key, job, attempt, want);
		ok = api_auth_ok(h, want);
	}
	memset(want, 0, sizeof want);
	return ok;
}

/* Whether the request brings what a launch secret looks like ("Bearer " and
 * 64 characters): checked before a body is read, so that no credential
 * shaped otherwise (none, the API's users) makes the server parse one. */
static bool secret_shaped(struct http_request *req)
{
	const char *h = http_request_header(req, "Authorization");

	return h && !strncmp(h, "Bearer ", 7) && strlen(h + 7) == LAUNCH_SECRET_HEX;
}

/* The answer to a launch call without its task's secret: 403 for the API's
 * own credentials (the token, a user), which are no launcher's; else 401.
 * job 0: the call's task is not read yet. */
static void refuse(const struct job_routes *jr, struct http_request *req, int64_t job,
                   const char *role, int index, int attempt)
{
	const char *h = http_request_header(req, "Authorization");
	char msg[400], task[120] = "";

	if (h && (!strncasecmp(h, "Basic ", 6) || api_auth_ok(h, jr->launch_key))) {
		reply_status(req, 403,
		             "the launch routes answer a task's own launcher only, with its launch "
		             "secret (WEIR_LAUNCH_SECRET); the API token and users' credentials "
		             "are refused here (docs/security.md)");
		return;
	}
	if (job > 0 && role)
		snprintf(task, sizeof task, " for job %lld task %.64s:%d attempt %d",
		         (long long)job, role, index, attempt);
	else if (job > 0)
		snprintf(task, sizeof task, " for job %lld attempt %d", (long long)job, attempt);
	snprintf(msg, sizeof msg,
	         "missing or wrong launch secret%s: send \"Authorization: Bearer SECRET\" with the "
	         "secret the server gave the task's launcher",
	         task);
	http_request_add_header(req, "WWW-Authenticate", "Bearer realm=\"weir-launch\"");
	reply_status(req, 401, msg);
}

/* ---- GET /launch/cluster ---- */

struct cluster_wait {
	const struct api_ops *ops;
	void *ctx;
	int64_t job;
	int attempt;
};

static bool cluster_wait_check(struct http_request *req, void *arg, bool timed_out)
{
	struct cluster_wait *w = arg;
	struct weir_error err = {0};
	bool ready = false;
	json_t *r = w->ops->launch_cluster(w->ctx, w->job, w->attempt, &ready, &err);

	if (r || err.kind != WEIR_OK) {
		reply_result(req, 200, r, &err);
		return true;
	}
	if (timed_out) {
		http_request_respond_json(req, 200, json_pack("{s:b}", "ready", 0));
		return true;
	}
	return false;
}

static void route_cluster(const struct job_routes *jr, struct http_request *req)
{
	struct weir_error err = {0};
	int64_t job, attempt, wait = 0, index = 0;
	const char *role = http_request_query(req, "role");
	bool ready = false;
	struct cluster_wait *w;
	json_t *r;
	const char *q;

	if (api_parse_int(http_request_query(req, "job"), 1, INT64_MAX, &job) < 0 ||
	    api_parse_int(http_request_query(req, "attempt"), 1, 1000000, &attempt) < 0 ||
	    (role && (!api_role_name_ok(role) ||
	              api_parse_int(http_request_query(req, "index"), 0, 1000000, &index) < 0))) {
		reply_status(req, 400,
		             "launch/cluster: expected ?job=ID&attempt=N&role=NAME&index=N"
		             "[&wait=SECONDS]");
		return;
	}
	if (!secret_ok(jr, req, job, role, (int)index, (int)attempt)) {
		refuse(jr, req, job, role, (int)index, (int)attempt);
		return;
	}
	if ((q = http_request_query(req, "wait")) && api_parse_int(q, 0, MAX_WAIT_S, &wait) < 0) {
		reply_status(req, 400, "wait: expected seconds 0..600");
		return;
	}
	r = jr->ops->launch_cluster(jr->ctx, job, (int)attempt, &ready, &err);
	if (r || err.kind != WEIR_OK) {
		reply_result(req, 200, r, &err);
		return;
	}
	if (wait == 0) {
		http_request_respond_json(req, 200, json_pack("{s:b}", "ready", 0));
		return;
	}
	w = calloc(1, sizeof *w);
	if (w) {
		w->ops = jr->ops;
		w->ctx = jr->ctx;
		w->job = job;
		w->attempt = (int)attempt;
	}
	long_polls_add(jr->polls, req, API_WAIT_CLUSTER, job, clock_mono_ms() + wait * 1000,
	               cluster_wait_check, w);
}

void launch_routes_notify_cluster(const struct job_routes *jr, int64_t job)
{
	long_polls_notify(jr->polls, API_WAIT_CLUSTER, job);
}

/* ---- POST /launch/log ---- */

/* A chunk of a task's log from its launcher (--log-to-server);
 * api/log_append.h says where it goes, and its followers wake. */
static void route_log(const struct job_routes *jr, struct http_request *req)
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
		reply_status(
		    req, 400,
		    "launch/log: expected ?job=ID&role=NAME&index=N&attempt=N&offset=BYTES "
		    "and the bytes as the body");
		return;
	}
	if (!secret_ok(jr, req, job, role, (int)index, (int)attempt)) {
		refuse(jr, req, job, role, (int)index, (int)attempt);
		return;
	}
	if (jr->ops->log_locate(jr->ctx, job, role, (int)index, (int)attempt, &path, &ended, &err) <
	    0) {
		http_request_respond_error(req, &err);
		return;
	}
	data = http_request_body(req, &len);
	r = log_stream_append(jr->logs, path, (uint64_t)offset, data, len, &size, &err);
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

/* ---- register, started, exited ---- */

/* A call whose JSON body names its task: op answers it once the request
 * proves to come from that task's launcher. */
static void route_task_call(const struct job_routes *jr, struct http_request *req, const char *name,
                            reply_body_op_fn op)
{
	struct weir_error err = {0};
	json_t *body = request_json_object(req, &err);
	const char *role = json_string_value(json_object_get(body, "role"));
	json_t *j = json_object_get(body, "job"), *i = json_object_get(body, "index"),
	       *a = json_object_get(body, "attempt");
	json_t *r = NULL;

	if (!op) { /* a server without this call (a test's) */
		json_decref(body);
		reply_no_route(req);
		return;
	}
	if (body &&
	    (!json_is_integer(j) || !role || !api_role_name_ok(role) || !json_is_integer(i) ||
	     !json_is_integer(a) || json_integer_value(i) < 0 || json_integer_value(i) > 1000000 ||
	     json_integer_value(a) < 1 || json_integer_value(a) > 1000000)) {
		char msg[200];
		snprintf(msg, sizeof msg,
		         "launch/%s: expected a body naming the task: {\"job\": ID, \"role\": "
		         "NAME, \"index\": N, \"attempt\": N, ...}",
		         name);
		json_decref(body);
		reply_status(req, 400, msg);
		return;
	}
	if (body && !secret_ok(jr, req, json_integer_value(j), role, (int)json_integer_value(i),
	                       (int)json_integer_value(a))) {
		refuse(jr, req, json_integer_value(j), role, (int)json_integer_value(i),
		       (int)json_integer_value(a));
		json_decref(body);
		return;
	}
	if (body)
		r = op(jr->ctx, body, &err);
	json_decref(body);
	reply_result(req, 200, r, &err);
}

/* ---- the operations (api/route_table.c's rows) ---- */

bool launch_admit(const struct job_routes *jr, struct http_request *req)
{
	if (secret_shaped(req))
		return true;
	refuse(jr, req, 0, NULL, 0, 0);
	return false;
}

void launch_cluster(const struct route_ctx *rc, struct http_request *req,
                    const struct route_match *m)
{
	(void)m;
	route_cluster(&rc->jobs, req);
}

void launch_log(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	(void)m;
	route_log(&rc->jobs, req);
}

void launch_register(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m)
{
	(void)m;
	route_task_call(&rc->jobs, req, "register", rc->jobs.ops->launch_register);
}

void launch_started(const struct route_ctx *rc, struct http_request *req,
                    const struct route_match *m)
{
	(void)m;
	route_task_call(&rc->jobs, req, "started", rc->jobs.ops->launch_started);
}

void launch_exited(const struct route_ctx *rc, struct http_request *req,
                   const struct route_match *m)
{
	(void)m;
	route_task_call(&rc->jobs, req, "exited", rc->jobs.ops->launch_exited);
}

/* ---- POST /launch/dagRuns: a running task's read of DAGs' runs ---- */

#define READ_DATES_MAX 1000

/* Whether the request's "Authorization: Bearer KEY" is the read key of
 * task ROLE:INDEX of the job's attempt (exec/launch_secret.h). */
static bool read_key_ok(const struct job_routes *jr, struct http_request *req, int64_t job,
                        const char *role, int index, int attempt)
{
	const char *h = http_request_header(req, "Authorization");
	char want[LAUNCH_SECRET_HEX + 1];
	bool ok;

	if (!h)
		return false;
	launch_secret_read(jr->launch_key, job, role, index, attempt, want);
	ok = api_auth_ok(h, want);
	memset(want, 0, sizeof want);
	return ok;
}

void launch_dag_runs(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m)
{
	static const char usage[] =
	    "launch/dagRuns: expected {\"job\": ID, \"role\": NAME, \"index\": N, "
	    "\"attempt\": N, \"dag_id\": ID, \"logical_dates\": [ISO 8601, ...]} (at most 1000 "
	    "dates)";
	struct weir_error err = {0};
	json_t *body = request_json_object(req, &err), *dates, *v, *r = NULL;
	const char *role = json_string_value(json_object_get(body, "role"));
	const char *dag_id = json_string_value(json_object_get(body, "dag_id"));
	json_t *j = json_object_get(body, "job"), *i = json_object_get(body, "index"),
	       *a = json_object_get(body, "attempt");
	int64_t at[READ_DATES_MAX];
	size_t k, n;

	(void)m;
	if (!body) {
		reply_result(req, 200, NULL, &err);
		return;
	}
	dates = json_object_get(body, "logical_dates");
	n = json_array_size(dates);
	if (!json_is_integer(j) || !role || !api_role_name_ok(role) || !json_is_integer(i) ||
	    !json_is_integer(a) || json_integer_value(i) < 0 || json_integer_value(i) > 1000000 ||
	    json_integer_value(a) < 1 || json_integer_value(a) > 1000000 || !dag_id || !*dag_id ||
	    !json_is_array(dates) || n > READ_DATES_MAX) {
		json_decref(body);
		reply_status(req, 400, usage);
		return;
	}
	if (!read_key_ok(&rc->jobs, req, json_integer_value(j), role, (int)json_integer_value(i),
	                 (int)json_integer_value(a))) {
		json_decref(body);
		http_request_add_header(req, "WWW-Authenticate", "Bearer realm=\"weir-task-read\"");
		reply_status(
		    req, 401,
		    "launch/dagRuns: missing or wrong read key: send \"Authorization: Bearer "
		    "KEY\" with the task's WEIR_TASK_READ_KEY, and the task it was given to");
		return;
	}
	json_array_foreach(dates, k, v)
	{
		if (!json_is_string(v) || clock_parse_iso(json_string_value(v), &at[k]) < 0) {
			char msg[160];
			snprintf(
			    msg, sizeof msg,
			    "launch/dagRuns: logical_dates[%zu]: expected an ISO 8601 time like "
			    "2024-01-31T06:00:00+00:00",
			    k);
			json_decref(body);
			reply_status(req, 400, msg);
			return;
		}
	}
	if (!rc->dag_ops || !rc->dag_ops->admin || !rc->dag_ops->admin->task_read_runs)
		weir_error_set(&err, WEIR_E_UNAVAILABLE, "this server runs no DAGs");
	else
		r = rc->dag_ops->admin->task_read_runs(rc->dag_ctx, dag_id, at, n, &err);
	json_decref(body);
	reply_result(req, 200, r, &err);
}
