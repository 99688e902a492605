/* routes.c: the route table's entries (routes.h): each group's handler in
 * the one signature, and the paths the groups that read raw paths claim.
 */
#include "api/routes.h"

#include <string.h>

#include "api/airflow/airflow.h"
#include "api/airflow/airflow_misc.h"
#include "api/airflow/conn_routes.h"
#include "api/airflow/dataset_routes.h"
#include "api/airflow/event_log_routes.h"
#include "api/airflow/notify_routes.h"
#include "api/jobs_routes.h"
#include "api/launch_routes.h"
#include "api/metrics_route.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/ui/ui_assets.h"
#include "api/ui/ui_auth.h"
#include "api/ui/ui_routes.h"

/* ---- outside /api/v1 ---- */

static void handle_ui_login(const struct route_ctx *rc, struct http_request *req, char **seg, int n)
{
	(void)seg;
	(void)n;
	ui_auth_handle(rc->ui, req, rc->token, rc->gate);
}

const struct route_entry route_ui_login = {"ui_login", handle_ui_login, ROUTE_OPEN | ROUTE_ROOT,
                                           ui_auth_owns};

static void handle_ui_files(const struct route_ctx *rc, struct http_request *req, char **seg, int n)
{
	(void)rc;
	(void)seg;
	(void)n;
	ui_assets_handle(req);
}

const struct route_entry route_ui_files = {"ui_files", handle_ui_files, ROUTE_OPEN | ROUTE_ROOT,
                                           ui_assets_owns};

/* the API's credentials: Prometheus sends the token (docs/metrics.md) */
static void handle_metrics(const struct route_ctx *rc, struct http_request *req, char **seg, int n)
{
	(void)seg;
	(void)n;
	metrics_route_handle(rc->observe_ops, rc->observe_ctx, rc->version, req);
}

static bool metrics_claims(const char *path)
{
	return !strcmp(path, "/metrics");
}

const struct route_entry route_metrics = {"metrics", handle_metrics, ROUTE_ROOT, metrics_claims};

/* ---- /api/v1 ---- */

static void handle_health(const struct route_ctx *rc, struct http_request *req, char **seg, int n)
{
	struct api_health st = {0};
	json_t *h;

	(void)seg;
	(void)n;
	if (!request_method_is(req, "GET")) {
		reply_no_method(req);
		return;
	}
	h = json_pack("{s:s, s:s}", "status", "ok", "version", rc->version);
	if (rc->health)
		rc->health(rc->health_ctx, &st);
	if (h)
		airflow_health_add(h, rc->health ? &st : NULL);
	http_request_respond_json(req, 200, h);
}

const struct route_entry route_health = {"health", handle_health, ROUTE_OPEN, NULL};

static void handle_jobs(const struct route_ctx *rc, struct http_request *req, char **seg, int n)
{
	jobs_routes_handle(&rc->jobs, req, seg, n);
}

const struct route_entry route_jobs = {"jobs", handle_jobs, 0, NULL};

/* a task's launcher, by its own secret: no API principal (launch_routes.c) */
static void handle_launch(const struct route_ctx *rc, struct http_request *req, char **seg, int n)
{
	launch_routes_handle(&rc->jobs, req, seg, n);
}

const struct route_entry route_launch = {"launch", handle_launch, ROUTE_OPEN, NULL};

static void handle_airflow(const struct route_ctx *rc, struct http_request *req, char **seg, int n)
{
	airflow_handle(rc->dag_ops, rc->dag_ctx, rc->jobs.logs, req, seg, n);
}

const struct route_entry route_airflow = {"airflow", handle_airflow, 0, NULL};

static void handle_airflow_misc(const struct route_ctx *rc, struct http_request *req, char **seg,
                                int n)
{
	airflow_misc_handle(rc->dag_ops, rc->dag_ctx, rc->config_view, rc->version, req, seg, n);
}

const struct route_entry route_airflow_misc = {"airflow_misc", handle_airflow_misc, 0, NULL};

static void handle_connections(const struct route_ctx *rc, struct http_request *req, char **seg,
                               int n)
{
	conn_routes_handle(rc->secrets_ops, rc->secrets_ctx, rc->conn_tests, req, seg, n);
}

const struct route_entry route_connections = {"connections", handle_connections, 0, NULL};

static void handle_event_log(const struct route_ctx *rc, struct http_request *req, char **seg,
                             int n)
{
	event_log_routes_handle(rc->observe_ops, rc->observe_ctx, req, seg, n);
}

const struct route_entry route_event_log = {"event_log", handle_event_log, 0, NULL};

static void handle_ui_data(const struct route_ctx *rc, struct http_request *req, char **seg, int n)
{
	ui_routes_handle(rc->dag_ops, rc->dag_ctx, req, seg, n);
}

const struct route_entry route_ui_data = {"ui_data", handle_ui_data, 0, NULL};

static void handle_notify(const struct route_ctx *rc, struct http_request *req, char **seg, int n)
{
	notify_routes_handle(rc->notify_ops, rc->notify_ctx, req, seg, n);
}

const struct route_entry route_notify = {"notify", handle_notify, 0, NULL};

static void handle_datasets(const struct route_ctx *rc, struct http_request *req, char **seg, int n)
{
	(void)seg;
	(void)n;
	dataset_routes_handle(rc->dataset_ops, rc->dataset_ctx, req, http_request_path(req) + 7);
}

static bool datasets_claims(const char *path)
{
	return !strncmp(path, "/api/v1/", 8) && dataset_routes_owns(path + 7);
}

const struct route_entry route_datasets = {"datasets", handle_datasets, ROUTE_WHOLE_PATH,
                                           datasets_claims};
