/* dag_spec.c: DAG files: YAML (through lib/yaml) or JSON in, validation
 * (keys, types, dependencies, cycles, templates), defaults resolved, JSON
 * out.
 *
 * As in job_spec.c, the reader keeps the path of the field it is looking
 * at ("tasks[2].depends_on[0]"), so an error names it and the file parser
 * turns it into a line with yaml_lines_find().  Inline job specs are read
 * by job_spec_from_json(); their errors' field paths are put under
 * "tasks[i].job." so the line is found the same way.
 */
#include "model/dag_spec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/yaml.h"
#include "model/dag_access.h"
#include "model/dag_spec_internal.h"
#include "model/dataset.h"
#include "model/field_reader.h"
#include "model/job_spec_edit.h"
#include "model/param_schema.h"
#include "model/template.h"

static const char *const dag_keys[] = {
    "dag_id",          "description",      "schedule",    "start_date", "end_date",     "catchup",
    "max_active_runs", "max_active_tasks", "params",      "tags",       "default_args", "tasks",
    "on_failure",      "on_success",       "on_sla_miss", "doc_md",     "access",       "timezone",
    "dagrun_timeout",  "manual_interval",  NULL,
};
static const char *const rule_names[] = {
    "all_success",  "all_done",   "all_failed",
    "one_success",  "one_failed", "none_failed",
    "none_skipped", "always",     "none_failed_min_one_success",
    "all_skipped",  "one_done",   "all_done_setup_success",
    NULL,
};

const char *trigger_rule_name(enum trigger_rule r)
{
	if ((unsigned)r >= sizeof rule_names / sizeof rule_names[0] - 1)
		return "all_success";
	return rule_names[r];
}

int trigger_rule_from_name(const char *name, enum trigger_rule *out)
{
	for (size_t i = 0; rule_names[i]; i++)
		if (!strcmp(rule_names[i], name)) {
			*out = (enum trigger_rule)i;
			return 0;
		}
	return -1;
}

/* ---- the DAG ------------------------------------------------------------ */

/* A date; one without Z or an offset is read on the DAG's wall clock. */
static int read_time(struct field_reader *r, const struct dag_spec *dag, json_t *v, int64_t *out)
{
	if (json_is_null(v)) {
		*out = CRON_NEVER;
		return 0;
	}
	if (json_is_integer(v)) {
		long long x;
		if (field_get_int(r, v, 0, 253402300799LL, &x) < 0)
			return -1;
		*out = x * 1000;
		return 0;
	}
	const char *s;
	if (field_need_type(r, v, "a date like 2024-01-31 or 2024-01-31T06:00:00Z",
	                    json_is_string(v)) < 0 ||
	    field_get_string(r, v, &s) < 0)
		return -1;
	struct weir_error e;
	if (schedule_parse_time_in(s, r->path, dag->schedule.zone, out, &e) < 0)
		return weir_error_set(r->err, WEIR_E_INVALID, "%s", e.msg);
	return 0;
}

/* A param is a plain default, or a schema (model/param_schema.h) whose
 * `default` is the default (none: null, and a run must give a value). */
