/* dag_admin_api.h: what the rest of Airflow's stable REST API v1 asks of
 * the server beside dag_api.h's routes: pools, XCom entries over task
 * outputs, marking task instances and runs, clearing and deleting runs,
 * deleting a DAG's records, DAG statistics and sources, a task, a task
 * instance's dependencies and links, one import error (docs/api.md lists
 * every operation).
 *
 * The API layer (api/airflow_admin.c, api/airflow_misc.c) owns the paths,
 * the checks of ids, query parameters and bodies, and the problem+json
 * answers; the server (server/dag_admin_ops.c, server/dag_read_ops.c,
 * server/dag_manager/pool_admin.c) fills this table.  Each op returns a new
 * JSON reference in Airflow's shape and field names, or NULL (-1) with err:
 * WEIR_E_NOT_FOUND -> 404, WEIR_E_INVALID -> 400, WEIR_E_CONFLICT -> 409.
 * Strings passed in are borrowed for the call.  An op left NULL makes its
 * route a 404.
 */
#ifndef WEIR_API_DAG_ADMIN_API_H
#define WEIR_API_DAG_ADMIN_API_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "api/dag_api.h"
#include "lib/error.h"

struct dag_ti_list_query;

/* A map index that stands for "every instance" (the XCom list's default). */
#define DAG_MAP_INDEX_ANY (-2)

/* What updateTaskInstancesState and PATCH of a task instance mark: the TI
 * (task_id, map_index) of run_id, with its relatives as asked; new_state is
 * "success" or "failed" (checked by the caller). */
struct dag_mark_request {
	const char *run_id;         /* or NULL and: */
	const char *execution_date; /* the run of that logical date (RFC 3339) */
	const char *task_id;
	int map_index; /* -1: a plain task; DAG_MAP_INDEX_ANY: every instance */
	const char *new_state;
	bool dry_run;
	bool upstream, downstream; /* the task's relatives in the same run */
	bool past, future;         /* the same tasks in the DAG's earlier / later runs */
};

struct dag_admin_ops {
	/* ---- pools ---- */
	/* GET /pools: PoolCollection {"pools":[Pool],"total_entries":N}, by name
	 * (order_by "name"/"-name"/"slots"/"-slots": checked by the caller) */
	json_t *(*list_pools)(void *ctx, int limit, int offset, const char *order_by,
	                      struct weir_error *err);
	/* GET /pools/{name}: Pool */
	json_t *(*get_pool)(void *ctx, const char *name, struct weir_error *err);
	/* POST /pools {name, slots, description, include_deferred}: Pool; 409 when it exists */
	json_t *(*add_pool)(void *ctx, json_t *body, struct weir_error *err);
	/* PATCH /pools/{name}: the body's fields (already checked, those of
	 * update_mask only); a new name must be free (409); default_pool keeps
	 * its name (400).  Pool */
	json_t *(*patch_pool)(void *ctx, const char *name, json_t *body, struct weir_error *err);
	/* DELETE /pools/{name}: 0; default_pool is a 400 */
	int (*delete_pool)(void *ctx, const char *name, struct weir_error *err);

	/* ---- changes ---- */
	/* DELETE /dags/{dag_id}: its runs, task instances and tries; 409 while a run is active */
	int (*delete_dag)(void *ctx, const char *dag_id, struct weir_error *err);
	/* DELETE .../dagRuns/{run_id}: an active run is stopped (marked failed) first */
	int (*delete_run)(void *ctx, const char *dag_id, const char *run_id,
	                  struct weir_error *err);
	/* POST .../dagRuns/{run_id}/clear: every TI of the run cleared; dry_run: the
	 * TaskInstanceCollection that would be, else the DAGRun */
	json_t *(*clear_run)(void *ctx, const char *dag_id, const char *run_id, bool dry_run,
	                     struct weir_error *err);
	/* Marks (dag_mark_request): {"task_instances":[TaskInstanceReference]} */
	json_t *(*mark_tis)(void *ctx, const char *dag_id, const struct dag_mark_request *m,
	                    struct weir_error *err);

	/* ---- reads ---- */
	/* GET /dags/{dag_id}/tasks/{task_id}: Task */
	json_t *(*get_task)(void *ctx, const char *dag_id, const char *task_id,
	                    struct weir_error *err);
	/* GET /dagStats?dag_ids=a,b: {"dags":[{dag_id, stats:[{state,count}]}],"total_entries"} */
	json_t *(*dag_stats)(void *ctx, const char *const *dag_ids, size_t n,
	                     struct weir_error *err);
	/* GET /dagSources/{file_token}: the text of the DAG's file (*text newly allocated) */
	int (*dag_source)(void *ctx, const char *dag_id, char **text, size_t *len,
	                  struct weir_error *err);
	/* PUT /parseDagFile/{file_token}: the DAG's file is read again at once */
	int (*reparse)(void *ctx, const char *dag_id, struct weir_error *err);
	/* GET /importErrors/{id}: ImportError; WEIR_E_FORBIDDEN when its file
	 * holds a DAG whose access list refuses `rd` (NULL: anyone) */
	json_t *(*import_error)(void *ctx, const struct dag_reader *rd, long long id,
	                        struct weir_error *err);
	/* GET .../xcomEntries: XComCollection (map_index DAG_MAP_INDEX_ANY: every
	 * instance; key NULL: every key) */
	json_t *(*xcom_list)(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
	                     int map_index, const char *key, int limit, int offset,
	                     struct weir_error *err);
	/* GET .../xcomEntries/{key}: XCom (stringify: the value as text) */
	json_t *(*xcom_get)(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
	                    int map_index, const char *key, bool stringify, struct weir_error *err);
	/* GET .../dependencies: {"dependencies":[{name, reason}]}: why the TI does not run */
	json_t *(*ti_deps)(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
	                   int map_index, struct weir_error *err);
	/* GET .../links: {"extra_links":[...], "total_entries"}: the TI's job in weir */
	json_t *(*ti_links)(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
	                    int map_index, struct weir_error *err);
	/* GET .../listMapped: TaskInstanceCollection of a foreach task's instances
	 * (404 when the task is not mapped); the query's task_ids are filled here */
	json_t *(*list_mapped)(void *ctx, const char *dag_id, const char *run_id,
	                       const char *task_id, struct dag_ti_list_query *q,
	                       struct weir_error *err);
	/* POST /launch/dagRuns (a running task's read, api/launch_routes.c): DAG
	 * dag_id's runs at the `n` logical dates (epoch ms), each with its state
	 * and its task instances' states: {"dag_id", "loaded", "task_ids" (the
	 * loaded DAG's), "runs": [{"logical_date", "state" ("" without a run),
	 * "task_instances": [{"task_id", "state"}]}]}.  WEIR_E_FORBIDDEN for a
	 * DAG with an access list (a task is nobody the list names) */
	json_t *(*task_read_runs)(void *ctx, const char *dag_id, const int64_t *logical_ms,
	                          size_t n, struct weir_error *err);
};

#endif
