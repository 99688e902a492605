/* ui_routes.c: the web UI's workflow views (ui_routes.h). */
#include "api/ui/ui_routes.h"

#include <string.h>

#include "api/airflow/airflow_request.h"
#include "api/dag_answers.h"
#include "api/reply.h"
#include "api/request.h"

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

/* ui/dags and ui/dags/{dag_id}/grid|stats: what the web UI reads in one request. */
void ui_routes_handle(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                      char **seg, int n)
{
	struct weir_error err = {0};
	int limit, offset;

	if (!ops) {
		reply_problem(req, 503, "this server runs no DAG manager (workflows are off)");
		return;
	}
	if (n < 2 || strcmp(seg[1], "dags") || n == 3 || n > 4 || !ops->ui_dags || !ops->ui_grid ||
	    !ops->ui_stats) {
		reply_problem_no_route(req);
		return;
	}
	if (n == 4 && strcmp(seg[3], "grid") && strcmp(seg[3], "stats")) {
		reply_problem_no_route(req);
		return;
	}
	if (!request_method_is(req, "GET")) {
		reply_problem_no_method(req);
		return;
	}
	if (n == 2) {
		if (airflow_page_query(req, &limit, &offset))
			reply_problem_result(req, dag_answer_ui_dags(ops, ctx, limit, offset, &err),
			                     &err);
		return;
	}
	if (!airflow_check_id(req, "dag_id", seg[2]) || !ui_limit_query(req, &limit))
		return;
	if (!strcmp(seg[3], "grid"))
		reply_problem_result(req, dag_answer_ui_grid(ops, ctx, seg[2], limit, &err), &err);
	else
		reply_problem_result(req, dag_answer_ui_stats(ops, ctx, seg[2], limit, &err), &err);
}
