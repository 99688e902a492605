/* conn_routes.c: the connection and variable routes (conn_routes.h).
 *
 * An id from the path is checked against the ids' character set before any
 * op sees it; the page, order and update_mask parameters are read here and
 * handed on; the body is read as a JSON object (an unknown field is a 400)
 * and checked field by field by the server.
 */
#include "api/airflow/conn_routes.h"

#include <stdio.h>
#include <string.h>

#include "api/airflow/airflow_request.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"
#include "api/route_match.h"

#define MASK_MAX 16

static const char *const conn_fields[] = {"connection_id", "conn_type", "description", "host",
                                          "port",          "login",     "password",    "schema",
                                          "extra",         NULL};
static const char *const var_fields[] = {"key", "value", "description", NULL};

/* [A-Za-z0-9_.-]{1,250}: the ids of connections and the keys of variables. */
static bool id_ok(struct http_request *req, const char *what, const char *id)
{
	size_t n = strlen(id);

	if (n >= 1 && n <= 250 &&
	    strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n)
		return true;
	reply_problemf(req, 400, "%s \"%.60s\": expected 1 to 250 characters of A-Z a-z 0-9 _ . -",
	               what, id);
	return false;
}

static void list(struct http_request *req, void *ctx,
                 json_t *(*op)(void *, const struct secrets_list_query *, struct weir_error *))
{
	static const char *const allowed[] = {"limit", "offset", "order_by", NULL};
	struct secrets_list_query q = {0};
	struct weir_error err = {0};

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &q.limit, &q.offset))
		return;
	q.order_by = http_request_query(req, "order_by");
	reply_problem_result(req, op(ctx, &q, &err), &err);
}

/* ?update_mask=a,b into fields (pointing into buf); each must be one of
 * `known`.  false after answering 400. */
static bool read_mask(struct http_request *req, const char *const *known, char *buf, size_t size,
                      const char **fields, struct secrets_mask *mask)
{
	const char *m = http_request_query(req, "update_mask");
	char *save = NULL;

	mask->fields = fields;
	mask->n = 0;
	if (!m)
		return true;
	if (strlen(m) >= size) {
		reply_problem(req, 400, "update_mask: too long");
		return false;
	}
	snprintf(buf, size, "%s", m);
	for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		bool ok = false;
		while (*f == ' ')
			f++;
		size_t n = strlen(f);
		while (n && f[n - 1] == ' ')
			f[--n] = '\0';
		for (size_t i = 0; known[i] && !ok; i++)
			ok = !strcmp(known[i], f);
		if (!ok || mask->n == MASK_MAX) {
			reply_problemf(req, 400,
			               "update_mask: \"%.60s\" is unknown or cannot be "
			               "updated",
			               f);
			return false;
		}
		fields[mask->n++] = f;
	}
	return true;
}

/* The connection's id or variable's key of the path: a connection named
 * "test" is read, changed and deleted through the row of POST
 * /connections/test, which names no {connection_id}. */
static const char *path_id(const struct route_match *m, bool conn)
{
	const char *id = route_match_param(m, conn ? "connection_id" : "variable_key");

	return id ? id : "test";
}

static void get_one(const struct route_ctx *rc, struct http_request *req,
                    const struct route_match *m, bool conn)
{
	const struct secrets_api_ops *ops = rc->secrets_ops;
	void *ctx = rc->secrets_ctx;
	const char *id = path_id(m, conn);
	struct weir_error err = {0};

	if (!id_ok(req, conn ? "connection_id" : "variable_key", id))
		return;
	reply_problem_result(
	    req, conn ? ops->get_connection(ctx, id, &err) : ops->get_variable(ctx, id, &err),
	    &err);
}

static void delete_one(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m, bool conn)
{
	const struct secrets_api_ops *ops = rc->secrets_ops;
	void *ctx = rc->secrets_ctx;
	const char *id = path_id(m, conn);
	struct weir_error err = {0};
	int r;

	if (!id_ok(req, conn ? "connection_id" : "variable_key", id))
		return;
	r = conn ? ops->delete_connection(ctx, id, &err) : ops->delete_variable(ctx, id, &err);
	if (r < 0)
		reply_problem_error(req, &err);
	else
		http_request_respond_static(req, 204, "application/json", "", 0);
}

static void patch_one(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m, bool conn)
{
	/* the id is not among what a mask may name (Airflow: it cannot change) */
	static const char *const conn_mask[] = {"conn_type", "description", "host",
	                                        "port",      "login",       "password",
	                                        "schema",    "extra",       NULL};
	static const char *const var_mask[] = {"value", "description", NULL};
	const struct secrets_api_ops *ops = rc->secrets_ops;
	void *ctx = rc->secrets_ctx;
	const char *id = path_id(m, conn);
	struct weir_error err = {0};
	const char *fields[MASK_MAX];
	struct secrets_mask mask;
	char buf[512];
	json_t *body;

	if (!id_ok(req, conn ? "connection_id" : "variable_key", id))
		return;
	if (!read_mask(req, conn ? conn_mask : var_mask, buf, sizeof buf, fields, &mask) ||
	    !(body = airflow_read_body(req, conn ? conn_fields : var_fields)))
		return;
	reply_problem_result(req,
	                     conn ? ops->patch_connection(ctx, id, body, &mask, &err)
	                          : ops->patch_variable(ctx, id, body, &mask, &err),
	                     &err);
	json_decref(body);
}

static void post(const struct route_ctx *rc, struct http_request *req, bool conn)
{
	const struct secrets_api_ops *ops = rc->secrets_ops;
	void *ctx = rc->secrets_ctx;
	struct weir_error err = {0};
	json_t *body;

	if (!(body = airflow_read_body(req, conn ? conn_fields : var_fields)))
		return;
	reply_problem_result(
	    req, conn ? ops->add_connection(ctx, body, &err) : ops->set_variable(ctx, body, &err),
	    &err);
	json_decref(body);
}

/* ---- the operations (api/route_table.c's rows) ---- */

void airflow_get_connections(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m)
{
	(void)m;
	list(req, rc->secrets_ctx, rc->secrets_ops->list_connections);
}

void airflow_post_connection(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m)
{
	(void)m;
	post(rc, req, true);
}

void airflow_test_connection(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m)
{
	json_t *body;

	(void)m;
	if (!(body = airflow_read_body(req, conn_fields)))
		return;
	conn_test_route_handle(rc->conn_tests, rc->secrets_ops, rc->secrets_ctx, req, body);
	json_decref(body);
}

void airflow_get_connection(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m)
{
	get_one(rc, req, m, true);
}

void airflow_patch_connection(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m)
{
	patch_one(rc, req, m, true);
}

void airflow_delete_connection(const struct route_ctx *rc, struct http_request *req,
                               const struct route_match *m)
{
	delete_one(rc, req, m, true);
}

void airflow_get_variables(const struct route_ctx *rc, struct http_request *req,
                           const struct route_match *m)
{
	(void)m;
	list(req, rc->secrets_ctx, rc->secrets_ops->list_variables);
}

void airflow_post_variables(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m)
{
	(void)m;
	post(rc, req, false);
}

void airflow_get_variable(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m)
{
	get_one(rc, req, m, false);
}

void airflow_patch_variable(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m)
{
	patch_one(rc, req, m, false);
}

void airflow_delete_variable(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m)
{
	delete_one(rc, req, m, false);
}
