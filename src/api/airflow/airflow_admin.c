/* airflow_admin.c: the routes under /dags that change things or read
 * what dag_api.h's routes do not (airflow_admin.h): PATCH /dags, DELETE of
 * a DAG or a run, a run's clear, marking task instances, one task, one
 * import error, a TI's XCom entries, dependencies, links, mapped instances
 * and one try.  Bodies are checked field by field as Airflow's schemas
 * have them (an unknown field is a 400), with Airflow's defaults.
 */
#include "api/airflow/airflow_admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/airflow/airflow_lists.h"
#include "api/airflow/airflow_request.h"
#include "api/dag_answers.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"
#include "api/route_match.h"

static void reply_deleted(struct http_request *req, int rc, const struct weir_error *err)
{
	if (rc < 0)
		reply_problem_error(req, err);
	else
		http_request_respond_static(req, 204, "application/json", "", 0);
}

/* new_state of a mark: success or failed (skipped is Airflow's too; weir
 * does not mark it by hand). */
static bool new_state_ok(struct http_request *req, json_t *body, const char **out)
{
	json_t *v = json_object_get(body, "new_state");
	const char *s = json_string_value(v);

	if (!v || json_is_null(v)) {
		reply_problem(req, 400, "new_state: required (success or failed)");
		return false;
	}
	if (s && !strcmp(s, "skipped")) {
		reply_problem(
		    req, 400,
		    "new_state: skipped cannot be set by hand in weir; success or failed");
		return false;
	}
	if (!s || (strcmp(s, "success") && strcmp(s, "failed"))) {
		reply_problem(req, 400, "new_state: expected success or failed");
		return false;
	}
	*out = s;
	return true;
}

/* ---- PATCH /dags ---- */

static void route_patch_dags(const struct dag_api_ops *ops, void *ctx, struct http_request *req)
{
	static const char *const allowed_q[] = {
	    "limit", "offset", "tags", "update_mask", "only_active", "dag_id_pattern", NULL};
	static const char *const allowed_b[] = {"is_paused", NULL};
	struct weir_error err = {0};
	struct dag_reader rd = airflow_reader(req, ACCESS_EDIT);
	struct dag_list_query q = {.paused = -1, .reader = &rd};
	const char *tags[64], *mask = http_request_query(req, "update_mask");
	const char *pattern = http_request_query(req, "dag_id_pattern");
	json_t *body = NULL, *list = NULL, *out = NULL, *d;
	size_t i;

	if (!airflow_query_known(req, allowed_q) || !airflow_page_query(req, &q.limit, &q.offset) ||
	    !airflow_query_bool(req, "only_active", true, &q.only_active) ||
	    !airflow_query_list(req, "tags", tags, 64, &q.tags.n))
		return;
	q.tags.v = tags;
	if (!pattern || !*pattern) {
		reply_problem(req, 400, "dag_id_pattern: required (\"~\" for every DAG)");
		return;
	}
	if (mask && strcmp(mask, "is_paused")) {
		reply_problemf(req, 400, "update_mask: \"%.60s\": only is_paused can be updated",
		               mask);
		return;
	}
	q.dag_id_pattern = strcmp(pattern, "~") ? pattern : NULL;
	if (!(body = airflow_read_body(req, allowed_b)))
		return;
	if (!json_is_boolean(json_object_get(body, "is_paused"))) {
		reply_problem(req, 400, "is_paused: expected true or false");
		goto out;
	}
	if (!(list = dag_answer_list_dags(ops, ctx, &q, &err))) {
		reply_problem_error(req, &err);
		goto out;
	}
	out = json_array();
	json_array_foreach(json_object_get(list, "dags"), i, d)
	{
		json_t *r = dag_answer_patch_dag(
		    ops, ctx, json_string_value(json_object_get(d, "dag_id")), body, &err);
		if (!r) {
			reply_problem_error(req, &err);
			goto out;
		}
		json_array_append_new(out, r);
	}
	reply_problem_result(req,
	                     json_pack("{s:O, s:O}", "dags", out, "total_entries",
	                               json_object_get(list, "total_entries")),
	                     &err);
out:
	json_decref(out);
	json_decref(list);
	json_decref(body);
}

