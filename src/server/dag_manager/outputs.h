/* outputs.h: a try's files (outputs.c): the folder of a run's tries
 * (HOME/dag_runs/RUN_ROW_ID), the $WEIR_OUTPUT file a try may write, and
 * the outputs of a run's tasks as templates read them.
 */
#ifndef WEIR_SERVER_DAG_MANAGER_OUTPUTS_H
#define WEIR_SERVER_DAG_MANAGER_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "server/dag_internal.h"

/* The folder of the run's try files.  Newly allocated; NULL when out of
 * memory. */
char *dm_try_dir(struct dag_manager *dm, int64_t run_row_id);

/* The $WEIR_OUTPUT of one try: named by the run's row id and the task id
 * (checked to be [A-Za-z0-9_-]), never by the user's run id.  Newly
 * allocated; NULL when out of memory. */
char *dm_output_path(struct dag_manager *dm, int64_t run_row_id, const char *task_id, int map_index,
                     int try_number);

/* The try's $WEIR_OUTPUT as compact JSON into *out: "" when the task wrote
 * none.  -1 with `why` when it is not a small JSON object (the try fails). */
int dm_read_outputs(const char *path, char **out, char *why, size_t why_size);

/* {"TASK": {...}} of the run's tasks that wrote outputs (foreach instances
 * aside: there are several of them).  New reference. */
json_t *dm_run_outputs(const struct run_ctx *rc);

#endif
