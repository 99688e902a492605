/* event_log_routes.c: recording a request in the event log, and Airflow's
 * /eventLogs routes over it (event_log_routes.h).
 */
#include "api/airflow/event_log_routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/airflow/airflow_request.h"
#include "api/reply.h"
#include "api/request.h"
#include "lib/clock.h"
#include "lib/json_util.h"
#include "lib/log.h"

/* Bodies larger than this are not parsed for their field names. */
#define FIELDS_BODY_MAX (256 * 1024)
#define FIELDS_MAX 64
#define EVENTS_MAX 32

/* ---- recording ---- */

static bool method_changes(const char *m)
{
	return m && (!strcasecmp(m, "POST") || !strcasecmp(m, "PUT") || !strcasecmp(m, "PATCH") ||
	             !strcasecmp(m, "DELETE"));
}

/* The event of a request, or NULL when the log does not keep it; `own`
 * receives a name made for a route without one. */
static const char *event_of(const char *method, const char *path, int route, char *own, size_t size)
{
	const char *e;

	if (!method_changes(method))
		return NULL;
	e = route_table_event(route, method);
	if (e)
		return *e ? e : NULL; /* "": a route that changes nothing (launch, batch lists) */
	if (strncmp(path, "/api/v1/", 8))
		return NULL;
	snprintf(own, size, "api.%s %s", method, route_table_template(route));
	return own;
}

/* A top-level string of `o` whose value is an identifier (never a secret). */
static const char *id_field(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s && *s && strlen(s) <= AIRFLOW_ID_MAX ? s : NULL;
}