/* ---- marks ---- */

/* POST /dags/{dag_id}/updateTaskInstancesState (UpdateTaskInstancesState). */
static void route_mark_many(const struct dag_admin_ops *a, void *ctx, struct http_request *req,
                            const char *dag_id)
{
	static const char *const allowed[] = {"dry_run",          "task_id",
	                                      "execution_date",   "dag_run_id",
	                                      "include_upstream", "include_downstream",
	                                      "include_future",   "include_past",
	                                      "new_state",        NULL};
	struct weir_error err = {0};
	struct dag_mark_request m = {.map_index = DAG_MAP_INDEX_ANY};
	json_t *body = airflow_read_body(req, allowed), *rid, *ed;

	if (!body)
		return;
	if (airflow_body_bool(req, body, "dry_run", true, &m.dry_run) < 0 ||
	    airflow_body_bool(req, body, "include_upstream", false, &m.upstream) < 0 ||
	    airflow_body_bool(req, body, "include_downstream", false, &m.downstream) < 0 ||
	    airflow_body_bool(req, body, "include_future", false, &m.future) < 0 ||
	    airflow_body_bool(req, body, "include_past", false, &m.past) < 0 ||
	    !new_state_ok(req, body, &m.new_state))
		goto out;
	m.task_id = json_string_value(json_object_get(body, "task_id"));
	if (!m.task_id || !airflow_id_ok(m.task_id)) {
		reply_problem(req, 400, "task_id: required, a task id");
		goto out;
	}
	rid = json_object_get(body, "dag_run_id");
	ed = json_object_get(body, "execution_date");
	if ((rid && !json_is_null(rid)) == (ed && !json_is_null(ed))) {
		reply_problem(req, 400, "dag_run_id, execution_date: expected exactly one of them");
		goto out;
	}
	if (rid && !json_is_null(rid) &&
	    (!json_is_string(rid) || !airflow_id_ok(json_string_value(rid)))) {
		reply_problem(req, 400, "dag_run_id: expected a DAG run's id");
		goto out;
	}
	if (ed && !json_is_null(ed) && !json_is_string(ed)) {
		reply_problem(
		    req, 400,
		    "execution_date: expected a date-time like 2024-01-01T00:00:00+00:00");
		goto out;
	}
	m.run_id = json_string_value(rid);
	m.execution_date = json_string_value(ed);
	reply_problem_result(req, a->mark_tis(ctx, dag_id, &m, &err), &err);
out:
	json_decref(body);
}

/* PATCH .../taskInstances/{task_id}[/{map_index}] (UpdateTaskInstance):
 * TaskInstanceReference of the TI, marked unless dry_run (default true). */
static void route_mark_one(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                           const char *const *seg, int map_index)
{
	static const char *const allowed[] = {"dry_run", "new_state", NULL};
	struct weir_error err = {0};
	struct dag_mark_request m = {.run_id = seg[3], .task_id = seg[5], .map_index = map_index};
	json_t *body = airflow_read_body(req, allowed), *ti = NULL, *r = NULL;

	if (!body)
		return;
	if (airflow_body_bool(req, body, "dry_run", true, &m.dry_run) < 0 ||
	    !new_state_ok(req, body, &m.new_state))
		goto out;
	if (!(ti = dag_answer_get_ti(ops, ctx, seg[1], seg[3], seg[5], map_index, &err))) {
		reply_problem_error(req, &err);
		goto out;
	}
	if (!m.dry_run && !(r = ops->admin->mark_tis(ctx, seg[1], &m, &err))) {
		reply_problem_error(req, &err);
		goto out;
	}
	reply_problem_result(req,
	                     json_pack("{s:O, s:O, s:O, s:O}", "task_id",
	                               json_object_get(ti, "task_id"), "dag_id",
	                               json_object_get(ti, "dag_id"), "execution_date",
	                               json_object_get(ti, "execution_date"), "dag_run_id",
	                               json_object_get(ti, "dag_run_id")),
	                     &err);
out:
	json_decref(r);
	json_decref(ti);
	json_decref(body);
}

