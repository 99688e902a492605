/* dag_spec_internal.h: what the files of the DAG reader share; nothing
 * outside them includes it (model/dag_spec.h is the contract).
 *
 *   dag_spec.c        the DAG's own keys, parsing a file or a string, lookups
 *   dag_spec_task.c   one task (and default_args): its keys, its job, its defaults
 *   dag_spec_check.c  the whole DAG: dependencies, order and cycles, templates
 *   dag_spec_json.c   a DAG spec as JSON
 *   dag_spec_data.c   a sql: or transfer: task's mapping
 *   dag_spec_flow.c   branch, short_circuit, the past, foreach over an output
 *   dag_spec_sensor.c a sensor: task's mapping
 *   dag_spec_dataset.c  outlets, trigger_dag: and a schedule on datasets
 *
 * Every reader takes the field_reader: on failure it returns -1 with the
 * reader's error naming the field (r->path).
 */
#ifndef WEIR_MODEL_DAG_SPEC_INTERNAL_H
#define WEIR_MODEL_DAG_SPEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "model/dag_spec.h"
#include "model/field_reader.h"

/* An id: letters, digits, '_' and '-' (and '.' with `dots`), at most
 * DAG_MAX_ID characters. */
bool dag_id_valid(const char *s, bool dots);
/* A name templates can use: letters, digits and '_', starting with a
 * letter or '_', at most 128 characters. */
bool dag_ident_valid(const char *s);

/* default_args into d. */
int dag_read_default_args(struct field_reader *r, json_t *v, struct dag_default_args *d);
/* tasks[idx] from v into dag->tasks[idx], then its defaults: its own keys
 * first, then default_args (read before), then weir's. */
int dag_read_task(struct field_reader *r, struct dag_spec *dag, size_t idx, json_t *v);

/* A sql: (t->kind DAG_TASK_SQL) or transfer: mapping `v` at `prefix`
 * ("tasks[2].sql") into t->data, its connection ids added to
 * t->connections. */
int dag_read_data(struct field_reader *r, struct dag_task *t, const char *prefix, json_t *v);
/* obj.parameters, when given: a mapping of names ([A-Za-z_][A-Za-z0-9_]*, :NAME
 * in the SQL) to strings, numbers, booleans or null. */
int dag_read_parameters(struct field_reader *r, json_t *obj, const char *prefix);
/* A sensor: mapping `v` at `prefix` ("tasks[2].sensor") into t->sensor
 * (t->kind becomes DAG_TASK_SENSOR), its connection added to
 * t->connections (dag_spec_sensor.c). */
int dag_read_sensor(struct field_reader *r, struct dag_task *t, const char *prefix, json_t *v);
/* A command task's `sensor:` (options only: poke_interval, timeout, mode,
 * soft_fail, exponential_backoff, max_wait): the command is the poke
 * (DAG_SENSOR_COMMAND, t->kind stays DAG_TASK_COMMAND).  -1 with r's error. */
int dag_read_command_sensor(struct field_reader *r, struct dag_task *t, const char *prefix,
                            json_t *v);
/* Calls fn on each of the sensor's templated fields that holds "{{" (see
 * dag_sensor_render()), with its name below `sensor` ("file.path",
 * "sql.parameters.ds") and its JSON string; stops at fn's first non-zero
 * result and returns it, else 0. */
typedef int (*dag_sensor_template_fn)(void *arg, const char *field, json_t *str);
int dag_sensor_each_template(const struct dag_sensor *s, dag_sensor_template_fn fn, void *arg);
/* The parameters mapping of a data task (sql.parameters,
 * transfer.from.parameters); NULL when none.  Borrowed. */
json_t *dag_data_parameters(const struct dag_task *t);
/* A transfer's file at `side` ("from" or "to"), templated like cwd; NULL
 * when that side is no file or the task no transfer.  Borrowed. */
const char *dag_data_file(const struct dag_task *t, const char *side);

/* A task's outlets: a list of dataset URIs (no URI twice). */
int dag_read_outlets(struct field_reader *r, struct dag_task *t, json_t *v);
/* A task's inlets: dataset URIs and {alias: NAME} (each once), into
 * t->inlets and t->inlet_aliases. */
