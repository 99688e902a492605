/* ui_ops.c: the ops of a DAG's structure (Airflow's Task and
 * DAGDetail), of every try of a task instance, and of the web UI's
 * one-request views (the DAG list with recent runs, the grid of runs by
 * tasks, run durations and counts): they read the rows and hand them to
 * api/dag_ui_views.h.  The ops are declared in dm_internal.h and listed in
 * ops.c's table.
 *
 * Reads only: no mark of the turn (dm_touch()) is needed.  The grid reads the
 * store in three queries whatever the number of runs and tasks (the runs,
 * every TI of those runs, and the jobs of TIs still queued), because the UI
 * polls it every two seconds.
 */
#include "server/dag_manager.h"
#include "server/dag_manager/dm_internal.h"
#include "server/dag_manager/ops.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dag_ui_views.h"
#include "model/cron.h"
#include "model/dag_spec.h"
#include "store/dag_store.h"

#define LAST_RUNS 10

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

/* ---- GET /dags/{dag_id}/tasks ---- */

json_t *dm_op_dag_tasks(void *ctx, const char *dag_id, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	const struct dag_spec *s = spec_get(dm, dag_id, err);
	json_t *r;

	if (!s)
		return NULL;
	r = dag_view_tasks(s);
	return r ? r : weir_error_oom_null(err);
}

/* ---- GET /dags/{dag_id}/details ---- */

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
	{
		const struct dag_spec *entry_spec;
		int64_t next = dm_next_dagrun(dm, &row, &entry_spec);
		o = dag_view_details(&row, s, next);
	}
	dag_row_release(&row);
	return o ? o : weir_error_oom_null(err);
}

/* ---- effective states: a TI (or try) is "queued" in the store until its
 * job reports; the job says whether it already runs ---- */

static struct dag_job_view job_view_get(struct dag_manager *dm, int64_t job_id)
{
	struct dag_job_view v = {0};
	struct job_row job = {0};

	if (job_id > 0 && store_job_get(dm->store, job_id, &job, NULL) == 0) {
		v.known = true;
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
	struct dag_job_view *jobs = NULL;
	size_t n = 0;
	json_t *r = NULL;

	if (dm_ti_lookup(dm, dag_id, run_id, task_id, map_index, &run, &ti, err) < 0)
		return NULL;
	if (dag_store_tries_of_ti(dm->ds, dag_id, run_id, task_id, map_index, &rows, &n, err) < 0)
		goto out;
	if (!(jobs = calloc(n + 1, sizeof *jobs))) {
		weir_error_oom_null(err);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (rows[i].state == DAG_TI_QUEUED && rows[i].job_id > 0)
			jobs[i] = job_view_get(dm, rows[i].job_id);
	if (!(r = dag_view_tries(rows, n, jobs, &run))) {
		weir_error_oom_null(err);
	} else {
		/* each try as a whole TaskInstance (Airflow's schema): the TI's
		 * fields under the try's own */
		json_t *base = dm_ti_json(dm, &ti, &run), *t;
		size_t i;
		json_array_foreach(json_object_get(r, "task_instances"), i, t)
		    json_object_update_missing(t, base);
		json_decref(base);
	}
out:
	free(jobs);
	dag_try_rows_free(rows, n);
	dag_ti_row_release(&ti);
	dag_run_row_release(&run);
	return r;
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
		weir_error_oom_null(err);
		goto out;
	}
	if (limit <= 0)
		limit = 100;
	for (size_t i = (size_t)(offset > 0 ? offset : 0);
	     i < n && json_array_size(a) < (size_t)limit; i++) {
		struct dag_run_row *runs = NULL;
		size_t nr = 0;
		json_t *d;
		if (latest_runs(dm, rows[i].dag_id, LAST_RUNS, &runs, &nr, err) < 0)
			goto out;
		{
			const struct dag_spec *spec;
			int64_t next = dm_next_dagrun(dm, &rows[i], &spec);
			d = dag_view_ui_dag(&rows[i], spec, next, runs, nr);
		}
		dag_run_rows_free(runs, nr);
		if (!d) {
			weir_error_oom_null(err);
			goto out;
		}
		json_array_append_new(a, d);
	}
	for (size_t i = 0; i < n_ies; i++)
		json_array_append_new(errs, dag_view_ui_import_error(&ies[i]));
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

json_t *dm_op_ui_grid(void *ctx, const char *dag_id, int limit, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_row drow = {0};
	struct dag_run_row *runs = NULL;
	struct dag_ti_row *tis = NULL;
	struct dag_job_view *jobs = NULL;
	size_t nr = 0, nt = 0;
	const struct dag_spec *s;
	json_t *r = NULL;

	if (dag_row_get(dm, dag_id, &drow, err) < 0)
		return NULL;
	dag_row_release(&drow);
	s = dm_spec_of(dm, dag_id, NULL); /* NULL: a DAG whose file never parsed has no rows */
	if (latest_runs(dm, dag_id, limit, &runs, &nr, err) < 0)
		goto out;
	if (dag_store_tis_of_latest_runs(dm->ds, dag_id, limit, &tis, &nt, err) < 0)
		goto out;
	if (!(jobs = calloc(nt + 1, sizeof *jobs))) {
		weir_error_oom_null(err);
		goto out;
	}
	/* only the jobs of TIs still queued say more than the row */
	for (size_t i = 0; s && i < nt; i++)
		if (tis[i].state == DAG_TI_QUEUED && tis[i].job_id > 0)
			jobs[i] = job_view_get(dm, tis[i].job_id);
	if (!(r = dag_view_grid(dag_id, s, runs, nr, tis, nt, jobs)))
		weir_error_oom_null(err);
out:
	free(jobs);
	dag_ti_rows_free(tis, nt);
	dag_run_rows_free(runs, nr);
	return r;
}

/* ---- GET /ui/dags/{dag_id}/stats ---- */

json_t *dm_op_ui_stats(void *ctx, const char *dag_id, int limit, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_row drow = {0};
	struct dag_run_row *runs = NULL;
	size_t nr = 0;
	int64_t counts[DAG_VIEW_RUN_STATES] = {0};
	json_t *r = NULL;

	if (dag_row_get(dm, dag_id, &drow, err) < 0)
		return NULL;
	dag_row_release(&drow);
	if (latest_runs(dm, dag_id, limit, &runs, &nr, err) < 0)
		return NULL;
	for (size_t k = 0; k < DAG_VIEW_RUN_STATES; k++) {
		struct dag_run_query q = {
		    .dag_id = dag_id, .by_state = true, .state = (enum dag_run_state)k};
		if (dag_store_run_count(dm->ds, &q, &counts[k], err) < 0)
			goto out;
	}
	if (!(r = dag_view_stats(dag_id, runs, nr, counts)))
		weir_error_oom_null(err);
out:
	dag_run_rows_free(runs, nr);
	return r;
}
