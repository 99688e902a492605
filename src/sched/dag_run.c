/* dag_run.c: a DAG run's next step from its TIs and an event (dag_run.h;
 * the rules and their reasons are in docs/internals/dags.md).
 *
 * Stateless like job_progress.c: every call looks at the whole run, so
 * recovery (EVALUATE) decides exactly as the live path would have.  The
 * event is applied to a working copy of the states (apply_event(): a try's
 * end and its retry in apply_ended(), due retries, clears, marks), the
 * trigger rules are then evaluated once in dependency order (evaluate(): a
 * cascade only flows downstream, so one pass settles it), the run's end is
 * decided (run_result()), and the differences become the changes
 * (fill_changes()).
 */
#include "sched/dag_run.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t dag_graph_task_tis(const struct dag_graph *g, size_t task)
{
	const struct dag_task_node *t = &g->tasks[task];
	if (!t->foreach)
		return 1;
	return t->n_instances > 0 ? (size_t)t->n_instances : 0;
}

size_t dag_graph_ti_count(const struct dag_graph *g)
{
	size_t n = 0;
	for (size_t i = 0; i < g->n_tasks; i++)
		n += dag_graph_task_tis(g, i);
	return n;
}

size_t dag_graph_ti_base(const struct dag_graph *g, size_t task)
{
	size_t n = 0;
	for (size_t i = 0; i < task && i < g->n_tasks; i++)
		n += dag_graph_task_tis(g, i);
	return n;
}

int64_t dag_retry_delay_ms(const struct dag_retry_policy *p, int try_number)
{
	int64_t d = p->delay_ms > 0 ? p->delay_ms : 0;
	if (p->exponential) {
		for (int i = 1; i < try_number && d > 0; i++) {
			if (d > INT64_MAX / 2) {
				d = INT64_MAX;
				break;
			}
			d *= 2;
		}
	}
	if (p->max_delay_ms > 0 && d > p->max_delay_ms)
		d = p->max_delay_ms;
	return d;
}

static const char *task_name(const struct dag_graph *g, size_t t)
{
	const char *id = g->tasks[t].task_id;
	return id && *id ? id : "?";
}

