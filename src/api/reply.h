/* reply.h: the API's answers in its two dialects.
 *
 * weir's own routes (/api/v1/jobs, /api/v1/launch, docs/api.md) answer
 * errors as {"error": MESSAGE, "status": N} in application/json; the
 * workflow and UI routes answer them as RFC 7807 problems
 * (application/problem+json, {"type","title","status","detail"}, the type
 * pointing into Airflow's API reference).  Every route answers through
 * these, so one status has one shape per dialect.
 */
#ifndef WEIR_API_REPLY_H
#define WEIR_API_REPLY_H

#include <stddef.h>

#include <jansson.h>

#include "api/http.h"
#include "lib/error.h"

/* weir's dialect. */
/* `body` (stolen) with `status`, or the error when body is NULL. */
void reply_result(struct http_request *req, int status, json_t *body, const struct weir_error *err);
/* {"error": msg, "status": status}. */
void reply_status(struct http_request *req, int status, const char *msg);
/* 405 "METHOD PATH: method not allowed". */
void reply_no_method(struct http_request *req);
/* 404 "METHOD PATH: no such route (see docs/api.md)". */
void reply_no_route(struct http_request *req);

/* Reads the body as a JSON object (api/request.h), hands it to `op` and
 * answers `status` with what op returns, or the error. */
typedef json_t *(*reply_body_op_fn)(void *ctx, json_t *body, struct weir_error *err);
void reply_body_op(struct http_request *req, int status, reply_body_op_fn op, void *ctx);

/* The problem dialect. */
void reply_problem(struct http_request *req, int status, const char *detail);
void reply_problemf(struct http_request *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A filled weir_error as a problem (status from weir_error_http_status). */
void reply_problem_error(struct http_request *req, const struct weir_error *err);
/* `body` (stolen) with 200, or the error as a problem when body is NULL. */
void reply_problem_result(struct http_request *req, json_t *body, const struct weir_error *err);
void reply_problem_no_method(struct http_request *req);
void reply_problem_no_route(struct http_request *req);

/* `text` (ownership taken, may be NULL: out of memory, answered 500) as the
 * body with `content_type`: api/http sets application/json on every other
 * kind of answer. */
void reply_text(struct http_request *req, int status, const char *content_type, char *text,
                size_t len);

#endif
