/* calls_routes.c: GET and POST /api/v1/jobs/{id}/calls (calls_routes.h):
 * a batch read and checked record by record, field by field, before any is
 * recorded; a job's calls rendered from the typed rows the op hands over.
 */
#include "api/calls_routes.h"

#include <stdio.h>
#include <string.h>

#include "api/job_api.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"
#include "api/route_match.h"
#include "lib/clock.h"

#define LIST_DEFAULT 1000
#define LIST_MAX 10000

/* The path's job id, or a 400. */
static bool path_job(struct http_request *req, const struct route_match *m, int64_t *id)
{
	const char *s = route_match_param(m, "job_id");
	char msg[200];

	if (api_parse_int(s, 1, INT64_MAX, id) == 0)
		return true;
	snprintf(msg, sizeof msg, "job id: expected a whole number >= 1, got \"%.100s\"", s);
	reply_status(req, 400, msg);
	return false;
}

/* A whole number >= lo from field `key` of o (absent: *out = dflt, when
 * dflt >= 0, else an error). */
static bool int_field(json_t *o, const char *key, int64_t lo, int64_t dflt, size_t at, int64_t *out,
                      struct weir_error *err)
{
	json_t *v = json_object_get(o, key);

	if (!v && dflt >= 0) {
		*out = dflt;
		return true;
	}
	if (!json_is_integer(v) || json_integer_value(v) < lo) {
		weir_error_set(err, WEIR_E_INVALID,
		               "body: calls[%zu].%s: expected a whole number >= %lld", at, key,
		               (long long)lo);
		return false;
	}
	*out = json_integer_value(v);
	return true;
}

/* A string field of at most max bytes (absent: NULL, when optional). */
static bool text_field(json_t *o, const char *key, size_t max, bool optional, size_t at,
                       const char **out, struct weir_error *err)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if ((!v || json_is_null(v)) && optional)
		return true;
	if (!json_is_string(v) || (!optional && !json_string_length(v)) ||
	    json_string_length(v) > max || strlen(json_string_value(v)) != json_string_length(v)) {
		weir_error_set(err, WEIR_E_INVALID,
		               "body: calls[%zu].%s: expected a string of %s1 to %zu bytes", at,
		               key, optional ? "0 or " : "", max);
		return false;
	}
	*out = json_string_value(v);
	return true;
}

/* Record i of the batch into *r (strings borrowed from the body, cast for
 * the row's type and never freed). */
static bool read_record(json_t *o, size_t i, struct call_row *r, struct weir_error *err)
{
	static const char *const known[] = {"id",         "name",     "state", "tries",
	                                    "started_at", "ended_at", "error", NULL};
	const char *key, *name, *state, *error;
	int64_t id, tries, started, ended;
	json_t *v;

	if (!json_is_object(o)) {
		weir_error_set(err, WEIR_E_INVALID, "body: calls[%zu]: expected an object", i);
		return false;
	}
	json_object_foreach(o, key, v)
	{
		bool ok = false;
		for (size_t k = 0; known[k]; k++)
			ok = ok || !strcmp(key, known[k]);
		if (!ok) {
			weir_error_set(
			    err, WEIR_E_INVALID,
			    "body: calls[%zu]: unknown field \"%.64s\" (expected id, name, "
			    "state, tries, started_at, ended_at, error)",
			    i, key);
			return false;
		}
	}
	if (!int_field(o, "id", 1, -1, i, &id, err) ||
	    !text_field(o, "name", CALL_NAME_MAX, false, i, &name, err) ||
	    !text_field(o, "state", 32, false, i, &state, err) ||
	    !int_field(o, "tries", 1, 1, i, &tries, err) ||
	    !int_field(o, "started_at", 0, 0, i, &started, err) ||
	    !int_field(o, "ended_at", 0, 0, i, &ended, err) ||
	    !text_field(o, "error", CALL_ERROR_MAX, true, i, &error, err))
		return false;
	if (tries > CALL_TRIES_MAX) {
		weir_error_set(err, WEIR_E_INVALID, "body: calls[%zu].tries: expected at most %d",
		               i, CALL_TRIES_MAX);
		return false;
	}
	if (call_state_from_name(state, &r->state) < 0) {
		weir_error_set(err, WEIR_E_INVALID,
		               "body: calls[%zu].state: expected running, succeeded, failed, "
		               "cancelled or crashed, got \"%.32s\"",
		               i, state);
		return false;
	}
	r->call_id = id;
	r->name = (char *)name;
	r->tries = (int)tries;
	r->started_ms = started;
	r->ended_ms = call_state_final(r->state) ? ended : 0;
	r->error = (char *)error;
	return true;
}

