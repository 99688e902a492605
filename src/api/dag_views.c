/* dag_views.c: DAGs, runs, task instances and import errors as Airflow
 * shows them (dag_views.h). */
#include "api/dag_views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/base64.h>

#include "lib/clock.h"
#include "lib/json_util.h"
#include "model/cron.h"

/* A DAG's file_token (Airflow's DAG field): base64url of its id, opaque,
 * naming the DAG and never a path (airflow_misc.c reads it back).  Newly
 * allocated; NULL when out of memory. */
static char *file_token(const char *dag_id)
{
	size_t len = strlen(dag_id);
	char *out = malloc(BASE64_ENCODE_LENGTH(len) + BASE64_ENCODE_FINAL_LENGTH + 1);
	struct base64_encode_ctx c;
	size_t n;

	if (!out)
		return NULL;
	base64url_encode_init(&c);
	n = base64_encode_update(&c, out, len, (const uint8_t *)dag_id);
	n += base64_encode_final(&c, out + n);
	while (n && out[n - 1] == '=')
		n--;
	out[n] = '\0';
	return out;
}

static json_t *schedule_json(const struct dag_spec *s)
{
	const struct cron *c = s ? &s->schedule : NULL;

	if (!c || c->kind == CRON_NONE)
		return json_null();
	if (c->kind == CRON_DELTA) /* Airflow's RelativeDelta, normalized as relativedelta */
		return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "__type", "RelativeDelta",
		                 "years", (json_int_t)(c->delta_months / 12), "months",
		                 (json_int_t)(c->delta_months % 12), "days",
		                 (json_int_t)(c->delta_ms / 86400000), "hours",
		                 (json_int_t)(c->delta_ms % 86400000 / 3600000), "minutes",
		                 (json_int_t)(c->delta_ms % 3600000 / 60000), "seconds",
		                 (json_int_t)(c->delta_ms % 60000 / 1000));
	return json_pack("{s:s, s:s}", "__type", "CronExpression", "value", c->text);
}

/* Airflow's has_task_concurrency_limits: a task of the DAG has
 * max_active_tis_per_dag or max_active_tis_per_dagrun. */
static bool task_concurrency_limited(const struct dag_spec *s)
{
	for (size_t i = 0; s && i < s->n_tasks; i++)
		if (s->tasks[i].max_active_tis_per_dag > 0 ||
		    s->tasks[i].max_active_tis_per_dagrun > 0)
			return true;
	return false;
}

