/* test_airflow.c: the workflow routes (Airflow's stable REST API v1) over a
 * real socket: libmicrohttpd on a libuv loop on this thread, a plain HTTP/1.1
 * client of the test's own on another (it sends headers weir's client does
 * not: Basic auth, Accept, and paths exactly as written).  The dag_api_ops
 * are a small table of the test's own standing in for the DAG manager; they
 * record what they were asked, so the tests see what reached the server.
 * Covered: every route, status codes, problem+json, query parsing, bodies,
 * Basic auth right and wrong, log continuation tokens and content
 * negotiation, bad ids and path traversal refused before any op runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/airflow/airflow_request.h"
#include "api/api.h"
#include "api/basic_auth.h"
#include "api/http.h"
#include "lib/clock.h"
#include "model/cron.h"
#include "model/states.h"

#define TOKEN "0123456789abcdef0123456789abcdef"
#define RUN_ID "manual__2024-01-01T00:00:00+00:00"
#define BEARER "Authorization: Bearer " TOKEN "\r\n"

/* ---- the stand-in DAG manager: records its last call ---- */

static struct {
	int calls;
	char op[32];
	char dag_id[300];
	char run_id[300];
	char task_id[300];
	int limit, offset, map_index, try_number;
	char order_by[64], state[32];
	char body[1024];
	char query[1024]; /* a list query as the op saw it (query_text) */
} last;

static char log_path[64];
static bool log_ended;

static void record(const char *op, const char *dag_id, const char *run_id, const char *task_id,
                   json_t *body)
{
	last.calls++;
	snprintf(last.op, sizeof last.op, "%s", op);
	snprintf(last.dag_id, sizeof last.dag_id, "%s", dag_id ? dag_id : "");
	snprintf(last.run_id, sizeof last.run_id, "%s", run_id ? run_id : "");
	snprintf(last.task_id, sizeof last.task_id, "%s", task_id ? task_id : "");
	last.body[0] = '\0';
	if (body) {
		char *t = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
		snprintf(last.body, sizeof last.body, "%s", t);
		free(t);
	}
}

/* A list filter and a date range, appended to last.query: "a,b;" and
 * "gte..lte;" ("-" for an open end). */
static void add_list(const struct dag_str_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		snprintf(last.query + strlen(last.query), sizeof last.query - strlen(last.query),
		         "%s%s", i ? "," : "", l->v[i]);
	snprintf(last.query + strlen(last.query), sizeof last.query - strlen(last.query), ";");
}

static void add_dates(const struct dag_date_range *r)
{
	snprintf(last.query + strlen(last.query), sizeof last.query - strlen(last.query), "%s..%s;",
	         r->gte ?: "-", r->lte ?: "-");
}

static int not_found(struct weir_error *err, const char *what)
{
	return weir_error_set(err, WEIR_E_NOT_FOUND, "%s: no such thing", what);
}

/* The typed rows the stand-in hands back (api/dag_rows.h), which the routes
 * render: a DAG, a run and a TI with the ids asked for. */
static void fake_dag(struct dag_view *d, const char *dag_id, bool paused)
{
	d->row.dag_id = strdup(dag_id);
	d->row.file = strdup("etl.yaml");
	d->row.paused = paused;
	d->row.active = true;
	d->next_ms = CRON_NEVER;
}

static void fake_run(struct dag_run_row *r, const char *dag_id, const char *run_id,
                     enum dag_run_state state)
{
	r->dag_id = strdup(dag_id);
	r->run_id = strdup(run_id);
	snprintf(r->run_type, sizeof r->run_type, "manual");
	r->state = state;
}

static int op_list_dags(void *ctx, const struct dag_list_query *q, struct dag_list *out,
                        struct weir_error *err)
{
	(void)ctx;
	(void)err;
	record("list_dags", NULL, NULL, NULL, NULL);
	last.limit = q->limit;
	last.offset = q->offset;
	snprintf(last.query, sizeof last.query,
	         "active=%d paused=%d desc=%d pattern=%s tags=", q->only_active, q->paused, q->desc,
	         q->dag_id_pattern ?: "-");
	add_list(&q->tags);
	out->v = calloc(1, sizeof *out->v);
	fake_dag(&out->v[0], "etl", false);
	out->n = out->total = 1;
	return 0;
}

static int op_get_dag(void *ctx, const char *dag_id, struct dag_view *out, struct weir_error *err)
{
	(void)ctx;
	record("get_dag", dag_id, NULL, NULL, NULL);
	if (strcmp(dag_id, "etl"))
		return not_found(err, "dag");
	fake_dag(out, dag_id, false);
	return 0;
}

static int op_patch_dag(void *ctx, const char *dag_id, json_t *body, struct dag_view *out,
                        struct weir_error *err)
{
	(void)ctx;
	(void)err;
	record("patch_dag", dag_id, NULL, NULL, body);
	fake_dag(out, dag_id, json_is_true(json_object_get(body, "is_paused")));
	return 0;
}

static int op_list_runs(void *ctx, const char *dag_id, const struct dag_run_list_query *q,
                        struct dag_run_list *out, struct weir_error *err)
{
	(void)ctx;
	(void)err;
	(void)out;
	record("list_runs", dag_id, NULL, NULL, NULL);
	last.limit = q->limit;
	last.offset = q->offset;
	snprintf(last.order_by, sizeof last.order_by, "%s", q->order_by ? q->order_by : "");
	snprintf(last.state, sizeof last.state, "%s", q->states.n ? q->states.v[0] : "");
	last.query[0] = '\0';
	add_list(&q->states);
	add_list(&q->dag_ids);
	add_dates(&q->execution_date);
	add_dates(&q->start_date);
	add_dates(&q->end_date);
	add_dates(&q->updated_at);
	return 0;
}

static int op_trigger(void *ctx, const char *dag_id, json_t *body, struct dag_run_row *out,
                      struct weir_error *err)
{
	(void)ctx;
	record("trigger_run", dag_id, NULL, NULL, body);
	if (!strcmp(json_string_value(json_object_get(body, "dag_run_id")) ?: "", "exists"))
		return weir_error_set(err, WEIR_E_CONFLICT, "dag run exists already");
	fake_run(out, dag_id, RUN_ID, DAG_RUN_QUEUED);
	return 0;
}

static int op_get_run(void *ctx, const char *dag_id, const char *run_id, struct dag_run_row *out,
                      struct weir_error *err)
{
	(void)ctx;
	record("get_run", dag_id, run_id, NULL, NULL);
	if (strcmp(run_id, RUN_ID))
		return not_found(err, "dag run");
	fake_run(out, dag_id, run_id, DAG_RUN_RUNNING);
	return 0;
}

static int op_patch_run(void *ctx, const char *dag_id, const char *run_id, json_t *body,
                        struct dag_run_row *out, struct weir_error *err)
{
	enum dag_run_state st = DAG_RUN_QUEUED;

	(void)ctx;
	(void)err;
	record("patch_run", dag_id, run_id, NULL, body);
	dag_run_state_from_name(json_string_value(json_object_get(body, "state")), &st);
	fake_run(out, dag_id, run_id, st);
	return 0;
}

