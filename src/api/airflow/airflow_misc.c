/* airflow_misc.c: the routes of Airflow's stable REST API v1 outside
 * /dags (airflow_misc.h): pools, DAG statistics and sources, a file's
 * re-parse, the version, the configuration, DAG warnings, plugins and
 * providers.
 */
#include "api/airflow/airflow_misc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/base64.h>

#include "api/airflow/airflow_request.h"
#include "api/dag_gate.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"
#include "api/route_match.h"

/* ---- file tokens: base64url of the DAG's id (dag_views.c writes them), so
 * that no path is ever given or taken ---- */

/* The DAG id a token names, into buf; false when it names none. */
static bool token_dag_id(const char *token, char *buf, size_t size)
{
	struct base64_decode_ctx c;
	char padded[4 * AIRFLOW_ID_MAX];
	size_t len = strlen(token), n = size - 1;

	if (len == 0 || len + 3 >= sizeof padded || BASE64_DECODE_LENGTH(len + 3) >= size)
		return false;
	memcpy(padded, token, len);
	while (len % 4)
		padded[len++] = '=';
	base64url_decode_init(&c);
	if (!base64_decode_update(&c, &n, (uint8_t *)buf, len, padded) || !base64_decode_final(&c))
		return false;
	buf[n] = '\0';
	return strlen(buf) == n && airflow_id_ok(buf);
}

static bool route_token(struct http_request *req, const char *token, char *dag_id, size_t size)
{
	if (token_dag_id(token, dag_id, size))
		return true;
	reply_problemf(req, 404, "file_token \"%.60s\": names no DAG file", token);
	return false;
}

/* ---- pools ---- */

/* A Pool body: name (string), slots (integer >= -1), description (string
 * or null), include_deferred (false: weir defers nothing). */
static bool pool_body_ok(struct http_request *req, json_t *body, bool need_all)
{
	json_t *v;

	if ((v = json_object_get(body, "name")) &&
	    (!json_is_string(v) || !airflow_id_ok(json_string_value(v)))) {
		reply_problemf(req, 400,
		               "name: expected 1 to %d characters of A-Z a-z 0-9 _ . : + -",
		               AIRFLOW_ID_MAX);
		return false;
	}
	if ((v = json_object_get(body, "slots")) &&
	    (!json_is_integer(v) || json_integer_value(v) < -1 ||
	     json_integer_value(v) > 1000000000)) {
		reply_problem(req, 400, "slots: expected a whole number >= 0 (-1: unlimited)");
		return false;
	}
	if ((v = json_object_get(body, "description")) && !json_is_string(v) && !json_is_null(v)) {
		reply_problem(req, 400, "description: expected a string or null");
		return false;
	}
	if ((v = json_object_get(body, "include_deferred")) && !json_is_boolean(v)) {
		reply_problem(req, 400, "include_deferred: expected true or false");
		return false;
	}
	if (json_is_true(v)) {
		reply_problem(req, 400,
		              "include_deferred: weir has no deferred tasks (expected false)");
		return false;
	}
	if (need_all && (!json_object_get(body, "name") || !json_object_get(body, "slots"))) {
		reply_problem(req, 400, "name, slots: required");
		return false;
	}
	return true;
}

static const char *const pool_fields[] = {"name", "slots", "description", "include_deferred", NULL};
/* read-only fields Airflow lets a client send back (GET, change, PATCH) */
static const char *const pool_body_fields[] = {"name",
                                               "slots",
                                               "description",
                                               "include_deferred",
                                               "occupied_slots",
                                               "running_slots",
                                               "queued_slots",
                                               "open_slots",
                                               "scheduled_slots",
                                               "deferred_slots",
                                               NULL};

/* PATCH: with update_mask only those fields (each must be writable), else
 * every writable field the body holds. */
