/* http_client.c: a small HTTP/1.1 client over plain TCP sockets.
 *
 * Why not libcurl: every task starts through `weir launch`, so the cost of
 * starting that process is paid per task.  Linking libcurl pulls in about
 * thirty shared libraries (TLS, Kerberos, LDAP, ...), which we measured at
 * about 3.4 ms per exec on the project's machines, several times the cost
 * of starting the user's own program.  weir's peers are its own server, so
 * this client speaks just HTTP/1.1: Content-Length and chunked bodies,
 * keep-alive, timeouts.  https goes through the TLS layer a handle is given
 * (http_client_set_tls: the server's webhooks and sensors, the CLI's and
 * the launcher's server with tls:); this file calls it through function
 * pointers, and lib/tls.c opens GnuTLS at its first session only.
 */
#include "lib/http_client.h"

#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/strbuf.h"

struct http_client {
	char *base_url; /* as given, without trailing slashes: for messages */
	char *host;
	char *port;
	char *token;
	char *headers; /* extra "Name: value\r\n" lines; NULL: none */
	int fd;        /* kept-alive connection, or -1 */
	bool https;
	const struct http_tls_ops *tls_ops; /* NULL: no TLS layer given */
	char *ca_file;
	void *tls; /* the session on fd, when https */
};

struct http_client *http_client_create(const char *base_url, const char *token)
{
	struct http_client *c = calloc(1, sizeof *c);
	const char *hp;
	const char *slash, *colon;

	if (!c)
		return NULL;
	c->fd = -1;
	c->base_url = strdup(base_url);
	if (!c->base_url)
		goto fail;
	size_t bl = strlen(c->base_url);
	while (bl > 0 && c->base_url[bl - 1] == '/')
		c->base_url[--bl] = '\0';
	if (token && !(c->token = strdup(token)))
		goto fail;
	/* The host and port are parsed lazily in connect_to() so that a bad
	 * URL becomes an error message rather than a NULL here. */
	c->https = strncmp(c->base_url, "https://", 8) == 0;
	hp = c->https                                  ? c->base_url + 8
	     : strncmp(c->base_url, "http://", 7) == 0 ? c->base_url + 7
	                                               : NULL;
	if (hp) {
		const char *dflt = c->https ? "443" : "80";
		slash = strchr(hp, '/');
		size_t hlen = slash ? (size_t)(slash - hp) : strlen(hp);
		if (hp[0] == '[') { /* [::1]:port */
			const char *end = memchr(hp, ']', hlen);
			if (end) {
				c->host = strndup(hp + 1, (size_t)(end - hp - 1));
				c->port = end[1] == ':'
				              ? strndup(end + 2, hlen - (size_t)(end - hp) - 2)
				              : strdup(dflt);
			}
		} else {
			colon = memchr(hp, ':', hlen);
			c->host = strndup(hp, colon ? (size_t)(colon - hp) : hlen);
			c->port = colon ? strndup(colon + 1, hlen - (size_t)(colon - hp) - 1)
			                : strdup(dflt);
		}
	}
	return c;
fail:
	http_client_destroy(c);
	return NULL;
}

