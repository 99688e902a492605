/* run_ctx.c: the run cache (dm_run_get(), dm_run_step(), dm_run_event()
 * of dm_internal.h).
 *
 * Owns: the run copies (dm->cache.runs).  A copy is the run's rows read once, in
 * task order, with the graph and the books (sched/dag_book.h) that
 * decisions are made on; every decision is written through it to the store
 * at once, so the two agree for as long as the copy lives: while the run is
 * active, until a rescan changes its DAG's parse, a write through it fails,
 * or the store rolls a transaction back (dm_run_cache_check()).
 * A run also gets here the TIs of a task added to its DAG's file since it
 * began, and loses (state removed) those of a task that left it.
 */
#include "server/dag_manager/dm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/log.h"
#include "sched/dag_run.h"
#include "sched/dag_states.h"
#include "server/observe_series.h"

static void run_ctx_release(struct run_ctx *rc)
{
	dag_run_row_release(&rc->run);
	dag_ti_rows_free(rc->rows, rc->n_rows);
	free(rc->nodes);
	dag_book_release(&rc->book);
	free(rc->pool_order);
	free(rc->in_pool_order);
	hashmap_destroy(rc->task_ix);
	hashmap_destroy(rc->by_job);
	free(rc->pending);
	free(rc->pending_rows);
	free(rc->ti_row);
	free(rc->ti_task);
	json_decref(rc->params);
	memset(rc, 0, sizeof *rc);
}

static json_t *run_conf(const struct dag_run_row *run)
{
	json_t *c = json_loads(run->conf && *run->conf ? run->conf : "{}", 0, NULL);
	if (!json_is_object(c)) {
		json_decref(c);
		c = json_object();
	}
	return c;
}

void dm_fill_ti_row(struct dag_ti_row *r, const struct dag_spec *spec, const char *run_id,
                    const struct dag_task *t, int map_index)
{
	memset(r, 0, sizeof *r);
	r->dag_id = (char *)spec->dag_id;
	r->run_id = (char *)run_id;
	r->task_id = t->task_id;
	r->map_index = map_index;
	dm_ti_set_state(r, DAG_TI_NONE); /* a new row: its first state */
	r->max_tries = t->retries + 1;
	r->pool = t->pool ? t->pool : DAG_DEFAULT_POOL;
	r->pool_slots = t->pool_slots > 0 ? t->pool_slots : 1;
	r->priority = t->priority;
	r->rendered_command = "";
	r->outputs = "";
	r->reason = "";
}

int dm_insert_task_tis(struct dag_manager *dm, const struct dag_spec *spec, const char *run_id,
                       const struct dag_task *t, const json_t *params, struct weir_error *err)
{
	struct dag_ti_row r;

	if (t->foreach_list || t->foreach_param) {
		json_t *items = dag_task_foreach_items(spec, t, params, err);
		if (!items)
			return -1;
		for (size_t k = 0; k < json_array_size(items); k++) {
			dm_fill_ti_row(&r, spec, run_id, t, (int)k);
			if (dag_store_ti_insert(dm->ds, &r, err) < 0) {
				json_decref(items);
				return -1;
			}
		}
		json_decref(items);
		return 0;
	}
	dm_fill_ti_row(&r, spec, run_id, t, -1);
	return dag_store_ti_insert(dm->ds, &r, err);
}

/* The task index of each row (-1: a task that left the file).  Rows come in
 * task order (inserted so), so a cursor finds nearly every one at once. */
static void rows_to_tasks(const struct dag_spec *spec, const struct dag_ti_row *rows, size_t n,
                          long *task_of)
{
	size_t t = 0;

	for (size_t k = 0; k < n; k++) {
		const char *id = rows[k].task_id;
		if (t < spec->n_tasks && !strcmp(id, spec->tasks[t].task_id)) {
			task_of[k] = (long)t;
		} else if (t + 1 < spec->n_tasks && !strcmp(id, spec->tasks[t + 1].task_id)) {
			task_of[k] = (long)++t;
		} else {
			task_of[k] = dag_spec_task_index(spec, id);
			if (task_of[k] >= 0)
				t = (size_t)task_of[k];
		}
	}
}