json_t *dag_view_dag(const struct dag_row *row, const struct dag_spec *s, int64_t next)
{
	json_t *tags = json_array(), *o;

	if (s)
		for (size_t i = 0; i < s->tags.n; i++)
			json_array_append_new(tags, json_pack("{s:s}", "name", s->tags.v[i]));
	o = json_pack("{s:s, s:o, s:b, s:b, s:b, s:s, s:o, s:o, s:o, s:[], s:i, s:i, s:b, s:o, "
	              "s:o}",
	              "dag_id", row->dag_id, "description",
	              s && s->description ? json_string(s->description) : json_null(), "is_paused",
	              row->paused, "is_active", row->active, "is_subdag", 0, "fileloc", row->file,
	              "tags", tags, "schedule_interval", schedule_json(s), "next_dagrun",
	              next != CRON_NEVER ? json_util_time_airflow(next) : json_null(), "owners",
	              "max_active_runs", s ? s->max_active_runs : 0, "max_active_tasks",
	              s ? s->max_active_tasks : 0, "has_import_errors",
	              row->import_error && *row->import_error, "last_parsed_time",
	              json_util_time_airflow(row->last_parsed_at), "timetable_description",
	              s && s->timetable_description        ? json_string(s->timetable_description)
	              : s && s->schedule.kind != CRON_NONE ? json_string(s->schedule.text)
	              : s && dag_on_datasets(s)            ? json_string("Triggered by datasets")
	                                        : json_string("Never, external triggers only"));
	if (o && s && next != CRON_NEVER) {
		struct schedule_interval iv = schedule_data_interval(&s->schedule, next);
		json_object_set_new(o, "next_dagrun_data_interval_start",
		                    json_util_time_airflow(iv.start_ms));
		json_object_set_new(o, "next_dagrun_data_interval_end",
		                    json_util_time_airflow(iv.end_ms));
		json_object_set_new(o, "next_dagrun_create_after",
		                    json_util_time_airflow(schedule_due_at(&s->schedule, next)));
	} else if (o) {
		json_object_set_new(o, "next_dagrun_data_interval_start", json_null());
		json_object_set_new(o, "next_dagrun_data_interval_end", json_null());
		json_object_set_new(o, "next_dagrun_create_after", json_null());
	}
	if (o && s) {
		json_object_set(o, "params", s->params);
		json_object_set(o, "param_schemas", s->param_schemas);
		/* Airflow 2.9's: the condition, a list as {"all": [...]}, else null */
		json_object_set_new(o, "dataset_expression", dag_spec_dataset_expression(s));
	}
	if (o) {
		/* Airflow's fields weir has no use for: the values Airflow gives them then
		 * (has_task_concurrency_limits: weir's own answer) */
		char *token = file_token(row->dag_id);
		json_object_set_new(o, "dag_display_name", json_string(row->dag_id));
		json_object_set_new(o, "root_dag_id", json_null());
		json_object_set_new(o, "last_pickled", json_null());
		json_object_set_new(o, "last_expired", json_null());
		json_object_set_new(o, "scheduler_lock", json_null());
		json_object_set_new(o, "pickle_id", json_null());
		json_object_set_new(o, "default_view", json_string("grid"));
		json_object_set_new(o, "has_task_concurrency_limits",
		                    json_boolean(task_concurrency_limited(s)));
		json_object_set_new(o, "max_consecutive_failed_dag_runs", json_integer(0));
		json_object_set_new(o, "file_token", token ? json_string(token) : json_null());
		free(token);
	}
	if (o && row->import_error && *row->import_error)
		json_object_set_new(o, "import_error", json_string(row->import_error));
	return o;
}

/* A run the dataset pass started is stored as scheduled (the store's run
 * types); Airflow calls it dataset_triggered, and its run id says so. */
static const char *run_type_name(const struct dag_run_row *r)
{
	if (!strcmp(r->run_type, "scheduled") && r->run_id &&
	    !strncmp(r->run_id, "dataset_triggered__", 19))
		return "dataset_triggered";
	return r->run_type;
}

json_t *dag_view_run(const struct dag_run_row *r)
{
	json_t *conf = json_loads(r->conf && *r->conf ? r->conf : "{}", 0, NULL);

	return json_pack(
	    "{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o, s:b, s:o, "
	    "s:o, s:o, s:s}",
	    "dag_id", r->dag_id, "dag_run_id", r->run_id, "logical_date",
	    json_util_time_airflow(r->logical_date ? r->logical_date : 1), "execution_date",
	    json_util_time_airflow(r->logical_date ? r->logical_date : 1), "start_date",
	    json_util_time_airflow(r->start_date), "end_date", json_util_time_airflow(r->end_date),
	    "data_interval_start", json_util_time_airflow(r->data_interval_start),
	    "data_interval_end", json_util_time_airflow(r->data_interval_end), "state",
	    dag_run_state_name(r->state), "run_type", run_type_name(r), "conf",
	    conf ? conf : json_object(), "external_trigger", strcmp(r->run_type, "scheduled") != 0,
	    "queued_at", json_util_time_airflow(r->queued_at), "last_scheduling_decision",
	    json_util_time_airflow(r->end_date ? r->end_date : r->start_date), "note",
	    r->note.text ? json_string(r->note.text) : json_null(), "reason",
	    r->reason ? r->reason : "");
}

/* A time as the views show it, with its key; null for ms <= 0. */
static void put_time(struct strbuf *sb, const char *key, int64_t ms);
static bool put_tree(struct strbuf *sb, const char *key, json_t *v);

