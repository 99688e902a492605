/* api.c: the router (api.h): origin and credential checks, then the route
 * table's dispatch (route_dispatch(), routes.c); the long polls and the log
 * streamer the groups share.
 */
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/airflow/conn_test_route.h"
#include "api/auth_gate.h"
#include "api/event_log_note.h"
#include "api/jobs_routes.h"
#include "api/launch_routes.h"
#include "api/logs/log_stream.h"
#include "api/long_poll.h"
#include "api/metrics_route.h"
#include "api/person_token.h"
#include "api/reply.h"
#include "api/route_ctx.h"
#include "api/route_table.h"
#include "api/ui/ui_auth.h"
#include "api/users_api.h"

#define MAX_SEGMENTS 10

struct api {
	struct route_ctx rc; /* what the route table's handlers answer through */
};

/* Whether the routes under this first segment answer errors as problems. */
static bool speaks_problems(const char *first)
{
	bool problems;

	route_table_group(first, &problems);
	return problems;
}

/* A person's token (weir tokens, api/person_token.h) in a Bearer header:
 * true with the request's user, token name and role (its user's: a
 * Viewer's token is a Viewer) set, when it is live and its user still
 * known; looked up by its hash at every request, so a revocation or an
 * expiry holds from the next one. */
static bool person_token_ok(struct api *api, struct http_request *req, const char *h)
{
	const struct users_api_ops *ops = api->rc.users_ops;
	char hash[PERSON_TOKEN_HASH_LEN + 1], user[64], name[64];
	enum weir_role role;

	if (!ops || !h || strncasecmp(h, "Bearer ", 7))
		return false;
	h += 7;
	while (*h == ' ')
		h++;
	if (!person_token_shape(h))
		return false;
	person_token_hash(h, hash);
	if (ops->token_lookup(api->rc.users_ctx, hash, user, name, sizeof user) < 0)
		return false;
	role = auth_gate_role(api->rc.gate, user);
	if (role == ROLE_NONE) /* its user was removed from the configuration */
		return false;
	http_request_set_user(req, user);
	http_request_set_token_name(req, name);
	http_request_set_role(req, role);
	return true;
}

/* The Bearer token, a person's token, or a user with HTTP Basic; who it
 * was is noted on the request (the event log's owner; a person's token's
 * name beside it), and the role it has (the home's token's is Admin; a
 * user's its own, a person's token its user's), which route_dispatch()
 * checks.  A Basic password is
 * checked off the loop (api/auth_gate.h): AUTH_GATE_WAIT, the request
 * suspended and handed to api_handle again with the verdict;
 * AUTH_GATE_THROTTLED and AUTH_GATE_BUSY are answered here. */
static enum auth_gate_result request_auth(struct api *api, struct http_request *req,
                                          const char *first)
{
	const char *h = http_request_header(req, "Authorization");
	char user[64], msg[160];
	int64_t retry_s = 1;
	enum auth_gate_result r;

	if (api_auth_ok(h, api->rc.token)) {
		http_request_set_user(req, "token");
		http_request_set_role(req, ROLE_ADMIN);
		return AUTH_GATE_OK;
	}
	if (person_token_ok(api, req, h))
		return AUTH_GATE_OK;
	r = auth_gate_basic(api->rc.gate, req, h, &retry_s);
	if (r == AUTH_GATE_OK && basic_auth_header_user(h, user, sizeof user)) {
		http_request_set_user(req, user);
		http_request_set_role(req, auth_gate_role(api->rc.gate, user));
	}
	if (r != AUTH_GATE_THROTTLED && r != AUTH_GATE_BUSY)
		return r;
	snprintf(msg, sizeof msg, "%lld", (long long)retry_s);
	http_request_add_header(req, "Retry-After", msg);
	snprintf(msg, sizeof msg,
	         r == AUTH_GATE_THROTTLED
	             ? "too many password checks from this address: try again in %lld s"
	             : "too many password checks waiting: try again in %lld s",
	         (long long)retry_s);
	if (speaks_problems(first))
		reply_problem(req, r == AUTH_GATE_THROTTLED ? 429 : 503, msg);
	else
		reply_status(req, r == AUTH_GATE_THROTTLED ? 429 : 503, msg);
	return r;
}

/* The web UI's session cookie; a state-changing request must bring the
 * session's CSRF token too, else it is answered 403 here. */
static enum ui_auth_result cookie_auth(struct api *api, struct http_request *req, const char *first)
{
	enum ui_auth_result r = ui_auth_cookie(api->rc.ui, req);

