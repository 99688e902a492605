/* test_dag_book.c: a run's books (sched/dag_book.h) decide as dag_run_decide()
 * does.  Random DAGs (every trigger rule, foreach tasks of 0 to 3
 * instances, retries) are played to their end through both, side by side:
 * the same changes, the same run state and reason at every step; the
 * counts by state and the ready set always match the states; and the
 * fast path is the one taken for the ends that do not finish the run.
 * The same again with a run's flow: successes that carry skips (a
 * branch's or a short circuit's, sched/dag_branch.h) and tasks held by
 * depends_on_past, released as the server does (unsettled, EVALUATE). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/dag_book.h"
#include "sched/dag_branch.h"
#include "sched/dag_run.h"

#define MAX_TASKS 24

static unsigned rnd_state;

static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 16) % n;
}

struct graph {
	struct dag_task_node nodes[MAX_TASKS];
	size_t ups[MAX_TASKS][4];
	struct dag_graph g;
};

static void graph_random(struct graph *gr, size_t n)
{
	memset(gr, 0, sizeof *gr);
	for (size_t t = 0; t < n; t++) {
		struct dag_task_node *nd = &gr->nodes[t];
		size_t nu = t ? rnd(t < 4 ? (unsigned)t + 1 : 4) : 0;
		nd->task_id = "t";
		for (size_t k = 0; k < nu; k++) {
			size_t u = rnd((unsigned)t);
			bool dup = false;
			for (size_t j = 0; j < nd->n_upstream; j++)
				dup = dup || gr->ups[t][j] == u;
			if (!dup)
				gr->ups[t][nd->n_upstream++] = u;
		}
		nd->upstream = gr->ups[t];
		nd->trigger_rule = (enum trigger_rule)rnd(DAG_TRIGGER_RULE_COUNT);
		nd->retry.retries = (int)rnd(3);
		nd->retry.delay_ms = 1000;
		nd->foreach = rnd(4) == 0;
		nd->n_instances = nd->foreach ? (int)rnd(4) : 1;
	}
	gr->g.tasks = gr->nodes;
	gr->g.n_tasks = n;
}

/* The counts and the ready set say what the states say. */
static void check_books(const struct dag_book *b)
{
	size_t count[DAG_TI_STATE_COUNT] = {0}, ready = 0;

	for (size_t i = 0; i < b->n_tis; i++) {
		count[b->tis[i].state]++;
		assert_int_equal(b->st[i], b->tis[i].state);
		if (b->tis[i].state == DAG_TI_SCHEDULED) {
			ready++;
			assert_true(b->ready_at[i] < b->n_ready);
			assert_int_equal(b->ready[b->ready_at[i]], i);
		} else {
			assert_true(b->ready_at[i] == SIZE_MAX);
		}
	}
	assert_int_equal(ready, b->n_ready);
	for (int s = 0; s < DAG_TI_STATE_COUNT; s++)
		assert_int_equal(count[s], b->count[s]);
}

static void same_decision(const struct dag_run_decision *a, const struct dag_run_decision *f)
{
	assert_int_equal(a->run_from, f->run_from);
	assert_int_equal(a->run_to, f->run_to);
	assert_string_equal(a->reason, f->reason);
	assert_int_equal(a->n_changes, f->n_changes);
	assert_int_equal(a->n_scheduled, f->n_scheduled);
	for (size_t i = 0; i < a->n_changes; i++) {
		assert_int_equal(a->changes[i].ti, f->changes[i].ti);
		assert_int_equal(a->changes[i].from, f->changes[i].from);
		assert_int_equal(a->changes[i].to, f->changes[i].to);
		assert_int_equal(a->changes[i].retry_at, f->changes[i].retry_at);
		assert_int_equal(a->changes[i].max_tries, f->changes[i].max_tries);
		assert_int_equal(a->changes[i].stop, f->changes[i].stop);
	}
}

/* A success's skips: some of the task's direct downstream tasks (a
 * branch), or all that lies downstream (a short circuit), or none. */
static void random_skips(const struct graph *gr, size_t task, struct dag_skip *skip)
{
	struct dag_skip down = {0};
	unsigned kind = rnd(4);

	memset(skip, 0, sizeof *skip);
	if (kind == 0)
		return;
	assert_int_equal(dag_graph_downstream(&gr->g, task, &down), 0);
	if (kind == 3) {
		for (size_t k = 0; k < down.n; k++)
			assert_int_equal(dag_graph_downstream(&gr->g, down.tasks[k], &down), 0);
		*skip = down;
		return;
	}
	for (size_t k = 0; k < down.n; k++)
		if (rnd(2))
			assert_int_equal(dag_skip_add(skip, down.tasks[k]), 0);
	dag_skip_release(&down);
}

/* One random run to its end: starts of scheduled TIs, ends of active ones
 * (success or not, sometimes without retry, sometimes stale), due retries;
 * with `flow`, skips on successes and held tasks released now and then. */
