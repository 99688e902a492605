/* http.h: an HTTP server (libmicrohttpd) driven from a libuv loop.
 *
 * No MHD threads: MHD runs in external epoll mode; its epoll fd is watched
 * with uv_poll and its timeouts with a uv_timer, so every request callback
 * runs on the loop's thread.  A request is handed to the handler once its
 * whole body has arrived (bodies over the limit get 413 without reaching the
 * handler).  The handler answers at once (http_request_respond_*), or
 * suspends the request (long polls) and answers later from any loop
 * callback; a streamed response may ask to wait (HTTP_STREAM_WAIT) and is
 * resumed with http_request_resume().  A suspended connection costs no CPU.
 *
 * A request whose target holds a control character (raw or %XX-escaped:
 * %00 would cut the decoded path short) or whose Content-Length headers
 * disagree gets 400 here, without reaching the handler.
 *
 * Lifetime: a struct http_request lives from its first byte until MHD
 * completes the connection's request; whoever keeps a pointer to a suspended
 * request must answer or resume it before forgetting it.  Destroying the
 * server answers every still-suspended request with 503 first.
 */
#ifndef WEIR_API_HTTP_H
#define WEIR_API_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>
#include <uv.h>

#include "lib/error.h"
#include "model/role.h"

struct http_server;  /* opaque */
struct http_request; /* opaque */

/* Called once per request, body complete.  The handler must answer, or
 * suspend the request, before returning. */
typedef void (*http_handler_fn)(struct http_request *req, void *arg);

/* Streamed body: fill at most `max` bytes of `buf` with the bytes at `pos`.
 * Returns the count (> 0), or one of the HTTP_STREAM_* values. */
typedef ssize_t (*http_stream_fn)(void *arg, uint64_t pos, char *buf, size_t max);
/* Frees a stream's `arg` when the response is done with it. */
typedef void (*http_stream_free_fn)(void *arg);

#define HTTP_STREAM_END ((ssize_t)-1)   /* body complete */
#define HTTP_STREAM_ERROR ((ssize_t)-2) /* abort the connection */
#define HTTP_STREAM_WAIT ((ssize_t)-3)  /* nothing yet: suspend until http_request_resume() */

#define HTTP_MAX_BODY (4u << 20)

/* What a slow, silent or too numerous client may hold (docs/security.md);
 * 0 in a field: its default. */
struct http_limits {
	/* From a connection's accept, or the end of its previous request, to a
	 * whole request head (request line and headers): the connection is
	 * closed when it takes longer.  Default HTTP_DEFAULT_HEADER_TIMEOUT_S. */
	unsigned header_timeout_s;
	/* From a request's head to the end of its body (a declared length
	 * over 0, or a chunked one): a body sent slower is cut off.  Default
	 * HTTP_DEFAULT_BODY_TIMEOUT_S. */
	unsigned body_timeout_s;
	/* No byte either way for this long while a body is read or an answer
	 * written: closed.  A suspended request (a long poll, a log follower
	 * waiting for bytes) is the server's own wait and never idle.
	 * Default HTTP_DEFAULT_IDLE_TIMEOUT_S. */
	unsigned idle_timeout_s;
	/* Connections whose head has not arrived, at most: one more closes the
	 * oldest of them.  Default HTTP_DEFAULT_MAX_PENDING_HEADS, and at most
	 * half the connection limit (the open-file limit less a reserve for
	 * the server's own files). */
	unsigned max_pending_heads;
};

#define HTTP_DEFAULT_HEADER_TIMEOUT_S 10u
#define HTTP_DEFAULT_BODY_TIMEOUT_S 60u
#define HTTP_DEFAULT_IDLE_TIMEOUT_S 60u
#define HTTP_DEFAULT_MAX_PENDING_HEADS 1024u

