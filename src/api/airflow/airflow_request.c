/* airflow_request.c: ids, pages, bodies, Accept and log tokens of the
 * workflow routes (airflow_request.h). */
#include "api/airflow/airflow_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nettle/base64.h>

#include "api/reply.h"
#include "api/request.h"
#include "api/route_match.h"

#define MAX_BODY (1u << 20)
#define TOKEN_MAX 512

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

bool airflow_check_id(struct http_request *req, const char *what, const char *s)
{
	if (airflow_id_ok(s))
		return true;
	reply_problemf(req, 400,
	               "%s \"%.100s\": expected 1 to %d characters of A-Z a-z 0-9 _ . : + - "
	               "(and not . or ..)",
	               what, s, AIRFLOW_ID_MAX);
	return false;
}

/* limit and offset, as Airflow reads them: limit 0 means the default, more
 * than the maximum is cut to it, a negative one is an error. */
bool airflow_check_id_or_all(struct http_request *req, const char *what, const char *s, bool all)
{
	if (all && !strcmp(s, "~"))
		return true;
	if (!strcmp(s, "~")) {
		reply_problemf(req, 400,
		               "%s \"~\": \"~\" (every one) is taken only by the list routes: GET "
		               "/dags/~/dagRuns, GET /dags/~/dagRuns/~/taskInstances, POST "
		               "/dags/~/dagRuns/list and POST /dags/~/dagRuns/~/taskInstances/list",
		               what);
		return false;
	}
	return airflow_check_id(req, what, s);
}

bool airflow_path_ids_ok(struct http_request *req, const struct route_match *m, bool all_dags,
                         bool all_runs)
{
	const char *dag = route_match_param(m, "dag_id");
	const char *run = route_match_param(m, "dag_run_id");
	const char *task = route_match_param(m, "task_id");

	return (!dag || airflow_check_id_or_all(req, "dag_id", dag, all_dags)) &&
	       (!run || airflow_check_id_or_all(req, "dag_run_id", run, all_runs)) &&
	       (!task || airflow_check_id(req, "task_id", task));
}

bool airflow_path_number(struct http_request *req, const char *what, const char *s, int min,
                         int *out)
{
	int64_t v;

	if (api_parse_int(s, min, 1000000, &v) < 0) {
		reply_problemf(req, 400, "%s \"%.40s\": expected a whole number >= %d", what, s,
		               min);
		return false;
	}
	*out = (int)v;
	return true;
}

void airflow_path_segments(const struct route_match *m, const char *seg[8])
{
	const char *last = route_match_param(m, "xcom_key");

	seg[0] = "dags";
	seg[1] = route_match_param(m, "dag_id");
	seg[2] = "dagRuns";
	seg[3] = route_match_param(m, "dag_run_id");
	seg[4] = "taskInstances";
	seg[5] = route_match_param(m, "task_id");
	seg[6] = route_match_param(m, "map_index");
	seg[7] = last ? last : route_match_param(m, "task_try_number");
}

bool airflow_page_query(struct http_request *req, int *limit, int *offset)
{
	const char *l = http_request_query(req, "limit");
	const char *o = http_request_query(req, "offset");
	int64_t v;

	*limit = AIRFLOW_PAGE_DEFAULT;
	*offset = 0;
	if (l) {
		if (api_parse_int(l, 0, 1000000000L, &v) < 0) {
			reply_problemf(req, 400, "limit \"%.40s\": expected a whole number >= 0",
			               l);
			return false;
		}
		*limit = v == 0                 ? AIRFLOW_PAGE_DEFAULT
		         : v > AIRFLOW_PAGE_MAX ? AIRFLOW_PAGE_MAX
		                                : (int)v;
	}
	if (o) {
		if (api_parse_int(o, 0, 1000000000L, &v) < 0) {
			reply_problemf(req, 400, "offset \"%.40s\": expected a whole number >= 0",
			               o);
			return false;
		}
		*offset = (int)v;
	}
	return true;
}

struct query_check {
	struct http_request *req;
	const char *const *allowed;
};

