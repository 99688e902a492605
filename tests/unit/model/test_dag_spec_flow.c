/* test_dag_spec_flow.c: a DAG file's flow keys (model/dag_spec_flow.c):
 * branch, short_circuit, skip_on_exit_code and no_retry_on_exit_code,
 * run_outputs, a task's variables, depends_on_past and wait_for_downstream (with
 * default_args), foreach over an upstream's output (its implicit upstream,
 * the items and their resources, item.KEY in templates, the tasks mapped
 * over each task's output), the JSON round trip, and every invalid form
 * with its message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dag_spec.h"
#include "model/template.h"

static const char *flow_dag =
	"dag_id: flow\n"
	"default_args: {depends_on_past: true}\n"
	"tasks:\n"
	"  - task_id: prepare\n"
	"    command: prep\n"
	"    depends_on_past: false\n"
	"  - task_id: choose\n"
	"    branch: true\n"
	"    command: choose\n"
	"  - task_id: check\n"
	"    short_circuit: true\n"
	"    depends_on: [choose]\n"
	"    wait_for_downstream: true\n"
	"    command: check\n"
	"  - task_id: train\n"
	"    depends_on: [choose]\n"
	"    foreach: \"{{  outputs.prepare.models}}\"\n"
	"    command: train --name {{ item.name }} --lr {{ item.lr }} --all {{ item }}\n";

static struct dag_spec *parse(const char *text, struct weir_error *err)
{
	return dag_spec_parse_string(text, strlen(text), "d.yaml", "/dags", err);
}

static void test_flow_keys(void **state)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse(flow_dag, &err);
	(void)state;

	if (!d)
		fail_msg("%s", err.msg);
	const struct dag_task *prepare = dag_spec_find_task(d, "prepare");
	const struct dag_task *choose = dag_spec_find_task(d, "choose");
	const struct dag_task *check = dag_spec_find_task(d, "check");
	const struct dag_task *train = dag_spec_find_task(d, "train");
	assert_false(prepare->flow.depends_on_past); /* its own key over default_args */
	assert_true(choose->flow.branch && choose->flow.depends_on_past);
	assert_false(choose->flow.short_circuit || choose->flow.wait_for_downstream);
	assert_true(check->flow.short_circuit && check->flow.wait_for_downstream);
	assert_true(check->flow.depends_on_past); /* implied */
	assert_true(dag_task_is_mapped(train) && !dag_task_is_mapped(prepare));
	assert_string_equal(train->flow.foreach_refs[0].task, "prepare");
	assert_string_equal(train->flow.foreach_refs[0].key, "models");
	/* prepare became an upstream of train */
	assert_int_equal(train->n_upstream, 2);
	assert_int_equal(train->flow.foreach_refs[0].upstream, 0);
	assert_true(train->upstream[0] == 0 || train->upstream[1] == 0);

	/* the JSON form reads back the same */
	json_t *j = dag_spec_to_json(d);
	struct dag_spec *e = dag_spec_from_json(j, "j", NULL, &err);
	if (!e)
		fail_msg("%s", err.msg);
	json_t *k = dag_spec_to_json(e);
	char *a = json_dumps(j, JSON_SORT_KEYS), *b = json_dumps(k, JSON_SORT_KEYS);
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "\"foreach\": \"{{ outputs.prepare.models }}\""));
	free(a);
	free(b);
	json_decref(j);
	json_decref(k);
	dag_spec_destroy(e);
	dag_spec_destroy(d);
}

/* Each task lists the tasks mapped over its output, in file order; a task
 * nobody maps over lists none (the JSON form too). */