/* The server's TLS: its certificate (then any intermediates) and its
 * private key as PEM texts, checked beforehand (lib/tls.h's
 * tls_server_keys_load()).  With them the server speaks HTTPS only: a
 * client that speaks plain HTTP to it fails its handshake and is closed,
 * answered nothing. */
struct http_tls_keys {
	const char *cert_pem;
	const char *key_pem;
};

/* Listens on host:port (host a literal IPv4/IPv6 address or a name; port 0
 * picks a free one).  NULL with err when the address is bad or taken, or
 * when TLS is asked for and this libmicrohttpd was built without it.
 * http_server_create() has the default limits and no TLS; `tls` NULL:
 * plain HTTP (the texts are copied). */
struct http_server *http_server_create(uv_loop_t *loop, const char *host, int port,
                                       http_handler_fn handler, void *arg, struct weir_error *err);
struct http_server *http_server_create_with(uv_loop_t *loop, const char *host, int port,
                                            const struct http_limits *limits,
                                            const struct http_tls_keys *tls,
                                            http_handler_fn handler, void *arg,
                                            struct weir_error *err);
/* The connection limit the server runs with (from RLIMIT_NOFILE). */
unsigned http_server_connection_limit(const struct http_server *srv);
/* Raises this process's soft RLIMIT_NOFILE to its hard limit, at most
 * 65536 (a server holds a socket per client); the soft limit now in force. */
unsigned long http_raise_nofile_limit(void);
/* The bound port (useful with port 0). */
int http_server_port(const struct http_server *srv);
/* Called once per request after its answer (status) was handed to the
 * connection, on the loop's thread, the request and its body still
 * readable (its query and headers only while the connection lasts; its
 * peer always): what the metrics and the event log need of every request.
 * It comes late in the loop turn that sent the answer, after the turn's
 * other work (the agent's starts of a job just submitted need not wait for
 * the event log's write), and always before the next request's handler
 * runs, so a request sees what the done callbacks of the answers before it
 * wrote.  NULL fn: none. */
typedef void (*http_done_fn)(struct http_request *req, int status, void *arg);
void http_server_set_done(struct http_server *srv, http_done_fn fn, void *arg);
/* Called before an answer is handed to its connection (NULL fn: none): the
 * server ends its turn there, so that an answer never promises what is not
 * yet stored (the job manager's job_manager_turn_end()); when the turn
 * could not be stored, fn may take the answer back
 * (http_request_take_back()) and give another. */
typedef void (*http_before_answer_fn)(struct http_request *req, void *arg);
void http_server_set_before_answer(struct http_server *srv, http_before_answer_fn fn, void *arg);
/* Stops accepting and closes every connection; suspended requests get 503.
 * Closes the uv handles; run the loop once more to finish closing them.
 * NULL is a no-op. */
void http_server_destroy(struct http_server *srv);

/* Request accessors; strings live as long as the request. */
const char *http_request_method(const struct http_request *req);
const char *http_request_path(const struct http_request *req);
/* A query parameter or NULL. */
const char *http_request_query(const struct http_request *req, const char *key);
/* Calls fn for every query parameter in the order sent, repeats included
 * (a key without '=' has value NULL); stops when fn returns false.
 * false when fn stopped it. */
bool http_request_query_each(const struct http_request *req,
                             bool (*fn)(void *arg, const char *key, const char *value), void *arg);
/* A header (case-insensitive name) or NULL. */
const char *http_request_header(const struct http_request *req, const char *name);
/* The body (NUL-terminated; empty string when none). */
const char *http_request_body(const struct http_request *req, size_t *len);

/* The peer's address, "127.0.0.1:40112" or "[::1]:40112", into buf;
 * "" when unknown.  Returns buf. */
const char *http_request_peer(const struct http_request *req, char *buf, size_t size);
/* Who the request authenticated as (copied, at most 63 bytes kept; NULL
 * or "" clears it), for whoever looks at the request when it is done. */
