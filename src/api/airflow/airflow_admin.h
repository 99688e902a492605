/* airflow_admin.h: the routes of Airflow's stable REST API v1 under
 * /api/v1/dags and /api/v1/importErrors that api/airflow.h's group does not
 * answer: PATCH /dags, DELETE /dags/{dag_id}, POST
 * /dags/{dag_id}/updateTaskInstancesState, GET /dags/{dag_id}/tasks/{task_id},
 * DELETE and clear of a run, PATCH of a task instance (and its mapped
 * form), its xcomEntries, dependencies, links, listMapped and tries/{n},
 * and GET /importErrors/{id} (docs/api.md).  What runs behind them is
 * ops->admin (api/dag_admin_api.h).
 */
#ifndef WEIR_API_AIRFLOW_ADMIN_H
#define WEIR_API_AIRFLOW_ADMIN_H

#include <stdbool.h>

#include "api/dag_admin_api.h"
#include "api/dag_api.h"
#include "api/http.h"

struct route_ctx;
struct route_match;

/* The operations of the route table's /dags rows that change things or
 * read what dag_api.h's ops do not (api/route_table.c), as Airflow's
 * operationIds name them.  Each checks the path's ids and numbers (a 400)
 * first; a server without the admin ops (a test's) answers 405 for a
 * method, 404 for a read. */
void airflow_patch_dags(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m);
void airflow_delete_dag(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m);
void airflow_get_task(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m);
void airflow_post_set_task_instances_state(const struct route_ctx *rc, struct http_request *req,
                                           const struct route_match *m);
void airflow_delete_dag_run(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m);
void airflow_clear_dag_run(const struct route_ctx *rc, struct http_request *req,
                           const struct route_match *m);
void airflow_patch_task_instance(const struct route_ctx *rc, struct http_request *req,
                                 const struct route_match *m);
void airflow_patch_mapped_task_instance(const struct route_ctx *rc, struct http_request *req,
                                        const struct route_match *m);
void airflow_get_mapped_task_instances(const struct route_ctx *rc, struct http_request *req,
                                       const struct route_match *m);
void airflow_get_task_instance_dependencies(const struct route_ctx *rc, struct http_request *req,
                                            const struct route_match *m);
void airflow_get_mapped_task_instance_dependencies(const struct route_ctx *rc,
                                                   struct http_request *req,
                                                   const struct route_match *m);
void airflow_get_task_instance_try_details(const struct route_ctx *rc, struct http_request *req,
                                           const struct route_match *m);
void airflow_get_mapped_task_instance_try_details(const struct route_ctx *rc,
                                                  struct http_request *req,
                                                  const struct route_match *m);
void airflow_get_extra_links(const struct route_ctx *rc, struct http_request *req,
                             const struct route_match *m);
void airflow_get_xcom_entries(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m);
void airflow_get_xcom_entry(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m);
void airflow_get_import_error(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m);

#endif
