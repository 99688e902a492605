/* dag_views.c: DAGs, runs, task instances and import errors as Airflow
 * shows them (dag_views.h). */
#include "api/dag_views.h"

#include <stdio.h>
#include <string.h>

#include "model/cron.h"

char *dag_view_fmt_time(int64_t ms, char *buf, size_t size)
{
	char ts[40];
	int64_t sec_ms = ms - (((ms % 1000) + 1000) % 1000);

	schedule_format_ts(sec_ms, ts, sizeof ts);
	if (ms == sec_ms) {
		snprintf(buf, size, "%s", ts);
	} else {
		char *plus = strrchr(ts, '+');
		if (plus)
			*plus = '\0';
		snprintf(buf, size, "%s.%03d000+00:00", ts, (int)(ms - sec_ms));
	}
	return buf;
}

json_t *dag_view_time(int64_t ms)
{
	char buf[48];

	if (ms <= 0)
		return json_null();
	return json_string(dag_view_fmt_time(ms, buf, sizeof buf));
}

static json_t *schedule_json(const struct dag_spec *s)
{
	if (!s || s->schedule.kind == CRON_NONE)
		return json_null();
	return json_pack("{s:s, s:s}", "__type", "CronExpression", "value", s->schedule.text);
}

json_t *dag_view_dag(const struct dag_row *row, const struct dag_spec *s, int64_t next)
{
	json_t *tags = json_array(), *o;

	if (s)
		for (size_t i = 0; i < s->tags.n; i++)
			json_array_append_new(tags, json_pack("{s:s}", "name", s->tags.v[i]));
	o = json_pack(
	    "{s:s, s:o, s:b, s:b, s:b, s:s, s:o, s:o, s:o, s:[], s:i, s:i, s:b, s:o, "
	    "s:o}",
	    "dag_id", row->dag_id, "description",
	    s && s->description ? json_string(s->description) : json_null(), "is_paused",
	    row->paused, "is_active", row->active, "is_subdag", 0, "fileloc", row->file, "tags",
	    tags, "schedule_interval", schedule_json(s), "next_dagrun",
	    next != CRON_NEVER ? dag_view_time(next) : json_null(), "owners", "max_active_runs",
	    s ? s->max_active_runs : 0, "max_active_tasks", s ? s->max_active_tasks : 0,
	    "has_import_errors", row->import_error && *row->import_error, "last_parsed_time",
	    dag_view_time(row->last_parsed_at), "timetable_description",
	    s && s->schedule.kind != CRON_NONE ? json_string(s->schedule.text)
	                                       : json_string("Never, external triggers only"));
	if (o && s && next != CRON_NEVER) {
		struct schedule_interval iv = schedule_data_interval(&s->schedule, next);
		json_object_set_new(o, "next_dagrun_data_interval_start",
		                    dag_view_time(iv.start_ms));
		json_object_set_new(o, "next_dagrun_data_interval_end", dag_view_time(iv.end_ms));
		json_object_set_new(o, "next_dagrun_create_after", dag_view_time(iv.end_ms));
	} else if (o) {
		json_object_set_new(o, "next_dagrun_data_interval_start", json_null());
		json_object_set_new(o, "next_dagrun_data_interval_end", json_null());
		json_object_set_new(o, "next_dagrun_create_after", json_null());
	}
	if (o && s)
		json_object_set(o, "params", s->params);
	if (o && row->import_error && *row->import_error)
		json_object_set_new(o, "import_error", json_string(row->import_error));
	return o;
}

