/* test_dag_pool.c: a task's max_active_tis_per_dag and
 * max_active_tis_per_dagrun in the pool decision (sched/dag_pool.h): the
 * instances already queued or running count, each mapped instance counts,
 * other tasks are not held, and a capped task does not stop the decision
 * for the TIs behind it.  (Pools and max_active_tasks: test_dag_run.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sched/dag_pool.h"

static void test_per_dag_counts_every_run(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_pool pools[] = {{DAG_DEFAULT_POOL, 128, 0}};
	struct dag_limit dags[] = {{"etl", 0, 0}};
	/* one instance of load already running in another run */
	struct dag_task_limit load = {"load", false, 2, 1};
	struct dag_candidate c[] = {
	    {.dag = 0, .run_order = 1, .ti_order = 0, .tis_per_dag = &load},
	    {.dag = 0, .run_order = 2, .ti_order = 0, .tis_per_dag = &load},
	    {.dag = 0, .run_order = 2, .ti_order = 1}, /* another task: not held */
	    {.dag = 0, .run_order = 3, .ti_order = 0, .tis_per_dag = &load},
	};
	struct dag_pool_decision d[4];
	assert_int_equal(dag_pool_decide(c, 4, dags, 1, pools, 1, d, &err), 0);
	assert_int_equal(d[0].action, DAG_POOL_QUEUE);
	assert_int_equal(d[1].action, DAG_POOL_WAIT);
	assert_string_equal(d[1].reason, "waiting: task load max_active_tis_per_dag reached (2/2)");
	assert_int_equal(d[2].action, DAG_POOL_QUEUE);
	assert_int_equal(d[3].action, DAG_POOL_WAIT);
	assert_string_equal(d[3].reason, d[1].reason);
	assert_int_equal(load.active, 2);
	assert_int_equal(pools[0].used, 2);
	assert_int_equal(dags[0].active, 2);
}

static void test_per_run_holds_a_run_only(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_pool pools[] = {{DAG_DEFAULT_POOL, -1, 0}};
	struct dag_limit dags[] = {{"etl", 0, 0}};
	/* the mapped task m: one place per run; run 1's instances 0..2, run
	 * 2's instance 0 */
	struct dag_task_limit r1 = {"m", true, 1, 0}, r2 = {"m", true, 1, 0};
	struct dag_candidate c[] = {
	    {.dag = 0, .run_order = 1, .ti_order = 0, .tis_per_run = &r1},
	    {.dag = 0, .run_order = 1, .ti_order = 1, .tis_per_run = &r1},
	    {.dag = 0, .run_order = 1, .ti_order = 2, .tis_per_run = &r1},
	    {.dag = 0, .run_order = 2, .ti_order = 0, .tis_per_run = &r2},
	};
	struct dag_pool_decision d[4];
	assert_int_equal(dag_pool_decide(c, 4, dags, 1, pools, 1, d, &err), 0);
	assert_int_equal(d[0].action, DAG_POOL_QUEUE);
	assert_int_equal(d[1].action, DAG_POOL_WAIT);
	assert_string_equal(d[1].reason, "waiting: task m max_active_tis_per_dagrun reached (1/1)");
	assert_int_equal(d[2].action, DAG_POOL_WAIT);
	assert_int_equal(d[3].action, DAG_POOL_QUEUE); /* the other run has its place */
	assert_int_equal(r1.active, 1);
	assert_int_equal(r2.active, 1);
}

static void test_both_limits_and_no_limit(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_pool pools[] = {{DAG_DEFAULT_POOL, 128, 0}};
	struct dag_limit dags[] = {{"etl", 0, 0}};
	struct dag_task_limit all = {"t", false, 3, 2}, run = {"t", true, 2, 0},
	                      none = {"u", false, 0, 50};
	struct dag_candidate c[] = {
	    {.dag = 0, .ti_order = 0, .tis_per_dag = &all, .tis_per_run = &run},
	    {.dag = 0, .ti_order = 1, .tis_per_dag = &all, .tis_per_run = &run},
	    {.dag = 0, .ti_order = 2, .tis_per_dag = &none}, /* max 0: no limit */
	};
	struct dag_pool_decision d[3];
	assert_int_equal(dag_pool_decide(c, 3, dags, 1, pools, 1, d, &err), 0);
	/* the run has room for 2, the DAG for 1 more: the DAG's says */
	assert_int_equal(d[0].action, DAG_POOL_QUEUE);
	assert_int_equal(d[1].action, DAG_POOL_WAIT);
	assert_string_equal(d[1].reason, "waiting: task t max_active_tis_per_dag reached (3/3)");
	assert_int_equal(d[2].action, DAG_POOL_QUEUE);
	assert_int_equal(run.active, 1);
}

/* A capped task waits without stopping the prefix decision: only a full
 * pool does. */
static void test_a_capped_task_does_not_stop_the_prefix(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_pool pools[] = {{DAG_DEFAULT_POOL, 1, 0}};
	struct dag_limit dags[] = {{"etl", 0, 0}};
	struct dag_task_limit t = {"t", false, 1, 1};
	struct dag_candidate c[] = {
	    {.dag = 0, .ti_order = 0, .tis_per_dag = &t},
	    {.dag = 0, .ti_order = 1},
	    {.dag = 0, .ti_order = 2},
	};
	struct dag_pool_decision d[3];
	size_t n = 0;
	assert_int_equal(dag_pool_decide_prefix(c, 3, dags, 1, pools, 1, d, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(d[0].action, DAG_POOL_WAIT);
	assert_int_equal(d[1].action, DAG_POOL_QUEUE);
	assert_int_equal(d[2].action, DAG_POOL_WAIT);
	assert_string_equal(d[2].reason, "waiting: pool default_pool full (1/1)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_per_dag_counts_every_run),
	    cmocka_unit_test(test_per_run_holds_a_run_only),
	    cmocka_unit_test(test_both_limits_and_no_limit),
	    cmocka_unit_test(test_a_capped_task_does_not_stop_the_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