static void drop_connection(struct http_client *c)
{
	if (c->tls)
		c->tls_ops->close(c->tls);
	c->tls = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

void http_client_destroy(struct http_client *c)
{
	if (!c)
		return;
	drop_connection(c);
	free(c->ca_file);
	free(c->base_url);
	free(c->host);
	free(c->port);
	free(c->token);
	free(c->headers);
	free(c);
}

int http_client_set_headers(struct http_client *c, const char *lines)
{
	char *copy = lines && *lines ? strdup(lines) : NULL;

	if (lines && *lines && !copy)
		return -1;
	free(c->headers);
	c->headers = copy;
	return 0;
}

int http_client_endpoint(const struct http_client *c, const char **host, const char **port,
                         bool *https)
{
	*host = c->host;
	*port = c->port;
	*https = c->https;
	return c->host && c->port && c->host[0] ? 0 : -1;
}

int http_client_set_tls(struct http_client *c, const struct http_tls_ops *ops, const char *ca_file)
{
	char *copy = ca_file && *ca_file ? strdup(ca_file) : NULL;

	if (ca_file && *ca_file && !copy)
		return -1;
	drop_connection(c);
	free(c->ca_file);
	c->ca_file = copy;
	c->tls_ops = ops;
	return 0;
}

/* Waits until fd is ready for `events` or the deadline (0: none) passes. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	for (;;) {
		int left = -1;
		if (deadline) {
			int64_t l = deadline - clock_mono_ms();
			if (l <= 0)
				return -1;
			left = l > 60000 ? 60000 : (int)l;
		}
		int rc = poll(&p, 1, left);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

/* The TLS session on the fresh connection c->fd, its handshake done by
 * the deadline (30 s when there is none). */
static int start_tls(struct http_client *c, int64_t deadline, struct weir_error *err)
{
	struct weir_error e = {0};
	int rc;

	if (!deadline)
		deadline = clock_mono_ms() + 30000;
	c->tls = c->tls_ops->start(c->fd, c->host, c->ca_file, &e);
	if (!c->tls) {
		drop_connection(c);
		return weir_error_set(err, e.kind, "%s: %s", c->base_url, e.msg);
	}
	while ((rc = c->tls_ops->handshake(c->tls, &e)) == 1) {
		if (wait_fd(c->fd, c->tls_ops->wants_write(c->tls) ? POLLOUT : POLLIN, deadline) <
		    0) {
			weir_error_set(&e, WEIR_E_UNAVAILABLE, "%s", "TLS handshake: timed out");
			rc = -1;
			break;
		}
	}
	if (rc < 0) {
		drop_connection(c);
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "%s: %s", c->base_url, e.msg);
	}
	return 0;
}

static int connect_to(struct http_client *c, int64_t deadline, struct weir_error *err)
{
	struct addrinfo hints = {0}, *res = NULL, *ai;
	int rc, fd = -1, saved = 0;

	if (!c->host || !c->port || !c->host[0])
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: expected a server URL like http://127.0.0.1:8270",
		                      c->base_url);
	if (c->https && !c->tls_ops)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: https is not available here (this program links no "
		                      "TLS); use an http:// URL",
		                      c->base_url);
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(c->host, c->port, &hints, &res);
	if (rc != 0)
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "%s: cannot resolve %s: %s",
		                      c->base_url, c->host, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
		            ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			int64_t left = deadline ? deadline - clock_mono_ms() : 5000;
			if (left > 5000)
				left = 5000;
			if (left > 0 && poll(&p, 1, (int)left) == 1) {
				int soerr = 0;
				socklen_t sl = sizeof soerr;
				getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
				if (soerr == 0)
					break;
				errno = soerr;
			} else {
				errno = ETIMEDOUT;
			}
		}
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "%s: cannot connect: %s",
		                      c->base_url, strerror(saved ? saved : ECONNREFUSED));
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->fd = fd;
	return c->https ? start_tls(c, deadline, err) : 0;
}

/* After EAGAIN: the way to wait (TLS may read while writing and back). */
static short wait_events(const struct http_client *c, short plain)
{
	if (!c->tls)
		return plain;
	return c->tls_ops->wants_write(c->tls) ? POLLOUT : POLLIN;
}