static json_t *pool_patch_fields(struct http_request *req, json_t *body)
{
	const char *mask = http_request_query(req, "update_mask");
	json_t *out = json_object();
	char copy[256], *save = NULL;

	if (!mask) {
		for (const char *const *f = pool_fields; *f; f++)
			if (json_object_get(body, *f))
				json_object_set(out, *f, json_object_get(body, *f));
		return out;
	}
	if (strlen(mask) >= sizeof copy) {
		reply_problem(req, 400, "update_mask: too long");
		json_decref(out);
		return NULL;
	}
	snprintf(copy, sizeof copy, "%s", mask);
	for (char *f = strtok_r(copy, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		bool known = false;
		while (*f == ' ')
			f++;
		for (const char *const *k = pool_fields; *k; k++)
			known = known || !strcmp(*k, f);
		if (!known) {
			reply_problemf(req, 400,
			               "update_mask: \"%.60s\" is not a field of Pool that can be "
			               "changed (name, slots, description, include_deferred)",
			               f);
			json_decref(out);
			return NULL;
		}
		if (!json_object_get(body, f)) {
			reply_problemf(req, 400, "update_mask: %.60s: not in the body", f);
			json_decref(out);
			return NULL;
		}
		json_object_set(out, f, json_object_get(body, f));
	}
	return out;
}

/* ---- the operations (api/route_table.c's rows) ---- */

/* The admin ops, or a 503: the pools, statistics and sources are the DAG
 * manager's. */
static const struct dag_admin_ops *admin_of(const struct route_ctx *rc, struct http_request *req)
{
	if (rc->dag_ops && rc->dag_ops->admin)
		return rc->dag_ops->admin;
	reply_problem(req, 503, "this server runs no DAG manager (workflows are off)");
	return NULL;
}

void airflow_get_pools(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m)
{
	static const char *const allowed[] = {"limit", "offset", "order_by", NULL};
	const struct dag_admin_ops *a = admin_of(rc, req);
	void *ctx = rc->dag_ctx;
	struct weir_error err = {0};
	const char *o = http_request_query(req, "order_by");
	int limit, offset;

	(void)m;
	if (!a || !airflow_query_known(req, allowed) || !airflow_page_query(req, &limit, &offset))
		return;
	if (o && strcmp(o, "name") && strcmp(o, "-name") && strcmp(o, "slots") &&
	    strcmp(o, "-slots") && strcmp(o, "id") && strcmp(o, "-id")) {
		reply_problemf(req, 400,
		               "order_by \"%.40s\": expected name, slots or id (- in front: "
		               "descending)",
		               o);
		return;
	}
	reply_problem_result(req, a->list_pools(ctx, limit, offset, o, &err), &err);
}

void airflow_post_pool(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m)
{
	const struct dag_admin_ops *a = admin_of(rc, req);
	void *ctx = rc->dag_ctx;
	struct weir_error err = {0};
	json_t *body;

	(void)m;
	if (!a || !(body = airflow_read_body(req, pool_body_fields)))
		return;
	if (pool_body_ok(req, body, true))
		reply_problem_result(req, a->add_pool(ctx, body, &err), &err);
	json_decref(body);
}

/* The admin ops and the pool's name of the path (checked), or NULL answered. */
static const struct dag_admin_ops *pool_of(const struct route_ctx *rc, struct http_request *req,
                                           const struct route_match *m, const char **name)
{
	const struct dag_admin_ops *a = admin_of(rc, req);

	*name = route_match_param(m, "pool_name");
	return a && airflow_check_id(req, "pool_name", *name) ? a : NULL;
}

void airflow_get_pool(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m)
{
	struct weir_error err = {0};
	const char *name;
	const struct dag_admin_ops *a = pool_of(rc, req, m, &name);
	void *ctx = rc->dag_ctx;

	if (a)
		reply_problem_result(req, a->get_pool(ctx, name, &err), &err);
}

void airflow_patch_pool(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m)
{
	struct weir_error err = {0};
	const char *name;
	const struct dag_admin_ops *a = pool_of(rc, req, m, &name);
	void *ctx = rc->dag_ctx;
	json_t *body, *f;

	if (!a || !(body = airflow_read_body(req, pool_body_fields)))
		return;
	if (pool_body_ok(req, body, false) && (f = pool_patch_fields(req, body))) {
		reply_problem_result(req, a->patch_pool(ctx, name, f, &err), &err);
		json_decref(f);
	}
	json_decref(body);
}

void airflow_delete_pool(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m)
{
	struct weir_error err = {0};
	const char *name;
	const struct dag_admin_ops *a = pool_of(rc, req, m, &name);
	void *ctx = rc->dag_ctx;

	if (!a)
		return;
	if (a->delete_pool(ctx, name, &err) < 0)
		reply_problem_error(req, &err);
	else
		http_request_respond_static(req, 204, "application/json", "", 0);
}

/* ---- dagStats, dagSources, parseDagFile ---- */

/* GET /dagStats: the ids asked for that the request may read (a DAG whose
 * access list refuses it is left out, as Airflow leaves out DAGs its user
 * may not read). */
static void route_dag_stats(const struct route_ctx *rc, const struct dag_admin_ops *a,
                            struct http_request *req)
{
	static const char *const allowed[] = {"dag_ids", NULL};
	struct weir_error err = {0};
	const char *q = http_request_query(req, "dag_ids");
	const char *ids[256];
	size_t n = 0;
	char *copy, *save = NULL;

	if (!airflow_query_known(req, allowed))
		return;
	if (!q || !*q) {
		reply_problem(req, 400, "dag_ids: required (one or more DAG ids, comma-separated)");
		return;
	}
	if (!(copy = strdup(q))) {
		reply_problem(req, 500, "out of memory");
		return;
	}
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!airflow_id_ok(t) || n == 256) {
			reply_problemf(req, 400,
			               n == 256 ? "dag_ids: at most 256"
			                        : "dag_ids: \"%.60s\": not "
			                          "a DAG id",
			               t);
			free(copy);
			return;
		}
		if (!dag_gate_lets(rc, req, t, ACCESS_READ))
			continue; /* as Airflow leaves out what its user may not read */
		ids[n++] = t;
	}
	reply_problem_result(req, a->dag_stats(rc->dag_ctx, ids, n, &err), &err);
	free(copy);
}