int dag_view_run_write(struct strbuf *sb, const struct dag_run_row *r)
{
	size_t at = sb->len;
	json_t *conf;
	bool ok = true;

	/* json_pack's "s": a missing text is no view */
	if (!r->dag_id || !r->run_id || !dag_run_state_name(r->state))
		return -1;
	conf = json_loads(r->conf && *r->conf ? r->conf : "{}", 0, NULL);
	if (!conf)
		conf = json_object();
	strbuf_addch(sb, '{');
	ok &= json_util_write_field(sb, "dag_id", r->dag_id) == 0;
	ok &= json_util_write_field(sb, "dag_run_id", r->run_id) == 0;
	put_time(sb, "logical_date", r->logical_date ? r->logical_date : 1);
	put_time(sb, "execution_date", r->logical_date ? r->logical_date : 1);
	put_time(sb, "start_date", r->start_date);
	put_time(sb, "end_date", r->end_date);
	put_time(sb, "data_interval_start", r->data_interval_start);
	put_time(sb, "data_interval_end", r->data_interval_end);
	ok &= json_util_write_field(sb, "state", dag_run_state_name(r->state)) == 0;
	ok &= json_util_write_field(sb, "run_type", run_type_name(r)) == 0;
	ok &= conf && put_tree(sb, "conf", conf);
	json_util_write_bool_field(sb, "external_trigger", strcmp(r->run_type, "scheduled") != 0);
	put_time(sb, "queued_at", r->queued_at);
	put_time(sb, "last_scheduling_decision", r->end_date ? r->end_date : r->start_date);
	ok &= json_util_write_field(sb, "note", r->note.text) == 0;
	ok &= json_util_write_field(sb, "reason", r->reason ? r->reason : "") == 0;
	strbuf_addch(sb, '}');
	json_decref(conf);
	if (!ok && !sb->failed) {
		sb->len = at;
		sb->buf[at] = '\0';
		return -1;
	}
	return sb->failed ? -1 : 0;
}

json_t *dag_view_ti_state(enum dag_ti_state s)
{
	return s == DAG_TI_NONE ? json_null() : json_string(dag_ti_state_name(s));
}

/* A TI's view built field by field: the first value missing spoils it. */
struct ti_fields {
	json_t *o;
	bool failed;
};

static void put(struct ti_fields *b, const char *key, json_t *v)
{
	if (!v || !b->o || b->failed) {
		json_decref(v);
		b->failed = true;
	} else if (json_object_set_new(b->o, key, v) < 0) {
		b->failed = true; /* json_object_set_new dropped v */
	}
}

/* json_pack's "s": NULL text (or not UTF-8) is no value */
static json_t *str(const char *s)
{
	return s ? json_string(s) : NULL;
}

void dag_view_ti_shown(const struct dag_ti_row *r, const struct dag_job_view *job,
                       struct dag_ti_shown *out)
{
	bool have_job = job && job->known;

	out->state = r->state;
	out->reason = r->reason ? r->reason : "";
	out->start_date = r->start_date;
	out->end_date = r->end_date;
	/* queued until its job runs; while it waits, the job says why (the node's
	 * resources, or "pending in slurm: <Slurm's reason>") */
	if (have_job && r->state == DAG_TI_QUEUED) {
		if (job->running)
			out->state = DAG_TI_RUNNING;
		else if (job->reason && *job->reason)
			out->reason = job->reason;
	}
	if (have_job && !out->start_date && job->started_at && out->state != DAG_TI_QUEUED)
		out->start_date = job->started_at;
	if (out->state == DAG_TI_RUNNING)
		out->end_date = 0;
}

bool dag_view_ti_needs_job(const struct dag_ti_row *r)
{
	return r->job_id > 0 && (r->state == DAG_TI_QUEUED || !r->start_date);
}

/* A mapped instance's rendered map_index_template: the output's
 * `weir_rendered_map_index` (a Python DAG file's task writes it), a new
 * reference; JSON null when none. */
static json_t *rendered_map_index(const json_t *outputs)
{
	json_t *v = outputs ? json_object_get(outputs, "weir_rendered_map_index") : NULL;
	return json_is_string(v) ? json_incref(v) : json_null();
}

