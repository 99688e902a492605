/* dag_ui.c: the DAG manager's views of a DAG's structure (Airflow's Task
 * and DAGDetail), of every try of a task instance, and the web UI's
 * one-request views (the DAG list with recent runs, the grid of runs by
 * tasks, run durations and counts); the ops are declared in dag_internal.h
 * and listed in dag_views.c's table.
 *
 * Reads only: no turn (dm_begin/dm_end) is needed.  The grid reads the
 * store in three queries whatever the number of runs and tasks (the runs,
 * every TI of those runs, and the jobs of TIs still queued), because the UI
 * polls it every two seconds.
 */
#include "server/dag_internal.h"
#include "server/dag_manager.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cron.h"
#include "model/dag_spec.h"
#include "store/dag_store.h"

#define LAST_RUNS 10

static json_t *oom(struct weir_error *err)
{
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return NULL;
}

static int dag_row_get(struct dag_manager *dm, const char *dag_id, struct dag_row *row,
                       struct weir_error *err)
{
	if (dag_store_dag_get(dm->ds, dag_id, row, NULL) < 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: no such DAG", dag_id);
	return 0;
}

/* The spec of a DAG the store knows; NULL with err (404 for an unknown
 * DAG, or one whose file never parsed). */
static const struct dag_spec *spec_get(struct dag_manager *dm, const char *dag_id,
                                       struct weir_error *err)
{
	struct dag_row row = {0};

	if (dag_row_get(dm, dag_id, &row, err) < 0)
		return NULL;
	dag_row_release(&row);
	return dm_spec_of(dm, dag_id, err);
}

static json_t *time_or_null(int64_t ms)
{
	return ms == CRON_NEVER ? json_null() : dm_time_json(ms);
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

/* ---- GET /dags/{dag_id}/tasks ---- */

static const char *kind_name(enum dag_task_kind k)
{
	return k == DAG_TASK_COMMAND ? "command" : "job";
}

static json_t *task_json(const struct dag_spec *s, size_t i, json_t *downstream)
{
	const struct dag_task *t = &s->tasks[i];
	json_t *upstream = json_array();
	bool mapped = t->foreach_list || t->foreach_param;
	json_t *o;

	for (size_t u = 0; u < t->n_upstream; u++)
		json_array_append_new(upstream, json_string(s->tasks[t->upstream[u]].task_id));
	o = json_pack(
	    "{s:{s:s, s:s}, s:s, s:s, s:o, s:n, s:s, s:[], s:b, s:b, s:b, s:i, s:s, s:s, s:i, "
	    "s:o, s:o, s:b, s:o, s:i, s:s, s:s, s:s, s:[s], s:n, s:o, s:o, s:n, s:s}",
	    "class_ref", "class_name", t->kind == DAG_TASK_COMMAND ? "WeirCommand" : "WeirJob",
	    "module_path", "weir", "task_id", t->task_id, "owner", "airflow", "start_date",
	    time_or_null(s->start_date_ms), "end_date", "trigger_rule",
	    trigger_rule_name(t->trigger_rule), "extra_links", "depends_on_past", 0,
	    "is_mapped", mapped, "wait_for_downstream", 0, "retries", t->retries, "queue",
	    "default", "pool", t->pool ? t->pool : "default_pool", "pool_slots", 1,
	    "execution_timeout", timedelta_json(t->execution_timeout_s, true), "retry_delay",
	    timedelta_json(t->retry_delay_s, false), "retry_exponential_backoff",
	    t->retry_exponential_backoff, "max_retry_delay",
	    timedelta_json(t->max_retry_delay_s, true), "priority_weight", t->priority,
	    "weight_rule", "absolute", "ui_color",
	    t->kind == DAG_TASK_COMMAND ? "#f0ede4" : "#e8f7e4", "ui_fgcolor", "#000",
	    "template_fields", "command", "sub_dag", "downstream_task_ids", downstream,
	    "upstream_task_ids", upstream, "doc_md", "kind", kind_name(t->kind));
	return o;
}

static int cmp_task_id(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "task_id"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "task_id"));
	return strcmp(x ? x : "", y ? y : "");
}