static int op_list_tis(void *ctx, const char *dag_id, const char *run_id,
                       const struct dag_ti_list_query *q, struct dag_ti_list *out,
                       struct weir_error *err)
{
	(void)ctx;
	(void)err;
	(void)out;
	record("list_tis", dag_id, run_id, NULL, NULL);
	last.limit = q->limit;
	last.offset = q->offset;
	last.query[0] = '\0';
	add_list(&q->states);
	add_list(&q->pools);
	add_list(&q->queues);
	add_list(&q->dag_ids);
	add_list(&q->run_ids);
	add_list(&q->task_ids);
	add_dates(&q->execution_date);
	add_dates(&q->start_date);
	add_dates(&q->end_date);
	add_dates(&q->updated_at);
	snprintf(last.query + strlen(last.query), sizeof last.query - strlen(last.query),
	         "dur=%g..%g", q->has_duration_gte ? q->duration_gte : -1.0,
	         q->has_duration_lte ? q->duration_lte : -1.0);
	return 0;
}

static int op_get_ti(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                     int map_index, struct dag_ti_view *out, struct weir_error *err)
{
	(void)ctx;
	(void)err;
	record("get_ti", dag_id, run_id, task_id, NULL);
	last.map_index = map_index;
	out->row.dag_id = strdup(dag_id);
	out->row.run_id = strdup(run_id);
	out->row.task_id = strdup(task_id);
	out->row.pool = strdup("default_pool");
	out->row.map_index = map_index;
	out->row.state = DAG_TI_SUCCESS;
	return 0;
}

static int op_log_locate(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                         int map_index, int try_number, char **path, bool *ended,
                         struct weir_error *err)
{
	(void)ctx;
	record("ti_log_locate", dag_id, run_id, task_id, NULL);
	last.map_index = map_index;
	last.try_number = try_number;
	if (try_number != 1)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "try %d: no such try", try_number);
	*path = strdup(log_path);
	*ended = log_ended;
	return 0;
}

static int op_clear(void *ctx, const char *dag_id, json_t *body, struct dag_ti_refs *out,
                    struct weir_error *err)
{
	(void)ctx;
	(void)err;
	(void)out;
	record("clear_tis", dag_id, NULL, NULL, body);
	return 0;
}

static int op_import_errors(void *ctx, const struct dag_reader *rd, int limit, int offset,
                            struct dag_import_error_list *out, struct weir_error *err)
{
	(void)ctx;
	(void)rd;
	(void)err;
	(void)out;
	record("import_errors", NULL, NULL, NULL, NULL);
	last.limit = limit;
	last.offset = offset;
	return 0;
}

static const struct dag_api_ops dag_ops = {
    .list_dags = op_list_dags,
    .get_dag = op_get_dag,
    .patch_dag = op_patch_dag,
    .list_runs = op_list_runs,
    .trigger_run = op_trigger,
    .get_run = op_get_run,
    .patch_run = op_patch_run,
    .list_tis = op_list_tis,
    .get_ti = op_get_ti,
    .ti_log_locate = op_log_locate,
    .clear_tis = op_clear,
    .import_errors = op_import_errors,
};

/* weir's own routes need a table too; only the listing is asked here. */
static int op_list_jobs(void *ctx, const char *state, int limit, struct job_view **jobs, size_t *n,
                        struct weir_error *err)
{
	(void)ctx;
	(void)state;
	(void)limit;
	(void)err;
	*jobs = NULL;
	*n = 0;
	return 0;
}

static const struct api_ops job_ops = {.list_jobs = op_list_jobs};

/* ---- the server side ---- */

struct fixture {
	uv_loop_t loop;
	struct api *api;
	struct http_server *http;
	uv_async_t done;
	int port;
};

static void on_done(uv_async_t *a)
{
	uv_stop(a->loop);
}

static char *admin_hash;

/* What the stand-in server says of its store and scheduler. */
static struct api_health health_now;

static void health_of(void *ctx, struct api_health *out)
{
	(void)ctx;
	*out = health_now;
}

static void fixture_start(struct fixture *fx, bool with_dags)
{
	struct weir_error err = {0};
	struct basic_user users[] = {{"admin", admin_hash, ROLE_NONE},
	                             {"ops", admin_hash, ROLE_NONE}};

	assert_int_equal(uv_loop_init(&fx->loop), 0);
	fx->api = api_create(&fx->loop, TOKEN, &job_ops, NULL);
	assert_non_null(fx->api);
	if (with_dags)
		api_set_dag_ops(fx->api, &dag_ops, NULL);
	api_set_health(fx->api, health_of, NULL);
	if (api_set_users(fx->api, users, 2, &err) < 0)
		fail_msg("%s", err.msg);
	fx->http = http_server_create(&fx->loop, "127.0.0.1", 0, api_handle, fx->api, &err);
	if (!fx->http)
		fail_msg("%s", err.msg);
	fx->port = http_server_port(fx->http);
	uv_async_init(&fx->loop, &fx->done, on_done);
}

static void fixture_stop(struct fixture *fx)
{
	api_destroy(fx->api);
	http_server_destroy(fx->http);
	uv_close((uv_handle_t *)&fx->done, NULL);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
}

/* ---- the client side: raw HTTP/1.1 on a thread ---- */

struct reply {
	int status;
	char ctype[128];
	char www_auth[128];
	char token[256];
	char *body; /* de-chunked, NUL-terminated */
	size_t len;
	int calls; /* ops called while it was answered */
	char op[32];
};

#define MAX_REPLIES 64
static struct reply replies[MAX_REPLIES];
static int n_replies;
static int client_port;