static int read_params(struct field_reader *r, struct dag_spec *dag, json_t *v)
{
	const char *key;
	json_t *val, *defaults, *schemas;
	if (field_need_type(r, v, "a mapping of NAME: default value or schema", json_is_object(v)) <
	    0)
		return -1;
	json_object_foreach(v, key, val)
	{
		field_at(r, "params", key, 0);
		if (!dag_ident_valid(key))
			return field_fail(
			    r, "%s",
			    "expected a param name like [A-Za-z_][A-Za-z0-9_]* (it becomes "
			    "WEIR_PARAM_<NAME>)");
		if (param_schema_is(val) && param_schema_valid(val, r->err) < 0) {
			weir_error_prefix(r->err, "%s", r->path);
			return -1;
		}
	}
	defaults = json_object();
	schemas = json_object();
	if (!defaults || !schemas)
		goto oom;
	json_object_foreach(v, key, val)
	{
		json_t *d = val, *sc = NULL;
		if (param_schema_is(val)) {
			d = json_object_get(val, "default");
			sc = json_deep_copy(val);
			if (!sc)
				goto oom;
			if (json_object_set_new(schemas, key, sc) < 0)
				goto oom;
		}
		if (json_object_set_new(defaults, key, d ? json_deep_copy(d) : json_null()) < 0)
			goto oom;
	}
	json_decref(dag->params);
	json_decref(dag->param_schemas);
	dag->params = defaults;
	dag->param_schemas = schemas;
	return 0;
oom:
	json_decref(defaults);
	json_decref(schemas);
	return field_oom(r);
}

static const char *const schedule_keys[] = {"cron", "trigger", "interval", "datasets", NULL};

/* schedule: {cron: EXPR | trigger: EXPR, interval: DURATION, datasets: DATASETS}: a
 * cron (data intervals) or a trigger cron (Airflow's CronTriggerTimetable: a run at each
 * fire time, its data interval `interval` long before it), and datasets that also start
 * runs (Airflow's DatasetOrTimeSchedule); or {datasets: DATASETS} alone.  DATASETS is a
 * list of URIs (all of them) or a condition {any|all: [URI or condition, ...]}. */
static int read_schedule_object(struct field_reader *r, struct dag_spec *dag, json_t *val)
{
	json_t *cron = json_object_get(val, "cron"), *trigger = json_object_get(val, "trigger");
	json_t *interval = json_object_get(val, "interval"), *ds = json_object_get(val, "datasets");
	const struct tz_zone *zone = dag->schedule.zone;
	const char *text;
	struct weir_error e;
	int64_t iv_s = 0;

	if (field_check_keys(r, val, "schedule", schedule_keys) < 0)
		return -1;
	if (!cron && !trigger && ds && !interval) { /* datasets alone: a condition */
		field_at(r, "schedule", "datasets", 0);
		return dag_read_dataset_schedule(r, dag, ds);
	}
	if (!cron == !trigger) {
		field_at(r, "", "schedule", 0);
		return field_fail(r, "%s",
		                  "expected one of cron: or trigger: (a cron expression), or "
		                  "datasets: alone");
	}
	field_at(r, "schedule", cron ? "cron" : "trigger", 0);
	if (field_get_string(r, cron ? cron : trigger, &text) < 0)
		return -1;
	if (cron_parse(text, &dag->schedule, &e) < 0)
		return field_fail(r, "%s", e.msg);
	dag->schedule.zone = zone;
	if (dag->schedule.kind != CRON_EXPR)
		return field_fail(
		    r, "\"%s\": expected a cron expression or a preset such as @daily", text);
	if (interval) {
		field_at(r, "schedule", "interval", 0);
		if (!trigger)
			return field_fail(r, "%s", "an interval goes with trigger:, not cron:");
		if (field_read_duration(r, interval, &iv_s) < 0)
			return -1;
	}
	dag->schedule.trigger = trigger != NULL;
	dag->schedule.trigger_interval_ms = iv_s * 1000;
	if (ds) {
		field_at(r, "schedule", "datasets", 0);
		return dag_read_dataset_schedule(r, dag, ds);
	}
	return 0;
}

/* `timezone:`, read before the dates and the schedule that depend on it. */
static int read_dag_zone(struct field_reader *r, struct dag_spec *dag, json_t *val)
{
	const char *s;
	struct weir_error e;
	if (!val || json_is_null(val))
		return 0;
	field_at(r, "", "timezone", 0);
	if (field_get_string(r, val, &s) < 0)
		return -1;
	if (cron_set_zone(&dag->schedule, s, &e) < 0)
		return field_fail(r, "%s", e.msg);
	return 0;
}