/* dag_view_ti with its run's logical date (0: none). */
static json_t *ti_tree(const struct dag_ti_row *r, int64_t logical, const struct dag_job_view *job)
{
	bool have_job = job && job->known;
	struct dag_ti_shown sh;
	enum dag_ti_state state;
	const char *reason;
	int64_t start, end_ms;
	json_t *outputs = NULL, *o, *map_shown;

	dag_view_ti_shown(r, job, &sh);
	state = sh.state;
	reason = sh.reason;
	start = sh.start_date;
	end_ms = sh.end_date;
	if (r->outputs && *r->outputs)
		outputs = json_loads(r->outputs, 0, NULL);
	map_shown = rendered_map_index(outputs); /* before "outputs" takes it */
	/* set one by one in json_pack's order (the same text), without its
	 * format read at each of a listing's TIs (it was half a TI's view);
	 * as with json_pack, any value missing (NULL text, no memory) is none */
	struct ti_fields b = {.o = json_object()};
	put(&b, "task_id", str(r->task_id));
	put(&b, "dag_id", str(r->dag_id));
	put(&b, "dag_run_id", str(r->run_id));
	put(&b, "map_index", json_integer(r->map_index));
	put(&b, "execution_date", json_util_time_airflow(logical));
	put(&b, "logical_date", json_util_time_airflow(logical));
	put(&b, "start_date", json_util_time_airflow(start));
	put(&b, "end_date", json_util_time_airflow(end_ms));
	put(&b, "duration",
	    start && end_ms ? json_real((double)(end_ms - start) / 1000.0) : json_null());
	put(&b, "state", dag_view_ti_state(state));
	put(&b, "try_number", json_integer(r->try_number));
	put(&b, "max_tries", json_integer(r->max_tries > 0 ? r->max_tries - 1 : 0));
	put(&b, "pool", str(r->pool));
	put(&b, "pool_slots", json_integer(r->pool_slots));
	put(&b, "priority_weight", json_integer(r->priority));
	put(&b, "operator", json_string(job && job->task_class ? job->task_class : "weir"));
	put(&b, "queued_when", json_util_time_airflow(r->queued_at));
	put(&b, "hostname", json_string(have_job ? "localhost" : ""));
	put(&b, "unixname", json_string(""));
	put(&b, "job_id", r->job_id > 0 ? json_integer(r->job_id) : json_null());
	put(&b, "rendered_command",
	    r->rendered_command && *r->rendered_command ? json_string(r->rendered_command)
	                                                : json_null());
	put(&b, "reason", str(reason));
	put(&b, "outputs", outputs ? outputs : json_null());
	put(&b, "rendered_fields",
	    json_pack("{s:s}", "command", r->rendered_command ? r->rendered_command : ""));
	put(&b, "executor_config", json_string("{}"));
	/* Airflow's fields weir has nothing for */
	put(&b, "task_display_name", str(r->task_id));
	static const char *const nulls[] = {"queue", "pid", "executor", "sla_miss"};
	for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
		put(&b, nulls[i], json_null());
	put(&b, "rendered_map_index", map_shown);
	put(&b, "trigger", json_null());
	put(&b, "triggerer_job", json_null());
	put(&b, "note", r->note.text ? str(r->note.text) : json_null());
	if (b.failed) {
		json_decref(b.o);
		return NULL;
	}
	o = b.o;
	return o;
}

json_t *dag_view_ti(const struct dag_ti_row *r, const struct dag_run_row *run,
                    const struct dag_job_view *job)
{
	return ti_tree(r, run ? run->logical_date : 0, job);
}

/* A time as json_util_time_airflow shows it: null for ms <= 0. */
static void put_time(struct strbuf *sb, const char *key, int64_t ms)
{
	char buf[48];

	json_util_write_field(sb, key, ms > 0 ? clock_format_airflow(ms, buf, sizeof buf) : NULL);
}

/* A value given as a tree, as json_dumps writes it inside its parent (null
 * for NULL); false when it cannot be written. */
static bool put_tree(struct strbuf *sb, const char *key, json_t *v)
{
	char *t;

	if (!v) {
		json_util_write_field(sb, key, NULL);
		return true;
	}
	t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!t)
		return false;
	json_util_write_key(sb, key);
	strbuf_addstr(sb, t);
	free(t);
	return true;
}

