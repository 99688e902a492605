/* route_ctx.h: the context every operation of the route table
 * (api/route_table.h) is given: the api's ops tables and the waiting it
 * owns.  The route groups include this and api/route_match.h, never the
 * table, which names their operations.
 */
#ifndef WEIR_API_ROUTE_CTX_H
#define WEIR_API_ROUTE_CTX_H

#include <stdbool.h>

#include <jansson.h>

#include "api/dag_api.h"
#include "api/http.h"
#include "api/job_api.h"
#include "api/observe_api.h"
#include "api/secrets_api.h"

struct auth_gate;
struct ui_auth;
struct conn_tests;
struct db_clean_api_ops;
struct users_api_ops;
struct dataset_api_ops;
struct notify_api_ops;

/* What the route groups answer through: the api's ops tables and the
 * waiting it owns (api.h's setters fill it in). */
struct route_ctx {
	char *token;                       /* the API's Bearer token */
	const char *version;               /* API_VERSION (api.h) */
	struct job_routes jobs;            /* the job manager's ops, polls and logs */
	const struct dag_api_ops *dag_ops; /* NULL: workflow routes answer 503 */
	void *dag_ctx;
	struct auth_gate *gate; /* HTTP Basic users and their checks off the loop */
	struct ui_auth *ui;     /* the web UI's sessions */
	const struct secrets_api_ops *secrets_ops; /* NULL: connection routes answer 503 */
	void *secrets_ctx;
	const struct notify_api_ops *notify_ops; /* NULL: notification routes answer 503 */
	void *notify_ctx;
	struct conn_tests *conn_tests;             /* POST /connections/test in progress */
	const struct dataset_api_ops *dataset_ops; /* NULL: dataset routes answer 503 */
	void *dataset_ctx;
	json_t *config_view;  /* GET /config (airflow_misc.h); NULL: not exposed */
	api_health_fn health; /* NULL: health unknown */
	void *health_ctx;
	const struct observe_api_ops *observe_ops; /* NULL: no gauges, no event log */
	void *observe_ctx;
	const struct db_clean_api_ops *db_clean_ops; /* NULL: POST /weir/dbClean answers 503 */
	void *db_clean_ctx;
	const struct users_api_ops
	    *users_ops; /* NULL: no person's tokens, /weir/users answers 503 */
	void *users_ctx;
};

#endif