/* extra's `fields`, and the identifiers the body names. */
static json_t *body_fields(struct http_request *req, json_t *extra, const char **run_id,
                           const struct route_match *m)
{
	size_t len;
	const char *body = http_request_body(req, &len);
	json_t *j, *names;
	const char *key;
	json_t *v;
	size_t n = 0;

	if (!len || len > FIELDS_BODY_MAX)
		return NULL;
	j = json_loadb(body, len, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	names = json_array();
	json_object_foreach(j, key, v)
	{
		if (n++ == FIELDS_MAX)
			break;
		json_array_append_new(names, json_string(key));
	}
	json_object_set_new(extra, "fields", names);
	if (!*run_id && id_field(j, "dag_run_id"))
		*run_id = id_field(j, "dag_run_id");
	if (id_field(j, "connection_id") && !route_match_param(m, "connection_id"))
		json_util_set_string(extra, "connection_id", id_field(j, "connection_id"));
	if (strstr(route_table_template(m->route), "/variables") && id_field(j, "key") &&
	    !route_match_param(m, "variable_key"))
		json_util_set_string(extra, "variable_key", id_field(j, "key"));
	return j; /* the caller keeps it while *run_id points into it */
}

static bool param_int(const struct route_match *m, const char *name, int *out)
{
	const char *s = route_match_param(m, name);
	int64_t v;

	if (!s || api_parse_int(s, -1, 1000000000L, &v) < 0)
		return false;
	*out = (int)v;
	return true;
}

/* A path's id, "~" (every one) read as none. */
static const char *path_id(const struct route_match *m, const char *name)
{
	const char *s = route_match_param(m, name);

	return s && strcmp(s, "~") ? s : NULL;
}

void event_log_note(const struct observe_api_ops *ops, void *ctx, struct http_request *req,
                    const struct route_match *m, int status)
{
	struct event_log_row row = {0};
	struct weir_error err = {0};
	char own[200], peer[80];
	const char *method = http_request_method(req), *path = http_request_path(req);
	const char *event, *run_id, *user = http_request_user(req), *s;
	json_t *extra, *body = NULL, *answer = http_request_answer(req);
	int64_t job_id;

	if (!ops || !ops->event_record)
		return;
	event = event_of(method, path, m->route, own, sizeof own);
	if (!event)
		return;
	extra = json_object();
	if (!extra)
		return;
	run_id = path_id(m, "dag_run_id");
	json_util_set_string(extra, "method", method);
	json_util_set_string(extra, "path", path);
	json_util_set_string(extra, "route", route_table_template(m->route));
	json_object_set_new(extra, "status", json_integer(status));
	json_util_set_string(extra, "peer", http_request_peer(req, peer, sizeof peer));
	body = body_fields(req, extra, &run_id, m);
	/* what the answer names: a new job's id, a new run's id */
	if ((s = route_match_param(m, "job_id")) && api_parse_int(s, 1, INT64_MAX, &job_id) == 0)
		json_object_set_new(extra, "job_id", json_integer(job_id));
	else if (status < 300 && !strcmp(route_table_template(m->route), "/api/v1/jobs") &&
	         json_is_integer(json_object_get(answer, "id")))
		json_object_set(extra, "job_id", json_object_get(answer, "id"));
	if (!run_id && status < 300 && path_id(m, "dag_id"))
		run_id = id_field(answer, "dag_run_id");
	if ((s = route_match_param(m, "connection_id")))
		json_util_set_string(extra, "connection_id", s);
	if ((s = route_match_param(m, "variable_key")))
		json_util_set_string(extra, "variable_key", s);
	if ((s = route_match_param(m, "pool_name")))
		json_util_set_string(extra, "pool_name", s);

	row.when_ms = clock_now_ms();
	row.event = (char *)event;
	row.owner = user && *user ? (char *)user : NULL;
	row.dag_id = (char *)path_id(m, "dag_id");
	row.task_id = (char *)path_id(m, "task_id");
	row.run_id = (char *)run_id;
	row.has_map_index = param_int(m, "map_index", &row.map_index);
	row.has_try_number = param_int(m, "task_try_number", &row.try_number);
	row.extra = json_dumps(extra, JSON_COMPACT | JSON_SORT_KEYS);
	if (!row.extra)
		log_warn("event log: out of memory recording %s %s", method, path);
	else if (ops->event_record(ctx, &row, &err) < 0 && err.kind != WEIR_E_UNAVAILABLE)
		/* unavailable: a full disk, which the store logs once, not at
		 * every request */
		log_warn("event log: %s %s not recorded: %s", method, path, err.msg);
	free(row.extra);
	json_decref(extra);
	json_decref(body);
}

/* ---- the routes ---- */

static json_t *row_json(const struct event_log_row *r)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "event_log_id", json_integer(r->id));
	json_object_set_new(o, "when", json_util_time_airflow(r->when_ms));
	json_util_set_string(o, "dag_id", r->dag_id);
	json_util_set_string(o, "task_id", r->task_id);
	json_util_set_string(o, "run_id", r->run_id);
	json_object_set_new(o, "map_index",
	                    r->has_map_index ? json_integer(r->map_index) : json_null());
	json_object_set_new(o, "try_number",
	                    r->has_try_number ? json_integer(r->try_number) : json_null());
	json_util_set_string(o, "event", r->event);
	json_object_set_new(o, "execution_date",
	                    r->has_execution_date ? json_util_time_airflow(r->execution_date)
	                                          : json_null());
	json_util_set_string(o, "owner", r->owner);
	json_util_set_string(o, "extra", r->extra);
	return o;
}

/* A whole number parameter >= min, or a 400. */
static bool query_int(struct http_request *req, const char *key, int64_t min, bool *has, int *out)
{
	const char *s = http_request_query(req, key);
	int64_t v;

	*has = false;
	if (!s || !*s)
		return true;
	if (api_parse_int(s, min, 1000000000L, &v) < 0) {
		reply_problemf(req, 400, "%s \"%.40s\": expected a whole number >= %lld", key, s,
		               (long long)min);
		return false;
	}
	*has = true;
	*out = (int)v;
	return true;
}

static bool query_time(struct http_request *req, const char *key, int64_t *out)
{
	const char *s = http_request_query(req, key);

	*out = 0;
	if (!s || !*s)
		return true;
	if (clock_parse_iso(s, out) < 0) {
		reply_problemf(req, 400,
		               "%s \"%.60s\": expected an ISO 8601 date-time "
		               "(2024-01-31T06:00:00+00:00)",
		               key, s);
		return false;
	}
	return true;
}