int dag_graph_order(const struct dag_graph *g, size_t *order, struct weir_error *err)
{
	size_t n = g->n_tasks;
	size_t *missing = calloc(n ? n : 1, sizeof(*missing)); /* unplaced upstreams */
	bool *placed = calloc(n ? n : 1, sizeof(*placed));
	int rc = -1;
	if (!missing || !placed) {
		weir_error_set(err, WEIR_E_INTERNAL, "dag: out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dag_task_node *t = &g->tasks[i];
		if (t->foreach && t->n_instances < 0) {
			weir_error_set(err, WEIR_E_INVALID,
			               "dag: task %s: foreach count %d; expected 0 or more",
			               task_name(g, i), t->n_instances);
			goto out;
		}
		if (t->n_upstream && !t->upstream) {
			weir_error_set(err, WEIR_E_INVALID, "dag: task %s: upstream list missing",
			               task_name(g, i));
			goto out;
		}
		for (size_t k = 0; k < t->n_upstream; k++) {
			if (t->upstream[k] >= n || t->upstream[k] == i) {
				weir_error_set(err, WEIR_E_INVALID,
				               "dag: task %s: upstream %zu is %s; expected another "
				               "task of the DAG",
				               task_name(g, i), t->upstream[k],
				               t->upstream[k] == i ? "itself" : "out of range");
				goto out;
			}
		}
		missing[i] = t->n_upstream;
	}
	/* Kahn's algorithm without a downstream index: rescan until nothing
	 * moves.  Quadratic only in the depth of the graph. */
	size_t len = 0;
	bool moved = true;
	while (len < n && moved) {
		moved = false;
		for (size_t i = 0; i < n; i++) {
			if (placed[i])
				continue;
			const struct dag_task_node *t = &g->tasks[i];
			size_t left = 0;
			for (size_t k = 0; k < t->n_upstream; k++)
				left += !placed[t->upstream[k]];
			if (left == 0) {
				placed[i] = true;
				order[len++] = i;
				moved = true;
			}
		}
	}
	if (len < n) {
		for (size_t i = 0; i < n; i++) {
			if (!placed[i]) {
				weir_error_set(
				    err, WEIR_E_INVALID,
				    "dag: task %s depends on itself through its upstreams "
				    "(a cycle); expected a DAG",
				    task_name(g, i));
				goto out;
			}
		}
	}
	rc = 0;
out:
	free(missing);
	free(placed);
	return rc;
}

int dag_graph_check(const struct dag_graph *g, struct weir_error *err)
{
	size_t *order = calloc(g->n_tasks ? g->n_tasks : 1, sizeof(*order));
	if (!order)
		return weir_error_set(err, WEIR_E_INTERNAL, "dag: out of memory");
	int rc = dag_graph_order(g, order, err);
	free(order);
	return rc;
}

void dag_run_decision_release(struct dag_run_decision *d)
{
	if (!d)
		return;
	free(d->changes);
	d->changes = NULL;
	d->n_changes = 0;
}

enum dag_start_fault dag_start_fault_of(enum weir_error_kind kind)
{
	switch (kind) {
	case WEIR_E_INTERNAL:
	case WEIR_E_UNAVAILABLE:
		return DAG_START_WAIT;
	case WEIR_E_NOT_FOUND:
		return DAG_START_RETRY;
	default:
		return DAG_START_FAIL;
	}
}

void dag_run_apply(const struct dag_run_decision *d, struct dag_ti *tis, enum dag_run_state *run)
{
	for (size_t i = 0; i < d->n_changes; i++) {
		const struct dag_ti_change *c = &d->changes[i];
		tis[c->ti].state = c->to;
		tis[c->ti].max_tries = c->max_tries;
		tis[c->ti].next_retry_at = c->to == DAG_TI_UP_FOR_RETRY ? c->retry_at : 0;
	}
	*run = d->run_to;
}

/* The working copy one call changes. */
struct work {
	const struct dag_graph *g;
	size_t *base; /* first TI of each task; base[n_tasks] = n_tis */
	size_t *order;
	enum dag_ti_state *state;
	int *max_tries;
	int64_t *retry_at;
	bool *stop;
	bool *cleared; /* reset to none in this decision (dag_ti_change.cleared) */
	size_t n_tis;
};

int dag_ti_max_tries(const struct dag_graph *g, size_t task, const struct dag_ti *ti)
{
	if (ti->max_tries > 0)
		return ti->max_tries;
	int r = g->tasks[task].retry.retries;
	return (r > 0 ? r : 0) + 1;
}

/* The task a TI belongs to. */
static size_t task_of(const struct work *w, size_t ti)
{
	size_t lo = 0, hi = w->g->n_tasks; /* base[] is non-decreasing */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (w->base[mid] <= ti)
			lo = mid;
		else
			hi = mid;
	}
	/* tasks with no TIs share a base with the next one: take the last */
	while (lo + 1 < w->g->n_tasks && w->base[lo + 1] <= ti)
		lo++;
	return lo;
}

/* The state task `t` shows its downstream. */
static enum dag_ti_state task_state(const struct work *w, size_t t)
{
	size_t b = w->base[t], e = w->base[t + 1];
	if (!w->g->tasks[t].foreach)
		return w->state[b];
	return dag_trigger_group_state(w->state + b, (int)(e - b));
}

static void stop_and_set(struct work *w, size_t ti, enum dag_ti_state to)
{
	if (dag_ti_state_is_active(w->state[ti]))
		w->stop[ti] = true;
	if (to == DAG_TI_NONE)
		w->cleared[ti] = true;
	w->state[ti] = to;
	w->retry_at[ti] = 0;
}