static void test_mapped_by(void **state)
{
	static const char *text =
		"dag_id: m\n"
		"tasks:\n"
		"  - {task_id: a, command: a}\n"
		"  - {task_id: b, command: b}\n"
		"  - {task_id: x, command: x, foreach: \"{{ outputs.a.k }}\"}\n"
		"  - {task_id: y, command: y, foreach: \"{{ outputs.b.k }}\"}\n"
		"  - {task_id: z, command: z, foreach: \"{{ outputs.a.j }}\"}\n";
	struct weir_error err = {0};
	struct dag_spec *d = parse(text, &err), *e;
	json_t *j;
	(void)state;

	if (!d)
		fail_msg("%s", err.msg);
	j = dag_spec_to_json(d);
	e = dag_spec_from_json(j, "j", NULL, &err);
	json_decref(j);
	if (!e)
		fail_msg("%s", err.msg);
	for (int pass = 0; pass < 2; pass++) {
		const struct dag_spec *s = pass ? e : d;
		const struct dag_task *a = dag_spec_find_task(s, "a");
		const struct dag_task *b = dag_spec_find_task(s, "b");
		assert_int_equal(a->flow.n_mapped_by, 2);
		assert_string_equal(s->tasks[a->flow.mapped_by[0]].task_id, "x");
		assert_string_equal(s->tasks[a->flow.mapped_by[1]].task_id, "z");
		assert_int_equal(b->flow.n_mapped_by, 1);
		assert_string_equal(s->tasks[b->flow.mapped_by[0]].task_id, "y");
		for (const char *id = "xyz"; *id; id++) {
			char name[2] = {*id, 0};
			const struct dag_task *t = dag_spec_find_task(s, name);
			assert_int_equal(t->flow.n_mapped_by, 0);
			assert_null(t->flow.mapped_by);
		}
	}
	dag_spec_destroy(e);
	dag_spec_destroy(d);
}

static void expect_error(const char *text, const char *want)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse(text, &err);
	if (d)
		fail_msg("parsed; expected: %s", want);
	if (!strstr(err.msg, want))
		fail_msg("got \"%s\"; expected \"%s\"", err.msg, want);
}

/* skip_on_exit_code and no_retry_on_exit_code (one or a list), run_outputs,
 * variables: read, and the JSON form reads back the same. */
static void test_exit_codes_outputs_and_variables(void **state)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse(
		"dag_id: x\ntasks:\n"
		"  - {task_id: a, command: a, skip_on_exit_code: 99, no_retry_on_exit_code: [3, 255],"
		" run_outputs: true, variables: [region, my.key-1]}\n"
		"  - {task_id: b, command: b, skip_on_exit_code: [1, 99]}\n",
		&err);
	(void)state;

	if (!d)
		fail_msg("%s", err.msg);
	const struct dag_task *a = dag_spec_find_task(d, "a"), *b = dag_spec_find_task(d, "b");
	assert_true(dag_flow_exit_has(a->flow.skip_exit, 99));
	assert_false(dag_flow_exit_has(a->flow.skip_exit, 98));
	assert_false(dag_flow_exit_has(a->flow.skip_exit, 0));
	assert_true(dag_flow_exit_has(a->flow.no_retry_exit, 3));
	assert_true(dag_flow_exit_has(a->flow.no_retry_exit, 255));
	assert_true(dag_flow_exit_has(b->flow.skip_exit, 1));
	assert_false(dag_flow_exit_has(b->flow.no_retry_exit, 3));
	assert_true(a->flow.run_outputs && !b->flow.run_outputs);
	assert_int_equal(a->variables.n, 2);
	assert_string_equal(a->variables.v[1], "my.key-1");
	json_t *j = dag_spec_to_json(d);
	struct dag_spec *e = dag_spec_from_json(j, "j", NULL, &err);
	if (!e)
		fail_msg("%s", err.msg);
	json_t *k = dag_spec_to_json(e);
	char *x = json_dumps(j, JSON_SORT_KEYS), *y = json_dumps(k, JSON_SORT_KEYS);
	assert_string_equal(x, y);
	assert_non_null(strstr(x, "\"no_retry_on_exit_code\": [3, 255]"));
	free(x);
	free(y);
	json_decref(j);
	json_decref(k);
	dag_spec_destroy(e);
	dag_spec_destroy(d);
}

/* A task group's ids hold dots: outputs.GROUP.TASK.KEY names the task by
 * all but the last part. */
