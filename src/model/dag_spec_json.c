/* dag_spec_json.c: a DAG spec as JSON (dag_spec_to_json), defaults
 * resolved, as the API and `weir dags show` give it. */
#include "model/dag_spec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dataset.h"
#include "model/job_spec_edit.h"

/* ---- out ---------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *time_json(int64_t ms)
{
	char buf[40];
	return ms == CRON_NEVER ? json_null()
	                        : json_string(schedule_format_ts(ms, buf, sizeof buf));
}

static json_t *resources_json(const struct dag_resources *res)
{
	json_t *o = json_object();
	char buf[40];
	if (!o)
		return NULL;
	int rc = 0;
	if (res->memory_mb)
		rc |= json_object_set_new(
		    o, "memory", json_string(format_memory_mb(res->memory_mb, buf, sizeof buf)));
	if (res->vcores)
		rc |= json_object_set_new(o, "vcores", json_integer(res->vcores));
	if (res->gpus >= 0)
		rc |= json_object_set_new(o, "gpus", json_integer(res->gpus));
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *strvec_json(const struct strvec *sv)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < sv->n; i++)
		if (json_array_append_new(a, json_string(sv->v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *task_json(const struct dag_task *t)
{
	json_t *o = json_object();
	int rc = 0;
	if (!o)
		return NULL;
	rc |= json_object_set_new(o, "task_id", json_string(t->task_id));
	if (t->operator_class)
		rc |= json_object_set_new(o, "operator", json_string(t->operator_class));
	if (t->doc_md)
		rc |= json_object_set_new(o, "doc_md", json_string(t->doc_md));
	rc |= json_object_set_new(o, "depends_on", strvec_json(&t->depends_on));
	rc |=
	    json_object_set_new(o, "trigger_rule", json_string(trigger_rule_name(t->trigger_rule)));
	switch (t->kind) {
	case DAG_TASK_COMMAND: {
		json_t *env = json_object();
		for (size_t i = 0; env && i < t->n_env; i++)
			rc |=
			    json_object_set_new(env, t->env[i].name, json_string(t->env[i].value));
		rc |= json_object_set_new(o, "command", json_string(t->command));
		rc |= json_object_set_new(o, "env", env);
		rc |= json_object_set_new(o, "cwd", str_or_null(t->cwd));
		rc |= json_object_set_new(o, "resources", resources_json(&t->resources));
		if (t->sensor) /* a sensor whose poke is the command */
			rc |= json_object_set(o, "sensor", t->sensor->spec);
		break;
	}
	case DAG_TASK_JOB:
		rc |= json_object_set_new(o, "job", job_spec_to_json(t->job));
		break;
	case DAG_TASK_JOB_FILE:
		rc |= json_object_set_new(o, "job", json_string(t->job_path));
		break;
	case DAG_TASK_JOB_TONY:
		rc |= json_object_set(o, "job", t->tony);
		break;
	case DAG_TASK_SQL:
	case DAG_TASK_TRANSFER:
		rc |= json_object_set(o, t->kind == DAG_TASK_SQL ? "sql" : "transfer", t->data);
		rc |= json_object_set_new(o, "resources", resources_json(&t->resources));
		break;
	case DAG_TASK_TRIGGER_DAG:
		rc |= json_object_set_new(o, "trigger_dag", dag_trigger_to_json(t->trigger));
		break;
	case DAG_TASK_SENSOR:
		rc |= json_object_set(o, "sensor", t->sensor->spec);
		rc |= json_object_set_new(o, "resources", resources_json(&t->resources));
		break;
	}
	if (t->outlets.n)
		rc |= json_object_set_new(o, "outlets", strvec_json(&t->outlets));
	if (t->inlets.n || t->inlet_aliases.n) {
		json_t *in = strvec_json(&t->inlets);
		for (size_t i = 0; in && i < t->inlet_aliases.n; i++)
			rc |= json_array_append_new(
			    in, json_pack("{s:s}", "alias", t->inlet_aliases.v[i]));
		rc |= json_object_set_new(o, "inlets", in);
	}
	if (t->marker)
		rc |= json_object_set(o, "marker", t->marker);
	if (t->connections.n)
		rc |= json_object_set_new(o, "connections", strvec_json(&t->connections));
	if (t->variables.n)
		rc |= json_object_set_new(o, "variables", strvec_json(&t->variables));
	rc |= json_object_set_new(o, "retries", json_integer(t->retries));
	rc |= json_object_set_new(o, "retry_delay", json_integer(t->retry_delay_s));
	rc |= json_object_set_new(o, "retry_exponential_backoff",
	                          json_boolean(t->retry_exponential_backoff));
	rc |= json_object_set_new(o, "max_retry_delay", json_integer(t->max_retry_delay_s));
	rc |= json_object_set_new(o, "execution_timeout", json_integer(t->execution_timeout_s));
	rc |= json_object_set_new(o, "pool", str_or_null(t->pool));
	rc |= json_object_set_new(o, "pool_slots",
	                          json_integer(t->pool_slots > 0 ? t->pool_slots : 1));
	if (t->max_active_tis_per_dag > 0)
		rc |= json_object_set_new(o, "max_active_tis_per_dag",
		                          json_integer(t->max_active_tis_per_dag));
	if (t->max_active_tis_per_dagrun > 0)
		rc |= json_object_set_new(o, "max_active_tis_per_dagrun",
		                          json_integer(t->max_active_tis_per_dagrun));
	if (t->queue)
		rc |= json_object_set_new(o, "queue", json_string(t->queue));
	if (t->slurm)
		rc |= json_object_set(o, "slurm", t->slurm);
	rc |= json_object_set_new(o, "priority", json_integer(t->priority));
	if (t->foreach_list) {
		rc |= json_object_set(o, "foreach", t->foreach_list);
	} else if (t->foreach_param) {
		char *s = NULL;
		if (asprintf(&s, "{{ params.%s }}", t->foreach_param) < 0)
			s = NULL;
		rc |= json_object_set_new(o, "foreach", s ? json_string(s) : NULL);
		free(s);
	}
	if (t->sla.within_s > 0)
		rc |= json_object_set_new(o, "sla", notify_sla_to_json(&t->sla));
	rc |= dag_notify_to_json(t->notify, o);
	rc |= dag_flow_to_json(t, o);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The params as the file gave them: a schema where there is one (it holds
 * the default), else the plain default, so the JSON reads back the same. */