static size_t play(struct graph *gr, size_t *fast, bool flow)
{
	struct weir_error err = {0};
	struct dag_book b;
	struct dag_ti tis[MAX_TASKS * 3];
	size_t n = dag_graph_ti_count(&gr->g), steps = 0;
	enum dag_run_state run = DAG_RUN_QUEUED;
	int64_t now = 1000000;

	memset(tis, 0, sizeof tis);
	for (size_t t = 0; flow && t < gr->g.n_tasks; t++)
		gr->nodes[t].held = rnd(4) == 0;
	assert_int_equal(dag_book_init(&b, &gr->g, tis, n, &err), 0);
	for (;;) {
		struct dag_event ev = {.kind = DAG_EV_START};
		struct dag_run_decision full, book;
		struct dag_skip skip = {0};
		size_t active[MAX_TASKS * 3], na = 0, held = 0;

		check_books(&b);
		if (run != DAG_RUN_QUEUED) {
			if (dag_run_state_is_final(run) || steps > 400)
				break;
			/* start every scheduled TI, as the pool pass does */
			for (size_t i = 0; i < n; i++) {
				if (b.tis[i].state == DAG_TI_SCHEDULED && rnd(3)) {
					struct dag_ti v = b.tis[i];
					v.state = DAG_TI_QUEUED;
					v.try_number++;
					dag_book_set(&b, i, &v);
				}
			}
			for (size_t i = 0; i < n; i++)
				if (b.tis[i].state == DAG_TI_QUEUED || b.tis[i].state == DAG_TI_RUNNING)
					active[na++] = i;
			for (size_t t = 0; t < gr->g.n_tasks; t++)
				held += gr->nodes[t].held;
			if (held && (na == 0 || rnd(8) == 0)) {
				/* the previous run moved: a hold goes (all, when nothing
				 * else can happen), the books unsettled, a full look */
				for (size_t t = 0; t < gr->g.n_tasks; t++)
					if (gr->nodes[t].held && (na == 0 || rnd(2)))
						gr->nodes[t].held = false;
				b.settled = false;
				ev.kind = DAG_EV_EVALUATE;
			} else if (na == 0) {
				ev.kind = DAG_EV_TIMER;
				now += 5000;
			} else {
				ev.kind = DAG_EV_TI_ENDED;
				ev.ti = active[rnd((unsigned)na)];
				ev.try_number = b.tis[ev.ti].try_number - (rnd(10) == 0);
				ev.success = rnd(3) != 0;
				ev.no_retry = rnd(5) == 0;
				if (flow && ev.success) {
					random_skips(gr, b.task[ev.ti], &skip);
					ev.skip = skip.tasks;
					ev.n_skip = skip.n;
				}
				now += 10;
			}
		}
		assert_int_equal(dag_run_decide(&gr->g, run, b.tis, n, &ev, now, &full, &err), 0);
		assert_int_equal(dag_book_decide(&b, run, &ev, now, &book, &err), 0);
		same_decision(&full, &book);
		if (!b.decided_full) {
			(*fast)++;
			for (size_t i = 0; i < book.n_changes; i++)
				if (book.changes[i].to == DAG_TI_UP_FOR_RETRY)
					assert_int_equal(book.next_wakeup, book.changes[i].retry_at);
		} else {
			assert_int_equal(full.next_wakeup, book.next_wakeup);
		}
		dag_book_apply(&b, &book);
		run = book.run_to;
		dag_run_decision_release(&full);
		dag_run_decision_release(&book);
		dag_skip_release(&skip);
		steps++;
	}
	assert_true(dag_run_state_is_final(run));
	assert_int_equal(dag_book_unfinished(&b), 0);
	check_books(&b);
	dag_book_release(&b);
	return steps;
}

static void test_book_matches_full_decisions(void **state)
{
	size_t fast = 0, steps = 0;
	(void)state;

	for (unsigned seed = 1; seed <= 400; seed++) {
		struct graph gr;
		rnd_state = seed;
		graph_random(&gr, 1 + rnd(MAX_TASKS));
		steps += play(&gr, &fast, false);
	}
	/* most ends are decided by the books alone */
	assert_true(fast * 3 > steps);
}

static void test_book_matches_full_decisions_with_skips_and_holds(void **state)
{
	size_t fast = 0, steps = 0;
	(void)state;

	for (unsigned seed = 1; seed <= 400; seed++) {
		struct graph gr;
		rnd_state = seed * 7919u;
		graph_random(&gr, 1 + rnd(MAX_TASKS));
		steps += play(&gr, &fast, true);
	}
	assert_true(fast * 4 > steps);
}