int dag_read_inlets(struct field_reader *r, struct dag_task *t, json_t *v);
/* A trigger_dag: mapping `v` at `prefix` ("tasks[2].trigger_dag") into
 * t->trigger. */
int dag_read_trigger(struct field_reader *r, struct dag_task *t, const char *prefix, json_t *v);
/* schedule: a list of dataset URIs, or a condition {any|all: [URI or
 * condition, ...]}, into dag->dataset_schedule (and dag->dataset_condition). */
int dag_read_dataset_schedule(struct field_reader *r, struct dag_spec *dag, json_t *v);

/* dag_spec_timetable.c: whether a `schedule:` mapping is a timetable (has
 * delta: or events:); reading it into dag->schedule; its JSON form (a new
 * reference; NULL when out of memory); the rule of @continuous
 * (max_active_runs: 1), checked once the DAG's keys are read. */
bool dag_is_timetable(json_t *val);
int dag_read_timetable(struct field_reader *r, struct dag_spec *dag, json_t *val);
json_t *dag_timetable_json(const struct dag_spec *dag);
int dag_check_timetable(struct field_reader *r, const struct dag_spec *dag);
/* `manual_interval: ending` or `manual_interval: {before: SECONDS}` (an
 * Airflow DAG's manual runs: dag_spec.h's manual_ending) read, and its JSON
 * form back (only where manual_ending is set). */
int dag_read_manual_interval(struct field_reader *r, struct dag_spec *dag, json_t *val);
json_t *dag_manual_interval_json(const struct dag_spec *dag);
/* The trigger_dag task's templates (conf's strings, run_id) use only
 * `known` names; whether it has any. */
int dag_check_trigger_templates(struct field_reader *r, const struct dag_task *t,
                                const struct strvec *known, const char *prefix);
bool dag_trigger_has_templates(const struct dag_task *t);
/* The names a DAG scheduled on datasets adds for its tasks' templates
 * (params.triggering_dataset_events).  0 or -1 (out of memory). */
int dag_dataset_known_names(const struct dag_spec *dag, struct strvec *known);

/* Task ids unique, and every depends_on name to a task index in upstream
 * (a name that is no task fails). */
int dag_link_tasks(struct field_reader *r, struct dag_spec *dag);
/* dag->topo: Kahn's algorithm, ready tasks in file order first; a cycle
 * fails, naming it. */
int dag_order_tasks(struct field_reader *r, struct dag_spec *dag);
/* Every template of every task uses only variables it may. */
int dag_check_templates(struct field_reader *r, struct dag_spec *dag);

/* dag_spec_flow.c: branch, short_circuit, depends_on_past,
 * wait_for_downstream (a task's keys; the last two in default_args too) and
 * foreach over an upstream's output. */
bool dag_flow_is_key(const char *key);
int dag_read_flow_key(struct field_reader *r, struct dag_task *t, const char *key, json_t *val);
int dag_read_flow_default(struct field_reader *r, const char *key, json_t *val,
                          struct dag_default_args *d);
/* default_args' past keys for a task that gave none; wait_for_downstream
 * implies depends_on_past. */
void dag_flow_resolve(struct dag_task *t, const struct dag_default_args *d);
/* foreach "{{ outputs.TASK.KEY }}": 1 when `s` is that form (read into
 * t->flow), 0 when it is another, -1 with the reader's error. */
int dag_read_foreach_output(struct field_reader *r, struct dag_task *t, const char *s);
/* foreach {product: ["{{ outputs.TASK.KEY }}", ...]}: two or more refs
 * into t->flow; -1 with the reader's error. */
int dag_read_foreach_product(struct field_reader *r, struct dag_task *t, json_t *v);
/* Before dag_link_tasks(): the task a foreach maps over exists and joins
 * depends_on.  After dag_order_tasks(): the keys' combinations. */
int dag_flow_link(struct field_reader *r, struct dag_spec *dag);
/* ... and each task's mapped_by filled. */
int dag_flow_check(struct field_reader *r, struct dag_spec *dag);
int dag_flow_to_json(const struct dag_task *t, json_t *o);
void dag_flow_release(struct dag_task_flow *f);

#endif