enum dag_ti_state dag_ti_after_end(const struct dag_task_node *task, const struct dag_ti *ti,
                                   enum dag_ti_state now_state, int max_tries,
                                   const struct dag_event *ev, int64_t now_ms, int64_t *retry_at)
{
	*retry_at = 0;
	/* a scheduled TI has no job yet: the server writes a TI queued in the
	 * same transaction that creates its job */
	if (now_state != DAG_TI_QUEUED && now_state != DAG_TI_RUNNING &&
	    now_state != DAG_TI_UP_FOR_RESCHEDULE)
		return now_state; /* stale: cleared, marked, or reported twice */
	if (ev->try_number != ti->try_number)
		return now_state; /* a report of an older try */
	if (ev->success)
		return DAG_TI_SUCCESS;
	if (ev->skipped)
		return DAG_TI_SKIPPED;
	if (!ev->no_retry && ti->try_number < max_tries) {
		int64_t d = dag_retry_delay_ms(&task->retry, ti->try_number);
		*retry_at = now_ms > INT64_MAX - d ? INT64_MAX : now_ms + d;
		return DAG_TI_UP_FOR_RETRY;
	}
	return DAG_TI_FAILED;
}

static void apply_ended(struct work *w, const struct dag_ti *tis, const struct dag_event *ev,
                        int64_t now_ms)
{
	size_t i = ev->ti;
	int64_t at;
	enum dag_ti_state to = dag_ti_after_end(&w->g->tasks[task_of(w, i)], &tis[i], w->state[i],
	                                        w->max_tries[i], ev, now_ms, &at);

	if (to == w->state[i])
		return;
	w->state[i] = to;
	w->retry_at[i] = at;
	if (to != DAG_TI_SUCCESS)
		return;
	for (size_t k = 0; k < ev->n_skip; k++) {
		size_t t = ev->skip[k];
		for (size_t j = w->base[t]; j < w->base[t + 1]; j++)
			if (w->state[j] == DAG_TI_NONE)
				w->state[j] = DAG_TI_SKIPPED;
	}
}

/* CLEAR: 1 when a TI changed. */
static int apply_clear(struct work *w, const struct dag_ti *tis, const struct dag_event *ev)
{
	size_t n = w->g->n_tasks;
	bool *chosen = calloc(n ? n : 1, sizeof(*chosen));
	if (!chosen)
		return -1;
	if (ev->n_tasks == 0) {
		for (size_t t = 0; t < n; t++)
			chosen[t] = true;
	}
	for (size_t k = 0; k < ev->n_tasks; k++)
		chosen[ev->tasks[k]] = true;
	if (ev->downstream) {
		/* in dependency order, a task is chosen when an upstream is */
		for (size_t k = 0; k < n; k++) {
			size_t t = w->order[k];
			const struct dag_task_node *node = &w->g->tasks[t];
			for (size_t u = 0; u < node->n_upstream && !chosen[t]; u++)
				chosen[t] = chosen[node->upstream[u]];
		}
	}
	int changed = 0;
	for (size_t t = 0; t < n; t++) {
		if (!chosen[t])
			continue;
		int retries = w->g->tasks[t].retry.retries;
		for (size_t i = w->base[t]; i < w->base[t + 1]; i++) {
			if (ev->only_failed && !dag_ti_state_is_failure(w->state[i]))
				continue;
			if (w->state[i] == DAG_TI_NONE || w->state[i] == DAG_TI_REMOVED)
				continue;
			stop_and_set(w, i, DAG_TI_NONE);
			/* Airflow's clear: the TI gets its retries again */
			w->max_tries[i] = tis[i].try_number + (retries > 0 ? retries : 0) + 1;
			changed = 1;
		}
	}
	free(chosen);
	return changed;
}

/* A mark of the run (`timed_out`: its dagrun_timeout, every unfinished TI
 * skipped, as Airflow's scheduler does). */
static void apply_mark_run(struct work *w, enum dag_run_state to, bool timed_out)
{
	for (size_t i = 0; i < w->n_tis; i++) {
		enum dag_ti_state s = w->state[i];
		if (dag_ti_state_is_final(s))
			continue;
		if (to == DAG_RUN_SUCCESS)
			stop_and_set(w, i, DAG_TI_SUCCESS);
		else
			stop_and_set(w, i,
			             dag_ti_state_is_active(s) && !timed_out ? DAG_TI_FAILED
			                                                     : DAG_TI_SKIPPED);
	}
}