static int read_dag_field(struct field_reader *r, struct dag_spec *dag, const char *key,
                          json_t *val, json_t **tasks)
{
	long long x;
	field_at(r, "", key, 0);
	if (!strcmp(key, "dag_id")) {
		const char *s;
		if (field_get_string(r, val, &s) < 0)
			return -1;
		if (!dag_id_valid(s, true))
			return field_fail(
			    r,
			    "expected an id of letters, digits, '_', '.' and '-' (at most "
			    "250), got \"%s\"",
			    s);
		return field_set_string(r, &dag->dag_id, s);
	}
	if (!strcmp(key, "description"))
		return field_dup_string(r, val, &dag->description);
	if (!strcmp(key, "doc_md"))
		return field_dup_string(r, val, &dag->doc_md);
	if (!strcmp(key, "schedule")) {
		const char *s = NULL;
		if (json_is_array(val)) /* datasets (dag_spec_dataset.c) */
			return dag_read_dataset_schedule(r, dag, val);
		if (json_is_object(val) && dag_is_timetable(val))
			return dag_read_timetable(r, dag, val); /* dag_spec_timetable.c */
		if (json_is_object(val))
			return read_schedule_object(r, dag, val);
		struct weir_error e;
		if (!json_is_null(val) && field_get_string(r, val, &s) < 0)
			return -1;
		const struct tz_zone *zone = dag->schedule.zone;
		if (cron_parse(s, &dag->schedule, &e) < 0)
			return field_fail(r, "%s", e.msg);
		dag->schedule.zone = zone;
		return 0;
	}
	if (!strcmp(key, "start_date"))
		return read_time(r, dag, val, &dag->start_date_ms);
	if (!strcmp(key, "end_date"))
		return read_time(r, dag, val, &dag->end_date_ms);
	if (!strcmp(key, "timezone"))
		return 0; /* read first: read_dag_zone() */
	if (!strcmp(key, "catchup"))
		return field_get_bool(r, val, &dag->catchup);
	if (!strcmp(key, "manual_interval"))
		return dag_read_manual_interval(r, dag, val); /* dag_spec_timetable.c */
	if (!strcmp(key, "max_active_runs") || !strcmp(key, "max_active_tasks")) {
		if (field_get_int(r, val, 1, 10000, &x) < 0)
			return -1;
		*(key[11] == 'r' ? &dag->max_active_runs : &dag->max_active_tasks) = (int)x;
		return 0;
	}
	if (!strcmp(key, "dagrun_timeout")) {
		int64_t s = 0;
		if (!json_is_null(val) && field_read_duration(r, val, &s) < 0)
			return -1;
		if (!json_is_null(val) && s <= 0)
			return field_fail(r, "%s",
			                  "expected a duration above 0 such as 30m (or null)");
		dag->dagrun_timeout_s = s;
		return 0;
	}
	if (!strcmp(key, "params"))
		return read_params(r, dag, val);
	if (!strcmp(key, "tags")) {
		size_t i;
		json_t *tag;
		if (field_need_type(r, val, "a list of strings", json_is_array(val)) < 0)
			return -1;
		json_array_foreach(val, i, tag)
		{
			const char *s;
			field_at(r, "tags", NULL, i);
			if (field_get_string(r, tag, &s) < 0)
				return -1;
			if (strvec_push(&dag->tags, s) < 0)
				return field_oom(r);
		}
		return 0;
	}
	if (!strcmp(key, "default_args"))
		return dag_read_default_args(r, val, &dag->default_args);
	if (!strcmp(key, "access"))
		return dag_access_read(r, val, &dag->access);
	if (notify_is_key(key))
		return notify_read_key(r, "", key, val, &dag->notify);
	/* tasks: read once everything else is known */
	if (field_need_type(r, val, "a list of tasks", json_is_array(val)) < 0)
		return -1;
	*tasks = val;
	return 0;
}

