/* pools.c: the pool pass: which scheduled TIs of every running
 * run become jobs now, as the pools' slots, each DAG's max_active_tasks
 * and each task's max_active_tis_per_dag(run) allow (sched/dag_pool.h
 * decides; the order is the runs' logical dates, then priority).
 *
 * Owns: dm->pools.dirty (raised wherever a TI becomes scheduled or a
 * pool's slots free up), the pools' use, counted again at every pass from a narrow read of
 * the queued and running TIs (the pools bound how many there are), and
 * each run copy's pool order (rc->pool_order: its scheduled TIs by priority and
 * row, kept from pass to pass from the books' log of TIs that became
 * scheduled).  The candidates are read from the runs' orders merged, a
 * batch at a time; when every pool is full the decision stops at the
 * first TI that waits: the TIs behind it are not read and keep the reason
 * they show (those that show none get theirs), so a pass over a wide
 * fan-out costs its few starts, not its thousand waiting TIs.
 */
#include "server/dag_manager/dm_internal.h"

#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/strbuf.h"
#include "sched/dag_pool.h"
#include "store/dag_store.h"

/* A scheduled TI of a run read in this turn. */
struct pool_cand {
	struct run_ctx *rc;
	size_t ti;
};

static struct dag_pool *pool_find(struct dag_manager *dm, const char *name)
{
	if (!name || !*name)
		name = DAG_DEFAULT_POOL;
	for (size_t i = 0; i < dm->pools.n; i++)
		if (!strcmp(dm->pools.list[i].name, name))
			return &dm->pools.list[i];
	return NULL;
}

/* What the pass gathers: the running runs, the DAGs' limits, the
 * candidates. */
struct pool_gather {
	struct dag_manager *dm;
	struct run_ctx **runs;
	size_t *run_dag; /* per run: its DAG's index into limits */
	size_t n_runs, cap_runs;
	size_t *at; /* per run: its next place in its pool order */
	struct pool_cand *cands;
	struct dag_candidate *cand;
	struct dag_pool_decision *dec;
	size_t n, cap, cap2, cap3;
	struct dag_limit *limits;
	size_t nl, cap_l;
	/* the places taken of the tasks that have a limit (NULL: no running
	 * DAG has one): "DAG\x1fTASK" (across runs: made for each such task
	 * when its DAG is gathered) and "DAG\x1fRUN\x1fTASK" (in a run: made
	 * when counted or asked for) -> struct dag_task_limit * */
	struct hashmap *tasks;
	struct strbuf key;
	bool oom;
};

/* The task's place across runs (run_id NULL) or in run_id, made (max 0,
 * none active) when new and `make`; NULL when there is none, or out of
 * memory (g->oom). */
static struct dag_task_limit *task_place(struct pool_gather *g, const char *dag_id,
                                         const char *run_id, const char *task_id, bool make)
{
	struct dag_task_limit *t;

	if (!g->tasks && !make)
		return NULL;
	strbuf_reset(&g->key);
	if (strbuf_addstr(&g->key, dag_id) < 0 || strbuf_addch(&g->key, 0x1f) < 0 ||
	    (run_id && (strbuf_addstr(&g->key, run_id) < 0 || strbuf_addch(&g->key, 0x1f) < 0)) ||
	    strbuf_addstr(&g->key, task_id) < 0)
		goto oom;
	if (!g->tasks && !(g->tasks = hashmap_create(HASHMAP_KEY_STR)))
		goto oom;
	if ((t = hashmap_get_str(g->tasks, g->key.buf)) || !make)
		return t;
	if (!(t = calloc(1, sizeof *t)) || hashmap_put_str(g->tasks, g->key.buf, t, NULL) < 0) {
		free(t);
		goto oom;
	}
	t->per_run = run_id != NULL;
	return t;
oom:
	g->oom = true;
	return NULL;
}

/* A candidate's task limits (NULL each where its task has none). */
static void task_limits(struct pool_gather *g, struct run_ctx *rc, size_t ti,
                        struct dag_candidate *c)
{
	const struct dag_task *t = &rc->spec->tasks[rc->ti_task[ti]];

	if (t->max_active_tis_per_dag > 0)
		c->tis_per_dag = task_place(g, rc->run.dag_id, NULL, t->task_id, true);
	if (t->max_active_tis_per_dagrun > 0 &&
	    (c->tis_per_run = task_place(g, rc->run.dag_id, rc->run.run_id, t->task_id, true))) {
		c->tis_per_run->max = t->max_active_tis_per_dagrun;
		c->tis_per_run->task_id = t->task_id;
	}
}