static void route_dag_source(const struct dag_admin_ops *a, void *ctx, struct http_request *req,
                             const char *token)
{
	struct weir_error err = {0};
	char dag_id[AIRFLOW_ID_MAX + 8];
	const char *accept = http_request_header(req, "Accept");
	char *text = NULL;
	size_t len = 0;

	if (!route_token(req, token, dag_id, sizeof dag_id))
		return;
	if (a->dag_source(ctx, dag_id, &text, &len, &err) < 0) {
		reply_problem_error(req, &err);
		return;
	}
	/* Airflow: application/json gives {"content"}, text/plain the text, any other 406 */
	if (accept && strstr(accept, "text/plain") && !strstr(accept, "application/json")) {
		reply_text(req, 200, "text/plain; charset=utf-8", text, len);
		return;
	}
	if (accept && *accept && !strstr(accept, "application/json") && !strstr(accept, "*/*")) {
		free(text);
		reply_problem(req, 406, "Accept: expected application/json or text/plain");
		return;
	}
	http_request_respond_json(req, 200, json_pack("{s:s%}", "content", text, len));
	free(text);
}

/* ---- the configuration, as Airflow's Config: {"sections":[{name, options:[{key, value}]}]} ----
 */

static json_t *config_pick(const json_t *view, const char *section, const char *option)
{
	json_t *out = json_array(), *s;
	size_t i;

	json_array_foreach(json_object_get(view, "sections"), i, s)
	{
		json_t *o, *opts;
		size_t k;
		if (section && strcmp(json_string_value(json_object_get(s, "name")), section))
			continue;
		if (!option) {
			json_array_append(out, s);
			continue;
		}
		opts = json_array();
		json_array_foreach(json_object_get(s, "options"), k,
		                   o) if (!strcmp(json_string_value(json_object_get(o, "key")),
		                                  option)) json_array_append(opts, o);
		if (json_array_size(opts))
			json_array_append_new(out, json_pack("{s:O, s:o}", "name",
			                                     json_object_get(s, "name"), "options",
			                                     opts));
		else
			json_decref(opts);
	}
	return json_pack("{s:o}", "sections", out);
}

static void reply_config(struct http_request *req, json_t *cfg)
{
	const char *accept = http_request_header(req, "Accept");
	json_t *s, *o;
	size_t i, k;

	if (!accept || !*accept || strstr(accept, "application/json") || strstr(accept, "*/*")) {
		http_request_respond_json(req, 200, cfg);
		return;
	}
	if (!strstr(accept, "text/plain")) {
		json_decref(cfg);
		reply_problem(req, 406, "Accept: expected application/json or text/plain");
		return;
	}
	{
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		if (!f) {
			json_decref(cfg);
			reply_problem(req, 500, "out of memory");
			return;
		}
		json_array_foreach(json_object_get(cfg, "sections"), i, s)
		{
			fprintf(f, "[%s]\n", json_string_value(json_object_get(s, "name")));
			json_array_foreach(json_object_get(s, "options"), k, o)
			    fprintf(f, "%s = %s\n", json_string_value(json_object_get(o, "key")),
			            json_string_value(json_object_get(o, "value")));
			fputc('\n', f);
		}
		fclose(f);
		json_decref(cfg);
		reply_text(req, 200, "text/plain; charset=utf-8", text, len);
	}
}

