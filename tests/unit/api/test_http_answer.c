/* test_http_answer.c: an answer leaves only after the server's
 * before-answer hook (http_server_set_before_answer, where the server ends
 * its turn and commits): a client thread asks, the loop's handler answers,
 * and the hook must have run, after the handler and before the bytes
 * reached the client, once for each answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "api/http.h"
#include "lib/http_client.h"

#define ASKS 3

struct fixture {
	uv_loop_t loop;
	struct http_server *http;
	uv_async_t done;
	int port;
	int handled;           /* answers the handler gave (loop thread) */
	int hook_after_handle; /* hook calls that came after a handler's answer */
	atomic_int hooks;      /* hook calls, read by the client */
	int hooks_seen[ASKS];  /* what the client saw with each answer */
	long status[ASKS];
};

static void handler(struct http_request *req, void *arg)
{
	struct fixture *fx = arg;

	fx->handled++;
	http_request_respond_static(req, 200, "text/plain", "ok\n", 3);
}

static void before_answer(struct http_request *req, void *arg)
{
	struct fixture *fx = arg;

	(void)req;
	if (fx->handled > atomic_load(&fx->hooks))
		fx->hook_after_handle++;
	atomic_fetch_add(&fx->hooks, 1);
}

static void *client_main(void *arg)
{
	struct fixture *fx = arg;
	char url[64];
	struct http_client *c;

	snprintf(url, sizeof url, "http://127.0.0.1:%d", fx->port);
	c = http_client_create(url, NULL);
	for (int i = 0; i < ASKS; i++) {
		struct http_response resp = {0};
		struct weir_error err = {0};
		http_client_request(c, "GET", "/ask", NULL, 20000, &resp, &err);
		fx->status[i] = resp.status;
		fx->hooks_seen[i] = atomic_load(&fx->hooks);
		http_response_release(&resp);
	}
	http_client_destroy(c);
	uv_async_send(&fx->done);
	return NULL;
}

static void on_done(uv_async_t *a)
{
	uv_stop(a->loop);
}

static void test_answer_after_hook(void **state)
{
	struct fixture fx = {0};
	struct weir_error err = {0};
	pthread_t th;

	(void)state;
	assert_int_equal(uv_loop_init(&fx.loop), 0);
	fx.http = http_server_create(&fx.loop, "127.0.0.1", 0, handler, &fx, &err);
	if (!fx.http)
		fail_msg("%s", err.msg);
	http_server_set_before_answer(fx.http, before_answer, &fx);
	fx.port = http_server_port(fx.http);
	uv_async_init(&fx.loop, &fx.done, on_done);
	assert_int_equal(pthread_create(&th, NULL, client_main, &fx), 0);
	uv_run(&fx.loop, UV_RUN_DEFAULT);
	pthread_join(th, NULL);
	for (int i = 0; i < ASKS; i++) {
		assert_int_equal(fx.status[i], 200);
		/* the hook of this answer ran before the client had it */
		assert_true(fx.hooks_seen[i] >= i + 1);
	}
	assert_int_equal(fx.handled, ASKS);
	assert_int_equal(fx.hook_after_handle, ASKS);
	http_server_destroy(fx.http);
	uv_close((uv_handle_t *)&fx.done, NULL);
	uv_run(&fx.loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx.loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_answer_after_hook),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
