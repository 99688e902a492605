/* routes.c: the route table's dispatch (route_dispatch()) and entries
 * (both declared in route_table.h): each entry's checks, its answer to the
 * paths no row serves, the paths the entries that read raw paths claim,
 * and the operations of the rows outside the route groups (the UI's files
 * and login, /metrics, /health).
 */
#include <stdio.h>
#include <string.h>

#include "api/airflow/airflow.h"
#include "api/airflow/dataset_routes.h"
#include "api/airflow/event_log_routes.h"
#include "api/dag_gate.h"
#include "api/jobs_routes.h"
#include "api/launch_routes.h"
#include "api/metrics_route.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"
#include "api/route_table.h"
#include "api/ui/ui_assets.h"
#include "api/ui/ui_auth.h"
#include "sched/access.h"

/* ---- the dispatch ---- */

static void no_route(const struct route_entry *e, struct http_request *req)
{
	if (e->flags & ROUTE_PROBLEMS)
		reply_problem_no_route(req);
	else
		reply_no_route(req);
}

/* Whether the request's role may do `method` on the row (sched/access.h);
 * else answers 403 in e's voice, naming the role needed. */
static bool role_ok(const struct route_entry *e, struct http_request *req, int route,
                    const char *method)
{
	enum weir_role need = route_table_role(route, method), have = http_request_role(req);
	char msg[200];

	if (access_allowed(have, need))
		return true;
	snprintf(msg, sizeof msg, "%s %s needs the role %s or above (this user's role is %s)",
	         method, route_table_template(route), role_name(need), role_name(have));
	if (e->flags & ROUTE_PROBLEMS)
		reply_problem(req, 403, msg);
	else
		reply_status(req, 403, msg);
	return false;
}

static enum access_need need_of(const char *method)
{
	return !strcmp(method, "GET") || !strcmp(method, "HEAD") ? ACCESS_READ : ACCESS_EDIT;
}

/* Whether the DAG the path names lets the request do `method` on it (its
 * access list: reading for GET and HEAD, acting for the rest); else
 * answers 403 in e's voice. */
static bool dag_access_ok(const struct route_ctx *rc, const struct route_entry *e,
                          struct http_request *req, const struct route_match *m, const char *method)
{
	return dag_gate_allows(rc, req, route_match_param(m, "dag_id"), need_of(method),
	                       (e->flags & ROUTE_PROBLEMS) != 0);
}

void route_dispatch(const struct route_ctx *rc, const struct route_entry *e,
                    const struct route_match *m, struct http_request *req, char **seg, int n)
{
	const char *method = http_request_method(req);
	route_op_fn op;

	if (route_table_row_entry(m->route) != e || !route_table_served(m->route)) {
		if (e->unmatched)
			e->unmatched(rc, req, seg, n);
		else if (!e->admit || e->admit(rc, req))
			no_route(e, req);
		return;
	}
	if ((e->flags & ROUTE_HEAD_AS_GET) && !strcmp(method, "HEAD"))
		method = "GET";
	op = route_table_op(m->route, method);
	/* the role first: one short of it learns nothing of the entry's state */
	if (op && !role_ok(e, req, m->route, method))
		return;
	if (e->admit && !e->admit(rc, req))
		return;
	if (op && !dag_access_ok(rc, e, req, m, method))
		return;
	if (op)
		op(rc, req, m);
	else if (e->no_method)
		e->no_method(req);
	else if (e->flags & ROUTE_PROBLEMS)
		reply_problem_no_method(req);
	else
		reply_no_method(req);
}

/* ---- outside /api/v1 ---- */

void route_ui_login_post(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m)
{
	(void)m;
	ui_auth_login_route(rc->ui, req, rc->token, rc->gate);
}

void route_ui_logout_post(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m)
{
	(void)m;
	ui_auth_logout_route(rc->ui, req);
}

void route_ui_session_get(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m)
{
	(void)m;
	ui_auth_session_route(rc->ui, req);
}

const struct route_entry route_ui_login = {"ui_login",   NULL, ROUTE_OPEN | ROUTE_ROOT,
                                           ui_auth_owns, NULL, ui_auth_no_method};