/* The configuration the server exposes, or a 403. */
static const json_t *config_of(const struct route_ctx *rc, struct http_request *req)
{
	if (!rc->config_view)
		reply_problem(req, 403, "this server exposes no configuration");
	return rc->config_view;
}

void airflow_get_config(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m)
{
	static const char *const allowed[] = {"section", NULL};
	const json_t *view = config_of(rc, req);
	const char *section = http_request_query(req, "section");
	json_t *c;

	(void)m;
	if (!view || !airflow_query_known(req, allowed))
		return;
	c = config_pick(view, section, NULL);
	if (section && !json_array_size(json_object_get(c, "sections"))) {
		json_decref(c);
		reply_problemf(req, 404, "section=%.60s not found", section);
		return;
	}
	reply_config(req, c);
}

void airflow_get_value(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m)
{
	const json_t *view = config_of(rc, req);
	const char *section = route_match_param(m, "section");
	const char *option = route_match_param(m, "option");
	json_t *c;

	if (!view)
		return;
	c = config_pick(view, section, option);
	if (!json_array_size(json_object_get(c, "sections"))) {
		json_decref(c);
		reply_problemf(req, 404, "the option [%.60s/%.60s] is not found in config", section,
		               option);
		return;
	}
	reply_config(req, c);
}

/* ---- the lists weir has nothing in, and the version ---- */

/* dagWarnings: weir raises none (every problem of a DAG file is an import
 * error, and a DAG whose pool is missing waits with the reason on its TIs).
 * The filters are still checked. */
static void route_dag_warnings(struct http_request *req)
{
	static const char *const allowed[] = {"dag_id", "warning_type", "limit",
	                                      "offset", "order_by",     NULL};
	const char *d = http_request_query(req, "dag_id");
	int limit, offset;

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &limit, &offset))
		return;
	if (d && !airflow_check_id(req, "dag_id", d))
		return;
	http_request_respond_json(req, 200,
	                          json_pack("{s:[], s:i}", "dag_warnings", "total_entries", 0));
}

static void route_empty_list(struct http_request *req, const char *key, bool paged)
{
	static const char *const page[] = {"limit", "offset", NULL};
	static const char *const none[] = {NULL};
	int limit, offset;

	if (!airflow_query_known(req, paged ? page : none) ||
	    (paged && !airflow_page_query(req, &limit, &offset)))
		return;
	http_request_respond_json(req, 200, json_pack("{s:[], s:i}", key, "total_entries", 0));
}

void airflow_get_dag_warnings(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m)
{
	(void)rc;
	(void)m;
	route_dag_warnings(req);
}

void airflow_get_plugins(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m)
{
	(void)rc;
	(void)m;
	route_empty_list(req, "plugins", true);
}

void airflow_get_providers(const struct route_ctx *rc, struct http_request *req,
                           const struct route_match *m)
{
	(void)rc;
	(void)m;
	route_empty_list(req, "providers", false);
}

void airflow_get_version(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m)
{
	static const char *const none[] = {NULL};

	(void)m;
	if (airflow_query_known(req, none))
		http_request_respond_json(
		    req, 200, json_pack("{s:s, s:n}", "version", rc->version, "git_version"));
}

void airflow_get_dag_stats(const struct route_ctx *rc, struct http_request *req,
                           const struct route_match *m)
{
	const struct dag_admin_ops *a = admin_of(rc, req);

	(void)m;
	if (a)
		route_dag_stats(rc, a, req);
}

void airflow_get_dag_source(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m)
{
	const struct dag_admin_ops *a = admin_of(rc, req);

	if (a)
		route_dag_source(a, rc->dag_ctx, req, route_match_param(m, "file_token"));
}

void airflow_reparse_dag_file(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m)
{
	const struct dag_admin_ops *a = admin_of(rc, req);
	void *ctx = rc->dag_ctx;
	struct weir_error err = {0};
	char dag_id[AIRFLOW_ID_MAX + 8];

	if (!a || !route_token(req, route_match_param(m, "file_token"), dag_id, sizeof dag_id))
		return;
	if (a->reparse(ctx, dag_id, &err) < 0)
		reply_problem_error(req, &err);
	else
		http_request_respond_static(req, 201, "application/json", "", 0);
}
