/* admin_ops.c: the changes of api/dag_admin_api.h: marking task
 * instances success or failed (with their relatives in the run and the
 * same tasks in earlier or later runs), clearing a whole run, deleting a
 * run or a DAG's records; and the ops table (the reads are in
 * read_ops.c, pools in pool_admin.c).  Every change goes
 * through the run decisions (sched/dag_run.h) in one turn.
 */
#include "server/dag_manager/admin_ops.h"
#include "server/dag_manager/dm_internal.h"
#include "server/dag_manager/ops.h"

#include <stdlib.h>
#include <string.h>

#include "api/dag_views.h"
#include "lib/log.h"
#include "lib/strvec.h"
#include "model/states.h"
#include "store/admin_store.h"
#include "store/dag_store.h"

static bool run_active(enum dag_run_state s)
{
	return s == DAG_RUN_QUEUED || s == DAG_RUN_RUNNING;
}

/* ---- DELETE /dags/{dag_id} ---- */

static int op_delete_dag(void *ctx, const char *dag_id, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_entry *e;
	int64_t active = 0;
	int rc = -1;

	if (dm_dag_check_exists(dm, dag_id, err) < 0)
		return -1;
	dm_touch(dm);
	for (int s = 0; s < 2; s++) {
		struct dag_run_query q = {.dag_id = dag_id,
		                          .by_state = true,
		                          .state = s ? DAG_RUN_RUNNING : DAG_RUN_QUEUED};
		int64_t c = 0;
		if (dag_store_run_count(dm->ds, &q, &c, err) < 0)
			goto out;
		active += c;
	}
	if (active > 0) {
		weir_error_set(err, WEIR_E_CONFLICT,
		               "DAG %s has %lld active runs: mark them (PATCH .../dagRuns/ID) "
		               "or wait for their end first",
		               dag_id, (long long)active);
		goto out;
	}
	dm_run_cache_drop(dm);
	if (admin_dag_delete(dm->store, dag_id, err) < 0)
		goto out;
	/* its file, while there, is read again at the next scan: the DAG comes
	 * back without history, as Airflow's does */
	if ((e = dm_entry_by_id(dm, dag_id))) {
		e->mtime_ns = -1;
		e->last_sched_known = false;
	}
	log_info("DAG %s: its records deleted", dag_id);
	rc = 0;
out:
	return rc;
}

/* ---- DELETE .../dagRuns/{run_id} ---- */

static int op_delete_run(void *ctx, const char *dag_id, const char *run_id, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_row row = {0};
	int rc = -1;

	if (dm_dag_check_exists(dm, dag_id, err) < 0)
		return -1;
	dm_touch(dm);
	if (dm_run_row(dm, dag_id, run_id, &row, err) < 0)
		goto out;
	if (run_active(row.state)) {
		/* its jobs are stopped first: marked failed, as a user would */
		struct dag_event ev = {.kind = DAG_EV_MARK_RUN, .mark_run = DAG_RUN_FAILED};
		if (dm_run_event(dm, dag_id, run_id, &ev, err) < 0)
			goto out;
	}
	dm_run_cache_drop(dm);
	if (dag_store_run_delete(dm->ds, dag_id, run_id, err) < 0)
		goto out;
	log_info("DAG %s: run %s deleted", dag_id, run_id);
	rc = 0;
out:
	dag_run_row_release(&row);
	return rc;
}

/* ---- POST .../dagRuns/{run_id}/clear ---- */

static json_t *op_clear_run(void *ctx, const char *dag_id, const char *run_id, bool dry_run,
                            struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct strvec none = STRVEC_INIT;
	struct dag_run_row run = {0};
	struct dag_ti_refs refs = {0};
	json_t *r = NULL;

	if (!dm_spec_of(dm, dag_id, err))
		return NULL;
	dm_touch(dm);
	if (dm_run_row(dm, dag_id, run_id, &run, err) < 0)
		goto out;
	if (dm_clear_run(dm, dag_id, run_id, &none, false, false, dry_run, &refs, err) < 0)
		goto out;
	if (dry_run) {
		/* Airflow's answer: the task instances that would be cleared */
		json_t *tis = json_array();
		for (size_t i = 0; i < refs.n; i++) {
			struct dag_ti_row ti = {0};
			if (dag_store_ti_get(dm->ds, dag_id, run_id, refs.v[i].task_id,
			                     refs.v[i].map_index, &ti, NULL) == 0)
				json_array_append_new(tis, dm_ti_json(dm, &ti, &run));
			dag_ti_row_release(&ti);
		}
		r = dag_view_collection("task_instances", tis, json_array_size(tis));
	} else {
		struct dag_run_row now = {0};
		dm_work_pass(dm);
		if (dag_store_run_get(dm->ds, dag_id, run_id, &now, err) == 0)
			r = dm_run_json(&now);
		dag_run_row_release(&now);
		log_info("DAG %s: run %s cleared", dag_id, run_id);
	}
out:
	dag_run_row_release(&run);
	dag_ti_refs_free(&refs);
	return r;
}