static struct dag_spec *dag_create(void)
{
	struct dag_spec *dag = calloc(1, sizeof *dag);
	if (!dag)
		return NULL;
	dag->start_date_ms = CRON_NEVER;
	dag->end_date_ms = CRON_NEVER;
	dag->runs_after_ms = CRON_NEVER;
	dag->max_active_runs = DAG_DEFAULT_ACTIVE_RUNS;
	dag->max_active_tasks = DAG_DEFAULT_ACTIVE_TASKS;
	dag->params = json_object();
	dag->param_schemas = json_object();
	cron_parse(NULL, &dag->schedule, NULL); /* no schedule: "none" */
	struct dag_default_args *d = &dag->default_args;
	d->retries = -1;
	d->retry_delay_s = d->max_retry_delay_s = d->execution_timeout_s = -1;
	d->retry_exponential_backoff = -1;
	d->depends_on_past = d->wait_for_downstream = -1;
	d->resources.gpus = -1;
	if (!dag->params || !dag->param_schemas) {
		json_decref(dag->params);
		json_decref(dag->param_schemas);
		free(dag);
		return NULL;
	}
	return dag;
}

static struct dag_spec *read_dag(struct field_reader *r, json_t *json, const char *origin)
{
	struct dag_spec *dag = dag_create();
	json_t *tasks = NULL;
	const char *key;
	json_t *val;

	r->path[0] = '\0';
	if (!dag) {
		field_oom(r);
		return NULL;
	}
	if (origin && field_set_string(r, &dag->file, origin) < 0)
		goto fail;
	if (field_need_type(r, json, "a mapping with dag_id and tasks", json_is_object(json)) < 0)
		goto fail;
	if (field_check_keys(r, json, "", dag_keys) < 0)
		goto fail;
	if (read_dag_zone(r, dag, json_object_get(json, "timezone")) < 0)
		goto fail;
	json_object_foreach(json, key,
	                    val) if (read_dag_field(r, dag, key, val, &tasks) < 0) goto fail;
	r->path[0] = '\0';
	if (!dag->dag_id) {
		field_fail(r, "%s", "expected a dag_id");
		goto fail;
	}
	if (!tasks || json_array_size(tasks) == 0) {
		snprintf(r->path, sizeof r->path, "tasks");
		field_fail(r, "%s", "expected a list of at least one task");
		goto fail;
	}
	if (json_array_size(tasks) > DAG_MAX_TASKS) {
		snprintf(r->path, sizeof r->path, "tasks");
		field_fail(r, "expected at most %s tasks", "4096");
		goto fail;
	}
	if (dag_check_timetable(r, dag) < 0)
		goto fail;
	if (dag->schedule.kind != CRON_NONE && dag->start_date_ms == CRON_NEVER) {
		snprintf(r->path, sizeof r->path, "%s", "schedule");
		field_fail(r, "%s",
		           "a scheduled DAG needs a start_date (add start_date: 2024-01-01)");
		goto fail;
	}
	if (dag->end_date_ms != CRON_NEVER && dag->start_date_ms != CRON_NEVER &&
	    dag->end_date_ms < dag->start_date_ms) {
		snprintf(r->path, sizeof r->path, "%s", "end_date");
		field_fail(r, "%s", "expected a date at or after start_date");
		goto fail;
	}
	size_t n = json_array_size(tasks);
	dag->tasks = calloc(n, sizeof *dag->tasks);
	if (!dag->tasks) {
		field_oom(r);
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		dag->n_tasks = i + 1;
		if (dag_read_task(r, dag, i, json_array_get(tasks, i)) < 0)
			goto fail;
	}
	if (dag_flow_link(r, dag) < 0 || dag_link_tasks(r, dag) < 0 ||
	    dag_order_tasks(r, dag) < 0 || dag_flow_check(r, dag) < 0 ||
	    dag_check_templates(r, dag) < 0)
		goto fail;
	return dag;
fail:
	dag_spec_destroy(dag);
	return NULL;
}

