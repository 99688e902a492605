/* reply.c: JSON answers, weir's errors and RFC 7807 problems (reply.h). */
#include "api/reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/request.h"

#define PROBLEM_BASE                                                                               \
	"https://airflow.apache.org/docs/apache-airflow/stable/stable-rest-api-ref.html"           \
	"#section/Errors/"

/* ---- weir's dialect ---- */

void reply_result(struct http_request *req, int status, json_t *body, const struct weir_error *err)
{
	if (body)
		http_request_respond_json(req, status, body);
	else
		http_request_respond_error(req, err);
}

void reply_status(struct http_request *req, int status, const char *msg)
{
	http_request_respond_json(req, status,
	                          json_pack("{s:s, s:i}", "error", msg, "status", status));
}

void reply_body_op(struct http_request *req, int status, reply_body_op_fn op, void *ctx)
{
	struct weir_error err = {0};
	json_t *body = request_json_object(req, &err);
	json_t *r = NULL;

	if (body)
		r = op(ctx, body, &err);
	json_decref(body);
	reply_result(req, status, r, &err);
}

void reply_no_method(struct http_request *req)
{
	char msg[256];

	snprintf(msg, sizeof msg, "%s %s: method not allowed", http_request_method(req),
	         http_request_path(req));
	reply_status(req, 405, msg);
}

void reply_no_route(struct http_request *req)
{
	char msg[512];

	snprintf(msg, sizeof msg, "%s %.300s: no such route (see docs/api.md)",
	         http_request_method(req), http_request_path(req));
	reply_status(req, 404, msg);
}

/* ---- a body held in memory ---- */

struct mem_body {
	char *text;
	size_t len;
};

static ssize_t mem_read(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct mem_body *m = arg;
	size_t n;

	if (pos >= m->len)
		return HTTP_STREAM_END;
	n = m->len - (size_t)pos;
	if (n > max)
		n = max;
	memcpy(buf, m->text + pos, n);
	return (ssize_t)n;
}

static void mem_free(void *arg)
{
	struct mem_body *m = arg;

	free(m->text);
	free(m);
}

void reply_text(struct http_request *req, int status, const char *content_type, char *text,
                size_t len)
{
	struct mem_body *m = calloc(1, sizeof *m);

	if (!m || !text) {
		free(m);
		free(text);
		http_request_respond_errorf(req, WEIR_E_INTERNAL, "out of memory");
		return;
	}
	m->text = text;
	m->len = len;
	http_request_respond_stream(req, status, content_type, mem_read, m, mem_free);
}

/* ---- problems ---- */

static const char *status_title(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 410:
		return "Gone";
	case 413:
		return "Payload Too Large";
	case 415:
		return "Unsupported Media Type";
	case 422:
		return "Unprocessable Entity";
	case 503:
		return "Service Unavailable";
	default:
		return "Internal Server Error";
	}
}

/* The sections of Airflow's API reference that its own problems point to. */
static const char *status_type(int status)
{
	switch (status) {
	case 400:
	case 413:
	case 415:
	case 422:
		return PROBLEM_BASE "BadRequest";
	case 401:
		return PROBLEM_BASE "Unauthenticated";
	case 403:
		return PROBLEM_BASE "PermissionDenied";
	case 404:
		return PROBLEM_BASE "NotFound";
	case 405:
		return PROBLEM_BASE "MethodNotAllowed";
	case 409:
		return PROBLEM_BASE "AlreadyExists";
	default:
		return PROBLEM_BASE "Unknown";
	}
}

void reply_problem(struct http_request *req, int status, const char *detail)
{
	json_t *o = json_pack("{s:s, s:s, s:i, s:s}", "type", status_type(status), "title",
	                      status_title(status), "status", status, "detail",
	                      detail && *detail ? detail : status_title(status));
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	reply_text(req, status, "application/problem+json", text, text ? strlen(text) : 0);
}

void reply_problemf(struct http_request *req, int status, const char *fmt, ...)
{
	char msg[WEIR_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	reply_problem(req, status, msg);
}

void reply_problem_error(struct http_request *req, const struct weir_error *err)
{
	enum weir_error_kind kind = err->kind == WEIR_OK ? WEIR_E_INTERNAL : err->kind;

	reply_problem(req, weir_error_http_status(kind),
	              err->msg[0] ? err->msg : "the operation failed without a reason");
}

void reply_problem_result(struct http_request *req, json_t *body, const struct weir_error *err)
{
	if (body)
		http_request_respond_json(req, 200, body);
	else
		reply_problem_error(req, err);
}

void reply_problem_no_method(struct http_request *req)
{
	reply_problemf(req, 405, "%s %.300s: method not allowed", http_request_method(req),
	               http_request_path(req));
}

void reply_problem_no_route(struct http_request *req)
{
	reply_problemf(req, 404, "%s %.300s: no such route (see docs/api.md)",
	               http_request_method(req), http_request_path(req));
}
