/* test_dag_spec_dataset.c: outlets, trigger_dag tasks and schedules on
 * datasets in DAG files: what is read, what is refused and how it is
 * named, and the JSON form read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "model/dag_spec.h"
#include "model/dataset.h"

static struct dag_spec *parse(const char *text, struct weir_error *err)
{
	return dag_spec_parse_string(text, strlen(text), "d.yaml", "/dags", err);
}

static void expect_error(const char *text, const char *want)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse(text, &err);
	if (d || !strstr(err.msg, want))
		fail_msg("expected an error with \"%s\", got \"%s\"", want, d ? "(parsed)" : err.msg);
}

static void test_outlets_and_a_dataset_schedule_are_read(void **state)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse("dag_id: c\n"
				   "schedule: [\"s3://b/a\", \"file:///data/x\"]\n"
				   "tasks:\n"
				   "  - task_id: t\n"
				   "    command: echo {{ params.triggering_dataset_events }}\n"
				   "    outlets: [\"s3://b/out\"]\n",
				   &err);
	(void)state;
	assert_non_null(d);
	assert_int_equal(d->dataset_schedule.n, 2);
	assert_string_equal(d->dataset_schedule.v[1], "file:///data/x");
	assert_int_equal(d->schedule.kind, CRON_NONE);
	assert_int_equal(d->tasks[0].outlets.n, 1);
	assert_string_equal(d->tasks[0].outlets.v[0], "s3://b/out");

	/* the JSON form reads back to the same */
	json_t *j = dag_spec_to_json(d);
	struct dag_spec *back = dag_spec_from_json(j, "j", NULL, &err);
	assert_non_null(back);
	assert_int_equal(back->dataset_schedule.n, 2);
	assert_string_equal(back->tasks[0].outlets.v[0], "s3://b/out");
	dag_spec_destroy(back);
	json_decref(j);
	dag_spec_destroy(d);
}

static void test_a_trigger_dag_task_is_read_with_defaults(void **state)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse("dag_id: p\n"
				   "params: {n: 3}\n"
				   "tasks:\n"
				   "  - task_id: go\n"
				   "    trigger_dag:\n"
				   "      dag_id: child\n"
				   "      conf: {size: \"{{ params.n }}\", nested: {day: \"{{ ds }}\"}}\n"
				   "      run_id: \"from_{{ run_id }}\"\n"
				   "      wait_for_completion: true\n",
				   &err);
	(void)state;
	if (!d)
		fail_msg("%s", err.msg);
	const struct dag_task *t = &d->tasks[0];
	assert_int_equal(t->kind, DAG_TASK_TRIGGER_DAG);
	assert_string_equal(t->trigger->dag_id, "child");
	assert_true(t->trigger->wait);
	assert_int_equal(t->trigger->poke_interval_s, DAG_TRIGGER_DEFAULT_POKE_S);
	assert_int_equal(t->trigger->allowed, 1u << DAG_RUN_SUCCESS);
	assert_int_equal(t->trigger->failed, 1u << DAG_RUN_FAILED);
	assert_string_equal(t->trigger->run_id, "from_{{ run_id }}");

	json_t *j = dag_spec_to_json(d);
	struct dag_spec *back = dag_spec_from_json(j, "j", NULL, &err);
	assert_non_null(back);
	assert_true(json_equal(back->tasks[0].trigger->conf, t->trigger->conf));
	assert_true(back->tasks[0].trigger->wait);
	dag_spec_destroy(back);
	json_decref(j);
	dag_spec_destroy(d);
}

