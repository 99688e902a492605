/* read_ops.c: the reads of api/dag_admin_api.h: one task, DAG
 * statistics, a DAG's source and its re-parse, one import error, a task
 * instance's XCom entries (its outputs), dependencies, links and mapped
 * instances; a running task's read of another DAG's runs (an Airflow
 * ExternalTaskSensor poking in Python).  The ops are listed in
 * admin_ops.c's table.
 *
 * XCom entries are a TI's outputs ($WEIR_OUTPUT, a JSON object): one entry
 * per key, and `return_value` for the whole object, as Airflow's
 * multiple_outputs tasks push them (a key of that name wins over it).
 */
#include "server/dag_manager/admin_ops.h"
#include "server/dag_manager/dm_internal.h"
#include "server/dag_manager/ops.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dag_ui_views.h"
#include "api/dag_views.h"
#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/json_util.h"
#include "model/states.h"
#include "store/dag_store.h"
#include "store/sensor_store.h"

#define XCOM_RETURN "return_value"

json_t *dm_op_get_task(void *ctx, const char *dag_id, const char *task_id, struct weir_error *err)
{
	struct dag_view d = {0};
	json_t *all, *t, *r = NULL;
	size_t i;

	if (dm_op_dag_tasks(ctx, dag_id, &d, err) < 0)
		return NULL;
	all = dag_view_tasks(d.spec);
	dag_view_release(&d);
	if (!all)
		return weir_error_oom_null(err);
	json_array_foreach(json_object_get(all, "tasks"), i,
	                   t) if (!strcmp(json_string_value(json_object_get(t, "task_id")),
	                                  task_id)) r = json_incref(t);
	json_decref(all);
	if (!r)
		weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s has no task %s", dag_id, task_id);
	return r;
}

json_t *dm_op_dag_stats(void *ctx, const char *const *dag_ids, size_t n, struct weir_error *err)
{
	static const enum dag_run_state states[] = {DAG_RUN_QUEUED, DAG_RUN_RUNNING,
	                                            DAG_RUN_SUCCESS, DAG_RUN_FAILED};
	struct dag_manager *dm = ctx;
	json_t *dags = json_array();

	if (!dags)
		return weir_error_oom_null(err);
	for (size_t i = 0; i < n; i++) {
		bool exists = false, dup = false;
		json_t *stats;
		for (size_t k = 0; k < i; k++)
			dup = dup || !strcmp(dag_ids[k], dag_ids[i]);
		if (dup || dag_store_dag_exists(dm->ds, dag_ids[i], &exists, NULL) < 0 || !exists)
			continue; /* Airflow answers for the DAGs it has */
		stats = json_array();
		for (size_t s = 0; s < sizeof states / sizeof states[0]; s++) {
			struct dag_run_query q = {
			    .dag_id = dag_ids[i], .by_state = true, .state = states[s]};
			int64_t count = 0;
			if (dag_store_run_count(dm->ds, &q, &count, err) < 0) {
				json_decref(stats);
				json_decref(dags);
				return NULL;
			}
			json_array_append_new(stats, json_pack("{s:s, s:I}", "state",
			                                       dag_run_state_name(states[s]),
			                                       "count", (json_int_t)count));
		}
		json_array_append_new(
		    dags, json_pack("{s:s, s:o}", "dag_id", dag_ids[i], "stats", stats));
	}
	return dag_view_collection("dags", dags, json_array_size(dags));
}

int dm_op_dag_source(void *ctx, const char *dag_id, char **text, size_t *len,
                     struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_entry *e = dm_entry_by_id(dm, dag_id);
	char msg[WEIR_ERROR_MSG_MAX];
	char *path;

	if (!e || !e->present)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: no DAG file holds it",
		                      dag_id);
	/* the path is the manager's own, never the request's; a link is read
	 * only as dag_folder_symlinks lets it, checked again now */
	path = dm_dag_file_path(dm, e->file, msg, sizeof msg);
	if (!path)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: %s", dag_id,
		                      msg[0] ? msg : "its file is gone");
	*text = fs_read_file(path, len, NULL);
	free(path);
	if (!*text)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: its file cannot be read",
		                      dag_id);
	return 0;
}

int dm_op_reparse(void *ctx, const char *dag_id, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_entry *e = dm_entry_by_id(dm, dag_id);

	if (!e || !e->present)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: no DAG file holds it",
		                      dag_id);
	e->mtime_ns = -1; /* seen as changed: read again */
	dm_touch(dm);
	dm_scan(dm);
	return 0;
}