static void header_value(const char *head, const char *name, char *out, size_t size)
{
	size_t nl = strlen(name);

	out[0] = '\0';
	for (const char *p = strstr(head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
		const char *line = p + 2;
		if (!strncasecmp(line, name, nl) && line[nl] == ':') {
			const char *v = line + nl + 1, *e = strstr(v, "\r\n");
			while (*v == ' ')
				v++;
			snprintf(out, size, "%.*s", (int)(e ? e - v : (long)strlen(v)), v);
			return;
		}
	}
}

/* Chunked transfer coding, decoded in place. */
static size_t dechunk(char *b, size_t len)
{
	size_t in = 0, out = 0;

	while (in < len) {
		char *end;
		unsigned long n = strtoul(b + in, &end, 16);
		char *crlf = strstr(end, "\r\n");
		if (!crlf || n == 0)
			break;
		in = (size_t)(crlf + 2 - b);
		if (in + n > len)
			n = len - in;
		memmove(b + out, b + in, n);
		out += n;
		in += n + 2;
	}
	b[out] = '\0';
	return out;
}

/* One request on its own connection; headers: extra lines ending "\r\n". */
static void raw(const char *method, const char *path, const char *headers, const char *body)
{
	struct reply *r = &replies[n_replies++];
	struct sockaddr_in sa = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t blen = body ? strlen(body) : 0, cap = 1 << 16, len = 0;
	char *head = malloc(2048 + blen), *buf = malloc(cap + 1), *sep;
	int calls_before = last.calls;
	char te[64];

	(void)calls_before;
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)client_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		abort();
	int hl = snprintf(head, 2048,
	                  "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s"
	                  "Content-Length: %zu\r\n\r\n",
	                  method, path, headers ? headers : "", blen);
	memcpy(head + hl, body ? body : "", blen);
	if (write(fd, head, (size_t)hl + blen) < 0)
		abort();
	for (;;) {
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	free(head);
	sep = strstr(buf, "\r\n\r\n");
	r->status = atoi(buf + 9);
	if (!sep) {
		r->body = strdup("");
		free(buf);
		return;
	}
	sep[2] = '\0';
	header_value(buf, "Content-Type", r->ctype, sizeof r->ctype);
	header_value(buf, "WWW-Authenticate", r->www_auth, sizeof r->www_auth);
	header_value(buf, "X-Weir-Continuation-Token", r->token, sizeof r->token);
	header_value(buf, "Transfer-Encoding", te, sizeof te);
	r->len = len - (size_t)(sep + 4 - buf);
	memmove(buf, sep + 4, r->len);
	buf[r->len] = '\0';
	if (!strcasecmp(te, "chunked"))
		r->len = dechunk(buf, r->len);
	r->body = buf;
}

typedef void (*client_fn)(void);

static void *client_main(void *arg)
{
	struct fixture *fx = ((void **)arg)[0];
	client_fn fn = (client_fn)((void **)arg)[1];

	fn();
	uv_async_send(&fx->done);
	return NULL;
}

static void run(bool with_dags, client_fn fn)
{
	struct fixture fx;
	pthread_t th;
	void *args[2];

	health_now = (struct api_health){.db_ok = true, .last_pass_ms = clock_now_ms() - 1000};
	for (int i = 0; i < n_replies; i++)
		free(replies[i].body);
	memset(replies, 0, sizeof replies);
	n_replies = 0;
	memset(&last, 0, sizeof last);
	fixture_start(&fx, with_dags);
	client_port = fx.port;
	args[0] = &fx;
	args[1] = (void *)fn;
	assert_int_equal(pthread_create(&th, NULL, client_main, args), 0);
	uv_run(&fx.loop, UV_RUN_DEFAULT);
	pthread_join(th, NULL);
	fixture_stop(&fx);
}

/* A problem+json answer with this status whose detail contains `detail`. */
static void assert_problem(int i, int status, const char *detail)
{
	json_t *j = json_loads(replies[i].body, 0, NULL);

	if (replies[i].status != status)
		fail_msg("reply %d: status %d, expected %d: %s", i, replies[i].status, status,
		         replies[i].body);
	if (strcmp(replies[i].ctype, "application/problem+json"))
		fail_msg("reply %d: Content-Type %s: %s", i, replies[i].ctype, replies[i].body);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "status")), status);
	assert_non_null(json_string_value(json_object_get(j, "type")));
	assert_non_null(json_string_value(json_object_get(j, "title")));
	if (!strstr(json_string_value(json_object_get(j, "detail")) ?: "", detail))
		fail_msg("reply %d: detail %s, expected to contain %s", i, replies[i].body, detail);
	json_decref(j);
}

static void assert_ok(int i, const char *needle)
{
	if (replies[i].status != 200 || !strstr(replies[i].body, needle))
		fail_msg("reply %d: %d %s, expected 200 with %s", i, replies[i].status,
		         replies[i].body, needle);
	assert_string_equal(replies[i].ctype, "application/json");
}

/* ---- helpers ---- */

static void test_helpers(void **state)
{
	uint64_t off = 0;
	char *t;

	(void)state;
	assert_true(airflow_id_ok("etl"));
	assert_true(airflow_id_ok(RUN_ID));
	assert_true(airflow_id_ok("a.b-c_d"));
	assert_false(airflow_id_ok(""));
	assert_false(airflow_id_ok("."));
	assert_false(airflow_id_ok(".."));
	assert_false(airflow_id_ok("a/b"));
	assert_false(airflow_id_ok("a b"));
	assert_false(airflow_id_ok("a;rm"));
	assert_false(airflow_id_ok("$(x)"));
	char long_id[AIRFLOW_ID_MAX + 2];
	memset(long_id, 'a', sizeof long_id - 1);
	long_id[AIRFLOW_ID_MAX + 1] = '\0';
	assert_false(airflow_id_ok(long_id));
	long_id[AIRFLOW_ID_MAX] = '\0';
	assert_true(airflow_id_ok(long_id));

	assert_false(airflow_accept_text(NULL));
	assert_false(airflow_accept_text("application/json"));
	assert_true(airflow_accept_text("text/plain"));
	assert_true(airflow_accept_text("*/*"));
	assert_true(airflow_accept_text("text/*, application/json;q=0.9"));
	assert_false(airflow_accept_text("text/plain;q=0.5, application/json"));
	assert_false(airflow_accept_text("image/png"));
	assert_false(airflow_accept_text("application/*"));

	t = airflow_log_token_encode(12345, false);
	assert_non_null(t);
	assert_null(strchr(t, '='));
	assert_int_equal(airflow_log_token_decode(t, &off), 0);
	assert_int_equal(off, 12345);
	free(t);
	t = airflow_log_token_encode(0, true);
	assert_int_equal(airflow_log_token_decode(t, &off), 0);
	assert_int_equal(off, 0);
	free(t);
	assert_int_equal(airflow_log_token_decode("nonsense!", &off), -1);
	assert_int_equal(airflow_log_token_decode("e30", &off), -1); /* {} */
	assert_int_equal(airflow_log_token_decode("eyJvZmZzZXQiOi0xfQ", &off),
	                 -1); /* {"offset":-1} */
	assert_int_equal(airflow_log_token_decode("", &off), -1);
}

