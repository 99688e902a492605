/* airflow.c: the workflow routes of Airflow's stable REST API v1 over
 * api/http, answering from the server's DAG manager (api/dag_api.h).
 *
 * Ids from the path are checked against one character set before any op
 * sees them, and never build a file path: a log's path comes from the DAG
 * manager.  Bodies are checked field by field the way Airflow's schemas do
 * (an unknown field is a 400) and handed on in the contract's shape, with
 * Airflow's defaults filled in.
 */
#include "api/airflow.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/base64.h>

#include "api/log_window.h"
#include "lib/clock.h"
#include "sched/dag_states.h"

#define PROBLEM_BASE                                                                               \
	"https://airflow.apache.org/docs/apache-airflow/stable/stable-rest-api-ref.html"           \
	"#section/Errors/"
#define MAX_BODY (1u << 20)
#define PAGE_DEFAULT 100
#define PAGE_MAX 1000
#define TOKEN_MAX 512
#define LOG_FRAGMENT (1u << 20)  /* JSON logs without full_content */
#define LOG_FULL_MAX (16u << 20) /* JSON logs with full_content */
#define TRY_MAX 100000
#define UI_RUNS_DEFAULT 25
#define UI_RUNS_MAX 365

/* ---- answers ---- */

/* A response body held in memory, sent through a stream because api/http
 * sets Content-Type application/json on every other kind of answer. */
struct mem_body {
	char *text;
	size_t len;
};

static ssize_t mem_read(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct mem_body *m = arg;
	size_t n;

	if (pos >= m->len)
		return HTTP_STREAM_END;
	n = m->len - (size_t)pos;
	if (n > max)
		n = max;
	memcpy(buf, m->text + pos, n);
	return (ssize_t)n;
}

static void mem_free(void *arg)
{
	struct mem_body *m = arg;

	free(m->text);
	free(m);
}

/* Sends `text` (ownership taken) with `ctype`. */
static void respond_text(struct http_request *req, int status, const char *ctype, char *text,
                         size_t len)
{
	struct mem_body *m = calloc(1, sizeof *m);

	if (!m || !text) {
		free(m);
		free(text);
		http_request_respond_errorf(req, WEIR_E_INTERNAL, "out of memory");
		return;
	}
	m->text = text;
	m->len = len;
	http_request_respond_stream(req, status, ctype, mem_read, m, mem_free);
}

static const char *status_title(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 410:
		return "Gone";
	case 413:
		return "Payload Too Large";
	case 415:
		return "Unsupported Media Type";
	case 422:
		return "Unprocessable Entity";
	case 503:
		return "Service Unavailable";
	default:
		return "Internal Server Error";
	}
}

/* The sections of Airflow's API reference that its own problems point to. */
static const char *status_type(int status)
{
	switch (status) {
	case 400:
	case 413:
	case 415:
	case 422:
		return PROBLEM_BASE "BadRequest";
	case 401:
		return PROBLEM_BASE "Unauthenticated";
	case 403:
		return PROBLEM_BASE "PermissionDenied";
	case 404:
		return PROBLEM_BASE "NotFound";
	case 405:
		return PROBLEM_BASE "MethodNotAllowed";
	case 409:
		return PROBLEM_BASE "AlreadyExists";
	default:
		return PROBLEM_BASE "Unknown";
	}
}

void airflow_respond_problem(struct http_request *req, int status, const char *detail)
{
	json_t *o = json_pack("{s:s, s:s, s:i, s:s}", "type", status_type(status), "title",
	                      status_title(status), "status", status, "detail",
	                      detail && *detail ? detail : status_title(status));
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	respond_text(req, status, "application/problem+json", text, text ? strlen(text) : 0);
}

static void problemf(struct http_request *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void problemf(struct http_request *req, int status, const char *fmt, ...)
{
	char msg[WEIR_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	airflow_respond_problem(req, status, msg);
}

void airflow_respond_error(struct http_request *req, const struct weir_error *err)
{
	enum weir_error_kind kind = err->kind == WEIR_OK ? WEIR_E_INTERNAL : err->kind;

	airflow_respond_problem(req, weir_error_http_status(kind),
	                        err->msg[0] ? err->msg : "the operation failed without a reason");
}

static void respond_result(struct http_request *req, json_t *r, const struct weir_error *err)
{
	if (r)
		http_request_respond_json(req, 200, r);
	else
		airflow_respond_error(req, err);
}

void airflow_health_add(json_t *health)
{
	char now[40];

	clock_format_iso(clock_now_ms(), now, sizeof now);
	json_object_set_new(health, "metadatabase", json_pack("{s:s}", "status", "healthy"));
	json_object_set_new(
	    health, "scheduler",
	    json_pack("{s:s, s:s}", "status", "healthy", "latest_scheduler_heartbeat", now));
}

/* ---- checks ---- */

bool airflow_id_ok(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	if (n == 0 || n > AIRFLOW_ID_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == ':' || c == '+' || c == '-'))
			return false;
	}
	return true;
}