static void test_bad_keys_are_named(void **state)
{
	(void)state;
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n    command: x\n    outlets: [\"\"]\n",
		     "d.yaml:5: tasks[0].outlets[0]: expected a dataset URI");
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n    command: x\n"
		     "    outlets: [\"s3://a\", \"s3://a\"]\n",
		     "listed twice");
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n    command: x\n"
		     "    outlets: [\"airflow://x\"]\n",
		     "reserved");
	expect_error("dag_id: p\nschedule: []\ntasks:\n  - task_id: a\n    command: x\n",
		     "schedule: expected at least one dataset URI");
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n    trigger_dag: {conf: {}}\n",
		     "tasks[0].trigger_dag.dag_id: is required");
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n    command: x\n"
		     "    trigger_dag: {dag_id: c}\n",
		     "expected exactly one of command, job, sql, transfer, sensor and trigger_dag");
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n"
		     "    trigger_dag: {dag_id: c, allowed_states: [running]}\n",
		     "tasks[0].trigger_dag.allowed_states[0]: expected success or failed");
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n"
		     "    trigger_dag: {dag_id: c, conf: {x: \"{{ params.nope }}\"}}\n",
		     "tasks[0].trigger_dag.conf.x");
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n"
		     "    trigger_dag: {dag_id: c, wait: true}\n",
		     "wait");
	/* triggering_dataset_events is only there for a DAG on datasets */
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n"
		     "    command: echo {{ params.triggering_dataset_events }}\n",
		     "params.triggering_dataset_events");
}

/* A DatasetAlias in a schedule ({alias: NAME}: alone in a list, in a
 * condition) and a task's inlets: read, named, and the JSON form read back. */
static void test_aliases_and_inlets_are_read(void **state)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse("dag_id: c\n"
	                           "schedule: [{alias: out}]\n"
	                           "tasks:\n"
	                           "  - task_id: t\n"
	                           "    command: echo {{ params.triggering_dataset_events }}\n"
	                           "    inlets: [\"s3://b/a\", {alias: out}]\n",
	                           &err);
	(void)state;
	if (!d)
		fail_msg("%s", err.msg);
	assert_true(dag_on_datasets(d));
	assert_int_equal(d->dataset_schedule.n, 0);
	assert_int_equal(d->dataset_aliases.n, 1);
	assert_string_equal(d->dataset_aliases.v[0], "out");
	assert_int_equal(d->schedule.kind, CRON_NONE);
	json_t *want = json_pack("{s:[{s:s}]}", "all", "alias", "out");
	assert_true(json_equal(d->dataset_condition, want));
	json_decref(want);
	assert_int_equal(d->tasks[0].inlets.n, 1);
	assert_string_equal(d->tasks[0].inlets.v[0], "s3://b/a");
	assert_int_equal(d->tasks[0].inlet_aliases.n, 1);
	assert_string_equal(d->tasks[0].inlet_aliases.v[0], "out");

	json_t *j = dag_spec_to_json(d);
	struct dag_spec *back = dag_spec_from_json(j, "j", NULL, &err);
	if (!back)
		fail_msg("%s", err.msg);
	assert_int_equal(back->dataset_aliases.n, 1);
	assert_string_equal(back->tasks[0].inlet_aliases.v[0], "out");
	assert_string_equal(back->tasks[0].inlets.v[0], "s3://b/a");
	dag_spec_destroy(back);
	json_decref(j);
	dag_spec_destroy(d);

	d = parse("dag_id: c\n"
	          "schedule: {datasets: {any: [\"s3://b/a\", {alias: out}]}}\n"
	          "tasks:\n"
	          "  - task_id: t\n"
	          "    command: x\n",
	          &err);
	if (!d)
		fail_msg("%s", err.msg);
	assert_int_equal(d->dataset_schedule.n, 1);
	assert_int_equal(d->dataset_aliases.n, 1);
	dag_spec_destroy(d);

	expect_error(
	    "dag_id: p\nschedule: [{alias: \"\"}]\ntasks:\n  - task_id: a\n    command: x\n",
	    "schedule[0].alias: expected an alias name");
	expect_error("dag_id: p\nschedule: [{alias: 3}]\ntasks:\n  - task_id: a\n    command: x\n",
	             "schedule[0].alias");
	expect_error("dag_id: p\nschedule: [{elias: x}]\ntasks:\n  - task_id: a\n    command: x\n",
	             "expected any:, all: or alias:");
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n    command: x\n"
	             "    inlets: [{uri: x}]\n",
	             "tasks[0].inlets[0]: expected a dataset URI or {alias: NAME}");
	expect_error("dag_id: p\ntasks:\n  - task_id: a\n    command: x\n"
	             "    inlets: [\"airflow://x\"]\n",
	             "reserved");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_outlets_and_a_dataset_schedule_are_read),
	    cmocka_unit_test(test_a_trigger_dag_task_is_read_with_defaults),
	    cmocka_unit_test(test_bad_keys_are_named),
	    cmocka_unit_test(test_aliases_and_inlets_are_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
