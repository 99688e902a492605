/* dag_ui_views.c: a DAG's tasks and details, a TI's tries, and the web
 * UI's DAG list, grid and stats (dag_ui_views.h). */
#include "api/dag_ui_views.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_util.h"
#include "model/cron.h"
#include "model/dataset.h"

static json_t *time_or_null(int64_t ms)
{
	return ms == CRON_NEVER ? json_null() : json_util_time_airflow(ms);
}

/* Airflow's TimeDelta; null for 0 when `zero_null`. */
static json_t *timedelta_json(int64_t seconds, bool zero_null)
{
	if (seconds <= 0 && zero_null)
		return json_null();
	if (seconds < 0)
		seconds = 0;
	return json_pack("{s:s, s:I, s:I, s:i}", "__type", "TimeDelta", "days",
	                 (json_int_t)(seconds / 86400), "seconds", (json_int_t)(seconds % 86400),
	                 "microseconds", 0);
}

static const char *kind_name(enum dag_task_kind k)
{
	return k == DAG_TASK_COMMAND       ? "command"
	       : k == DAG_TASK_TRIGGER_DAG ? "trigger_dag"
	                                   : "job";
}

static json_t *task_json(const struct dag_spec *s, size_t i, json_t *downstream)
{
	const struct dag_task *t = &s->tasks[i];
	json_t *upstream = json_array();
	bool mapped = dag_task_is_mapped(t);
	json_t *o;

	const char *class_name, *module;
	size_t module_len;

	dag_task_class(t, &class_name, &module, &module_len);
	for (size_t u = 0; u < t->n_upstream; u++)
		json_array_append_new(upstream, json_string(s->tasks[t->upstream[u]].task_id));
	/* no sub_dag: Airflow's clients refuse a null one (SubDAGs are gone in Airflow 2) */
	o = json_pack(
	    "{s:{s:s, s:s%}, s:s, s:s, s:o, s:n, s:s, s:[], s:b, s:b, s:b, s:i, s:s, s:s, s:i, "
	    "s:o, s:o, s:b, s:o, s:i, s:s, s:s, s:s, s:[s], s:o, s:o, s:o, s:s}",
	    "class_ref", "class_name", class_name, "module_path", module, module_len, "task_id",
	    t->task_id, "owner", "airflow", "start_date", time_or_null(s->start_date_ms),
	    "end_date", "trigger_rule", trigger_rule_name(t->trigger_rule), "extra_links",
	    "depends_on_past", t->flow.depends_on_past, "is_mapped", mapped, "wait_for_downstream",
	    t->flow.wait_for_downstream, "retries", t->retries, "queue", "default", "pool",
	    t->pool ? t->pool : "default_pool", "pool_slots", t->pool_slots > 0 ? t->pool_slots : 1,
	    "execution_timeout", timedelta_json(t->execution_timeout_s, true), "retry_delay",
	    timedelta_json(t->retry_delay_s, false), "retry_exponential_backoff",
	    t->retry_exponential_backoff, "max_retry_delay",
	    timedelta_json(t->max_retry_delay_s, true), "priority_weight", t->priority,
	    "weight_rule", "absolute", "ui_color",
	    t->kind == DAG_TASK_COMMAND ? "#f0ede4" : "#e8f7e4", "ui_fgcolor", "#000",
	    "template_fields", "command", "downstream_task_ids", downstream, "upstream_task_ids",
	    upstream, "doc_md", t->doc_md ? json_string(t->doc_md) : json_null(), "kind",
	    kind_name(t->kind));
	/* weir's: how the task shapes the flow (the UI marks them) */
	if (o && t->flow.branch)
		json_object_set_new(o, "branch", json_true());
	if (o && t->flow.short_circuit)
		json_object_set_new(o, "short_circuit", json_true());
	if (o && t->outlets.n) { /* the datasets it updates (docs/dags.md) */
		json_t *outlets = json_array();
		for (size_t k = 0; outlets && k < t->outlets.n; k++)
			json_array_append_new(outlets, json_string(t->outlets.v[k]));
		json_object_set_new(o, "outlets", outlets ? outlets : json_array());
	}
	if (o && t->trigger)
		json_object_set_new(o, "trigger_dag_id", json_string(t->trigger->dag_id));
	return o;
}

