/* dag_book.c: a run's books across events (dag_book.h).
 *
 * The layout (first TI of each task, topological ranks, downstream lists)
 * is built once, at init.  A TI's end on settled books is applied to that
 * TI, then the trigger rules of the tasks downstream of it are evaluated in
 * topological order (a heap by rank), a task that becomes skipped or
 * upstream_failed carrying the cascade on to its own downstream: what the
 * full evaluate() of dag_run.c would find, since on settled books every
 * task outside that cascade still waits as it did.  The states touched are
 * put back before returning, so that the books change only at apply.
 */
#include "sched/dag_book.h"

#include "lib/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

int dag_book_init(struct dag_book *b, const struct dag_graph *g, const struct dag_ti *tis,
                  size_t n_tis, struct weir_error *err)
{
	size_t n = g->n_tasks, *order = NULL, edges = 0;

	memset(b, 0, sizeof *b);
	b->g = g;
	b->n_tis = n_tis;
	b->tis = xcalloc(n_tis, sizeof *b->tis);
	b->st = xcalloc(n_tis, sizeof *b->st);
	b->base = xcalloc(n + 1, sizeof *b->base);
	b->task = xcalloc(n_tis, sizeof *b->task);
	b->rank = xcalloc(n, sizeof *b->rank);
	b->down_at = xcalloc(n + 1, sizeof *b->down_at);
	b->ready = xcalloc(n_tis, sizeof *b->ready);
	b->ready_at = xcalloc(n_tis, sizeof *b->ready_at);
	b->fresh = xcalloc(n_tis, sizeof *b->fresh);
	b->fresh_over = true;
	b->heap = xcalloc(n, sizeof *b->heap);
	b->queued = xcalloc(n, sizeof *b->queued);
	order = xcalloc(n, sizeof *order);
	if (!b->tis || !b->st || !b->base || !b->task || !b->rank || !b->down_at || !b->ready ||
	    !b->ready_at || !b->fresh || !b->heap || !b->queued || !order)
		goto oom;
	if (dag_graph_order(g, order, err) < 0)
		goto fail;
	for (size_t k = 0; k < n; k++)
		b->rank[order[k]] = k;
	for (size_t t = 0; t < n; t++) {
		b->base[t + 1] = b->base[t] + dag_graph_task_tis(g, t);
		edges += g->tasks[t].n_upstream;
	}
	if (b->base[n] != n_tis) {
		weir_error_set(err, WEIR_E_INVALID,
		               "dag: the run has %zu task instances; its DAG has %zu", n_tis,
		               b->base[n]);
		goto fail;
	}
	/* downstream lists: count, place, fill (down_at[t + 1] is the cursor) */
	b->down = xcalloc(edges, sizeof *b->down);
	if (!b->down)
		goto oom;
	for (size_t t = 0; t < n; t++)
		for (size_t u = 0; u < g->tasks[t].n_upstream; u++)
			b->down_at[g->tasks[t].upstream[u] + 1]++;
	for (size_t t = 0; t < n; t++)
		b->down_at[t + 1] += b->down_at[t];
	{
		size_t *fill = xcalloc(n, sizeof *fill);
		if (!fill)
			goto oom;
		for (size_t t = 0; t < n; t++)
			for (size_t u = 0; u < g->tasks[t].n_upstream; u++) {
				size_t up = g->tasks[t].upstream[u];
				b->down[b->down_at[up] + fill[up]++] = t;
			}
		free(fill);
	}
	for (size_t t = 0; t < n; t++)
		for (size_t i = b->base[t]; i < b->base[t + 1]; i++)
			b->task[i] = t;
	for (size_t i = 0; i < n_tis; i++) {
		if ((unsigned)tis[i].state >= DAG_TI_STATE_COUNT) {
			weir_error_set(err, WEIR_E_INVALID, "dag: task instance %zu: state %d", i,
			               (int)tis[i].state);
			goto fail;
		}
		b->ready_at[i] = SIZE_MAX;
		b->tis[i] = tis[i];
		b->st[i] = tis[i].state;
		b->count[tis[i].state]++;
		if (tis[i].state == DAG_TI_SCHEDULED) {
			b->ready_at[i] = b->n_ready;
			b->ready[b->n_ready++] = i;
		}
	}
	free(order);
	return 0;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "dag: out of memory");
fail:
	free(order);
	dag_book_release(b);
	return -1;
}

void dag_book_release(struct dag_book *b)
{
	free(b->tis);
	free(b->st);
	free(b->base);
	free(b->task);
	free(b->rank);
	free(b->down);
	free(b->down_at);
	free(b->ready);
	free(b->ready_at);
	free(b->fresh);
	free(b->heap);
	free(b->queued);
	memset(b, 0, sizeof *b);
}