int64_t dag_run_timeout_at(enum dag_run_state run, int64_t started_ms, int64_t timeout_s)
{
	if (run != DAG_RUN_RUNNING || started_ms <= 0 || timeout_s <= 0)
		return 0;
	if (timeout_s > (INT64_MAX - started_ms) / 1000)
		return 0; /* beyond any clock */
	return started_ms + timeout_s * 1000;
}

enum dag_trigger_verdict dag_task_verdict(const struct dag_graph *g, size_t task,
                                          enum dag_ti_state (*shown)(const void *ctx, size_t t),
                                          const void *ctx)
{
	const struct dag_task_node *node = &g->tasks[task];
	struct dag_upstream_counts c = {0};

	for (size_t u = 0; u < node->n_upstream; u++) {
		enum dag_ti_state s = shown(ctx, node->upstream[u]);
		dag_upstream_counts_add(&c, s);
		if (g->tasks[node->upstream[u]].setup)
			dag_upstream_counts_setup(&c, s);
	}
	return dag_trigger_evaluate(node->trigger_rule, &c);
}

enum dag_ti_state dag_verdict_state(enum dag_trigger_verdict v)
{
	switch (v) {
	case DAG_TRIGGER_READY:
		return DAG_TI_SCHEDULED;
	case DAG_TRIGGER_UPSTREAM_FAILED:
		return DAG_TI_UPSTREAM_FAILED;
	case DAG_TRIGGER_SKIPPED:
		return DAG_TI_SKIPPED;
	default:
		return DAG_TI_NONE;
	}
}

enum dag_ti_state dag_task_next(const struct dag_graph *g, size_t task,
                                enum dag_ti_state (*shown)(const void *ctx, size_t t),
                                const void *ctx)
{
	enum dag_ti_state to = dag_verdict_state(dag_task_verdict(g, task, shown, ctx));

	return to == DAG_TI_SCHEDULED && g->tasks[task].held ? DAG_TI_NONE : to;
}

static enum dag_ti_state work_shown(const void *ctx, size_t t)
{
	return task_state(ctx, t);
}

/* The trigger rules, in dependency order: one pass settles every cascade. */
static void evaluate(struct work *w)
{
	const struct dag_graph *g = w->g;
	for (size_t k = 0; k < g->n_tasks; k++) {
		size_t t = w->order[k];
		size_t b = w->base[t], e = w->base[t + 1];
		bool pending = false;
		for (size_t i = b; i < e && !pending; i++)
			pending = w->state[i] == DAG_TI_NONE;
		if (!pending)
			continue;
		enum dag_ti_state to = dag_task_next(g, t, work_shown, w);
		if (to == DAG_TI_NONE)
			continue;
		for (size_t i = b; i < e; i++) {
			if (w->state[i] == DAG_TI_NONE)
				w->state[i] = to;
		}
	}
}

