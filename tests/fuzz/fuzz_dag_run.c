/* fuzz_dag_run.c: random DAGs, TI states and events -> dag_run_decide, with
 * its invariants checked: every change is a legal move from the state given,
 * each TI changes at most once, a finished run has only finished TIs, and the
 * decision is a fixed point (evaluating again changes nothing). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched/dag_run.h"
#include "sched/dag_states.h"
#include "sched/dag_trigger.h"

#define MAX_TASKS 12
#define MAX_UP 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct reader {
	const uint8_t *p;
	size_t n;
};

static unsigned take(struct reader *r, unsigned mod)
{
	if (r->n == 0 || mod == 0)
		return 0;
	r->n--;
	return *r->p++ % mod;
}

/* One legal move, or for a clear two: back to none, then what the trigger
 * rules made of it in the same call. */
static bool legal(enum dag_ti_state from, enum dag_ti_state to, bool clear)
{
	if (dag_ti_state_can_move(from, to))
		return true;
	return clear && dag_ti_state_can_move(from, DAG_TI_NONE) &&
	       dag_ti_state_can_move(DAG_TI_NONE, to);
}

static void check(const struct dag_run_decision *d, const struct dag_ti *tis, size_t n,
                  bool clear)
{
	size_t sched = 0;
	for (size_t k = 0; k < d->n_changes; k++) {
		const struct dag_ti_change *c = &d->changes[k];
		if (c->ti >= n || (k && c->ti <= d->changes[k - 1].ti))
			abort();
		if (c->from != tis[c->ti].state || !legal(c->from, c->to, clear))
			abort();
		if (c->stop && !dag_ti_state_is_active(c->from))
			abort();
		sched += c->to == DAG_TI_SCHEDULED && c->from != DAG_TI_SCHEDULED;
	}
	if (sched != d->n_scheduled)
		abort();
	if (!dag_run_state_can_move(d->run_from, d->run_to))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader r = {data, size};
	struct dag_task_node tasks[MAX_TASKS];
	size_t ups[MAX_TASKS][MAX_UP];
	size_t n_tasks = 1 + take(&r, MAX_TASKS);
	bool allow_cycles = take(&r, 8) == 0;
	memset(tasks, 0, sizeof(tasks));
	for (size_t t = 0; t < n_tasks; t++) {
		struct dag_task_node *node = &tasks[t];
		node->task_id = "t";
		node->trigger_rule = (enum trigger_rule)take(&r, DAG_TRIGGER_RULE_COUNT);
		node->retry.retries = (int)take(&r, 4);
		node->retry.delay_ms = take(&r, 3) * 1000;
		node->retry.exponential = take(&r, 2);
		node->retry.max_delay_ms = take(&r, 3) * 1500;
		node->foreach = take(&r, 4) == 0;
		node->n_instances = node->foreach ? (int)take(&r, 3) : 1;
		size_t nu = t ? take(&r, MAX_UP + 1) : 0;
		for (size_t k = 0; k < nu; k++) {
			/* upstreams before the task: a DAG, unless cycles are allowed */
			ups[t][k] = allow_cycles ? take(&r, (unsigned)n_tasks) : take(&r, (unsigned)t);
		}
		node->upstream = ups[t];
		node->n_upstream = nu;
	}
	struct dag_graph g = {tasks, n_tasks};
	size_t n = dag_graph_ti_count(&g);
	struct dag_ti *tis = calloc(n ? n : 1, sizeof(*tis));
	if (!tis)
		return 0;
	for (size_t i = 0; i < n; i++) {
		tis[i].state = (enum dag_ti_state)take(&r, DAG_TI_STATE_COUNT);
		tis[i].try_number = (int)take(&r, 4);
		tis[i].max_tries = (int)take(&r, 5);
		tis[i].next_retry_at = take(&r, 4) * 1000;
	}
	enum dag_run_state run = (enum dag_run_state)take(&r, DAG_RUN_STATE_COUNT);
	size_t clear_tasks[2] = {take(&r, (unsigned)n_tasks), take(&r, (unsigned)n_tasks)};
	struct dag_event ev = {
	    .kind = (enum dag_event_kind)take(&r, DAG_EV_MARK_RUN + 1),
	    .ti = n ? take(&r, (unsigned)n) : 0,
	    .success = take(&r, 2),
	    .no_retry = take(&r, 2),
	    .tasks = clear_tasks,
	    .n_tasks = take(&r, 3),
	    .downstream = take(&r, 2),
	    .only_failed = take(&r, 2),
	    .mark_ti = take(&r, 2) ? DAG_TI_SUCCESS : DAG_TI_FAILED,
	    .mark_run = take(&r, 2) ? DAG_RUN_SUCCESS : DAG_RUN_FAILED,
	};
	ev.try_number = n ? tis[ev.ti].try_number : 0;
	int64_t now = take(&r, 8) * 1000;

	struct weir_error err;
	struct dag_run_decision d;
	if (dag_run_decide(&g, run, tis, n, &ev, now, &d, &err) != 0) {
		bool cyclic = allow_cycles && dag_graph_check(&g, &err) != 0;
		if (!cyclic && !(ev.kind == DAG_EV_TI_ENDED && n == 0) &&
		    !(ev.kind == DAG_EV_MARK_TI && n == 0))
			abort(); /* a valid input must decide */
		free(tis);
		return 0;
	}
	check(&d, tis, n, ev.kind == DAG_EV_CLEAR);
	dag_run_apply(&d, tis, &run);
	if (dag_run_state_is_final(run) && ev.kind != DAG_EV_MARK_RUN) {
		for (size_t i = 0; i < n; i++) {
			if (!dag_ti_state_is_final(tis[i].state) && d.run_from == DAG_RUN_RUNNING)
				abort();
		}
	}
	dag_run_decision_release(&d);
	/* a decision settles the run: evaluating again changes nothing */
	struct dag_event again = {.kind = DAG_EV_EVALUATE};
	if (dag_run_decide(&g, run, tis, n, &again, now, &d, &err) != 0)
		abort();
	if (run == DAG_RUN_RUNNING && (d.n_changes != 0 || d.run_to != run))
		abort();
	dag_run_decision_release(&d);
	free(tis);
	return 0;
}
