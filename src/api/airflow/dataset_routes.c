/* dataset_routes.c: the dataset routes (dataset_routes.h).
 *
 * The path is read whole, not split: a dataset URI is the rest of it.
 * Ids from the path are checked against Airflow's character set, query
 * parameters against each route's list, numbers read here; the body is a
 * JSON object of known fields, checked field by field by the server.
 */
#include "api/airflow/dataset_routes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/airflow/airflow_request.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/route_ctx.h"

#define ID_BUF (AIRFLOW_ID_MAX + 2)

/* The parts of a dataset route's path. */
enum dataset_route {
	DR_NONE = 0,
	DR_LIST,      /* /datasets */
	DR_ONE,       /* /datasets/{uri} */
	DR_EVENTS,    /* /datasets/events */
	DR_URI_QUEUE, /* /datasets/queuedEvent/{uri} */
	DR_DAG_QUEUE, /* /dags/{dag_id}/datasets/queuedEvent[/{uri}] */
	DR_UPSTREAM,  /* /dags/{dag_id}/dagRuns/{run_id}/upstreamDatasetEvents */
};

struct dataset_path {
	enum dataset_route route;
	char dag_id[ID_BUF];
	char run_id[ID_BUF];
	const char *uri; /* into the path; NULL when none */
};

/* One segment (no '/') of at most ID_BUF - 1 characters at *p into out;
 * *p moved past it.  false when empty or too long. */
static bool take_segment(const char **p, char *out)
{
	size_t n = strcspn(*p, "/");

	if (n == 0 || n >= ID_BUF)
		return false;
	memcpy(out, *p, n);
	out[n] = '\0';
	*p += n;
	return true;
}

static bool starts(const char **p, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(*p, prefix, n))
		return false;
	*p += n;
	return true;
}

static enum dataset_route parse_path(const char *path, struct dataset_path *dp)
{
	const char *p = path;

	memset(dp, 0, sizeof *dp);
	if (starts(&p, "/datasets")) {
		if (!*p)
			return dp->route = DR_LIST;
		if (*p++ != '/' || !*p)
			return DR_NONE;
		if (!strcmp(p, "events"))
			return dp->route = DR_EVENTS;
		if (starts(&p, "queuedEvent/")) {
			dp->uri = *p ? p : NULL;
			return dp->route = *p ? DR_URI_QUEUE : DR_NONE;
		}
		dp->uri = p;
		return dp->route = DR_ONE;
	}
	if (!starts(&p, "/dags/") || !take_segment(&p, dp->dag_id))
		return DR_NONE;
	if (starts(&p, "/datasets/queuedEvent")) {
		if (!*p)
			return dp->route = DR_DAG_QUEUE;
		if (*p++ != '/' || !*p)
			return DR_NONE;
		dp->uri = p;
		return dp->route = DR_DAG_QUEUE;
	}
	if (starts(&p, "/dagRuns/") && take_segment(&p, dp->run_id) &&
	    !strcmp(p, "/upstreamDatasetEvents"))
		return dp->route = DR_UPSTREAM;
	return DR_NONE;
}

bool dataset_routes_owns(const char *path)
{
	struct dataset_path dp;

	if (!path)
		return false;
	/* /datasets/ and the like are ours to answer with a 404 */
	if (!strncmp(path, "/datasets", 9) && (!path[9] || path[9] == '/'))
		return true;
	return parse_path(path, &dp) != DR_NONE;
}

/* ---- the routes ---- */

static bool read_int(struct http_request *req, const char *key, int64_t min, int64_t max, bool *has,
                     int64_t *out)
{
	const char *v = http_request_query(req, key);

	*has = v != NULL;
	if (!v)
		return true;
	if (api_parse_int(v, min, max, out) == 0)
		return true;
	reply_problemf(req, 400, "%s: expected an integer, got \"%.60s\"", key, v);
	return false;
}

static void route_list(const struct dataset_api_ops *ops, void *ctx, struct http_request *req)
{
	static const char *const allowed[] = {"limit",       "offset",  "order_by",
	                                      "uri_pattern", "dag_ids", NULL};
	struct dataset_list_params q = {0};
	struct weir_error err = {0};

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &q.limit, &q.offset))
		return;
	q.order_by = http_request_query(req, "order_by");
	q.uri_pattern = http_request_query(req, "uri_pattern");
	q.dag_ids = http_request_query(req, "dag_ids");
	reply_problem_result(req, ops->list(ctx, &q, &err), &err);
}

static void route_events(const struct dataset_api_ops *ops, void *ctx, struct http_request *req)
{
	static const char *const allowed[] = {"limit",         "offset",           "order_by",
	                                      "dataset_id",    "source_dag_id",    "source_task_id",
	                                      "source_run_id", "source_map_index", NULL};
	struct dataset_event_params q = {0};
	struct weir_error err = {0};
	int64_t v = 0;
	bool has;

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &q.limit, &q.offset) ||
	    !read_int(req, "dataset_id", 1, INT64_MAX, &has, &v))
		return;
	q.dataset_id = has ? v : 0;
	if (!read_int(req, "source_map_index", -1, 1000000, &has, &v))
		return;
	q.has_map_index = has;
	q.source_map_index = (int)v;
	q.order_by = http_request_query(req, "order_by");
	q.source_dag_id = http_request_query(req, "source_dag_id");
	q.source_task_id = http_request_query(req, "source_task_id");
	q.source_run_id = http_request_query(req, "source_run_id");
	reply_problem_result(req, ops->events(ctx, &q, &err), &err);
}