static void test_dotted_task_ids(void **state)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse(
		"dag_id: x\ntasks:\n"
		"  - {task_id: g.make, command: a}\n"
		"  - {task_id: g.use, depends_on: [g.make], command: 'echo {{ outputs.g.make.n }}'}\n"
		"  - {task_id: fan, command: b, foreach: \"{{ outputs.g.make.items }}\"}\n",
		&err);
	(void)state;

	if (!d)
		fail_msg("%s", err.msg);
	const struct dag_task *fan = dag_spec_find_task(d, "fan");
	assert_string_equal(fan->flow.foreach_refs[0].task, "g.make");
	assert_string_equal(fan->flow.foreach_refs[0].key, "items");
	dag_spec_destroy(d);
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a}\n"
	             "  - {task_id: b, command: b, foreach: \"{{ outputs.a. }}\"}\n",
	             "expected \"{{ outputs.TASK.KEY }}\"");
}

static void test_flow_errors(void **state)
{
	(void)state;
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a, skip_on_exit_code: 0}\n",
	             "tasks[0].skip_on_exit_code:");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a, skip_on_exit_code: [99, x]}\n",
	             "expected an exit status (1-255) or a list of them");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a, no_retry_on_exit_code: 256}\n",
	             "tasks[0].no_retry_on_exit_code:");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a, variables: [\"a b\"]}\n",
	             "tasks[0].variables[0]: variable key");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a, variables: region}\n",
	             "expected a list of variable keys");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a, branch: yes please}\n",
	             "tasks[0].branch: expected");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a, branch: true,"
	             " short_circuit: true}\n",
	             "tasks[0].short_circuit: expected one of branch and short_circuit, got both");
	expect_error("dag_id: x\ndefault_args: {branch: true}\ntasks:\n  - {task_id: a, command: a}\n",
	             "default_args.branch:");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a, foreach: [1, 2],"
	             " branch: true}\n",
	             "tasks[0].branch: a foreach task has several instances");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a,"
	             " foreach: \"{{ outputs.b.k }}\"}\n",
	             "tasks[0].foreach: outputs.b: no task of this DAG has that id");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a,"
	             " foreach: \"{{ outputs.a.k }}\"}\n",
	             "a task cannot fan out over its own output");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a}\n"
	             "  - {task_id: b, command: b, foreach: \"{{ outputs.a }}\"}\n",
	             "tasks[1].foreach: expected \"{{ outputs.TASK.KEY }}\"");
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a}\n"
	             "  - {task_id: b, command: b, foreach: \"{{ outputs.a.k }} x\"}\n",
	             "nothing after it");
	/* item.KEY only where items come from an output */
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: \"a {{ item.k }}\","
	             " foreach: [1]}\n",
	             "unknown variable \"item.k\"");
	/* a cycle through the implicit upstream is a cycle */
	expect_error("dag_id: x\ntasks:\n  - {task_id: a, command: a, depends_on: [b]}\n"
	             "  - {task_id: b, command: b, foreach: \"{{ outputs.a.k }}\"}\n",
	             "cycle");
}

static void test_output_items_and_resources(void **state)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse(flow_dag, &err);
	const struct dag_task *train = dag_spec_find_task(d, "train");
	struct dag_resources res = {.gpus = -1};
	json_t *items, *outs;
	bool given;
	(void)state;

	outs = json_loads("{\"prepare\": {\"models\": [\"a\", 2, {\"name\": \"b\","
	                  " \"resources\": {\"cpus\": 2, \"memory\": \"4g\", \"gpus\": 1}}]}}",
	                  0, NULL);
	items = dag_task_output_items(train, outs, &err);
	assert_non_null(items);
	assert_int_equal(json_array_size(items), 3);
	assert_int_equal(dag_item_resources(json_array_get(items, 0), &res, &given, &err), 0);
	assert_false(given);
	assert_int_equal(dag_item_resources(json_array_get(items, 2), &res, &given, &err), 0);
	assert_true(given);
	assert_int_equal(res.vcores, 2);
	assert_int_equal(res.memory_mb, 4096);
	assert_int_equal(res.gpus, 1);
	json_decref(items);
	json_decref(outs);

	static const struct {
		const char *outs, *want;
	} bad[] = {
	    {"{}", "outputs.prepare.models: expected a list for task train to fan out over, "
	           "got nothing"},
	    {"{\"prepare\": {\"models\": {\"a\": 1}}}", "got a mapping"},
	    {"{\"prepare\": {\"models\": [[1]]}}", "outputs.prepare.models[0]: expected a string, "
	                                           "a number or an object, got a list"},
	    {"{\"prepare\": {\"models\": [{\"resources\": {\"cpus\": 0}}]}}",
	     "outputs.prepare.models[0]: resources.cpus:"},
	    {"{\"prepare\": {\"models\": [{\"resources\": {\"disk\": 1}}]}}", "resources"},
	    {"{\"prepare\": {\"models\": [{\"resources\": {\"memory\": \"lots\"}}]}}", "memory"},
	    {"{\"prepare\": {\"models\": [{\"resources\": 3}]}}", "expected a mapping"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		outs = json_loads(bad[i].outs, 0, NULL);
		memset(&err, 0, sizeof err);
		items = dag_task_output_items(train, outs, &err);
		if (items || !strstr(err.msg, bad[i].want))
			fail_msg("%s: got \"%s\"; expected \"%s\"", bad[i].outs, err.msg, bad[i].want);
		json_decref(outs);
	}
	dag_spec_destroy(d);
}

