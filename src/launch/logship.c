/* logship.c: the launcher's log shipping: a bounded ring of unsent bytes
 * and the thread that POSTs them to the server (see logship.h). */
#include "launch/logship.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/http_client.h"
#include "lib/tls.h"

int logbuf_init(struct logbuf *b, size_t cap)
{
	memset(b, 0, sizeof *b);
	b->data = malloc(cap ? cap : 1);
	if (!b->data)
		return -1;
	b->cap = cap ? cap : 1;
	return 0;
}

void logbuf_release(struct logbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof *b);
}

static void logbuf_drop(struct logbuf *b, size_t n)
{
	if (n > b->len)
		n = b->len;
	b->start = (b->start + n) % b->cap;
	b->len -= n;
}

void logbuf_append(struct logbuf *b, const char *data, size_t n)
{
	if (n > b->cap) {
		/* only the newest cap bytes can stay */
		b->dropped += b->len + (n - b->cap);
		b->start = b->len = 0;
		data += n - b->cap;
		n = b->cap;
	}
	if (b->len + n > b->cap) {
		size_t over = b->len + n - b->cap;
		b->dropped += over;
		logbuf_drop(b, over);
	}
	size_t end = (b->start + b->len) % b->cap;
	size_t first = b->cap - end < n ? b->cap - end : n;
	memcpy(b->data + end, data, first);
	memcpy(b->data, data + first, n - first);
	b->len += n;
}

size_t logbuf_take(struct logbuf *b, char *out, size_t max)
{
	if (b->dropped) {
		int k = snprintf(out, max,
		                 "\n[weir launch: %llu bytes of output dropped here: the server "
		                 "was unreachable and the launcher keeps at most %zu bytes]\n",
		                 (unsigned long long)b->dropped, b->cap);
		b->dropped = 0;
		if (k > 0)
			return (size_t)k < max ? (size_t)k : max - 1;
	}
	size_t n = b->len < max ? b->len : max;
	size_t first = b->cap - b->start < n ? b->cap - b->start : n;
	memcpy(out, b->data + b->start, first);
	memcpy(out + first, b->data, n - first);
	logbuf_drop(b, n);
	return n;
}

struct logship {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct logbuf buf;
	bool closing;
	bool done;          /* the thread has stopped trying */
	bool all_sent;      /* ... with nothing left */
	int64_t give_up_at; /* after closing: stop retrying then */
	struct http_client *http;
	char path[512];  /* the route without the offset */
	uint64_t offset; /* the server's size of the log, as far as we know */
	char chunk[LOGSHIP_CHUNK];
	size_t chunk_len;
};