/* dag_view_ti_write with its run's logical date (0: none). */
static int ti_write(struct strbuf *sb, const struct dag_ti_row *r, int64_t logical,
                    const struct dag_job_view *job, json_t *sla_miss)
{
	bool have_job = job && job->known, ok = true;
	size_t at = sb->len;
	struct dag_ti_shown sh;

	dag_view_ti_shown(r, job, &sh);
	/* the fields in dag_view_ti's order; a missing text (NULL, not UTF-8)
	 * spoils the TI as it does there */
	if (!r->task_id || !r->dag_id || !r->run_id || !r->pool)
		return -1;
	strbuf_addch(sb, '{');
	ok &= json_util_write_field(sb, "task_id", r->task_id) == 0;
	ok &= json_util_write_field(sb, "dag_id", r->dag_id) == 0;
	ok &= json_util_write_field(sb, "dag_run_id", r->run_id) == 0;
	json_util_write_int_field(sb, "map_index", r->map_index);
	put_time(sb, "execution_date", logical);
	put_time(sb, "logical_date", logical);
	put_time(sb, "start_date", sh.start_date);
	put_time(sb, "end_date", sh.end_date);
	json_util_write_key(sb, "duration");
	if (sh.start_date && sh.end_date)
		json_util_write_real(sb, (double)(sh.end_date - sh.start_date) / 1000.0);
	else
		strbuf_add(sb, "null", 4);
	ok &= json_util_write_field(
	          sb, "state", sh.state == DAG_TI_NONE ? NULL : dag_ti_state_name(sh.state)) == 0;
	json_util_write_int_field(sb, "try_number", r->try_number);
	json_util_write_int_field(sb, "max_tries", r->max_tries > 0 ? r->max_tries - 1 : 0);
	ok &= json_util_write_field(sb, "pool", r->pool) == 0;
	json_util_write_int_field(sb, "pool_slots", r->pool_slots);
	json_util_write_int_field(sb, "priority_weight", r->priority);
	json_util_write_field(sb, "operator", job && job->task_class ? job->task_class : "weir");
	put_time(sb, "queued_when", r->queued_at);
	json_util_write_field(sb, "hostname", have_job ? "localhost" : "");
	json_util_write_field(sb, "unixname", "");
	if (r->job_id > 0)
		json_util_write_int_field(sb, "job_id", r->job_id);
	else
		json_util_write_field(sb, "job_id", NULL);
	ok &= json_util_write_field(
	          sb, "rendered_command",
	          r->rendered_command && *r->rendered_command ? r->rendered_command : NULL) == 0;
	ok &= json_util_write_field(sb, "reason", sh.reason) == 0;
	if (r->outputs && *r->outputs) {
		json_t *outputs = json_loads(r->outputs, 0, NULL);
		ok &= put_tree(sb, "outputs", outputs);
		json_decref(outputs);
	} else {
		json_util_write_field(sb, "outputs", NULL);
	}
	json_util_write_key(sb, "rendered_fields");
	strbuf_addch(sb, '{');
	ok &= json_util_write_field(sb, "command",
	                            r->rendered_command ? r->rendered_command : "") == 0;
	strbuf_addch(sb, '}');
	json_util_write_field(sb, "executor_config", "{}");
	json_util_write_field(sb, "task_display_name", r->task_id);
	json_util_write_field(sb, "queue", NULL);
	json_util_write_field(sb, "pid", NULL);
	json_util_write_field(sb, "executor", NULL);
	ok &= put_tree(sb, "sla_miss", sla_miss);
	{
		json_t *outputs =
		    r->outputs && *r->outputs ? json_loads(r->outputs, 0, NULL) : NULL;
		json_t *shown = rendered_map_index(outputs);
		ok &= put_tree(sb, "rendered_map_index", shown);
		json_decref(shown);
		json_decref(outputs);
	}
	json_util_write_field(sb, "trigger", NULL);
	json_util_write_field(sb, "triggerer_job", NULL);
	ok &= json_util_write_field(sb, "note", r->note.text) == 0;
	strbuf_addch(sb, '}');
	if (!ok && !sb->failed) {
		sb->len = at;
		sb->buf[at] = '\0';
		return -1;
	}
	return sb->failed ? -1 : 0;
}

int dag_view_ti_write(struct strbuf *sb, const struct dag_ti_row *r, const struct dag_run_row *run,
                      const struct dag_job_view *job, json_t *sla_miss)
{
	return ti_write(sb, r, run ? run->logical_date : 0, job, sla_miss);
}

static json_t *ti_ref(const char *dag_id, const char *run_id, const char *task_id, int map_index,
                      int64_t logical)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:o}", "dag_id", dag_id, "dag_run_id", run_id,
	                 "task_id", task_id, "map_index", map_index, "execution_date",
	                 json_util_time_airflow(logical ? logical : 1));
}