/* ---- marks ---- */

/* The run a mark names: by id, or by its logical date. */
static int mark_run_row(struct dag_manager *dm, const char *dag_id,
                        const struct dag_mark_request *m, struct dag_run_row *out,
                        struct weir_error *err)
{
	struct dag_run_query q = {.dag_id = dag_id};
	struct dag_run_row *rows = NULL;
	size_t n = 0;
	int64_t at;

	if (m->run_id) {
		return dm_run_row(dm, dag_id, m->run_id, out, err);
	}
	if (dm_parse_date(m->execution_date, "execution_date", &at, err) < 0)
		return -1;
	if (dag_store_run_list(dm->ds, &q, &rows, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (rows[i].logical_date == at) {
			*out = rows[i];
			memset(&rows[i], 0, sizeof rows[i]);
			dag_run_rows_free(rows, n);
			return 0;
		}
	dag_run_rows_free(rows, n);
	return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s has no run at execution_date %s",
	                      dag_id, m->execution_date);
}

/* in[t]: task t is marked: the named one and, as asked, every task up or
 * down the graph from it. */
static void mark_tasks(const struct dag_spec *s, size_t named, bool up, bool down, bool *in)
{
	in[named] = true;
	/* down: in topological order, a task below a marked one is marked */
	for (size_t o = 0; down && o < s->n_tasks; o++) {
		size_t i = s->topo[o];
		for (size_t u = 0; u < s->tasks[i].n_upstream && !in[i]; u++)
			in[i] = in[s->tasks[i].upstream[u]];
	}
	/* up: backwards, the upstreams of the named task and of theirs */
	if (up) {
		bool *upin = calloc(s->n_tasks + 1, sizeof *upin);
		if (!upin)
			return;
		upin[named] = true;
		for (size_t o = s->n_tasks; o-- > 0;) {
			size_t i = s->topo[o];
			for (size_t u = 0; upin[i] && u < s->tasks[i].n_upstream; u++)
				upin[s->tasks[i].upstream[u]] = true;
		}
		for (size_t i = 0; i < s->n_tasks; i++)
			in[i] = in[i] || upin[i];
		free(upin);
	}
}

/* After a mark, the failed and upstream_failed TIs of the tasks below the
 * marked one (`below`, the marked task left out) cleared, as Airflow's
 * set_task_instance_state does: a run that failed goes on from there (the
 * clear queues it again); nothing failed below: nothing moves. */
static int clear_failed_below(struct dag_manager *dm, struct run_ctx *rc, const bool *below,
                              struct weir_error *err)
{
	size_t n = rc->spec->n_tasks, nt = 0;
	size_t *tasks = calloc(n + 1, sizeof *tasks);
	int r;

	if (!tasks)
		return weir_error_oom(err);
	for (size_t t = 0; t < n; t++)
		if (below[t])
			tasks[nt++] = t;
	r = 0;
	if (nt) {
		struct dag_event ev = {
		    .kind = DAG_EV_CLEAR, .tasks = tasks, .n_tasks = nt, .only_failed = true};
		r = dm_run_step(dm, rc, &ev, err);
	}
	free(tasks);
	return r;
}

/* Marks the chosen TIs of one run, then clears the failed ones below
 * (`below`); their references into `out`. */
static int mark_in_run(struct dag_manager *dm, const char *dag_id, const char *run_id,
                       const bool *in, const bool *below, const struct dag_mark_request *m,
                       enum dag_ti_state to, json_t *out, struct weir_error *err)
{
	struct run_ctx *rc = dm_run_get(dm, dag_id, run_id, err);