json_t *dag_view_run(const struct dag_run_row *r)
{
	json_t *conf = json_loads(r->conf && *r->conf ? r->conf : "{}", 0, NULL);

	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o, s:b, s:o, "
	                 "s:o, s:n, s:s}",
	                 "dag_id", r->dag_id, "dag_run_id", r->run_id, "logical_date",
	                 dag_view_time(r->logical_date ? r->logical_date : 1), "execution_date",
	                 dag_view_time(r->logical_date ? r->logical_date : 1), "start_date",
	                 dag_view_time(r->start_date), "end_date", dag_view_time(r->end_date),
	                 "data_interval_start", dag_view_time(r->data_interval_start),
	                 "data_interval_end", dag_view_time(r->data_interval_end), "state",
	                 dag_run_state_name(r->state), "run_type", r->run_type, "conf", conf ? conf : json_object(),
	                 "external_trigger", strcmp(r->run_type, "scheduled") != 0, "queued_at",
	                 dag_view_time(r->queued_at), "last_scheduling_decision",
	                 dag_view_time(r->end_date ? r->end_date : r->start_date), "note", "reason",
	                 r->reason ? r->reason : "");
}

json_t *dag_view_ti_state(enum dag_ti_state s)
{
	return s == DAG_TI_NONE ? json_null() : json_string(dag_ti_state_name(s));
}

json_t *dag_view_ti(const struct dag_ti_row *r, const struct dag_run_row *run,
                    const struct dag_job_view *job)
{
	bool have_job = job && job->known;
	enum dag_ti_state state = r->state;
	const char *reason = r->reason ? r->reason : "";
	int64_t start = r->start_date, end_ms = r->end_date;
	json_t *outputs = NULL;

	/* queued until its job runs; while it waits, the job says why (the node's
	 * resources, or "pending in slurm: <Slurm's reason>") */
	if (have_job && r->state == DAG_TI_QUEUED) {
		if (job->running)
			state = DAG_TI_RUNNING;
		else if (job->reason && *job->reason)
			reason = job->reason;
	}
	if (have_job && !start && job->started_at && state != DAG_TI_QUEUED)
		start = job->started_at;
	if (state == DAG_TI_RUNNING)
		end_ms = 0;
	if (r->outputs && *r->outputs)
		outputs = json_loads(r->outputs, 0, NULL);
	return json_pack(
	    "{s:s, s:s, s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:s, s:i, "
	    "s:i, s:s, s:o, s:s, s:s, s:o, s:o, s:s, s:o, s:o, s:s}",
	    "task_id", r->task_id, "dag_id", r->dag_id, "dag_run_id", r->run_id, "map_index",
	    r->map_index, "execution_date", dag_view_time(run ? run->logical_date : 0),
	    "logical_date", dag_view_time(run ? run->logical_date : 0), "start_date",
	    dag_view_time(start), "end_date", dag_view_time(end_ms), "duration",
	    start && end_ms ? json_real((double)(end_ms - start) / 1000.0) : json_null(), "state",
	    dag_view_ti_state(state), "try_number", r->try_number,
	    "max_tries", r->max_tries > 0 ? r->max_tries - 1 : 0, "pool", r->pool, "pool_slots",
	    r->pool_slots, "priority_weight", r->priority, "operator", "weir", "queued_when",
	    dag_view_time(r->queued_at), "hostname", have_job ? "localhost" : "", "unixname", "",
	    "job_id", r->job_id > 0 ? json_integer(r->job_id) : json_null(), "rendered_command",
	    r->rendered_command && *r->rendered_command ? json_string(r->rendered_command)
	                                                : json_null(),
	    "reason", reason, "outputs", outputs ? outputs : json_null(), "rendered_fields",
	    json_pack("{s:s}", "command", r->rendered_command ? r->rendered_command : ""),
	    "executor_config", "{}");
}

json_t *dag_view_ti_ref(const struct dag_ti_row *r, const struct dag_run_row *run)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:o}", "dag_id", r->dag_id, "dag_run_id", r->run_id,
	                 "task_id", r->task_id, "map_index", r->map_index, "execution_date",
	                 dag_view_time(run->logical_date ? run->logical_date : 1));
}

json_t *dag_view_import_error(const struct dag_import_error_row *r)
{
	return json_pack("{s:I, s:s, s:s, s:o}", "import_error_id", (json_int_t)r->id, "filename",
	                 r->file, "stack_trace", r->message, "timestamp", dag_view_time(r->time));
}

json_t *dag_view_collection(const char *key, json_t *items, size_t total)
{
	return json_pack("{s:o, s:I}", key, items, "total_entries", (json_int_t)total);
}
