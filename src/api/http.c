/* http.c: libmicrohttpd in external epoll mode, driven by a libuv loop.
 *
 * MHD's own epoll fd carries every socket (listen, connections, and the
 * eventfd that MHD_resume_connection() signals), so one uv_poll on it plus
 * one uv_timer for MHD_get_timeout() is the whole integration.  Answers are
 * built as MHD responses and queued from the access callback, the only
 * place MHD allows it for an active connection; an answer to a suspended
 * request is parked in the request and the request resumed, so MHD calls
 * the access callback again and it is queued there.
 *
 * Limits (http.h's struct http_limits, docs/security.md): every accepted
 * socket gets a struct conn_track (MHD's socket context); while its request
 * head is still to come it sits in a list ordered by when that wait began,
 * and a timer shuts down the sockets whose head is late (shutdown(2) only:
 * MHD sees the end of the stream and closes and frees the connection
 * itself).  The same list gives the oldest pending head to close when too
 * many are pending.  MHD's own connection timeout is the idle one.
 *
 * TLS (http_tls_keys: the server's tls:): MHD_USE_TLS with the PEM texts,
 * kept until the server is freed; MHD runs each handshake inside MHD_run,
 * so nothing else here changes.
 */
#include "api/http.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "lib/dynlib.h"
#include "lib/log.h"
#include "lib/str.h"
#include "lib/strbuf.h"

/* libmicrohttpd, loaded when the server starts (lib/dynlib.h), not at every
 * start of weir: it pulls in GnuTLS and eight more libraries that a command
 * of the CLI would load for nothing.  The Makefile names it as the system's
 * library does. */
#ifndef WEIR_SONAME_MHD
#define WEIR_SONAME_MHD "libmicrohttpd.so.12"
#endif
/* clang-format off */
#define MHD_FUNCS(X, t)                         \
	X(t, MHD_add_response_header)           \
	X(t, MHD_create_response_from_buffer)   \
	X(t, MHD_create_response_from_callback) \
	X(t, MHD_destroy_response)              \
	X(t, MHD_get_connection_info)           \
	X(t, MHD_get_connection_values)         \
	X(t, MHD_get_daemon_info)               \
	X(t, MHD_get_timeout)                   \
	X(t, MHD_is_feature_supported)          \
	X(t, MHD_lookup_connection_value)       \
	X(t, MHD_queue_response)                \
	X(t, MHD_resume_connection)             \
	X(t, MHD_run)                           \
	X(t, MHD_start_daemon)                  \
	X(t, MHD_stop_daemon)                   \
	X(t, MHD_suspend_connection)
/* clang-format on */
DYNLIB_TABLE(mhd, MHD_FUNCS, WEIR_SONAME_MHD, "the HTTP server");
#define MHD_add_response_header (mhd.MHD_add_response_header)
#define MHD_create_response_from_buffer (mhd.MHD_create_response_from_buffer)
#define MHD_create_response_from_callback (mhd.MHD_create_response_from_callback)
#define MHD_destroy_response (mhd.MHD_destroy_response)
#define MHD_get_connection_info (mhd.MHD_get_connection_info)
#define MHD_get_connection_values (mhd.MHD_get_connection_values)
#define MHD_get_daemon_info (mhd.MHD_get_daemon_info)
#define MHD_get_timeout (mhd.MHD_get_timeout)
#define MHD_is_feature_supported (mhd.MHD_is_feature_supported)
#define MHD_lookup_connection_value (mhd.MHD_lookup_connection_value)
#define MHD_queue_response (mhd.MHD_queue_response)
#define MHD_resume_connection (mhd.MHD_resume_connection)
#define MHD_run (mhd.MHD_run)
#define MHD_start_daemon (mhd.MHD_start_daemon)
#define MHD_stop_daemon (mhd.MHD_stop_daemon)
#define MHD_suspend_connection (mhd.MHD_suspend_connection)

#define MAX_EXTRA_HEADERS 12
/* file descriptors kept back from the connection limit for the server's
 * own: the store, log files, the agent's link, launchers' pipes */
#define FD_RESERVE_MIN 256u
/* the most the soft open-file limit is raised to */
#define NOFILE_CAP 65536u

/* Sockets waiting for a request's head, or for its body, oldest first:
 * each is closed when it has waited timeout_ms. */
struct wait_list {
	struct conn_track *first, *last;
	unsigned n;
	uint64_t timeout_ms;
};

/* One accepted socket (MHD's socket context). */
struct conn_track {
	struct http_server *srv;
	int fd;
	struct wait_list *list; /* waiting for its head or its body; NULL: neither */
	bool bad_target;        /* this request's target holds a control character */
	uint64_t since;         /* uv_now() when that wait began */
	struct conn_track *prev, *next;
};

