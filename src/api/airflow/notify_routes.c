/* notify_routes.c: the notification and SLA-miss routes (notify_routes.h):
 * the path's ids checked, the query read, the op answered. */
#include "api/airflow/notify_routes.h"

#include <string.h>

#include "api/airflow/airflow_request.h"
#include "api/reply.h"

void notify_routes_handle(const struct notify_api_ops *ops, void *ctx, struct http_request *req,
                          char **seg, int n)
{
	static const char *const top[] = {"dag_id", "dag_run_id", "state", "limit", "offset", NULL};
	static const char *const top_sla[] = {"dag_id", "dag_run_id", "limit", "offset", NULL};
	static const char *const of_run[] = {"state", "limit", "offset", NULL};
	static const char *const of_run_sla[] = {"limit", "offset", NULL};
	const char *leaf = seg[n - 1];
	bool notes = !strcmp(leaf, "notifications");
	struct notify_api_query q = {0};
	struct weir_error err = {0};

	if (strcmp(http_request_method(req), "GET")) {
		reply_problem_no_method(req);
		return;
	}
	if (!ops) {
		reply_problem(req, 503, "notifications are not available");
		return;
	}
	if (n == 5) {
		if (!airflow_check_id(req, "dag_id", seg[1]) ||
		    !airflow_check_id(req, "dag_run_id", seg[3]))
			return;
		q.dag_id = seg[1];
		q.run_id = seg[3];
	} else {
		q.dag_id = http_request_query(req, "dag_id");
		q.run_id = http_request_query(req, "dag_run_id");
		if ((q.dag_id && !airflow_check_id(req, "dag_id", q.dag_id)) ||
		    (q.run_id && !airflow_check_id(req, "dag_run_id", q.run_id)))
			return;
	}
	if (!airflow_query_known(req, n == 5  ? (notes ? of_run : of_run_sla)
	                              : notes ? top
	                                      : top_sla) ||
	    !airflow_page_query(req, &q.limit, &q.offset))
		return;
	q.state = notes ? http_request_query(req, "state") : NULL;
	reply_problem_result(req,
	                     notes ? ops->list_notifications(ctx, &q, &err)
	                           : ops->list_sla_misses(ctx, &q, &err),
	                     &err);
}