static int cmp_task_id(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "task_id"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "task_id"));
	return strcmp(x ? x : "", y ? y : "");
}

static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_ARRAY:
		return "array";
	case JSON_OBJECT:
		return "object";
	default:
		return "null";
	}
}

/* Airflow's serialised params: {"name": {"__class", "value", "description", "schema"}}, the
 * schema the param's own without default and description; a plain value's is its type. */
static json_t *params_json(const struct dag_spec *s)
{
	json_t *o = json_object();
	const char *k;
	json_t *v;

	json_object_foreach(s->params, k, v)
	{
		json_t *sc = json_object_get(s->param_schemas, k);
		json_t *schema =
		    sc ? json_deep_copy(sc) : json_pack("{s:s}", "type", json_type_name(v));
		const char *desc = json_string_value(json_object_get(sc, "description"));
		json_object_del(schema, "default");
		json_object_del(schema, "description");
		json_object_set_new(
		    o, k,
		    json_pack("{s:s, s:O, s:o, s:o}", "__class", "airflow.models.param.Param",
		              "value", v, "description", json_util_string(desc), "schema", schema));
	}
	return o;
}

json_t *dag_view_run_brief(const struct dag_run_row *r)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o}", "dag_run_id", r->run_id, "state",
	                 dag_run_state_name(r->state), "run_type", r->run_type, "logical_date",
	                 json_util_time_airflow(r->logical_date ? r->logical_date : 1),
	                 "start_date", json_util_time_airflow(r->start_date), "end_date",
	                 json_util_time_airflow(r->end_date), "queued_at",
	                 json_util_time_airflow(r->queued_at));
}

/* "FILE:LINE: ..." -> LINE, or 0. */
static long message_line(const char *file, const char *msg)
{
	size_t fl = strlen(file);
	const char *p;
	long line = 0;

	if (strncmp(msg, file, fl) || msg[fl] != ':')
		return 0;
	for (p = msg + fl + 1; *p >= '0' && *p <= '9' && line < 100000000; p++)
		line = line * 10 + (*p - '0');
	return p > msg + fl + 1 && *p == ':' ? line : 0;
}

/* TI states, most significant first: a mapped task's cell shows the first
 * one any of its instances has (Airflow's grid does the same). */
static const enum dag_ti_state state_rank[] = {
    DAG_TI_FAILED,  DAG_TI_UPSTREAM_FAILED, DAG_TI_UP_FOR_RETRY, DAG_TI_UP_FOR_RESCHEDULE,
    DAG_TI_QUEUED,  DAG_TI_SCHEDULED,       DAG_TI_RUNNING,      DAG_TI_NONE,
    DAG_TI_SUCCESS, DAG_TI_SKIPPED,         DAG_TI_REMOVED,
};
#define N_STATES (sizeof state_rank / sizeof state_rank[0])
_Static_assert(N_STATES == DAG_TI_STATE_COUNT, "every TI state has a rank");

static size_t state_index(enum dag_ti_state s)
{
	for (size_t i = 0; i < N_STATES; i++)
		if (s == state_rank[i])
			return i;
	return state_index(DAG_TI_NONE);
}

/* Whether a cell of this rank has not ended (its end date is not shown). */
static bool state_unended(size_t k)
{
	enum dag_ti_state s = state_rank[k];
	return s == DAG_TI_UP_FOR_RETRY || s == DAG_TI_UP_FOR_RESCHEDULE || s == DAG_TI_QUEUED ||
	       s == DAG_TI_SCHEDULED || s == DAG_TI_RUNNING || s == DAG_TI_NONE;
}

/* One cell: a task in a run, its instances summed up. */
struct cell {
	int count;
	int by_state[N_STATES];
	int try_number;
	int64_t start, end, queued;
	bool unended;
};

static void cell_add(struct cell *c, size_t st, const struct dag_ti_row *r, int64_t start)
{
	int64_t end = state_unended(st) ? 0 : r->end_date;

	c->count++;
	c->by_state[st]++;
	if (r->try_number > c->try_number)
		c->try_number = r->try_number;
	if (start && (!c->start || start < c->start))
		c->start = start;
	if (end > c->end)
		c->end = end;
	if (r->queued_at && (!c->queued || r->queued_at < c->queued))
		c->queued = r->queued_at;
	c->unended = c->unended || state_unended(st);
}