/* POST .../dagRuns/{run_id}/clear (ClearDagRun: dry_run, default true). */
static void route_clear_run(const struct dag_admin_ops *a, void *ctx, struct http_request *req,
                            const char *dag_id, const char *run_id)
{
	static const char *const allowed[] = {"dry_run", NULL};
	struct weir_error err = {0};
	json_t *body = airflow_read_body(req, allowed);
	bool dry_run;

	if (!body)
		return;
	if (airflow_body_bool(req, body, "dry_run", true, &dry_run) == 0)
		reply_problem_result(req, a->clear_run(ctx, dag_id, run_id, dry_run, &err), &err);
	json_decref(body);
}

/* ---- reads of one task instance ---- */

/* GET .../xcomEntries: map_index (default: every instance), xcom_key, limit, offset. */
static void route_xcom_list(const struct dag_admin_ops *a, void *ctx, struct http_request *req,
                            const char *const *seg)
{
	static const char *const allowed[] = {"map_index", "xcom_key", "limit", "offset", NULL};
	struct weir_error err = {0};
	int limit, offset, map_index = DAG_MAP_INDEX_ANY;

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &limit, &offset))
		return;
	if (http_request_query(req, "map_index") && !airflow_map_index_query(req, &map_index))
		return;
	reply_problem_result(req,
	                     a->xcom_list(ctx, seg[1], seg[3], seg[5], map_index,
	                                  http_request_query(req, "xcom_key"), limit, offset, &err),
	                     &err);
}

/* GET .../xcomEntries/{key}: map_index (default -1), deserialize, stringify (default true). */
static void route_xcom_get(const struct dag_admin_ops *a, void *ctx, struct http_request *req,
                           const char *const *seg)
{
	static const char *const allowed[] = {"map_index", "deserialize", "stringify", NULL};
	struct weir_error err = {0};
	int map_index;
	bool stringify, deserialize;

	if (!airflow_query_known(req, allowed) || !airflow_map_index_query(req, &map_index) ||
	    !airflow_query_bool(req, "stringify", true, &stringify) ||
	    !airflow_query_bool(req, "deserialize", false, &deserialize))
		return;
	reply_problem_result(
	    req, a->xcom_get(ctx, seg[1], seg[3], seg[5], map_index, seg[7], stringify, &err),
	    &err);
}

/* GET .../tries/{n}: the TaskInstance as that try left it (Airflow 2.10's
 * try details): the TI's fields with the try's own over them. */
static void route_try(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                      const char *const *seg, int map_index, const char *try_seg)
{
	struct weir_error err = {0};
	json_t *ti = NULL, *tries = NULL, *t;
	int want;
	size_t i;

	if (!airflow_path_number(req, "task_try_number", try_seg, 1, &want))
		return;
	if (!(ti = dag_answer_get_ti(ops, ctx, seg[1], seg[3], seg[5], map_index, &err)) ||
	    !(tries = dag_answer_ti_tries(ops, ctx, seg[1], seg[3], seg[5], map_index, &err))) {
		reply_problem_error(req, &err);
		goto out;
	}
	json_array_foreach(json_object_get(tries, "task_instances"), i, t)
	{
		if (json_integer_value(json_object_get(t, "try_number")) == want) {
			json_object_update(ti, t);
			reply_problem_result(req, json_incref(ti), &err);
			goto out;
		}
	}
	reply_problemf(req, 404, "task %s of run %s (DAG %s) has no try %d", seg[5], seg[3], seg[1],
	               want);
out:
	json_decref(tries);
	json_decref(ti);
}

/* ---- the operations (api/route_table.c's rows) ---- */

