/* test_api.c: the API over a real socket: libmicrohttpd driven by a libuv
 * loop on this thread, weir's HTTP client (lib/http_client) on another.  Routing, auth, errors,
 * the body limit, the cluster long poll (answered when notified, and
 * {"ready":false} at its deadline), logs from an offset and followed while
 * the file grows.  The api_ops here are a small table of the test's own,
 * standing in for the job manager. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "api/http.h"
#include "api/request.h"
#include "exec/launch_secret.h"
#include "lib/clock.h"
#include "lib/http_client.h"
#include "model/states.h"

#define TOKEN "0123456789abcdef0123456789abcdef"

static char log_file[64];
static bool task_ended;
static bool gang_ready;

/* A job the fakes hand over: id, state and a priority to carry a number
 * the route passed. */
static int fake_job(struct job_view *v, int64_t id, const char *state, int priority)
{
	memset(v, 0, sizeof *v);
	v->row.id = id;
	v->row.name = strdup("t");
	v->row.spec_json = strdup("{}");
	v->row.reason = strdup("");
	if (job_state_from_name(state, &v->row.state) < 0)
		v->row.state = JOB_QUEUED;
	v->row.priority = priority;
	v->row.attempt = 1;
	v->row.exit_code = -1;
	return 0;
}

static int op_submit(void *ctx, json_t *body, struct job_view *out, struct weir_error *err)
{
	(void)ctx;
	if (!json_object_get(body, "roles"))
		return weir_error_set(err, WEIR_E_INVALID, "roles: required");
	return fake_job(out, 1, "queued", 0);
}

/* One job in the state asked, its priority the limit asked. */
static int op_list(void *ctx, const char *state, int limit, struct job_view **jobs, size_t *n,
                   struct weir_error *err)
{
	(void)ctx;
	(void)err;
	*jobs = calloc(1, sizeof **jobs);
	*n = 1;
	return fake_job(*jobs, 1, state ? state : "", limit);
}

/* What GET /jobs/1 shows (test_job_gather changes it). */
static const char *job1_state = "running";
static int job1_priority;

static int op_get(void *ctx, int64_t id, struct job_view *out, struct weir_error *err)
{
	(void)ctx;
	if (id != 1)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "job %lld: no such job",
		                      (long long)id);
	return fake_job(out, id, job1_state, job1_priority);
}

static int op_kill(void *ctx, int64_t id, struct job_view *out, struct weir_error *err)
{
	(void)ctx;
	(void)id;
	(void)out;
	return weir_error_set(err, WEIR_E_CONFLICT, "job has already ended");
}

/* One task of the attempt asked. */
static int op_tasks(void *ctx, int64_t id, int attempt, struct task_row **rows, size_t *n,
                    struct weir_error *err)
{
	(void)ctx;
	(void)err;
	*rows = calloc(1, sizeof **rows);
	(*rows)->job_id = id;
	(*rows)->attempt = attempt;
	(*rows)->role = strdup("worker");
	(*rows)->exit_code = -1;
	*n = 1;
	return 0;
}

static int op_events(void *ctx, int64_t id, struct event_row **rows, size_t *n,
                     struct weir_error *err)
{
	(void)ctx;
	(void)id;
	(void)err;
	*rows = NULL;
	*n = 0;
	return 0;
}