json_t *dm_op_dag_tasks(void *ctx, const char *dag_id, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	const struct dag_spec *s = spec_get(dm, dag_id, err);
	json_t **down = NULL, **objs = NULL, *a = NULL;

	if (!s)
		return NULL;
	down = calloc(s->n_tasks + 1, sizeof *down);
	objs = calloc(s->n_tasks + 1, sizeof *objs);
	a = json_array();
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
	return json_pack("{s:o, s:I}", "tasks", a, "total_entries", (json_int_t)s->n_tasks);
nomem:
	for (size_t i = 0; s && i < s->n_tasks; i++) {
		if (down)
			json_decref(down[i]);
		if (objs)
			json_decref(objs[i]);
	}
	free(down);
	free(objs);
	json_decref(a);
	return oom(err);
}

/* ---- GET /dags/{dag_id}/details ---- */

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

/* Airflow's serialised params: {"name": {"__class", "value", "description", "schema"}};
 * the schema's type is the default's (a DAG file declares defaults only). */
static json_t *params_json(const json_t *params)
{
	json_t *o = json_object();
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)params, k, v)
	{
		json_object_set_new(o, k,
		                    json_pack("{s:s, s:O, s:n, s:{s:s}}", "__class",
		                              "airflow.models.param.Param", "value", v,
		                              "description", "schema", "type", json_type_name(v)));
	}
	return o;
}

json_t *dm_op_dag_details(void *ctx, const char *dag_id, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_row row = {0};
	const struct dag_spec *s;
	json_t *o;

	if (dag_row_get(dm, dag_id, &row, err) < 0)
		return NULL;
	s = dm_spec_of(dm, dag_id, err);
	if (!s) {
		dag_row_release(&row);
		return NULL;
	}
	o = dm_dag_json(dm, &row);
	if (!o) {
		dag_row_release(&row);
		return oom(err);
	}
	json_object_set_new(o, "params", params_json(s->params));
	json_object_set_new(o, "catchup", json_boolean(s->catchup));
	json_object_set_new(o, "concurrency", json_integer(s->max_active_tasks));
	json_object_set_new(o, "start_date", time_or_null(s->start_date_ms));
	json_object_set_new(o, "end_date", time_or_null(s->end_date_ms));
	json_object_set_new(o, "dag_run_timeout", json_null());
	json_object_set_new(o, "default_view", json_string("grid"));
	json_object_set_new(o, "orientation", json_string("LR"));
	json_object_set_new(o, "doc_md", json_null());
	json_object_set_new(o, "is_paused_upon_creation", json_null());
	json_object_set_new(o, "last_parsed", dm_time_json(row.last_parsed_at));
	json_object_set_new(o, "render_template_as_native_obj", json_false());
	json_object_set_new(o, "template_search_path", json_null());
	json_object_set_new(o, "timezone", json_string("Timezone('UTC')"));
	json_object_set_new(o, "file_token", json_null());
	json_object_set_new(o, "task_count", json_integer((json_int_t)s->n_tasks));
	dag_row_release(&row);
	return o;
}

/* ---- effective states: a TI (or try) is "queued" in the store until its
 * job reports; the job says whether it already runs ---- */

struct job_view {
	bool running;
	int64_t started_at;
};

static struct job_view job_view_get(struct dag_manager *dm, int64_t job_id)
{
	struct job_view v = {0};
	struct job_row job = {0};

	if (job_id > 0 && store_job_get(dm->store, job_id, &job, NULL) == 0) {
		v.running = dm_job_runs(&job);
		v.started_at = job.started_at;
		job_row_release(&job);
	}
	return v;
}

/* ---- GET .../taskInstances/{task_id}/tries ---- */

