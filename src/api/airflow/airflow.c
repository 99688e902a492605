/* airflow.c: the workflow routes of Airflow's stable REST API v1 over
 * api/http, answering from the server's DAG manager (api/dag_api.h).
 *
 * Ids from the path are checked against one character set before any op
 * sees them, and never build a file path: a log's path comes from the DAG
 * manager.  Bodies are checked field by field the way Airflow's schemas do
 * (an unknown field is a 400) and handed on in the contract's shape, with
 * Airflow's defaults filled in.
 */
#include "api/airflow/airflow.h"

#include <stdio.h>
#include <string.h>

#include "api/airflow/airflow_admin.h"
#include "api/airflow/airflow_lists.h"
#include "api/airflow/airflow_logs.h"
#include "api/airflow/airflow_request.h"
#include "api/dag_answers.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"
#include "api/route_match.h"
#include "lib/clock.h"
#include "model/states.h"

void airflow_health_add(json_t *health, const struct api_health *st)
{
	char beat[40];
	bool fresh;

	if (!st) {
		json_object_set_new(health, "metadatabase", json_pack("{s:n}", "status"));
		json_object_set_new(
		    health, "scheduler",
		    json_pack("{s:n, s:n}", "status", "latest_scheduler_heartbeat"));
		return;
	}
	fresh = st->last_pass_ms > 0 &&
	        clock_now_ms() - st->last_pass_ms <= AIRFLOW_HEARTBEAT_MAX_AGE_MS;
	clock_format_iso(st->last_pass_ms, beat, sizeof beat);
	json_object_set_new(health, "metadatabase",
	                    json_pack("{s:s}", "status", st->db_ok ? "healthy" : "unhealthy"));
	json_object_set_new(health, "scheduler",
	                    json_pack("{s:s, s:o}", "status", fresh ? "healthy" : "unhealthy",
	                              "latest_scheduler_heartbeat",
	                              st->last_pass_ms > 0 ? json_string(beat) : json_null()));
}

/* ---- routes ---- */

