/* conn_test_route.c: POST /connections/test, suspended while the test
 * runs (conn_test_route.h). */
#include "api/airflow/conn_test_route.h"

#include <stdlib.h>

#include <jansson.h>

#include "api/reply.h"

/* A suspended request waiting for its test; req NULL once the server has
 * stopped (the test's end then only frees it). */
struct pending {
	struct http_request *req;
	struct conn_tests *owner;
	struct pending *prev, *next;
};

struct conn_tests {
	uv_loop_t *loop;
	struct pending *list;
};

struct conn_tests *conn_tests_create(uv_loop_t *loop)
{
	struct conn_tests *t = calloc(1, sizeof *t);

	if (t)
		t->loop = loop;
	return t;
}

static void unlink_pending(struct pending *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else if (p->owner)
		p->owner->list = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->prev = p->next = NULL;
	p->owner = NULL;
}

void conn_tests_destroy(struct conn_tests *t)
{
	if (!t)
		return;
	while (t->list) {
		struct pending *p = t->list;
		reply_problem(p->req, 503, "the server is stopping");
		unlink_pending(p);
		p->req = NULL;
	}
	free(t);
}

static void on_test_done(void *arg, bool ok, const char *message)
{
	struct pending *p = arg;

	if (p->req) {
		json_t *body = json_pack("{s:b, s:s}", "status", ok, "message", message);
		http_request_respond_json(p->req, 200, body);
		unlink_pending(p);
	}
	free(p);
}

void conn_test_route_handle(struct conn_tests *t, const struct secrets_api_ops *ops, void *ctx,
                            struct http_request *req, json_t *body)
{
	struct weir_error err = {0};
	struct pending *p;

	if (!t || !ops->test_connection) {
		reply_problem(req, 501, "connection tests are not offered here");
		return;
	}
	if (!(p = calloc(1, sizeof *p))) {
		reply_problem(req, 500, "out of memory");
		return;
	}
	if (ops->test_connection(ctx, t->loop, body, on_test_done, p, &err) < 0) {
		free(p);
		reply_problem_error(req, &err);
		return;
	}
	p->req = req;
	p->owner = t;
	p->next = t->list;
	if (t->list)
		t->list->prev = p;
	t->list = p;
	http_request_suspend(req);
}