static bool check_id(struct http_request *req, const char *what, const char *s)
{
	if (airflow_id_ok(s))
		return true;
	problemf(req, 400,
	         "%s \"%.100s\": expected 1 to %d characters of A-Z a-z 0-9 _ . : + - "
	         "(and not . or ..)",
	         what, s, AIRFLOW_ID_MAX);
	return false;
}

/* A decimal integer (an optional '-' only when min < 0) in [min, max]. */
static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || *s == '+' || *s == ' ' || (*s == '-' && min >= 0))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* limit and offset, as Airflow reads them: limit 0 means the default, more
 * than the maximum is cut to it, a negative one is an error. */
static bool page_query(struct http_request *req, int *limit, int *offset)
{
	const char *l = http_request_query(req, "limit");
	const char *o = http_request_query(req, "offset");
	long v;

	*limit = PAGE_DEFAULT;
	*offset = 0;
	if (l) {
		if (parse_long(l, 0, 1000000000L, &v) < 0) {
			problemf(req, 400, "limit \"%.40s\": expected a whole number >= 0", l);
			return false;
		}
		*limit = v == 0 ? PAGE_DEFAULT : v > PAGE_MAX ? PAGE_MAX : (int)v;
	}
	if (o) {
		if (parse_long(o, 0, 1000000000L, &v) < 0) {
			problemf(req, 400, "offset \"%.40s\": expected a whole number >= 0", o);
			return false;
		}
		*offset = (int)v;
	}
	return true;
}

static bool map_index_query(struct http_request *req, int *map_index)
{
	const char *q = http_request_query(req, "map_index");
	long v;

	*map_index = -1;
	if (!q)
		return true;
	if (parse_long(q, -1, 1000000, &v) < 0) {
		problemf(req, 400, "map_index \"%.40s\": expected a whole number >= -1", q);
		return false;
	}
	*map_index = (int)v;
	return true;
}

/* The body as a JSON object whose keys are all in `allowed` (NULL-ended);
 * NULL after answering 400 or 413. */
static json_t *read_body(struct http_request *req, const char *const *allowed)
{
	size_t len;
	const char *text = http_request_body(req, &len);
	json_error_t je;
	json_t *j;
	const char *key;
	json_t *v;

	if (len > MAX_BODY) {
		problemf(req, 413, "request body: at most %u bytes allowed here", MAX_BODY);
		return NULL;
	}
	if (len == 0) {
		airflow_respond_problem(req, 400,
		                        "request body: expected a JSON object, got nothing");
		return NULL;
	}
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		problemf(req, 400, "request body: invalid JSON at line %d column %d: %s", je.line,
		         je.column, je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		airflow_respond_problem(req, 400, "request body: expected a JSON object");
		return NULL;
	}
	json_object_foreach(j, key, v)
	{
		bool known = false;
		for (const char *const *a = allowed; *a && !known; a++)
			known = !strcmp(key, *a);
		if (!known) {
			char list[256] = "";
			for (const char *const *a = allowed; *a; a++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
				         a == allowed ? "" : ", ", *a);
			problemf(req, 400, "request body: unknown field \"%.100s\": expected %s",
			         key, list);
			json_decref(j);
			return NULL;
		}
	}
	return j;
}