json_t *dm_op_ti_tries(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                       int map_index, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_row run = {0};
	struct dag_ti_row ti = {0};
	struct dag_try_row *rows = NULL;
	size_t n = 0;
	json_t *a = NULL, *r = NULL;

	if (dm_ti_lookup(dm, dag_id, run_id, task_id, map_index, &run, &ti, err) < 0)
		return NULL;
	if (dag_store_tries_of_ti(dm->ds, dag_id, run_id, task_id, map_index, &rows, &n, err) < 0)
		goto out;
	if (!(a = json_array())) {
		oom(err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dag_try_row *t = &rows[i];
		const char *state = t->state;
		int64_t start = t->start_date, end = t->end_date;
		if (!strcmp(state, "queued") && t->job_id > 0) {
			struct job_view jv = job_view_get(dm, t->job_id);
			if (jv.running) {
				state = "running";
				if (jv.started_at)
					start = jv.started_at;
			}
		}
		if (!strcmp(state, "running") || !strcmp(state, "queued"))
			end = 0;
		json_array_append_new(
		    a, json_pack("{s:s, s:s, s:s, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:s, s:o}",
		                 "dag_id", t->dag_id, "dag_run_id", t->run_id, "task_id",
		                 t->task_id, "map_index", t->map_index, "try_number",
		                 t->try_number, "state",
		                 strcmp(state, "none") ? json_string(state) : json_null(),
		                 "start_date", dm_time_json(start), "end_date", dm_time_json(end),
		                 "duration",
		                 start && end ? json_real((double)(end - start) / 1000.0)
		                              : json_null(),
		                 "job_id", t->job_id > 0 ? json_integer(t->job_id) : json_null(),
		                 "reason", t->reason ? t->reason : "", "execution_date",
		                 dm_time_json(run.logical_date ? run.logical_date : 1)));
	}
	r = json_pack("{s:o, s:I}", "task_instances", a, "total_entries", (json_int_t)n);
	a = NULL;
out:
	json_decref(a);
	dag_try_rows_free(rows, n);
	dag_ti_row_release(&ti);
	dag_run_row_release(&run);
	return r;
}

/* ---- runs in short ---- */

static json_t *run_brief(const struct dag_run_row *r)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o}", "dag_run_id", r->run_id, "state",
	                 r->state, "run_type", r->run_type, "logical_date",
	                 dm_time_json(r->logical_date ? r->logical_date : 1), "start_date",
	                 dm_time_json(r->start_date), "end_date", dm_time_json(r->end_date),
	                 "queued_at", dm_time_json(r->queued_at));
}

/* The DAG's newest `limit` runs, oldest first. */
static int latest_runs(struct dag_manager *dm, const char *dag_id, int limit,
                       struct dag_run_row **rows, size_t *n, struct weir_error *err)
{
	struct dag_run_query q = {.dag_id = dag_id, .newest_first = true, .limit = limit};

	if (dag_store_run_list(dm->ds, &q, rows, n, err) < 0)
		return -1;
	for (size_t i = 0; i < *n / 2; i++) {
		struct dag_run_row t = (*rows)[i];
		(*rows)[i] = (*rows)[*n - 1 - i];
		(*rows)[*n - 1 - i] = t;
	}
	return 0;
}

/* ---- GET /ui/dags ---- */

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