struct http_stream {
	struct http_request *req; /* NULL once the request is complete */
	http_stream_fn read_fn;
	http_stream_free_fn free_fn;
	void *arg;
};

struct http_request {
	struct http_server *srv;
	struct MHD_Connection *conn;
	char *method;
	char *path;
	struct strbuf body; /* the upload so far */
	bool too_big;
	bool dispatched;
	bool suspended;
	bool aborting; /* server going down: a waiting stream ends */
	struct MHD_Response *pending;
	unsigned pending_status;
	bool answered;
	bool started; /* the first access call is past */
	int mark;     /* http_request_set_mark */
	void *data;
	struct http_stream *stream;
	char *hdr_name[MAX_EXTRA_HEADERS];
	char *hdr_value[MAX_EXTRA_HEADERS];
	int n_hdr;
	char user[64];                    /* http_request_set_user */
	char token_name[64];              /* http_request_set_token_name */
	enum weir_role role;              /* http_request_set_role */
	json_t *answer;                   /* the JSON answer, kept until the done callback */
	struct http_request *prev, *next; /* in srv->suspended while suspended */
	/* answered, its done callback still to come (srv->done_first) */
	bool done_pending;
	bool completed;                 /* MHD is through with it: conn is gone */
	char peer[64];                  /* http_request_peer's, kept for then */
	struct http_request *done_next; /* in srv->done_first */
};

struct http_server {
	uv_loop_t *loop;
	struct MHD_Daemon *daemon;
	uv_poll_t poll;
	uv_timer_t timer;
	http_handler_fn handler;
	void *arg;
	http_done_fn done;
	void *done_arg;
	http_before_answer_fn before_answer; /* http_server_set_before_answer() */
	void *before_answer_arg;
	int port;
	int open_handles;
	bool resumed; /* a connection was resumed since drive() last ran MHD */
	struct http_request *suspended;
	/* Answers handed to their connections whose done callback is still to
	 * come, oldest first: called from `idle`, after what else the loop
	 * turn that sent them does, or before the next request's handler. */
	uv_idle_t idle;
	struct http_request *done_first, **done_last;
	bool tls;       /* the daemon speaks TLS */
	char *tls_cert; /* its PEM texts, MHD's until the daemon stops */
	char *tls_key;
	struct wait_list heads, bodies;
	unsigned max_heads, conn_limit;
	uint64_t crowd_said_ms; /* when too many pending heads were last logged */
	uv_timer_t wait_timer;  /* for the first deadline of heads and bodies */
};

static void drive(struct http_server *srv);
static void on_timer(uv_timer_t *t);
static void free_on_close(uv_handle_t *h);

static void wait_del(struct conn_track *t)
{
	struct wait_list *l = t->list;

	if (!l)
		return;
	if (t->prev)
		t->prev->next = t->next;
	else
		l->first = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		l->last = t->prev;
	t->prev = t->next = NULL;
	t->list = NULL;
	l->n--;
}

/* Ends a socket that waited too long or is crowded out: MHD reads its end
 * and closes it in its next run. */
static void wait_cut(struct conn_track *t)
{
	wait_del(t);
	if (t->fd >= 0)
		shutdown(t->fd, SHUT_RDWR);
	/* MHD is to run again soon, also when cut from inside its run */
	t->srv->resumed = true;
	uv_timer_start(&t->srv->timer, on_timer, 0, 0);
}

static void on_wait_timer(uv_timer_t *h);

/* The timer for the first deadline of both lists. */
static void wait_arm(struct http_server *srv)
{
	uint64_t now = uv_now(srv->loop), due = UINT64_MAX;
	struct wait_list *lists[] = {&srv->heads, &srv->bodies};

	for (int i = 0; i < 2; i++)
		if (lists[i]->first && lists[i]->first->since + lists[i]->timeout_ms < due)
			due = lists[i]->first->since + lists[i]->timeout_ms;
	if (due == UINT64_MAX)
		uv_timer_stop(&srv->wait_timer);
	else
		uv_timer_start(&srv->wait_timer, on_wait_timer, due > now ? due - now : 0, 0);
}

static void on_wait_timer(uv_timer_t *h)
{
	struct http_server *srv = h->data;
	uint64_t now = uv_now(srv->loop);
	struct wait_list *lists[] = {&srv->heads, &srv->bodies};

	for (int i = 0; i < 2; i++)
		while (lists[i]->first && lists[i]->first->since + lists[i]->timeout_ms <= now)
			wait_cut(lists[i]->first);
	wait_arm(srv);
}

/* The socket now waits for a request head (accepted, or its previous
 * request done) or for a request's body; one head too many closes the
 * socket that has waited longest for its head. */
