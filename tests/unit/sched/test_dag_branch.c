/* test_dag_branch.c: what a branch's choice, a short circuit and the past
 * decide (sched/dag_branch.h), and that dag_run_decide() skips what a
 * success carries, holds a held task and follows the join's rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "sched/dag_branch.h"
#include "sched/dag_run.h"

/* choose -> a -> a2; choose -> b; choose -> c; (a2, b, c) -> join. */
static const size_t up_a[] = {0}, up_a2[] = {1}, up_join[] = {2, 3, 4};
static struct dag_task_node nodes[] = {
    {.task_id = "choose"},
    {.task_id = "a", .upstream = up_a, .n_upstream = 1},
    {.task_id = "a2", .upstream = up_a2, .n_upstream = 1},
    {.task_id = "b", .upstream = up_a, .n_upstream = 1},
    {.task_id = "c", .upstream = up_a, .n_upstream = 1},
    {.task_id = "join", .upstream = up_join, .n_upstream = 3},
};
static const struct dag_graph graph = {nodes, 6};

static json_t *out_of(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	assert_non_null(j);
	return j;
}

static void assert_skips(const struct dag_skip *s, const size_t *want, size_t n)
{
	assert_int_equal(s->n, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(s->tasks[i], want[i]);
}

static void test_branch_skips_the_direct_downstream_not_chosen(void **state)
{
	struct dag_skip s;
	char why[256];
	json_t *o;
	(void)state;

	o = out_of("{\"branch\": \"a\"}");
	assert_int_equal(dag_branch_skips(&graph, 0, o, &s, why, sizeof why), 0);
	assert_skips(&s, (const size_t[]){3, 4}, 2); /* b, c; never a2 (not direct) */
	dag_skip_release(&s);
	json_decref(o);

	o = out_of("{\"branch\": [\"c\", \"b\"], \"other\": 1}");
	assert_int_equal(dag_branch_skips(&graph, 0, o, &s, why, sizeof why), 0);
	assert_skips(&s, (const size_t[]){1}, 1);
	dag_skip_release(&s);
	json_decref(o);

	/* none chosen: every direct downstream task */
	o = out_of("{\"branch\": null}");
	assert_int_equal(dag_branch_skips(&graph, 0, o, &s, why, sizeof why), 0);
	assert_skips(&s, (const size_t[]){1, 3, 4}, 3);
	dag_skip_release(&s);
	json_decref(o);
	o = out_of("{\"branch\": []}");
	assert_int_equal(dag_branch_skips(&graph, 0, o, &s, why, sizeof why), 0);
	assert_int_equal(s.n, 3);
	dag_skip_release(&s);
	json_decref(o);
}

static void test_branch_refuses_what_is_not_a_direct_downstream(void **state)
{
	struct dag_skip s;
	char why[256];
	json_t *o;
	(void)state;

	o = out_of("{\"branch\": [\"a\", \"a2\"]}");
	assert_int_equal(dag_branch_skips(&graph, 0, o, &s, why, sizeof why), -1);
	assert_string_equal(why, "branch: \"a2\" is not a direct downstream task of choose; "
	                         "expected one of a, b, c");
	assert_int_equal(s.n, 0);
	json_decref(o);

	o = out_of("{\"branch\": 3}");
	assert_int_equal(dag_branch_skips(&graph, 0, o, &s, why, sizeof why), -1);
	assert_non_null(strstr(why, "expected a task id, a list of them or null"));
	json_decref(o);

	o = out_of("{\"branch\": [\"a\", 1]}");
	assert_int_equal(dag_branch_skips(&graph, 0, o, &s, why, sizeof why), -1);
	assert_string_equal(why, "branch[1]: expected a task id");
	json_decref(o);

	/* no output, or no branch key: named */
	assert_int_equal(dag_branch_skips(&graph, 0, NULL, &s, why, sizeof why), -1);
	assert_non_null(strstr(why, "wrote no \"branch\""));
	/* a task with no downstream says so */
	o = out_of("{\"branch\": \"x\"}");
	assert_int_equal(dag_branch_skips(&graph, 5, o, &s, why, sizeof why), -1);
	assert_non_null(strstr(why, "(it has none)"));
	json_decref(o);
}

static void test_truth_and_short_circuit(void **state)
{
	static const char *const falsy[] = {"false", "null", "0", "0.0", "\"\"", "[]", "{}"};
	static const char *const truthy[] = {"true", "1", "-2", "0.5", "\"no\"", "[0]",
	                                     "{\"a\": 0}"};
	struct dag_skip s;
	(void)state;

	for (size_t i = 0; i < sizeof falsy / sizeof *falsy; i++) {
		json_t *v = json_loads(falsy[i], JSON_DECODE_ANY, NULL);
		assert_false(dag_result_truthy(v));
		json_decref(v);
	}
	for (size_t i = 0; i < sizeof truthy / sizeof *truthy; i++) {
		json_t *v = json_loads(truthy[i], JSON_DECODE_ANY, NULL);
		assert_true(dag_result_truthy(v));
		json_decref(v);
	}
	json_t *o = out_of("{\"result\": false}");
	assert_int_equal(dag_short_circuit_skips(&graph, 0, o, &s), 0);
	assert_skips(&s, (const size_t[]){1, 3, 4, 2, 5}, 5); /* everything below, once */
	dag_skip_release(&s);
	json_decref(o);
	o = out_of("{\"result\": false}");
	assert_int_equal(dag_short_circuit_skips(&graph, 1, o, &s), 0);
	assert_skips(&s, (const size_t[]){2, 5}, 2);
	dag_skip_release(&s);
	json_decref(o);
	/* true, or no result: nothing */
	o = out_of("{\"result\": [1], \"x\": false}");
	assert_int_equal(dag_short_circuit_skips(&graph, 0, o, &s), 0);
	assert_int_equal(s.n, 0);
	json_decref(o);
	assert_int_equal(dag_short_circuit_skips(&graph, 0, NULL, &s), 0);
	assert_int_equal(s.n, 0);
}

static void test_past_and_expansion(void **state)
{
	enum dag_ti_state down[] = {DAG_TI_SUCCESS, DAG_TI_SKIPPED};
	struct dag_past p = {.found = false};
	(void)state;

	assert_true(dag_past_allows(false, &p)); /* no previous run, or not in it */
	p.found = true;
	p.state = DAG_TI_SUCCESS;
	assert_true(dag_past_allows(false, &p));
	p.state = DAG_TI_SKIPPED;
	assert_true(dag_past_allows(true, &p));
	for (enum dag_ti_state s = DAG_TI_NONE; s < DAG_TI_STATE_COUNT; s++) {
		p.state = s;
		assert_int_equal(dag_past_allows(false, &p),
		                 s == DAG_TI_SUCCESS || s == DAG_TI_SKIPPED);
	}
	p.state = DAG_TI_SUCCESS;
	p.down = down;
	p.n_down = 2;
	assert_true(dag_past_allows(true, &p));
	down[1] = DAG_TI_FAILED;
	assert_false(dag_past_allows(true, &p));
	assert_true(dag_past_allows(false, &p)); /* without wait_for_downstream */
	down[1] = DAG_TI_RUNNING;
	assert_false(dag_past_allows(true, &p));

	enum dag_ti_state st[] = {DAG_TI_NONE, DAG_TI_NONE, DAG_TI_SUCCESS};
	assert_true(dag_expand_due(st, 2));
	assert_false(dag_expand_due(st, 3));
	assert_true(dag_expand_due(st, 0));
}

/* The skips in a run: a success carries them, the join follows its rule. */
static void test_run_skips_and_holds(void **state)
{
	struct weir_error err = {0};
	struct dag_ti tis[6] = {{0}};
	struct dag_run_decision d;
	enum dag_run_state run = DAG_RUN_RUNNING;
	size_t skip[] = {3, 4};
	struct dag_event ev = {.kind = DAG_EV_TI_ENDED, .ti = 0, .try_number = 1, .success = true,
	                       .skip = skip, .n_skip = 2};
	(void)state;

	nodes[5].trigger_rule = TRIGGER_NONE_FAILED_MIN_ONE_SUCCESS;
	tis[0].state = DAG_TI_RUNNING;
	tis[0].try_number = 1;
	assert_int_equal(dag_run_decide(&graph, run, tis, 6, &ev, 1000, &d, &err), 0);
	dag_run_apply(&d, tis, &run);
	dag_run_decision_release(&d);
	assert_int_equal(tis[1].state, DAG_TI_SCHEDULED);
	assert_int_equal(tis[3].state, DAG_TI_SKIPPED);
	assert_int_equal(tis[4].state, DAG_TI_SKIPPED);
	assert_int_equal(tis[5].state, DAG_TI_NONE); /* waits for a2 */

	/* a stale end carries no skips */
	struct dag_event stale = ev;
	stale.ti = 1;
	stale.try_number = 5;
	skip[0] = 2;
	tis[1].state = DAG_TI_RUNNING;
	tis[1].try_number = 1;
	assert_int_equal(dag_run_decide(&graph, run, tis, 6, &stale, 1000, &d, &err), 0);
	assert_int_equal(d.n_changes, 0);
	dag_run_decision_release(&d);

	/* a2 held (depends_on_past): a's success leaves it waiting */
	nodes[2].held = true;
	struct dag_event end_a = {.kind = DAG_EV_TI_ENDED, .ti = 1, .try_number = 1,
	                          .success = true};
	assert_int_equal(dag_run_decide(&graph, run, tis, 6, &end_a, 1000, &d, &err), 0);
	dag_run_apply(&d, tis, &run);
	dag_run_decision_release(&d);
	assert_int_equal(tis[2].state, DAG_TI_NONE);
	assert_int_equal(run, DAG_RUN_RUNNING);
	nodes[2].held = false;
	struct dag_event look = {.kind = DAG_EV_EVALUATE};
	assert_int_equal(dag_run_decide(&graph, run, tis, 6, &look, 1000, &d, &err), 0);
	dag_run_apply(&d, tis, &run);
	dag_run_decision_release(&d);
	assert_int_equal(tis[2].state, DAG_TI_SCHEDULED);

	/* a2 succeeds: the join runs on one success among skips */
	tis[2].state = DAG_TI_RUNNING;
	tis[2].try_number = 1;
	struct dag_event end_a2 = {.kind = DAG_EV_TI_ENDED, .ti = 2, .try_number = 1,
	                           .success = true};
	assert_int_equal(dag_run_decide(&graph, run, tis, 6, &end_a2, 1000, &d, &err), 0);
	dag_run_apply(&d, tis, &run);
	dag_run_decision_release(&d);
	assert_int_equal(tis[5].state, DAG_TI_SCHEDULED);

	/* a skip out of range is refused */
	size_t bad[] = {9};
	struct dag_event e2 = {.kind = DAG_EV_TI_ENDED, .ti = 0, .try_number = 1,
	                       .success = true, .skip = bad, .n_skip = 1};
	assert_int_equal(dag_run_decide(&graph, run, tis, 6, &e2, 1000, &d, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	nodes[5].trigger_rule = TRIGGER_ALL_SUCCESS;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_branch_skips_the_direct_downstream_not_chosen),
	    cmocka_unit_test(test_branch_refuses_what_is_not_a_direct_downstream),
	    cmocka_unit_test(test_truth_and_short_circuit),
	    cmocka_unit_test(test_past_and_expansion),
	    cmocka_unit_test(test_run_skips_and_holds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