static void deadline_in(struct timespec *ts, int64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* One POST of the chunk at ls->offset.  1: accepted; 0: try again later;
 * -1: refused for good (the route, the task or the token is wrong). */
static int post_chunk(struct logship *ls)
{
	struct http_response resp;
	struct weir_error err = {0};
	char path[600];
	int rc = 0;

	snprintf(path, sizeof path, "%s&offset=%llu", ls->path, (unsigned long long)ls->offset);
	if (http_client_request_body(ls->http, "POST", path, "application/octet-stream", ls->chunk,
	                             ls->chunk_len, 10000, &resp, &err) < 0)
		return 0;
	json_t *j = json_loadb(resp.body, resp.len, 0, NULL);
	json_t *size = json_object_get(j, "size");
	if (resp.status == 200 && json_is_integer(size)) {
		ls->offset = (uint64_t)json_integer_value(size);
		rc = 1;
	} else if (resp.status == 409 && json_is_integer(size)) {
		/* the file is not where we thought: go on from its end */
		ls->offset = (uint64_t)json_integer_value(size);
	} else if (resp.status >= 400 && resp.status < 500) {
		fprintf(stderr,
		        "weir launch: error: POST %s: %ld: %s; the task's log is not sent\n", path,
		        resp.status, http_response_error_text(&resp));
		rc = -1;
	}
	json_decref(j);
	http_response_release(&resp);
	return rc;
}

static void *ship_main(void *arg)
{
	struct logship *ls = arg;
	int64_t delay = 100;

	pthread_mutex_lock(&ls->mu);
	for (;;) {
		if (!ls->chunk_len) {
			while (!ls->buf.len && !ls->buf.dropped && !ls->closing)
				pthread_cond_wait(&ls->cv, &ls->mu);
			if (!ls->closing && ls->buf.len < LOGSHIP_CHUNK && !ls->buf.dropped) {
				/* batch: more may come within the interval */
				struct timespec ts;
				deadline_in(&ts, LOGSHIP_INTERVAL_MS);
				while (!ls->closing && ls->buf.len < LOGSHIP_CHUNK &&
				       pthread_cond_timedwait(&ls->cv, &ls->mu, &ts) == 0)
					;
			}
			ls->chunk_len = logbuf_take(&ls->buf, ls->chunk, sizeof ls->chunk);
			if (!ls->chunk_len && ls->closing) {
				ls->all_sent = true;
				break;
			}
			if (!ls->chunk_len)
				continue;
		}
		pthread_mutex_unlock(&ls->mu);
		int r = post_chunk(ls);
		pthread_mutex_lock(&ls->mu);
		if (r < 0)
			break;
		if (r > 0) {
			ls->chunk_len = 0;
			delay = 100;
			continue;
		}
		if (ls->closing && clock_mono_ms() >= ls->give_up_at)
			break;
		/* the server is away (or restarting): wait, keep reading meanwhile */
		struct timespec ts;
		deadline_in(&ts, delay);
		while (pthread_cond_timedwait(&ls->cv, &ls->mu, &ts) == 0 &&
		       !(ls->closing && clock_mono_ms() >= ls->give_up_at))
			;
		delay = delay * 2 > 5000 ? 5000 : delay * 2;
	}
	ls->done = true;
	pthread_mutex_unlock(&ls->mu);
	return NULL;
}

struct logship *logship_create(const char *server, const char *token, long long job,
                               const char *role, int index, int attempt)
{
	struct logship *ls = calloc(1, sizeof *ls);
	char *r = NULL;

	if (!ls)
		return NULL;
	if (logbuf_init(&ls->buf, LOGSHIP_BOUND) < 0)
		goto fail;
	ls->http = http_client_create(server, token);
	r = http_url_escape(role);
	if (!ls->http || !r ||
	    http_client_set_tls(ls->http, &tls_http_ops, getenv("WEIR_CA_FILE")) < 0)
		goto fail;
	snprintf(ls->path, sizeof ls->path,
	         "/api/v1/launch/log?job=%lld&role=%s&index=%d&attempt=%d", job, r, index, attempt);
	free(r);
	r = NULL;
	pthread_mutex_init(&ls->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ls->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* The thread starts with every signal blocked: a process-directed signal
	 * (SIGCHLD, SIGTERM) must reach the launcher's signalfd in the main
	 * thread, never this one (where SIGCHLD would be lost and SIGTERM kill). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int pr = pthread_create(&ls->thread, NULL, ship_main, ls);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pr != 0) {
		pthread_cond_destroy(&ls->cv);
		pthread_mutex_destroy(&ls->mu);
		goto fail;
	}
	return ls;
fail:
	free(r);
	http_client_destroy(ls->http);
	logbuf_release(&ls->buf);
	free(ls);
	return NULL;
}

void logship_write(struct logship *ls, const char *data, size_t n)
{
	if (!ls || !n)
		return;
	pthread_mutex_lock(&ls->mu);
	if (!ls->done) {
		logbuf_append(&ls->buf, data, n);
		if (ls->buf.len >= LOGSHIP_CHUNK || ls->buf.len == n)
			pthread_cond_signal(&ls->cv);
	}
	pthread_mutex_unlock(&ls->mu);
}

void logship_tee(const char *line, size_t len, void *arg)
{
	logship_write(arg, line, len);
}

bool logship_finish(struct logship *ls, int64_t give_up_ms)
{
	bool ok;

	if (!ls)
		return true;
	pthread_mutex_lock(&ls->mu);
	ls->closing = true;
	ls->give_up_at = clock_mono_ms() + give_up_ms;
	pthread_cond_signal(&ls->cv);
	pthread_mutex_unlock(&ls->mu);
	pthread_join(ls->thread, NULL);
	ok = ls->all_sent;
	pthread_cond_destroy(&ls->cv);
	pthread_mutex_destroy(&ls->mu);
	http_client_destroy(ls->http);
	logbuf_release(&ls->buf);
	free(ls);
	return ok;
}