static json_t *cell_json(const struct cell *c, const char *run_id, bool mapped)
{
	json_t *counts = json_object();
	enum dag_ti_state state = DAG_TI_NONE;
	bool any = false;

	for (size_t k = 0; k < N_STATES; k++) {
		if (!c->by_state[k])
			continue;
		if (!any)
			state = state_rank[k];
		any = true;
		json_object_set_new(counts, dag_ti_state_name(state_rank[k]),
		                    json_integer(c->by_state[k]));
	}
	return json_pack("{s:s, s:o, s:i, s:o, s:o, s:o, s:o, s:o}", "dag_run_id", run_id, "state",
	                 dag_view_ti_state(state), "try_number", c->try_number, "start_date",
	                 json_util_time_airflow(c->start), "end_date",
	                 json_util_time_airflow(c->unended ? 0 : c->end), "queued_when",
	                 json_util_time_airflow(c->queued), "map_index_count",
	                 mapped ? json_integer(c->count) : json_null(), "states_count", counts);
}

/* The run index of `run_id`: TIs come in the runs' order, so the cursor is
 * nearly always right. */
static long run_index(const struct dag_run_row *runs, size_t n, size_t *cursor, const char *run_id)
{
	if (*cursor < n && !strcmp(runs[*cursor].run_id, run_id))
		return (long)*cursor;
	for (size_t k = 0; k < n; k++)
		if (!strcmp(runs[k].run_id, run_id)) {
			*cursor = k;
			return (long)k;
		}
	return -1;
}

static long task_index(const struct dag_spec *s, size_t *cursor, const char *task_id)
{
	long k;

	if (*cursor < s->n_tasks && !strcmp(s->tasks[*cursor].task_id, task_id))
		return (long)*cursor;
	if (*cursor + 1 < s->n_tasks && !strcmp(s->tasks[*cursor + 1].task_id, task_id))
		return (long)++*cursor;
	k = dag_spec_task_index(s, task_id);
	if (k >= 0)
		*cursor = (size_t)k;
	return k;
}

json_t *dag_view_tasks(const struct dag_spec *s)
{
	json_t **down = calloc(s->n_tasks + 1, sizeof *down);
	json_t **objs = calloc(s->n_tasks + 1, sizeof *objs);
	json_t *a = json_array();

	if (!down || !objs || !a)
		goto nomem;
	for (size_t i = 0; i < s->n_tasks; i++)
		if (!(down[i] = json_array()))
			goto nomem;
	/* downstream in file order of the downstream task */
	for (size_t i = 0; i < s->n_tasks; i++)
		for (size_t u = 0; u < s->tasks[i].n_upstream; u++)
			json_array_append_new(down[s->tasks[i].upstream[u]],
			                      json_string(s->tasks[i].task_id));
	for (size_t i = 0; i < s->n_tasks; i++) {
		objs[i] = task_json(s, i, down[i]); /* steals down[i] */
		down[i] = NULL;
		if (!objs[i])
			goto nomem;
	}
	/* Airflow lists a DAG's tasks by task_id */
	qsort(objs, s->n_tasks, sizeof *objs, cmp_task_id);
	for (size_t i = 0; i < s->n_tasks; i++) {
		json_array_append_new(a, objs[i]);
		objs[i] = NULL;
	}
	free(down);
	free(objs);
	return dag_view_collection("tasks", a, s->n_tasks);
nomem:
	for (size_t i = 0; i < s->n_tasks; i++) {
		if (down)
			json_decref(down[i]);
		if (objs)
			json_decref(objs[i]);
	}
	free(down);
	free(objs);
	json_decref(a);
	return NULL;
}

