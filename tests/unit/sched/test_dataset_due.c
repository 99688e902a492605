/* test_dataset_due.c: which DAGs scheduled on datasets are due; how a
 * waiting trigger_dag task ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sched/dataset_due.h"

static const char *const one[] = {"s3://b/a"};
static const char *const two[] = {"s3://b/a", "s3://b/c"};

static void test_a_dag_on_one_uri_is_due_once_it_is_queued(void **state)
{
	struct dataset_dag d = {"consumer", one, 1, false, NULL, NULL, 0};
	struct dataset_queued q[] = {{"consumer", "s3://b/a"}};
	size_t due[1];
	(void)state;
	assert_int_equal(dataset_due(&d, 1, q, 0, due), 0);
	assert_int_equal(dataset_due(&d, 1, q, 1, due), 1);
	assert_int_equal(due[0], 0);
}

static void test_a_dag_on_two_uris_waits_for_both(void **state)
{
	struct dataset_dag d = {"both", two, 2, false, NULL, NULL, 0};
	struct dataset_queued q[] = {
	    {"both", "s3://b/a"}, {"other", "s3://b/c"}, {"both", "s3://b/c"}};
	size_t due[1];
	(void)state;
	/* the other DAG's queue row is not this one's */
	assert_int_equal(dataset_due(&d, 1, q, 2, due), 0);
	assert_int_equal(dataset_due_count(&d, q, 2), 1);
	assert_int_equal(dataset_due(&d, 1, q, 3, due), 1);
	assert_int_equal(dataset_due_count(&d, q, 3), 2);
}

static void test_paused_and_empty_dags_are_never_due(void **state)
{
	struct dataset_dag d[] = {{"paused", one, 1, true, NULL, NULL, 0},
	                          {"none", NULL, 0, false, NULL, NULL, 0},
	                          {"live", one, 1, false, NULL, NULL, 0}};
	struct dataset_queued q[] = {{"paused", "s3://b/a"}, {"live", "s3://b/a"}};
	size_t due[3];
	(void)state;
	assert_int_equal(dataset_due(d, 3, q, 2, due), 1);
	assert_int_equal(due[0], 2);
}

static void test_any_is_due_on_one_of_its_uris(void **state)
{
	json_t *any = json_pack("{s:[s,s]}", "any", "s3://b/a", "s3://b/c");
	struct dataset_dag d = {"either", two, 2, false, any, NULL, 0};
	struct dataset_queued none[] = {{"other", "s3://b/a"}};
	struct dataset_queued a[] = {{"either", "s3://b/a"}};
	struct dataset_queued c[] = {{"either", "s3://b/c"}};
	size_t due[1];
	(void)state;
	assert_int_equal(dataset_due(&d, 1, none, 1, due), 0);
	assert_int_equal(dataset_due(&d, 1, a, 1, due), 1);
	assert_int_equal(dataset_due(&d, 1, c, 1, due), 1);
	json_decref(any);
}

static void test_nested_conditions_follow_airflow(void **state)
{
	/* (a | b) & c */
	json_t *cond = json_pack("{s:[{s:[s,s]},s]}", "all", "any", "a", "b", "c");
	struct dataset_queued q[] = {{"n", "a"}, {"n", "c"}, {"n", "b"}};
	(void)state;
	assert_false(dataset_cond_true(cond, "n", q, 1));     /* a */
	assert_true(dataset_cond_true(cond, "n", q, 2));      /* a, c */
	assert_false(dataset_cond_true(cond, "n", q + 1, 0)); /* nothing */
	assert_true(dataset_cond_true(cond, "n", q + 1, 2));  /* c, b */
	assert_false(dataset_cond_true(cond, "other", q, 3)); /* not its queue */
	json_decref(cond);
	/* a | (b & c) */
	cond = json_pack("{s:[s,{s:[s,s]}]}", "any", "a", "all", "b", "c");
	assert_false(dataset_cond_true(cond, "n", q + 2, 1)); /* b */
	assert_true(dataset_cond_true(cond, "n", q + 1, 2));  /* c, b */
	assert_true(dataset_cond_true(cond, "n", q, 1));      /* a */
	json_decref(cond);
	/* empty lists as Airflow's DatasetAll() and DatasetAny(); junk is false */
	cond = json_pack("{s:[]}", "all");
	assert_true(dataset_cond_true(cond, "n", q, 0));
	json_decref(cond);
	cond = json_pack("{s:[]}", "any");
	assert_false(dataset_cond_true(cond, "n", q, 3));
	json_decref(cond);
	cond = json_pack("{s:i}", "any", 3);
	assert_false(dataset_cond_true(cond, "n", q, 3));
	json_decref(cond);
	assert_false(dataset_cond_true(NULL, "n", q, 3));
}

