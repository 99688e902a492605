/* pools.c: the pool pass: which scheduled TIs of every running
 * run become jobs now, as the pools' slots and each DAG's
 * max_active_tasks allow (sched/dag_pool.h decides; the order is the
 * runs' logical dates, then priority).
 *
 * Owns: the pools' use, counted again at every pass from the queued and
 * running TIs of the store (the pools bound how many there are).
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

/* Appends the scheduled TIs of running runs to *cands (the runs come from
 * this turn's copies, so the run a job's end just read costs nothing more).
 * Runs are ordered as the pool decision wants them: logical date, then the
 * run's row id and the TI's row order.  -1 with err. */
static int pool_candidates(struct dag_manager *dm, struct pool_cand **cands, size_t *n,
                           struct dag_candidate **cand, struct dag_limit **limits, size_t *nl,
                           struct weir_error *err)
{
	struct dag_run_row *runs = NULL;
	size_t n_runs = 0, cap = 0;
	int ret = -1;

	*cands = NULL;
	*cand = NULL;
	*limits = NULL;
	*n = *nl = 0;
	if (dag_store_runs_active(dm->ds, &runs, &n_runs, err) < 0)
		return -1;
	*limits = calloc(n_runs + 1, sizeof **limits);
	if (!*limits)
		goto oom;
	for (size_t k = 0; k < n_runs; k++) {
		struct weir_error e2 = {0};
		struct run_ctx *rc;
		size_t l;

		if (runs[k].state != DAG_RUN_RUNNING)
			continue; /* a queued run has no scheduled TI yet */
		rc = dm_run_get(dm, runs[k].dag_id, runs[k].run_id, &e2);
		if (!rc)
			continue; /* its DAG is gone (recovery says so); it waits */
		for (l = 0; l < *nl; l++)
			if (!strcmp((*limits)[l].dag_id, rc->run.dag_id))
				break;
		if (l == *nl) {
			(*limits)[l].dag_id = rc->run.dag_id;
			(*limits)[l].max_active_tasks = rc->spec->max_active_tasks;
			(*nl)++;
		}
		/* the ready set: the run's scheduled TIs, without a look at the rest */
		for (size_t q = 0; q < rc->book.n_ready; q++) {
			size_t i = rc->book.ready[q];
			const struct dag_ti_row *r = &rc->rows[rc->ti_row[i]];
			struct dag_candidate *c;
			if (*n == cap) {
				size_t nc = cap ? 2 * cap : 64;
				struct pool_cand *v = realloc(*cands, nc * sizeof *v);
				struct dag_candidate *w;
				if (!v)
					goto oom;
				*cands = v;
				w = realloc(*cand, nc * sizeof *w);
				if (!w)
					goto oom;
				*cand = w;
				cap = nc;
			}
			(*cands)[*n].rc = rc;
			(*cands)[*n].ti = i;
			c = &(*cand)[*n];
			memset(c, 0, sizeof *c);
			c->dag = l;
			c->priority = r->priority;
			c->pool = r->pool;
			c->pool_slots = r->pool_slots;
			c->run_order = rc->run.logical_date;
			c->ti_order = ((size_t)rc->run.id << 32) | rc->ti_row[i];
			(*n)++;
		}
	}
	ret = 0;
	goto out;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
out:
	dag_run_rows_free(runs, n_runs);
	return ret;
}

void dm_pool_pass(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct dag_ti_row *act = NULL;
	size_t ns = 0, na = 0, nl = 0;
	struct dag_limit *limits = NULL;
	struct pool_cand *cands = NULL;
	struct dag_candidate *cand = NULL;
	struct dag_pool_decision *dec = NULL;

	if (!dm->pool_dirty)
		return;
	dm->pool_dirty = false;
	if (pool_candidates(dm, &cands, &ns, &cand, &limits, &nl, &err) < 0 || ns == 0)
		goto out;
	/* every field of each is written by the decision: no zeroing of a
	 * reason's room per candidate at each pass */
	dec = malloc(ns * sizeof *dec);
	if (!dec)
		goto out;
	for (size_t i = 0; i < dm->n_pools; i++)
		dm->pools[i].used = 0;
	/* what queued and running TIs hold (few: the pools bound them) */
	const enum dag_ti_state active_states[] = {DAG_TI_QUEUED, DAG_TI_RUNNING};
	for (size_t s = 0; s < 2; s++) {
		if (dag_store_tis_in_state(dm->ds, active_states[s], &act, &na, &err) < 0)
			goto out;
		for (size_t i = 0; i < na; i++) {
			struct dag_pool *p = pool_find(dm, act[i].pool);
			if (p)
				p->used += act[i].pool_slots > 0 ? act[i].pool_slots : 1;
			for (size_t l = 0; l < nl; l++)
				if (!strcmp(limits[l].dag_id, act[i].dag_id))
					limits[l].active++;
		}
		dag_ti_rows_free(act, na);
		act = NULL;
		na = 0;
	}
	if (dag_pool_decide(cand, ns, limits, nl, dm->pools, dm->n_pools, dec, &err) < 0)
		goto out;
	for (size_t i = 0; i < ns; i++) {
		struct pool_cand *c = &cands[dec[i].candidate];
		struct dag_ti_row *r;
		if (c->rc->stale)
			continue;
		r = &c->rc->rows[c->rc->ti_row[c->ti]];
		if (dec[i].action == DAG_POOL_QUEUE) {
			dm_start_ti(dm, c->rc, c->ti);
		} else if (strcmp(r->reason ? r->reason : "", dec[i].reason)) {
			dm_set_str(&r->reason, dec[i].reason);
			if (dag_store_ti_update(dm->ds, r, &err) < 0) {
				log_error("DAG %s: %s", r->dag_id, err.msg);
				c->rc->stale = true;
			}
		}
	}
out:
	if (err.msg[0])
		log_error("DAG pools: %s", err.msg);
	dag_ti_rows_free(act, na);
	free(limits);
	free(cands);
	free(cand);
	free(dec);
}