void jobs_calls_post(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m)
{
	const struct job_routes *jr = &rc->jobs;
	struct weir_error err = {0};
	struct call_row rows[CALL_BATCH_MAX];
	json_t *body = NULL, *calls, *answer = NULL;
	size_t n = 0, changed = 0;
	int64_t id;

	if (!path_job(req, m, &id))
		return;
	if (!(body = request_json_object(req, &err)))
		goto out;
	calls = json_object_get(body, "calls");
	if (json_object_size(body) != 1 || !json_is_array(calls)) {
		weir_error_set(&err, WEIR_E_INVALID, "body: expected {\"calls\": [...]} alone");
		goto out;
	}
	if (json_array_size(calls) > CALL_BATCH_MAX) {
		weir_error_set(&err, WEIR_E_INVALID,
		               "body: calls: %zu records, at most %d a request",
		               json_array_size(calls), CALL_BATCH_MAX);
		goto out;
	}
	memset(rows, 0, sizeof rows);
	for (n = 0; n < json_array_size(calls); n++)
		if (!read_record(json_array_get(calls, n), n, &rows[n], &err))
			goto out;
	if (jr->ops->record_calls(jr->ctx, id, rows, n, &changed, &err) == 0 &&
	    !(answer = json_pack("{s:I,s:I}", "received", (json_int_t)n, "recorded",
	                         (json_int_t)changed)))
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
out:
	reply_result(req, 200, answer, &err);
	json_decref(body);
}

/* One call as the API shows it. */
static json_t *call_json(const struct call_row *r)
{
	char started[40] = "", ended[40] = "";
	json_t *o;

	if (r->started_ms > 0)
		clock_format_iso(r->started_ms, started, sizeof started);
	if (r->ended_ms > 0)
		clock_format_iso(r->ended_ms, ended, sizeof ended);
	o = json_pack("{s:I,s:s,s:s,s:i,s:s?,s:s?,s:s?}", "id", (json_int_t)r->call_id, "name",
	              r->name, "state", call_state_name(r->state), "tries", r->tries, "started_at",
	              r->started_ms > 0 ? started : NULL, "ended_at",
	              r->ended_ms > 0 ? ended : NULL, "error", r->error);
	if (o && r->started_ms > 0 && r->ended_ms >= r->started_ms &&
	    json_object_set_new(o, "duration_ms", json_integer(r->ended_ms - r->started_ms)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void jobs_calls_get(const struct route_ctx *rc, struct http_request *req,
                    const struct route_match *m)
{
	const struct job_routes *jr = &rc->jobs;
	struct weir_error err = {0};
	struct call_row *rows = NULL;
	int64_t id, after = 0, limit = LIST_DEFAULT, counts[CALL_STATE_COUNT];
	const char *a = http_request_query(req, "after"), *l = http_request_query(req, "limit");
	json_t *answer = NULL, *list, *by_state;
	size_t n = 0;

	if (!path_job(req, m, &id))
		return;
	if (a && api_parse_int(a, 0, INT64_MAX, &after) < 0) {
		reply_status(req, 400, "after: expected a call id (a whole number >= 0)");
		return;
	}
	if (l && api_parse_int(l, 1, LIST_MAX, &limit) < 0) {
		reply_status(req, 400, "limit: expected a whole number from 1 to 10000");
		return;
	}
	if (jr->ops->calls(jr->ctx, id, after, (int)limit, &rows, &n, counts, &err) < 0)
		goto out;
	list = json_array();
	by_state = json_object();
	answer = json_pack("{s:o,s:o}", "calls", list, "counts", by_state);
	if (!answer)
		goto oom;
	for (int s = 0; s < CALL_STATE_COUNT; s++)
		if (json_object_set_new(by_state, call_state_name((enum call_state)s),
		                        json_integer(counts[s])) < 0)
			goto oom;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(list, call_json(&rows[i])) < 0)
			goto oom;
	goto out;
oom:
	json_decref(answer);
	answer = NULL;
	weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
out:
	call_rows_free(rows, n);
	reply_result(req, 200, answer, &err);
}
