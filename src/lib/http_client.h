/* http_client.h: the small HTTP/1.1 client the CLI and the launcher share.
 *
 * One blocking request at a time per handle; a handle keeps its connection
 * alive between requests (so a launcher's four calls use one TCP connection).
 *
 * https:// URLs need TLS, which this file does not link (the lean launcher
 * shares it and starts once per task): a program gives a TLS layer to the
 * handles that may need it with http_client_set_tls() (lib/tls.h's
 * tls_http_ops, which opens GnuTLS at its first session only); a handle
 * without one answers an https URL with an error saying so.
 */
#ifndef WEIR_LIB_HTTP_CLIENT_H
#define WEIR_LIB_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/error.h"

struct http_client; /* opaque */

struct http_response {
	long status; /* 0 when no answer came (connection refused, timeout) */
	char *body;  /* NUL-terminated, owned: http_response_release() */
	size_t len;
};

/* `base_url` like "http://127.0.0.1:8270" or "https://hooks.example.com"
 * (port 80 or 443 when none is given; no trailing slash needed);
 * `token` may be NULL (no Authorization header).  Copies both.  NULL on
 * out of memory. */
struct http_client *http_client_create(const char *base_url, const char *token);
void http_client_destroy(struct http_client *c);

/* What base_url named: *host, *port (as text) and whether it is https.  0,
 * or -1 when it is not an http:// or https:// URL with a host. */
int http_client_endpoint(const struct http_client *c, const char **host, const char **port,
                         bool *https);

/* A TLS layer, as functions (lib/tls.h has one).  The session is the
 * layer's; the socket stays the client's. */
struct http_tls_ops {
	/* a client session on the connected non-blocking socket fd, the peer
	 * verified for `host` (and ca_file's CAs when not NULL); NULL with err */
	void *(*start)(int fd, const char *host, const char *ca_file, struct weir_error *err);
	/* 0 done, 1 again after the socket is ready (wants_write says which
	 * way), -1 with err */
	int (*handshake)(void *session, struct weir_error *err);
	/* as send(2)/recv(2) on a non-blocking socket; EAGAIN: see wants_write */
	ssize_t (*send)(void *session, const char *data, size_t n);
	ssize_t (*recv)(void *session, char *buf, size_t n);
	bool (*wants_write)(void *session);
	void (*close)(void *session);
};

/* Lets the handle speak https with `ops` (kept: static), its peers
 * verified against the system's trust store and `ca_file`'s certificates
 * (NULL: none; copied).  -1 on out of memory. */
int http_client_set_tls(struct http_client *c, const struct http_tls_ops *ops, const char *ca_file);

/* Header lines every request sends ("Name: value\r\n" each, one line per
 * header: the caller checked that no value holds a line break); NULL or ""
 * clears them.  Copied; -1 on out of memory. */
int http_client_set_headers(struct http_client *c, const char *lines);

/* METHOD base_url+path with an optional JSON body.  timeout_ms 0: none.
 * Returns 0 when an HTTP answer came (any status; see resp->status), -1
 * with err (WEIR_E_UNAVAILABLE) when none came.  resp is filled in both
 * cases and must be released. */
int http_client_request(struct http_client *c, const char *method, const char *path,
                        const char *json_body, long timeout_ms, struct http_response *resp,
                        struct weir_error *err);

/* The same with a body of any bytes (NUL included) and its Content-Type;
 * data NULL: no body. */
int http_client_request_body(struct http_client *c, const char *method, const char *path,
                             const char *content_type, const char *data, size_t len,
                             long timeout_ms, struct http_response *resp, struct weir_error *err);

/* Called with each piece of a streamed body; return 0 to go on, non-zero to stop. */
typedef int (*http_chunk_fn)(const char *data, size_t len, void *arg);

/* GET that hands the body to `on_chunk` as it arrives (log follow).
 * *status gets the HTTP status.  0 when an answer came, -1 with err. */
int http_client_stream(struct http_client *c, const char *path, http_chunk_fn on_chunk, void *arg,
                       long *status, struct weir_error *err);

void http_response_release(struct http_response *resp);

/* If the body is {"error": "..."}, that message; else the body itself.
 * Valid until resp is released or this is called again (on this thread). */
const char *http_response_error_text(struct http_response *resp);

/* Percent-encodes `s` for a URL path segment or query value; caller frees. */
char *http_url_escape(const char *s);

#endif