	/* a user's session has its user's role now: a user deleted (or removed
	 * from the configuration) or given another role since the login is
	 * seen from the next request; a token's session is the home token's */
	if (r == UI_AUTH_OK && strcmp(http_request_user(req), "token")) {
		enum weir_role role = auth_gate_role(api->rc.gate, http_request_user(req));

		if (role == ROLE_NONE) {
			http_request_set_user(req, NULL);
			http_request_set_role(req, ROLE_NONE);
			return UI_AUTH_NONE;
		}
		http_request_set_role(req, role);
	}
	if (r != UI_AUTH_BAD_CSRF)
		return r;
	if (speaks_problems(first))
		reply_problem(req, 403, "missing or wrong CSRF token");
	else
		reply_status(req, 403,
		             "missing or wrong CSRF token: send the session's "
		             "csrf_token in the X-CSRF-Token header");
	return r;
}

/* 401, with a challenge the client can answer. */
static void refuse(struct api *api, struct http_request *req, const char *first)
{
	/* a Basic challenge to the UI's fetch() would pop the browser's own
	 * password dialog: the UI has its login page */
	http_request_add_header(req, "WWW-Authenticate",
	                        auth_gate_count(api->rc.gate) && !ui_auth_from_script(req)
	                            ? "Basic realm=\"weir\""
	                            : "Bearer realm=\"weir\"");
	if (speaks_problems(first))
		reply_problem(req, 401,
		              "missing or wrong credentials: send \"Authorization: Bearer TOKEN\" "
		              "(the server's token or a live one of `weir tokens`) or HTTP Basic "
		              "auth of a user of the server");
	else
		reply_status(req, 401,
		             "missing or wrong token: send \"Authorization: Bearer TOKEN\" with "
		             "the token from the server's home (HOME/token) or WEIR_TOKEN");
}

/* The API's credentials or the UI's session: true to go on; false when
 * the request was answered (401, 403, 429, 503) or waits for its check. */
static bool credentials_ok(struct api *api, struct http_request *req, const char *first)
{
	enum auth_gate_result r = request_auth(api, req, first);
	enum ui_auth_result auth;

	if (r == AUTH_GATE_OK)
		return true;
	if (r != AUTH_GATE_NO)
		return false;
	if ((auth = cookie_auth(api, req, first)) == UI_AUTH_OK)
		return true;
	if (auth != UI_AUTH_BAD_CSRF)
		refuse(api, req, first);
	return false;
}

void api_set_config_view(struct api *api, json_t *view)
{
	json_decref(api->rc.config_view);
	api->rc.config_view = view;
}

void api_set_health(struct api *api, api_health_fn fn, void *ctx)
{
	api->rc.health = fn;
	api->rc.health_ctx = ctx;
}

void api_answer_unstored(struct http_request *req, const struct weir_error *err)
{
	const char *m = http_request_method(req), *p = http_request_path(req);
	int status = http_request_pending_status(req);
	char first[64] = "";

	if (!strcmp(m, "GET") || !strcmp(m, "HEAD") || status < 200 || status >= 300)
		return;
	http_request_take_back(req);
	if (!strncmp(p, "/api/v1/", 8))
		snprintf(first, sizeof first, "%.*s", (int)strcspn(p + 8, "/"), p + 8);
	if (speaks_problems(first))
		reply_problem(req, 503, err->msg);
	else
		reply_status(req, 503, err->msg);
}

void api_handle(struct http_request *req, void *arg)
{
	struct api *api = arg;
	const char *p = http_request_path(req);
	const struct route_entry *e;
	struct route_match m;
	char *copy = NULL;
	char *seg[MAX_SEGMENTS];
	char why[300];
	int n;

	if (!ui_auth_method_safe(http_request_method(req)) &&
	    !ui_auth_origin_ok(req, why, sizeof why)) {
		if (strncmp(p, "/api/v1/jobs", 12) && strncmp(p, "/api/v1/launch", 14))
			reply_problem(req, 403, why);
		else
			reply_status(req, 403, why);
		return;
	}
	/* one look-up: the path's row, the entry that answers it */
	route_table_match(p, &m);
	e = route_table_entry(&m, p);
	if (e && (e->flags & ROUTE_ROOT)) {
		if ((e->flags & ROUTE_OPEN) || credentials_ok(api, req, ""))
			route_dispatch(&api->rc, e, &m, req, NULL, 0);
		return;
	}
	if (strncmp(p, "/api/v1/", 8) && strcmp(p, "/api/v1")) {
		reply_no_route(req);
		return;
	}
	if (e && (e->flags & ROUTE_WHOLE_PATH)) { /* read whole: a dataset URI may hold slashes */
		if (credentials_ok(api, req, "datasets"))
			route_dispatch(&api->rc, e, &m, req, NULL, 0);
		return;
	}
	copy = strdup(p + 7);
	if (!copy) {
		reply_status(req, 500, "out of memory");
		return;
	}
	n = request_split_path(copy, seg, MAX_SEGMENTS);
	if (n <= 0) {
		/* too deep: seg[] holds the first MAX_SEGMENTS segments */
		if (n < 0 && speaks_problems(seg[0]))
			reply_problem(req, 404, "no such route (see docs/api.md)");
		else
			reply_no_route(req);
		goto out;
	}
	/* /health, and a task's launcher by its own secret (launch_routes.c),
	 * go without the API's credentials */
	if (e && (e->flags & ROUTE_OPEN)) {
		route_dispatch(&api->rc, e, &m, req, seg, n);
		goto out;
	}
	if (!credentials_ok(api, req, seg[0]))
		goto out;
	if (e)
		route_dispatch(&api->rc, e, &m, req, seg, n);
	else
		reply_no_route(req);
out:
	free(copy);
}