static json_t *params_as_written(const struct dag_spec *dag)
{
	json_t *o = json_deep_copy(dag->params);
	const char *k;
	json_t *sc;

	if (o)
		json_object_foreach(dag->param_schemas, k, sc) json_object_set(o, k, sc);
	return o;
}

/* The schedule as written: a cron text, a list of datasets, or the mapping of a trigger
 * cron or a cron with datasets (dag_spec.c's read_schedule_object). */
static json_t *schedule_json(const struct dag_spec *dag)
{
	const struct cron *c = &dag->schedule;
	bool both = c->kind == CRON_EXPR && dag_on_datasets(dag);
	if (c->kind == CRON_DELTA || c->kind == CRON_EVENTS || c->kind == CRON_RUNS)
		return dag_timetable_json(dag);
	if (!c->trigger && !both && dag->dataset_condition)
		return json_pack("{s:O}", "datasets", dag->dataset_condition);
	if (!c->trigger && !both)
		return dag->dataset_schedule.n ? strvec_json(&dag->dataset_schedule)
		                               : json_string(c->text);
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, c->trigger ? "trigger" : "cron", json_string(c->text));
	if (c->trigger && c->trigger_interval_ms)
		json_object_set_new(o, "interval", json_integer(c->trigger_interval_ms / 1000));
	if (dag->dataset_condition)
		json_object_set(o, "datasets", dag->dataset_condition);
	else if (dag->dataset_schedule.n)
		json_object_set_new(o, "datasets", strvec_json(&dag->dataset_schedule));
	return o;
}

bool dag_on_datasets(const struct dag_spec *dag)
{
	return dag->dataset_schedule.n || dag->dataset_aliases.n;
}