/* A comma-separated list of events into v (pointers into buf). */
static bool query_events(struct http_request *req, const char *key, char *buf, size_t size,
                         const char **v, size_t *n)
{
	const char *s = http_request_query(req, key);
	char *save = NULL;

	*n = 0;
	if (!s || !*s)
		return true;
	if (strlen(s) >= size) {
		reply_problemf(req, 400, "%s: too long (at most %zu bytes)", key, size - 1);
		return false;
	}
	snprintf(buf, size, "%s", s);
	for (char *e = strtok_r(buf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		while (*e == ' ')
			e++;
		if (!*e)
			continue;
		if (*n == EVENTS_MAX) {
			reply_problemf(req, 400, "%s: at most %d events", key, EVENTS_MAX);
			return false;
		}
		v[(*n)++] = e;
	}
	return true;
}

static const char *query_str(struct http_request *req, const char *key)
{
	const char *s = http_request_query(req, key);

	return s && *s ? s : NULL;
}

static void route_list(const struct observe_api_ops *ops, void *ctx, struct http_request *req)
{
	static const char *const allowed[] = {
	    "limit",  "offset",    "order_by",        "dag_id",          "task_id",
	    "run_id", "map_index", "try_number",      "event",           "owner",
	    "before", "after",     "included_events", "excluded_events", NULL};
	struct event_log_query q = {0};
	struct weir_error err = {0};
	struct event_log_row *rows = NULL;
	const char *inc[EVENTS_MAX], *exc[EVENTS_MAX];
	char inc_buf[2048], exc_buf[2048];
	size_t n = 0;
	int64_t total = 0;
	json_t *list, *out;

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &q.limit, &q.offset) ||
	    !query_int(req, "map_index", -1, &q.has_map_index, &q.map_index) ||
	    !query_int(req, "try_number", 0, &q.has_try_number, &q.try_number) ||
	    !query_time(req, "before", &q.before_ms) || !query_time(req, "after", &q.after_ms) ||
	    !query_events(req, "included_events", inc_buf, sizeof inc_buf, inc, &q.n_included) ||
	    !query_events(req, "excluded_events", exc_buf, sizeof exc_buf, exc, &q.n_excluded))
		return;
	q.included = inc;
	q.excluded = exc;
	q.dag_id = query_str(req, "dag_id");
	q.task_id = query_str(req, "task_id");
	q.run_id = query_str(req, "run_id");
	q.event = query_str(req, "event");
	q.owner = query_str(req, "owner");
	q.order_by = query_str(req, "order_by");
	if (ops->event_list(ctx, &q, &rows, &n, &total, &err) < 0) {
		reply_problem_error(req, &err);
		return;
	}
	list = json_array();
	for (size_t i = 0; list && i < n; i++)
		json_array_append_new(list, row_json(&rows[i]));
	event_log_rows_free(rows, n);
	out = json_pack("{s:o?, s:I}", "event_logs", list, "total_entries", (json_int_t)total);
	if (!out) {
		reply_problem(req, 500, "out of memory");
		return;
	}
	reply_problem_result(req, out, NULL);
}

void event_log_routes_handle(const struct observe_api_ops *ops, void *ctx, struct http_request *req,
                             char **seg, int n)
{
	struct weir_error err = {0};
	struct event_log_row row;
	int64_t id;
	json_t *o;

	if (!ops || !ops->event_list || !ops->event_get) {
		reply_problem(req, 503, "this server keeps no event log");
		return;
	}
	if (n > 2) {
		reply_problem_no_route(req);
		return;
	}
	if (!request_method_is(req, "GET")) {
		reply_problem_no_method(req);
		return;
	}
	if (n == 1) {
		route_list(ops, ctx, req);
		return;
	}
	if (api_parse_int(seg[1], 1, INT64_MAX, &id) < 0) {
		reply_problemf(req, 400, "event_log_id \"%.40s\": expected a whole number >= 1",
		               seg[1]);
		return;
	}
	if (ops->event_get(ctx, id, &row, &err) < 0) {
		reply_problem_error(req, &err);
		return;
	}
	o = row_json(&row);
	event_log_row_release(&row);
	if (!o)
		reply_problem(req, 500, "out of memory");
	else
		reply_problem_result(req, o, NULL);
}