	if (!rc)
		return -1;
	for (size_t i = 0; i < rc->n_tis; i++) {
		const struct dag_ti_row *r = &rc->rows[rc->ti_row[i]];
		enum dag_ti_state s = rc->book.tis[i].state;
		if (!in[rc->ti_task[i]] || s == to || s == DAG_TI_REMOVED)
			continue;
		if (m->map_index != DAG_MAP_INDEX_ANY && r->map_index != m->map_index)
			continue;
		json_array_append_new(out, dag_view_ti_ref(r, &rc->run));
		if (!m->dry_run) {
			struct dag_event ev = {.kind = DAG_EV_MARK_TI, .ti = i, .mark_ti = to};
			if (dm_run_step(dm, rc, &ev, err) < 0)
				return -1;
		}
	}
	return m->dry_run ? 0 : clear_failed_below(dm, rc, below, err);
}

static json_t *op_mark_tis(void *ctx, const char *dag_id, const struct dag_mark_request *m,
                           struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	const struct dag_spec *s = dm_spec_of(dm, dag_id, err);
	struct dag_run_row run = {0};
	enum dag_ti_state to;
	bool *in = NULL, *below = NULL;
	long t;
	json_t *out = NULL, *r = NULL;

	if (!s)
		return NULL;
	if (dag_ti_state_from_name(m->new_state, &to) < 0 ||
	    (to != DAG_TI_SUCCESS && to != DAG_TI_FAILED)) {
		weir_error_set(err, WEIR_E_INVALID, "new_state: expected success or failed");
		return NULL;
	}
	if ((t = dag_spec_task_index(s, m->task_id)) < 0) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s has no task %s", dag_id, m->task_id);
		return NULL;
	}
	if (!(in = calloc(s->n_tasks + 1, sizeof *in)) ||
	    !(below = calloc(s->n_tasks + 1, sizeof *below)) || !(out = json_array())) {
		free(in);
		free(below);
		weir_error_oom(err);
		return NULL;
	}
	mark_tasks(s, (size_t)t, m->upstream, m->downstream, in);
	mark_tasks(s, (size_t)t, false, true, below);
	below[t] = false;
	dm_touch(dm);
	if (mark_run_row(dm, dag_id, m, &run, err) < 0)
		goto out;
	if (m->past || m->future) {
		struct dag_run_query q = {.dag_id = dag_id};
		struct dag_run_row *rows = NULL;
		size_t n = 0;
		if (dag_store_run_list(dm->ds, &q, &rows, &n, err) < 0)
			goto out;
		for (size_t i = 0; i < n; i++) {
			bool take = rows[i].logical_date == run.logical_date ||
			            (m->past && rows[i].logical_date < run.logical_date) ||
			            (m->future && rows[i].logical_date > run.logical_date);
			if (take && mark_in_run(dm, dag_id, rows[i].run_id, in, below, m, to, out,
			                        err) < 0) {
				dag_run_rows_free(rows, n);
				goto out;
			}
		}
		dag_run_rows_free(rows, n);
	} else if (mark_in_run(dm, dag_id, run.run_id, in, below, m, to, out, err) < 0) {
		goto out;
	}
	if (!m->dry_run) {
		dm_work_pass(dm);
		log_info("DAG %s: %zu task instances marked %s", dag_id, json_array_size(out),
		         m->new_state);
	}
	r = json_pack("{s:O}", "task_instances", out);
out:
	dag_run_row_release(&run);
	json_decref(out);
	free(in);
	free(below);
	return r;
}

static const struct dag_admin_ops admin_ops = {
    .list_pools = dm_op_list_pools,
    .get_pool = dm_op_get_pool,
    .add_pool = dm_op_add_pool,
    .patch_pool = dm_op_patch_pool,
    .delete_pool = dm_op_delete_pool,
    .delete_dag = op_delete_dag,
    .delete_run = op_delete_run,
    .clear_run = op_clear_run,
    .mark_tis = op_mark_tis,
    .get_task = dm_op_get_task,
    .dag_stats = dm_op_dag_stats,
    .dag_source = dm_op_dag_source,
    .reparse = dm_op_reparse,
    .import_error = dm_op_import_error,
    .xcom_list = dm_op_xcom_list,
    .xcom_get = dm_op_xcom_get,
    .ti_deps = dm_op_ti_deps,
    .ti_links = dm_op_ti_links,
    .list_mapped = dm_op_list_mapped,
    .task_read_runs = dm_op_task_read_runs,
};

const struct dag_admin_ops *dm_admin_ops(void)
{
	return &admin_ops;
}
