/* admin_ops.h: the DAG manager's ops of api/dag_admin_api.h (the rest
 * of Airflow's operations), one file per concern: admin_ops.c (the
 * changes: marks, clears and deletions, and the table), read_ops.c
 * (the reads); pools are pool_admin.c's (dm_internal.h).  Not for use outside
 * src/server/dag_manager/.
 */
#ifndef WEIR_SERVER_DAG_MANAGER_ADMIN_OPS_H
#define WEIR_SERVER_DAG_MANAGER_ADMIN_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "api/dag_admin_api.h"
#include "api/dag_api.h"
#include "lib/error.h"

/* read_ops.c */
json_t *dm_op_get_task(void *ctx, const char *dag_id, const char *task_id, struct weir_error *err);
json_t *dm_op_dag_stats(void *ctx, const char *const *dag_ids, size_t n, struct weir_error *err);
int dm_op_dag_source(void *ctx, const char *dag_id, char **text, size_t *len,
                     struct weir_error *err);
int dm_op_reparse(void *ctx, const char *dag_id, struct weir_error *err);
json_t *dm_op_import_error(void *ctx, const struct dag_reader *rd, long long id,
                           struct weir_error *err);
json_t *dm_op_xcom_list(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                        int map_index, const char *key, int limit, int offset,
                        struct weir_error *err);
json_t *dm_op_xcom_get(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                       int map_index, const char *key, bool stringify, struct weir_error *err);
json_t *dm_op_ti_deps(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                      int map_index, struct weir_error *err);
json_t *dm_op_ti_links(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                       int map_index, struct weir_error *err);
json_t *dm_op_task_read_runs(void *ctx, const char *dag_id, const int64_t *logical_ms, size_t n,
                             struct weir_error *err);
json_t *dm_op_list_mapped(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                          struct dag_ti_list_query *q, struct weir_error *err);

#endif