/* A boolean field: absent gives `def`; -1 after answering 400. */
static int body_bool(struct http_request *req, json_t *body, const char *key, bool def, bool *out)
{
	json_t *v = json_object_get(body, key);

	*out = def;
	if (!v)
		return 0;
	if (!json_is_boolean(v)) {
		problemf(req, 400, "%s: expected true or false", key);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

/* ---- routes ---- */

static void no_method(struct http_request *req)
{
	problemf(req, 405, "%s %.300s: method not allowed", http_request_method(req),
	         http_request_path(req));
}

static void no_route(struct http_request *req)
{
	problemf(req, 404, "%s %.300s: no such route (see docs/api.md)", http_request_method(req),
	         http_request_path(req));
}

static bool method_is(struct http_request *req, const char *m)
{
	return !strcmp(http_request_method(req), m);
}

static void route_list_dags(const struct dag_api_ops *ops, void *ctx, struct http_request *req)
{
	struct weir_error err = {0};
	int limit, offset;

	if (page_query(req, &limit, &offset))
		respond_result(req, ops->list_dags(ctx, limit, offset, &err), &err);
}

static void route_import_errors(const struct dag_api_ops *ops, void *ctx, struct http_request *req)
{
	struct weir_error err = {0};
	int limit, offset;

	if (page_query(req, &limit, &offset))
		respond_result(req, ops->import_errors(ctx, limit, offset, &err), &err);
}

/* update_mask: a comma-separated list of fields; only is_paused can change. */
static bool update_mask_ok(struct http_request *req)
{
	const char *m = http_request_query(req, "update_mask");
	char copy[256];
	char *save = NULL;

	if (!m)
		return true;
	if (strlen(m) >= sizeof copy) {
		airflow_respond_problem(req, 400, "update_mask: expected is_paused");
		return false;
	}
	snprintf(copy, sizeof copy, "%s", m);
	for (char *f = strtok_r(copy, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		while (*f == ' ')
			f++;
		size_t n = strlen(f);
		while (n && f[n - 1] == ' ')
			f[--n] = '\0';
		if (strcmp(f, "is_paused")) {
			problemf(req, 400,
			         "update_mask: field \"%.60s\" cannot be updated: only is_paused "
			         "can",
			         f);
			return false;
		}
	}
	return true;
}

static void route_patch_dag(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                            const char *dag_id)
{
	static const char *const allowed[] = {"is_paused", NULL};
	struct weir_error err = {0};
	json_t *body, *r;

	if (!update_mask_ok(req) || !(body = read_body(req, allowed)))
		return;
	if (!json_is_boolean(json_object_get(body, "is_paused"))) {
		airflow_respond_problem(req, 400, "is_paused: expected true or false");
		json_decref(body);
		return;
	}
	r = ops->patch_dag(ctx, dag_id, body, &err);
	json_decref(body);
	respond_result(req, r, &err);
}

/* What the DAG manager can sort runs by (Airflow's names; '-' descending). */
static const char *const run_order_fields[] = {
    "id",           "dag_run_id", "run_id",   "dag_id", "state", "execution_date",
    "logical_date", "start_date", "end_date", NULL,
};

static void route_list_runs(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                            const char *dag_id)
{
	struct weir_error err = {0};
	struct dag_run_list_query q = {0};
	enum dag_run_state st;

	if (!page_query(req, &q.limit, &q.offset))
		return;
	q.order_by = http_request_query(req, "order_by");
	if (q.order_by) {
		const char *f = q.order_by[0] == '-' ? q.order_by + 1 : q.order_by;
		bool known = false;
		for (const char *const *a = run_order_fields; *a && !known; a++)
			known = !strcmp(f, *a);
		if (!known) {
			problemf(req, 400,
			         "order_by \"%.60s\": expected execution_date, logical_date, "
			         "start_date, end_date, state, dag_run_id, run_id, dag_id or id, "
			         "with '-' in front for descending",
			         q.order_by);
			return;
		}
	}
	q.state = http_request_query(req, "state");
	if (q.state && !*q.state)
		q.state = NULL;
	if (q.state && dag_run_state_from_name(q.state, &st) < 0) {
		problemf(req, 400, "state \"%.40s\": expected queued, running, success or failed",
		         q.state);
		return;
	}
	respond_result(req, ops->list_runs(ctx, dag_id, &q, &err), &err);
}

/* POST .../dagRuns: Airflow's DAGRun body, passed on as {conf, dag_run_id,
 * logical_date} (execution_date is Airflow's older name for logical_date). */
static void route_trigger(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                          const char *dag_id)
{
	static const char *const allowed[] = {"conf", "dag_run_id", "logical_date",
	                                      "execution_date", NULL};
	struct weir_error err = {0};
	json_t *body = read_body(req, allowed), *out = NULL, *r = NULL;
	json_t *conf, *run_id, *logical, *exec;

	if (!body)
		return;
	conf = json_object_get(body, "conf");
	run_id = json_object_get(body, "dag_run_id");
	logical = json_object_get(body, "logical_date");
	exec = json_object_get(body, "execution_date");
	if (conf && !json_is_object(conf) && !json_is_null(conf)) {
		airflow_respond_problem(req, 400, "conf: expected a JSON object");
		goto out;
	}
	if (run_id && !json_is_null(run_id) &&
	    (!json_is_string(run_id) || !airflow_id_ok(json_string_value(run_id)))) {
		problemf(req, 400,
		         "dag_run_id: expected 1 to %d characters of A-Z a-z 0-9 _ . : + - "
		         "(and not . or ..)",
		         AIRFLOW_ID_MAX);
		goto out;
	}
	if ((logical && !json_is_null(logical) && !json_is_string(logical)) ||
	    (exec && !json_is_null(exec) && !json_is_string(exec))) {
		airflow_respond_problem(req, 400,
		                        "logical_date: expected a date-time like "
		                        "2024-01-01T00:00:00+00:00");
		goto out;
	}
	if (json_is_string(logical) && json_is_string(exec) &&
	    strcmp(json_string_value(logical), json_string_value(exec))) {
		airflow_respond_problem(req, 400,
		                        "logical_date and execution_date: expected at most one "
		                        "(or the same value)");
		goto out;
	}
	if (!json_is_string(logical))
		logical = exec;
	out = json_object();
	if (!out) {
		airflow_respond_problem(req, 500, "out of memory");
		goto out;
	}
	if (json_is_object(conf))
		json_object_set(out, "conf", conf);
	if (json_is_string(run_id))
		json_object_set(out, "dag_run_id", run_id);
	if (json_is_string(logical))
		json_object_set(out, "logical_date", logical);
	r = ops->trigger_run(ctx, dag_id, out, &err);
	respond_result(req, r, &err);
out:
	json_decref(out);
	json_decref(body);
}

static void route_patch_run(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                            const char *dag_id, const char *run_id)
{
	static const char *const allowed[] = {"state", NULL};
	struct weir_error err = {0};
	json_t *body = read_body(req, allowed), *r;
	const char *st;

	if (!body)
		return;
	st = json_string_value(json_object_get(body, "state"));
	if (!st || (strcmp(st, "success") && strcmp(st, "failed") && strcmp(st, "queued"))) {
		airflow_respond_problem(req, 400, "state: expected success, failed or queued");
		json_decref(body);
		return;
	}
	r = ops->patch_run(ctx, dag_id, run_id, body, &err);
	json_decref(body);
	respond_result(req, r, &err);
}

/* POST /dags/{dag_id}/clearTaskInstances, with Airflow's defaults (dry_run
 * and only_failed true).  Options weir cannot honour are refused rather than
 * ignored, except those that mean nothing here (sub-DAGs, resetting runs,
 * which clearing always does). */
static void route_clear(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                        const char *dag_id)
{
	static const char *const allowed[] = {"dry_run",
	                                      "task_ids",
	                                      "only_failed",
	                                      "only_running",
	                                      "include_subdags",
	                                      "include_parentdag",
	                                      "reset_dag_runs",
	                                      "dag_run_id",
	                                      "include_upstream",
	                                      "include_downstream",
	                                      "include_future",
	                                      "include_past",
	                                      "start_date",
	                                      "end_date",
	                                      NULL};
	static const char *const unsupported[] = {"only_running", "include_upstream",
	                                          "include_future", "include_past", NULL};
	static const char *const ignored[] = {"include_subdags", "include_parentdag",
	                                      "reset_dag_runs", NULL};
	struct weir_error err = {0};
	json_t *body = read_body(req, allowed), *out = NULL, *r, *v;
	bool dry_run, only_failed, downstream, b;
	size_t i;

	if (!body)
		return;
	if (body_bool(req, body, "dry_run", true, &dry_run) < 0 ||
	    body_bool(req, body, "only_failed", true, &only_failed) < 0 ||
	    body_bool(req, body, "include_downstream", false, &downstream) < 0)
		goto out;
	for (const char *const *a = ignored; *a; a++)
		if (body_bool(req, body, *a, false, &b) < 0)
			goto out;
	for (const char *const *a = unsupported; *a; a++) {
		if (body_bool(req, body, *a, false, &b) < 0)
			goto out;
		if (b) {
			problemf(req, 400, "%s: not supported by weir (expected false)", *a);
			goto out;
		}
	}
	if ((v = json_object_get(body, "start_date")) && !json_is_null(v)) {
		airflow_respond_problem(req, 400,
		                        "start_date: clearing by date is not supported by weir; "
		                        "give dag_run_id");
		goto out;
	}
	if ((v = json_object_get(body, "end_date")) && !json_is_null(v)) {
		airflow_respond_problem(req, 400,
		                        "end_date: clearing by date is not supported by weir; "
		                        "give dag_run_id");
		goto out;
	}
	v = json_object_get(body, "dag_run_id");
	if (v && !json_is_null(v) && (!json_is_string(v) || !airflow_id_ok(json_string_value(v)))) {
		airflow_respond_problem(req, 400, "dag_run_id: expected a DAG run's id");
		goto out;
	}
	out = json_pack("{s:O?, s:b, s:b, s:b}", "dag_run_id", v && json_is_string(v) ? v : NULL,
	                "include_downstream", downstream, "only_failed", only_failed, "dry_run",
	                dry_run);
	if (!out) {
		airflow_respond_problem(req, 500, "out of memory");
		goto out;
	}
	v = json_object_get(body, "task_ids");
	if (v && !json_is_null(v)) {
		json_t *t;
		if (!json_is_array(v) || json_array_size(v) == 0) {
			airflow_respond_problem(req, 400,
			                        "task_ids: expected a non-empty list of task ids");
			goto out;
		}
		json_array_foreach(v, i, t)
		{
			if (!json_is_string(t) || !airflow_id_ok(json_string_value(t))) {
				problemf(req, 400, "task_ids[%zu]: expected a task id", i);
				goto out;
			}
		}
		json_object_set(out, "task_ids", v);
	} else {
		json_object_set_new(out, "task_ids", json_null());
	}
	r = ops->clear_tis(ctx, dag_id, out, &err);
	respond_result(req, r, &err);
out:
	json_decref(out);
	json_decref(body);
}

/* ---- logs ---- */

char *airflow_log_token_encode(uint64_t offset, bool end_of_log)
{
	char json[96];
	struct base64_encode_ctx ctx;
	size_t len, n;
	char *out;

	len = (size_t)snprintf(json, sizeof json, "{\"offset\":%llu,\"end_of_log\":%s}",
	                       (unsigned long long)offset, end_of_log ? "true" : "false");
	out = malloc(BASE64_ENCODE_RAW_LENGTH(len) + 1);
	if (!out)
		return NULL;
	base64url_encode_init(&ctx);
	n = base64_encode_update(&ctx, out, len, (const uint8_t *)json);
	n += base64_encode_final(&ctx, out + n);
	/* no '=' padding: the token travels in a query string */
	while (n && out[n - 1] == '=')
		n--;
	out[n] = '\0';
	return out;
}

int airflow_log_token_decode(const char *token, uint64_t *offset)
{
	char padded[TOKEN_MAX + 4];
	uint8_t buf[BASE64_DECODE_LENGTH(TOKEN_MAX + 4) + 1];
	struct base64_decode_ctx ctx;
	size_t len, n = sizeof buf - 1;
	json_t *j, *o;
	int rc = -1;

	if (!token)
		return -1;
	len = strlen(token);
	if (len == 0 || len > TOKEN_MAX)
		return -1;
	memcpy(padded, token, len);
	while (len % 4)
		padded[len++] = '=';
	base64url_decode_init(&ctx);
	if (!base64_decode_update(&ctx, &n, buf, len, padded) || !base64_decode_final(&ctx))
		return -1;
	j = json_loadb((const char *)buf, n, JSON_REJECT_DUPLICATES, NULL);
	o = json_object_get(j, "offset");
	if (json_is_integer(o) && json_integer_value(o) >= 0) {
		*offset = (uint64_t)json_integer_value(o);
		rc = 0;
	}
	json_decref(j);
	return rc;
}

static char *trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

bool airflow_accept_text(const char *accept)
{
	/* for each candidate, the quality of the most specific range matching
	 * it (specificity: 1 for * / *, 2 for type / *, 3 exact) */
	double q_text = 0, q_json = 0;
	int s_text = 0, s_json = 0;
	char copy[1024];
	char *save = NULL;

	if (!accept || !*accept)
		return false;
	snprintf(copy, sizeof copy, "%s", accept);
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *psave = NULL;
		char *range = strtok_r(item, ";", &psave);
		double q = 1;
		int st = 0, sj = 0;

		if (!range)
			continue;
		range = trim(range);
		for (char *par = strtok_r(NULL, ";", &psave); par;
		     par = strtok_r(NULL, ";", &psave)) {
			par = trim(par);
			if ((par[0] == 'q' || par[0] == 'Q') && par[1] == '=')
				q = strtod(par + 2, NULL);
		}
		if (!strcmp(range, "*/*"))
			st = sj = 1;
		else if (!strcasecmp(range, "text/*"))
			st = 2;
		else if (!strcasecmp(range, "application/*"))
			sj = 2;
		else if (!strcasecmp(range, "text/plain"))
			st = 3;
		else if (!strcasecmp(range, "application/json"))
			sj = 3;
		if (st > s_text) {
			s_text = st;
			q_text = q;
		}
		if (sj > s_json) {
			s_json = sj;
			q_json = q;
		}
	}
	if (q_text <= 0 && q_json <= 0)
		return false;
	return q_text >= q_json;
}

/* A slice [start, end) of an open log file as a text/plain body. */
struct file_body {
	int fd;
	uint64_t start, end;
};

static ssize_t file_read(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct file_body *f = arg;
	uint64_t at = f->start + pos;
	ssize_t n;

	if (at >= f->end)
		return HTTP_STREAM_END;
	if (max > f->end - at)
		max = (size_t)(f->end - at);
	n = pread(f->fd, buf, max, (off_t)at);
	if (n < 0)
		return HTTP_STREAM_ERROR;
	if (n == 0) /* the file shrank: end here */
		return HTTP_STREAM_END;
	return n;
}

static void file_free(void *arg)
{
	struct file_body *f = arg;

	close(f->fd);
	free(f);
}

/* Bytes [0, len) of s as a JSON-safe string: invalid UTF-8 becomes U+FFFD;
 * an incomplete sequence at the very end is left out unless `last` (the
 * next fragment starts with it).  Returns the bytes of s consumed. */
static size_t utf8_clean(const char *s, size_t len, bool last, char **out, size_t *out_len)
{
	char *o = malloc(len * 3 + 1);
	size_t i = 0, k = 0;

	*out = o;
	if (!o)
		return 0;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t need = c < 0x80             ? 1
		              : (c & 0xe0) == 0xc0 ? 2
		              : (c & 0xf0) == 0xe0 ? 3
		              : (c & 0xf8) == 0xf0 ? 4
		                                   : 0;
		bool ok = need > 0 && (need != 2 || c >= 0xc2) && (need != 4 || c <= 0xf4);
		size_t j;

		if (ok && i + need > len && !last) {
			for (j = 1; i + j < len; j++)
				if (((unsigned char)s[i + j] & 0xc0) != 0x80)
					break;
			if (i + j == len)
				break; /* cut mid-character: the rest comes next time */
		}
		for (j = 1; ok && j < need; j++)
			ok = i + j < len && ((unsigned char)s[i + j] & 0xc0) == 0x80;
		if (ok && need == 3) {
			unsigned char c1 = (unsigned char)s[i + 1];
			ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
		}
		if (ok && need == 4) {
			unsigned char c1 = (unsigned char)s[i + 1];
			ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
		}
		if (ok) {
			memcpy(o + k, s + i, need);
			k += need;
			i += need;
		} else {
			memcpy(o + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		}
	}
	o[k] = '\0';
	*out_len = k;
	return i;
}

static void route_logs(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                       char **seg)
{
	struct weir_error err = {0};
	const char *fc = http_request_query(req, "full_content");
	const char *token = http_request_query(req, "token");
	bool full = false, ended = false;
	uint64_t offset = 0, size = 0, end;
	char *path = NULL, *tok = NULL, *buf = NULL, *clean = NULL;
	int map_index, fd = -1;
	long try_number;
	struct stat st;
	size_t want, got = 0, used, clean_len = 0;
	struct log_window win;
	bool text = airflow_accept_text(http_request_header(req, "Accept"));
	char msg[200];

	if (parse_long(seg[7], 1, TRY_MAX, &try_number) < 0) {
		problemf(req, 400, "try_number \"%.40s\": expected a whole number >= 1", seg[7]);
		return;
	}
	if (fc && strcasecmp(fc, "true") && strcasecmp(fc, "false")) {
		problemf(req, 400, "full_content \"%.40s\": expected true or false", fc);
		return;
	}
	full = fc && !strcasecmp(fc, "true");
	if (log_window_parse(req, &win, msg, sizeof msg) < 0) {
		airflow_respond_problem(req, 400, msg);
		return;
	}
	if (!text && (win.has_offset || win.length >= 0 || win.download)) {
		airflow_respond_problem(req, 400,
		                        "offset, length and download: only with Accept: "
		                        "text/plain (JSON answers page with token)");
		return;
	}
	if (win.has_offset && ((token && *token) || full)) {
		airflow_respond_problem(req, 400,
		                        "offset: expected either offset or token/full_content, "
		                        "not both");
		return;
	}
	if (token && *token && airflow_log_token_decode(token, &offset) < 0) {
		airflow_respond_problem(req, 400,
		                        "token: expected a continuation_token from an earlier "
		                        "answer of this route");
		return;
	}
	if (full)
		offset = 0;
	if (!map_index_query(req, &map_index))
		return;
	if (ops->ti_log_locate(ctx, seg[1], seg[3], seg[5], map_index, (int)try_number, &path,
	                       &ended, &err) < 0) {
		airflow_respond_error(req, &err);
		return;
	}
	fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0 && fstat(fd, &st) == 0)
		size = (uint64_t)st.st_size;
	if (offset > size)
		offset = size;
	if (text) {
		struct file_body *f;
		uint64_t start, stop;
		char name[4 * AIRFLOW_ID_MAX + 64];

		if (!win.has_offset)
			win.offset = (int64_t)offset; /* the token's (or 0) */
		log_window_resolve(&win, size, &start, &stop);
		if (stop > size)
			stop = size;
		if (map_index >= 0)
			snprintf(name, sizeof name, "%s-%s-%s-%d-%ld.log", seg[1], seg[3], seg[5],
			         map_index, try_number);
		else
			snprintf(name, sizeof name, "%s-%s-%s-%ld.log", seg[1], seg[3], seg[5],
			         try_number);
		log_window_headers(req, &win, size, start, ended, name);
		tok = airflow_log_token_encode(stop, ended && stop >= size);
		if (tok)
			http_request_add_header(req, "X-Weir-Continuation-Token", tok);
		if (fd < 0) {
			respond_text(req, 200, "text/plain; charset=utf-8", strdup(""), 0);
			goto out;
		}
		f = calloc(1, sizeof *f);
		if (!f) {
			airflow_respond_problem(req, 500, "out of memory");
			goto out;
		}
		f->fd = fd;
		f->start = start;
		f->end = stop;
		fd = -1;
		http_request_respond_stream(req, 200, "text/plain; charset=utf-8", file_read, f,
		                            file_free);
		goto out;
	}
	/* JSON: one fragment from the offset, and where the next one starts */
	end = size - offset > (full ? LOG_FULL_MAX : LOG_FRAGMENT)
	          ? offset + (full ? LOG_FULL_MAX : LOG_FRAGMENT)
	          : size;
	want = (size_t)(end - offset);
	buf = malloc(want + 1);
	if (!buf) {
		airflow_respond_problem(req, 500, "out of memory");
		goto out;
	}
	while (fd >= 0 && got < want) {
		ssize_t n = pread(fd, buf + got, want - got, (off_t)(offset + got));
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	/* the last fragment of an ended task may end mid-character: send it whole */
	used = utf8_clean(buf, got, ended && offset + got >= size, &clean, &clean_len);
	if (!clean) {
		airflow_respond_problem(req, 500, "out of memory");
		goto out;
	}
	offset += used;
	tok = airflow_log_token_encode(offset, ended && offset >= size);
	http_request_respond_json(
	    req, 200,
	    json_pack("{s:s?, s:s%}", "continuation_token", tok, "content", clean, clean_len));
out:
	if (fd >= 0)
		close(fd);
	free(path);
	free(tok);
	free(buf);
	free(clean);
}

/* ---- dispatch ---- */

bool airflow_owns(const char *first_segment)
{
	return first_segment &&
	       (!strcmp(first_segment, "dags") || !strcmp(first_segment, "importErrors") ||
	        !strcmp(first_segment, "ui"));
}

/* dags/{dag_id}/dagRuns/{run_id}/taskInstances[/...]: n >= 5 */
static void route_tis(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                      char **seg, int n)
{
	struct weir_error err = {0};
	int map_index;
	long v;

	if (!method_is(req, "GET")) {
		no_method(req);
		return;
	}
	if (n == 5) {
		respond_result(req, ops->list_tis(ctx, seg[1], seg[3], &err), &err);
		return;
	}
	if (!check_id(req, "task_id", seg[5]))
		return;
	if (n == 6) {
		if (map_index_query(req, &map_index))
			respond_result(
			    req, ops->get_ti(ctx, seg[1], seg[3], seg[5], map_index, &err), &err);
	} else if (n == 7 && !strcmp(seg[6], "tries") && ops->ti_tries) {
		if (map_index_query(req, &map_index))
			respond_result(
			    req, ops->ti_tries(ctx, seg[1], seg[3], seg[5], map_index, &err), &err);
	} else if (n == 7) {
		/* Airflow's path for one instance of a mapped task */
		if (parse_long(seg[6], 0, 1000000, &v) < 0) {
			problemf(req, 400, "map_index \"%.40s\": expected a whole number >= 0",
			         seg[6]);
			return;
		}
		respond_result(req, ops->get_ti(ctx, seg[1], seg[3], seg[5], (int)v, &err), &err);
	} else if (n == 8 && !strcmp(seg[6], "logs")) {
		route_logs(ops, ctx, req, seg);
	} else if (n == 8 && !strcmp(seg[7], "tries") && ops->ti_tries) {
		if (parse_long(seg[6], 0, 1000000, &v) < 0) {
			problemf(req, 400, "map_index \"%.40s\": expected a whole number >= 0",
			         seg[6]);
			return;
		}
		respond_result(req, ops->ti_tries(ctx, seg[1], seg[3], seg[5], (int)v, &err),
		               &err);
	} else {
		no_route(req);
	}
}

/* limit for the UI's run windows: default 25, more than 365 is cut to 365 (as
 * Airflow cuts its page limits), 0 means the default. */
static bool ui_limit_query(struct http_request *req, int *limit)
{
	const char *l = http_request_query(req, "limit");
	long v;

	*limit = UI_RUNS_DEFAULT;
	if (!l)
		return true;
	if (parse_long(l, 0, 1000000000L, &v) < 0) {
		problemf(req, 400, "limit \"%.40s\": expected a whole number of runs >= 0", l);
		return false;
	}
	*limit = v == 0 ? UI_RUNS_DEFAULT : v > UI_RUNS_MAX ? UI_RUNS_MAX : (int)v;
	return true;
}

/* ui/dags and ui/dags/{dag_id}/grid|stats: what the web UI reads in one request. */
static void route_ui(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                     char **seg, int n)
{
	struct weir_error err = {0};
	int limit, offset;

	if (n < 2 || strcmp(seg[1], "dags") || n == 3 || n > 4 || !ops->ui_dags ||
	    !ops->ui_grid || !ops->ui_stats) {
		no_route(req);
		return;
	}
	if (n == 4 && strcmp(seg[3], "grid") && strcmp(seg[3], "stats")) {
		no_route(req);
		return;
	}
	if (!method_is(req, "GET")) {
		no_method(req);
		return;
	}
	if (n == 2) {
		if (page_query(req, &limit, &offset))
			respond_result(req, ops->ui_dags(ctx, limit, offset, &err), &err);
		return;
	}
	if (!check_id(req, "dag_id", seg[2]) || !ui_limit_query(req, &limit))
		return;
	if (!strcmp(seg[3], "grid"))
		respond_result(req, ops->ui_grid(ctx, seg[2], limit, &err), &err);
	else
		respond_result(req, ops->ui_stats(ctx, seg[2], limit, &err), &err);
}

void airflow_handle(const struct dag_api_ops *ops, void *ctx, struct http_request *req, char **seg,
                    int n)
{
	struct weir_error err = {0};

	if (!ops) {
		airflow_respond_problem(req, 503,
		                        "this server runs no DAG manager (workflows are off)");
		return;
	}
	if (!strcmp(seg[0], "ui")) {
		route_ui(ops, ctx, req, seg, n);
		return;
	}
	if (!strcmp(seg[0], "importErrors")) {
		if (n != 1)
			no_route(req);
		else if (!method_is(req, "GET"))
			no_method(req);
		else
			route_import_errors(ops, ctx, req);
		return;
	}
	if (n == 1) {
		if (method_is(req, "GET"))
			route_list_dags(ops, ctx, req);
		else
			no_method(req);
		return;
	}
	/* "~": every DAG, as Airflow lists runs across DAGs (GET only) */
	if (n == 3 && !strcmp(seg[1], "~") && !strcmp(seg[2], "dagRuns") && method_is(req, "GET")) {
		route_list_runs(ops, ctx, req, seg[1]);
		return;
	}
	if (!check_id(req, "dag_id", seg[1]))
		return;
	if (n == 2) {
		if (method_is(req, "GET"))
			respond_result(req, ops->get_dag(ctx, seg[1], &err), &err);
		else if (method_is(req, "PATCH"))
			route_patch_dag(ops, ctx, req, seg[1]);
		else
			no_method(req);
		return;
	}
	if (n == 3 && (!strcmp(seg[2], "tasks") || !strcmp(seg[2], "details"))) {
		bool tasks = !strcmp(seg[2], "tasks");
		if (!method_is(req, "GET"))
			no_method(req);
		else if (tasks && ops->dag_tasks)
			respond_result(req, ops->dag_tasks(ctx, seg[1], &err), &err);
		else if (!tasks && ops->dag_details)
			respond_result(req, ops->dag_details(ctx, seg[1], &err), &err);
		else
			no_route(req);
		return;
	}
	if (n == 3 && !strcmp(seg[2], "clearTaskInstances")) {
		if (method_is(req, "POST"))
			route_clear(ops, ctx, req, seg[1]);
		else
			no_method(req);
		return;
	}
	if (strcmp(seg[2], "dagRuns")) {
		no_route(req);
		return;
	}
	if (n == 3) {
		if (method_is(req, "GET"))
			route_list_runs(ops, ctx, req, seg[1]);
		else if (method_is(req, "POST"))
			route_trigger(ops, ctx, req, seg[1]);
		else
			no_method(req);
		return;
	}
	if (!check_id(req, "dag_run_id", seg[3]))
		return;
	if (n == 4) {
		if (method_is(req, "GET"))
			respond_result(req, ops->get_run(ctx, seg[1], seg[3], &err), &err);
		else if (method_is(req, "PATCH"))
			route_patch_run(ops, ctx, req, seg[1], seg[3]);
		else
			no_method(req);
		return;
	}
	if (strcmp(seg[4], "taskInstances")) {
		no_route(req);
		return;
	}
	route_tis(ops, ctx, req, seg, n);
}
