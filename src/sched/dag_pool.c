/* dag_pool.c: pools, max_active_tasks, a task's max_active_tis_per_dag(run)
 * and max_active_runs (dag_pool.h). */
#include "sched/dag_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cand_cmp(const void *a, const void *b)
{
	const struct dag_candidate *x = *(const struct dag_candidate *const *)a;
	const struct dag_candidate *y = *(const struct dag_candidate *const *)b;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->run_order != y->run_order)
		return x->run_order < y->run_order ? -1 : 1;
	if (x->ti_order != y->ti_order)
		return x->ti_order < y->ti_order ? -1 : 1;
	/* qsort is not stable: the input order breaks the last tie */
	return x < y ? -1 : x > y;
}

static struct dag_pool *find_pool(struct dag_pool *pools, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (pools[i].name && strcmp(pools[i].name, name) == 0)
			return &pools[i];
	}
	return NULL;
}

enum wait_kind { WAIT_NO_POOL = 1, WAIT_TOO_BIG, WAIT_MAX_ACTIVE, WAIT_TASK_CAP, WAIT_FULL };

/* What a waiting reason is worded from. */
struct reason_key {
	int kind;
	const void *who; /* the pool's name, the pool, the DAG's or the task's limit */
	int a, b;
};

static bool same_key(const struct reason_key *x, const struct reason_key *y)
{
	return x->kind == y->kind && x->who == y->who && x->a == y->a && x->b == y->b;
}

/* Whether no pool has a slot free (none is unlimited). */
static bool pools_full(const struct dag_pool *pools, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pools[i].slots < 0 || pools[i].used < pools[i].slots)
			return false;
	return true;
}

/* Whether the task limit `t` (NULL: none) is reached. */
static bool task_capped(const struct dag_task_limit *t)
{
	return t && t->max > 0 && t->active >= t->max;
}

