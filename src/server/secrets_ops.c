/* secrets_ops.c: the connection and variable routes' ops (secrets_ops.h):
 * Airflow's Connection and Variable shapes, paging and order, writes to
 * the store.
 */
#include "server/secrets_ops.h"

#include <stdlib.h>
#include <string.h>

#include "data/conn_test.h"
#include "lib/log.h"
#include "lib/str.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* The extra as Airflow's API shows it: its JSON text, secret-like fields
 * as "***"; null when none. */
static json_t *extra_view(const struct connection *c)
{
	char *text = connection_extra_masked(c);
	json_t *v = text ? json_string(text) : json_null();

	free(text);
	return v;
}

/* A Connection (full: with extra) or a ConnectionCollectionItem.  Never the
 * password: Airflow's schema has it write-only. */
static json_t *conn_view(const struct connection *c, enum secret_source src, bool full)
{
	json_t *o = json_pack(
	    "{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:s}", "connection_id", c->id, "conn_type",
	    c->type, "description", str_or_null(c->description), "host", str_or_null(c->host),
	    "login", str_or_null(c->login), "schema", str_or_null(c->schema), "port",
	    c->port ? json_integer(c->port) : json_null(), "source", secret_source_name(src));
	if (o && full)
		json_object_set_new(o, "extra", extra_view(c));
	return o;
}

/* A Variable; a secret one's value as "***" (variable_is_secret(), as
 * Airflow 3's API answers). */
static json_t *var_view(const struct variable *v, enum secret_source src)
{
	const char *value = variable_is_secret(v->key) ? "***" : v->value;

	return json_pack("{s:s, s:s, s:o, s:s}", "key", v->key, "value", value, "description",
	                 str_or_null(v->description), "source", secret_source_name(src));
}

/* ---- order and pages ---- */

struct order {
	const char *field;
	bool desc;
};

static int read_order(const char *order_by, const char *const *fields, struct order *o,
                      struct weir_error *err)
{
	const char *f = order_by;

	o->desc = false;
	o->field = fields[0];
	if (!f || !*f)
		return 0;
	if (*f == '-') {
		o->desc = true;
		f++;
	}
	if (!strcmp(f, "id"))
		return 0; /* Airflow's row id: the order they were made in reads as the id's */
	for (size_t i = 0; fields[i]; i++)
		if (!strcmp(fields[i], f)) {
			o->field = fields[i];
			return 0;
		}
	return weir_error_set(err, WEIR_E_INVALID,
	                      "order_by \"%.60s\": expected one of %s, %s, ... (a '-' before it "
	                      "for descending)",
	                      order_by, fields[0], fields[1]);
}

/* Compares two JSON views by a field: null first, numbers as numbers. */
static int cmp_field(json_t *a, json_t *b, const char *field)
{
	json_t *x = json_object_get(a, field), *y = json_object_get(b, field);

	if (json_is_null(x) || !x)
		return json_is_null(y) || !y ? 0 : -1;
	if (json_is_null(y) || !y)
		return 1;
	if (json_is_integer(x) && json_is_integer(y))
		return json_integer_value(x) < json_integer_value(y)   ? -1
		       : json_integer_value(x) > json_integer_value(y) ? 1
		                                                       : 0;
	return strcmp(json_string_value(x) ? json_string_value(x) : "",
	              json_string_value(y) ? json_string_value(y) : "");
}

static const struct order *sort_order;
static const char *sort_tie;

static int cmp_views(const void *pa, const void *pb)
{
	json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
	int c = cmp_field(a, b, sort_order->field);

	if (!c)
		c = cmp_field(a, b, sort_tie);
	return sort_order->desc ? -c : c;
}

/* {"<name>": views[offset, offset + limit) in order, "total_entries": n};
 * steals the views. */