json_t *dm_op_ui_dags(void *ctx, int limit, int offset, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_row *rows = NULL;
	struct dag_import_error_row *ies = NULL;
	size_t n = 0, n_ies = 0;
	json_t *a = NULL, *errs = NULL, *r = NULL;

	if (dag_store_dag_list(dm->ds, false, &rows, &n, err) < 0)
		return NULL;
	if (dag_store_import_error_list(dm->ds, &ies, &n_ies, err) < 0)
		goto out;
	a = json_array();
	errs = json_array();
	if (!a || !errs) {
		oom(err);
		goto out;
	}
	if (limit <= 0)
		limit = 100;
	for (size_t i = (size_t)(offset > 0 ? offset : 0);
	     i < n && json_array_size(a) < (size_t)limit; i++) {
		struct dag_run_row *runs = NULL;
		size_t nr = 0;
		json_t *d = dm_dag_json(dm, &rows[i]), *last = json_array();
		if (!d || !last) {
			json_decref(d);
			json_decref(last);
			oom(err);
			goto out;
		}
		if (latest_runs(dm, rows[i].dag_id, LAST_RUNS, &runs, &nr, err) < 0) {
			json_decref(d);
			json_decref(last);
			goto out;
		}
		for (size_t k = 0; k < nr; k++)
			json_array_append_new(last, run_brief(&runs[k]));
		dag_run_rows_free(runs, nr);
		json_object_set_new(d, "last_runs", last);
		json_array_append_new(a, d);
	}
	for (size_t i = 0; i < n_ies; i++) {
		long line = message_line(ies[i].file, ies[i].message);
		json_array_append_new(
		    errs, json_pack("{s:I, s:s, s:o, s:s, s:o}", "import_error_id",
		                    (json_int_t)ies[i].id, "filename", ies[i].file, "line",
		                    line > 0 ? json_integer(line) : json_null(), "message",
		                    ies[i].message, "timestamp", dm_time_json(ies[i].time)));
	}
	r = json_pack("{s:o, s:I, s:o}", "dags", a, "total_entries", (json_int_t)n, "import_errors",
	              errs);
	a = errs = NULL;
out:
	json_decref(a);
	json_decref(errs);
	dag_rows_free(rows, n);
	dag_import_error_rows_free(ies, n_ies);
	return r;
}

/* ---- GET /ui/dags/{dag_id}/grid ---- */

/* TI states, most significant first: a mapped task's cell shows the first
 * one any of its instances has (Airflow's grid does the same). */
static const char *const state_rank[] = {
    "failed",  "upstream_failed", "up_for_retry", "queued", "scheduled",
    "running", "none",            "success",      "skipped", "removed",
};
#define N_STATES (sizeof state_rank / sizeof state_rank[0])

static size_t state_index(const char *s)
{
	for (size_t i = 0; i < N_STATES; i++)
		if (!strcmp(s, state_rank[i]))
			return i;
	return 6; /* "none" */
}