static void test_password_hash(void **state)
{
	struct weir_error err = {0};
	char *h = NULL, *h2 = NULL;
	struct basic_user users[] = {{"admin", NULL, ROLE_NONE}};

	(void)state;
	assert_int_equal(basic_auth_hash_password("s3cret:with colon", 1000, &h, &err), 0);
	assert_int_equal(strncmp(h, "pbkdf2-sha256$1000$", 19), 0);
	assert_int_equal(strlen(h), 19 + 32 + 1 + 64);
	assert_int_equal(basic_auth_hash_valid(h, &err), 0);
	assert_true(basic_auth_verify_password("s3cret:with colon", h));
	assert_false(basic_auth_verify_password("s3cret:with colo", h));
	assert_false(basic_auth_verify_password("", h));
	/* a fresh salt each time */
	assert_int_equal(basic_auth_hash_password("s3cret:with colon", 1000, &h2, &err), 0);
	assert_string_not_equal(h, h2);
	users[0].password_hash = h;
	assert_true(basic_auth_verify("admin:s3cret:with colon", users, 1));
	assert_false(basic_auth_verify("admin:nope", users, 1));
	assert_false(basic_auth_verify("root:s3cret:with colon", users, 1));
	assert_false(basic_auth_verify("admin", users, 1));

	assert_int_equal(basic_auth_hash_password("x", 10, &h2 /* untouched */, &err), -1);
	assert_int_equal(basic_auth_hash_valid("sha1$1000$00$00", &err), -1);
	assert_non_null(strstr(err.msg, "pbkdf2-sha256$ITER$SALT_HEX$HASH_HEX"));
	assert_int_equal(basic_auth_hash_valid("pbkdf2-sha256$10$0123456789abcdef0123456789abcdef$"
	                                       "0123456789abcdef0123456789abcdef0123456789abcdef"
	                                       "0123456789abcdef",
	                                       &err),
	                 -1);
	assert_non_null(strstr(err.msg, "iteration"));
	assert_int_equal(basic_auth_hash_valid("pbkdf2-sha256$1000$0123$00", &err), -1);
	assert_non_null(strstr(err.msg, "salt of 16 to 128"));
	assert_false(basic_auth_verify_password("x", "pbkdf2-sha256$1000$zz"));
	/* a hash made elsewhere (Python's hashlib.pbkdf2_hmac) verifies: the
	 * format and the key derivation are the standard ones */
	assert_true(basic_auth_verify_password(
	    "hunter2", "pbkdf2-sha256$1000$00112233445566778899aabbccddeeff$"
	               "7565f4d66ef6cfaafc300808e5b75c36c3201244948697acfbd349ae21c10d63"));
	assert_false(basic_auth_verify_password(
	    "hunter3", "pbkdf2-sha256$1000$00112233445566778899aabbccddeeff$"
	               "7565f4d66ef6cfaafc300808e5b75c36c3201244948697acfbd349ae21c10d63"));
	/* the system tests' hash: a 17-byte salt */
	assert_true(basic_auth_verify_password(
	    "hunter2", "pbkdf2-sha256$1000$776569722d737973746573742d73616c74$"
	               "6f4e13dd8a0875ac6c06aa34f7aa25f41a63a420fe2125d4886903d0b3cf230e"));
	assert_int_equal(basic_auth_hash_valid(
	                     "pbkdf2-sha256$1000$0011223344556677889$"
	                     "7565f4d66ef6cfaafc300808e5b75c36c3201244948697acfbd349ae21c10d63",
	                     &err),
	                 -1);
	users[0].password_hash = "plain-text-password";
	assert_null(basic_auth_create(users, 1, &err));
	assert_non_null(strstr(err.msg, "users[0] (admin)"));
	free(h);
	free(h2);
}

/* ---- routes ---- */

static int r_calls[MAX_REPLIES];

/* Each request, and how many op calls had happened when it was answered. */
static void rq(const char *method, const char *path, const char *headers, const char *body)
{
	raw(method, path, headers, body);
	r_calls[n_replies - 1] = last.calls;
	snprintf(replies[n_replies - 1].op, sizeof replies[n_replies - 1].op, "%s", last.op);
}

static void routes_client(void)
{
	/* 0 */ rq("GET", "/api/v1/dags?limit=5&offset=2", BEARER, NULL);
	/* 1 */ rq("GET", "/api/v1/dags?limit=0", BEARER, NULL);
	/* 2 */ rq("GET", "/api/v1/dags?limit=5000", BEARER, NULL);
	/* 3 */ rq("GET", "/api/v1/dags?limit=-1", BEARER, NULL);
	/* 4 */ rq("GET", "/api/v1/dags/etl", BEARER, NULL);
	/* 5 */ rq("GET", "/api/v1/dags/nope", BEARER, NULL);
	/* 6 */ rq("PATCH", "/api/v1/dags/etl?update_mask=is_paused", BEARER,
	           "{\"is_paused\":true}");
	/* 7 */ rq("PATCH", "/api/v1/dags/etl", BEARER, "{\"is_paused\":\"yes\"}");
	/* 8 */ rq("PATCH", "/api/v1/dags/etl", BEARER, "{\"is_paused\":true,\"tags\":[]}");
	/* 9 */ rq("PATCH", "/api/v1/dags/etl?update_mask=tags", BEARER, "{\"is_paused\":true}");
	/* 10 */ rq("GET",
	            "/api/v1/dags/etl/dagRuns?limit=10&offset=1&order_by=-execution_date"
	            "&state=running",
	            BEARER, NULL);
	/* 11 */ rq("GET", "/api/v1/dags/etl/dagRuns?order_by=password", BEARER, NULL);
	/* 12 */ rq("GET", "/api/v1/dags/etl/dagRuns?state=sleepy", BEARER, NULL);
	/* 13 */ rq("POST", "/api/v1/dags/etl/dagRuns", BEARER,
	            "{\"conf\":{\"day\":\"x; rm -rf /\"},\"dag_run_id\":\"r1\","
	            "\"logical_date\":\"2024-01-01T00:00:00+00:00\"}");
	/* 14 */ rq("POST", "/api/v1/dags/etl/dagRuns", BEARER, "{\"dag_run_id\":\"exists\"}");
	/* 15 */ rq("POST", "/api/v1/dags/etl/dagRuns", BEARER, "{not json");
	/* 16 */ rq("POST", "/api/v1/dags/etl/dagRuns", BEARER, "{\"confx\":{}}");
	/* 17 */ rq("POST", "/api/v1/dags/etl/dagRuns", BEARER, "{\"conf\":\"a=b\"}");
	/* 18 */ rq("POST", "/api/v1/dags/etl/dagRuns", BEARER,
	            "{\"execution_date\":\"2024-02-01T00:00:00Z\"}");
	/* 19 */ rq("POST", "/api/v1/dags/etl/dagRuns", BEARER, "{\"dag_run_id\":\"../x\"}");
	/* 20 */ rq("GET", "/api/v1/dags/etl/dagRuns/manual__2024-01-01T00%3A00%3A00%2B00%3A00",
	            BEARER, NULL);
	/* 21 */ rq("GET", "/api/v1/dags/etl/dagRuns/other", BEARER, NULL);
	/* 22 */ rq("PATCH", "/api/v1/dags/etl/dagRuns/r1", BEARER, "{\"state\":\"failed\"}");
	/* 23 */ rq("PATCH", "/api/v1/dags/etl/dagRuns/r1", BEARER, "{\"state\":\"running\"}");
	/* 24 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances", BEARER, NULL);
	/* 25 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train?map_index=2", BEARER,
	            NULL);
	/* 26 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train", BEARER, NULL);
	/* 27 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train/3", BEARER, NULL);
	/* 28 */ rq("POST", "/api/v1/dags/etl/clearTaskInstances", BEARER,
	            "{\"dag_run_id\":\"r1\",\"task_ids\":[\"train\"],\"dry_run\":false,"
	            "\"include_downstream\":true,\"reset_dag_runs\":true}");
	/* 29 */ rq("POST", "/api/v1/dags/etl/clearTaskInstances", BEARER,
	            "{\"include_future\":true}");
	/* 30 */ rq("POST", "/api/v1/dags/etl/clearTaskInstances", BEARER,
	            "{\"task_ids\":[\"a b\"]}");
	/* 31 */ rq("GET", "/api/v1/importErrors?limit=3", BEARER, NULL);
	/* 32 */ rq("DELETE", "/api/v1/dags/etl", BEARER, NULL);
	/* 33 */ rq("GET", "/api/v1/dags/etl/nothing", BEARER, NULL);
	/* 34 */ rq("GET", "/api/v1/dags/..%2F..%2Fjobs", BEARER, NULL);
	/* 35 */ rq("GET", "/api/v1/dags/../../jobs", BEARER, NULL);
	/* 36 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/..%2F/logs/1", BEARER, NULL);
	/* 37 */ rq("GET", "/api/v1/dags/a%20b", BEARER, NULL);
	/* 38 */ rq("GET", "/api/v1/dags/a%3Bb", BEARER, NULL);
	/* 39 */ rq(
	    "GET",
	    "/api/v1/dags/"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaa",
	    BEARER, NULL);
	/* 40 */ rq("POST", "/api/v1/dags/etl/dagRuns", BEARER, "");
	/* 41 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train?map_index=x", BEARER,
	            NULL);
	/* 42 */ rq("POST", "/api/v1/importErrors", BEARER, "{}");
	/* 43 */ rq("GET",
	            "/api/v1/dags/etl/dagRuns/r1/taskInstances/..%2F..%2Fetc%2Fpasswd/logs/1",
	            BEARER, NULL);
	/* 44 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train/logs/..", BEARER, NULL);
	/* 45 */ rq("GET", "/api/v1/dags/~/dagRuns?order_by=start_date", BEARER, NULL);
	/* 46 */ rq("POST", "/api/v1/dags/~/dagRuns", BEARER, "{}");
	/* 47 */ rq("GET", "/api/v1/dags/~", BEARER, NULL);
}