static int run_load(struct dag_manager *dm, const char *dag_id, const char *run_id,
                    struct run_ctx *rc, struct weir_error *err)
{
	json_t *conf;
	size_t n_tis = 0, n_tasks;
	bool inserted = false;
	long *task_of = NULL;
	size_t *count = NULL, *first = NULL;
	struct dag_ti *tis = NULL;

	memset(rc, 0, sizeof *rc);
	rc->spec = dm_spec_of(dm, dag_id, err);
	if (!rc->spec)
		return -1;
	n_tasks = rc->spec->n_tasks;
	if (dag_store_run_get(dm->ds, dag_id, run_id, &rc->run, err) < 0)
		goto fail;
	conf = run_conf(&rc->run);
	rc->params = dag_spec_run_params(rc->spec, conf, err);
	json_decref(conf);
	if (!rc->params)
		goto fail;
	count = calloc(n_tasks + 1, sizeof *count);
	first = calloc(n_tasks + 1, sizeof *first);
	if (!count || !first)
		goto oom;
again:
	if (dag_store_tis_of_run(dm->ds, dag_id, run_id, &rc->rows, &rc->n_rows, err) < 0)
		goto fail;
	free(task_of);
	task_of = calloc(rc->n_rows + 1, sizeof *task_of);
	if (!task_of)
		goto oom;
	rows_to_tasks(rc->spec, rc->rows, rc->n_rows, task_of);
	memset(count, 0, (n_tasks + 1) * sizeof *count);
	for (size_t k = 0; k < rc->n_rows; k++)
		if (task_of[k] >= 0)
			count[task_of[k]]++;
	/* a task added to the file since the run began gets its TIs now */
	if (!inserted) {
		bool tried = false;
		for (size_t i = 0; i < n_tasks; i++) {
			if (count[i] > 0)
				continue;
			if (dm_insert_task_tis(dm, rc->spec, run_id, &rc->spec->tasks[i],
			                       rc->params, err) < 0)
				goto fail;
			tried = true;
		}
		inserted = true;
		if (tried) {
			dag_ti_rows_free(rc->rows, rc->n_rows);
			rc->rows = NULL;
			rc->n_rows = 0;
			goto again;
		}
	}
	rc->nodes = calloc(n_tasks ? n_tasks : 1, sizeof *rc->nodes);
	tis = calloc(rc->n_rows ? rc->n_rows : 1, sizeof *tis);
	rc->task_ix = hashmap_create(HASHMAP_KEY_STR);
	rc->ti_row = calloc(rc->n_rows ? rc->n_rows : 1, sizeof *rc->ti_row);
	rc->ti_task = calloc(rc->n_rows ? rc->n_rows : 1, sizeof *rc->ti_task);
	if (!rc->nodes || !tis || !rc->ti_row || !rc->ti_task || !rc->task_ix)
		goto oom;
	/* TIs in task order: a counting sort of the rows by task (stable, so a
	 * foreach task's instances stay in map_index order) */
	for (size_t i = 0; i < n_tasks; i++) {
		const struct dag_task *t = &rc->spec->tasks[i];
		struct dag_task_node *nd = &rc->nodes[i];
		nd->task_id = t->task_id;
		if (hashmap_put_str(rc->task_ix, t->task_id, (void *)(i + 1), NULL) < 0)
			goto oom;
		nd->upstream = t->upstream;
		nd->n_upstream = t->n_upstream;
		nd->trigger_rule = t->trigger_rule;
		nd->retry.retries = t->retries;
		nd->retry.delay_ms = t->retry_delay_s * 1000;
		nd->retry.exponential = t->retry_exponential_backoff;
		nd->retry.max_delay_ms = t->max_retry_delay_s * 1000;
		nd->pool = t->pool;
		nd->pool_slots = t->pool_slots > 0 ? t->pool_slots : 1;
		nd->priority = t->priority;
		nd->foreach = dag_task_is_mapped(t);
		nd->setup = t->flow.setup;
		nd->ignorable = t->flow.teardown && !t->flow.on_failure_fail_dagrun;
		if (!nd->foreach && count[i] > 1)
			count[i] = 1; /* a task that stopped being a foreach: its first row */
		nd->n_instances = (int)count[i];
		first[i] = n_tis;
		n_tis += count[i];
	}
	memset(count, 0, (n_tasks + 1) * sizeof *count);
	for (size_t k = 0; k < rc->n_rows; k++) {
		long t = task_of[k];
		size_t at;
		if (t < 0 || count[t] >= (size_t)rc->nodes[t].n_instances)
			continue;
		at = first[t] + count[t]++;
		rc->ti_row[at] = k;
		rc->ti_task[at] = (size_t)t;
		tis[at].state = rc->rows[k].state;
		tis[at].try_number = rc->rows[k].try_number;
		tis[at].max_tries = rc->rows[k].max_tries;
		tis[at].next_retry_at = rc->rows[k].next_retry_at;
	}
	for (size_t k = 0; k < rc->n_rows && !rc->has_outputs; k++)
		rc->has_outputs = rc->rows[k].outputs && *rc->rows[k].outputs;
	if (!(rc->by_job = hashmap_create(HASHMAP_KEY_INT)))
		goto oom;
	for (size_t k = 0; k < rc->n_rows; k++)
		dm_run_note_job(rc, k);
	rc->n_tis = n_tis;
	rc->g.tasks = rc->nodes;
	rc->g.n_tasks = n_tasks;
	if (dag_book_init(&rc->book, &rc->g, tis, n_tis, err) < 0)
		goto fail;
	rc->has_past = dm_spec_has_past(rc->spec);
	dm_flow_holds(dm, rc, NULL); /* depends_on_past (flow.c); a failed read holds */
	/* rows of tasks that left the file: removed */
	for (size_t k = 0; k < rc->n_rows; k++) {
		struct dag_ti_row *r = &rc->rows[k];
		if (task_of[k] >= 0 || dag_ti_state_is_final(r->state))
			continue;
		if (dm_ti_set_state(r, DAG_TI_REMOVED) < 0)
			continue; /* refused (logged) */
		if (dag_store_ti_update(dm->ds, r, err) < 0)
			goto fail;
	}
	free(task_of);
	free(count);
	free(first);
	free(tis);
	return 0;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
fail:
	free(task_of);
	free(count);
	free(first);
	free(tis);
	run_ctx_release(rc);
	return -1;
}

