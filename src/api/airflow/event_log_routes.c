/* event_log_routes.c: Airflow's /eventLogs routes over the event log
 * (event_log_routes.h); api/event_log_note.c records into it.
 */
#include "api/airflow/event_log_routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/airflow/airflow_request.h"
#include "api/dag_gate.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"
#include "api/route_match.h"
#include "lib/clock.h"
#include "lib/json_util.h"
#include "lib/log.h"
#include "lib/strvec.h"

#define EVENTS_MAX 32

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

/* The DAGs whose access lists refuse the request's reading, onto out (a
 * server without DAGs: none); false after answering 500. */
static bool hidden_dags(const struct route_ctx *rc, struct http_request *req, struct strvec *out)
{
	struct dag_reader rd = airflow_reader(req, ACCESS_READ);
	struct weir_error err = {0};

	if (!rc->dag_ops || !rc->dag_ops->denied_dags ||
	    rc->dag_ops->denied_dags(rc->dag_ctx, &rd, out, &err) == 0)
		return true;
	reply_problem_error(req, &err);
	return false;
}

/* GET /eventLogs: the records of the DAGs the request may read, and those
 * of no DAG. */
static void route_list(const struct route_ctx *rc, struct http_request *req)
{
	const struct observe_api_ops *ops = rc->observe_ops;
	struct strvec hidden = STRVEC_INIT;
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
	int rc_list;
	json_t *list, *out;

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &q.limit, &q.offset) ||
	    !query_int(req, "map_index", -1, &q.has_map_index, &q.map_index) ||
	    !query_int(req, "try_number", 0, &q.has_try_number, &q.try_number) ||
	    !query_time(req, "before", &q.before_ms) || !query_time(req, "after", &q.after_ms) ||
	    !query_events(req, "included_events", inc_buf, sizeof inc_buf, inc, &q.n_included) ||
	    !query_events(req, "excluded_events", exc_buf, sizeof exc_buf, exc, &q.n_excluded) ||
	    !hidden_dags(rc, req, &hidden))
		return;
	q.hidden_dags = (const char *const *)hidden.v;
	q.n_hidden_dags = hidden.n;
	q.included = inc;
	q.excluded = exc;
	q.dag_id = query_str(req, "dag_id");
	q.task_id = query_str(req, "task_id");
	q.run_id = query_str(req, "run_id");
	q.event = query_str(req, "event");
	q.owner = query_str(req, "owner");
	q.order_by = query_str(req, "order_by");
	rc_list = ops->event_list(rc->observe_ctx, &q, &rows, &n, &total, &err);
	strvec_release(&hidden);
	if (rc_list < 0) {
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

/* The event log id of the path, or a 400. */
static bool event_log_id(struct http_request *req, const char *s, int64_t *id)
{
	if (api_parse_int(s, 1, INT64_MAX, id) == 0)
		return true;
	reply_problemf(req, 400, "event_log_id \"%.40s\": expected a whole number >= 1", s);
	return false;
}

void airflow_get_event_logs(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m)
{
	(void)m;
	route_list(rc, req);
}

void airflow_get_event_log(const struct route_ctx *rc, struct http_request *req,
                           const struct route_match *m)
{
	const struct observe_api_ops *ops = rc->observe_ops;
	void *ctx = rc->observe_ctx;
	const char *id_s = route_match_param(m, "event_log_id");
	struct weir_error err = {0};
	struct event_log_row row;
	int64_t id;
	json_t *o;

	if (!event_log_id(req, id_s, &id))
		return;
	if (ops->event_get(ctx, id, &row, &err) < 0) {
		reply_problem_error(req, &err);
		return;
	}
	if (row.dag_id && *row.dag_id && !dag_gate_allows(rc, req, row.dag_id, ACCESS_READ, true)) {
		event_log_row_release(&row);
		return;
	}
	o = row_json(&row);
	event_log_row_release(&row);
	if (!o)
		reply_problem(req, 500, "out of memory");
	else
		reply_problem_result(req, o, NULL);
}

void event_log_unmatched(struct http_request *req, char **seg, int n)
{
	int64_t id;

	if (n == 2 && !request_method_is(req, "GET"))
		reply_problem_no_method(req);
	else if (n == 2)
		event_log_id(req, seg[1], &id);
	else
		reply_problem_no_route(req);
}