/* A DAG on a DatasetAlias (Airflow 2.10): due when a dataset linked to the
 * alias is queued for it; never while the alias has no link; an event of a
 * linked dataset queues it, an event of another does not. */
static void test_a_dag_on_an_alias_runs_on_its_linked_datasets(void **state)
{
	json_t *cond = json_pack("{s:[{s:s}]}", "all", "alias", "out");
	struct dataset_alias_link links[] = {{"out", "s3://b/a"}, {"other", "s3://b/c"}};
	struct dataset_dag d = {"n", NULL, 0, false, cond, NULL, 0};
	struct dataset_queued qa[] = {{"n", "s3://b/a"}}, qc[] = {{"n", "s3://b/c"}};
	size_t due[1];
	(void)state;
	/* no link yet: the alias resolves to nothing, an event of a URI queues nothing */
	assert_false(dataset_event_queues(&d, "s3://b/a"));
	assert_int_equal(dataset_due(&d, 1, qa, 1, due), 0);
	d.links = links;
	d.n_links = 2;
	assert_true(dataset_event_queues(&d, "s3://b/a"));
	assert_false(dataset_event_queues(&d, "s3://b/c")); /* another alias's */
	assert_int_equal(dataset_due(&d, 1, qa, 1, due), 1);
	assert_int_equal(dataset_due(&d, 1, qc, 1, due), 0);
	d.paused = true;
	assert_int_equal(dataset_due(&d, 1, qa, 1, due), 0);
	json_decref(cond);

	/* in an expression: alias("out") & c, with c a URI of its own */
	static const char *const c[] = {"s3://b/c"};
	cond = json_pack("{s:[{s:s},s]}", "all", "alias", "out", "s3://b/c");
	struct dataset_dag e = {"n", c, 1, false, cond, links, 1};
	struct dataset_queued both[] = {{"n", "s3://b/a"}, {"n", "s3://b/c"}};
	assert_true(dataset_event_queues(&e, "s3://b/c"));
	assert_true(dataset_event_queues(&e, "s3://b/a"));
	assert_int_equal(dataset_due(&e, 1, both, 1, due), 0);
	assert_int_equal(dataset_due(&e, 1, both + 1, 1, due), 0);
	assert_int_equal(dataset_due(&e, 1, both, 2, due), 1);
	assert_true(dataset_cond_true_linked(cond, "n", both, 2, links, 1));
	assert_false(dataset_cond_true(cond, "n", both, 2)); /* without the links */
	json_decref(cond);
}

static void test_trigger_outcome_follows_the_state_lists(void **state)
{
	unsigned ok = 1u << DAG_RUN_SUCCESS, bad = 1u << DAG_RUN_FAILED;
	(void)state;
	assert_true(dataset_trigger_outcome(ok, bad, DAG_RUN_SUCCESS));
	assert_false(dataset_trigger_outcome(ok, bad, DAG_RUN_FAILED));
	/* failed allowed: the run's failure is the task's success */
	assert_true(dataset_trigger_outcome(bad, 0, DAG_RUN_FAILED));
	/* in neither list: a failure */
	assert_false(dataset_trigger_outcome(ok, 0, DAG_RUN_FAILED));
	/* in both: failed_states wins */
	assert_false(dataset_trigger_outcome(ok | bad, bad, DAG_RUN_FAILED));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_dag_on_one_uri_is_due_once_it_is_queued),
	    cmocka_unit_test(test_a_dag_on_two_uris_waits_for_both),
	    cmocka_unit_test(test_paused_and_empty_dags_are_never_due),
	    cmocka_unit_test(test_any_is_due_on_one_of_its_uris),
	    cmocka_unit_test(test_nested_conditions_follow_airflow),
	    cmocka_unit_test(test_a_dag_on_an_alias_runs_on_its_linked_datasets),
	    cmocka_unit_test(test_trigger_outcome_follows_the_state_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