static void test_routes(void **state)
{
	(void)state;
	run(true, routes_client);

	assert_ok(0, "\"total_entries\":1");
	/* the op calls are counted in order: 0 is the first call */
	assert_int_equal(r_calls[0], 1);
	assert_ok(1, "etl");
	assert_ok(2, "etl");
	assert_problem(3, 400, "limit");
	assert_int_equal(r_calls[3], 3); /* no op call for a refused request */
	assert_ok(4, "\"dag_id\":\"etl\"");
	assert_problem(5, 404, "no such thing");
	assert_ok(6, "\"is_paused\":true");
	assert_string_equal(replies[6].op, "patch_dag");
	assert_problem(7, 400, "is_paused");
	assert_problem(8, 400, "unknown field \"tags\"");
	assert_problem(9, 400, "update_mask");
	assert_ok(10, "dag_runs");
	assert_problem(11, 400, "order_by");
	assert_problem(12, 400, "state");
	assert_ok(13, RUN_ID);
	assert_problem(14, 409, "exists");
	assert_problem(15, 400, "invalid JSON");
	assert_problem(16, 400, "unknown field \"confx\"");
	assert_problem(17, 400, "conf");
	assert_ok(18, "queued");
	assert_problem(19, 400, "dag_run_id");
	assert_ok(20, RUN_ID);
	assert_problem(21, 404, "dag run");
	assert_ok(22, "\"state\":\"failed\"");
	assert_problem(23, 400, "state");
	assert_ok(24, "task_instances");
	assert_ok(25, "\"map_index\":2");
	assert_ok(26, "\"map_index\":-1");
	assert_ok(27, "\"map_index\":3");
	assert_ok(28, "task_instances");
	assert_problem(29, 400, "include_future");
	assert_problem(30, 400, "task_ids[0]");
	assert_ok(31, "import_errors");
	assert_problem(32, 405, "DELETE");
	assert_problem(33, 404, "no such route");
	assert_problem(34, 400, "dag_id");
	assert_problem(35, 400, "dag_id");
	assert_problem(36, 400, "task_id");
	assert_problem(37, 400, "dag_id");
	assert_problem(38, 400, "dag_id");
	assert_problem(39, 400, "dag_id");
	assert_problem(40, 400, "got nothing");
	assert_problem(41, 400, "map_index");
	assert_problem(42, 405, "POST");
	assert_problem(43, 404, "no such route");
	assert_problem(44, 400, "try_number");
	assert_ok(45, "dag_runs");
	assert_problem(46, 400, "dag_id");
	assert_problem(47, 400, "dag_id");
	/* none of the refused paths reached an op */
	for (int i = 32; i <= 44; i++)
		if (i != 33)
			assert_int_equal(r_calls[i], r_calls[31]);
}

/* What reached the ops, checked one request at a time. */
static void one(const char *method, const char *path, const char *body)
{
	rq(method, path, BEARER, body);
}

static char seen[9][1024];

static void seen_client(void)
{
	one("GET", "/api/v1/dags?limit=5&offset=2", NULL);
	snprintf(seen[0], sizeof seen[0], "%d %d", last.limit, last.offset);
	one("GET", "/api/v1/dags?limit=0", NULL);
	snprintf(seen[1], sizeof seen[1], "%d %d", last.limit, last.offset);
	one("GET", "/api/v1/dags?limit=5000", NULL);
	snprintf(seen[2], sizeof seen[2], "%d", last.limit);
	one("GET",
	    "/api/v1/dags/etl/dagRuns?limit=10&offset=1&order_by=-execution_date&state=running",
	    NULL);
	snprintf(seen[3], sizeof seen[3], "%s %d %d %s %s", last.dag_id, last.limit, last.offset,
	         last.order_by, last.state);
	one("POST", "/api/v1/dags/etl/dagRuns",
	    "{\"conf\":{\"day\":\"x; rm -rf /\"},\"dag_run_id\":\"r1\","
	    "\"logical_date\":\"2024-01-01T00:00:00+00:00\"}");
	snprintf(seen[4], sizeof seen[4], "%s", last.body);
	one("POST", "/api/v1/dags/etl/dagRuns", "{\"execution_date\":\"2024-02-01T00:00:00Z\"}");
	snprintf(seen[5], sizeof seen[5], "%s", last.body);
	one("GET", "/api/v1/dags/etl/dagRuns/manual__2024-01-01T00%3A00%3A00%2B00%3A00", NULL);
	snprintf(seen[6], sizeof seen[6], "%s", last.run_id);
	one("GET", "/api/v1/dags/~/dagRuns", NULL);
	snprintf(seen[8], sizeof seen[8], "%s", last.dag_id);
	one("POST", "/api/v1/dags/etl/clearTaskInstances",
	    "{\"dag_run_id\":\"r1\",\"task_ids\":[\"train\"],\"include_downstream\":true}");
	snprintf(seen[7], sizeof seen[7], "%s", last.body);
}

/* The list routes' filters: what reaches the ops, and what is refused
 * (each with a 400 naming the parameter, before any op runs). */
static char lists_seen[16][1024];