static json_t *page(json_t **views, size_t n, const struct secrets_list_query *q,
                    const struct order *o, const char *tie, const char *name)
{
	json_t *arr = json_array();
	size_t from = q->offset > 0 ? (size_t)q->offset : 0;
	size_t limit = q->limit > 0 ? (size_t)q->limit : 100;

	sort_order = o;
	sort_tie = tie;
	if (n > 1)
		qsort(views, n, sizeof *views, cmp_views);
	for (size_t i = 0; i < n; i++) {
		if (arr && i >= from && i - from < limit)
			json_array_append(arr, views[i]);
		json_decref(views[i]);
	}
	return arr ? json_pack("{s:o, s:I}", name, arr, "total_entries", (json_int_t)n) : NULL;
}

/* ---- connections ---- */

static json_t *op_list_connections(void *ctx, const struct secrets_list_query *q,
                                   struct weir_error *err)
{
	static const char *const fields[] = {"connection_id", "conn_type", "description", "host",
	                                     "port",          "login",     "schema",      NULL};
	struct secret_conn *rows;
	struct order o;
	json_t **views, *r;
	size_t n;

	if (read_order(q->order_by, fields, &o, err) < 0 ||
	    secrets_conn_list(ctx, &rows, &n, err) < 0)
		return NULL;
	views = calloc(n + 1, sizeof *views);
	for (size_t i = 0; views && i < n; i++)
		views[i] = conn_view(&rows[i].c, rows[i].source, false);
	secret_conn_list_free(rows, n);
	if (!views) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	r = page(views, n, q, &o, "connection_id", "connections");
	free(views);
	return r;
}

static json_t *op_get_connection(void *ctx, const char *id, struct weir_error *err)
{
	struct connection c;
	enum secret_source src;
	json_t *r;

	if (secrets_conn_resolve(ctx, id, &c, &src, err) < 0)
		return NULL;
	r = conn_view(&c, src, true);
	connection_release(&c);
	return r;
}

static json_t *op_add_connection(void *ctx, json_t *body, struct weir_error *err)
{
	const char *id = json_string_value(json_object_get(body, "connection_id"));
	struct connection c;
	json_t *r;

	if (!id)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "connection_id: expected a string (it "
		                      "is required)"),
		       NULL;
	if (connection_from_json(id, body, &c, err) < 0)
		return NULL;
	if (secrets_store_conn_add(secrets_store_of(ctx), &c, err) < 0) {
		if (err && err->kind == WEIR_E_CONFLICT)
			weir_error_set(err, WEIR_E_CONFLICT, "Connection already exist. ID: %s",
			               id);
		connection_release(&c);
		return NULL;
	}
	r = conn_view(&c, SECRET_STORE, true);
	connection_release(&c);
	return r;
}

/* A 404 for a write to an id the store lacks, saying where it is instead. */
static void not_in_store(struct secrets *s, const char *what, const char *id, bool conn,
                         struct weir_error *err)
{
	enum secret_source src = 0;
	struct weir_error e2 = {0};

	if (conn) {
		struct connection c;
		if (secrets_conn_resolve(s, id, &c, &src, &e2) == 0)
			connection_release(&c);
	} else {
		struct variable v;
		if (secrets_var_resolve(s, id, &v, &src, &e2) == 0)
			variable_release(&v);
	}
	if (src && src != SECRET_STORE)
		weir_error_set(err, WEIR_E_NOT_FOUND,
		               "%s \"%s\" is not in the store: it comes from the server's %s; "
		               "change it there",
		               what, id, secret_source_name(src));
	else
		weir_error_set(err, WEIR_E_NOT_FOUND, "%s \"%s\" not found", what, id);
}

/* The body's fields that update_mask names (all of them when none); a
 * field named but not given is a 400. */
static json_t *masked_body(json_t *body, const struct secrets_mask *mask, struct weir_error *err)
{
	json_t *out;

	if (!mask || mask->n == 0)
		return json_incref(body);
	out = json_object();
	for (size_t i = 0; out && i < mask->n; i++) {
		json_t *v = json_object_get(body, mask->fields[i]);
		if (!v) {
			json_decref(out);
			weir_error_set(err, WEIR_E_INVALID,
			               "update_mask names \"%s\" but the body has no such field",
			               mask->fields[i]);
			return NULL;
		}
		json_object_set(out, mask->fields[i], v);
	}
	return out;
}