/* ---- the run cache ---- */

void dm_run_note_job(struct run_ctx *rc, size_t row)
{
	int64_t job = rc->rows[row].job_id;

	/* a note that cannot be kept: the job's end asks the store */
	if (job > 0)
		hashmap_put_int(rc->by_job, job, (void *)(row + 1), NULL);
}

struct run_ctx *dm_run_by_job(struct dag_manager *dm, int64_t job_id, size_t *row)
{
	dm_run_cache_check(dm); /* as dm_run_get(): no copy of a turn rolled back */
	for (size_t i = 0; i < dm->cache.n; i++) {
		struct run_ctx *rc = dm->cache.runs[i];
		size_t k = (size_t)hashmap_get_int(rc->by_job, job_id);
		if (!rc->stale && k > 0 && k <= rc->n_rows && rc->rows[k - 1].job_id == job_id) {
			*row = k - 1;
			return rc;
		}
	}
	return NULL;
}

static void run_ctx_free(struct run_ctx *rc)
{
	run_ctx_release(rc);
	free(rc);
}

/* Every copy freed, what waits unwritten with them. */
static void cache_free(struct dag_manager *dm)
{
	for (size_t i = 0; i < dm->cache.n; i++)
		run_ctx_free(dm->cache.runs[i]);
	dm->cache.n = 0;
}

void dm_run_cache_drop(struct dag_manager *dm)
{
	dm_ti_flush(dm);
	cache_free(dm);
}

void dm_run_cache_check(struct dag_manager *dm)
{
	uint64_t rb = store_rollbacks(dm->store);

	/* the rows that wait were decided in the turn rolled back: dropped */
	if (rb != dm->cache.rollbacks) {
		cache_free(dm);
		dm->retries.none = false;  /* a retry the turn took may be back */
		dm->timeouts.dirty = true; /* and a run the turn timed out */
		dm->cache.rollbacks = rb;
	}
}