void api_request_done(struct http_request *req, int status, void *arg)
{
	struct api *api = arg;
	struct route_match m;

	route_table_match(http_request_path(req), &m);
	metrics_route_count(http_request_method(req), m.route, status);
	event_log_note(api->rc.observe_ops, api->rc.observe_ctx, req, &m, status);
}

void api_set_observe_ops(struct api *api, const struct observe_api_ops *ops, void *ctx)
{
	api->rc.observe_ops = ops;
	api->rc.observe_ctx = ctx;
}

void api_set_db_clean_ops(struct api *api, const struct db_clean_api_ops *ops, void *ctx)
{
	api->rc.db_clean_ops = ops;
	api->rc.db_clean_ctx = ctx;
}

void api_notify_cluster(struct api *api, int64_t job_id)
{
	if (api)
		launch_routes_notify_cluster(&api->rc.jobs, job_id);
}

void api_notify_jobs(struct api *api)
{
	if (api)
		jobs_routes_notify(&api->rc.jobs);
}

void api_notify_logs(struct api *api, int64_t job_id)
{
	if (api)
		log_stream_notify_job(api->rc.jobs.logs, job_id);
}

void api_set_dag_ops(struct api *api, const struct dag_api_ops *ops, void *ctx)
{
	api->rc.dag_ops = ops;
	api->rc.dag_ctx = ctx;
}

void api_set_notification_ops(struct api *api, const struct notify_api_ops *ops, void *ctx)
{
	api->rc.notify_ops = ops;
	api->rc.notify_ctx = ctx;
}

void api_set_dataset_ops(struct api *api, const struct dataset_api_ops *ops, void *ctx)
{
	api->rc.dataset_ops = ops;
	api->rc.dataset_ctx = ctx;
}

void api_set_secrets_ops(struct api *api, const struct secrets_api_ops *ops, void *ctx)
{
	api->rc.secrets_ops = ops;
	api->rc.secrets_ctx = ctx;
}

void api_set_secure_cookie(struct api *api, bool always)
{
	ui_auth_set_secure_cookie(api->rc.ui, always);
}

void api_set_users_ops(struct api *api, const struct users_api_ops *ops, void *ctx)
{
	api->rc.users_ops = ops;
	api->rc.users_ctx = ctx;
}

int api_set_users(struct api *api, const struct basic_user *users, size_t n, struct weir_error *err)
{
	return auth_gate_set_users(api->rc.gate, users, n, err);
}

struct api *api_create(uv_loop_t *loop, const char *token, const struct api_ops *ops, void *ctx)
{
	struct api *api = calloc(1, sizeof *api);

	if (!api)
		return NULL;
	api->rc.token = strdup(token ? token : "");
	api->rc.version = API_VERSION;
	api->rc.ui = ui_auth_create(loop);
	api->rc.jobs.ops = ops;
	api->rc.jobs.ctx = ctx;
	api->rc.jobs.launch_key = api->rc.token;
	api->rc.jobs.polls = long_polls_create(loop);
	api->rc.jobs.logs = log_stream_create(loop);
	api->rc.conn_tests = conn_tests_create(loop);
	api->rc.gate = auth_gate_create(loop, 0, 0);
	if (!api->rc.token || !api->rc.ui || !api->rc.jobs.polls || !api->rc.jobs.logs ||
	    !api->rc.conn_tests || !api->rc.gate) {
		api_destroy(api);
		return NULL;
	}
	return api;
}

void api_destroy(struct api *api)
{
	if (!api)
		return;
	long_polls_destroy(api->rc.jobs.polls);
	conn_tests_destroy(api->rc.conn_tests);
	log_stream_destroy(api->rc.jobs.logs);
	ui_auth_destroy(api->rc.ui);
	auth_gate_destroy(api->rc.gate);
	json_decref(api->rc.config_view);
	free(api->rc.token);
	free(api);
}