static int send_all(struct http_client *c, const char *p, size_t n, int64_t deadline)
{
	while (n > 0) {
		ssize_t w =
		    c->tls ? c->tls_ops->send(c->tls, p, n) : send(c->fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN &&
			    wait_fd(c->fd, wait_events(c, POLLOUT), deadline) == 0)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads more bytes into b; 1 read, 0 at EOF, -1 on error or timeout. */
static int read_more(struct http_client *c, struct strbuf *b, int64_t deadline)
{
	char tmp[16384];
	for (;;) {
		ssize_t r = c->tls ? c->tls_ops->recv(c->tls, tmp, sizeof tmp)
		                   : recv(c->fd, tmp, sizeof tmp, 0);
		if (r > 0)
			return strbuf_add(b, tmp, (size_t)r) == 0 ? 1 : -1;
		if (r == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN && wait_fd(c->fd, wait_events(c, POLLIN), deadline) == 0)
			continue;
		return -1;
	}
}

/* Where the body goes: collected into `body`, or passed to `on_chunk`. */
struct sink {
	struct strbuf *body;
	http_chunk_fn on_chunk;
	void *arg;
	int stopped;
};

static int sink_put(struct sink *s, const char *p, size_t n)
{
	if (n == 0 || s->stopped)
		return 0;
	if (s->on_chunk) {
		if (s->on_chunk(p, n, s->arg) != 0)
			s->stopped = 1;
		return 0;
	}
	return strbuf_add(s->body, p, n);
}

static const char *find_header(const char *head, const char *name)
{
	size_t nl = strlen(name);
	for (const char *line = strstr(head, "\r\n"); line; line = strstr(line, "\r\n")) {
		line += 2;
		if (!strncasecmp(line, name, nl) && line[nl] == ':') {
			const char *v = line + nl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			return v;
		}
	}
	return NULL;
}

/* Reads one response: status, headers, body into the sink.  *reusable says
 * whether the connection may carry another request. */
static int read_response(struct http_client *c, long *status, struct sink *s, int *reusable,
                         int64_t deadline)
{
	struct strbuf in = STRBUF_INIT;
	char *end;
	int rc = -1;

	*reusable = 0;
	while (!(end = strstr(in.buf, "\r\n\r\n"))) {
		if (read_more(c, &in, deadline) <= 0 || in.len > 65536)
			goto out;
	}
	*end = '\0';
	if (sscanf(in.buf, "HTTP/1.%*d %ld", status) != 1)
		goto out;
	const char *te = find_header(in.buf, "Transfer-Encoding");
	const char *cl = find_header(in.buf, "Content-Length");
	const char *conn = find_header(in.buf, "Connection");
	int chunked = te && !strncasecmp(te, "chunked", 7);
	int close_after = conn && !strncasecmp(conn, "close", 5);
	long long length = cl ? atoll(cl) : -1;
	/* 204 and 304 have no body, whatever the headers say (RFC 9112 6.3) */
	if (*status == 204 || *status == 304) {
		length = 0;
		chunked = 0;
	}
	strbuf_remove(&in, 0, (size_t)(end + 4 - in.buf));

	if (chunked) {
		for (;;) {
			char *crlf;
			while (!(crlf = strstr(in.buf, "\r\n")))
				if (read_more(c, &in, deadline) <= 0)
					goto out;
			unsigned long long size = strtoull(in.buf, NULL, 16);
			strbuf_remove(&in, 0, (size_t)(crlf + 2 - in.buf));
			if (size == 0)
				break;
			while (in.len < size + 2)
				if (read_more(c, &in, deadline) <= 0)
					goto out;
			if (sink_put(s, in.buf, size) < 0)
				goto out;
			strbuf_remove(&in, 0, size + 2);
			if (s->stopped)
				goto out; /* the caller has what it wanted; drop the connection */
		}
		/* trailers end with an empty line */
		while (!strstr(in.buf, "\r\n"))
			if (read_more(c, &in, deadline) <= 0)
				goto out;
		*reusable = !close_after;
	} else if (length >= 0) {
		while ((long long)in.len < length) {
			if (s->on_chunk && in.len > 0) {
				size_t n = in.len;
				if (sink_put(s, in.buf, n) < 0)
					goto out;
				length -= (long long)n;
				strbuf_remove(&in, 0, n);
				if (s->stopped)
					goto out;
				continue;
			}
			if (read_more(c, &in, deadline) <= 0)
				goto out;
		}
		if (sink_put(s, in.buf, (size_t)length) < 0)
			goto out;
		*reusable = !close_after;
	} else {
		for (;;) {
			if (in.len && sink_put(s, in.buf, in.len) < 0)
				goto out;
			strbuf_reset(&in);
			int r = read_more(c, &in, deadline);
			if (r == 0)
				break;
			if (r < 0)
				goto out;
		}
	}
	rc = 0;
out:
	strbuf_release(&in);
	return rc;
}

static int perform(struct http_client *c, const char *method, const char *path, const char *ctype,
                   const char *body, size_t body_len, long timeout_ms, long *status, struct sink *s,
                   struct weir_error *err)
{
	int64_t deadline = timeout_ms > 0 ? clock_mono_ms() + timeout_ms : 0;
	struct strbuf req = STRBUF_INIT;
	char line[512];
	int rc = -1;

	*status = 0;
	snprintf(line, sizeof line, "%s %s HTTP/1.1\r\nHost: %s:%s\r\nAccept: application/json\r\n",
	         method, path, c->host ? c->host : "", c->port ? c->port : "");
	strbuf_add(&req, line, strlen(line));
	if (c->token) {
		strbuf_add(&req, "Authorization: Bearer ", 22);
		strbuf_add(&req, c->token, strlen(c->token));
		strbuf_add(&req, "\r\n", 2);
	}
	if (c->headers)
		strbuf_add(&req, c->headers, strlen(c->headers));
	if (body || strcmp(method, "GET")) {
		snprintf(line, sizeof line, "%s%s%sContent-Length: %zu\r\n",
		         body ? "Content-Type: " : "", body ? ctype : "", body ? "\r\n" : "",
		         body_len);
		strbuf_add(&req, line, strlen(line));
	}
	if (strbuf_add(&req, "\r\n", 2) < 0 || (body_len && strbuf_add(&req, body, body_len) < 0)) {
		strbuf_release(&req);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}

	/* A kept-alive connection may have been closed by the server since the
	 * last request; then we reconnect once. */
	for (int tries = 0; tries < 2; tries++) {
		int fresh = c->fd < 0;
		if (fresh && connect_to(c, deadline, err) < 0)
			goto out;
		int reusable = 0;
		if (send_all(c, req.buf, req.len, deadline) == 0 &&
		    read_response(c, status, s, &reusable, deadline) == 0) {
			if (!reusable)
				drop_connection(c);
			rc = 0;
			goto out;
		}
		drop_connection(c);
		if (s->stopped && *status) {
			rc = 0;
			goto out;
		}
		if (fresh || *status || (s->body && s->body->len) || s->stopped)
			break;
	}
	weir_error_set(err, WEIR_E_UNAVAILABLE, "%s %s%s: %s", method, c->base_url, path,
	               deadline && clock_mono_ms() >= deadline
	                   ? "timed out"
	                   : "connection lost before an answer");
out:
	strbuf_release(&req);
	return rc;
}

int http_client_request(struct http_client *c, const char *method, const char *path,
                        const char *json_body, long timeout_ms, struct http_response *resp,
                        struct weir_error *err)
{
	return http_client_request_body(c, method, path, "application/json", json_body,
	                                json_body ? strlen(json_body) : 0, timeout_ms, resp, err);
}

int http_client_request_body(struct http_client *c, const char *method, const char *path,
                             const char *content_type, const char *data, size_t len,
                             long timeout_ms, struct http_response *resp, struct weir_error *err)
{
	struct strbuf body = STRBUF_INIT;
	struct sink s = {.body = &body};
	int rc;

	memset(resp, 0, sizeof *resp);
	rc = perform(c, method, path, content_type, data, len, timeout_ms, &resp->status, &s, err);
	if (rc < 0) {
		strbuf_release(&body);
		resp->status = 0;
		return -1;
	}
	resp->body = strbuf_detach(&body, &resp->len);
	return resp->body ? 0 : weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
}

int http_client_stream(struct http_client *c, const char *path, http_chunk_fn on_chunk, void *arg,
                       long *status, struct weir_error *err)
{
	struct sink s = {.on_chunk = on_chunk, .arg = arg};
	return perform(c, "GET", path, NULL, NULL, 0, 0, status, &s, err);
}

void http_response_release(struct http_response *resp)
{
	if (!resp)
		return;
	free(resp->body);
	resp->body = NULL;
	resp->len = 0;
}

const char *http_response_error_text(struct http_response *resp)
{
	static __thread char message[1024];
	json_t *j;

	if (!resp->body)
		return "";
	j = json_loadb(resp->body, resp->len, 0, NULL);
	if (j) {
		const char *e = json_string_value(json_object_get(j, "error"));
		if (e) {
			snprintf(message, sizeof message, "%s", e);
			json_decref(j);
			return message;
		}
		json_decref(j);
	}
	return resp->body;
}

char *http_url_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *out = malloc(n * 3 + 1), *o = out;
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' || *p == '~') {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}