static void wait_add(struct conn_track *t, struct wait_list *l)
{
	struct http_server *srv = t->srv;

	if (t->list == l)
		return;
	wait_del(t);
	t->since = uv_now(srv->loop);
	t->prev = l->last;
	t->next = NULL;
	if (l->last)
		l->last->next = t;
	else
		l->first = t;
	l->last = t;
	t->list = l;
	l->n++;
	if (l == &srv->heads && l->n > srv->max_heads) {
		/* said once a minute at most: a flood would fill the log */
		if (!srv->crowd_said_ms || uv_now(srv->loop) - srv->crowd_said_ms >= 60000) {
			log_warn("HTTP: more than %u connections wait for a request head: closing "
			         "the oldest of them as more come (http.max_pending_heads)",
			         srv->max_heads);
			srv->crowd_said_ms = uv_now(srv->loop);
		}
		wait_cut(l->first);
	}
	if (l->first == t || !uv_is_active((uv_handle_t *)&srv->wait_timer))
		wait_arm(srv);
}

static struct conn_track *track_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    conn ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;

	return ci ? ci->socket_context : NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *srv = cls;
	struct conn_track *t = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		t = calloc(1, sizeof *t);
		if (!t)
			return; /* untracked: MHD's idle timeout still ends it */
		t->srv = srv;
		t->fd = ci ? ci->connect_fd : -1;
		*socket_context = t;
		wait_add(t, &srv->heads);
	} else if (t) {
		wait_del(t);
		free(t);
		*socket_context = NULL;
		if (!srv->heads.first && !srv->bodies.first)
			uv_timer_stop(&srv->wait_timer);
	}
}

/* The request line is in (MHD's URI log callback: the target as sent,
 * before MHD decodes it and a %00 cuts it short). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct conn_track *t = track_of(conn);

	(void)cls;
	if (t)
		t->bad_target = str_url_has_control(uri);
	return NULL;
}

struct length_walk {
	const char *first;
	bool differ;
};

static enum MHD_Result length_one(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
	struct length_walk *w = cls;

	(void)kind;
	if (strcasecmp(key, "Content-Length"))
		return MHD_YES;
	if (!w->first)
		w->first = value ? value : "";
	else if (strcmp(w->first, value ? value : ""))
		w->differ = true;
	return MHD_YES;
}

/* Whether two Content-Length headers disagree (RFC 9112 6.3: the length is
 * then unknown, the message an error; equal repeats are one length). */
static bool lengths_differ(struct MHD_Connection *conn)
{
	struct length_walk w = {NULL, false};

	MHD_get_connection_values(conn, MHD_HEADER_KIND, length_one, &w);
	return w.differ;
}

static void list_add(struct http_request *req)
{
	struct http_server *srv = req->srv;
	req->prev = NULL;
	req->next = srv->suspended;
	if (srv->suspended)
		srv->suspended->prev = req;
	srv->suspended = req;
}

static void list_del(struct http_request *req)
{
	if (req->prev)
		req->prev->next = req->next;
	else if (req->srv->suspended == req)
		req->srv->suspended = req->next;
	if (req->next)
		req->next->prev = req->prev;
	req->prev = req->next = NULL;
}

static void do_suspend(struct http_request *req)
{
	if (req->suspended)
		return;
	MHD_suspend_connection(req->conn);
	req->suspended = true;
	list_add(req);
}

static void do_resume(struct http_request *req)
{
	if (!req->suspended)
		return;
	req->suspended = false;
	list_del(req);
	MHD_resume_connection(req->conn);
	/* MHD picks resumed connections up in its next run; do not count on its
	 * wake-up fd reaching our poll in external mode.  Resumed from inside
	 * MHD_run (a request's handler answering a long poll), the timer set
	 * here would be reset by drive() after the run: the flag tells it. */
	req->srv->resumed = true;
	uv_timer_start(&req->srv->timer, on_timer, 0, 0);
}

static void add_headers(struct http_request *req, struct MHD_Response *resp, const char *ctype)
{
	bool cache_set = false;

	MHD_add_response_header(resp, "Content-Type", ctype);
	for (int i = 0; i < req->n_hdr; i++) {
		MHD_add_response_header(resp, req->hdr_name[i], req->hdr_value[i]);
		cache_set |= !strcasecmp(req->hdr_name[i], "Cache-Control");
	}
	/* answers are data that changes; the UI's files say otherwise themselves */
	if (!cache_set)
		MHD_add_response_header(resp, "Cache-Control", "no-store");
}

static void park_answer(struct http_request *req, unsigned status, struct MHD_Response *resp)
{
	req->answered = true;
	req->pending = resp;
	req->pending_status = status;
	do_resume(req);
}