/* The run's result once every TI is finished; `run` when not. */
static enum dag_run_state run_result(const struct work *w, enum dag_run_state run, char *reason,
                                     size_t size)
{
	const struct dag_graph *g = w->g;
	for (size_t i = 0; i < w->n_tis; i++) {
		if (!dag_ti_state_is_final(w->state[i]))
			return run;
	}
	/* the leaves that decide (Airflow's _tis_for_dagrun_state): a task
	 * whose downstream are all ignorable teardowns, not one itself; when
	 * no task is such a leaf, the plain leaves */
	bool *has_down = calloc(g->n_tasks ? g->n_tasks : 1, sizeof(*has_down));
	bool *decides = calloc(g->n_tasks ? g->n_tasks : 1, sizeof(*decides));
	bool any = false;
	if (!has_down || !decides) {
		free(has_down);
		free(decides);
		return run; /* decided again at the next event */
	}
	for (size_t t = 0; t < g->n_tasks; t++)
		decides[t] = !g->tasks[t].ignorable;
	for (size_t t = 0; t < g->n_tasks; t++) {
		for (size_t u = 0; u < g->tasks[t].n_upstream; u++) {
			has_down[g->tasks[t].upstream[u]] = true;
			if (!g->tasks[t].ignorable)
				decides[g->tasks[t].upstream[u]] = false;
		}
	}
	for (size_t t = 0; t < g->n_tasks; t++)
		any = any || decides[t];
	for (size_t t = 0; !any && t < g->n_tasks; t++)
		decides[t] = !has_down[t];
	enum dag_run_state result = DAG_RUN_SUCCESS;
	size_t leaf = SIZE_MAX;
	for (size_t k = 0; k < g->n_tasks && result == DAG_RUN_SUCCESS; k++) {
		size_t t = w->order[k];
		if (decides[t] && dag_ti_state_is_failure(task_state(w, t))) {
			result = DAG_RUN_FAILED;
			leaf = t;
		}
	}
	free(has_down);
	free(decides);
	if (result == DAG_RUN_FAILED) {
		/* name the failure the user has to look at: the first task that
		 * failed itself, in dependency order */
		size_t culprit = leaf;
		for (size_t k = 0; k < g->n_tasks; k++) {
			if (task_state(w, w->order[k]) == DAG_TI_FAILED) {
				culprit = w->order[k];
				break;
			}
		}
		if (culprit == leaf)
			snprintf(reason, size, "task %s %s", task_name(g, leaf),
			         dag_ti_state_name(task_state(w, leaf)));
		else
			snprintf(reason, size, "task %s failed (leaf %s %s)", task_name(g, culprit),
			         task_name(g, leaf), dag_ti_state_name(task_state(w, leaf)));
	}
	return result;
}

static bool ti_changed(const struct work *w, const struct dag_ti *tis, size_t i)
{
	return w->state[i] != tis[i].state || w->stop[i] ||
	       w->max_tries[i] != dag_ti_max_tries(w->g, task_of(w, i), &tis[i]) ||
	       (w->state[i] == DAG_TI_UP_FOR_RETRY && w->retry_at[i] != tis[i].next_retry_at);
}

/* An event's task list (`what`: "clear", "skip"): every index in range. */
static int check_tasks(const struct dag_graph *g, const size_t *tasks, size_t n, const char *what,
                       struct weir_error *err)
{
	if (n && !tasks)
		return weir_error_set(err, WEIR_E_INVALID, "dag: %s: no task list", what);
	for (size_t k = 0; k < n; k++) {
		if (tasks[k] >= g->n_tasks)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "dag: %s task %zu; the DAG has %zu", what, tasks[k],
			                      g->n_tasks);
	}
	return 0;
}

static int check_event(const struct dag_graph *g, size_t n_tis, const struct dag_event *ev,
                       struct weir_error *err)
{
	switch (ev->kind) {
	case DAG_EV_EVALUATE:
	case DAG_EV_START:
	case DAG_EV_TIMER:
	case DAG_EV_TIMED_OUT:
		return 0;
	case DAG_EV_TI_ENDED:
	case DAG_EV_MARK_TI:
		if (ev->ti >= n_tis)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "dag: task instance %zu; the run has %zu", ev->ti,
			                      n_tis);
		if (check_tasks(g, ev->skip, ev->n_skip, "skip", err) < 0)
			return -1;
		if (ev->kind == DAG_EV_MARK_TI && ev->mark_ti != DAG_TI_SUCCESS &&
		    ev->mark_ti != DAG_TI_FAILED)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "dag: mark a task instance %s; expected success or "
			                      "failed",
			                      dag_ti_state_name(ev->mark_ti));
		return 0;
	case DAG_EV_CLEAR:
		return check_tasks(g, ev->tasks, ev->n_tasks, "clear", err);
	case DAG_EV_MARK_RUN:
		if (ev->mark_run != DAG_RUN_SUCCESS && ev->mark_run != DAG_RUN_FAILED)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "dag: mark a run %s; expected success or failed",
			                      dag_run_state_name(ev->mark_run));
		return 0;
	}
	return weir_error_set(err, WEIR_E_INVALID, "dag: unknown event %d", (int)ev->kind);
}