size_t dag_book_unfinished(const struct dag_book *b)
{
	size_t done = 0;

	for (int s = 0; s < DAG_TI_STATE_COUNT; s++)
		if (dag_ti_state_is_final((enum dag_ti_state)s))
			done += b->count[s];
	return b->n_tis - done;
}

/* The state alone, with its count and the ready set. */
static void set_state(struct dag_book *b, size_t ti, enum dag_ti_state to)
{
	enum dag_ti_state from = b->tis[ti].state;

	if (from == to)
		return;
	b->count[from]--;
	b->count[to]++;
	b->tis[ti].state = to;
	b->st[ti] = to;
	if (from == DAG_TI_SCHEDULED) {
		/* the rest keep their order (the pool decision then need not sort
		 * them again at each pass) */
		size_t at = b->ready_at[ti];
		b->n_ready--;
		memmove(&b->ready[at], &b->ready[at + 1], (b->n_ready - at) * sizeof *b->ready);
		for (size_t k = at; k < b->n_ready; k++)
			b->ready_at[b->ready[k]] = k;
		b->ready_at[ti] = SIZE_MAX;
	} else if (to == DAG_TI_SCHEDULED) {
		b->ready_at[ti] = b->n_ready;
		b->ready[b->n_ready++] = ti;
		if (b->n_fresh < b->n_tis)
			b->fresh[b->n_fresh++] = ti;
		else
			b->fresh_over = true;
	}
}

void dag_book_set(struct dag_book *b, size_t ti, const struct dag_ti *v)
{
	enum dag_ti_state from = b->tis[ti].state, to = v->state;

	if (from != to && (from == DAG_TI_NONE || to == DAG_TI_NONE ||
	                   dag_ti_state_is_final(from) || dag_ti_state_is_final(to)))
		b->settled = false;
	set_state(b, ti, to);
	b->tis[ti] = *v;
	b->st[ti] = to;
}

void dag_book_apply(struct dag_book *b, const struct dag_run_decision *d)
{
	for (size_t i = 0; i < d->n_changes; i++) {
		const struct dag_ti_change *c = &d->changes[i];
		set_state(b, c->ti, c->to);
		b->tis[c->ti].max_tries = c->max_tries;
		b->tis[c->ti].next_retry_at = c->to == DAG_TI_UP_FOR_RETRY ? c->retry_at : 0;
	}
	/* a full decision on a running run evaluated every waiting TI */
	b->settled = b->decided_full ? d->run_to == DAG_RUN_RUNNING : b->settled;
}

/* ---- the fast path ---- */

static void heap_push(struct dag_book *b, size_t t)
{
	size_t i;

	if (b->queued[t])
		return;
	b->queued[t] = true;
	for (i = b->n_heap++; i > 0 && b->rank[b->heap[(i - 1) / 2]] > b->rank[t]; i = (i - 1) / 2)
		b->heap[i] = b->heap[(i - 1) / 2];
	b->heap[i] = t;
}

static size_t heap_pop(struct dag_book *b)
{
	size_t top = b->heap[0], last = b->heap[--b->n_heap], i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= b->n_heap)
			break;
		if (c + 1 < b->n_heap && b->rank[b->heap[c + 1]] < b->rank[b->heap[c]])
			c++;
		if (b->rank[b->heap[c]] >= b->rank[last])
			break;
		b->heap[i] = b->heap[c];
		i = c;
	}
	if (b->n_heap > 0)
		b->heap[i] = last;
	return top;
}

/* The state task `t` shows its downstream (ctx: the book). */
static enum dag_ti_state book_shown(const void *ctx, size_t t)
{
	const struct dag_book *b = ctx;
	size_t first = b->base[t];

	if (!b->g->tasks[t].foreach)
		return b->st[first];
	return dag_trigger_group_state(b->st + first, (int)(b->base[t + 1] - first));
}

struct fast {
	struct dag_ti_change *ch;
	size_t n, cap;
};

/* Records TI `ti` moving to `to` and sets it in the books (put back later). */
static int fast_move(struct dag_book *b, struct fast *f, size_t ti, enum dag_ti_state to,
                     int64_t retry_at)
{
	struct dag_ti_change *c;

	if (ALLOC_GROW(f->ch, f->n + 1, f->cap) < 0)
		return -1;
	c = &f->ch[f->n++];
	memset(c, 0, sizeof *c);
	c->ti = ti;
	c->from = b->tis[ti].state;
	c->to = to;
	c->retry_at = retry_at;
	c->max_tries = dag_ti_max_tries(b->g, b->task[ti], &b->tis[ti]);
	b->st[ti] = to;
	return 0;
}

static int by_ti(const void *a, const void *c)
{
	size_t x = ((const struct dag_ti_change *)a)->ti, y = ((const struct dag_ti_change *)c)->ti;
	return x < y ? -1 : x > y;
}