/* the UI's files read the raw path (index.html, and /ui/ with its 400) */
void route_ui_file_get(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m)
{
	(void)rc;
	(void)m;
	ui_assets_handle(req);
}

static void ui_files_unmatched(const struct route_ctx *rc, struct http_request *req, char **seg,
                               int n)
{
	(void)seg;
	(void)n;
	route_ui_file_get(rc, req, NULL);
}

const struct route_entry route_ui_files = {
    "ui_files", ui_files_unmatched, ROUTE_OPEN | ROUTE_ROOT | ROUTE_HEAD_AS_GET, ui_assets_owns,
    NULL,       ui_assets_no_method};

/* the API's credentials: Prometheus sends the token (docs/metrics.md) */
void route_metrics_get(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m)
{
	(void)m;
	metrics_route_handle(rc->observe_ops, rc->observe_ctx, rc->version, req);
}

static bool metrics_claims(const char *path)
{
	return !strcmp(path, "/metrics");
}

const struct route_entry route_metrics = {"metrics",      NULL, ROUTE_ROOT | ROUTE_HEAD_AS_GET,
                                          metrics_claims, NULL, NULL};

/* ---- /api/v1 ---- */

void route_health_get(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m)
{
	struct api_health st = {0};
	json_t *h;

	(void)m;
	h = json_pack("{s:s, s:s}", "status", "ok", "version", rc->version);
	if (rc->health)
		rc->health(rc->health_ctx, &st);
	if (h)
		airflow_health_add(h, rc->health ? &st : NULL);
	http_request_respond_json(req, 200, h);
}

const struct route_entry route_health = {"health", NULL, ROUTE_OPEN, NULL, NULL, NULL};

/* What the web UI offers, by the route each action calls: the UI shows an
 * action's control only where GET /ui/me says its role may (ui/js/core.js,
 * may()); the server checks the route all the same. */
static const struct route_ui_action ui_actions[] = {
    {"trigger", "POST", "/api/v1/dags/{dag_id}/dagRuns"},
    {"pause", "PATCH", "/api/v1/dags/{dag_id}"},
    {"clear", "POST", "/api/v1/dags/{dag_id}/clearTaskInstances"},
    {"mark", "PATCH", "/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}"},
    {"note", "PATCH", "/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}/setNote"},
    {"ti_note", "PATCH",
     "/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/setNote"},
    {"delete_run", "DELETE", "/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}"},
    {"delete_dag", "DELETE", "/api/v1/dags/{dag_id}"},
    {"kill_job", "DELETE", "/api/v1/jobs/{job_id}"},
    {"submit_job", "POST", "/api/v1/jobs"},
    {"dataset_event", "POST", "/api/v1/datasets/events"},
    {"pools", "POST", "/api/v1/pools"},
    {"connections", "GET", "/api/v1/connections"},
    {"variables", "GET", "/api/v1/variables"},
    {"db_clean", "POST", "/api/v1/weir/dbClean"},
};

const struct route_ui_action *route_ui_actions(size_t *n)
{
	*n = sizeof ui_actions / sizeof ui_actions[0];
	return ui_actions;
}

void route_ui_me_get(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m)
{
	enum weir_role role = http_request_role(req);
	const char *dag_id = http_request_query(req, "dag_id");
	const struct dag_access *acc = dag_gate_access(rc, dag_id);
	json_t *may = json_object();

	(void)m;
	/* ?dag_id=ID: the actions on that DAG as its access list narrows them too */
	for (size_t i = 0; may && i < sizeof ui_actions / sizeof ui_actions[0]; i++) {
		const struct route_ui_action *a = &ui_actions[i];
		enum weir_role need = route_table_role(route_table_find(a->tpl), a->method);
		bool ok = access_allowed(role, need);
		if (ok && strstr(a->tpl, "{dag_id}"))
			ok = access_dag_allowed(acc, http_request_user(req), role,
			                        need_of(a->method));
		json_object_set_new(may, a->name, json_boolean(ok));
	}
	http_request_respond_json(req, 200,
	                          may ? json_pack("{s:s, s:s, s:o}", "user", http_request_user(req),
	                                          "role", role_name(role), "may", may)
	                              : NULL);
}