/* ---- writes that wait for the turn's end ---- */

static int save(struct dag_manager *dm, struct run_ctx *rc, struct dag_ti_row *r, bool whole,
                struct weir_error *err)
{
	if (rc->pending)
		rc->pending[r - rc->rows] = false;
	if (r->state == DAG_TI_UP_FOR_RETRY)
		dm->retries.none = false;
	if ((whole ? dag_store_ti_update : dag_store_ti_set_state)(dm->ds, r, err) < 0) {
		rc->stale = true;
		return -1;
	}
	return 0;
}

int dm_ti_save(struct dag_manager *dm, struct run_ctx *rc, struct dag_ti_row *r,
               struct weir_error *err)
{
	return save(dm, rc, r, true, err);
}

int dm_ti_save_state(struct dag_manager *dm, struct run_ctx *rc, struct dag_ti_row *r,
                     struct weir_error *err)
{
	return save(dm, rc, r, false, err);
}

/* Writes row r's state now; a failure logged. */
static void save_logged(struct dag_manager *dm, struct run_ctx *rc, struct dag_ti_row *r)
{
	struct weir_error err = {0};

	if (dm_ti_save_state(dm, rc, r, &err) < 0)
		log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
}

void dm_ti_defer(struct dag_manager *dm, struct run_ctx *rc, struct dag_ti_row *r)
{
	size_t k = (size_t)(r - rc->rows);

	if (!dm->turn.in_pass && !dm->turn.in_job_end)
		goto now;
	if (!rc->pending &&
	    !(rc->pending = calloc(rc->n_rows ? rc->n_rows : 1, sizeof *rc->pending)))
		goto now;
	if (rc->pending[k])
		return;
	if (ALLOC_GROW(rc->pending_rows, rc->n_pending + 1, rc->cap_pending) < 0)
		goto now;
	rc->pending_rows[rc->n_pending++] = k;
	rc->pending[k] = true;
	return;
now:
	save_logged(dm, rc, r);
}

void dm_ti_flush(struct dag_manager *dm)
{
	for (size_t i = 0; i < dm->cache.n; i++) {
		struct run_ctx *rc = dm->cache.runs[i];
		for (size_t j = 0; j < rc->n_pending; j++) {
			size_t k = rc->pending_rows[j];
			if (rc->pending[k])
				save_logged(dm, rc, &rc->rows[k]);
		}
		rc->n_pending = 0;
	}
}

void dm_run_cache_trim(struct dag_manager *dm)
{
	size_t kept = 0;

	for (size_t i = 0; i < dm->cache.n; i++) {
		struct run_ctx *rc = dm->cache.runs[i];
		if (rc->stale || dag_run_state_is_final(rc->run.state))
			run_ctx_free(rc);
		else
			dm->cache.runs[kept++] = rc;
	}
	dm->cache.n = kept;
}

/* The run from the cache, read now when it is not there.  One event of a
 * 2,000-task run used to read its rows three or four times (the end of a
 * TI, the pool pass, the next TI's start), then once a turn; now once while
 * the run is active.  Every write of the manager's goes through this copy
 * (dm_run_step(), dm_start_ti(), the pool pass) and to the store at once,
 * so the two agree.  A copy whose write failed is marked stale, read again
 * at the next look and dropped at the turn's end.  Borrowed until the
 * turn's commit; NULL with err. */
struct run_ctx *dm_run_get(struct dag_manager *dm, const char *dag_id, const char *run_id,
                           struct weir_error *err)
{
	struct run_ctx *rc;