/* foreach {product: [...]}: each ref an upstream, mapped by each; through
 * JSON and back; the items the cross product (the last ref fastest), a
 * mapped upstream's instances' lists joined; bad forms named. */
static void test_product_and_mapped_upstream(void **state)
{
	static const char *text =
	    "dag_id: p\n"
	    "tasks:\n"
	    "  - {task_id: a, command: a}\n"
	    "  - {task_id: m, command: m, foreach: [1, 2, 3]}\n"
	    "  - task_id: x\n"
	    "    command: x\n"
	    "    foreach: {product: [\"{{ outputs.a.k }}\", \"{{ outputs.m.k }}\"]}\n";
	struct weir_error err = {0};
	struct dag_spec *d = parse(text, &err), *e;
	const struct dag_task *x;
	json_t *j, *outs, *items;
	char *dump;
	(void)state;

	if (!d)
		fail_msg("%s", err.msg);
	j = dag_spec_to_json(d);
	e = dag_spec_from_json(j, "j", NULL, &err);
	json_decref(j);
	if (!e)
		fail_msg("%s", err.msg);
	for (int pass = 0; pass < 2; pass++) {
		const struct dag_spec *s = pass ? e : d;
		x = dag_spec_find_task(s, "x");
		assert_int_equal(x->flow.n_foreach_refs, 2);
		assert_string_equal(x->flow.foreach_refs[1].task, "m");
		assert_int_equal(dag_spec_find_task(s, "a")->flow.n_mapped_by, 1);
		assert_int_equal(dag_spec_find_task(s, "m")->flow.n_mapped_by, 1);
		assert_int_equal(x->depends_on.n, 2);
	}
	x = dag_spec_find_task(d, "x");
	outs = json_loads("{\"a\": {\"k\": [\"p\", \"q\"]},"
	                  " \"m\": [{\"k\": [1]}, {\"k\": []}, {\"k\": [3, 4]}]}",
	                  0, NULL);
	items = dag_task_output_items(x, outs, &err);
	if (!items)
		fail_msg("%s", err.msg);
	dump = json_dumps(items, JSON_COMPACT);
	assert_string_equal(dump, "[[\"p\",1],[\"p\",3],[\"p\",4],[\"q\",1],[\"q\",3],[\"q\",4]]");
	free(dump);
	json_decref(items);
	json_decref(outs);
	/* an instance that wrote no list */
	outs = json_loads("{\"a\": {\"k\": [1]}, \"m\": [{\"k\": [1]}, null]}", 0, NULL);
	assert_null(dag_task_output_items(x, outs, &err));
	assert_non_null(strstr(err.msg, "outputs.m.k (its instance 1): expected a list"));
	json_decref(outs);
	dag_spec_destroy(e);
	dag_spec_destroy(d);

	static const struct {
		const char *foreach, *want;
	} bad[] = {
	    {"{product: [\"{{ outputs.a.k }}\"]}",
	     "tasks[1].foreach.product: expected a list of two"},
	    {"{product: [\"{{ outputs.a.k }}\", 3]}", "tasks[1].foreach.product[1]: expected"},
	    {"{product: [\"{{ outputs.a.k }}\", \"{{ outputs.z.k }}\"]}", "outputs.z: no task"},
	    {"{products: []}", "expected {product:"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char doc[512];
		snprintf(doc, sizeof doc,
		         "dag_id: p\ntasks:\n  - {task_id: a, command: a}\n"
		         "  - {task_id: x, command: x, foreach: %s}\n",
		         bad[i].foreach);
		memset(&err, 0, sizeof err);
		d = parse(doc, &err);
		if (d || !strstr(err.msg, bad[i].want))
			fail_msg("%s: got \"%s\"; expected \"%s\"", bad[i].foreach, err.msg,
			         bad[i].want);
	}
}

/* A clear's tasks: a work task's relevant setups and their teardowns, a
 * setup's teardowns, the tasks below with `downstream` and their setups. */
static void test_clear_tasks(void **state)
{
	static const char *text =
	    "dag_id: c\n"
	    "tasks:\n"
	    "  - {task_id: create, setup: true, command: x}\n"
	    "  - {task_id: lock, setup: true, command: x}\n"
	    "  - {task_id: other, setup: true, command: x}\n"
	    "  - {task_id: other_down, teardown: true, depends_on: [other], command: x}\n"
	    "  - {task_id: before, command: x}\n"
	    "  - {task_id: work, depends_on: [create, lock, other, before], command: x}\n"
	    "  - {task_id: delete, teardown: true, depends_on: [create, work], command: x}\n"
	    "  - {task_id: after, depends_on: [work], command: x}\n";
	static const struct {
		const char *chosen;
		bool downstream;
		const char *want;
	} cases[] = {
	    {"work", false, "create lock work delete"},
	    {"create", false, "create delete"},
	    {"before", true, "create lock before work delete after"},
	    /* a setup without a teardown is relevant to every task below it */
	    {"after", false, "lock after"},
	    {"before", false, "before"},
	};
	struct weir_error err = {0};
	struct dag_spec *d = parse(text, &err);
	(void)state;

	if (!d)
		fail_msg("%s", err.msg);
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		bool in[16] = {0};
		char got[256] = "";
		in[dag_spec_task_index(d, cases[c].chosen)] = true;
		assert_int_equal(dag_clear_tasks(d, in, cases[c].downstream), 0);
		for (size_t i = 0; i < d->n_tasks; i++)
			if (in[i])
				snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s",
				         *got ? " " : "", d->tasks[i].task_id);
		if (strcmp(got, cases[c].want))
			fail_msg("%s: got \"%s\"; expected \"%s\"", cases[c].chosen, got,
			         cases[c].want);
	}
	dag_spec_destroy(d);
}