static void lists_client(void)
{
	int k = 0;
#define SEEN() snprintf(lists_seen[k++], sizeof lists_seen[0], "%s %s", last.op, last.query)
	/* 0 */ one("GET",
	            "/api/v1/dags?tags=ml&tags=nightly&dag_id_pattern=et%25l&paused=true"
	            "&only_active=false&order_by=-dag_id",
	            NULL);
	SEEN();
	/* 1 */ one("GET", "/api/v1/dags", NULL);
	SEEN();
	/* 2 */ one("GET", "/api/v1/dags?fields=dag_id", NULL);
	/* 3 */ one("GET",
	            "/api/v1/dags/etl/dagRuns?state=running&state=queued"
	            "&execution_date_gte=2024-01-01T00:00:00Z&end_date_lte=2024-02-01",
	            NULL);
	SEEN();
	/* 4 */ one("GET",
	            "/api/v1/dags/etl/dagRuns/r1/taskInstances?state=success&state=none&pool=p"
	            "&queue=q&duration_gte=1.5&updated_at_lte=2024-03-01&limit=5&offset=2",
	            NULL);
	SEEN();
	snprintf(lists_seen[k++], sizeof lists_seen[0], "%d %d", last.limit, last.offset);
	/* 5 */ one("GET", "/api/v1/dags/~/dagRuns/~/taskInstances", NULL);
	snprintf(lists_seen[k++], sizeof lists_seen[0], "%s %s %s", last.op, last.dag_id,
	         last.run_id);
	/* 6 */ one("POST", "/api/v1/dags/~/dagRuns/list",
	            "{\"dag_ids\":[\"etl\",\"b\"],\"states\":[\"failed\"],\"page_limit\":5,"
	            "\"start_date_gte\":\"2024-01-01\"}");
	SEEN();
	/* 7 */ one("POST", "/api/v1/dags/~/dagRuns/~/taskInstances/list",
	            "{\"dag_ids\":[\"etl\"],\"task_ids\":[\"t\"],\"state\":[\"failed\"],"
	            "\"duration_lte\":60}");
	SEEN();
	snprintf(lists_seen[k++], sizeof lists_seen[0], "%d", last.calls);
	/* refused: none reaches an op */
	/* 8 */ one("GET", "/api/v1/dags?tag=ml", NULL);
	/* 9 */ one("GET", "/api/v1/dags?order_by=fileloc", NULL);
	/* 10 */ one("GET", "/api/v1/dags?fields=dag_id,password", NULL);
	/* 11 */ one("GET", "/api/v1/dags?paused=maybe", NULL);
	/* 12 */ one("GET", "/api/v1/dags/etl/dagRuns?state=running&state=sleepy", NULL);
	/* 13 */ one("GET", "/api/v1/dags/etl/dagRuns?dag_id=etl", NULL);
	/* 14 */ one("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances?executor=celery", NULL);
	/* 15 */ one("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances?order_by=start_date", NULL);
	/* 16 */ one("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances?duration_gte=long", NULL);
	/* 17 */ one("GET", "/api/v1/importErrors?order_by=filename", NULL);
	/* 18 */ one("POST", "/api/v1/dags/~/dagRuns/list", "{\"dag_ids\":[\"a b\"]}");
	/* 19 */ one("POST", "/api/v1/dags/~/dagRuns/list", "{\"updated\":1}");
	/* 20 */ one("GET", "/api/v1/dags/~/dagRuns/list", NULL);
	snprintf(lists_seen[k++], sizeof lists_seen[0], "%d", last.calls);
#undef SEEN
}

static void test_list_filters(void **state)
{
	json_t *j;

	(void)state;
	run(true, lists_client);
	assert_string_equal(lists_seen[0],
	                    "list_dags active=0 paused=1 desc=1 pattern=et%l tags=ml,nightly;");
	/* Airflow's defaults: active DAGs only, paused or not, by dag_id */
	assert_string_equal(lists_seen[1], "list_dags active=1 paused=-1 desc=0 pattern=- tags=;");
	j = json_loads(replies[2].body, 0, NULL);
	assert_non_null(j);
	json_t *d = json_array_get(json_object_get(j, "dags"), 0);
	assert_string_equal(json_string_value(json_object_get(d, "dag_id")), "etl");
	assert_null(json_object_get(d, "is_paused")); /* fields=dag_id keeps only it */
	assert_int_equal(json_integer_value(json_object_get(j, "total_entries")), 1);
	json_decref(j);
	assert_string_equal(lists_seen[2], "list_runs running,queued;;2024-01-01T00:00:00Z..-;"
	                                   "-..-;-..2024-02-01;-..-;");
	assert_string_equal(lists_seen[3], "list_tis success,none;p;q;;;;-..-;-..-;-..-;"
	                                   "-..2024-03-01;dur=1.5..-1");
	assert_string_equal(lists_seen[4], "5 2");
	assert_string_equal(lists_seen[5], "list_tis ~ ~");
	assert_string_equal(lists_seen[6], "list_runs failed;etl,b;-..-;2024-01-01..-;-..-;-..-;");
	assert_string_equal(lists_seen[7], "list_tis failed;;;etl;;t;-..-;-..-;-..-;-..-;"
	                                   "dur=-1..60");
	assert_problem(8, 400, "query parameter \"tag\"");
	assert_problem(9, 400, "order_by");
	assert_problem(10, 400, "password");
	assert_problem(11, 400, "paused");
	assert_problem(12, 400, "sleepy");
	assert_problem(13, 400, "\"dag_id\"");
	assert_problem(14, 400, "executor");
	assert_problem(15, 400, "order_by");
	assert_problem(16, 400, "duration_gte");
	assert_problem(17, 400, "order_by");
	assert_problem(18, 400, "dag_ids");
	assert_problem(19, 400, "updated");
	assert_problem(20, 405, "GET");
	/* none of the refused requests reached an op */
	assert_string_equal(lists_seen[8], lists_seen[9]);
}