struct dag_spec *dag_spec_from_json(json_t *json, const char *origin, const char *base_dir,
                                    struct weir_error *err)
{
	struct weir_error local;
	struct field_reader r = {.base_dir = base_dir, .subject = "dag", .err = err ? err : &local};
	return read_dag(&r, json, origin);
}

struct dag_spec *dag_spec_parse_string(const char *text, size_t len, const char *origin,
                                       const char *base_dir, struct weir_error *err)
{
	struct yaml_lines *lines = NULL;
	struct weir_error local;
	struct field_reader r = {.base_dir = base_dir, .subject = "dag", .err = err ? err : &local};
	if (!origin)
		origin = "<dag>";
	json_t *json = yaml_parse(text, len, origin, &lines, r.err);
	if (!json)
		return NULL;
	struct dag_spec *dag = read_dag(&r, json, origin);
	if (!dag && r.err->kind == WEIR_E_INVALID) {
		int line = yaml_lines_find(lines, r.path);
		if (line > 0)
			weir_error_prefix(r.err, "%s:%d", origin, line);
		else
			weir_error_prefix(r.err, "%s", origin);
	}
	json_decref(json);
	yaml_lines_destroy(lines);
	return dag;
}

int dag_spec_line_of(const char *file, const char *path)
{
	struct yaml_lines *lines = NULL;
	size_t len;
	char *text = fs_read_file(file, &len, NULL);
	json_t *json = text ? yaml_parse(text, len, file, &lines, NULL) : NULL;
	int line = json ? yaml_lines_find(lines, path) : 0;

	json_decref(json);
	yaml_lines_destroy(lines);
	free(text);
	return line > 0 ? line : 0;
}

struct dag_spec *dag_spec_parse_file(const char *path, struct weir_error *err)
{
	size_t len;
	char *text = fs_read_file(path, &len, err);
	struct dag_spec *dag = NULL;

	if (!text)
		return NULL;
	/* Relative paths in the file are relative to the file's folder. */
	char *base = fs_abs_dirname(path);
	if (base)
		dag = dag_spec_parse_string(text, len, path, base, err);
	else
		weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot find the file's folder", path);
	free(text);
	free(base);
	return dag;
}

/* ---- the rest ----------------------------------------------------------- */

static void task_release(struct dag_task *t)
{
	free(t->task_id);
	strvec_release(&t->depends_on);
	strvec_release(&t->connections);
	strvec_release(&t->variables);
	strvec_release(&t->outlets);
	strvec_release(&t->inlets);
	strvec_release(&t->inlet_aliases);
	dag_trigger_destroy(t->trigger);
	json_decref(t->data);
	dag_sensor_free(t->sensor);
	free(t->upstream);
	free(t->command);
	for (size_t i = 0; i < t->n_env; i++) {
		free(t->env[i].name);
		free(t->env[i].value);
	}
	free(t->env);
	free(t->cwd);
	free(t->operator_class);
	free(t->doc_md);
	json_decref(t->marker);
	job_spec_destroy(t->job);
	free(t->job_path);
	json_decref(t->tony);
	free(t->pool);
	free(t->queue);
	json_decref(t->slurm);
	json_decref(t->foreach_list);
	free(t->foreach_param);
	dag_notify_destroy(t->notify);
	dag_flow_release(&t->flow);
}

void dag_spec_destroy(struct dag_spec *dag)
{
	if (!dag)
		return;
	for (size_t i = 0; i < dag->n_tasks; i++)
		task_release(&dag->tasks[i]);
	free(dag->tasks);
	free(dag->topo);
	dag_access_release(&dag->access);
	free(dag->dag_id);
	free(dag->description);
	free(dag->doc_md);
	free(dag->file);
	json_decref(dag->params);
	json_decref(dag->param_schemas);
	strvec_release(&dag->tags);
	strvec_release(&dag->dataset_schedule);
	strvec_release(&dag->dataset_aliases);
	json_decref(dag->dataset_condition);
	free(dag->schedule_events);
	free(dag->schedule_runs);
	free(dag->timetable_description);
	free(dag->default_args.pool);
	free(dag->default_args.queue);
	dag_notify_destroy(dag->default_args.notify);
	dag_notify_destroy(dag->notify);
	free(dag);
}