void http_request_respond_json(struct http_request *req, int status, json_t *body)
{
	char *text;

	if (req->answered) {
		json_decref(body);
		return;
	}
	text = body ? json_dumps(body, JSON_COMPACT) : strdup("{}");
	http_request_respond_json_text(req, status, text, text ? strlen(text) : 0, body);
}

void http_request_respond_json_text(struct http_request *req, int status, char *text, size_t len,
                                    json_t *answer)
{
	struct MHD_Response *resp;

	if (req->answered) {
		free(text);
		json_decref(answer);
		return;
	}
	json_decref(req->answer);
	req->answer = answer; /* for the done callback; freed right after it */
	if (!text) {
		text = strdup("{\"error\":\"out of memory\",\"status\":500}");
		status = 500;
		if (!text)
			return;
		len = strlen(text);
	}
	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return;
	}
	add_headers(req, resp, "application/json");
	park_answer(req, (unsigned)status, resp);
}

void http_request_respond_static(struct http_request *req, int status, const char *content_type,
                                 const void *data, size_t len)
{
	struct MHD_Response *resp;

	if (req->answered)
		return;
	resp = MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		http_request_respond_errorf(req, WEIR_E_INTERNAL, "out of memory");
		return;
	}
	add_headers(req, resp, content_type);
	park_answer(req, (unsigned)status, resp);
}

int http_request_pending_status(const struct http_request *req)
{
	return req->pending ? (int)req->pending_status : 0;
}

void http_request_take_back(struct http_request *req)
{
	if (!req->pending)
		return;
	MHD_destroy_response(req->pending);
	req->pending = NULL;
	req->pending_status = 0;
	json_decref(req->answer);
	req->answer = NULL;
	req->answered = false;
}

static void respond_status(struct http_request *req, int status, const char *msg)
{
	json_t *o = json_pack("{s:s, s:i}", "error", msg[0] ? msg : "error", "status", status);
	http_request_respond_json(req, status, o);
}

void http_request_respond_error(struct http_request *req, const struct weir_error *err)
{
	respond_status(req, weir_error_http_status(err->kind), err->msg);
}

void http_request_respond_errorf(struct http_request *req, enum weir_error_kind kind,
                                 const char *fmt, ...)
{
	struct weir_error err;
	va_list ap;

	err.kind = kind;
	va_start(ap, fmt);
	vsnprintf(err.msg, sizeof err.msg, fmt, ap);
	va_end(ap);
	http_request_respond_error(req, &err);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct http_stream *st = cls;
	struct http_request *req = st->req;
	ssize_t n;

	if (!req || req->aborting)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	n = st->read_fn(st->arg, pos, buf, max);
	if (n == HTTP_STREAM_WAIT) {
		do_suspend(req);
		return 0;
	}
	if (n == HTTP_STREAM_END)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (n < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	return n;
}

static void stream_free(void *cls)
{
	struct http_stream *st = cls;

	if (st->req)
		st->req->stream = NULL;
	if (st->free_fn)
		st->free_fn(st->arg);
	free(st);
}

void http_request_respond_stream(struct http_request *req, int status, const char *content_type,
                                 http_stream_fn read_fn, void *arg, http_stream_free_fn free_fn)
{
	struct http_stream *st;
	struct MHD_Response *resp;

	if (req->answered)
		goto fail;
	st = calloc(1, sizeof *st);
	if (!st)
		goto fail;
	st->req = req;
	st->read_fn = read_fn;
	st->free_fn = free_fn;
	st->arg = arg;
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read, st,
	                                         stream_free);
	if (!resp) {
		free(st);
		goto fail;
	}
	req->stream = st;
	add_headers(req, resp, content_type);
	park_answer(req, (unsigned)status, resp);
	return;
fail:
	if (free_fn)
		free_fn(arg);
	http_request_respond_errorf(req, WEIR_E_INTERNAL, "cannot start a streamed response");
}

void http_request_suspend(struct http_request *req)
{
	if (!req->answered)
		do_suspend(req);
}

void http_request_resume(struct http_request *req)
{
	if (req->stream)
		do_resume(req);
}

bool http_request_is_suspended(const struct http_request *req)
{
	return req->suspended;
}

bool http_request_is_tls(const struct http_request *req)
{
	return req->srv->tls;
}

void http_request_set_mark(struct http_request *req, int mark)
{
	req->mark = mark;
}

int http_request_mark(const struct http_request *req)
{
	return req->mark;
}