/* Unknown paths are 404 (problem+json); "~" only where Airflow takes it. */
static void paths_client(void)
{
	/* 0 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train/xcomEntries", BEARER,
	           NULL);
	/* 1 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train/2/xcomEntries", BEARER,
	           NULL);
	/* 2 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train/-1", BEARER, NULL);
	/* 3 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train/2", BEARER, NULL);
	/* 4 */ rq("GET", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train/2/tries", BEARER, NULL);
	/* 5 */ rq("GET", "/api/v1/dags/~/dagRuns/r1", BEARER, NULL);
	/* 6 */ rq("GET", "/api/v1/dags/etl/dagRuns/~/taskInstances", BEARER, NULL);
	/* 7 */ rq("GET", "/api/v1/dags/etl/dagRuns/~", BEARER, NULL);
	/* 8 */ rq("PATCH", "/api/v1/dags/etl/dagRuns/r1/taskInstances/train/logs", BEARER, "{}");
}

static void test_unknown_paths(void **state)
{
	(void)state;
	run(true, paths_client);
	assert_problem(0, 404, "no such route");
	assert_problem(1, 404, "no such route");
	assert_problem(2, 400, "map_index");
	assert_ok(3, "\"map_index\":2");
	assert_int_equal(r_calls[0], 0); /* the 404s reached no op */
	assert_int_equal(r_calls[1], 0);
	assert_problem(5, 400, "dag_id \"~\"");
	assert_ok(6, "task_instances");
	assert_string_equal(replies[6].op, "list_tis");
	assert_problem(7, 400, "dag_run_id \"~\"");
	assert_problem(8, 404, "no such route");
}

/* Health says what the server reports: a store that failed its query and a
 * scheduler whose last pass is old are unhealthy, and the heartbeat is the
 * pass's time, not the request's. */
static struct api_health health_cases[3];

static void health_client(void)
{
	for (int i = 0; i < 3; i++) {
		health_now = health_cases[i];
		rq("GET", "/api/v1/health", NULL, NULL);
	}
}

static const char *health_field(int i, const char *what, const char *key)
{
	static char buf[3][64];
	json_t *h = json_loads(replies[i].body, 0, NULL);
	json_t *v = json_object_get(json_object_get(h, what), key);

	snprintf(buf[i], sizeof buf[i], "%s", json_is_null(v) ? "null" : json_string_value(v));
	json_decref(h);
	return buf[i];
}

static void test_health(void **state)
{
	int64_t now = clock_now_ms();

	(void)state;
	health_cases[0] = (struct api_health){.db_ok = true, .last_pass_ms = now - 2000};
	health_cases[1] = (struct api_health){.db_ok = false, .last_pass_ms = now - 60000};
	health_cases[2] = (struct api_health){.db_ok = true, .last_pass_ms = 0};
	run(true, health_client);
	for (int i = 0; i < 3; i++)
		assert_int_equal(replies[i].status, 200);
	assert_string_equal(health_field(0, "metadatabase", "status"), "healthy");
	assert_string_equal(health_field(0, "scheduler", "status"), "healthy");
	char beat[40];
	clock_format_iso(now - 2000, beat, sizeof beat);
	assert_string_equal(health_field(0, "scheduler", "latest_scheduler_heartbeat"), beat);
	assert_string_equal(health_field(1, "metadatabase", "status"), "unhealthy");
	assert_string_equal(health_field(1, "scheduler", "status"), "unhealthy");
	clock_format_iso(now - 60000, beat, sizeof beat);
	assert_string_equal(health_field(1, "scheduler", "latest_scheduler_heartbeat"), beat);
	/* no pass yet */
	assert_string_equal(health_field(2, "scheduler", "status"), "unhealthy");
	assert_string_equal(health_field(2, "scheduler", "latest_scheduler_heartbeat"), "null");
}

static void test_what_ops_see(void **state)
{
	(void)state;
	run(true, seen_client);
	assert_string_equal(seen[0], "5 2");
	assert_string_equal(seen[8], "~");
	assert_string_equal(seen[1], "100 0");
	assert_string_equal(seen[2], "1000");
	assert_string_equal(seen[3], "etl 10 1 -execution_date running");
	assert_string_equal(seen[4], "{\"conf\":{\"day\":\"x; rm -rf /\"},\"dag_run_id\":\"r1\","
	                             "\"logical_date\":\"2024-01-01T00:00:00+00:00\"}");
	assert_string_equal(seen[5], "{\"logical_date\":\"2024-02-01T00:00:00Z\"}");
	assert_string_equal(seen[6], RUN_ID);
	/* Airflow's defaults: dry_run and only_failed true, include_subdags false */
	assert_string_equal(seen[7], "{\"dag_run_id\":\"r1\",\"dry_run\":true,"
	                             "\"include_downstream\":true,\"include_subdags\":false,"
	                             "\"only_failed\":true,\"task_ids\":[\"train\"]}");
}

/* ---- auth and health ---- */

/* "Basic " + base64 of user:password, as curl -u sends it */
#define BASIC_ADMIN "Authorization: Basic YWRtaW46czNjcmV0\r\n"  /* admin:s3cret */
#define BASIC_WRONG "Authorization: Basic YWRtaW46czNjcmV1\r\n"  /* admin:s3creu */
#define BASIC_NOBODY "Authorization: Basic cm9vdDpzM2NyZXQ=\r\n" /* root:s3cret */
#define BASIC_JUNK "Authorization: Basic !!!!\r\n"

static void auth_client(void)
{
	/* 0 */ rq("GET", "/api/v1/dags", NULL, NULL);
	/* 1 */ rq("GET", "/api/v1/dags", BASIC_ADMIN, NULL);
	/* 2 */ rq("GET", "/api/v1/dags", BASIC_WRONG, NULL);
	/* 3 */ rq("GET", "/api/v1/dags", BASIC_NOBODY, NULL);
	/* 4 */ rq("GET", "/api/v1/dags", BASIC_JUNK, NULL);
	/* 5 */ rq("GET", "/api/v1/dags", "Authorization: Bearer wrong\r\n", NULL);
	/* 6 */ rq("GET", "/api/v1/jobs", BASIC_ADMIN, NULL);
	/* 7 */ rq("GET", "/api/v1/jobs", BASIC_WRONG, NULL);
	/* 8 */ rq("GET", "/api/v1/health", NULL, NULL);
	/* 9: the cached success answers again */
	rq("GET", "/api/v1/importErrors", BASIC_ADMIN, NULL);
	/* 10 */ rq("GET", "/api/v1/dags/..%2F..", NULL, NULL);
}

static void test_auth(void **state)
{
	json_t *h;

	(void)state;
	run(true, auth_client);
	assert_problem(0, 401, "credentials");
	assert_string_equal(replies[0].www_auth, "Basic realm=\"weir\"");
	assert_ok(1, "etl");
	assert_problem(2, 401, "credentials");
	assert_string_equal(replies[2].www_auth, "Basic realm=\"weir\"");
	assert_problem(3, 401, "credentials");
	assert_problem(4, 401, "credentials");
	assert_problem(5, 401, "credentials");
	assert_ok(6, "jobs");
	assert_int_equal(replies[7].status, 401);
	assert_non_null(strstr(replies[7].body, "\"status\":401")); /* weir's own shape there */
	h = json_loads(replies[8].body, 0, NULL);
	assert_int_equal(replies[8].status, 200);
	assert_string_equal(json_string_value(json_object_get(h, "status")), "ok");
	assert_non_null(json_object_get(h, "version"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(h, "metadatabase"), "status")),
	    "healthy");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(h, "scheduler"), "status")),
	    "healthy");
	assert_non_null(json_string_value(
	    json_object_get(json_object_get(h, "scheduler"), "latest_scheduler_heartbeat")));
	json_decref(h);
	assert_ok(9, "import_errors");
	/* auth comes first: an anonymous probe learns nothing about paths */
	assert_problem(10, 401, "credentials");
}

static void off_client(void)
{
	rq("GET", "/api/v1/dags", BEARER, NULL);
	rq("GET", "/api/v1/jobs", BEARER, NULL);
}

static void test_no_dag_manager(void **state)
{
	(void)state;
	run(false, off_client);
	assert_problem(0, 503, "DAG manager");
	assert_ok(1, "jobs");
}

/* ---- logs ---- */

#define LOGS "/api/v1/dags/etl/dagRuns/r1/taskInstances/train/logs/"
#define ACCEPT_JSON "Accept: application/json\r\n"
#define ACCEPT_TEXT "Accept: text/plain\r\n"

static void write_log(const char *mode, const char *text, size_t len)
{
	FILE *f = fopen(log_path, mode);
	assert_non_null(f);
	fwrite(text, 1, len, f);
	fclose(f);
}

