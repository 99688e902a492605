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

static void route_one(const struct secrets_api_ops *ops, void *ctx, struct http_request *req,
                      bool conn, const char *id)
{
	struct weir_error err = {0};
	json_t *body;

	if (!id_ok(req, conn ? "connection_id" : "variable_key", id))
		return;
	if (request_method_is(req, "GET")) {
		reply_problem_result(req,
		                     conn ? ops->get_connection(ctx, id, &err)
		                          : ops->get_variable(ctx, id, &err),
		                     &err);
	} else if (request_method_is(req, "DELETE")) {
		int rc = conn ? ops->delete_connection(ctx, id, &err)
		              : ops->delete_variable(ctx, id, &err);
		if (rc < 0)
			reply_problem_error(req, &err);
		else
			http_request_respond_static(req, 204, "application/json", "", 0);
	} else if (request_method_is(req, "PATCH")) {
		/* the id is not among what a mask may name (Airflow: it cannot change) */
		static const char *const conn_mask[] = {"conn_type", "description", "host",
		                                        "port",      "login",       "password",
		                                        "schema",    "extra",       NULL};
		static const char *const var_mask[] = {"value", "description", NULL};
		const char *fields[MASK_MAX];
		struct secrets_mask mask;
		char buf[512];
		if (!read_mask(req, conn ? conn_mask : var_mask, buf, sizeof buf, fields, &mask) ||
		    !(body = airflow_read_body(req, conn ? conn_fields : var_fields)))
			return;
		reply_problem_result(req,
		                     conn ? ops->patch_connection(ctx, id, body, &mask, &err)
		                          : ops->patch_variable(ctx, id, body, &mask, &err),
		                     &err);
		json_decref(body);
	} else {
		reply_problem_no_method(req);
	}
}

void conn_routes_handle(const struct secrets_api_ops *ops, void *ctx, struct conn_tests *tests,
                        struct http_request *req, char **seg, int n)
{
	bool conn = !strcmp(seg[0], "connections");
	struct weir_error err = {0};
	json_t *body;

	if (!ops) {
		reply_problem(req, 503, "this server keeps no connections or variables");
		return;
	}
	if (n == 1) {
		if (request_method_is(req, "GET")) {
			list(req, ctx, conn ? ops->list_connections : ops->list_variables);
		} else if (request_method_is(req, "POST")) {
			if (!(body = airflow_read_body(req, conn ? conn_fields : var_fields)))
				return;
			reply_problem_result(req,
			                     conn ? ops->add_connection(ctx, body, &err)
			                          : ops->set_variable(ctx, body, &err),
			                     &err);
			json_decref(body);
		} else {
			reply_problem_no_method(req);
		}
		return;
	}
	/* POST /connections/test; a connection named "test" is still read,
	 * changed and deleted by the other methods, as in Airflow */
	if (n == 2 && conn && !strcmp(seg[1], "test") && request_method_is(req, "POST")) {
		if (!(body = airflow_read_body(req, conn_fields)))
			return;
		conn_test_route_handle(tests, ops, ctx, req, body);
		json_decref(body);
		return;
	}
	if (n == 2) {
		route_one(ops, ctx, req, conn, seg[1]);
		return;
	}
	reply_problem_no_route(req);
}