/* The handler's turn; no answer and no suspension gets 500. */
static void dispatch(struct http_request *req)
{
	req->srv->handler(req, req->srv->arg);
	if (!req->pending && !req->suspended && !req->answered)
		http_request_respond_errorf(req, WEIR_E_INTERNAL,
		                            "%s %s: the server gave no answer", req->method,
		                            req->path);
}

void http_request_redispatch(struct http_request *req)
{
	if (!req->answered && req->conn)
		dispatch(req);
}

const char *http_request_method(const struct http_request *req)
{
	return req->method;
}

const char *http_request_path(const struct http_request *req)
{
	return req->path;
}

const char *http_request_query(const struct http_request *req, const char *key)
{
	return req->conn ? MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key)
	                 : NULL;
}

struct query_walk {
	bool (*fn)(void *arg, const char *key, const char *value);
	void *arg;
	bool stopped;
};

static enum MHD_Result query_walk_one(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
	struct query_walk *w = cls;

	(void)kind;
	if (w->fn(w->arg, key, value))
		return MHD_YES;
	w->stopped = true;
	return MHD_NO;
}

bool http_request_query_each(const struct http_request *req,
                             bool (*fn)(void *arg, const char *key, const char *value), void *arg)
{
	struct query_walk w = {fn, arg, false};

	if (req->conn)
		MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, query_walk_one, &w);
	return !w.stopped;
}

const char *http_request_header(const struct http_request *req, const char *name)
{
	return req->conn ? MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name) : NULL;
}

const char *http_request_body(const struct http_request *req, size_t *len)
{
	if (len)
		*len = req->body.len;
	return req->body.buf;
}

void http_request_set_data(struct http_request *req, void *data)
{
	req->data = data;
}

void *http_request_data(const struct http_request *req)
{
	return req->data;
}

void http_request_add_header(struct http_request *req, const char *name, const char *value)
{
	if (req->n_hdr >= MAX_EXTRA_HEADERS)
		return;
	for (int i = 0; i < req->n_hdr; i++) /* a redispatched handler's again */
		if (!strcasecmp(req->hdr_name[i], name) && !strcmp(req->hdr_value[i], value))
			return;
	char *n = strdup(name), *v = strdup(value);
	if (!n || !v) {
		free(n);
		free(v);
		return;
	}
	req->hdr_name[req->n_hdr] = n;
	req->hdr_value[req->n_hdr] = v;
	req->n_hdr++;
}

const char *http_request_peer(const struct http_request *req, char *buf, size_t size)
{
	const union MHD_ConnectionInfo *ci =
	    req->conn ? MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS)
	              : NULL;
	char host[INET6_ADDRSTRLEN] = "";

	if (size)
		buf[0] = '\0';
	if (!req->conn) /* done with: what it was */
		snprintf(buf, size, "%s", req->peer);
	if (!ci || !ci->client_addr)
		return buf;
	if (ci->client_addr->sa_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ci->client_addr;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
		snprintf(buf, size, "%s:%u", host, (unsigned)ntohs(a->sin_port));
	} else if (ci->client_addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ci->client_addr;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
		snprintf(buf, size, "[%s]:%u", host, (unsigned)ntohs(a->sin6_port));
	}
	return buf;
}

void http_request_set_user(struct http_request *req, const char *user)
{
	snprintf(req->user, sizeof req->user, "%s", user ? user : "");
}

const char *http_request_user(const struct http_request *req)
{
	return req->user;
}

void http_request_set_token_name(struct http_request *req, const char *name)
{
	snprintf(req->token_name, sizeof req->token_name, "%s", name ? name : "");
}

const char *http_request_token_name(const struct http_request *req)
{
	return req->token_name;
}

void http_request_set_role(struct http_request *req, enum weir_role role)
{
	req->role = role;
}

enum weir_role http_request_role(const struct http_request *req)
{
	return req->role;
}

json_t *http_request_answer(const struct http_request *req)
{
	return req->answer;
}

void http_server_set_done(struct http_server *srv, http_done_fn fn, void *arg)
{
	srv->done = fn;
	srv->done_arg = arg;
}

void http_server_set_before_answer(struct http_server *srv, http_before_answer_fn fn, void *arg)
{
	srv->before_answer = fn;
	srv->before_answer_arg = arg;
}

static void request_free(struct http_request *req)
{
	for (int i = 0; i < req->n_hdr; i++) {
		free(req->hdr_name[i]);
		free(req->hdr_value[i]);
	}
	json_decref(req->answer);
	free(req->method);
	free(req->path);
	strbuf_release(&req->body);
	free(req);
}

/* The done callbacks of the answers sent so far, oldest first; a request
 * MHD is already through with is freed after its own. */