/* update_mask: a comma-separated list of fields; only is_paused can change. */
static bool update_mask_ok(struct http_request *req)
{
	const char *m = http_request_query(req, "update_mask");
	char copy[256];
	char *save = NULL;

	if (!m)
		return true;
	if (strlen(m) >= sizeof copy) {
		reply_problem(req, 400, "update_mask: expected is_paused");
		return false;
	}
	snprintf(copy, sizeof copy, "%s", m);
	for (char *f = strtok_r(copy, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		while (*f == ' ')
			f++;
		size_t n = strlen(f);
		while (n && f[n - 1] == ' ')
			f[--n] = '\0';
		if (strcmp(f, "is_paused")) {
			reply_problemf(
			    req, 400,
			    "update_mask: field \"%.60s\" cannot be updated: only is_paused "
			    "can",
			    f);
			return false;
		}
	}
	return true;
}

static void route_patch_dag(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                            const char *dag_id)
{
	static const char *const allowed[] = {"is_paused", NULL};
	struct weir_error err = {0};
	json_t *body, *r;

	if (!update_mask_ok(req) || !(body = airflow_read_body(req, allowed)))
		return;
	if (!json_is_boolean(json_object_get(body, "is_paused"))) {
		reply_problem(req, 400, "is_paused: expected true or false");
		json_decref(body);
		return;
	}
	r = dag_answer_patch_dag(ops, ctx, dag_id, body, &err);
	json_decref(body);
	reply_problem_result(req, r, &err);
}

/* POST .../dagRuns: Airflow's DAGRun body, passed on as {conf, dag_run_id,
 * logical_date} (execution_date is Airflow's older name for logical_date). */
static void route_trigger(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                          const char *dag_id)
{
	static const char *const allowed[] = {"conf", "dag_run_id", "logical_date",
	                                      "execution_date", NULL};
	struct weir_error err = {0};
	json_t *body = airflow_read_body(req, allowed), *out = NULL, *r = NULL;
	json_t *conf, *run_id, *logical, *exec;

	if (!body)
		return;
	conf = json_object_get(body, "conf");
	run_id = json_object_get(body, "dag_run_id");
	logical = json_object_get(body, "logical_date");
	exec = json_object_get(body, "execution_date");
	if (conf && !json_is_object(conf) && !json_is_null(conf)) {
		reply_problem(req, 400, "conf: expected a JSON object");
		goto out;
	}
	if (run_id && !json_is_null(run_id) &&
	    (!json_is_string(run_id) || !airflow_id_ok(json_string_value(run_id)))) {
		reply_problemf(req, 400,
		               "dag_run_id: expected 1 to %d characters of A-Z a-z 0-9 _ . : + - "
		               "(and not . or ..)",
		               AIRFLOW_ID_MAX);
		goto out;
	}
	if ((logical && !json_is_null(logical) && !json_is_string(logical)) ||
	    (exec && !json_is_null(exec) && !json_is_string(exec))) {
		reply_problem(req, 400,
		              "logical_date: expected a date-time like "
		              "2024-01-01T00:00:00+00:00");
		goto out;
	}
	if (json_is_string(logical) && json_is_string(exec) &&
	    strcmp(json_string_value(logical), json_string_value(exec))) {
		reply_problem(req, 400,
		              "logical_date and execution_date: expected at most one "
		              "(or the same value)");
		goto out;
	}
	if (!json_is_string(logical))
		logical = exec;
	out = json_object();
	if (!out) {
		reply_problem(req, 500, "out of memory");
		goto out;
	}
	if (json_is_object(conf))
		json_object_set(out, "conf", conf);
	if (json_is_string(run_id))
		json_object_set(out, "dag_run_id", run_id);
	if (json_is_string(logical))
		json_object_set(out, "logical_date", logical);
	r = dag_answer_trigger_run(ops, ctx, dag_id, out, &err);
	reply_problem_result(req, r, &err);
out:
	json_decref(out);
	json_decref(body);
}

/* GET a run: the text the ops write (no tree: the run is what clients poll). */
static void get_run(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                    const char *dag_id, const char *run_id)
{
	struct weir_error err = {0};
	size_t len = 0;
	char *text = dag_answer_get_run_text(ops, ctx, dag_id, run_id, &len, &err);
	if (!text)
		reply_problem_error(req, &err);
	else
		reply_text(req, 200, "application/json", text, len);
}

static void route_patch_run(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                            const char *dag_id, const char *run_id)
{
	static const char *const allowed[] = {"state", NULL};
	struct weir_error err = {0};
	json_t *body = airflow_read_body(req, allowed), *r;
	enum dag_run_state st;

	if (!body)
		return;
	if (dag_run_state_from_name(json_string_value(json_object_get(body, "state")), &st) < 0 ||
	    st == DAG_RUN_RUNNING) {
		reply_problem(req, 400, "state: expected success, failed or queued");
		json_decref(body);
		return;
	}
	r = dag_answer_patch_run(ops, ctx, dag_id, run_id, body, &err);
	json_decref(body);
	reply_problem_result(req, r, &err);
}

/* POST /dags/{dag_id}/clearTaskInstances, with Airflow's defaults (dry_run
 * and only_failed true).  Options weir cannot honour are refused rather than
 * ignored, except those that mean nothing here (parent DAGs, resetting runs,
 * which clearing always does); include_subdags (Airflow's "Recursive")
 * follows the ExternalTaskMarkers cleared. */
static void route_clear(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                        const char *dag_id)
{
	static const char *const allowed[] = {"dry_run",
	                                      "task_ids",
	                                      "only_failed",
	                                      "only_running",
	                                      "include_subdags",
	                                      "include_parentdag",
	                                      "reset_dag_runs",
	                                      "dag_run_id",
	                                      "include_upstream",
	                                      "include_downstream",
	                                      "include_future",
	                                      "include_past",
	                                      "start_date",
	                                      "end_date",
	                                      NULL};
	static const char *const unsupported[] = {"only_running", "include_upstream",
	                                          "include_future", "include_past", NULL};
	static const char *const ignored[] = {"include_parentdag", "reset_dag_runs", NULL};
	struct weir_error err = {0};
	json_t *body = airflow_read_body(req, allowed), *out = NULL, *r, *v;
	bool dry_run, only_failed, downstream, recursive, b;
	size_t i;

	if (!body)
		return;
	if (airflow_body_bool(req, body, "dry_run", true, &dry_run) < 0 ||
	    airflow_body_bool(req, body, "only_failed", true, &only_failed) < 0 ||
	    airflow_body_bool(req, body, "include_downstream", false, &downstream) < 0 ||
	    airflow_body_bool(req, body, "include_subdags", false, &recursive) < 0)
		goto out;
	for (const char *const *a = ignored; *a; a++)
		if (airflow_body_bool(req, body, *a, false, &b) < 0)
			goto out;
	for (const char *const *a = unsupported; *a; a++) {
		if (airflow_body_bool(req, body, *a, false, &b) < 0)
			goto out;
		if (b) {
			reply_problemf(req, 400, "%s: not supported by weir (expected false)", *a);
			goto out;
		}
	}
	if ((v = json_object_get(body, "start_date")) && !json_is_null(v)) {
		reply_problem(req, 400,
		              "start_date: clearing by date is not supported by weir; "
		              "give dag_run_id");
		goto out;
	}
	if ((v = json_object_get(body, "end_date")) && !json_is_null(v)) {
		reply_problem(req, 400,
		              "end_date: clearing by date is not supported by weir; "
		              "give dag_run_id");
		goto out;
	}
	v = json_object_get(body, "dag_run_id");
	if (v && !json_is_null(v) && (!json_is_string(v) || !airflow_id_ok(json_string_value(v)))) {
		reply_problem(req, 400, "dag_run_id: expected a DAG run's id");
		goto out;
	}
	out =
	    json_pack("{s:O?, s:b, s:b, s:b, s:b}", "dag_run_id", v && json_is_string(v) ? v : NULL,
	              "include_downstream", downstream, "include_subdags", recursive, "only_failed",
	              only_failed, "dry_run", dry_run);
	if (!out) {
		reply_problem(req, 500, "out of memory");
		goto out;
	}
	v = json_object_get(body, "task_ids");
	if (v && !json_is_null(v)) {
		json_t *t;
		if (!json_is_array(v) || json_array_size(v) == 0) {
			reply_problem(req, 400, "task_ids: expected a non-empty list of task ids");
			goto out;
		}
		json_array_foreach(v, i, t)
		{
			if (!json_is_string(t) || !airflow_id_ok(json_string_value(t))) {
				reply_problemf(req, 400, "task_ids[%zu]: expected a task id", i);
				goto out;
			}
		}
		json_object_set(out, "task_ids", v);
	} else {
		json_object_set_new(out, "task_ids", json_null());
	}
	r = dag_answer_clear_tis(ops, ctx, dag_id, out, &err);
	reply_problem_result(req, r, &err);
out:
	json_decref(out);
	json_decref(body);
}

/* ---- the operations (api/route_table.c's rows) ---- */

/* Each checks the path's ids first (airflow_path_ids_ok); the entry has
 * answered 503 where no DAG manager runs. */

void airflow_get_dags(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m)
{
	(void)m;
	airflow_list_dags(rc->dag_ops, rc->dag_ctx, req);
}

void airflow_get_dag(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m)
{
	const struct dag_api_ops *ops = rc->dag_ops;
	void *ctx = rc->dag_ctx;
	struct weir_error err = {0};

	if (airflow_path_ids_ok(req, m, false, false))
		reply_problem_result(
		    req, dag_answer_get_dag(ops, ctx, route_match_param(m, "dag_id"), &err), &err);
}

void airflow_patch_dag(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m)
{
	if (airflow_path_ids_ok(req, m, false, false))
		route_patch_dag(rc->dag_ops, rc->dag_ctx, req, route_match_param(m, "dag_id"));
}

void airflow_get_dag_details(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m)
{
	const struct dag_api_ops *ops = rc->dag_ops;
	void *ctx = rc->dag_ctx;
	const char *dag_id = route_match_param(m, "dag_id");
	struct weir_error err = {0};

	if (!airflow_path_ids_ok(req, m, false, false))
		return;
	if (ops->dag_details)
		reply_problem_result(req, dag_answer_dag_details(ops, ctx, dag_id, &err), &err);
	else
		reply_problem_no_route(req);
}

void airflow_get_tasks(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m)
{
	const struct dag_api_ops *ops = rc->dag_ops;
	void *ctx = rc->dag_ctx;
	const char *dag_id = route_match_param(m, "dag_id");
	struct weir_error err = {0};

	if (!airflow_path_ids_ok(req, m, false, false))
		return;
	if (ops->dag_tasks)
		reply_problem_result(req, dag_answer_dag_tasks(ops, ctx, dag_id, &err), &err);
	else
		reply_problem_no_route(req);
}

void airflow_post_clear_task_instances(const struct route_ctx *rc, struct http_request *req,
                                       const struct route_match *m)
{
	if (airflow_path_ids_ok(req, m, false, false))
		route_clear(rc->dag_ops, rc->dag_ctx, req, route_match_param(m, "dag_id"));
}

/* "~" as the dag_id: the runs of every DAG */
void airflow_get_dag_runs(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m)
{
	if (airflow_path_ids_ok(req, m, true, false))
		airflow_list_runs(rc->dag_ops, rc->dag_ctx, req, route_match_param(m, "dag_id"));
}

void airflow_post_dag_run(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m)
{
	if (airflow_path_ids_ok(req, m, false, false))
		route_trigger(rc->dag_ops, rc->dag_ctx, req, route_match_param(m, "dag_id"));
}

void airflow_get_dag_runs_batch(const struct route_ctx *rc, struct http_request *req,
                                const struct route_match *m)
{
	(void)m;
	airflow_list_runs_batch(rc->dag_ops, rc->dag_ctx, req);
}

void airflow_get_dag_run(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m)
{
	if (airflow_path_ids_ok(req, m, false, false))
		get_run(rc->dag_ops, rc->dag_ctx, req, route_match_param(m, "dag_id"),
		        route_match_param(m, "dag_run_id"));
}

void airflow_update_dag_run_state(const struct route_ctx *rc, struct http_request *req,
                                  const struct route_match *m)
{
	if (airflow_path_ids_ok(req, m, false, false))
		route_patch_run(rc->dag_ops, rc->dag_ctx, req, route_match_param(m, "dag_id"),
		                route_match_param(m, "dag_run_id"));
}

/* "~" as the dag_id and the run id: the task instances of every run */
void airflow_get_task_instances(const struct route_ctx *rc, struct http_request *req,
                                const struct route_match *m)
{
	if (airflow_path_ids_ok(req, m, true, true))
		airflow_list_tis(rc->dag_ops, rc->dag_ctx, req, route_match_param(m, "dag_id"),
		                 route_match_param(m, "dag_run_id"));
}

void airflow_get_task_instances_batch(const struct route_ctx *rc, struct http_request *req,
                                      const struct route_match *m)
{
	(void)m;
	airflow_list_tis_batch(rc->dag_ops, rc->dag_ctx, req);
}

/* GET of a task instance, or of its tries (without that op, no such route):
 * map_index from the query (default -1) or the path. */
static void get_ti(const struct route_ctx *rc, struct http_request *req,
                   const struct route_match *m, bool mapped, bool tries)
{
	const struct dag_api_ops *ops = rc->dag_ops;
	void *ctx = rc->dag_ctx;
	struct weir_error err = {0};
	const char *seg[8];
	int map_index;

	airflow_path_segments(m, seg);
	if (!airflow_path_ids_ok(req, m, false, false))
		return;
	if (tries && !ops->ti_tries) {
		reply_problem_no_route(req);
		return;
	}
	if (mapped ? !airflow_path_number(req, "map_index", seg[6], 0, &map_index)
	           : !airflow_map_index_query(req, &map_index))
		return;
	if (tries)
		reply_problem_result(
		    req, dag_answer_ti_tries(ops, ctx, seg[1], seg[3], seg[5], map_index, &err),
		    &err);
	else
		reply_problem_result(
		    req, dag_answer_get_ti(ops, ctx, seg[1], seg[3], seg[5], map_index, &err),
		    &err);
}

void airflow_get_task_instance(const struct route_ctx *rc, struct http_request *req,
                               const struct route_match *m)
{
	get_ti(rc, req, m, false, false);
}

void airflow_get_mapped_task_instance(const struct route_ctx *rc, struct http_request *req,
                                      const struct route_match *m)
{
	get_ti(rc, req, m, true, false);
}

void airflow_get_task_instance_tries(const struct route_ctx *rc, struct http_request *req,
                                     const struct route_match *m)
{
	get_ti(rc, req, m, false, true);
}

void airflow_get_mapped_task_instance_tries(const struct route_ctx *rc, struct http_request *req,
                                            const struct route_match *m)
{
	get_ti(rc, req, m, true, true);
}

void airflow_get_log(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m)
{
	const char *seg[8];

	airflow_path_segments(m, seg);
	if (airflow_path_ids_ok(req, m, false, false))
		airflow_logs_route(rc->dag_ops, rc->dag_ctx, rc->jobs.logs, req, seg);
}

void airflow_get_import_errors(const struct route_ctx *rc, struct http_request *req,
                               const struct route_match *m)
{
	(void)m;
	airflow_list_import_errors(rc->dag_ops, rc->dag_ctx, req);
}

/* A map index in the path: digits (a '-' in front is a bad one). */
static bool looks_like_index(const char *s)
{
	if (*s == '-')
		s++;
	return *s && strspn(s, "0123456789") == strlen(s);
}

void airflow_unmatched(const struct dag_api_ops *ops, struct http_request *req, char **seg, int n)
{
	bool tis = n >= 7 && !strcmp(seg[2], "dagRuns") && !strcmp(seg[4], "taskInstances");
	int v;

	if (!strcmp(seg[0], "importErrors")) {
		/* /importErrors/{not a number} */
		if (n != 2 || !ops->admin)
			reply_problem_no_route(req);
		else if (!request_method_is(req, "GET"))
			reply_problem_no_method(req);
		else
			reply_problemf(
			    req, 400, "import_error_id \"%.40s\": expected a whole number", seg[1]);
		return;
	}
	if (n >= 2 && !airflow_check_id_or_all(req, "dag_id", seg[1], false))
		return;
	if (n >= 4 && !strcmp(seg[2], "dagRuns") &&
	    !airflow_check_id_or_all(req, "dag_run_id", seg[3], false))
		return;
	if (!tis) {
		reply_problem_no_route(req);
		return;
	}
	/* a task instance's path with a bad number in it: its 400 */
	if (!airflow_check_id(req, "task_id", seg[5]))
		return;
	if ((looks_like_index(seg[6]) || (n == 8 && !strcmp(seg[7], "tries"))) &&
	    !airflow_path_number(req, "map_index", seg[6], 0, &v))
		return;
	if (n == 8 && !strcmp(seg[6], "logs") &&
	    !airflow_path_number(req, "try_number", seg[7], 1, &v))
		return;
	if (n == 8 && !strcmp(seg[6], "tries") &&
	    !airflow_path_number(req, "task_try_number", seg[7], 1, &v))
		return;
	if (n == 9 && !strcmp(seg[7], "tries") &&
	    !airflow_path_number(req, "task_try_number", seg[8], 1, &v))
		return;
	reply_problem_no_route(req);
}