void http_request_set_user(struct http_request *req, const char *user);
/* That user, or "" when none was set. */
const char *http_request_user(const struct http_request *req);
/* The name of the person's token the request came with (weir tokens,
 * api/person_token.h; copied, at most 63 bytes kept; NULL or "" clears
 * it), beside its user: the event log names both. */
void http_request_set_token_name(struct http_request *req, const char *name);
/* That name, or "" when the request came with none. */
const char *http_request_token_name(const struct http_request *req);
/* The role the request's credentials carry (model/role.h), which the route
 * table's role column is checked against (route_dispatch()); ROLE_NONE
 * until set. */
void http_request_set_role(struct http_request *req, enum weir_role role);
enum weir_role http_request_role(const struct http_request *req);

/* The JSON the request was answered with (http_request_respond_json), or
 * NULL: readable in the http_done_fn callback only (an id the answer
 * carries, such as a new job's). */
json_t *http_request_answer(const struct http_request *req);

/* Per-request slot for the handler's own use (e.g. a long poll's state). */
void http_request_set_data(struct http_request *req, void *data);
void *http_request_data(const struct http_request *req);

/* Adds a header to the response still to be sent (copied; at most 12; an
 * exact repeat of one added before is not added again).
 * Answers carry "Cache-Control: no-store" unless one is added here. */
void http_request_add_header(struct http_request *req, const char *name, const char *value);

/* Answers with `body` (reference stolen; NULL sends "{}").  Works on an
 * active request from the handler, or on a suspended one at any time (the
 * request is resumed).  Only the first answer counts. */
void http_request_respond_json(struct http_request *req, int status, json_t *body);
/* The same with JSON the caller wrote itself: `text` (`len` bytes, ownership
 * taken; NULL: out of memory, answered 500) as application/json, and
 * `answer` (stolen; NULL: none) as what http_request_answer() shows. */
void http_request_respond_json_text(struct http_request *req, int status, char *text, size_t len,
                                    json_t *answer);
/* Answers with `len` bytes at `data`, which must outlive the server
 * (static data such as the embedded UI files); HEAD gets the headers only. */
void http_request_respond_static(struct http_request *req, int status, const char *content_type,
                                 const void *data, size_t len);
/* The status of the answer given and not yet sent; 0 when none. */
int http_request_pending_status(const struct http_request *req);
/* Takes back the answer given and not yet sent (from the before-answer
 * hook), so that another can be given; a no-op when none is waiting. */
void http_request_take_back(struct http_request *req);
/* {"error": msg, "status": N} with N from weir_error_http_status(). */
void http_request_respond_error(struct http_request *req, const struct weir_error *err);
void http_request_respond_errorf(struct http_request *req, enum weir_error_kind kind,
                                 const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A streamed body of unknown length.  `free_fn(arg)` is called when the
 * response is released, also when the client goes away. */
void http_request_respond_stream(struct http_request *req, int status, const char *content_type,
                                 http_stream_fn read_fn, void *arg, http_stream_free_fn free_fn);

/* Whether the request came over TLS (a server given http_tls_keys): what
 * the session cookie's Secure follows. */
bool http_request_is_tls(const struct http_request *req);

/* A small number the handler keeps on the request across a redispatch
 * (0 until set): the credentials' verdict decided off the loop. */
void http_request_set_mark(struct http_request *req, int mark);
int http_request_mark(const struct http_request *req);
/* Hands a suspended request to the handler again, as if it had just
 * arrived (its mark kept): for work done off the loop on its behalf.  The
 * handler answers or suspends it again; no answer gets 500. */
void http_request_redispatch(struct http_request *req);

/* Holds the request without an answer (long poll).  From the handler only. */
void http_request_suspend(struct http_request *req);
/* Resumes a request whose stream returned HTTP_STREAM_WAIT.  No-op if the
 * request is not waiting. */
void http_request_resume(struct http_request *req);
bool http_request_is_suspended(const struct http_request *req);

#endif
