/* notify_routes.c: the notification and SLA-miss routes (notify_routes.h):
 * the path's ids checked, the query read, the op answered. */
#include "api/airflow/notify_routes.h"

#include "api/airflow/airflow_request.h"
#include "api/reply.h"
#include "api/route_ctx.h"
#include "api/route_match.h"

/* notes: the notifications, else the SLA misses; of a run where the path
 * names one. */
static void list(const struct route_ctx *rc, struct http_request *req, const struct route_match *m,
                 bool notes)
{
	const struct notify_api_ops *ops = rc->notify_ops;
	void *ctx = rc->notify_ctx;
	static const char *const top[] = {"dag_id", "dag_run_id", "state", "limit", "offset", NULL};
	static const char *const top_sla[] = {"dag_id", "dag_run_id", "limit", "offset", NULL};
	static const char *const of_run[] = {"state", "limit", "offset", NULL};
	static const char *const of_run_sla[] = {"limit", "offset", NULL};
	const char *dag_id = route_match_param(m, "dag_id");
	bool of_a_run = dag_id != NULL;
	struct notify_api_query q = {0};
	struct weir_error err = {0};

	if (!ops) {
		reply_problem(req, 503, "notifications are not available");
		return;
	}
	if (of_a_run) {
		q.dag_id = dag_id;
		q.run_id = route_match_param(m, "dag_run_id");
		if (!airflow_check_id(req, "dag_id", q.dag_id) ||
		    !airflow_check_id(req, "dag_run_id", q.run_id))
			return;
	} else {
		q.dag_id = http_request_query(req, "dag_id");
		q.run_id = http_request_query(req, "dag_run_id");
		if ((q.dag_id && !airflow_check_id(req, "dag_id", q.dag_id)) ||
		    (q.run_id && !airflow_check_id(req, "dag_run_id", q.run_id)))
			return;
	}
	if (!airflow_query_known(req, of_a_run ? (notes ? of_run : of_run_sla)
	                              : notes  ? top
	                                       : top_sla) ||
	    !airflow_page_query(req, &q.limit, &q.offset))
		return;
	q.state = notes ? http_request_query(req, "state") : NULL;
	reply_problem_result(req,
	                     notes ? ops->list_notifications(ctx, &q, &err)
	                           : ops->list_sla_misses(ctx, &q, &err),
	                     &err);
}

void notify_list(const struct route_ctx *rc, struct http_request *req, const struct route_match *m)
{
	list(rc, req, m, true);
}

void notify_sla_misses(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m)
{
	list(rc, req, m, false);
}