static bool same_id(json_t *body, const char *field, const char *id, struct weir_error *err)
{
	json_t *v = json_object_get(body, field);

	if (!v || (json_is_string(v) && !strcmp(json_string_value(v), id)))
		return true;
	weir_error_set(err, WEIR_E_INVALID,
	               "%s: the body's (%s) is not the path's (%s); it "
	               "cannot be updated",
	               field, json_is_string(v) ? json_string_value(v) : "not a string", id);
	return false;
}

static json_t *op_patch_connection(void *ctx, const char *id, json_t *body,
                                   const struct secrets_mask *mask, struct weir_error *err)
{
	struct connection c;
	json_t *fields, *r = NULL;

	if (!same_id(body, "connection_id", id, err))
		return NULL;
	if (secrets_store_conn_get(secrets_store_of(ctx), id, &c, err) < 0) {
		if (err && err->kind == WEIR_E_NOT_FOUND)
			not_in_store(ctx, "connection", id, true, err);
		return NULL;
	}
	if (!(fields = masked_body(body, mask, err)))
		goto out;
	if (connection_apply_json(&c, fields, err) < 0 ||
	    secrets_store_conn_update(secrets_store_of(ctx), &c, err) < 0)
		goto out;
	r = conn_view(&c, SECRET_STORE, true);
out:
	json_decref(fields);
	connection_release(&c);
	return r;
}

static int op_delete_connection(void *ctx, const char *id, struct weir_error *err)
{
	if (secrets_store_conn_delete(secrets_store_of(ctx), id, err) == 0)
		return 0;
	if (err && err->kind == WEIR_E_NOT_FOUND)
		not_in_store(ctx, "connection", id, true, err);
	return -1;
}

/* ---- variables ---- */

static json_t *op_list_variables(void *ctx, const struct secrets_list_query *q,
                                 struct weir_error *err)
{
	static const char *const fields[] = {"key", "description", "value", NULL};
	struct secret_var *rows;
	struct order o;
	json_t **views, *r;
	size_t n;

	if (read_order(q->order_by, fields, &o, err) < 0 ||
	    secrets_var_list(ctx, &rows, &n, err) < 0)
		return NULL;
	views = calloc(n + 1, sizeof *views);
	for (size_t i = 0; views && i < n; i++)
		views[i] = var_view(&rows[i].v, rows[i].source);
	secret_var_list_free(rows, n);
	if (!views) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	r = page(views, n, q, &o, "key", "variables");
	free(views);
	return r;
}

static json_t *op_get_variable(void *ctx, const char *key, struct weir_error *err)
{
	struct variable v;
	enum secret_source src;
	json_t *r;

	if (secrets_var_resolve(ctx, key, &v, &src, err) < 0)
		return NULL;
	r = var_view(&v, src);
	variable_release(&v);
	return r;
}

/* value: a string (Airflow's schema); description: a string or null. */
static int read_var_fields(json_t *body, struct variable *v, struct weir_error *err)
{
	json_t *val = json_object_get(body, "value"), *d = json_object_get(body, "description");

	if (val && !json_is_string(val))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "value: expected a string (a JSON value goes as its text)");
	if (d && !json_is_string(d) && !json_is_null(d))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "description: expected a string or null");
	if (val && str_set(&v->value, json_string_value(val)) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (d && str_set(&v->description, json_string_value(d)) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return 0;
}

static json_t *op_set_variable(void *ctx, json_t *body, struct weir_error *err)
{
	const char *key = json_string_value(json_object_get(body, "key"));
	struct variable v = {0};
	json_t *r = NULL;

	if (!key)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "key: expected a string (it is required)"),
		       NULL;
	if (!json_is_string(json_object_get(body, "value")))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "value: expected a string (it is required; a JSON value "
		                      "goes as its text)"),
		       NULL;
	if (variable_check_key(key, err) < 0)
		return NULL;
	if (str_set(&v.key, key) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (read_var_fields(body, &v, err) < 0 || secrets_var_set(ctx, &v, err) < 0)
		goto out;
	r = var_view(&v, SECRET_STORE);
out:
	variable_release(&v);
	return r;
}