static bool query_key_known(void *arg, const char *key, const char *value)
{
	struct query_check *c = arg;
	char list[512] = "";

	(void)value;
	for (const char *const *a = c->allowed; *a; a++)
		if (!strcmp(key, *a))
			return true;
	for (const char *const *a = c->allowed; *a; a++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
		         a == c->allowed ? "" : ", ", *a);
	reply_problemf(c->req, 400, "query parameter \"%.60s\": not one this route takes (%s)", key,
	               list);
	return false;
}

bool airflow_query_known(struct http_request *req, const char *const *allowed)
{
	struct query_check c = {req, allowed};

	return http_request_query_each(req, query_key_known, &c);
}

struct query_values {
	const char *key;
	const char **v;
	size_t max, n;
	bool over;
};

static bool query_value_of(void *arg, const char *key, const char *value)
{
	struct query_values *q = arg;

	if (strcmp(key, q->key) || !value || !*value)
		return true;
	if (q->n == q->max) {
		q->over = true;
		return false;
	}
	q->v[q->n++] = value;
	return true;
}

bool airflow_query_list(struct http_request *req, const char *key, const char **v, size_t max,
                        size_t *n)
{
	struct query_values q = {key, v, max, 0, false};

	http_request_query_each(req, query_value_of, &q);
	*n = q.n;
	if (q.over)
		reply_problemf(req, 400, "%s: at most %zu values", key, max);
	return !q.over;
}

bool airflow_query_bool(struct http_request *req, const char *key, bool def, bool *out)
{
	const char *v = http_request_query(req, key);

	*out = def;
	if (!v || !*v)
		return true;
	if (!strcasecmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcasecmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else {
		reply_problemf(req, 400, "%s \"%.40s\": expected true or false", key, v);
		return false;
	}
	return true;
}

bool airflow_query_number(struct http_request *req, const char *key, bool *has, double *out)
{
	const char *v = http_request_query(req, key);
	char *end = NULL;

	*has = false;
	if (!v || !*v)
		return true;
	*out = strtod(v, &end);
	if (end == v || *end || *out != *out) {
		reply_problemf(req, 400, "%s \"%.40s\": expected a number", key, v);
		return false;
	}
	*has = true;
	return true;
}

bool airflow_map_index_query(struct http_request *req, int *map_index)
{
	const char *q = http_request_query(req, "map_index");
	int64_t v;

	*map_index = -1;
	if (!q)
		return true;
	if (api_parse_int(q, -1, 1000000, &v) < 0) {
		reply_problemf(req, 400, "map_index \"%.40s\": expected a whole number >= -1", q);
		return false;
	}
	*map_index = (int)v;
	return true;
}

/* The body as a JSON object whose keys are all in `allowed` (NULL-ended);
 * NULL after answering 400 or 413. */
json_t *airflow_read_body(struct http_request *req, const char *const *allowed)
{
	size_t len;
	const char *text = http_request_body(req, &len);
	json_error_t je;
	json_t *j;
	const char *key;
	json_t *v;

	if (len > MAX_BODY) {
		reply_problemf(req, 413, "request body: at most %u bytes allowed here", MAX_BODY);
		return NULL;
	}
	if (len == 0) {
		reply_problem(req, 400, "request body: expected a JSON object, got nothing");
		return NULL;
	}
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		reply_problemf(req, 400, "request body: invalid JSON at line %d column %d: %s",
		               je.line, je.column, je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		reply_problem(req, 400, "request body: expected a JSON object");
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
			reply_problemf(req, 400,
			               "request body: unknown field \"%.100s\": expected %s", key,
			               list);
			json_decref(j);
			return NULL;
		}
	}
	return j;
}

/* A boolean field: absent gives `def`; -1 after answering 400. */
int airflow_body_bool(struct http_request *req, json_t *body, const char *key, bool def, bool *out)
{
	json_t *v = json_object_get(body, key);

	*out = def;
	if (!v)
		return 0;
	if (!json_is_boolean(v)) {
		reply_problemf(req, 400, "%s: expected true or false", key);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

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

struct dag_reader airflow_reader(const struct http_request *req, enum access_need need)
{
	return (struct dag_reader){
	    .user = http_request_user(req), .role = http_request_role(req), .need = need};
}