json_t *dag_view_details(const struct dag_row *row, const struct dag_spec *s, int64_t next_ms)
{
	json_t *o = dag_view_dag(row, s, next_ms);

	if (!o)
		return NULL;
	json_object_set_new(o, "params", params_json(s));
	json_object_set_new(o, "catchup", json_boolean(s->catchup));
	json_object_set_new(o, "concurrency", json_integer(s->max_active_tasks));
	json_object_set_new(o, "start_date", time_or_null(s->start_date_ms));
	json_object_set_new(o, "end_date", time_or_null(s->end_date_ms));
	json_object_set_new(o, "dag_run_timeout", timedelta_json(s->dagrun_timeout_s, true));
	json_object_set_new(o, "default_view", json_string("grid"));
	json_object_set_new(o, "orientation", json_string("LR"));
	json_object_set_new(o, "doc_md", s->doc_md ? json_string(s->doc_md) : json_null());
	json_object_set_new(o, "is_paused_upon_creation", json_null());
	json_object_set_new(o, "last_parsed", json_util_time_airflow(row->last_parsed_at));
	json_object_set_new(o, "render_template_as_native_obj", json_false());
	json_object_set_new(o, "template_search_path", json_null());
	char zone[TZ_NAME_MAX + 16];
	snprintf(zone, sizeof zone, "Timezone('%s')", tz_zone_name(s->schedule.zone));
	json_object_set_new(o, "timezone", json_string(zone));
	json_object_set_new(o, "task_count", json_integer((json_int_t)s->n_tasks));
	/* weir's: what kind of schedule schedule_interval's text is (a custom
	 * timetable's summary or "N Events" is no cron: `weir dags backfill` reads this) */
	json_object_set_new(o, "schedule_kind", json_string(cron_kind_name(s->schedule.kind)));
	return o;
}

json_t *dag_view_tries(const struct dag_try_row *tries, size_t n, const struct dag_job_view *jobs,
                       const struct dag_run_row *run)
{
	json_t *a = json_array();

	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct dag_try_row *t = &tries[i];
		enum dag_ti_state state = t->state;
		int64_t start = t->start_date, end = t->end_date;
		if (state == DAG_TI_QUEUED && jobs && jobs[i].known && jobs[i].running) {
			state = DAG_TI_RUNNING;
			if (jobs[i].started_at)
				start = jobs[i].started_at;
		}
		if (state == DAG_TI_RUNNING || state == DAG_TI_QUEUED)
			end = 0;
		json_array_append_new(
		    a, json_pack(
		           "{s:s, s:s, s:s, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:s, s:o}", "dag_id",
		           t->dag_id, "dag_run_id", t->run_id, "task_id", t->task_id, "map_index",
		           t->map_index, "try_number", t->try_number, "state",
		           dag_view_ti_state(state), "start_date", json_util_time_airflow(start),
		           "end_date", json_util_time_airflow(end), "duration",
		           start && end ? json_real((double)(end - start) / 1000.0) : json_null(),
		           "job_id", t->job_id > 0 ? json_integer(t->job_id) : json_null(),
		           "reason", t->reason ? t->reason : "", "execution_date",
		           json_util_time_airflow(run->logical_date ? run->logical_date : 1)));
	}
	return dag_view_collection("task_instances", a, n);
}

json_t *dag_view_ui_dag(const struct dag_row *row, const struct dag_spec *s, int64_t next_ms,
                        const struct dag_run_row *runs, size_t n_runs)
{
	json_t *d = dag_view_dag(row, s, next_ms), *last = json_array();

	if (!d || !last) {
		json_decref(d);
		json_decref(last);
		return NULL;
	}
	for (size_t k = 0; k < n_runs; k++)
		json_array_append_new(last, dag_view_run_brief(&runs[k]));
	json_object_set_new(d, "last_runs", last);
	return d;
}

json_t *dag_view_ui_import_error(const struct dag_import_error_row *r)
{
	long line = message_line(r->file, r->message);

	return json_pack("{s:I, s:s, s:o, s:s, s:o}", "import_error_id", (json_int_t)r->id,
	                 "filename", r->file, "line", line > 0 ? json_integer(line) : json_null(),
	                 "message", r->message, "timestamp", json_util_time_airflow(r->time));
}