static int op_log_locate(void *ctx, int64_t id, const char *role, int index, int attempt,
                         char **path, bool *ended, struct weir_error *err)
{
	(void)ctx;
	(void)attempt;
	if (id != 1 || strcmp(role, "worker") || index != 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no such task");
	*path = strdup(log_file);
	*ended = task_ended;
	return 0;
}

static json_t *op_launch_body(void *ctx, json_t *body, struct weir_error *err)
{
	(void)ctx;
	if (json_integer_value(json_object_get(body, "attempt")) != 1) {
		weir_error_set(err, WEIR_E_GONE, "attempt is no longer current");
		return NULL;
	}
	return json_object();
}

static json_t *op_cluster(void *ctx, int64_t job, int attempt, bool *ready, struct weir_error *err)
{
	(void)ctx;
	(void)job;
	*ready = false;
	if (attempt != 1) {
		weir_error_set(err, WEIR_E_GONE, "attempt is no longer current");
		return NULL;
	}
	if (!gang_ready || job != 1)
		return NULL;
	*ready = true;
	return json_pack("{s:b, s:{s:[s]}}", "ready", 1, "cluster", "worker", "127.0.0.1:1");
}

static const struct api_ops ops = {
    .submit = op_submit,
    .list_jobs = op_list,
    .get_job = op_get,
    .kill_job = op_kill,
    .tasks = op_tasks,
    .events = op_events,
    .log_locate = op_log_locate,
    .launch_register = op_launch_body,
    .launch_cluster = op_cluster,
    .launch_started = op_launch_body,
    .launch_exited = op_launch_body,
};

/* ---- the server side: a loop on the main thread ---- */

struct fixture {
	uv_loop_t loop;
	struct api *api;
	struct http_server *http;
	uv_async_t done;
	uv_timer_t timer;
	int port;
};

static void on_done(uv_async_t *a)
{
	uv_stop(a->loop);
}

static void append_log(const char *s)
{
	FILE *f = fopen(log_file, "a");
	assert_non_null(f);
	fputs(s, f);
	fclose(f);
}

static void fixture_start(struct fixture *fx)
{
	struct weir_error err = {0};

	assert_int_equal(uv_loop_init(&fx->loop), 0);
	fx->api = api_create(&fx->loop, TOKEN, &ops, NULL);
	assert_non_null(fx->api);
	fx->http = http_server_create(&fx->loop, "127.0.0.1", 0, api_handle, fx->api, &err);
	if (!fx->http)
		fail_msg("%s", err.msg);
	fx->port = http_server_port(fx->http);
	assert_true(fx->port > 0);
	uv_async_init(&fx->loop, &fx->done, on_done);
	uv_timer_init(&fx->loop, &fx->timer);
	fx->timer.data = fx;
}

static void fixture_stop(struct fixture *fx)
{
	api_destroy(fx->api);
	http_server_destroy(fx->http);
	uv_close((uv_handle_t *)&fx->done, NULL);
	uv_close((uv_handle_t *)&fx->timer, NULL);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
}

/* ---- the client side: one thread ---- */

typedef void (*client_fn)(struct fixture *fx, struct http_client *c);

struct client_run {
	struct fixture *fx;
	client_fn fn;
	char url[64];
};

static void *client_main(void *arg)
{
	struct client_run *r = arg;
	struct http_client *c = http_client_create(r->url, TOKEN);
	r->fn(r->fx, c);
	http_client_destroy(c);
	uv_async_send(&r->fx->done);
	return NULL;
}

static void run_client(struct fixture *fx, client_fn fn)
{
	struct client_run r = {.fx = fx, .fn = fn};
	pthread_t th;

	snprintf(r.url, sizeof r.url, "http://127.0.0.1:%d", fx->port);
	assert_int_equal(pthread_create(&th, NULL, client_main, &r), 0);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	pthread_join(th, NULL);
}

/* Results are checked on the main thread (cmocka's asserts are not
 * thread-safe): the client records status and body. */
struct reply {
	long status;
	char body[512];
	int64_t ms;
};

static struct reply replies[16];

static void req(struct http_client *c, int slot, const char *method, const char *path,
                const char *body)
{
	struct http_response resp = {0};
	struct weir_error err = {0};
	int64_t t0 = clock_mono_ms();

	http_client_request(c, method, path, body, 20000, &resp, &err);
	replies[slot].status = resp.status;
	snprintf(replies[slot].body, sizeof replies[slot].body, "%s", resp.body ? resp.body : "");
	replies[slot].ms = clock_mono_ms() - t0;
	http_response_release(&resp);
}

/* req() as the launcher of task worker:0 of the job's attempt: its launch
 * secret (exec/launch_secret.h), derived from the server's token. */
static void launcher_req(struct fixture *fx, int slot, int64_t job, int attempt, const char *method,
                         const char *path, const char *body)
{
	char url[64], secret[LAUNCH_SECRET_HEX + 1];
	struct http_client *c;

	snprintf(url, sizeof url, "http://127.0.0.1:%d", fx->port);
	launch_secret_task(TOKEN, job, "worker", 0, attempt, secret);
	c = http_client_create(url, secret);
	req(c, slot, method, path, body);
	http_client_destroy(c);
}

static void routes_client(struct fixture *fx, struct http_client *c)
{
	char url[64];
	struct http_client *anon;
	struct http_response resp = {0};
	struct weir_error err = {0};
	char *big;

	snprintf(url, sizeof url, "http://127.0.0.1:%d", fx->port);
	anon = http_client_create(url, NULL);
	http_client_request(anon, "GET", "/api/v1/health", NULL, 5000, &resp, &err);
	replies[0].status = resp.status;
	snprintf(replies[0].body, sizeof replies[0].body, "%s", resp.body ? resp.body : "");
	http_response_release(&resp);
	http_client_request(anon, "GET", "/api/v1/jobs", NULL, 5000, &resp, &err);
	replies[1].status = resp.status;
	snprintf(replies[1].body, sizeof replies[1].body, "%s", resp.body ? resp.body : "");
	http_response_release(&resp);
	http_client_destroy(anon);

	req(c, 2, "POST", "/api/v1/jobs", "{\"roles\":{}}");
	req(c, 3, "POST", "/api/v1/jobs", "{\"name\":\"x\"}");
	req(c, 4, "POST", "/api/v1/jobs", "{not json");
	req(c, 5, "GET", "/api/v1/jobs?state=running&limit=5", NULL);
	req(c, 6, "GET", "/api/v1/jobs/2", NULL);
	req(c, 7, "DELETE", "/api/v1/jobs/1", NULL);
	req(c, 8, "GET", "/api/v1/jobs/abc", NULL);
	req(c, 9, "GET", "/api/v1/nothing", NULL);
	req(c, 10, "PUT", "/api/v1/jobs/1", NULL);
	req(c, 11, "GET", "/api/v1/jobs/1/tasks?attempt=all", NULL);
	req(c, 12, "GET", "/api/v1/jobs/1/tasks/Bad..Role/0/logs", NULL);
	/* the API token is no launcher's */
	req(c, 13, "POST", "/api/v1/launch/register",
	    "{\"job\":1,\"role\":\"worker\",\"index\":0,\"attempt\":2}");
	launcher_req(fx, 15, 1, 2, "POST", "/api/v1/launch/register",
	             "{\"job\":1,\"role\":\"worker\",\"index\":0,\"attempt\":2}");
	big = malloc(HTTP_MAX_BODY + 100);
	memset(big, ' ', HTTP_MAX_BODY + 99);
	big[0] = '{';
	big[HTTP_MAX_BODY + 98] = '}';
	big[HTTP_MAX_BODY + 99] = '\0';
	req(c, 14, "POST", "/api/v1/jobs", big);
	free(big);
}

static void test_routes(void **state)
{
	struct fixture fx;

	(void)state;
	memset(replies, 0, sizeof replies);
	fixture_start(&fx);
	run_client(&fx, routes_client);
	fixture_stop(&fx);

	assert_int_equal(replies[0].status, 200);
	assert_non_null(strstr(replies[0].body, "\"ok\""));
	assert_int_equal(replies[1].status, 401);
	assert_non_null(strstr(replies[1].body, "\"status\":401"));
	assert_int_equal(replies[2].status, 201);
	assert_int_equal(replies[3].status, 400);
	assert_non_null(strstr(replies[3].body, "roles: required"));
	assert_int_equal(replies[4].status, 400);
	assert_non_null(strstr(replies[4].body, "invalid JSON"));
	assert_int_equal(replies[5].status, 200);
	assert_non_null(strstr(replies[5].body, "\"state\":\"running\""));
	assert_non_null(strstr(replies[5].body, "\"priority\":5"));
	assert_int_equal(replies[6].status, 404);
	assert_non_null(strstr(replies[6].body, "job 2"));
	assert_int_equal(replies[7].status, 409);
	assert_int_equal(replies[8].status, 400);
	assert_int_equal(replies[9].status, 404);
	assert_int_equal(replies[10].status, 405);
	assert_int_equal(replies[11].status, 200);
	assert_non_null(strstr(replies[11].body, "\"attempt\":-1"));
	assert_int_equal(replies[12].status, 400);
	assert_int_equal(replies[13].status, 403);
	assert_non_null(strstr(replies[13].body, "launch secret"));
	assert_int_equal(replies[14].status, 413);
	assert_int_equal(replies[15].status, 410);
}

static void on_gang_ready(uv_timer_t *t)
{
	struct fixture *fx = t->data;
	gang_ready = true;
	api_notify_cluster(fx->api, 1);
}

static void poll_client(struct fixture *fx, struct http_client *c)
{
	(void)c;
	launcher_req(fx, 0, 2, 1, "GET",
	             "/api/v1/launch/cluster?job=2&attempt=1&role=worker&index=0&wait=1", NULL);
	launcher_req(fx, 1, 1, 1, "GET",
	             "/api/v1/launch/cluster?job=1&attempt=1&role=worker&index=0&wait=30", NULL);
	launcher_req(fx, 2, 1, 2, "GET",
	             "/api/v1/launch/cluster?job=1&attempt=2&role=worker&index=0&wait=30", NULL);
}

static void test_long_poll(void **state)
{
	struct fixture fx;

	(void)state;
	memset(replies, 0, sizeof replies);
	gang_ready = false;
	fixture_start(&fx);
	uv_timer_start(&fx.timer, on_gang_ready, 1500, 0);
	run_client(&fx, poll_client);
	fixture_stop(&fx);

	/* job 2 never gets ready: {"ready":false} after its wait */
	assert_int_equal(replies[0].status, 200);
	assert_non_null(strstr(replies[0].body, "\"ready\":false"));
	assert_true(replies[0].ms >= 900);
	/* job 1 is answered when notified, long before its 30 s */
	assert_int_equal(replies[1].status, 200);
	assert_non_null(strstr(replies[1].body, "127.0.0.1:1"));
	assert_true(replies[1].ms < 5000);
	assert_int_equal(replies[2].status, 410);
}

/* Set by the client as it sends its gathered request: the changes after the
 * first wait for it and one tick more (500 ms for the request to arrive),
 * so a client slow to read the first answer cannot miss them. */
static atomic_bool gather_asked;

/* Job 1 changes twice while running, then ends, each change notified. */
static void job1_changes(uv_timer_t *t)
{
	static int step;
	static bool seen_asked;
	struct fixture *fx = t->data;

	if (step == 0)
		seen_asked = false;
	if (step >= 1 && !seen_asked) {
		seen_asked = atomic_load(&gather_asked);
		return;
	}
	if (++step < 3) {
		job1_priority = step;
	} else {
		job1_state = "succeeded";
		uv_timer_stop(t);
	}
	api_notify_jobs(fx->api);
}

/* The version in a job's answer (16 hex digits) into v. */
static void version_of(const char *body, char v[17])
{
	const char *p = strstr(body, "\"version\":\"");

	snprintf(v, 17, "%s", p ? p + 11 : "");
}

static void gather_client(struct fixture *fx, struct http_client *c)
{
	char path[160], v[17];

	(void)fx;
	req(c, 0, "GET", "/api/v1/jobs/1", NULL);
	version_of(replies[0].body, v);
	/* plain: the first change answers */
	snprintf(path, sizeof path, "/api/v1/jobs/1?wait=30&since=%s", v);
	req(c, 1, "GET", path, NULL);
	version_of(replies[1].body, v);
	/* gathered for longer than the job runs: the end answers */
	snprintf(path, sizeof path, "/api/v1/jobs/1?wait=30&since=%s&gather=60000", v);
	atomic_store(&gather_asked, true);
	req(c, 2, "GET", path, NULL);
	req(c, 3, "GET", "/api/v1/jobs/1?wait=1&since=x&gather=soon", NULL);
	req(c, 4, "GET", "/api/v1/jobs/1?wait=1&since=x&gather=60001", NULL);
}

static void test_job_gather(void **state)
{
	struct fixture fx;

	(void)state;
	memset(replies, 0, sizeof replies);
	job1_state = "running";
	job1_priority = 0;
	atomic_store(&gather_asked, false);
	fixture_start(&fx);
	uv_timer_start(&fx.timer, job1_changes, 500, 500);
	run_client(&fx, gather_client);
	fixture_stop(&fx);
	job1_state = "running";
	job1_priority = 0;

	assert_int_equal(replies[0].status, 200);
	assert_int_equal(replies[1].status, 200);
	assert_non_null(strstr(replies[1].body, "\"state\":\"running\""));
	assert_null(strstr(replies[1].body, "\"priority\":0"));
	/* held through the change that left it running, answered at the end
	 * (long before the 30 s, which the client's 20 s would not see) */
	assert_int_equal(replies[2].status, 200);
	assert_non_null(strstr(replies[2].body, "\"state\":\"succeeded\""));
	assert_non_null(strstr(replies[2].body, "\"priority\":2"));
	assert_int_equal(replies[3].status, 400);
	assert_non_null(strstr(replies[3].body, "gather"));
	assert_int_equal(replies[4].status, 400);
	assert_non_null(strstr(replies[4].body, "gather"));
}

static void grow_log(uv_timer_t *t)
{
	static int step;
	struct fixture *fx = t->data;

	if (step == 0) {
		append_log("two\n");
	} else {
		append_log("three\n");
		task_ended = true;
		uv_timer_stop(t);
		api_notify_logs(fx->api, 1);
	}
	step++;
}

static void logs_client(struct fixture *fx, struct http_client *c)
{
	(void)fx;
	req(c, 0, "GET", "/api/v1/jobs/1/tasks/worker/0/logs?offset=2", NULL);
	req(c, 1, "GET", "/api/v1/jobs/1/tasks/worker/0/logs?follow=true", NULL);
	req(c, 2, "GET", "/api/v1/jobs/1/tasks/worker/1/logs", NULL);
}

static void test_logs_follow(void **state)
{
	struct fixture fx;

	(void)state;
	memset(replies, 0, sizeof replies);
	snprintf(log_file, sizeof log_file, "/tmp/weir-api-log-%d", (int)getpid());
	unlink(log_file);
	append_log("one\n");
	task_ended = false;
	fixture_start(&fx);
	uv_timer_start(&fx.timer, grow_log, 400, 400);
	run_client(&fx, logs_client);
	fixture_stop(&fx);
	unlink(log_file);

	assert_int_equal(replies[0].status, 200);
	assert_string_equal(replies[0].body, "e\n");
	assert_int_equal(replies[1].status, 200);
	assert_string_equal(replies[1].body, "one\ntwo\nthree\n");
	assert_int_equal(replies[2].status, 404);
}

static void test_helpers(void **state)
{
	int64_t v;

	(void)state;
	assert_true(api_auth_ok("Bearer " TOKEN, TOKEN));
	assert_false(api_auth_ok("Bearer " TOKEN "x", TOKEN));
	assert_false(api_auth_ok("Bearer 0123", TOKEN));
	assert_false(api_auth_ok("Basic " TOKEN, TOKEN));
	assert_false(api_auth_ok(NULL, TOKEN));
	assert_false(api_auth_ok("Bearer ", ""));
	assert_true(api_role_name_ok("worker"));
	assert_true(api_role_name_ok("ps_2-a"));
	assert_false(api_role_name_ok("Worker"));
	assert_false(api_role_name_ok("../etc"));
	assert_false(api_role_name_ok("1abc"));
	assert_false(api_role_name_ok(""));
	assert_int_equal(api_parse_int("12", 1, 100, &v), 0);
	assert_int_equal(v, 12);
	assert_int_equal(api_parse_int("-1", 0, 100, &v), -1);
	assert_int_equal(api_parse_int("12x", 0, 100, &v), -1);
	assert_int_equal(api_parse_int("101", 0, 100, &v), -1);
	assert_int_equal(api_parse_int("", 0, 100, &v), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_helpers),
	    cmocka_unit_test(test_routes),
	    cmocka_unit_test(test_long_poll),
	    cmocka_unit_test(test_job_gather),
	    cmocka_unit_test(test_logs_follow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