	dm_run_cache_check(dm);
	for (size_t i = dm->cache.n; i-- > 0;) {
		rc = dm->cache.runs[i];
		if (!rc->stale && !strcmp(rc->run.dag_id, dag_id) &&
		    !strcmp(rc->run.run_id, run_id))
			return rc;
	}
	dm_ti_flush(dm); /* the store as the copies say (a stale one's own rows too) */
	if (ALLOC_GROW(dm->cache.runs, dm->cache.n + 1, dm->cache.cap) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	rc = calloc(1, sizeof *rc);
	if (!rc) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	if (run_load(dm, dag_id, run_id, rc, err) < 0) {
		free(rc);
		return NULL;
	}
	dm->cache.runs[dm->cache.n++] = rc;
	return rc;
}

long dm_run_find_ti(const struct run_ctx *rc, const char *task_id, int map_index)
{
	size_t t = (size_t)hashmap_get_str(rc->task_ix, task_id), first, end;

	if (t-- == 0)
		return -1;
	first = rc->book.base[t];
	end = rc->book.base[t + 1];
	/* a foreach task's instances are in map_index order: look there first */
	if (map_index >= 0 && first + (size_t)map_index < end &&
	    rc->rows[rc->ti_row[first + (size_t)map_index]].map_index == map_index)
		return (long)(first + (size_t)map_index);
	for (size_t i = first; i < end; i++)
		if (rc->rows[rc->ti_row[i]].map_index == map_index)
			return (long)i;
	return -1;
}

void dm_try_update(struct dag_manager *dm, const struct dag_ti_row *r, enum dag_ti_state state,
                   const char *reason, bool ended)
{
	struct weir_error err = {0};
	struct dag_try_row t = {.dag_id = r->dag_id,
	                        .run_id = r->run_id,
	                        .task_id = r->task_id,
	                        .map_index = r->map_index,
	                        .try_number = r->try_number,
	                        .state = state};
	int64_t now = clock_now_ms();
	bool found = false;

	if (r->try_number <= 0)
		return;
	/* a try that ends: one UPDATE, nothing read; the try's start writes the
	 * whole row (a try without a row, from before tries were kept, gets one) */
	if (state != DAG_TI_QUEUED &&
	    dag_store_try_end(dm->ds, &t, state, reason, ended ? now : 0, &found, &err) < 0)
		goto fail;
	if (found)
		return;
	t.job_id = r->job_id;
	t.start_date = now;
	t.end_date = ended ? now : 0;
	t.reason = (char *)(reason ? reason : "");
	if (dag_store_try_put(dm->ds, &t, &err) == 0)
		return;
fail:
	log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
}

/* Decides on `ev` and writes the result: TI rows, tries, the run, job
 * kills.  0, or -1 with err (nothing written then). */
int dm_run_step(struct dag_manager *dm, struct run_ctx *rc, const struct dag_event *ev,
                struct weir_error *err)
{
	struct dag_run_decision d = {0};
	int64_t now = clock_now_ms();