json_t *dag_view_ti_ref(const struct dag_ti_row *r, const struct dag_run_row *run)
{
	return ti_ref(r->dag_id, r->run_id, r->task_id, r->map_index, run->logical_date);
}

json_t *dag_view_import_error(const struct dag_import_error_row *r)
{
	return json_pack("{s:I, s:s, s:s, s:o}", "import_error_id", (json_int_t)r->id, "filename",
	                 r->file, "stack_trace", r->message, "timestamp",
	                 json_util_time_airflow(r->time));
}

json_t *dag_view_collection(const char *key, json_t *items, size_t total)
{
	return json_pack("{s:o, s:I}", key, items, "total_entries", (json_int_t)total);
}

/* ---- the DAG ops' rows ---- */

json_t *dag_view_dag_of(const struct dag_view *d)
{
	return dag_view_dag(&d->row, d->spec, d->next_ms);
}

json_t *dag_view_dags(const struct dag_list *l)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < l->n; i++)
		json_array_append_new(a, dag_view_dag_of(&l->v[i]));
	return a ? dag_view_collection("dags", a, l->total) : NULL;
}

json_t *dag_view_runs(const struct dag_run_list *l)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < l->n; i++)
		json_array_append_new(a, dag_view_run(&l->v[i]));
	return a ? dag_view_collection("dag_runs", a, l->total) : NULL;
}

json_t *dag_view_ti_of(const struct dag_ti_view *t)
{
	json_t *o = ti_tree(&t->row, t->logical_date, &t->job);

	if (o && t->sla_miss)
		json_object_set(o, "sla_miss", t->sla_miss);
	return o;
}

int dag_view_ti_of_write(struct strbuf *sb, const struct dag_ti_view *t)
{
	return ti_write(sb, &t->row, t->logical_date, &t->job, t->sla_miss);
}

bool dag_view_ti_showable(const struct dag_ti_view *t)
{
	const struct dag_ti_row *r = &t->row;
	struct dag_ti_shown sh;

	/* the texts ti_write writes whose failure spoils the TI */
	dag_view_ti_shown(r, &t->job, &sh);
	return json_util_utf8_ok(r->task_id) && json_util_utf8_ok(r->dag_id) &&
	       json_util_utf8_ok(r->run_id) && json_util_utf8_ok(r->pool) &&
	       (!r->rendered_command || json_util_utf8_ok(r->rendered_command)) &&
	       (!r->note.text || json_util_utf8_ok(r->note.text)) && json_util_utf8_ok(sh.reason);
}

int dag_view_tis_write(struct strbuf *sb, const struct dag_ti_list *l)
{
	size_t n = 0;

	/* as dag_view_collection's tree is written */
	strbuf_add(sb, "{\"task_instances\":[", 19);
	for (size_t i = 0; i < l->n && !sb->failed; i++) {
		size_t at = sb->len;
		if (n)
			strbuf_addch(sb, ',');
		if (dag_view_ti_of_write(sb, &l->v[i]) < 0 && !sb->failed) {
			sb->len = at; /* no view: none */
			sb->buf[at] = '\0';
			continue;
		}
		n++;
	}
	strbuf_addch(sb, ']');
	json_util_write_int_field(sb, "total_entries", (long long)l->total);
	strbuf_addch(sb, '}');
	return sb->failed ? -1 : 0;
}

json_t *dag_view_tis(const struct dag_ti_list *l)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *o = NULL;

	if (dag_view_tis_write(&sb, l) == 0)
		o = json_loadb(sb.buf, sb.len, 0, NULL);
	strbuf_release(&sb);
	return o;
}

json_t *dag_view_ti_refs(const struct dag_ti_refs *refs)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < refs->n; i++) {
		const struct dag_ti_ref *r = &refs->v[i];
		json_array_append_new(
		    a, ti_ref(r->dag_id, r->run_id, r->task_id, r->map_index, r->logical_date));
	}
	return a;
}

json_t *dag_view_import_errors(const struct dag_import_error_list *l)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < l->n; i++)
		json_array_append_new(a, dag_view_import_error(&l->v[i]));
	return a ? dag_view_collection("import_errors", a, l->total) : NULL;
}
