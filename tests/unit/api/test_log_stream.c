/* test_log_stream.c: the log streamer (api/log_stream.h) behind a real
 * socket: a client thread follows a log while the loop appends to it with
 * log_stream_append(), as POST /launch/log does.  Every append reaches the
 * follower at once, not at its next look at the file (which, for a file the
 * server has fed, comes only LOG_STREAM_RECHECK_MS later); the task's end
 * (log_stream_notify_job) ends the follow after the last bytes.  A window
 * without follow ends at its end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/http.h"
#include "api/log_stream.h"
#include "lib/clock.h"
#include "lib/http_client.h"

#define CHUNKS 3
#define STEP_MS 300

static char log_file[64];
static bool task_ended;

struct fixture {
	uv_loop_t loop;
	struct log_stream *ls;
	struct http_server *http;
	uv_timer_t timer;
	uv_async_t done;
	int port;
	int step;
};

/* Written on the loop (appends) and the client thread (arrivals); read on
 * the main thread after both are done. */
static int64_t appended_ms[CHUNKS], seen_ms[CHUNKS];
static long status;
static char got[256];
static size_t got_len;

static bool ended_fn(void *arg)
{
	(void)arg;
	return task_ended;
}

/* GET /follow: the whole log, followed; GET /window: bytes [1, 3), no follow. */
static void handler(struct http_request *req, void *arg)
{
	struct fixture *fx = arg;
	bool window = !strcmp(http_request_path(req), "/window");
	struct log_stream_source src = {
	    .path = strdup(log_file),
	    .fd = -1,
	    .start = window ? 1 : 0,
	    .end = window ? 3 : UINT64_MAX,
	    .follow = !window,
	    .ended = task_ended,
	    .job = 1,
	    .ended_fn = ended_fn,
	};

	if (log_stream_respond(fx->ls, req, &src) < 0)
		http_request_respond_errorf(req, WEIR_E_INTERNAL, "out of memory");
}

static void on_step(uv_timer_t *t)
{
	struct fixture *fx = t->data;
	struct weir_error err = {0};
	uint64_t size = 0;
	int k = fx->step++;

	if (k < CHUNKS) {
		char data[2] = {(char)('a' + k), '\n'};
		appended_ms[k] = clock_mono_ms();
		assert_int_equal(
		    log_stream_append(fx->ls, log_file, (uint64_t)k * 2, data, 2, &size, &err), 0);
		assert_int_equal(size, (uint64_t)(k + 1) * 2);
		/* the same chunk again adds nothing */
		assert_int_equal(
		    log_stream_append(fx->ls, log_file, (uint64_t)k * 2, data, 2, &size, &err), 0);
		assert_int_equal(size, (uint64_t)(k + 1) * 2);
		return;
	}
	task_ended = true;
	log_stream_notify_job(fx->ls, 1);
	uv_timer_stop(t);
}

static int on_chunk(const char *data, size_t len, void *arg)
{
	(void)arg;
	if (got_len + len < sizeof got) {
		memcpy(got + got_len, data, len);
		got_len += len;
		got[got_len] = '\0';
	}
	for (int k = 0; k < CHUNKS; k++)
		if (!seen_ms[k] && got_len >= (size_t)(k + 1) * 2)
			seen_ms[k] = clock_mono_ms();
	return 0;
}

static void *client_main(void *arg)
{
	struct fixture *fx = arg;
	char url[64];
	struct weir_error err = {0};
	struct http_client *c;

	snprintf(url, sizeof url, "http://127.0.0.1:%d", fx->port);
	c = http_client_create(url, NULL);
	http_client_stream(c, fx->step < 0 ? "/window" : "/follow", on_chunk, NULL, &status, &err);
	http_client_destroy(c);
	uv_async_send(&fx->done);
	return NULL;
}

static void on_done(uv_async_t *a)
{
	uv_stop(a->loop);
}

static void run(struct fixture *fx, bool follow)
{
	struct weir_error err = {0};
	pthread_t th;

	assert_int_equal(uv_loop_init(&fx->loop), 0);
	fx->ls = log_stream_create(&fx->loop);
	assert_non_null(fx->ls);
	fx->http = http_server_create(&fx->loop, "127.0.0.1", 0, handler, fx, &err);
	if (!fx->http)
		fail_msg("%s", err.msg);
	fx->port = http_server_port(fx->http);
	fx->step = follow ? 0 : -1;
	uv_async_init(&fx->loop, &fx->done, on_done);
	uv_timer_init(&fx->loop, &fx->timer);
	fx->timer.data = fx;
	if (follow)
		uv_timer_start(&fx->timer, on_step, STEP_MS, STEP_MS);
	assert_int_equal(pthread_create(&th, NULL, client_main, fx), 0);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	pthread_join(th, NULL);
	log_stream_destroy(fx->ls);
	http_server_destroy(fx->http);
	uv_close((uv_handle_t *)&fx->done, NULL);
	uv_close((uv_handle_t *)&fx->timer, NULL);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
}

static void test_append_wakes_follower(void **state)
{
	struct fixture fx = {0};

	(void)state;
	snprintf(log_file, sizeof log_file, "weir-log-stream-%d.log", (int)getpid());
	unlink(log_file);
	task_ended = false;
	run(&fx, true);
	unlink(log_file);

	assert_int_equal(status, 200);
	assert_string_equal(got, "a\nb\nc\n");
	for (int k = 0; k < CHUNKS; k++) {
		assert_true(seen_ms[k] >= appended_ms[k]);
		/* at once: long before the follower's next look at the file */
		if (k > 0 && seen_ms[k] - appended_ms[k] >= STEP_MS / 2)
			fail_msg("chunk %d reached the follower %lld ms after it was written", k,
			         (long long)(seen_ms[k] - appended_ms[k]));
	}
}

static void test_window(void **state)
{
	struct fixture fx = {0};
	FILE *f;

	(void)state;
	snprintf(log_file, sizeof log_file, "weir-log-stream-%d.log", (int)getpid());
	f = fopen(log_file, "w");
	assert_non_null(f);
	fputs("0123456789", f);
	fclose(f);
	got_len = 0;
	got[0] = '\0';
	task_ended = false;
	run(&fx, false);
	unlink(log_file);
	assert_int_equal(status, 200);
	assert_string_equal(got, "12");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_append_wakes_follower),
	    cmocka_unit_test(test_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