/* weir's own; answers without a DAG manager (a server of jobs only) */
const struct route_entry route_ui_me = {"ui_me", NULL, ROUTE_PROBLEMS, NULL, NULL, NULL};

static void jobs_unmatched_entry(const struct route_ctx *rc, struct http_request *req, char **seg,
                                 int n)
{
	jobs_unmatched(&rc->jobs, req, seg, n);
}

const struct route_entry route_jobs = {"jobs", jobs_unmatched_entry, 0, NULL, NULL, NULL};

/* a task's launcher, by its own secret: no API principal (launch_routes.c) */
static bool launch_admit_entry(const struct route_ctx *rc, struct http_request *req)
{
	return launch_admit(&rc->jobs, req);
}

/* a path of /launch that is no row: a 404 before the secret is looked at */
static void launch_unmatched(const struct route_ctx *rc, struct http_request *req, char **seg,
                             int n)
{
	(void)rc;
	(void)seg;
	(void)n;
	reply_no_route(req);
}

const struct route_entry route_launch = {"launch", launch_unmatched,   ROUTE_OPEN,
                                         NULL,     launch_admit_entry, NULL};

static bool dags_admit(const struct route_ctx *rc, struct http_request *req)
{
	if (rc->dag_ops)
		return true;
	reply_problem(req, 503, "this server runs no DAG manager (workflows are off)");
	return false;
}

static void airflow_unmatched_entry(const struct route_ctx *rc, struct http_request *req,
                                    char **seg, int n)
{
	if (dags_admit(rc, req))
		airflow_unmatched(rc->dag_ops, req, seg, n);
}

const struct route_entry route_airflow = {
    "airflow", airflow_unmatched_entry, ROUTE_PROBLEMS, NULL, dags_admit, NULL};

/* version, config, plugins and the like answer without a DAG manager; the
 * pools, sources and statistics say 503 themselves */
const struct route_entry route_airflow_misc = {"airflow_misc", NULL, ROUTE_PROBLEMS,
                                               NULL,           NULL, NULL};

static bool secrets_admit(const struct route_ctx *rc, struct http_request *req)
{
	if (rc->secrets_ops)
		return true;
	reply_problem(req, 503, "this server keeps no connections or variables");
	return false;
}

const struct route_entry route_connections = {"connections", NULL,          ROUTE_PROBLEMS,
                                              NULL,          secrets_admit, NULL};

static bool event_log_admit(const struct route_ctx *rc, struct http_request *req)
{
	const struct observe_api_ops *o = rc->observe_ops;

	if (o && o->event_list && o->event_get)
		return true;
	reply_problem(req, 503, "this server keeps no event log");
	return false;
}

static void event_log_unmatched_entry(const struct route_ctx *rc, struct http_request *req,
                                      char **seg, int n)
{
	if (event_log_admit(rc, req))
		event_log_unmatched(req, seg, n);
}

const struct route_entry route_event_log = {"event_log", event_log_unmatched_entry, ROUTE_PROBLEMS,
                                            NULL,        event_log_admit,           NULL};

const struct route_entry route_ui_data = {"ui_data", NULL, ROUTE_PROBLEMS, NULL, dags_admit, NULL};

/* weir's own voice; a wrong method is a 405 before the clean's absence is a 503 */
const struct route_entry route_db_clean = {"db_clean", NULL, 0, NULL, NULL, NULL};
const struct route_entry route_users = {"users", NULL, 0, NULL, NULL, NULL};

/* a wrong method is a 405 before the notifications' absence is a 503 (the ops say it) */
const struct route_entry route_notify = {"notify", NULL, ROUTE_PROBLEMS, NULL, NULL, NULL};

static bool datasets_admit(const struct route_ctx *rc, struct http_request *req)
{
	if (rc->dataset_ops)
		return true;
	reply_problem(req, 503, "this server keeps no datasets");
	return false;
}

static bool datasets_claims(const char *path)
{
	return !strncmp(path, "/api/v1/", 8) && dataset_routes_owns(path + 7);
}

const struct route_entry route_datasets = {
    "datasets", NULL, ROUTE_WHOLE_PATH | ROUTE_PROBLEMS, datasets_claims, datasets_admit, NULL};
