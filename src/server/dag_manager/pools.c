/* pools.c: the pool pass: which scheduled TIs of every running
 * run become jobs now, as the pools' slots and each DAG's
 * max_active_tasks allow (sched/dag_pool.h decides; the order is the
 * runs' logical dates, then priority).
 *
 * Owns: the pools' use, counted again at every pass from a narrow read of
 * the queued and running TIs (the pools bound how many there are).  When
 * every pool is full the decision stops at the first TI that waits: the
 * TIs behind it keep the reason they show (those that show none get
 * theirs), so a pass over a wide fan-out costs its few starts, not its
 * thousand waiting TIs.
 */
#include "server/dag_manager/dm_internal.h"

#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
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
	for (size_t i = 0; i < dm->n_pools; i++)
		if (!strcmp(dm->pools[i].name, name))
			return &dm->pools[i];
	return NULL;
}

/* What the pass gathers: the running runs, the DAGs' limits, the
 * candidates. */
struct pool_gather {
	struct dag_manager *dm;
	struct run_ctx **runs;
	size_t *run_dag; /* per run: its DAG's index into limits */
	size_t n_runs, cap_runs;
	struct pool_cand *cands;
	struct dag_candidate *cand;
	size_t n, cap;
	struct dag_limit *limits;
	size_t nl, cap_l;
	bool oom;
};

/* Grows *v (of *cap elements of `size`) to hold n + 1. */
static bool room(void **v, size_t *cap, size_t n, size_t size)
{
	size_t nc;
	void *w;

	if (n < *cap)
		return true;
	nc = *cap ? 2 * *cap : 16;
	if (!(w = realloc(*v, nc * size)))
		return false;
	*v = w;
	*cap = nc;
	return true;
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
		if (!room((void **)&g->limits, &g->cap_l, g->nl, sizeof *g->limits)) {
			g->oom = true;
			return;
		}
		g->limits[l] = (struct dag_limit){.dag_id = rc->run.dag_id,
		                                  .max_active_tasks = rc->spec->max_active_tasks};
		g->nl++;
	}
	if (!room((void **)&g->runs, &g->cap_runs, g->n_runs, sizeof *g->runs) ||
	    !room((void **)&g->run_dag, &cap, g->n_runs, sizeof *g->run_dag)) {
		g->oom = true;
		return;
	}
	g->runs[g->n_runs] = rc;
	g->run_dag[g->n_runs++] = l;
}

/* Room for every scheduled TI of the runs at once: one allocation a pass,
 * not a doubling per sixteen candidates. */
static bool reserve_candidates(struct pool_gather *g)
{
	size_t total = 0;

	for (size_t k = 0; k < g->n_runs; k++)
		total += g->runs[k]->book.n_ready;
	if (total <= g->cap || total == 0)
		return true;
	free(g->cands);
	free(g->cand);
	g->cands = malloc(total * sizeof *g->cands);
	g->cand = malloc(total * sizeof *g->cand);
	g->cap = g->cands && g->cand ? total : 0;
	return g->cap > 0;
}

/* The scheduled TIs of the runs (their ready sets, without a look at the
 * rest) as candidates; `unreasoned`: only those that show no reason yet. */
static bool gather_candidates(struct pool_gather *g, bool unreasoned)
{
	size_t cap2;

	if (!reserve_candidates(g))
		return false;
	cap2 = g->cap;
	for (size_t k = 0; k < g->n_runs; k++) {
		struct run_ctx *rc = g->runs[k];
		if (rc->stale)
			continue;
		for (size_t q = 0; q < rc->book.n_ready; q++) {
			size_t i = rc->book.ready[q];
			const struct dag_ti_row *r = &rc->rows[rc->ti_row[i]];
			if (unreasoned && r->reason && *r->reason)
				continue;
			if (!room((void **)&g->cands, &g->cap, g->n, sizeof *g->cands) ||
			    !room((void **)&g->cand, &cap2, g->n, sizeof *g->cand))
				return false;
			g->cands[g->n] = (struct pool_cand){.rc = rc, .ti = i};
			g->cand[g->n] = (struct dag_candidate){
			    .dag = g->run_dag[k],
			    .priority = r->priority,
			    .pool = r->pool,
			    .pool_slots = r->pool_slots,
			    .run_order = rc->run.logical_date,
			    .ti_order = ((size_t)rc->run.id << 32) | rc->ti_row[i]};
			g->n++;
		}
	}
	return true;
}

/* A queued or running TI: what it holds of its pool and its DAG's limit. */
static void count_use(void *arg, const char *dag_id, const char *pool, int slots)
{
	struct pool_gather *g = arg;
	struct dag_pool *p = pool_find(g->dm, pool);

	if (p)
		p->used += slots > 0 ? slots : 1;
	for (size_t l = 0; l < g->nl; l++)
		if (!strcmp(g->limits[l].dag_id, dag_id)) {
			g->limits[l].active++;
			break;
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
	for (size_t i = 0; i < dm->n_pools; i++)
		if (dm->pools[i].slots < 0 || dm->pools[i].used < dm->pools[i].slots)
			return false;
	return dm->n_pools > 0;
}

/* Decides for the candidates and acts: starts, reasons.  `prefix`: stop at
 * the first that waits once every pool is full (those behind it keep their
 * reasons; those without one get theirs after). */
static void decide_and_act(struct dag_manager *dm, struct pool_gather *g, bool prefix,
                           struct weir_error *err)
{
	/* every field of each is written by the decision: no zeroing of a
	 * reason's room per candidate at each pass */
	struct dag_pool_decision *dec = malloc(g->n * sizeof *dec);
	size_t n_dec = 0;
	int rc;

	if (!dec) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return;
	}
	rc = prefix ? dag_pool_decide_prefix(g->cand, g->n, g->limits, g->nl, dm->pools,
	                                     dm->n_pools, dec, &n_dec, err)
	            : dag_pool_decide(g->cand, g->n, g->limits, g->nl, dm->pools, dm->n_pools,
	                              dec, err);
	if (rc == 0 && !prefix)
		n_dec = g->n;
	for (size_t i = 0; rc == 0 && i < n_dec; i++) {
		struct pool_cand *c = &g->cands[dec[i].candidate];
		if (c->rc->stale)
			continue;
		if (dec[i].action == DAG_POOL_QUEUE)
			dm_start_ti(dm, c->rc, c->ti);
		else
			set_reason(dm, c, dec[i].reason);
	}
	free(dec);
	if (rc == 0 && n_dec < g->n) {
		/* the pools are full now: the rest that show no reason get theirs */
		g->n = 0;
		if (!gather_candidates(g, true))
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		else if (g->n)
			decide_and_act(dm, g, false, err);
	}
}

void dm_pool_pass(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct pool_gather g = {.dm = dm};
	bool full;

	if (!dm->pool_dirty)
		return;
	dm->pool_dirty = false;
	if (dag_store_runs_running(dm->ds, gather_run, &g, &err) < 0)
		goto out;
	if (g.oom) {
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (g.n_runs == 0)
		goto out;
	for (size_t i = 0; i < dm->n_pools; i++)
		dm->pools[i].used = 0;
	/* what queued and running TIs hold (few: the pools bound them) */
	if (dag_store_pool_use(dm->ds, count_use, &g, &err) < 0)
		goto out;
	full = all_full(dm);
	if (!gather_candidates(&g, full)) {
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (g.n)
		decide_and_act(dm, &g, true, &err);
out:
	if (err.msg[0])
		log_error("DAG pools: %s", err.msg);
	free(g.runs);
	free(g.run_dag);
	free(g.limits);
	free(g.cands);
	free(g.cand);
}