json_t *dm_op_import_error(void *ctx, const struct dag_reader *rd, long long id,
                           struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_import_error_row *rows = NULL;
	size_t n = 0;
	json_t *r = NULL;
	const char *denied = NULL;
	char msg[300];

	if (dag_store_import_error_list(dm->ds, &rows, &n, err) < 0)
		return NULL;
	for (size_t i = 0; i < n && !r && !err->msg[0]; i++) {
		if (rows[i].id != id)
			continue;
		if (!dm_file_allows(dm, rows[i].file, rd, &denied)) {
			access_denied_text(msg, sizeof msg, denied, rd->user, rd->role, rd->need);
			weir_error_set(err, WEIR_E_FORBIDDEN, "import error %lld: %s", id, msg);
		} else if (!(r = dag_view_import_error(&rows[i]))) {
			weir_error_oom_null(err);
		}
	}
	dag_import_error_rows_free(rows, n);
	if (!r && !err->msg[0])
		weir_error_set(err, WEIR_E_NOT_FOUND, "no import error %lld", id);
	return r;
}

/* ---- XCom entries over outputs ---- */

static void xcom_entry(const struct dag_ti_row *ti, const struct dag_run_row *run, const char *k,
                       json_t *v, bool with_value, bool stringify, json_t *items)
{
	json_t *e =
	    json_pack("{s:s, s:o, s:o, s:o, s:i, s:s, s:s, s:s}", "key", k, "timestamp",
	              json_util_time_airflow(ti->end_date ? ti->end_date : ti->start_date),
	              "execution_date", json_util_time_airflow(run->logical_date), "logical_date",
	              json_util_time_airflow(run->logical_date), "map_index", ti->map_index,
	              "task_id", ti->task_id, "dag_id", ti->dag_id, "dag_run_id", ti->run_id);

	if (e && with_value) {
		json_t *val = json_incref(v);
		if (stringify && !json_is_string(val)) {
			char *t = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);
			json_decref(val);
			val = t ? json_string(t) : json_null();
			free(t);
		}
		json_object_set_new(e, "value", val);
	}
	if (e)
		json_array_append_new(items, e);
}

/* The entries of one TI into `items`: every key, or `key` only. */
static void xcom_of(const struct dag_ti_row *ti, const struct dag_run_row *run, const char *key,
                    bool with_value, bool stringify, json_t *items)
{
	json_t *out = ti->outputs && *ti->outputs ? json_loads(ti->outputs, 0, NULL) : NULL;
	const char *k;
	json_t *v;

	if (!json_is_object(out)) {
		json_decref(out);
		return;
	}
	if (!json_object_get(out, XCOM_RETURN) && (!key || !strcmp(key, XCOM_RETURN)))
		xcom_entry(ti, run, XCOM_RETURN, out, with_value, stringify, items);
	json_object_foreach(out, k, v) if (!key || !strcmp(k, key))
	    xcom_entry(ti, run, k, v, with_value, stringify, items);
	json_decref(out);
}

/* Every TI of (dag, run, task): one, or each foreach instance, in order. */
static int task_tis(struct dag_manager *dm, const char *dag_id, const char *run_id,
                    const char *task_id, struct dag_run_row *run, struct dag_ti_row **tis,
                    size_t *n, struct weir_error *err)
{
	struct dag_ti_row *all = NULL;
	size_t na = 0, k = 0;

	if (dm_dag_check_exists(dm, dag_id, err) < 0)
		return -1;
	if (dm_run_row(dm, dag_id, run_id, run, err) < 0)
		return -1;
	if (dag_store_tis_of_run(dm->ds, dag_id, run_id, &all, &na, err) < 0) {
		dag_run_row_release(run);
		return -1;
	}
	for (size_t i = 0; i < na; i++) {
		if (!strcmp(all[i].task_id, task_id))
			all[k++] = all[i];
		else
			dag_ti_row_release(&all[i]);
	}
	*tis = all;
	*n = k;
	if (k == 0) {
		free(all);
		*tis = NULL;
		dag_run_row_release(run);
		return weir_error_set(err, WEIR_E_NOT_FOUND, "run %s of DAG %s has no task %s",
		                      run_id, dag_id, task_id);
	}
	return 0;
}