/* The working copy of the run's TIs, with the graph's layout (base[],
 * order[]); -1 with err for a bad graph, a TI count that does not match it,
 * or a TI state out of range. */
static int work_init(struct work *w, const struct dag_graph *g, size_t n_tis,
                     struct weir_error *err)
{
	size_t n = g->n_tasks;

	memset(w, 0, sizeof(*w));
	w->g = g;
	w->n_tis = n_tis;
	w->base = calloc(n + 1, sizeof(*w->base));
	w->order = calloc(n ? n : 1, sizeof(*w->order));
	w->state = calloc(n_tis ? n_tis : 1, sizeof(*w->state));
	w->max_tries = calloc(n_tis ? n_tis : 1, sizeof(*w->max_tries));
	w->retry_at = calloc(n_tis ? n_tis : 1, sizeof(*w->retry_at));
	w->stop = calloc(n_tis ? n_tis : 1, sizeof(*w->stop));
	w->cleared = calloc(n_tis ? n_tis : 1, sizeof(*w->cleared));
	if (!w->base || !w->order || !w->state || !w->max_tries || !w->retry_at || !w->stop ||
	    !w->cleared)
		return weir_error_set(err, WEIR_E_INTERNAL, "dag: out of memory");
	if (dag_graph_order(g, w->order, err) < 0)
		return -1;
	for (size_t t = 0; t < n; t++)
		w->base[t + 1] = w->base[t] + dag_graph_task_tis(g, t);
	if (w->base[n] != n_tis)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "dag: the run has %zu task instances; its DAG has %zu", n_tis,
		                      w->base[n]);
	return 0;
}

/* The TIs' states into the working copy; -1 with err for a state out of
 * range. */
static int work_load(struct work *w, const struct dag_ti *tis, struct weir_error *err)
{
	const struct dag_graph *g = w->g;

	for (size_t t = 0; t < g->n_tasks; t++) {
		for (size_t i = w->base[t]; i < w->base[t + 1]; i++) {
			if ((unsigned)tis[i].state >= DAG_TI_STATE_COUNT)
				return weir_error_set(
				    err, WEIR_E_INVALID, "dag: task %s instance %zu: state %d",
				    task_name(g, t), i - w->base[t], (int)tis[i].state);
			w->state[i] = tis[i].state;
			w->max_tries[i] = dag_ti_max_tries(g, t, &tis[i]);
			w->retry_at[i] =
			    tis[i].state == DAG_TI_UP_FOR_RETRY ? tis[i].next_retry_at : 0;
		}
	}
	return 0;
}

static void work_release(struct work *w)
{
	free(w->base);
	free(w->order);
	free(w->state);
	free(w->max_tries);
	free(w->retry_at);
	free(w->stop);
	free(w->cleared);
}

/* Retries that are due (TIMER): up_for_retry TIs whose time has come are
 * scheduled again. */
static void apply_due_retries(struct work *w, int64_t now_ms)
{
	for (size_t i = 0; i < w->n_tis; i++) {
		if (w->state[i] == DAG_TI_UP_FOR_RETRY && w->retry_at[i] <= now_ms) {
			w->state[i] = DAG_TI_SCHEDULED;
			w->retry_at[i] = 0;
		}
	}
}

/* The event, applied to the working copy; the run's state it leads to
 * before the trigger rules (`run` when it does not move the run).  -1 when
 * out of memory. */