static void done_flush(struct http_server *srv)
{
	while (srv->done_first) {
		struct http_request *req = srv->done_first;

		srv->done_first = req->done_next;
		if (!srv->done_first)
			srv->done_last = &srv->done_first;
		req->done_pending = false;
		srv->done(req, (int)req->pending_status, srv->done_arg);
		json_decref(req->answer);
		req->answer = NULL;
		if (req->completed)
			request_free(req);
	}
	uv_idle_stop(&srv->idle);
}

static void on_idle(uv_idle_t *h)
{
	done_flush(h->data);
}

/* The answer goes to the connection now, after the commit of what it
 * reports (before_answer); what the done callback does
 * (the metrics, the event log's write to the store) waits until the loop
 * has nothing more urgent in this turn (the agent's starts of the job just
 * submitted), and comes before the next request is handled all the same. */
static enum MHD_Result queue_pending(struct http_request *req)
{
	struct http_server *srv = req->srv;
	enum MHD_Result r;

	if (srv->before_answer) {
		srv->before_answer(req, srv->before_answer_arg);
		if (!req->pending)
			return MHD_YES; /* taken back and not answered again */
	}
	if (srv->done && !req->done_pending) {
		char peer[sizeof req->peer];

		snprintf(req->peer, sizeof req->peer, "%s",
		         http_request_peer(req, peer, sizeof peer));
		req->done_pending = true;
		req->done_next = NULL;
		*srv->done_last = req;
		srv->done_last = &req->done_next;
		uv_idle_start(&srv->idle, on_idle);
	} else {
		json_decref(req->answer);
		req->answer = NULL;
	}
	r = MHD_queue_response(req->conn, req->pending_status, req->pending);
	MHD_destroy_response(req->pending);
	req->pending = NULL;
	return r;
}