/* The admin ops, or the answer of a server without them (a test's): a
 * 405 for a method there, a 404 for a route. */
static const struct dag_admin_ops *admin_of(const struct route_ctx *rc, struct http_request *req,
                                            bool route)
{
	if (rc->dag_ops->admin)
		return rc->dag_ops->admin;
	if (route)
		reply_problem_no_route(req);
	else
		reply_problem_no_method(req);
	return NULL;
}

/* The path's ids checked, then the admin ops (admin_of()); NULL when answered. */
static const struct dag_admin_ops *admin_at(const struct route_ctx *rc, struct http_request *req,
                                            const struct route_match *m, bool route)
{
	return airflow_path_ids_ok(req, m, false, false) ? admin_of(rc, req, route) : NULL;
}

void airflow_patch_dags(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m)
{
	(void)m;
	if (admin_of(rc, req, false))
		route_patch_dags(rc->dag_ops, rc->dag_ctx, req);
}

void airflow_delete_dag(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m)
{
	const struct dag_admin_ops *a;
	void *ctx = rc->dag_ctx;
	const char *const dag_id = route_match_param(m, "dag_id");
	struct weir_error err = {0};

	if ((a = admin_at(rc, req, m, false)))
		reply_deleted(req, a->delete_dag(ctx, dag_id, &err), &err);
}

void airflow_get_task(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m)
{
	const struct dag_admin_ops *a;
	void *ctx = rc->dag_ctx;
	const char *dag_id = route_match_param(m, "dag_id");
	const char *task_id = route_match_param(m, "task_id");
	struct weir_error err = {0};

	if ((a = admin_at(rc, req, m, true)))
		reply_problem_result(req, a->get_task(ctx, dag_id, task_id, &err), &err);
}

void airflow_post_set_task_instances_state(const struct route_ctx *rc, struct http_request *req,
                                           const struct route_match *m)
{
	const struct dag_admin_ops *a;

	if ((a = admin_at(rc, req, m, false)))
		route_mark_many(a, rc->dag_ctx, req, route_match_param(m, "dag_id"));
}

void airflow_delete_dag_run(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m)
{
	const struct dag_admin_ops *a;
	void *ctx = rc->dag_ctx;
	const char *dag_id = route_match_param(m, "dag_id");
	const char *run_id = route_match_param(m, "dag_run_id");
	struct weir_error err = {0};

	if ((a = admin_at(rc, req, m, false)))
		reply_deleted(req, a->delete_run(ctx, dag_id, run_id, &err), &err);
}

void airflow_clear_dag_run(const struct route_ctx *rc, struct http_request *req,
                           const struct route_match *m)
{
	const struct dag_admin_ops *a;

	if ((a = admin_at(rc, req, m, false)))
		route_clear_run(a, rc->dag_ctx, req, route_match_param(m, "dag_id"),
		                route_match_param(m, "dag_run_id"));
}

/* The path's values (airflow_path_segments), ids checked, the admin ops
 * there, and the path's map index (-1 where it names none); NULL when
 * answered. */
static const struct dag_admin_ops *ti_of(const struct route_ctx *rc, struct http_request *req,
                                         const struct route_match *m, bool route,
                                         const char *seg[8], int *map_index)
{
	const struct dag_admin_ops *a;

	airflow_path_segments(m, seg);
	*map_index = -1;
	if (!(a = admin_at(rc, req, m, route)))
		return NULL;
	if (seg[6] && !airflow_path_number(req, "map_index", seg[6], 0, map_index))
		return NULL;
	return a;
}

/* PATCH of a task instance marks it (the TI itself, or one of a mapped task) */
static void patch_ti(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m)
{
	const char *seg[8];
	int map_index;

	if (ti_of(rc, req, m, false, seg, &map_index))
		route_mark_one(rc->dag_ops, rc->dag_ctx, req, seg, map_index);
}

void airflow_patch_task_instance(const struct route_ctx *rc, struct http_request *req,
                                 const struct route_match *m)
{
	patch_ti(rc, req, m);
}

