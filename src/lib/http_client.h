/* http_client.h: the small HTTP/1.1 client the CLI and the launcher share.
 *
 * One blocking request at a time per handle; a handle keeps its connection
 * alive between requests (so a launcher's four calls use one TCP connection).
 */
#ifndef WEIR_LIB_HTTP_CLIENT_H
#define WEIR_LIB_HTTP_CLIENT_H

#include <stddef.h>

#include "lib/error.h"

struct http_client; /* opaque */

struct http_response {
	long status;  /* 0 when no answer came (connection refused, timeout) */
	char *body;   /* NUL-terminated, owned: http_response_release() */
	size_t len;
};

/* `base_url` like "http://127.0.0.1:8270" (no trailing slash needed);
 * `token` may be NULL (no Authorization header).  Copies both.  NULL on
 * out of memory. */
struct http_client *http_client_create(const char *base_url, const char *token);
void http_client_destroy(struct http_client *c);

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