static int apply_event(struct work *w, enum dag_run_state run, const struct dag_ti *tis,
                       const struct dag_event *ev, int64_t now_ms, enum dag_run_state *to)
{
	*to = run;
	switch (ev->kind) {
	case DAG_EV_EVALUATE:
		break;
	case DAG_EV_START:
		if (run == DAG_RUN_QUEUED)
			*to = DAG_RUN_RUNNING;
		break;
	case DAG_EV_TI_ENDED:
		if (run == DAG_RUN_RUNNING)
			apply_ended(w, tis, ev, now_ms);
		break;
	case DAG_EV_TIMER:
		if (run == DAG_RUN_RUNNING)
			apply_due_retries(w, now_ms);
		break;
	case DAG_EV_CLEAR: {
		int r = apply_clear(w, tis, ev);
		if (r < 0)
			return -1;
		if (r > 0 && dag_run_state_is_final(run))
			*to = DAG_RUN_QUEUED;
		break;
	}
	case DAG_EV_MARK_TI:
		/* a removed task is history: not marked */
		if (w->state[ev->ti] != ev->mark_ti && w->state[ev->ti] != DAG_TI_REMOVED)
			stop_and_set(w, ev->ti, ev->mark_ti);
		break;
	case DAG_EV_MARK_RUN:
		apply_mark_run(w, ev->mark_run, false);
		*to = ev->mark_run;
		break;
	case DAG_EV_TIMED_OUT:
		if (run == DAG_RUN_RUNNING) {
			apply_mark_run(w, DAG_RUN_FAILED, true);
			*to = DAG_RUN_FAILED;
		}
		break;
	}
	return 0;
}

/* The differences between the working copy and `tis` into out->changes,
 * and the earliest retry of a running run.  -1 when out of memory. */
static int fill_changes(const struct work *w, const struct dag_ti *tis,
                        struct dag_run_decision *out)
{
	size_t count = 0;

	for (size_t i = 0; i < w->n_tis; i++)
		count += ti_changed(w, tis, i);
	if (count) {
		out->changes = calloc(count, sizeof(*out->changes));
		if (!out->changes)
			return -1;
	}
	for (size_t i = 0; i < w->n_tis; i++) {
		if (w->state[i] == DAG_TI_UP_FOR_RETRY && w->retry_at[i] > 0 &&
		    (out->next_wakeup == 0 || w->retry_at[i] < out->next_wakeup))
			out->next_wakeup = w->retry_at[i];
		if (!ti_changed(w, tis, i))
			continue;
		struct dag_ti_change *c = &out->changes[out->n_changes++];
		c->ti = i;
		c->from = tis[i].state;
		c->to = w->state[i];
		c->retry_at = w->state[i] == DAG_TI_UP_FOR_RETRY ? w->retry_at[i] : 0;
		c->max_tries = w->max_tries[i];
		c->stop = w->stop[i];
		c->cleared = w->cleared[i];
		if (c->to == DAG_TI_SCHEDULED && c->from != DAG_TI_SCHEDULED)
			out->n_scheduled++;
	}
	if (out->run_to != DAG_RUN_RUNNING)
		out->next_wakeup = 0;
	return 0;
}

/* The event, then (for a running run) the trigger rules and the run's end,
 * then the differences. */
int dag_run_decide(const struct dag_graph *g, enum dag_run_state run, const struct dag_ti *tis,
                   size_t n_tis, const struct dag_event *ev, int64_t now_ms,
                   struct dag_run_decision *out, struct weir_error *err)
{
	struct work w;
	enum dag_run_state to;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->run_from = out->run_to = run;
	if ((unsigned)run >= DAG_RUN_STATE_COUNT)
		return weir_error_set(err, WEIR_E_INVALID, "dag: run state %d", (int)run);
	if (work_init(&w, g, n_tis, err) < 0 || check_event(g, n_tis, ev, err) < 0 ||
	    work_load(&w, tis, err) < 0)
		goto out;
	if (apply_event(&w, run, tis, ev, now_ms, &to) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "dag: out of memory");
		goto out;
	}
	if (to == DAG_RUN_RUNNING) {
		evaluate(&w);
		to = run_result(&w, to, out->reason, sizeof(out->reason));
	} else if (ev->kind == DAG_EV_TIMED_OUT && run == DAG_RUN_RUNNING) {
		snprintf(out->reason, sizeof(out->reason), "%s", DAG_REASON_TIMED_OUT);
	}
	out->run_to = to;
	if (fill_changes(&w, tis, out) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "dag: out of memory");
		goto out;
	}
	rc = 0;
out:
	work_release(&w);
	return rc;
}
