/* redis.c: the Redis client (redis.h). */
#include "data/redis.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "data/resp.h"
#include "lib/strbuf.h"

#define REDIS_SEND_AT (64 * 1024)
#define REDIS_CONNECT_MS 10000

struct redis_client {
	int fd;
	struct strbuf out;
	struct strbuf in;
	size_t pending;   /* commands sent whose replies are not read */
	size_t queued;    /* commands in `out` */
	int64_t last_int; /* the last reply's integer */
	char first_error[512];
};

static int sys_fail(const char *what, struct weir_error *err)
{
	return weir_error_set(err, WEIR_E_UNAVAILABLE, "redis: %s: %s", what, strerror(errno));
}

static int send_all(struct redis_client *r, struct weir_error *err)
{
	size_t off = 0;

	if (r->out.failed)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	while (off < r->out.len) {
		ssize_t n = write(r->fd, r->out.buf + off, r->out.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return sys_fail("write", err);
		off += (size_t)n;
	}
	strbuf_reset(&r->out);
	r->pending += r->queued;
	r->queued = 0;
	return 0;
}

/* Reads until every pending reply is in. */
static int read_replies(struct redis_client *r, struct weir_error *err)
{
	size_t at = 0;

	while (r->pending) {
		struct resp_reply rep;
		long k = resp_parse(r->in.buf + at, r->in.len - at, &rep);
		if (k < 0)
			return weir_error_set(err, WEIR_E_INVALID, "redis: not a RESP reply");
		if (k > 0) {
			at += (size_t)k;
			r->pending--;
			r->last_int = rep.kind == ':' ? rep.integer : 0;
			if (rep.kind == '-' && !r->first_error[0])
				snprintf(r->first_error, sizeof r->first_error, "%.*s",
				         (int)rep.len, rep.str);
			continue;
		}
		if (at) {
			strbuf_remove(&r->in, 0, at);
			at = 0;
		}
		if (strbuf_grow(&r->in, 65536) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		ssize_t n = read(r->fd, r->in.buf + r->in.len, r->in.alloc - r->in.len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return weir_error_set(err, WEIR_E_UNAVAILABLE,
			                      "redis: no answer within the timeout");
		if (n < 0)
			return sys_fail("read", err);
		if (n == 0)
			return weir_error_set(err, WEIR_E_UNAVAILABLE,
			                      "redis: the server closed the connection");
		r->in.len += (size_t)n;
		r->in.buf[r->in.len] = '\0';
	}
	strbuf_remove(&r->in, 0, at);
	return 0;
}

int redis_sync(struct redis_client *r, struct weir_error *err)
{
	if (send_all(r, err) < 0 || read_replies(r, err) < 0)
		return -1;
	if (r->first_error[0]) {
		weir_error_set(err, WEIR_E_INVALID, "redis: %s", r->first_error);
		r->first_error[0] = '\0';
		return -1;
	}
	return 0;
}

int redis_queue(struct redis_client *r, size_t argc, const char *const *argv, const size_t *len,
                struct weir_error *err)
{
	resp_command(&r->out, argc, argv, len);
	r->queued++;
	if (r->out.len < REDIS_SEND_AT)
		return 0;
	/* the replies of the previous send are read before this one goes, so
	 * one pipeline's worth is in flight while Redis answers the other */
	if (read_replies(r, err) < 0 || send_all(r, err) < 0)
		return -1;
	if (r->first_error[0]) {
		weir_error_set(err, WEIR_E_INVALID, "redis: %s", r->first_error);
		return -1;
	}
	return 0;
}

int redis_call(struct redis_client *r, size_t argc, const char *const *argv, int64_t *out,
               struct weir_error *err)
{
	if (redis_queue(r, argc, argv, NULL, err) < 0 || redis_sync(r, err) < 0)
		return -1;
	if (out)
		*out = r->last_int;
	return 0;
}

/* connect() that gives up after ms milliseconds (errno ETIMEDOUT). */
static int connect_within(int fd, const struct addrinfo *a, long ms)
{
	int flags = fcntl(fd, F_GETFL), soerr = 0;
	socklen_t sl = sizeof soerr;
	struct pollfd p = {.fd = fd, .events = POLLOUT};

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -1;
	if (connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
		int rc;
		if (errno != EINPROGRESS)
			return -1;
		while ((rc = poll(&p, 1, (int)ms)) < 0 && errno == EINTR)
			;
		if (rc == 0)
			errno = ETIMEDOUT;
		if (rc <= 0)
			return -1;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr) {
			errno = soerr;
			return -1;
		}
	}
	return fcntl(fd, F_SETFL, flags);
}

struct redis_client *redis_open(const struct connection *c, struct weir_error *err)
{
	return redis_open_timed(c, 0, err);
}

struct redis_client *redis_open_timed(const struct connection *c, long timeout_ms,
                                      struct weir_error *err)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	struct redis_client *r = calloc(1, sizeof *r);
	char port[16];
	int one = 1, e;

	if (!r) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	r->fd = -1;
	strbuf_init(&r->out);
	strbuf_init(&r->in);
	snprintf(port, sizeof port, "%d", c->port > 0 ? c->port : 6379);
	e = getaddrinfo(c->host ? c->host : "127.0.0.1", port, &hints, &ai);
	if (e) {
		weir_error_set(err, WEIR_E_UNAVAILABLE, "redis: %s: %s",
		               c->host ? c->host : "127.0.0.1", gai_strerror(e));
		goto fail;
	}
	for (struct addrinfo *a = ai; a && r->fd < 0; a = a->ai_next) {
		r->fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (r->fd >= 0 &&
		    connect_within(r->fd, a, timeout_ms > 0 ? timeout_ms : REDIS_CONNECT_MS) < 0) {
			e = errno;
			close(r->fd);
			r->fd = -1;
			errno = e;
		}
	}
	freeaddrinfo(ai);
	if (r->fd < 0) {
		weir_error_set(err, WEIR_E_UNAVAILABLE, "redis: cannot connect to %s:%s: %s",
		               c->host ? c->host : "127.0.0.1", port, strerror(errno));
		goto fail;
	}
	setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (timeout_ms > 0) {
		struct timeval tv = {.tv_sec = timeout_ms / 1000,
		                     .tv_usec = (timeout_ms % 1000) * 1000};
		setsockopt(r->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		setsockopt(r->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	}
	if (c->password) {
		const char *a3[] = {"AUTH", c->login ? c->login : "default", c->password};
		const char *a2[] = {"AUTH", c->password};
		if (c->login ? redis_call(r, 3, a3, NULL, err) : redis_call(r, 2, a2, NULL, err))
			goto fail;
	}
	if (c->schema && *c->schema) {
		const char *sel[] = {"SELECT", c->schema};
		if (redis_call(r, 2, sel, NULL, err) < 0)
			goto fail;
	}
	return r;
fail:
	redis_close(r);
	return NULL;
}

void redis_close(struct redis_client *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	strbuf_release(&r->out);
	strbuf_release(&r->in);
	free(r);
}