static int append_body(struct http_request *req, const char *data, size_t n)
{
	if (req->too_big || req->body.len + n > HTTP_MAX_BODY) {
		req->too_big = true;
		strbuf_release(&req->body);
		return 0;
	}
	return strbuf_add(&req->body, data, n);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct http_request *req = *con_cls;

	(void)version;
	if (!req) {
		const char *cl;
		struct conn_track *t = track_of(conn);

		if (t)
			wait_del(t); /* the head is in */
		req = calloc(1, sizeof *req);
		if (!req)
			return MHD_NO;
		req->srv = srv;
		req->conn = conn;
		strbuf_init(&req->body);
		req->method = strdup(method);
		req->path = strdup(url);
		*con_cls = req;
		if (!req->method || !req->path)
			return MHD_NO;
		if ((t && t->bad_target) || lengths_differ(conn)) {
			/* answered before a byte of a body is read: the connection
			 * is not to be read on */
			req->dispatched = true;
			http_request_add_header(req, "Connection", "close");
			respond_status(req, 400,
			               t && t->bad_target
			                   ? "the request target holds a control character "
			                     "(%00-%1F or %7F, escaped or not): not allowed in a "
			                     "path, an id or a query"
			                   : "two Content-Length headers with different values");
			return queue_pending(req);
		}
		cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		if (cl && strtoull(cl, NULL, 10) > 16ull * HTTP_MAX_BODY) {
			/* refuse before reading a byte of something that large; a
			 * body just over the limit is read and dropped instead, so the
			 * client is not cut off mid-upload and does see the 413 */
			req->dispatched = true;
			respond_status(req, 413, "request body too large: at most 4 MiB allowed");
			return queue_pending(req);
		}
		if (t && ((cl && strtoull(cl, NULL, 10) > 0) ||
		          MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding")))
			wait_add(t, &srv->bodies); /* a body follows: it has its deadline */
		return MHD_YES;
	}
	if (*upload_size) {
		if (append_body(req, upload, *upload_size) < 0)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (!req->dispatched) {
		struct conn_track *t = track_of(conn);

		if (t)
			wait_del(t); /* the body is in */
		req->dispatched = true;
		/* what the answers before it left to do is done before it starts */
		done_flush(srv);
		if (req->too_big)
			respond_status(req, 413, "request body too large: at most 4 MiB allowed");
		else
			dispatch(req);
	}
	if (req->pending)
		return queue_pending(req);
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct http_request *req = *con_cls;

	(void)cls;
	(void)toe;
	{
		struct conn_track *t = track_of(conn);

		if (t) /* kept alive: the next request's head is awaited */
			wait_add(t, &t->srv->heads);
	}
	if (!req)
		return;
	if (req->suspended)
		list_del(req);
	if (req->stream)
		req->stream->req = NULL;
	if (req->pending)
		MHD_destroy_response(req->pending);
	req->pending = NULL;
	*con_cls = NULL;
	req->conn = NULL;
	if (req->done_pending)
		req->completed = true; /* freed once its done callback has run */
	else
		request_free(req);
}

static void on_timer(uv_timer_t *t)
{
	drive(t->data);
}

static void drive(struct http_server *srv)
{
	MHD_UNSIGNED_LONG_LONG ms;

	srv->resumed = false;
	MHD_run(srv->daemon);
	if (srv->resumed)
		uv_timer_start(&srv->timer, on_timer, 0, 0);
	else if (MHD_get_timeout(srv->daemon, &ms) == MHD_YES)
		uv_timer_start(&srv->timer, on_timer, ms, 0);
	else
		uv_timer_stop(&srv->timer);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	(void)status;
	(void)events;
	drive(p->data);
}

static int resolve(const char *host, int port, struct sockaddr_storage *ss, struct weir_error *err)
{
	struct addrinfo hints = {0}, *res = NULL;
	char portstr[16];
	int rc;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(portstr, sizeof portstr, "%d", port);
	rc = getaddrinfo(host && *host ? host : NULL, portstr, &hints, &res);
	if (rc != 0 || !res)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "listen address %s: cannot resolve: %s (expected an IP "
		                      "address or a host name)",
		                      host, gai_strerror(rc));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

unsigned long http_raise_nofile_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	/* capped: the tasks inherit it, and a program that closes every
	 * possible descriptor before an exec walks the whole range */
	rlim_t want = rl.rlim_max < NOFILE_CAP ? rl.rlim_max : NOFILE_CAP;
	if (rl.rlim_cur < want) {
		struct rlimit up = {want, rl.rlim_max};
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl.rlim_cur = want;
	}
	return rl.rlim_cur == RLIM_INFINITY ? 1ul << 20 : (unsigned long)rl.rlim_cur;
}

/* The connection limit for the soft RLIMIT_NOFILE now in force: a quarter
 * of the files (at least FD_RESERVE_MIN) kept for the server's own. */
static unsigned connection_limit(void)
{
	struct rlimit rl;
	unsigned long n = 1024, reserve;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		n = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1ul << 20)
		        ? 1ul << 20
		        : (unsigned long)rl.rlim_cur;
	reserve = n / 4 > FD_RESERVE_MIN ? n / 4 : FD_RESERVE_MIN;
	return n > reserve + 64 ? (unsigned)(n - reserve) : 64u;
}

unsigned http_server_connection_limit(const struct http_server *srv)
{
	return srv->conn_limit;
}

struct http_server *http_server_create(uv_loop_t *loop, const char *host, int port,
                                       http_handler_fn handler, void *arg, struct weir_error *err)
{
	return http_server_create_with(loop, host, port, NULL, NULL, handler, arg, err);
}

static void free_tls(struct http_server *srv)
{
	free(srv->tls_cert);
	if (srv->tls_key) {
		explicit_bzero(srv->tls_key, strlen(srv->tls_key));
		free(srv->tls_key);
	}
	srv->tls_cert = srv->tls_key = NULL;
}

struct http_server *http_server_create_with(uv_loop_t *loop, const char *host, int port,
                                            const struct http_limits *limits,
                                            const struct http_tls_keys *tls,
                                            http_handler_fn handler, void *arg,
                                            struct weir_error *err)
{
	struct MHD_OptionItem tls_opts[3] = {{MHD_OPTION_END, 0, NULL}};
	struct http_limits lim = limits ? *limits : (struct http_limits){0};
	struct http_server *srv;
	struct sockaddr_storage ss;
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
	const union MHD_DaemonInfo *info;

	if (port < 0 || port > 65535) {
		weir_error_set(err, WEIR_E_INVALID, "listen port %d: expected 0..65535", port);
		return NULL;
	}
	memset(&ss, 0, sizeof ss);
	if (resolve(host, port, &ss, err) < 0 ||
	    dynlib_load(&mhd_lib, mhd_syms, DYNLIB_COUNT(mhd_syms), err) < 0)
		return NULL;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		weir_error_set(err, WEIR_E_INVALID,
		               "tls: this system's libmicrohttpd (%s) was built without TLS",
		               WEIR_SONAME_MHD);
		return NULL;
	}
	srv = calloc(1, sizeof *srv);
	if (!srv) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	srv->loop = loop;
	srv->handler = handler;
	srv->arg = arg;
	if (tls) {
		if (!(srv->tls_cert = strdup(tls->cert_pem)) ||
		    !(srv->tls_key = strdup(tls->key_pem))) {
			free_tls(srv);
			free(srv);
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			return NULL;
		}
		flags |= MHD_USE_TLS;
		tls_opts[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, srv->tls_cert};
		tls_opts[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls_key};
	}
	srv->tls = (flags & MHD_USE_TLS) != 0;
	if (!lim.header_timeout_s)
		lim.header_timeout_s = HTTP_DEFAULT_HEADER_TIMEOUT_S;
	if (!lim.idle_timeout_s)
		lim.idle_timeout_s = HTTP_DEFAULT_IDLE_TIMEOUT_S;
	if (!lim.max_pending_heads)
		lim.max_pending_heads = HTTP_DEFAULT_MAX_PENDING_HEADS;
	if (!lim.body_timeout_s)
		lim.body_timeout_s = HTTP_DEFAULT_BODY_TIMEOUT_S;
	srv->heads.timeout_ms = (uint64_t)lim.header_timeout_s * 1000;
	srv->bodies.timeout_ms = (uint64_t)lim.body_timeout_s * 1000;
	srv->conn_limit = connection_limit();
	srv->max_heads = lim.max_pending_heads < srv->conn_limit / 2 ? lim.max_pending_heads
	                                                             : srv->conn_limit / 2;
	/* the timers first: MHD's callbacks may start them */
	uv_timer_init(loop, &srv->timer);
	uv_timer_init(loop, &srv->wait_timer);
	uv_idle_init(loop, &srv->idle);
	srv->done_last = &srv->done_first;
	srv->timer.data = srv;
	srv->wait_timer.data = srv;
	srv->idle.data = srv;
	srv->daemon = MHD_start_daemon(
	    flags, (uint16_t)port, NULL, NULL, on_access, srv, MHD_OPTION_SOCK_ADDR,
	    (struct sockaddr *)&ss, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv, MHD_OPTION_URI_LOG_CALLBACK, on_uri,
	    srv, MHD_OPTION_CONNECTION_TIMEOUT, lim.idle_timeout_s, MHD_OPTION_CONNECTION_LIMIT,
	    srv->conn_limit, MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1, MHD_OPTION_ARRAY,
	    tls_opts, MHD_OPTION_END);
	if (!srv->daemon) {
		weir_error_set(err, WEIR_E_UNAVAILABLE,
		               "cannot listen on %s:%d (address in use or not local?%s)", host,
		               port, srv->tls ? " or libmicrohttpd refused the TLS keys" : "");
		goto close_handles;
	}
	info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_LISTEN_FD);
	if (info) {
		struct sockaddr_storage bound;
		socklen_t bl = sizeof bound;
		if (getsockname(info->listen_fd, (struct sockaddr *)&bound, &bl) == 0)
			srv->port = ntohs(bound.ss_family == AF_INET6
			                      ? ((struct sockaddr_in6 *)&bound)->sin6_port
			                      : ((struct sockaddr_in *)&bound)->sin_port);
	}
	info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info || uv_poll_init(loop, &srv->poll, info->epoll_fd) != 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "cannot watch the HTTP server's epoll fd");
		MHD_stop_daemon(srv->daemon);
		goto close_handles;
	}
	srv->poll.data = srv;
	uv_poll_start(&srv->poll, UV_READABLE, on_poll);
	drive(srv);
	return srv;