/* A chain: each end touches its one successor, whatever the length. */
static void test_chain_end_touches_downstream_only(void **state)
{
	struct weir_error err = {0};
	enum { N = 2000 };
	struct dag_task_node *nodes = calloc(N, sizeof *nodes);
	size_t *ups = calloc(N, sizeof *ups);
	struct dag_ti *tis = calloc(N, sizeof *tis);
	struct dag_graph g = {nodes, N};
	struct dag_book b;
	struct dag_run_decision d;
	struct dag_event ev = {.kind = DAG_EV_START};
	(void)state;

	for (size_t t = 0; t < N; t++) {
		nodes[t].task_id = "t";
		ups[t] = t - 1;
		nodes[t].upstream = t ? &ups[t] : NULL;
		nodes[t].n_upstream = t ? 1 : 0;
	}
	assert_int_equal(dag_book_init(&b, &g, tis, N, &err), 0);
	assert_int_equal(dag_book_decide(&b, DAG_RUN_QUEUED, &ev, 0, &d, &err), 0);
	dag_book_apply(&b, &d);
	dag_run_decision_release(&d);
	assert_true(b.settled);
	for (size_t t = 0; t < N; t++) {
		struct dag_ti v = b.tis[t];
		assert_int_equal(b.n_ready, 1);
		assert_int_equal(b.ready[0], t);
		v.state = DAG_TI_QUEUED;
		v.try_number = 1;
		dag_book_set(&b, t, &v);
		ev = (struct dag_event){.kind = DAG_EV_TI_ENDED, .ti = t, .try_number = 1,
		                        .success = true};
		assert_int_equal(dag_book_decide(&b, DAG_RUN_RUNNING, &ev, 1, &d, &err), 0);
		if (t + 1 < N) {
			assert_false(b.decided_full);
			assert_int_equal(d.n_changes, 2);
			assert_int_equal(d.changes[1].ti, t + 1);
			assert_int_equal(d.changes[1].to, DAG_TI_SCHEDULED);
		} else {
			assert_true(b.decided_full);
			assert_int_equal(d.run_to, DAG_RUN_SUCCESS);
		}
		dag_book_apply(&b, &d);
		dag_run_decision_release(&d);
	}
	assert_int_equal(b.count[DAG_TI_SUCCESS], N);
	dag_book_release(&b);
	free(nodes);
	free(ups);
	free(tis);
}

/* A start that changes nothing downstream keeps the books settled; a
 * change a downstream could see does not. */
static void test_set_unsettles_only_visible_changes(void **state)
{
	struct weir_error err = {0};
	struct dag_task_node nodes[2] = {{.task_id = "a"}, {.task_id = "b"}};
	size_t up = 0;
	struct dag_ti tis[2] = {{0}};
	struct dag_graph g = {nodes, 2};
	struct dag_book b;
	struct dag_run_decision d;
	struct dag_event ev = {.kind = DAG_EV_START};
	struct dag_ti v;
	(void)state;

	nodes[1].upstream = &up;
	nodes[1].n_upstream = 1;
	assert_int_equal(dag_book_init(&b, &g, tis, 2, &err), 0);
	assert_false(b.settled);
	assert_int_equal(dag_book_decide(&b, DAG_RUN_QUEUED, &ev, 0, &d, &err), 0);
	dag_book_apply(&b, &d);
	dag_run_decision_release(&d);
	assert_true(b.settled);
	v = b.tis[0];
	v.state = DAG_TI_QUEUED;
	dag_book_set(&b, 0, &v);
	assert_true(b.settled);
	v.state = DAG_TI_SUCCESS;
	dag_book_set(&b, 0, &v);
	assert_false(b.settled);
	dag_book_release(&b);
}

/* The ready set keeps the order in which its TIs became scheduled when one
 * of them leaves it (the pool decision finds it sorted then). */
static void test_ready_set_keeps_its_order(void **state)
{
	struct weir_error err = {0};
	enum { N = 6 };
	struct dag_task_node nodes[N] = {{.task_id = "t"}};
	struct dag_ti tis[N] = {{0}};
	struct dag_graph g = {nodes, N};
	struct dag_book b;
	struct dag_run_decision d;
	struct dag_event ev = {.kind = DAG_EV_START};
	const size_t leave[] = {2, 0, 5};
	(void)state;

	assert_int_equal(dag_book_init(&b, &g, tis, N, &err), 0);
	assert_int_equal(dag_book_decide(&b, DAG_RUN_QUEUED, &ev, 0, &d, &err), 0);
	dag_book_apply(&b, &d);
	dag_run_decision_release(&d);
	assert_int_equal(b.n_ready, N);
	for (size_t k = 0; k < sizeof leave / sizeof leave[0]; k++) {
		struct dag_ti v = b.tis[leave[k]];
		v.state = DAG_TI_QUEUED;
		dag_book_set(&b, leave[k], &v);
		check_books(&b);
	}
	assert_int_equal(b.n_ready, 3);
	assert_int_equal(b.ready[0], 1);
	assert_int_equal(b.ready[1], 3);
	assert_int_equal(b.ready[2], 4);
	dag_book_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_book_matches_full_decisions),
	    cmocka_unit_test(test_book_matches_full_decisions_with_skips_and_holds),
	    cmocka_unit_test(test_chain_end_touches_downstream_only),
	    cmocka_unit_test(test_set_unsettles_only_visible_changes),
	    cmocka_unit_test(test_ready_set_keeps_its_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
