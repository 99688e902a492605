/* ui_routes.c: the web UI's workflow views (ui_routes.h). */
#include "api/ui/ui_routes.h"

#include <string.h>

#include "api/airflow/airflow_request.h"
#include "api/dag_answers.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"
#include "api/route_match.h"

#define UI_RUNS_DEFAULT 25
#define UI_RUNS_MAX 365

/* limit for the UI's run windows: default 25, more than 365 is cut to 365 (as
 * Airflow cuts its page limits), 0 means the default. */
static bool ui_limit_query(struct http_request *req, int *limit)
{
	const char *l = http_request_query(req, "limit");
	int64_t v;

	*limit = UI_RUNS_DEFAULT;
	if (!l)
		return true;
	if (api_parse_int(l, 0, 1000000000L, &v) < 0) {
		reply_problemf(req, 400, "limit \"%.40s\": expected a whole number of runs >= 0",
		               l);
		return false;
	}
	*limit = v == 0 ? UI_RUNS_DEFAULT : v > UI_RUNS_MAX ? UI_RUNS_MAX : (int)v;
	return true;
}

/* The UI's views are optional ops: a server without them has no such route. */
static bool ui_views(const struct dag_api_ops *ops, struct http_request *req)
{
	if (ops->ui_dags && ops->ui_grid && ops->ui_stats)
		return true;
	reply_problem_no_route(req);
	return false;
}

void ui_data_dags(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	const struct dag_api_ops *ops = rc->dag_ops;
	void *ctx = rc->dag_ctx;
	struct weir_error err = {0};
	struct dag_reader rd = airflow_reader(req, ACCESS_READ);
	int limit, offset;

	(void)m;
	if (ui_views(ops, req) && airflow_page_query(req, &limit, &offset))
		reply_problem_result(req, dag_answer_ui_dags(ops, ctx, &rd, limit, offset, &err),
		                     &err);
}

/* GET of a DAG's grid or its statistics over its last runs */
static void dag_window(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m, bool grid)
{
	const struct dag_api_ops *ops = rc->dag_ops;
	void *ctx = rc->dag_ctx;
	const char *dag_id = route_match_param(m, "dag_id");
	struct weir_error err = {0};
	int limit;

	if (!ui_views(ops, req) || !airflow_check_id(req, "dag_id", dag_id) ||
	    !ui_limit_query(req, &limit))
		return;
	if (grid)
		reply_problem_result(req, dag_answer_ui_grid(ops, ctx, dag_id, limit, &err), &err);
	else
		reply_problem_result(req, dag_answer_ui_stats(ops, ctx, dag_id, limit, &err), &err);
}

void ui_data_grid(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	dag_window(rc, req, m, true);
}

void ui_data_stats(const struct route_ctx *rc, struct http_request *req,
                   const struct route_match *m)
{
	dag_window(rc, req, m, false);
}
