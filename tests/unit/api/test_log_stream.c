/* test_log_stream.c: the log streamer (api/log_stream.h) behind a real
 * socket: a client thread follows a log while the loop writes to it, either
 * through log_stream_append() (as POST /launch/log does) or straight into
 * the file (as a local launcher with log_transport: file does).  The
 * followers' looks at the file are made an hour apart, so a byte can reach
 * the client only through a wake-up: the loop writes the next chunk only
 * once the client has seen the last one, and a guard timer fails the test
 * if a chunk never comes.  The task's end (log_stream_notify_job) ends the
 * follow after the last bytes.  A window without follow ends at its end. */
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
#include "api/logs/log_stream.h"
#include "lib/clock.h"
#include "lib/http_client.h"

#define CHUNKS 3
#define GUARD_MS 20000
#define HOUR_MS 3600000

static char log_file[4096];

/* The test's log file, in the temporary directory, not the one the suite
 * runs in. */
static void name_log_file(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(log_file, sizeof log_file, "%s/weir-log-stream-%d.log",
		 tmp && *tmp ? tmp : "/tmp", (int)getpid());
}
static bool task_ended;

struct fixture {
	uv_loop_t loop;
	struct log_stream *ls;
	struct http_server *http;
	uv_timer_t guard;
	uv_async_t done, seen;
	int port;
	int step;
	bool direct; /* write into the file, not through log_stream_append() */
};

/* Written by the client thread, read by the loop after a `seen` notice and
 * by the main thread after both are done. */
static volatile int seen_chunks;
static bool guard_fired;
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

/* Writes chunk k ("a\n", "b\n", ...) after the client has seen k - 1; after
 * the last, ends the task. */
static void write_chunk(struct fixture *fx)
{
	struct weir_error err = {0};
	uint64_t size = 0;
	int k = fx->step++;

	if (k >= CHUNKS) {
		task_ended = true;
		log_stream_notify_job(fx->ls, 1);
		return;
	}
	char data[2] = {(char)('a' + k), '\n'};
	if (fx->direct) {
		FILE *f = fopen(log_file, "a");
		assert_non_null(f);
		assert_int_equal(fwrite(data, 1, 2, f), 2);
		fclose(f);
		return;
	}
	assert_int_equal(log_stream_append(fx->ls, log_file, (uint64_t)k * 2, data, 2, &size, &err),
	                 0);
	assert_int_equal(size, (uint64_t)(k + 1) * 2);
	/* the same chunk again adds nothing */
	assert_int_equal(log_stream_append(fx->ls, log_file, (uint64_t)k * 2, data, 2, &size, &err),
	                 0);
	assert_int_equal(size, (uint64_t)(k + 1) * 2);
}

static void on_seen(uv_async_t *a)
{
	struct fixture *fx = a->data;
	if (fx->step < 0)
		return; /* a window: nothing to write */
	while (fx->step <= CHUNKS && fx->step <= seen_chunks)
		write_chunk(fx);
}

static void on_guard(uv_timer_t *t)
{
	guard_fired = true;
	uv_stop(t->loop);
}

static int on_chunk(const char *data, size_t len, void *arg)
{
	struct fixture *fx = arg;
	if (got_len + len < sizeof got) {
		memcpy(got + got_len, data, len);
		got_len += len;
		got[got_len] = '\0';
	}
	if ((int)(got_len / 2) > seen_chunks) {
		seen_chunks = (int)(got_len / 2);
		uv_async_send(&fx->seen);
	}
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
	http_client_stream(c, fx->step < 0 ? "/window" : "/follow", on_chunk, fx, &status, &err);
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
	log_stream_set_looks(fx->ls, HOUR_MS, HOUR_MS);
	fx->http = http_server_create(&fx->loop, "127.0.0.1", 0, handler, fx, &err);
	if (!fx->http)
		fail_msg("%s", err.msg);
	fx->port = http_server_port(fx->http);
	fx->step = follow ? 0 : -1;
	seen_chunks = 0;
	guard_fired = false;
	got_len = 0;
	got[0] = '\0';
	uv_async_init(&fx->loop, &fx->done, on_done);
	uv_async_init(&fx->loop, &fx->seen, on_seen);
	fx->seen.data = fx;
	uv_timer_init(&fx->loop, &fx->guard);
	uv_timer_start(&fx->guard, on_guard, GUARD_MS, 0);
	if (follow) {
		/* the log exists, empty, before the follow starts (as the local
		 * executor opens it before the launcher starts) */
		FILE *f = fopen(log_file, "w");
		assert_non_null(f);
		fclose(f);
	}
	assert_int_equal(pthread_create(&th, NULL, client_main, fx), 0);
	if (follow)
		uv_async_send(&fx->seen); /* the first chunk needs nothing seen */
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	if (guard_fired)
		fail_msg("chunk %d never reached the follower (%d written)", seen_chunks + 1, fx->step);
	pthread_join(th, NULL);
	log_stream_destroy(fx->ls);
	http_server_destroy(fx->http);
	uv_close((uv_handle_t *)&fx->done, NULL);
	uv_close((uv_handle_t *)&fx->seen, NULL);
	uv_close((uv_handle_t *)&fx->guard, NULL);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
}

static void follow_test(bool direct)
{
	struct fixture fx = {0};

	name_log_file();
	unlink(log_file);
	task_ended = false;
	fx.direct = direct;
	run(&fx, true);
	unlink(log_file);

	assert_int_equal(status, 200);
	assert_string_equal(got, "a\nb\nc\n");
}

/* The server's appends wake the follower. */
static void test_append_wakes_follower(void **state)
{
	(void)state;
	follow_test(false);
}

/* A write into the file by another process's hand (here the test's own
 * write(2)) wakes it too, through the kernel's notice. */
static void test_file_write_wakes_follower(void **state)
{
	(void)state;
	follow_test(true);
}

static void test_window(void **state)
{
	struct fixture fx = {0};
	FILE *f;

	(void)state;
	name_log_file();
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
	    cmocka_unit_test(test_file_write_wakes_follower),
	    cmocka_unit_test(test_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