/* 1: decided into `out`; 0: the full path must decide (the run ends);
 * -1: out of memory. */
static int fast_ended(struct dag_book *b, const struct dag_event *ev, int64_t now_ms,
                      struct dag_run_decision *out)
{
	const struct dag_graph *g = b->g;
	size_t i = ev->ti, t = b->task[i], finished = 0;
	struct fast f = {0};
	int64_t at;
	enum dag_ti_state to;
	int rc = 1;

	to = dag_ti_after_end(&g->tasks[t], &b->tis[i], b->tis[i].state,
	                      dag_ti_max_tries(g, t, &b->tis[i]), ev, now_ms, &at);
	if (to == b->tis[i].state)
		return dag_book_unfinished(b) > 0 ? 1 : 0; /* stale */
	if (fast_move(b, &f, i, to, at) < 0)
		goto oom;
	if (dag_ti_state_is_final(to)) {
		for (size_t k = b->down_at[t]; k < b->down_at[t + 1]; k++)
			heap_push(b, b->down[k]);
	}
	/* a branch's or a short circuit's skips, before the trigger rules */
	for (size_t s = 0; to == DAG_TI_SUCCESS && s < ev->n_skip; s++) {
		size_t d = ev->skip[s];
		bool moved = false;
		for (size_t k = b->base[d]; k < b->base[d + 1]; k++) {
			if (b->st[k] != DAG_TI_NONE)
				continue;
			if (fast_move(b, &f, k, DAG_TI_SKIPPED, 0) < 0)
				goto oom;
			moved = true;
		}
		for (size_t k = b->down_at[d]; moved && k < b->down_at[d + 1]; k++)
			heap_push(b, b->down[k]);
	}
	while (b->n_heap > 0) {
		size_t d = heap_pop(b), first = b->base[d], end = b->base[d + 1];
		bool pending = false;
		enum dag_ti_state v;

		b->queued[d] = false;
		for (size_t k = first; k < end && !pending; k++)
			pending = b->st[k] == DAG_TI_NONE;
		if (!pending)
			continue;
		v = dag_task_next(g, d, book_shown, b);
		if (v == DAG_TI_NONE)
			continue;
		for (size_t k = first; k < end; k++)
			if (b->st[k] == DAG_TI_NONE && fast_move(b, &f, k, v, 0) < 0)
				goto oom;
		if (dag_ti_state_is_final(v))
			for (size_t k = b->down_at[d]; k < b->down_at[d + 1]; k++)
				heap_push(b, b->down[k]);
	}
	/* a decision that finishes the run is the full path's (its result,
	 * its reason) */
	for (size_t k = 0; k < f.n; k++)
		finished +=
		    dag_ti_state_is_final(f.ch[k].to) && !dag_ti_state_is_final(f.ch[k].from);
	if (finished >= dag_book_unfinished(b))
		rc = 0;
	goto out;
oom:
	rc = -1;
	while (b->n_heap > 0)
		b->queued[heap_pop(b)] = false;
out:
	/* the books as they were: the decision is applied by dag_book_apply() */
	for (size_t k = f.n; k-- > 0;)
		b->st[f.ch[k].ti] = f.ch[k].from;
	if (rc == 1) {
		qsort(f.ch, f.n, sizeof *f.ch, by_ti);
		out->changes = f.ch;
		out->n_changes = f.n;
		for (size_t k = 0; k < f.n; k++) {
			if (f.ch[k].to == DAG_TI_SCHEDULED)
				out->n_scheduled++;
			if (f.ch[k].to == DAG_TI_UP_FOR_RETRY)
				out->next_wakeup = f.ch[k].retry_at;
		}
	} else {
		free(f.ch);
	}
	return rc;
}

int dag_book_decide(struct dag_book *b, enum dag_run_state run, const struct dag_event *ev,
                    int64_t now_ms, struct dag_run_decision *out, struct weir_error *err)
{
	memset(out, 0, sizeof *out);
	out->run_from = out->run_to = run;
	b->decided_full = false;
	bool skips_ok = !ev->n_skip || ev->skip;

	for (size_t k = 0; skips_ok && k < ev->n_skip; k++)
		skips_ok = ev->skip[k] < b->g->n_tasks;
	if (ev->kind == DAG_EV_TI_ENDED && b->settled && run == DAG_RUN_RUNNING &&
	    ev->ti < b->n_tis && skips_ok) {
		int r = fast_ended(b, ev, now_ms, out);
		if (r < 0)
			return weir_error_set(err, WEIR_E_INTERNAL, "dag: out of memory");
		if (r > 0)
			return 0;
	}
	b->decided_full = true;
	return dag_run_decide(b->g, run, b->tis, b->n_tis, ev, now_ms, out, err);
}