json_t *dm_op_xcom_list(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                        int map_index, const char *key, int limit, int offset,
                        struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_row run = {0};
	struct dag_ti_row *tis = NULL;
	size_t n = 0, total;
	json_t *all = json_array(), *page = json_array();

	if (!all || !page || task_tis(dm, dag_id, run_id, task_id, &run, &tis, &n, err) < 0) {
		json_decref(all);
		json_decref(page);
		return err->msg[0] ? NULL : weir_error_oom_null(err);
	}
	for (size_t i = 0; i < n; i++)
		if (map_index == DAG_MAP_INDEX_ANY || tis[i].map_index == map_index)
			xcom_of(&tis[i], &run, key, false, false, all);
	total = json_array_size(all);
	if (limit <= 0)
		limit = 100;
	for (size_t i = (size_t)(offset > 0 ? offset : 0);
	     i < total && json_array_size(page) < (size_t)limit; i++)
		json_array_append(page, json_array_get(all, i));
	json_decref(all);
	dag_ti_rows_free(tis, n);
	dag_run_row_release(&run);
	return dag_view_collection("xcom_entries", page, total);
}

json_t *dm_op_xcom_get(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                       int map_index, const char *key, bool stringify, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_row run = {0};
	struct dag_ti_row ti = {0};
	json_t *items = json_array(), *r = NULL;

	if (!items)
		return weir_error_oom_null(err);
	if (dm_ti_lookup(dm, dag_id, run_id, task_id, map_index, &run, &ti, err) < 0) {
		json_decref(items);
		return NULL;
	}
	xcom_of(&ti, &run, key, true, stringify, items);
	if (json_array_size(items))
		r = json_incref(json_array_get(items, 0));
	else
		weir_error_set(err, WEIR_E_NOT_FOUND,
		               "task %s of run %s (DAG %s) has no XCom entry %s (no such output)",
		               task_id, run_id, dag_id, key);
	json_decref(items);
	dag_ti_row_release(&ti);
	dag_run_row_release(&run);
	return r;
}

/* ---- why a TI does not run, and its links ---- */

static void dep(json_t *a, const char *name, const char *reason)
{
	json_array_append_new(a, json_pack("{s:s, s:s}", "name", name, "reason", reason));
}

json_t *dm_op_ti_deps(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                      int map_index, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_row run = {0};
	struct dag_ti_row ti = {0};
	json_t *a = json_array();
	char why[512];

	if (!a)
		return weir_error_oom_null(err);
	if (dm_ti_lookup(dm, dag_id, run_id, task_id, map_index, &run, &ti, err) < 0) {
		json_decref(a);
		return NULL;
	}
	switch (ti.state) {
	case DAG_TI_NONE:
		if (run.state == DAG_RUN_QUEUED) {
			dep(a, "Dagrun Running",
			    "the run is queued (max_active_runs, or the DAG is "
			    "paused)");
			break;
		}
		snprintf(why, sizeof why, "%s",
		         ti.reason && *ti.reason ? ti.reason
		                                 : "its upstream tasks have not all ended as its "
		                                   "trigger rule needs");
		dep(a, "Trigger Rule", why);
		break;
	case DAG_TI_SCHEDULED:
		dep(a, "Pool Slots Available",
		    ti.reason && *ti.reason ? ti.reason : "waiting for the next pool pass");
		break;
	case DAG_TI_UP_FOR_RETRY:
		snprintf(why, sizeof why, "up for retry: try %d of %d failed%s%s", ti.try_number,
		         ti.max_tries, ti.reason && *ti.reason ? ": " : "",
		         ti.reason ? ti.reason : "");
		dep(a, "Not In Retry Period", why);
		break;
	case DAG_TI_QUEUED: {
		struct dag_job_view v = {0};
		struct job_row job = {0};
		if (ti.job_id > 0 && store_job_get(dm->store, ti.job_id, &job, NULL) == 0 &&
		    !dm_job_runs(&job)) {
			snprintf(why, sizeof why, "its job %" PRId64 " waits%s%s", ti.job_id,
			         job.reason && *job.reason ? ": " : "",
			         job.reason ? job.reason : "");
			dep(a, "Executor Slots Available", why);
		}
		(void)v;
		job_row_release(&job);
		break;
	}
	case DAG_TI_RUNNING:
		break;
	default: /* ended: a new try needs a clear */
		snprintf(why, sizeof why, "the task instance is %s; clear it to run it again",
		         dag_ti_state_name(ti.state));
		dep(a, "Task Instance State", why);
		break;
	}
	if (ti.state != DAG_TI_RUNNING && ti.state != DAG_TI_QUEUED &&
	    !dag_ti_state_is_active(ti.state) && run.state != DAG_RUN_RUNNING &&
	    run.state != DAG_RUN_QUEUED) {
		snprintf(why, sizeof why, "the run is %s", dag_run_state_name(run.state));
		dep(a, "Dagrun Running", why);
	}
	dag_ti_row_release(&ti);
	dag_run_row_release(&run);
	return json_pack("{s:o}", "dependencies", a);
}