close_handles:
	srv->open_handles = 3;
	uv_close((uv_handle_t *)&srv->timer, free_on_close);
	uv_close((uv_handle_t *)&srv->wait_timer, free_on_close);
	uv_close((uv_handle_t *)&srv->idle, free_on_close);
	return NULL;
}

int http_server_port(const struct http_server *srv)
{
	return srv->port;
}

static void free_on_close(uv_handle_t *h)
{
	struct http_server *srv = h->data;
	/* libuv gives no order between the close callbacks */
	if (--srv->open_handles == 0) {
		free_tls(srv);
		free(srv);
	}
}

void http_server_destroy(struct http_server *srv)
{
	if (!srv)
		return;
	while (srv->suspended) {
		struct http_request *req = srv->suspended;
		if (req->stream) {
			req->aborting = true;
			do_resume(req);
		} else {
			http_request_respond_errorf(req, WEIR_E_UNAVAILABLE,
			                            "the server is stopping");
			if (req->suspended) /* answer failed: still resume it */
				do_resume(req);
		}
	}
	MHD_run(srv->daemon);
	done_flush(srv);
	MHD_stop_daemon(srv->daemon);
	srv->daemon = NULL;
	done_flush(srv);
	uv_poll_stop(&srv->poll);
	uv_timer_stop(&srv->timer);
	uv_timer_stop(&srv->wait_timer);
	srv->open_handles = 4;
	uv_close((uv_handle_t *)&srv->poll, free_on_close);
	uv_close((uv_handle_t *)&srv->timer, free_on_close);
	uv_close((uv_handle_t *)&srv->wait_timer, free_on_close);
	uv_close((uv_handle_t *)&srv->idle, free_on_close);
}