static char tokens[4][256];

/* The continuation_token of JSON reply i. */
static void json_token(int i, char *out)
{
	json_t *j = json_loads(replies[i].body, 0, NULL);
	snprintf(out, 256, "%s", json_string_value(json_object_get(j, "continuation_token")) ?: "");
	json_decref(j);
}

static void logs_client(void)
{
	char path[512];

	/* 0 */ rq("GET", LOGS "1", BEARER ACCEPT_JSON, NULL);
	json_token(0, tokens[0]);
	write_log("a", "three \xc3\xa9\n", 9);
	snprintf(path, sizeof path, LOGS "1?token=%s", tokens[0]);
	/* 1 */ rq("GET", path, BEARER ACCEPT_JSON, NULL);
	json_token(1, tokens[1]);
	/* 2: full_content starts over whatever the token says */
	snprintf(path, sizeof path, LOGS "1?full_content=true&token=%s", tokens[1]);
	rq("GET", path, BEARER ACCEPT_JSON, NULL);
	/* 3 */ rq("GET", LOGS "1", BEARER ACCEPT_TEXT, NULL);
	/* 4 */ snprintf(path, sizeof path, LOGS "1?token=%s", tokens[0]);
	rq("GET", path, BEARER ACCEPT_TEXT, NULL);
	/* 5: curl's default Accept */
	rq("GET", LOGS "1", BEARER "Accept: */*\r\n", NULL);
	/* 6: no Accept: JSON */
	rq("GET", LOGS "1?map_index=4", BEARER, NULL);
	/* 7 */ rq("GET", LOGS "1?token=bm90IG91cnM", BEARER, NULL);
	/* 8 */ rq("GET", LOGS "2", BEARER, NULL);
	/* 9 */ rq("GET", LOGS "0", BEARER, NULL);
	/* 10 */ rq("GET", LOGS "1?full_content=maybe", BEARER, NULL);
	/* 11 */ rq("GET", LOGS "1/extra", BEARER, NULL);
	/* 12: invalid UTF-8 still gives valid JSON */
	write_log("a", "bad \xff\xfe!\n", 8);
	rq("GET", LOGS "1", BEARER ACCEPT_JSON, NULL);
	/* 13: the task ends: end_of_log */
	log_ended = true;
	rq("GET", LOGS "1", BEARER ACCEPT_JSON, NULL);
	json_token(13, tokens[2]);
}

static void test_logs(void **state)
{
	json_t *j;
	uint64_t off;

	(void)state;
	snprintf(log_path, sizeof log_path, "/tmp/weir-airflow-log-%d", (int)getpid());
	write_log("w", "one\ntwo\n", 8);
	log_ended = false;
	run(true, logs_client);

	assert_ok(0, "\"content\":\"one\\ntwo\\n\"");
	assert_int_equal(airflow_log_token_decode(tokens[0], &off), 0);
	assert_int_equal(off, 8);
	assert_ok(1, "\"content\":\"three \xc3\xa9\\n\"");
	assert_int_equal(airflow_log_token_decode(tokens[1], &off), 0);
	assert_int_equal(off, 17);
	assert_ok(2, "\"content\":\"one\\ntwo\\nthree \xc3\xa9\\n\"");
	assert_int_equal(replies[3].status, 200);
	assert_string_equal(replies[3].ctype, "text/plain; charset=utf-8");
	assert_string_equal(replies[3].body, "one\ntwo\nthree \xc3\xa9\n");
	assert_int_equal(airflow_log_token_decode(replies[3].token, &off), 0);
	assert_int_equal(off, 17);
	assert_string_equal(replies[4].body, "three \xc3\xa9\n");
	assert_string_equal(replies[5].ctype, "text/plain; charset=utf-8");
	assert_ok(6, "continuation_token");
	assert_problem(7, 400, "token");
	assert_problem(8, 404, "try 2");
	assert_problem(9, 400, "try_number");
	assert_problem(10, 400, "full_content");
	assert_problem(11, 404, "no such route");
	assert_int_equal(replies[12].status, 200);
	j = json_loads(replies[12].body, 0, NULL);
	assert_non_null(j);
	assert_non_null(strstr(json_string_value(json_object_get(j, "content")),
	                       "bad \xef\xbf\xbd\xef\xbf\xbd!\n"));
	json_decref(j);
	/* the end-of-log token says so */
	char *ended = airflow_log_token_encode(25, true);
	assert_string_equal(tokens[2], ended);
	free(ended);
	unlink(log_path);
}

/* A log of more than one JSON fragment, cut in the middle of a character:
 * the cut moves back to the character's start and nothing is lost. */
static char *big_a, *big_b;

static void big_client(void)
{
	char path[512];

	rq("GET", LOGS "1", BEARER ACCEPT_JSON, NULL);
	json_token(0, tokens[0]);
	snprintf(path, sizeof path, LOGS "1?token=%s", tokens[0]);
	rq("GET", path, BEARER ACCEPT_JSON, NULL);
	rq("GET", LOGS "1?full_content=true", BEARER ACCEPT_JSON, NULL);
}

static void test_logs_fragments(void **state)
{
	const size_t n = (1u << 20) - 1;
	char *text = malloc(n + 4);
	json_t *a, *b, *c;
	uint64_t off;

	(void)state;
	memset(text, 'a', n);
	memcpy(text + n, "\xc3\xa9z", 3); /* é straddles the 1 MiB fragment's end */
	snprintf(log_path, sizeof log_path, "/tmp/weir-airflow-big-%d", (int)getpid());
	write_log("w", text, n + 3);
	log_ended = true;
	run(true, big_client);
	unlink(log_path);

	a = json_loads(replies[0].body, 0, NULL);
	b = json_loads(replies[1].body, 0, NULL);
	c = json_loads(replies[2].body, 0, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal(json_string_length(json_object_get(a, "content")), n);
	assert_int_equal(airflow_log_token_decode(tokens[0], &off), 0);
	assert_int_equal(off, n);
	big_a = (char *)json_string_value(json_object_get(a, "content"));
	big_b = (char *)json_string_value(json_object_get(b, "content"));
	assert_string_equal(big_b, "\xc3\xa9z");
	assert_int_equal(json_string_length(json_object_get(c, "content")), n + 3);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	free(text);
}

int main(void)
{
	struct weir_error err = {0};
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_helpers),        cmocka_unit_test(test_password_hash),
	    cmocka_unit_test(test_routes),         cmocka_unit_test(test_what_ops_see),
	    cmocka_unit_test(test_list_filters),   cmocka_unit_test(test_unknown_paths),
	    cmocka_unit_test(test_health),         cmocka_unit_test(test_auth),
	    cmocka_unit_test(test_no_dag_manager), cmocka_unit_test(test_logs),
	    cmocka_unit_test(test_logs_fragments),
	};
	int rc;

	if (basic_auth_hash_password("s3cret", 1000, &admin_hash, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	health_now = (struct api_health){.db_ok = true, .last_pass_ms = clock_now_ms() - 1000};
	for (int i = 0; i < n_replies; i++)
		free(replies[i].body);
	free(admin_hash);
	return rc;
}