static bool state_unended(size_t k)
{
	return k == 2 || k == 3 || k == 4 || k == 5 || k == 6;
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
	const char *state = NULL;

	for (size_t k = 0; k < N_STATES; k++) {
		if (!c->by_state[k])
			continue;
		if (!state)
			state = state_rank[k];
		json_object_set_new(counts, state_rank[k], json_integer(c->by_state[k]));
	}
	return json_pack("{s:s, s:o, s:i, s:o, s:o, s:o, s:o, s:o}", "dag_run_id", run_id, "state",
	                 state && strcmp(state, "none") ? json_string(state) : json_null(),
	                 "try_number", c->try_number, "start_date", dm_time_json(c->start),
	                 "end_date", dm_time_json(c->unended ? 0 : c->end), "queued_when",
	                 dm_time_json(c->queued), "map_index_count",
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

json_t *dm_op_ui_grid(void *ctx, const char *dag_id, int limit, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_row drow = {0};
	struct dag_run_row *runs = NULL;
	struct dag_ti_row *tis = NULL;
	size_t nr = 0, nt = 0, rc = 0, tc = 0, n_tasks;
	struct cell *cells = NULL;
	const struct dag_spec *s;
	json_t *ja = NULL, *ta = NULL, *r = NULL;

	if (dag_row_get(dm, dag_id, &drow, err) < 0)
		return NULL;
	dag_row_release(&drow);
	s = dm_spec_of(dm, dag_id, NULL); /* NULL: a DAG whose file never parsed has no rows */
	n_tasks = s ? s->n_tasks : 0;
	if (latest_runs(dm, dag_id, limit, &runs, &nr, err) < 0)
		goto out;
	if (dag_store_tis_of_latest_runs(dm->ds, dag_id, limit, &tis, &nt, err) < 0)
		goto out;
	cells = calloc(n_tasks * nr + 1, sizeof *cells);
	ja = json_array();
	ta = json_array();
	if (!cells || !ja || !ta) {
		oom(err);
		goto out;
	}
	for (size_t i = 0; i < nt; i++) {
		const struct dag_ti_row *t = &tis[i];
		long ri = run_index(runs, nr, &rc, t->run_id);
		long ti = s ? task_index(s, &tc, t->task_id) : -1;
		size_t st = state_index(t->state);
		int64_t start = t->start_date;
		if (ri < 0 || ti < 0)
			continue; /* a task that left the file, or a run newer than the list */
		if (!strcmp(t->state, "queued") && t->job_id > 0) {
			struct job_view jv = job_view_get(dm, t->job_id);
			if (jv.running) {
				st = state_index("running");
				if (!start)
					start = jv.started_at;
			}
		}
		cell_add(&cells[(size_t)ti * nr + (size_t)ri], st, t, start);
	}
	for (size_t k = 0; k < nr; k++)
		json_array_append_new(ja, run_brief(&runs[k]));
	/* rows in a topological order, upstream first (the file's order among equals) */
	for (size_t o = 0; o < n_tasks; o++) {
		size_t i = s->topo[o];
		const struct dag_task *t = &s->tasks[i];
		bool mapped = t->foreach_list || t->foreach_param;
		json_t *inst = json_array();
		for (size_t k = 0; k < nr; k++)
			json_array_append_new(inst, cell_json(&cells[i * nr + k], runs[k].run_id,
			                                      mapped));
		json_array_append_new(ta, json_pack("{s:s, s:b, s:o}", "task_id", t->task_id,
		                                    "is_mapped", mapped, "instances", inst));
	}
	r = json_pack("{s:s, s:o, s:o}", "dag_id", dag_id, "runs", ja, "tasks", ta);
	ja = ta = NULL;
	if (!r)
		oom(err);
out:
	json_decref(ja);
	json_decref(ta);
	free(cells);
	dag_ti_rows_free(tis, nt);
	dag_run_rows_free(runs, nr);
	return r;
}

/* ---- GET /ui/dags/{dag_id}/stats ---- */

json_t *dm_op_ui_stats(void *ctx, const char *dag_id, int limit, struct weir_error *err)
{
	static const char *const run_states[] = {"queued", "running", "success", "failed"};
	struct dag_manager *dm = ctx;
	struct dag_row drow = {0};
	struct dag_run_row *runs = NULL;
	size_t nr = 0;
	json_t *a = NULL, *counts = NULL, *r = NULL;
	int64_t total = 0;

	if (dag_row_get(dm, dag_id, &drow, err) < 0)
		return NULL;
	dag_row_release(&drow);
	if (latest_runs(dm, dag_id, limit, &runs, &nr, err) < 0)
		return NULL;
	a = json_array();
	counts = json_object();
	if (!a || !counts) {
		oom(err);
		goto out;
	}
	for (size_t k = 0; k < nr; k++) {
		json_t *o = run_brief(&runs[k]);
		int64_t s = runs[k].start_date, e = runs[k].end_date;
		json_object_set_new(o, "duration_seconds",
		                    s && e && e >= s ? json_real((double)(e - s) / 1000.0)
		                                     : json_null());
		json_array_append_new(a, o);
	}
	for (size_t k = 0; k < sizeof run_states / sizeof run_states[0]; k++) {
		struct dag_run_query q = {.dag_id = dag_id, .state = run_states[k]};
		int64_t c = 0;
		if (dag_store_run_count(dm->ds, &q, &c, err) < 0)
			goto out;
		json_object_set_new(counts, run_states[k], json_integer(c));
		total += c;
	}
	r = json_pack("{s:s, s:o, s:o, s:I}", "dag_id", dag_id, "runs", a, "counts", counts,
	              "total_entries", (json_int_t)total);
	a = counts = NULL;
out:
	json_decref(a);
	json_decref(counts);
	dag_run_rows_free(runs, nr);
	return r;
}
