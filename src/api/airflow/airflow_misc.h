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

struct route_ctx;
struct route_match;

/* The operations of the route table's rows outside /dags (api/route_table.c),
 * as Airflow's operationIds name them.  The pools, statistics, sources and
 * re-parse are the DAG manager's: 503 without one.  The configuration is
 * a 403 where the server exposes none. */
void airflow_get_pools(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m);
void airflow_post_pool(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m);
void airflow_get_pool(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m);
void airflow_patch_pool(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m);
void airflow_delete_pool(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m);
void airflow_get_dag_stats(const struct route_ctx *rc, struct http_request *req,
                           const struct route_match *m);
void airflow_get_dag_warnings(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m);
void airflow_get_dag_source(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m);
void airflow_reparse_dag_file(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m);
void airflow_get_providers(const struct route_ctx *rc, struct http_request *req,
                           const struct route_match *m);
void airflow_get_plugins(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m);
void airflow_get_config(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m);
void airflow_get_value(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m);
void airflow_get_version(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m);

#endif
