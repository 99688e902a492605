/* task.h: the `sql:` and `transfer:` tasks, as the weir subcommands the
 * launcher runs (`weir task-sql`, `weir task-transfer`).
 *
 * Each reads its spec, a JSON object, from --spec FILE, --spec-json TEXT
 * or the environment variable WEIR_DATA_SPEC (what a DAG task's job sets:
 * model/dag_job.c), and every connection it names from the environment
 * (WEIR_CONN_<ID>, driver.h): never from weir's store.  Its outputs (a
 * JSON object) go to $WEIR_OUTPUT, or to stdout when that is not set;
 * progress and errors go to stderr, the task's log.  Exit status 0 on
 * success, 1 when the work failed, 2 for a spec that is not valid.
 *
 * sql spec:      {conn, statement | file, parameters: {NAME: value}, max_rows}
 * transfer spec: {from: {conn, query, parameters} | {file, format},
 *                 to: {conn, table, mode, key} | {conn, redis, key, ...} | {file, format},
 *                 batch}
 * (docs/dags.md has every key; docs/internals/data.md how they run.)
 */
#ifndef WEIR_DATA_TASK_H
#define WEIR_DATA_TASK_H

#include <jansson.h>
#include <stdint.h>

#include "data/driver.h"
#include "lib/error.h"

/* The subcommands' mains (argv[0] is the subcommand). */
int data_task_sql_main(int argc, char **argv);
int data_task_transfer_main(int argc, char **argv);

/* The work itself, for callers that hold a spec: outputs into *outputs
 * (a new object).  -1 with err. */
int data_sql_run(json_t *spec, json_t **outputs, struct weir_error *err);
int data_transfer_run(json_t *spec, json_t **outputs, struct weir_error *err);

/* `parameters` (an object; NULL: none) as data_params: strings as they
 * are, numbers and booleans as their text, null as NULL; lists and
 * mappings as compact JSON. */
int data_params_from_json(json_t *obj, struct data_params *out, struct weir_error *err);

/* A cell as JSON for outputs: null, a number for a number column whose
 * text is one, else a string. */
json_t *data_cell_json(const char *v, size_t len, enum data_type t);

/* The connection `id` opened as a database, from the environment. */
struct data_conn *data_open_env(const char *id, struct weir_error *err);

#endif