json_t *dag_view_grid(const char *dag_id, const struct dag_spec *s, const struct dag_run_row *runs,
                      size_t nr, const struct dag_ti_row *tis, size_t nt,
                      const struct dag_job_view *jobs)
{
	size_t n_tasks = s ? s->n_tasks : 0, rc = 0, tc = 0;
	struct cell *cells = calloc(n_tasks * nr + 1, sizeof *cells);
	json_t *ja = json_array(), *ta = json_array(), *r = NULL;

	if (!cells || !ja || !ta)
		goto out;
	for (size_t i = 0; i < nt; i++) {
		const struct dag_ti_row *t = &tis[i];
		long ri = run_index(runs, nr, &rc, t->run_id);
		long ti = s ? task_index(s, &tc, t->task_id) : -1;
		size_t st = state_index(t->state);
		int64_t start = t->start_date;
		if (ri < 0 || ti < 0)
			continue; /* a task that left the file, or a run newer than the list */
		if (t->state == DAG_TI_QUEUED && jobs && jobs[i].known && jobs[i].running) {
			st = state_index(DAG_TI_RUNNING);
			if (!start)
				start = jobs[i].started_at;
		}
		cell_add(&cells[(size_t)ti * nr + (size_t)ri], st, t, start);
	}
	for (size_t k = 0; k < nr; k++)
		json_array_append_new(ja, dag_view_run_brief(&runs[k]));
	/* rows in a topological order, upstream first (the file's order among equals) */
	for (size_t o = 0; o < n_tasks; o++) {
		size_t i = s->topo[o];
		const struct dag_task *t = &s->tasks[i];
		bool mapped = dag_task_is_mapped(t);
		json_t *inst = json_array();
		for (size_t k = 0; k < nr; k++)
			json_array_append_new(
			    inst, cell_json(&cells[i * nr + k], runs[k].run_id, mapped));
		json_array_append_new(ta, json_pack("{s:s, s:b, s:o}", "task_id", t->task_id,
		                                    "is_mapped", mapped, "instances", inst));
	}
	r = json_pack("{s:s, s:o, s:o}", "dag_id", dag_id, "runs", ja, "tasks", ta);
	ja = ta = NULL;
out:
	json_decref(ja);
	json_decref(ta);
	free(cells);
	return r;
}

json_t *dag_view_stats(const char *dag_id, const struct dag_run_row *runs, size_t nr,
                       const int64_t counts[DAG_VIEW_RUN_STATES])
{
	json_t *a = json_array(), *c = json_object(), *r = NULL;
	int64_t total = 0;

	if (!a || !c)
		goto out;
	for (size_t k = 0; k < nr; k++) {
		json_t *o = dag_view_run_brief(&runs[k]);
		int64_t s = runs[k].start_date, e = runs[k].end_date;
		json_object_set_new(o, "duration_seconds",
		                    s && e && e >= s ? json_real((double)(e - s) / 1000.0)
		                                     : json_null());
		json_array_append_new(a, o);
	}
	for (size_t k = 0; k < DAG_VIEW_RUN_STATES; k++) {
		json_object_set_new(c, dag_run_state_name((enum dag_run_state)k),
		                    json_integer(counts[k]));
		total += counts[k];
	}
	r = json_pack("{s:s, s:o, s:o, s:I}", "dag_id", dag_id, "runs", a, "counts", c,
	              "total_entries", (json_int_t)total);
	a = c = NULL;
out:
	json_decref(a);
	json_decref(c);
	return r;
}

/* ---- the DAG ops' rows ---- */

json_t *dag_view_ti_tries(const struct dag_ti_tries *t)
{
	json_t *r = dag_view_tries(t->tries, t->n, t->jobs, &t->run), *base, *o;
	size_t i;

	if (!r)
		return NULL;
	base = dag_view_ti_of(&t->ti);
	json_array_foreach(json_object_get(r, "task_instances"), i, o)
	    json_object_update_missing(o, base);
	json_decref(base);
	return r;
}

json_t *dag_view_ui_dags(const struct dag_ui_dags *d)
{
	json_t *a = json_array(), *errs = json_array();

	if (!a || !errs)
		goto fail;
	for (size_t i = 0; i < d->n; i++) {
		const struct dag_ui_dag *u = &d->v[i];
		json_t *o =
		    dag_view_ui_dag(&u->dag.row, u->dag.spec, u->dag.next_ms, u->runs, u->n_runs);
		if (!o)
			goto fail;
		/* whether the DAG's access list lets the reader act on it (the role's own
		 * limit is /ui/me's); the UI disables the DAG's switch otherwise */
		json_object_set_new(o, "may_act", json_boolean(u->may_act));
		json_array_append_new(a, o);
	}
	for (size_t i = 0; i < d->n_errors; i++)
		json_array_append_new(errs, dag_view_ui_import_error(&d->errors[i]));
	return json_pack("{s:o, s:I, s:o}", "dags", a, "total_entries", (json_int_t)d->total,
	                 "import_errors", errs);
fail:
	json_decref(a);
	json_decref(errs);
	return NULL;
}