static json_t *op_patch_variable(void *ctx, const char *key, json_t *body,
                                 const struct secrets_mask *mask, struct weir_error *err)
{
	struct variable v;
	json_t *fields, *r = NULL;

	if (!same_id(body, "key", key, err))
		return NULL;
	if (secrets_store_var_get(secrets_store_of(ctx), key, &v, err) < 0) {
		if (err && err->kind == WEIR_E_NOT_FOUND)
			not_in_store(ctx, "variable", key, false, err);
		return NULL;
	}
	if (!(fields = masked_body(body, mask, err)))
		goto out;
	if (read_var_fields(fields, &v, err) < 0 || secrets_var_set(ctx, &v, err) < 0)
		goto out;
	r = var_view(&v, SECRET_STORE);
out:
	json_decref(fields);
	variable_release(&v);
	return r;
}

static int op_delete_variable(void *ctx, const char *key, struct weir_error *err)
{
	if (secrets_var_delete(ctx, key, err) == 0)
		return 0;
	if (err && err->kind == WEIR_E_NOT_FOUND)
		not_in_store(ctx, "variable", key, false, err);
	return -1;
}

/* A connection test on its way through libuv's thread pool. */
struct conn_test_work {
	uv_work_t work;
	struct connection c;
	bool ok;
	char *message;
	secrets_test_done_fn done;
	void *arg;
};

static void test_run(uv_work_t *w)
{
	struct conn_test_work *t = w->data;

	t->ok = data_conn_test(&t->c, DATA_CONN_TEST_TIMEOUT_MS, &t->message);
}

static void test_after(uv_work_t *w, int status)
{
	struct conn_test_work *t = w->data;

	(void)status; /* never cancelled */
	log_info("connection %s (%s) tested: %s", t->c.id, t->c.type ? t->c.type : "?",
	         t->ok ? "reachable" : "failed");
	t->done(t->arg, t->ok, t->message ? t->message : "out of memory");
	connection_release(&t->c);
	free(t->message);
	free(t);
}

/* The connection a test body names: the fields as given (Airflow's
 * Connection, the password included: it may not be stored), or, when it
 * holds connection_id alone, the connection by that id from wherever it
 * resolves. */
static int test_body_conn(struct secrets *s, json_t *body, struct connection *out,
                          struct weir_error *err)
{
	const char *id = json_string_value(json_object_get(body, "connection_id"));

	if (!id)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "connection_id: expected a string (it "
		                      "is required)");
	if (connection_check_id(id, err) < 0) {
		weir_error_prefix(err, "connection_id");
		return -1;
	}
	if (json_object_size(body) == 1)
		return secrets_conn_resolve(s, id, out, NULL, err);
	if (!json_object_get(body, "conn_type"))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "conn_type: expected a string (it is required, unless "
		                      "connection_id stands alone to test the connection by id)");
	return connection_from_json(id, body, out, err);
}

static int op_test_connection(void *ctx, uv_loop_t *loop, json_t *body, secrets_test_done_fn done,
                              void *arg, struct weir_error *err)
{
	struct conn_test_work *t = calloc(1, sizeof *t);

	if (!t)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (test_body_conn(ctx, body, &t->c, err) < 0) {
		free(t);
		return -1;
	}
	t->done = done;
	t->arg = arg;
	t->work.data = t;
	if (uv_queue_work(loop, &t->work, test_run, test_after) < 0) {
		connection_release(&t->c);
		free(t);
		return weir_error_set(err, WEIR_E_INTERNAL, "cannot queue the connection test");
	}
	return 0;
}

static const struct secrets_api_ops ops = {
    .list_connections = op_list_connections,
    .get_connection = op_get_connection,
    .add_connection = op_add_connection,
    .patch_connection = op_patch_connection,
    .delete_connection = op_delete_connection,
    .test_connection = op_test_connection,
    .list_variables = op_list_variables,
    .get_variable = op_get_variable,
    .set_variable = op_set_variable,
    .patch_variable = op_patch_variable,
    .delete_variable = op_delete_variable,
};

const struct secrets_api_ops *secrets_api_ops(void)
{
	return &ops;
}