long dag_spec_task_index(const struct dag_spec *dag, const char *task_id)
{
	for (size_t i = 0; i < dag->n_tasks; i++)
		if (dag->tasks[i].task_id && !strcmp(dag->tasks[i].task_id, task_id))
			return (long)i;
	return -1;
}

void dag_task_class(const struct dag_task *t, const char **name, const char **module,
                    size_t *module_len)
{
	const char *dot = t->operator_class ? strrchr(t->operator_class, '.') : NULL;

	if (dot) {
		*name = dot + 1;
		*module = t->operator_class;
		*module_len = (size_t)(dot - t->operator_class);
		return;
	}
	*name = t->operator_class                 ? t->operator_class
	        : t->kind == DAG_TASK_COMMAND     ? "WeirCommand"
	        : t->kind == DAG_TASK_TRIGGER_DAG ? "TriggerDagRunOperator"
	                                          : "WeirJob";
	*module = "weir";
	*module_len = 4;
}

const struct dag_task *dag_spec_find_task(const struct dag_spec *dag, const char *task_id)
{
	long i = dag_spec_task_index(dag, task_id);
	return i < 0 ? NULL : &dag->tasks[i];
}

json_t *dag_spec_run_params(const struct dag_spec *dag, const json_t *conf, struct weir_error *err)
{
	if (conf && !json_is_null(conf) && !json_is_object(conf)) {
		weir_error_set(err, WEIR_E_INVALID, "conf: expected a mapping of param: value");
		return NULL;
	}
	json_t *p = json_deep_copy(dag->params);
	if (!p || (conf && json_is_object(conf) && json_object_update(p, (json_t *)conf) < 0)) {
		json_decref(p);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	return p;
}

int dag_spec_check_run_params(const struct dag_spec *dag, const json_t *params,
                              struct weir_error *err)
{
	const char *key;
	json_t *schema;

	json_object_foreach(dag->param_schemas, key, schema)
	{
		const json_t *v = json_object_get(params, key);
		/* no default and none given: missing, whatever the type allows */
		if (json_is_null(v) && !json_object_get(schema, "default"))
			v = NULL;
		if (param_schema_check(schema, v, err) < 0) {
			weir_error_prefix(err, "params.%s", key);
			return -1;
		}
	}
	return 0;
}

json_t *dag_task_foreach_items(const struct dag_spec *dag, const struct dag_task *task,
                               const json_t *params, struct weir_error *err)
{
	if (task->foreach_list)
		return json_incref(task->foreach_list);
	if (!task->foreach_param) {
		weir_error_set(err, WEIR_E_INVALID, "task %s: not a foreach task", task->task_id);
		return NULL;
	}
	json_t *v = json_object_get(params ? params : dag->params, task->foreach_param);
	if (!json_is_array(v)) {
		weir_error_set(err, WEIR_E_INVALID,
		               "params.%s: task %s fans out over it; expected a list, got %s",
		               task->foreach_param, task->task_id,
		               v ? field_type_name(v) : "nothing");
		return NULL;
	}
	size_t i;
	json_t *item;
	json_array_foreach(v, i, item) if (json_is_array(item) || json_is_object(item) ||
	                                   json_is_null(item))
	{
		weir_error_set(err, WEIR_E_INVALID,
		               "params.%s[%zu]: expected a string or a number, got %s",
		               task->foreach_param, i, field_type_name(item));
		return NULL;
	}
	return json_incref(v);
}
