/* db_clean_routes.c: POST and GET /api/v1/weir/dbClean
 * (db_clean_routes.h): the body read and checked field by field, the
 * server's clean asked, its answer given in weir's own voice. */
#include "api/db_clean_routes.h"

#include <stdlib.h>
#include <string.h>

#include "api/db_clean_api.h"
#include "api/reply.h"
#include "api/request.h"
#include "model/duration.h"

/* The request's fields into *r (dags_json malloc'ed into *dags); false
 * with err naming the field. */
static bool read_body(json_t *body, struct db_clean_request *r, char **dags, struct weir_error *err)
{
	static const char *const known[] = {"older_than", "dry_run", "dag_ids", NULL};
	const char *key;
	json_t *v, *older = json_object_get(body, "older_than"), *dry, *ids;
	size_t i;

	json_object_foreach(body, key, v)
	{
		bool ok = false;
		for (i = 0; known[i]; i++)
			ok = ok || !strcmp(key, known[i]);
		if (!ok) {
			weir_error_set(
			    err, WEIR_E_INVALID,
			    "body: unknown field \"%s\" (expected older_than, dry_run, dag_ids)",
			    key);
			return false;
		}
	}
	if (!json_is_string(older)) {
		weir_error_set(err, WEIR_E_INVALID,
		               "body: older_than: expected a duration such as \"30d\" or \"12h\"");
		return false;
	}
	if (duration_parse_s(json_string_value(older), "older_than", &r->older_than_s, err) < 0)
		return false;
	dry = json_object_get(body, "dry_run");
	if (dry && !json_is_boolean(dry)) {
		weir_error_set(err, WEIR_E_INVALID, "body: dry_run: expected true or false");
		return false;
	}
	r->dry_run = json_is_true(dry);
	ids = json_object_get(body, "dag_ids");
	if (ids && !json_is_null(ids)) {
		if (!json_is_array(ids) || json_array_size(ids) == 0) {
			weir_error_set(err, WEIR_E_INVALID,
			               "body: dag_ids: expected a non-empty array of DAG ids");
			return false;
		}
		json_array_foreach(ids, i, v)
		{
			if (!json_is_string(v) || !json_string_length(v)) {
				weir_error_set(err, WEIR_E_INVALID,
				               "body: dag_ids[%zu]: expected a DAG id (a string)",
				               i);
				return false;
			}
		}
		if (!(*dags = json_dumps(ids, JSON_COMPACT))) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			return false;
		}
		r->dags_json = *dags;
	}
	return true;
}

void db_clean_post(const struct route_ctx *rc, struct http_request *req,
                   const struct route_match *m)
{
	const struct db_clean_api_ops *ops = rc->db_clean_ops;
	struct db_clean_request r = {0};
	struct weir_error err = {0};
	char *dags = NULL;
	json_t *body, *answer = NULL;

	(void)m;
	if (!ops) {
		reply_status(req, 503, "this server does not clean its store");
		return;
	}
	if (!(body = request_json_object(req, &err))) {
		reply_result(req, 400, NULL, &err);
		return;
	}
	if (read_body(body, &r, &dags, &err))
		answer = ops->start(rc->db_clean_ctx, &r, &err);
	reply_result(req, r.dry_run ? 200 : 202, answer, &err);
	json_decref(body);
	free(dags);
}

void db_clean_get(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	const struct db_clean_api_ops *ops = rc->db_clean_ops;

	(void)m;
	if (!ops) {
		reply_status(req, 503, "this server does not clean its store");
		return;
	}
	reply_result(req, 200, ops->status(rc->db_clean_ctx), NULL);
}
