/* airflow_misc.h: the routes of Airflow's stable REST API v1 outside
 * /dags (docs/api.md): /pools and /pools/{pool_name}, /dagStats,
 * /dagSources/{file_token}, PUT /parseDagFile/{file_token}, /version,
 * /config and /config/section/{section}/option/{option}, /dagWarnings,
 * /plugins and /providers.  Pools, statistics and sources come from
 * ops->admin (api/dag_admin_api.h); the configuration from the view the
 * server gave the router (secrets never in it).
 */
#ifndef WEIR_API_AIRFLOW_MISC_H
#define WEIR_API_AIRFLOW_MISC_H

#include <stdbool.h>

#include <jansson.h>

#include "api/dag_admin_api.h"
#include "api/dag_api.h"
#include "api/http.h"

/* Answers the request.  ops NULL: no DAG manager (pools, stats and sources
 * answer 503); config_view: {"sections":[{name, options:[{key, value}]}]}
 * or NULL (403, as Airflow when expose_config is off); version: weir's. */
void airflow_misc_handle(const struct dag_api_ops *ops, void *ctx, const json_t *config_view,
                         const char *version, struct http_request *req, char **seg, int n);

#endif