json_t *dag_spec_dataset_expression(const struct dag_spec *dag)
{
	if (dag->dataset_condition)
		return json_incref(dag->dataset_condition);
	if (!dag->dataset_schedule.n)
		return json_null();
	return json_pack("{s:o}", "all", strvec_json(&dag->dataset_schedule));
}

json_t *dag_spec_to_json(const struct dag_spec *dag)
{
	json_t *o = json_object();
	json_t *tasks = json_array();
	json_t *da = json_object();
	const struct dag_default_args *d = &dag->default_args;
	int rc = 0;
	if (!o || !tasks || !da)
		goto fail;
	rc |= json_object_set_new(o, "dag_id", json_string(dag->dag_id));
	rc |= json_object_set_new(o, "description", str_or_null(dag->description));
	if (dag->doc_md)
		rc |= json_object_set_new(o, "doc_md", json_string(dag->doc_md));
	rc |= json_object_set_new(o, "schedule", schedule_json(dag));
	if (dag->schedule.zone)
		rc |= json_object_set_new(o, "timezone",
		                          json_string(tz_zone_name(dag->schedule.zone)));
	rc |= json_object_set_new(o, "start_date", time_json(dag->start_date_ms));
	rc |= json_object_set_new(o, "end_date", time_json(dag->end_date_ms));
	rc |= json_object_set_new(o, "catchup", json_boolean(dag->catchup));
	if (dag->manual_ending)
		rc |= json_object_set_new(o, "manual_interval", dag_manual_interval_json(dag));
	rc |= json_object_set_new(o, "max_active_runs", json_integer(dag->max_active_runs));
	rc |= json_object_set_new(o, "max_active_tasks", json_integer(dag->max_active_tasks));
	if (dag->dagrun_timeout_s > 0)
		rc |= json_object_set_new(o, "dagrun_timeout", json_integer(dag->dagrun_timeout_s));
	rc |= json_object_set_new(o, "params", params_as_written(dag));
	rc |= json_object_set_new(o, "tags", strvec_json(&dag->tags));
	if (dag->access.set)
		rc |= json_object_set_new(o, "access", dag_access_to_json(&dag->access));
	if (d->retries >= 0)
		rc |= json_object_set_new(da, "retries", json_integer(d->retries));
	if (d->retry_delay_s >= 0)
		rc |= json_object_set_new(da, "retry_delay", json_integer(d->retry_delay_s));
	if (d->retry_exponential_backoff >= 0)
		rc |= json_object_set_new(da, "retry_exponential_backoff",
		                          json_boolean(d->retry_exponential_backoff));
	if (d->max_retry_delay_s >= 0)
		rc |=
		    json_object_set_new(da, "max_retry_delay", json_integer(d->max_retry_delay_s));
	if (d->execution_timeout_s >= 0)
		rc |= json_object_set_new(da, "execution_timeout",
		                          json_integer(d->execution_timeout_s));
	if (d->pool)
		rc |= json_object_set_new(da, "pool", json_string(d->pool));
	if (d->pool_slots > 0)
		rc |= json_object_set_new(da, "pool_slots", json_integer(d->pool_slots));
	if (d->queue)
		rc |= json_object_set_new(da, "queue", json_string(d->queue));
	if (d->priority_set)
		rc |= json_object_set_new(da, "priority", json_integer(d->priority));
	if (d->resources.memory_mb || d->resources.vcores || d->resources.gpus >= 0)
		rc |= json_object_set_new(da, "resources", resources_json(&d->resources));
	if (d->sla.within_s > 0)
		rc |= json_object_set_new(da, "sla", notify_sla_to_json(&d->sla));
	rc |= dag_notify_to_json(d->notify, da);
	rc |= json_object_set_new(o, "default_args", da);
	da = NULL;
	rc |= dag_notify_to_json(dag->notify, o);
	for (size_t i = 0; i < dag->n_tasks; i++)
		rc |= json_array_append_new(tasks, task_json(&dag->tasks[i]));
	rc |= json_object_set_new(o, "tasks", tasks);
	tasks = NULL;
	if (rc)
		goto fail;
	return o;
fail:
	json_decref(o);
	json_decref(tasks);
	json_decref(da);
	return NULL;
}