void airflow_patch_mapped_task_instance(const struct route_ctx *rc, struct http_request *req,
                                        const struct route_match *m)
{
	patch_ti(rc, req, m);
}

void airflow_get_mapped_task_instances(const struct route_ctx *rc, struct http_request *req,
                                       const struct route_match *m)
{
	const char *seg[8];
	int map_index;

	if (ti_of(rc, req, m, true, seg, &map_index))
		airflow_list_mapped(rc->dag_ops, rc->dag_ctx, req, seg[1], seg[3], seg[5]);
}

/* GET of a TI's dependencies, of the TI or of one of a mapped task */
static void get_deps(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m)
{
	static const char *const none[] = {NULL};
	const struct dag_admin_ops *a;
	void *ctx = rc->dag_ctx;
	struct weir_error err = {0};
	const char *seg[8];
	int map_index;

	if ((a = ti_of(rc, req, m, true, seg, &map_index)) && airflow_query_known(req, none))
		reply_problem_result(req, a->ti_deps(ctx, seg[1], seg[3], seg[5], map_index, &err),
		                     &err);
}

void airflow_get_task_instance_dependencies(const struct route_ctx *rc, struct http_request *req,
                                            const struct route_match *m)
{
	get_deps(rc, req, m);
}

void airflow_get_mapped_task_instance_dependencies(const struct route_ctx *rc,
                                                   struct http_request *req,
                                                   const struct route_match *m)
{
	get_deps(rc, req, m);
}

/* GET of one try, of the TI or of one of a mapped task */
static void get_try(const struct route_ctx *rc, struct http_request *req,
                    const struct route_match *m)
{
	const char *seg[8];
	int map_index;

	if (ti_of(rc, req, m, true, seg, &map_index))
		route_try(rc->dag_ops, rc->dag_ctx, req, seg, map_index, seg[7]);
}

void airflow_get_task_instance_try_details(const struct route_ctx *rc, struct http_request *req,
                                           const struct route_match *m)
{
	get_try(rc, req, m);
}

void airflow_get_mapped_task_instance_try_details(const struct route_ctx *rc,
                                                  struct http_request *req,
                                                  const struct route_match *m)
{
	get_try(rc, req, m);
}

void airflow_get_extra_links(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m)
{
	static const char *const none[] = {NULL};
	const struct dag_admin_ops *a;
	void *ctx = rc->dag_ctx;
	struct weir_error err = {0};
	const char *seg[8];
	int map_index;

	if ((a = ti_of(rc, req, m, true, seg, &map_index)) && airflow_query_known(req, none))
		reply_problem_result(req, a->ti_links(ctx, seg[1], seg[3], seg[5], map_index, &err),
		                     &err);
}

void airflow_get_xcom_entries(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m)
{
	const struct dag_admin_ops *a;
	const char *seg[8];
	int map_index;

	if ((a = ti_of(rc, req, m, true, seg, &map_index)))
		route_xcom_list(a, rc->dag_ctx, req, seg);
}

void airflow_get_xcom_entry(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m)
{
	const struct dag_admin_ops *a;
	const char *seg[8];
	int map_index;

	if ((a = ti_of(rc, req, m, true, seg, &map_index)))
		route_xcom_get(a, rc->dag_ctx, req, seg);
}

void airflow_get_import_error(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m)
{
	const struct dag_admin_ops *a = admin_of(rc, req, true);
	void *ctx = rc->dag_ctx;
	const char *s = route_match_param(m, "import_error_id");
	struct weir_error err = {0};
	struct dag_reader rd = airflow_reader(req, ACCESS_READ);
	long long id;
	char *end;

	if (!a)
		return;
	id = strtoll(s, &end, 10);
	if (*end || end == s || id < 1) {
		reply_problemf(req, 400, "import_error_id \"%.40s\": expected a whole number", s);
		return;
	}
	reply_problem_result(req, a->import_error(ctx, &rd, id, &err), &err);
}