	if (dag_book_decide(&rc->book, rc->run.state, ev, now, &d, err) < 0)
		return -1;
	for (size_t i = 0; i < d.n_changes; i++) {
		const struct dag_ti_change *c = &d.changes[i];
		struct dag_ti_row *r = &rc->rows[rc->ti_row[c->ti]];
		int64_t job = r->job_id;

		/* a cleared TI that the rules moved on passes through none */
		if ((c->cleared && c->to != DAG_TI_NONE && dm_ti_set_state(r, DAG_TI_NONE) < 0) ||
		    dm_ti_set_state(r, c->to) < 0) {
			/* sched's decision against the move table (logged): the
			 * copy is read again from the store */
			rc->stale = true;
			continue;
		}
		r->max_tries = c->max_tries;
		r->next_retry_at = c->to == DAG_TI_UP_FOR_RETRY ? c->retry_at : 0;
		if (c->to == DAG_TI_NONE) {
			/* cleared: a late end of the old job must not find it */
			r->job_id = 0;
			r->start_date = 0;
			r->end_date = 0;
			r->queued_at = 0;
			dm_set_str(&r->reason, "");
			dm_set_str(&r->outputs, "");
		} else if (c->to == DAG_TI_SCHEDULED) {
			dm_set_str(&r->reason, "");
		} else if (dag_ti_state_is_final(c->to) || c->to == DAG_TI_UP_FOR_RETRY) {
			if (!r->end_date)
				r->end_date = now;
		}
		if (c->stop && job > 0) {
			struct weir_error e2 = {0};
			if (job_manager_kill(dm->jm, job, &e2) < 0 && e2.kind != WEIR_E_CONFLICT)
				log_warn("DAG %s run %s task %s: stopping job %lld: %s", r->dag_id,
				         r->run_id, r->task_id, (long long)job, e2.msg);
		}
		/* the try's end, written once: the reported end brings its reason */
		if (dag_ti_state_is_active(c->from) &&
		    (dag_ti_state_is_final(c->to) || c->to == DAG_TI_UP_FOR_RETRY ||
		     c->to == DAG_TI_NONE))
			dm_try_update(dm, r, c->to == DAG_TI_NONE ? DAG_TI_FAILED : c->to,
			              c->to == DAG_TI_NONE                             ? "cleared"
			              : ev->kind == DAG_EV_TI_ENDED && ev->ti == c->ti ? r->reason
			                                                               : NULL,
			              true);
		/* a TI that became scheduled is written at the latest by the
		 * turn's end, most often by its start in the same turn */
		if (c->from == DAG_TI_NONE && c->to == DAG_TI_SCHEDULED)
			dm_ti_defer(dm, rc, r);
		else if ((c->to == DAG_TI_NONE ? dm_ti_save : dm_ti_save_state)(dm, rc, r, err) < 0)
			goto fail; /* a clear drops the job: the whole row */
		if (c->to == DAG_TI_SUCCESS && ev->kind == DAG_EV_TI_ENDED && ev->ti == c->ti &&
		    ev->success)
			dm_datasets_on_success(dm, rc, c->ti); /* its outlets (datasets.c) */
	}
	dag_book_apply(&rc->book, &d);
	dm_flow_note(dm, rc, &d);
	if ((d.run_to != d.run_from ||
	     (d.run_to == DAG_RUN_FAILED && strcmp(rc->run.reason, d.reason))) &&
	    dm_run_set_state(&rc->run, d.run_to) < 0) {
		rc->stale = true; /* refused (logged): the run as it was; read again */
	} else if (d.run_to != d.run_from ||
	           (d.run_to == DAG_RUN_FAILED && strcmp(rc->run.reason, d.reason))) {
		dm_set_str(&rc->run.reason, d.reason);
		if (d.run_to == DAG_RUN_RUNNING && !rc->run.start_date)
			rc->run.start_date = now;
		if (d.run_to == DAG_RUN_RUNNING)
			dm->timeouts.dirty = true; /* its dagrun_timeout counts (runs.c) */
		if (dag_run_state_is_final(d.run_to)) {
			rc->run.end_date = now;
			dm->triggers.dirty = true; /* a trigger_dag task may wait for it */
			if (d.run_to != d.run_from)
				observe_series_dag_run_end(
				    rc->run.dag_id, d.run_to == DAG_RUN_SUCCESS,
				    (double)(now - (rc->run.start_date ? rc->run.start_date
				                                       : rc->run.queued_at)) /
				        1000.0);
		}
		if (d.run_to == DAG_RUN_QUEUED) {
			/* a cleared run starts again (Airflow's clear): its
			 * dagrun_timeout counts from that start */
			rc->run.queued_at = now;
			rc->run.start_date = 0;
			rc->run.end_date = 0;
		}
		if (dag_store_run_update(dm->ds, &rc->run, err) < 0)
			goto fail;
		log_info("DAG %s run %s: %s%s%s", rc->run.dag_id, rc->run.run_id,
		         dag_run_state_name(rc->run.state), d.reason[0] ? ": " : "", d.reason);
	}
	dm_notify_step(dm, rc, &d);
	if (d.next_wakeup > 0)
		dm_wake_note(dm, d.next_wakeup);
	if (d.n_changes > 0 || d.run_to != d.run_from)
		dm->pools.dirty = true;
	dag_run_decision_release(&d);
	dm->turn.pass_again = true;
	return 0;
fail:
	rc->stale = true;
	dm->pools.dirty = true;
	dag_run_decision_release(&d);
	return -1;
}

/* Loads the run, applies `ev` and writes the result; errors are logged. */
int dm_run_event(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const struct dag_event *ev, struct weir_error *err)
{
	struct run_ctx *rc = dm_run_get(dm, dag_id, run_id, err);

	return rc ? dm_run_step(dm, rc, ev, err) : -1;
}