static int decide(const struct dag_candidate *c, size_t n, struct dag_limit *dags, size_t n_dags,
                  struct dag_pool *pools, size_t n_pools, struct dag_pool_decision *out,
                  size_t *n_out, bool stop, bool *stopped, struct weir_error *err)
{
	*n_out = 0;
	if (stopped)
		*stopped = false;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i].dag >= n_dags)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "dag pool: candidate %zu names dag %zu; there are %zu", i, c[i].dag,
			    n_dags);
	}
	const struct dag_candidate **order = calloc(n, sizeof(*order));
	if (!order)
		return weir_error_set(err, WEIR_E_INTERNAL, "dag pool: out of memory");
	for (size_t i = 0; i < n; i++)
		order[i] = &c[i];
	/* the ready set most often comes in order already: a pass over it
	 * instead of a sort */
	size_t sorted = 1;
	while (sorted < n && cand_cmp(&order[sorted - 1], &order[sorted]) < 0)
		sorted++;
	if (sorted < n)
		qsort(order, n, sizeof(*order), cand_cmp);

	/* the reason of the last waiting TI and what it was made of: the TIs
	 * waiting behind a full pool share one, worded once per pass */
	struct reason_key last = {0}, key;
	const char *last_reason = NULL;
	for (size_t k = 0; k < n; k++) {
		const struct dag_candidate *e = order[k];
		struct dag_pool_decision *d = &out[k];
		d->candidate = (size_t)(e - c);
		d->action = DAG_POOL_WAIT;
		d->reason[0] = '\0';
		const char *pname = e->pool && *e->pool ? e->pool : DAG_DEFAULT_POOL;
		int need = e->pool_slots > 0 ? e->pool_slots : 1;
		struct dag_limit *lim = &dags[e->dag];
		struct dag_pool *p = find_pool(pools, n_pools, pname);
		if (!p)
			key = (struct reason_key){WAIT_NO_POOL, pname, 0, 0};
		else if (p->slots >= 0 && need > p->slots)
			key = (struct reason_key){WAIT_TOO_BIG, p, need, p->slots};
		else if (lim->max_active_tasks > 0 && lim->active >= lim->max_active_tasks)
			key = (struct reason_key){WAIT_MAX_ACTIVE, lim, lim->active,
			                          lim->max_active_tasks};
		else if (task_capped(e->tis_per_dag) || task_capped(e->tis_per_run)) {
			const struct dag_task_limit *t =
			    task_capped(e->tis_per_dag) ? e->tis_per_dag : e->tis_per_run;
			key = (struct reason_key){WAIT_TASK_CAP, t, t->active, t->max};
		} else if (p->slots >= 0 && p->used + need > p->slots)
			key = (struct reason_key){WAIT_FULL, p, p->used, p->slots};
		else {
			d->action = DAG_POOL_QUEUE;
			p->used += need;
			lim->active++;
			if (e->tis_per_dag)
				e->tis_per_dag->active++;
			if (e->tis_per_run)
				e->tis_per_run->active++;
			continue;
		}
		/* every pool full: no later candidate can start either */
		if (stop && key.kind == WAIT_FULL && pools_full(pools, n_pools)) {
			n = k + 1;
			if (stopped)
				*stopped = true;
		}
		if (last_reason && same_key(&key, &last)) {
			memcpy(d->reason, last_reason, strlen(last_reason) + 1);
			continue;
		}
		switch (key.kind) {
		case WAIT_NO_POOL:
			snprintf(d->reason, sizeof(d->reason), "waiting: no pool named %s", pname);
			break;
		case WAIT_TOO_BIG:
			snprintf(d->reason, sizeof(d->reason),
			         "waiting: needs %d slots; pool %s has %d", need, pname, p->slots);
			break;
		case WAIT_MAX_ACTIVE:
			snprintf(d->reason, sizeof(d->reason),
			         "waiting: dag %s max_active_tasks reached (%d/%d)",
			         lim->dag_id ? lim->dag_id : "?", lim->active,
			         lim->max_active_tasks);
			break;
		case WAIT_TASK_CAP: {
			const struct dag_task_limit *t = key.who;
			snprintf(d->reason, sizeof(d->reason),
			         "waiting: task %s max_active_tis_per_dag%s reached (%d/%d)",
			         t->task_id ? t->task_id : "?", t->per_run ? "run" : "", t->active,
			         t->max);
			break;
		}
		default:
			snprintf(d->reason, sizeof(d->reason), "waiting: pool %s full (%d/%d)",
			         pname, p->used, p->slots);
			break;
		}
		last = key;
		last_reason = d->reason;
	}
	*n_out = n;
	free(order);
	return 0;
}

int dag_pool_decide(const struct dag_candidate *c, size_t n, struct dag_limit *dags, size_t n_dags,
                    struct dag_pool *pools, size_t n_pools, struct dag_pool_decision *out,
                    struct weir_error *err)
{
	size_t done;

	return decide(c, n, dags, n_dags, pools, n_pools, out, &done, false, NULL, err);
}

int dag_pool_decide_prefix(const struct dag_candidate *c, size_t n, struct dag_limit *dags,
                           size_t n_dags, struct dag_pool *pools, size_t n_pools,
                           struct dag_pool_decision *out, size_t *n_out, struct weir_error *err)
{
	return decide(c, n, dags, n_dags, pools, n_pools, out, n_out, true, NULL, err);
}

int dag_pool_decide_batch(const struct dag_candidate *c, size_t n, struct dag_limit *dags,
                          size_t n_dags, struct dag_pool *pools, size_t n_pools,
                          struct dag_pool_decision *out, size_t *n_out, bool *stopped,
                          struct weir_error *err)
{
	return decide(c, n, dags, n_dags, pools, n_pools, out, n_out, true, stopped, err);
}

size_t dag_runs_startable(int max_active_runs, int running, size_t n_queued)
{
	if (max_active_runs <= 0)
		return n_queued;
	if (running >= max_active_runs)
		return 0;
	size_t room = (size_t)(max_active_runs - running);
	return room < n_queued ? room : n_queued;
}