static void test_object_item_in_templates(void **state)
{
	struct weir_error err = {0};
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	json_t *item = json_loads("{\"name\": \"a b'; rm -rf /\", \"lr\": 0.1}", 0, NULL);
	char *text = template_value_text(item);
	struct template_run run = {.dag_id = "d", .run_id = "r", .task_id = "t", .try_number = 1,
	                           .item = text, .item_value = item};
	struct strvec env = STRVEC_INIT;
	char *out;
	(void)state;

	assert_int_equal(template_ctx_fill(&ctx, &run, &err), 0);
	out = template_render("x {{ item.name }} {{ item.lr }}", &ctx, TEMPLATE_SHELL, &err);
	assert_non_null(out);
	/* one quoted word each; the real number as written */
	assert_string_equal(out, "x 'a b'\\''; rm -rf /' '0.1'");
	free(out);
	/* the environment has the whole item, not a variable per key */
	assert_int_equal(template_env(&run, &env, &err), 0);
	bool whole = false;
	for (size_t i = 0; i < env.n; i++) {
		assert_null(strstr(env.v[i], "WEIR_ITEM."));
		whole = whole || !strncmp(env.v[i], "WEIR_ITEM={", 11);
	}
	assert_true(whole);
	strvec_release(&env);
	template_ctx_release(&ctx);
	free(text);
	json_decref(item);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flow_keys),
	    cmocka_unit_test(test_mapped_by),
	    cmocka_unit_test(test_product_and_mapped_upstream),
	    cmocka_unit_test(test_clear_tasks),
	    cmocka_unit_test(test_exit_codes_outputs_and_variables),
	    cmocka_unit_test(test_dotted_task_ids),
	    cmocka_unit_test(test_flow_errors),
	    cmocka_unit_test(test_output_items_and_resources),
	    cmocka_unit_test(test_object_item_in_templates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