json_t *dm_op_ti_links(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                       int map_index, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_row run = {0};
	struct dag_ti_row ti = {0};
	json_t *a = json_array();
	char *ui = NULL, *api = NULL;

	if (!a)
		return weir_error_oom_null(err);
	if (dm_ti_lookup(dm, dag_id, run_id, task_id, map_index, &run, &ti, err) < 0) {
		json_decref(a);
		return NULL;
	}
	if (ti.job_id > 0 && asprintf(&ui, "/#/jobs/%" PRId64, ti.job_id) >= 0 &&
	    asprintf(&api, "/api/v1/jobs/%" PRId64, ti.job_id) >= 0) {
		json_t *cls =
		    json_pack("{s:s, s:s}", "module_path", "weir", "class_name", "WeirJob");
		json_array_append_new(a, json_pack("{s:O, s:s, s:s}", "class_ref", cls, "name",
		                                   "weir job", "href", ui));
		json_array_append_new(a, json_pack("{s:O, s:s, s:s}", "class_ref", cls, "name",
		                                   "weir job (API)", "href", api));
		json_decref(cls);
	}
	free(ui);
	free(api);
	dag_ti_row_release(&ti);
	dag_run_row_release(&run);
	return json_pack("{s:o}", "extra_links", a);
}

json_t *dm_op_list_mapped(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                          struct dag_ti_list_query *q, struct weir_error *err)
{
	const char *ids[1] = {task_id};
	struct dag_ti_list l = {0};
	json_t *t = dm_op_get_task(ctx, dag_id, task_id, err);
	bool mapped = json_is_true(json_object_get(t, "is_mapped"));

	json_decref(t);
	if (!t)
		return NULL;
	if (!mapped) {
		weir_error_set(err, WEIR_E_NOT_FOUND,
		               "task %s of DAG %s is not mapped (no foreach)", task_id, dag_id);
		return NULL;
	}
	q->task_ids.v = ids;
	q->task_ids.n = 1;
	if (dm_op_list_tis(ctx, dag_id, run_id, q, &l, err) < 0)
		return NULL;
	t = dag_view_tis(&l);
	dag_ti_list_free(&l);
	return t ? t : weir_error_oom_null(err);
}

/* One logical date's run of the DAG: its state and its TIs' states. */
static json_t *run_at(struct dag_manager *dm, const char *dag_id, int64_t at,
                      struct weir_error *err)
{
	struct sensor_ext_row *rows = NULL;
	char state[STORE_STATE_MAX], ts[48];
	json_t *tis = json_array(), *o;
	bool found = false;
	size_t n = 0;

	if (!tis)
		return weir_error_oom_null(err);
	if (sensor_store_external_state(dm->store, dag_id, NULL, at, state, sizeof state, err) <
	        0 ||
	    (state[0] &&
	     sensor_store_external_tis(dm->store, dag_id, at, &found, &rows, &n, err) < 0)) {
		json_decref(tis);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(tis, json_pack("{s:s, s:s}", "task_id", rows[i].task_id,
		                                     "state", rows[i].state));
	sensor_ext_rows_free(rows, n);
	o = json_pack("{s:s, s:s, s:o}", "logical_date", clock_format_iso(at, ts, sizeof ts),
	              "state", state, "task_instances", tis);
	return o ? o : weir_error_oom_null(err);
}

json_t *dm_op_task_read_runs(void *ctx, const char *dag_id, const int64_t *logical_ms, size_t n,
                             struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct weir_error e2 = {0};
	const struct dag_spec *spec = dm_spec_of(dm, dag_id, &e2);
	json_t *ids = json_array(), *runs = json_array(), *out;

	if (!ids || !runs)
		goto oom;
	if (spec && spec->access.set) {
		json_decref(ids);
		json_decref(runs);
		weir_error_set(err, WEIR_E_FORBIDDEN,
		               "DAG %s has an access list: a task reads no such DAG's runs",
		               dag_id);
		return NULL;
	}
	for (size_t i = 0; spec && i < spec->n_tasks; i++)
		json_array_append_new(ids, json_string(spec->tasks[i].task_id));
	for (size_t i = 0; i < n; i++) {
		json_t *r = run_at(dm, dag_id, logical_ms[i], err);
		if (!r) {
			json_decref(ids);
			json_decref(runs);
			return NULL;
		}
		json_array_append_new(runs, r);
	}
	out = json_pack("{s:s, s:b, s:o, s:o}", "dag_id", dag_id, "loaded", spec != NULL,
	                "task_ids", ids, "runs", runs);
	return out ? out : weir_error_oom_null(err);
oom:
	json_decref(ids);
	json_decref(runs);
	return weir_error_oom_null(err);
}