static void route_create_event(const struct dataset_api_ops *ops, void *ctx,
                               struct http_request *req)
{
	static const char *const fields[] = {"dataset_uri", "extra", NULL};
	struct weir_error err = {0};
	json_t *body;

	if (!(body = airflow_read_body(req, fields)))
		return;
	reply_problem_result(req, ops->create_event(ctx, body, &err), &err);
	json_decref(body);
}

/* GET (del false) or DELETE of the queued events of a URI, of a DAG, or of both. */
static void route_queue(const struct dataset_api_ops *ops, void *ctx, struct http_request *req,
                        const char *dag_id, const char *uri, bool del)
{
	static const char *const allowed[] = {"before", NULL};
	struct weir_error err = {0};
	const char *before = http_request_query(req, "before");

	if (!airflow_query_known(req, allowed))
		return;
	if (!del) {
		reply_problem_result(req, ops->queued(ctx, dag_id, uri, before, &err), &err);
	} else {
		if (ops->delete_queued(ctx, dag_id, uri, before, &err) < 0)
			reply_problem_error(req, &err);
		else
			http_request_respond_static(req, 204, "application/json", "", 0);
	}
}

/* ---- the operations (api/route_table.c's rows) ---- */

/* The row matched the path's segments; the raw path (a URI keeps its
 * slashes, a trailing '/' is no route) must be the same route, else 404. */
static bool path_is(struct http_request *req, enum dataset_route want, struct dataset_path *dp)
{
	if (parse_path(http_request_path(req) + 7, dp) == want)
		return true;
	reply_problem_no_route(req);
	return false;
}

void airflow_get_datasets(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m)
{
	struct dataset_path dp;

	(void)m;
	if (path_is(req, DR_LIST, &dp))
		route_list(rc->dataset_ops, rc->dataset_ctx, req);
}

void airflow_get_dataset(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m)
{
	static const char *const none[] = {NULL};
	const struct dataset_api_ops *ops = rc->dataset_ops;
	void *ctx = rc->dataset_ctx;
	struct weir_error err = {0};
	struct dataset_path dp;

	(void)m;
	if (path_is(req, DR_ONE, &dp) && airflow_query_known(req, none))
		reply_problem_result(req, ops->get(ctx, dp.uri, &err), &err);
}

void airflow_get_dataset_events(const struct route_ctx *rc, struct http_request *req,
                                const struct route_match *m)
{
	struct dataset_path dp;

	(void)m;
	if (path_is(req, DR_EVENTS, &dp))
		route_events(rc->dataset_ops, rc->dataset_ctx, req);
}

void airflow_create_dataset_event(const struct route_ctx *rc, struct http_request *req,
                                  const struct route_match *m)
{
	struct dataset_path dp;

	(void)m;
	if (path_is(req, DR_EVENTS, &dp))
		route_create_event(rc->dataset_ops, rc->dataset_ctx, req);
}

static void uri_queue(const struct route_ctx *rc, struct http_request *req, bool del)
{
	struct dataset_path dp;

	if (path_is(req, DR_URI_QUEUE, &dp))
		route_queue(rc->dataset_ops, rc->dataset_ctx, req, NULL, dp.uri, del);
}

void airflow_get_dataset_queued_events(const struct route_ctx *rc, struct http_request *req,
                                       const struct route_match *m)
{
	(void)m;
	uri_queue(rc, req, false);
}

void airflow_delete_dataset_queued_events(const struct route_ctx *rc, struct http_request *req,
                                          const struct route_match *m)
{
	(void)m;
	uri_queue(rc, req, true);
}

/* a DAG's queued events, of every URI or of one */
static void dag_queue(const struct route_ctx *rc, struct http_request *req, bool del)
{
	struct dataset_path dp;

	if (path_is(req, DR_DAG_QUEUE, &dp) && airflow_check_id(req, "dag_id", dp.dag_id))
		route_queue(rc->dataset_ops, rc->dataset_ctx, req, dp.dag_id, dp.uri, del);
}

void airflow_get_dag_dataset_queued_events(const struct route_ctx *rc, struct http_request *req,
                                           const struct route_match *m)
{
	(void)m;
	dag_queue(rc, req, false);
}

void airflow_delete_dag_dataset_queued_events(const struct route_ctx *rc, struct http_request *req,
                                              const struct route_match *m)
{
	(void)m;
	dag_queue(rc, req, true);
}

void airflow_get_dag_dataset_queued_event(const struct route_ctx *rc, struct http_request *req,
                                          const struct route_match *m)
{
	(void)m;
	dag_queue(rc, req, false);
}

void airflow_delete_dag_dataset_queued_event(const struct route_ctx *rc, struct http_request *req,
                                             const struct route_match *m)
{
	(void)m;
	dag_queue(rc, req, true);
}

void airflow_get_upstream_dataset_events(const struct route_ctx *rc, struct http_request *req,
                                         const struct route_match *m)
{
	static const char *const none[] = {NULL};
	const struct dataset_api_ops *ops = rc->dataset_ops;
	void *ctx = rc->dataset_ctx;
	struct weir_error err = {0};
	struct dataset_path dp;

	(void)m;
	if (path_is(req, DR_UPSTREAM, &dp) && airflow_check_id(req, "dag_id", dp.dag_id) &&
	    airflow_check_id(req, "dag_run_id", dp.run_id) && airflow_query_known(req, none))
		reply_problem_result(req, ops->upstream_events(ctx, dp.dag_id, dp.run_id, &err),
		                     &err);
}