/* A running run from the store: kept, with its DAG's limit. */
static void gather_run(void *arg, const char *dag_id, const char *run_id, int unused)
{
	struct pool_gather *g = arg;
	struct weir_error e2 = {0};
	struct run_ctx *rc;
	size_t l, cap = g->cap_runs;

	(void)unused;
	if (g->oom)
		return;
	rc = dm_run_get(g->dm, dag_id, run_id, &e2);
	if (!rc)
		return; /* its DAG is gone (recovery says so); it waits */
	for (l = 0; l < g->nl; l++)
		if (!strcmp(g->limits[l].dag_id, rc->run.dag_id))
			break;
	if (l == g->nl) {
		if (ALLOC_GROW(g->limits, g->nl + 1, g->cap_l) < 0) {
			g->oom = true;
			return;
		}
		g->limits[l] = (struct dag_limit){.dag_id = rc->run.dag_id,
		                                  .max_active_tasks = rc->spec->max_active_tasks};
		g->nl++;
		/* its tasks with a limit: their places across runs, counted next */
		for (size_t i = 0; i < rc->spec->n_tasks; i++) {
			const struct dag_task *t = &rc->spec->tasks[i];
			struct dag_task_limit *p;
			if (!t->max_active_tis_per_dag && !t->max_active_tis_per_dagrun)
				continue;
			if (!(p = task_place(g, rc->run.dag_id, NULL, t->task_id, true)))
				return;
			p->max = t->max_active_tis_per_dag;
			p->task_id = t->task_id;
		}
	}
	if (ALLOC_GROW(g->runs, g->n_runs + 1, g->cap_runs) < 0 ||
	    ALLOC_GROW(g->run_dag, g->n_runs + 1, cap) < 0) {
		g->oom = true;
		return;
	}
	g->runs[g->n_runs] = rc;
	g->run_dag[g->n_runs++] = l;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct dm_pool_ent *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static void pool_order_add(struct run_ctx *rc, size_t ti)
{
	rc->in_pool_order[ti] = true;
	rc->pool_order[rc->n_pool_order++] = (struct dm_pool_ent){
	    .priority = rc->rows[rc->ti_row[ti]].priority, .row = rc->ti_row[ti], .ti = ti};
}

/* The run's pool order brought up to its books: the TIs that became
 * scheduled since (the books' log) put in place, the leading ones no
 * longer scheduled passed, and those no longer scheduled dropped once
 * they outnumber those that are.  Work: what changed, not the number
 * waiting. */
static bool pool_order_sync(struct run_ctx *rc)
{
	struct dag_book *b = &rc->book;
	size_t n_new = 0;

	if (!rc->pool_order) {
		rc->pool_order = malloc((rc->n_tis ? rc->n_tis : 1) * sizeof *rc->pool_order);
		rc->in_pool_order = calloc(rc->n_tis ? rc->n_tis : 1, sizeof *rc->in_pool_order);
		if (!rc->pool_order || !rc->in_pool_order) {
			free(rc->pool_order);
			free(rc->in_pool_order);
			rc->pool_order = NULL;
			rc->in_pool_order = NULL;
			return false;
		}
		rc->n_pool_order = rc->pool_order_head = 0;
		b->fresh_over = true;
	}
	if (b->fresh_over) {
		for (size_t q = 0; q < b->n_ready; q++)
			if (!rc->in_pool_order[b->ready[q]])
				pool_order_add(rc, b->ready[q]), n_new++;
		rc->pool_order_head = 0;
		rc->pool_order_unreasoned = true;
	} else if (b->n_fresh) {
		size_t few = 0;
		for (size_t q = 0; q < b->n_fresh && few <= 8; q++)
			few += !rc->in_pool_order[b->fresh[q]];
		for (size_t q = 0; q < b->n_fresh; q++) {
			size_t ti = b->fresh[q], lo = 0, hi = rc->n_pool_order;
			struct dm_pool_ent e;
			if (rc->in_pool_order[ti]) {
				rc->pool_order_head = 0; /* scheduled again, in its place */
				continue;
			}
			if (few > 8) {
				pool_order_add(rc, ti), n_new++; /* many: sorted below */
				continue;
			}
			/* a few: each put in place */
			e = (struct dm_pool_ent){.priority = rc->rows[rc->ti_row[ti]].priority,
			                         .row = rc->ti_row[ti],
			                         .ti = ti};
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (ent_cmp(&rc->pool_order[mid], &e) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			memmove(&rc->pool_order[lo + 1], &rc->pool_order[lo],
			        (rc->n_pool_order - lo) * sizeof *rc->pool_order);
			rc->pool_order[lo] = e;
			rc->n_pool_order++;
			rc->in_pool_order[ti] = true;
			if (lo < rc->pool_order_head)
				rc->pool_order_head = lo;
		}
		rc->pool_order_unreasoned = true;
	}
	if (n_new) {
		qsort(rc->pool_order, rc->n_pool_order, sizeof *rc->pool_order, ent_cmp);
		rc->pool_order_head = 0;
	}
	b->n_fresh = 0;
	b->fresh_over = false;
	if (rc->n_pool_order - b->n_ready > b->n_ready + 64) {
		size_t k = 0;
		for (size_t q = 0; q < rc->n_pool_order; q++) {
			if (b->ready_at[rc->pool_order[q].ti] != SIZE_MAX)
				rc->pool_order[k++] = rc->pool_order[q];
			else
				rc->in_pool_order[rc->pool_order[q].ti] = false;
		}
		rc->n_pool_order = k;
		rc->pool_order_head = 0;
	}
	while (rc->pool_order_head < rc->n_pool_order &&
	       b->ready_at[rc->pool_order[rc->pool_order_head].ti] == SIZE_MAX)
		rc->pool_order_head++;
	return true;
}

/* Run k's next candidate in its pool order from g->at[k] (NULL: none);
 * `unreasoned`: only those that show no reason yet. */
static const struct dm_pool_ent *run_next(struct pool_gather *g, size_t k, bool unreasoned)
{
	struct run_ctx *rc = g->runs[k];

	if (rc->stale || (unreasoned && !rc->pool_order_unreasoned))
		return NULL;
	for (; g->at[k] < rc->n_pool_order; g->at[k]++) {
		const struct dm_pool_ent *e = &rc->pool_order[g->at[k]];
		const char *why = rc->rows[e->row].reason;
		if (rc->book.ready_at[e->ti] == SIZE_MAX || (unreasoned && why && *why))
			continue;
		return e;
	}
	return NULL;
}

/* The next candidate of the pass in dag_pool.h's order (priority, the
 * run's logical date, the TI's order), merged from the runs' orders;
 * false when none is left or out of memory (g->oom). */
static bool next_candidate(struct pool_gather *g, bool unreasoned)
{
	const struct dm_pool_ent *best = NULL;
	size_t bk = 0;

	for (size_t k = 0; k < g->n_runs; k++) {
		const struct dm_pool_ent *e = run_next(g, k, unreasoned);
		if (!e)
			continue;
		if (best) {
			const struct run_ctx *x = g->runs[k], *y = g->runs[bk];
			if (e->priority != best->priority) {
				if (e->priority < best->priority)
					continue;
			} else if (x->run.logical_date != y->run.logical_date) {
				if (x->run.logical_date > y->run.logical_date)
					continue;
			} else if (x->run.id != y->run.id) {
				if (x->run.id > y->run.id)
					continue;
			} else
				continue; /* one run: its own order */
		}
		best = e;
		bk = k;
	}
	if (!best)
		return false;
	if (ALLOC_GROW(g->cands, g->n + 1, g->cap) < 0 ||
	    ALLOC_GROW(g->cand, g->n + 1, g->cap2) < 0 ||
	    ALLOC_GROW(g->dec, g->n + 1, g->cap3) < 0) {
		g->oom = true;
		return false;
	}
	{
		struct run_ctx *rc = g->runs[bk];
		const struct dag_ti_row *r = &rc->rows[best->row];
		g->cands[g->n] = (struct pool_cand){.rc = rc, .ti = best->ti};
		g->cand[g->n] =
		    (struct dag_candidate){.dag = g->run_dag[bk],
		                           .priority = r->priority,
		                           .pool = r->pool,
		                           .pool_slots = r->pool_slots,
		                           .run_order = rc->run.logical_date,
		                           .ti_order = ((size_t)rc->run.id << 32) | best->row};
		task_limits(g, rc, best->ti, &g->cand[g->n]);
		if (g->oom)
			return false;
		g->n++;
		g->at[bk]++;
	}
	return true;
}

/* A queued or running TI: what it holds of its pool, its DAG's limit and
 * its task's places (across runs and in its run). */
static void count_use(void *arg, const struct dag_ti_use *u)
{
	struct pool_gather *g = arg;
	struct dag_pool *p = pool_find(g->dm, u->pool);
	struct dag_task_limit *t;

	if (p)
		p->used += u->pool_slots > 0 ? u->pool_slots : 1;
	for (size_t l = 0; l < g->nl; l++)
		if (!strcmp(g->limits[l].dag_id, u->dag_id)) {
			g->limits[l].active++;
			break;
		}
	/* a task with a limit has its place across runs already */
	if ((t = task_place(g, u->dag_id, NULL, u->task_id, false))) {
		t->active++;
		if ((t = task_place(g, u->dag_id, u->run_id, u->task_id, true)))
			t->active++;
	}
}

/* TI row r's waiting reason, when it changed, written by the turn's end
 * (with its scheduled state when that waits too: one write). */
static void set_reason(struct dag_manager *dm, struct pool_cand *c, const char *reason)
{
	struct dag_ti_row *r = &c->rc->rows[c->rc->ti_row[c->ti]];

	if (!strcmp(r->reason ? r->reason : "", reason))
		return;
	dm_set_str(&r->reason, reason);
	dm_ti_defer(dm, c->rc, r);
}

/* Whether no pool has a slot free (none is unlimited): then no TI can
 * start, and the pass only words the reasons of those that show none. */
static bool all_full(const struct dag_manager *dm)
{
	for (size_t i = 0; i < dm->pools.n; i++)
		if (dm->pools.list[i].slots < 0 || dm->pools.list[i].used < dm->pools.list[i].slots)
			return false;
	return dm->pools.n > 0;
}

/* How many candidates the first batch of a pass reads: the free slots
 * and the one that stops the decision, a few more for the TIs that wait
 * for something else (every batch after doubles it). */
static size_t first_batch(const struct dag_manager *dm)
{
	size_t n = 8;

	for (size_t i = 0; i < dm->pools.n; i++) {
		if (dm->pools.list[i].slots < 0)
			return 256; /* nothing stops the decision: it reads them all */
		if (dm->pools.list[i].used < dm->pools.list[i].slots)
			n += (size_t)(dm->pools.list[i].slots - dm->pools.list[i].used);
	}
	return n;
}

/* Decides for the candidates read in order, a batch at a time, and acts:
 * starts, reasons.  `prefix`: stop at the first that waits once every
 * pool is full (those behind it keep their reasons; those without one get
 * theirs after); `unreasoned`: read only the TIs that show no reason. */
static void decide_and_act(struct dag_manager *dm, struct pool_gather *g, bool prefix,
                           bool unreasoned, struct weir_error *err)
{
	size_t n_dec = 0, batch = first_batch(dm);
	bool stopped = false;
	int rc = 0;

	g->n = 0;
	for (size_t k = 0; k < g->n_runs; k++)
		g->at[k] = g->runs[k]->pool_order_head;
	while (!stopped) {
		size_t start = g->n, got = 0;
		while (got < batch && next_candidate(g, unreasoned))
			got++;
		if (g->oom) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			return;
		}
		if (got == 0)
			break;
		/* every field of each is written by the decision */
		if (prefix)
			rc = dag_pool_decide_batch(g->cand + start, got, g->limits, g->nl,
			                           dm->pools.list, dm->pools.n, g->dec + start,
			                           &got, &stopped, err);
		else
			rc = dag_pool_decide(g->cand + start, got, g->limits, g->nl, dm->pools.list,
			                     dm->pools.n, g->dec + start, err);
		if (rc < 0)
			return;
		for (size_t i = start; i < start + got; i++)
			g->dec[i].candidate += start;
		n_dec = start + got;
		if (batch < (SIZE_MAX >> 2))
			batch *= 2;
	}
	for (size_t i = 0; i < n_dec; i++) {
		struct pool_cand *c = &g->cands[g->dec[i].candidate];
		if (c->rc->stale)
			continue;
		if (g->dec[i].action == DAG_POOL_QUEUE)
			dm_start_ti(dm, c->rc, c->ti);
		else
			set_reason(dm, c, g->dec[i].reason);
	}
	/* the pools are full now: the rest that show no reason get theirs */
	if (stopped)
		decide_and_act(dm, g, false, true, err);
}

void dm_pool_pass(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct pool_gather g = {.dm = dm};
	bool full;

	strbuf_init(&g.key);
	if (!dm->pools.dirty)
		return;
	dm->pools.dirty = false;
	if (dag_store_runs_running(dm->ds, gather_run, &g, &err) < 0)
		goto out;
	if (g.oom) {
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (g.n_runs == 0)
		goto out;
	g.at = calloc(g.n_runs, sizeof *g.at);
	if (!g.at) {
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < g.n_runs; k++)
		if (!g.runs[k]->stale && !pool_order_sync(g.runs[k])) {
			weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
			goto out;
		}
	for (size_t i = 0; i < dm->pools.n; i++)
		dm->pools.list[i].used = 0;
	/* what queued and running TIs hold (few: the pools bound them) */
	if (dag_store_pool_use(dm->ds, count_use, &g, &err) < 0)
		goto out;
	if (g.oom) {
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	/* every pool full: no TI can start; only those that show no reason
	 * get theirs */
	full = all_full(dm);
	decide_and_act(dm, &g, true, full, &err);
	if (!err.msg[0])
		for (size_t k = 0; k < g.n_runs; k++)
			if (!g.runs[k]->stale)
				g.runs[k]->pool_order_unreasoned =
				    false; /* each that waits has one */
out:
	if (err.msg[0])
		log_error("DAG pools: %s", err.msg);
	free(g.runs);
	free(g.run_dag);
	free(g.limits);
	free(g.at);
	free(g.cands);
	free(g.cand);
	free(g.dec);
	hashmap_destroy_free(g.tasks, free);
	strbuf_release(&g.key);
}
