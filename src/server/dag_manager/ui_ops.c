/* ui_ops.c: the ops of a DAG's structure (Airflow's Task and
 * DAGDetail), of every try of a task instance, and of the web UI's
 * one-request views (the DAG list with recent runs, the grid of runs by
 * tasks, run durations and counts): they read the rows and hand them over
 * as typed rows (api/dag_rows.h), which the API renders
 * (api/dag_ui_views.h).  The ops are declared in ops.h and listed in ops.c's
 * table.
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

#include "api/dag_rows.h"
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

/* ---- GET /dags/{dag_id}/tasks and .../details: the DAG with its spec (a
 * 404 for an unknown DAG, or one whose file never parsed) ---- */

int dm_op_dag_details(void *ctx, const char *dag_id, struct dag_view *out, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	const struct dag_spec *s;

	if (dag_row_get(dm, dag_id, &out->row, err) < 0)
		return -1;
	if (!(s = dm_spec_of(dm, dag_id, err))) {
		dag_view_release(out);
		return -1;
	}
	dm_dag_view_fill(dm, out);
	out->spec = s;
	return 0;
}

int dm_op_dag_tasks(void *ctx, const char *dag_id, struct dag_view *out, struct weir_error *err)
{
	return dm_op_dag_details(ctx, dag_id, out, err);
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

int dm_op_ti_tries(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                   int map_index, struct dag_ti_tries *out, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct job_row job = {0};
	struct dag_job_view v = {0};
	int rc;

	if (dm_ti_lookup(dm, dag_id, run_id, task_id, map_index, &out->run, &out->ti.row, err) < 0)
		return -1;
	/* each try is shown as a whole TaskInstance: the TI's fields under the try's own */
	out->ti.logical_date = out->run.logical_date;
	dm_ti_job_view(dm, &out->ti.row, &job, &v);
	rc = dm_ti_view_fill(dm, &out->ti, &v, false, err);
	job_row_release(&job);
	if (rc < 0)
		goto fail;
	if (dag_store_tries_of_ti(dm->ds, dag_id, run_id, task_id, map_index, &out->tries, &out->n,
	                          err) < 0)
		goto fail;
	if (!(out->jobs = calloc(out->n + 1, sizeof *out->jobs))) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < out->n; i++)
		if (out->tries[i].state == DAG_TI_QUEUED && out->tries[i].job_id > 0)
			out->jobs[i] = job_view_get(dm, out->tries[i].job_id);
	return 0;
fail:
	dag_ti_tries_release(out);
	return -1;
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

int dm_op_ui_dags(void *ctx, const struct dag_reader *reader, int limit, int offset,
                  struct dag_ui_dags *out, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_row *rows = NULL;
	size_t n = 0, kept = 0, from = (size_t)(offset > 0 ? offset : 0);
	int rc = -1;

	if (dag_store_dag_list(dm->ds, false, &rows, &n, err) < 0)
		return -1;
	/* the DAGs the reader may not read are not there */
	for (size_t i = 0; i < n; i++) {
		if (dm_dag_allows(dm, rows[i].dag_id, reader))
			rows[kept++] = rows[i];
		else
			dag_row_release(&rows[i]);
	}
	n = kept;
	if (dm_import_error_list(dm, reader, &out->errors, &out->n_errors, err) < 0)
		goto out;
	if (limit <= 0)
		limit = 100;
	out->total = n;
	if (from < n && !(out->v = calloc(n - from, sizeof *out->v))) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	for (size_t i = from; i < n && out->n < (size_t)limit; i++) {
		struct dag_ui_dag *d = &out->v[out->n++];
		d->dag.row = rows[i]; /* moved */
		memset(&rows[i], 0, sizeof rows[i]);
		dm_dag_view_fill(dm, &d->dag);
		d->may_act =
		    !reader ||
		    dm_dag_allows(dm, d->dag.row.dag_id,
		                  &(struct dag_reader){reader->user, reader->role, ACCESS_EDIT});
		if (latest_runs(dm, d->dag.row.dag_id, LAST_RUNS, &d->runs, &d->n_runs, err) < 0)
			goto out;
	}
	rc = 0;
out:
	dag_rows_free(rows, n);
	if (rc < 0)
		dag_ui_dags_free(out);
	return rc;
}

/* ---- GET /ui/dags/{dag_id}/grid ---- */

int dm_op_ui_grid(void *ctx, const char *dag_id, int limit, struct dag_grid *out,
                  struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_row drow = {0};

	if (dag_row_get(dm, dag_id, &drow, err) < 0)
		return -1;
	dag_row_release(&drow);
	out->spec =
	    dm_spec_of(dm, dag_id, NULL); /* NULL: a DAG whose file never parsed has no rows */
	if (latest_runs(dm, dag_id, limit, &out->runs, &out->n_runs, err) < 0)
		goto fail;
	if (dag_store_tis_of_latest_runs(dm->ds, dag_id, limit, &out->tis, &out->n_tis, err) < 0)
		goto fail;
	if (!(out->jobs = calloc(out->n_tis + 1, sizeof *out->jobs))) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto fail;
	}
	/* only the jobs of TIs still queued say more than the row */
	for (size_t i = 0; out->spec && i < out->n_tis; i++)
		if (out->tis[i].state == DAG_TI_QUEUED && out->tis[i].job_id > 0)
			out->jobs[i] = job_view_get(dm, out->tis[i].job_id);
	return 0;
fail:
	dag_grid_release(out);
	return -1;
}

/* ---- GET /ui/dags/{dag_id}/stats ---- */

int dm_op_ui_stats(void *ctx, const char *dag_id, int limit, struct dag_run_stats *out,
                   struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_row drow = {0};

	if (dag_row_get(dm, dag_id, &drow, err) < 0)
		return -1;
	dag_row_release(&drow);
	if (latest_runs(dm, dag_id, limit, &out->runs, &out->n_runs, err) < 0)
		return -1;
	for (size_t k = 0; k < DAG_RUN_STATE_COUNT; k++) {
		struct dag_run_query q = {
		    .dag_id = dag_id, .by_state = true, .state = (enum dag_run_state)k};
		if (dag_store_run_count(dm->ds, &q, &out->counts[k], err) < 0) {
			dag_run_stats_release(out);
			return -1;
		}
	}
	return 0;
}
