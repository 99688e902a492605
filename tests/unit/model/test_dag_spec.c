/* Tests of DAG files: every key of a full file, defaults, the JSON round
 * trip, each kind of invalid file with its message and line, cycles,
 * topological order, foreach, and every file in examples/dags/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dag_spec.h"

static const char *full_dag =
	"dag_id: recsys.daily\n"
	"description: ALS and similarity models, every night\n"
	"schedule: \"30 2 * * *\"\n"
	"start_date: 2024-01-01\n"
	"end_date: 2024-12-31T00:00:00Z\n"
	"catchup: true\n"
	"max_active_runs: 2\n"
	"max_active_tasks: 4\n"
	"params: {table: events, models: [als, item2item], limit: 100}\n"
	"tags: [recsys, nightly]\n"
	"default_args:\n"
	"  retries: 2\n"
	"  retry_delay: 30s\n"
	"  retry_exponential_backoff: true\n"
	"  max_retry_delay: 10m\n"
	"  execution_timeout: 1h\n"
	"  pool: spark\n"
	"  priority: 3\n"
	"  resources: {memory: 4g, vcores: 2, gpus: 0}\n"
	"doc_md: \"# Nightly\"\n"
	"tasks:\n"
	"  - task_id: extract\n"
	"    operator: airflow.operators.bash.BashOperator\n"
	"    doc_md: counts the rows\n"
	"    command: sqlite3 db.sqlite \"select count(*) from {{ params.table }}\" > rows\n"
	"    env: {DAY: \"{{ ds }}\", N: 3}\n"
	"    cwd: ./work\n"
	"  - task_id: train\n"
	"    depends_on: [extract]\n"
	"    foreach: \"{{ params.models }}\"\n"
	"    retries: 5\n"
	"    retry_delay: 60\n"
	"    pool: null\n"
	"    priority: 9\n"
	"    resources: {memory: 512m, gpus: 1}\n"
	"    command: train --model {{ item }} --rows {{ outputs.extract.rows }}\n"
	"  - task_id: dist\n"
	"    depends_on: [extract]\n"
	"    execution_timeout: 2h\n"
	"    job:\n"
	"      name: dist\n"
	"      src_dir: ./src\n"
	"      entry_point: train.py\n"
	"      params: --day {{ ds }}\n"
	"      roles: {worker: {instances: 2, memory: 1g}}\n"
	"  - task_id: from_file\n"
	"    job: specs/job.yaml\n"
	"    trigger_rule: all_done\n"
	"  - task_id: tony\n"
	"    job: {conf_file: tony.xml, executes: train.py, task_params: \"--d {{ ds }}\",\n"
	"          src_dir: src, shell_env: {A: 1}, conf: [tony.worker.instances=2]}\n"
	"  - task_id: tony_plain\n"
	"    job: conf/tony.xml\n"
	"  - task_id: publish\n"
	"    depends_on: [train, dist, from_file, tony]\n"
	"    trigger_rule: none_failed\n"
	"    command: publish --day {{ ds_nodash }} --try {{ try_number }}\n";

static struct dag_spec *parse(const char *text, struct weir_error *err)
{
	return dag_spec_parse_string(text, strlen(text), "d.yaml", "/dags", err);
}

static struct dag_spec *parse_ok(const char *text)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse(text, &err);
	if (!d)
		fail_msg("%s", err.msg);
	return d;
}

static void test_full_dag(void **state)
{
	(void)state;
	struct dag_spec *d = parse_ok(full_dag);
	assert_string_equal(d->dag_id, "recsys.daily");
	assert_string_equal(d->description, "ALS and similarity models, every night");
	assert_string_equal(d->file, "d.yaml");
	assert_int_equal(d->schedule.kind, CRON_EXPR);
	assert_string_equal(d->schedule.text, "30 2 * * *");
	assert_true(d->start_date_ms == schedule_make_time(2024, 1, 1, 0, 0, 0));
	assert_true(d->end_date_ms == schedule_make_time(2024, 12, 31, 0, 0, 0));
	assert_true(d->catchup);
	assert_int_equal(d->max_active_runs, 2);
	assert_int_equal(d->max_active_tasks, 4);
	assert_string_equal(json_string_value(json_object_get(d->params, "table")), "events");
	assert_int_equal(d->tags.n, 2);
	assert_string_equal(d->tags.v[1], "nightly");
	assert_int_equal(d->default_args.retries, 2);
	assert_int_equal(d->default_args.retry_delay_s, 30);
	assert_int_equal(d->default_args.retry_exponential_backoff, 1);
	assert_int_equal(d->default_args.max_retry_delay_s, 600);
	assert_int_equal(d->default_args.execution_timeout_s, 3600);
	assert_string_equal(d->default_args.pool, "spark");
	assert_int_equal(d->default_args.resources.memory_mb, 4096);
	assert_int_equal(d->n_tasks, 7);

	const struct dag_task *t = dag_spec_find_task(d, "extract");
	assert_non_null(t);
	assert_int_equal(t->kind, DAG_TASK_COMMAND);
	assert_string_equal(t->cwd, "/dags/work");
	assert_int_equal(t->n_env, 2);
	assert_string_equal(t->env[0].value, "{{ ds }}");
	assert_string_equal(t->env[1].value, "3");
	/* defaults flow in */
	assert_int_equal(t->retries, 2);
	assert_int_equal(t->retry_delay_s, 30);
	assert_true(t->retry_exponential_backoff);
	assert_int_equal(t->max_retry_delay_s, 600);
	assert_int_equal(t->execution_timeout_s, 3600);
	assert_string_equal(t->pool, "spark");
	assert_int_equal(t->priority, 3);
	assert_int_equal(t->resources.memory_mb, 4096);
	assert_int_equal(t->resources.vcores, 2);
	assert_int_equal(t->resources.gpus, 0);
	assert_int_equal(t->trigger_rule, TRIGGER_ALL_SUCCESS);

	t = dag_spec_find_task(d, "train");
	assert_string_equal(t->foreach_param, "models");
	assert_int_equal(t->retries, 5);
	assert_int_equal(t->retry_delay_s, 60);
	assert_null(t->pool); /* null: no pool, whatever default_args says */
	assert_int_equal(t->priority, 9);
	assert_int_equal(t->resources.memory_mb, 512);
	assert_int_equal(t->resources.vcores, 2);
	assert_int_equal(t->resources.gpus, 1);
	assert_int_equal(t->n_upstream, 1);
	assert_int_equal(t->upstream[0], 0);

	t = dag_spec_find_task(d, "dist");
	assert_int_equal(t->kind, DAG_TASK_JOB);
	assert_string_equal(t->job->src_dir, "/dags/src");
	assert_int_equal(t->job->roles[0].instances, 2);
	assert_int_equal(t->execution_timeout_s, 7200);
	assert_int_equal(t->resources.vcores, 0);

	t = dag_spec_find_task(d, "from_file");
	assert_int_equal(t->kind, DAG_TASK_JOB_FILE);
	assert_string_equal(t->job_path, "/dags/specs/job.yaml");
	assert_int_equal(t->trigger_rule, TRIGGER_ALL_DONE);

	t = dag_spec_find_task(d, "tony");
	assert_int_equal(t->kind, DAG_TASK_JOB_TONY);
	assert_string_equal(json_string_value(json_object_get(t->tony, "conf_file")),
			    "/dags/tony.xml");
	assert_string_equal(json_string_value(json_object_get(t->tony, "src_dir")), "/dags/src");
	assert_string_equal(json_string_value(json_array_get(json_object_get(t->tony, "shell_env"), 0)),
			    "A=1");
	t = dag_spec_find_task(d, "tony_plain");
	assert_int_equal(t->kind, DAG_TASK_JOB_TONY);
	assert_string_equal(json_string_value(json_object_get(t->tony, "conf_file")),
			    "/dags/conf/tony.xml");

	t = dag_spec_find_task(d, "publish");
	assert_int_equal(t->trigger_rule, TRIGGER_NONE_FAILED);
	assert_int_equal(t->n_upstream, 4);

	/* topological order: every task after its upstream tasks */
	for (size_t i = 0; i < d->n_tasks; i++) {
		const struct dag_task *ti = &d->tasks[d->topo[i]];
		for (size_t k = 0; k < ti->n_upstream; k++) {
			bool before = false;
			for (size_t j = 0; j < i; j++)
				before |= d->topo[j] == ti->upstream[k];
			assert_true(before);
		}
	}
	assert_int_equal(dag_spec_task_index(d, "nope"), -1);
	assert_null(dag_spec_find_task(d, "nope"));
	dag_spec_destroy(d);
}

static void test_defaults(void **state)
{
	(void)state;
	struct dag_spec *d = parse_ok("dag_id: x\ntasks: [{task_id: a, command: 'true'}]\n");
	assert_int_equal(d->schedule.kind, CRON_NONE);
	assert_string_equal(d->schedule.text, "none"); /* found by fuzz_dag */
	assert_true(d->start_date_ms == CRON_NEVER);
	assert_true(d->end_date_ms == CRON_NEVER);
	assert_false(d->catchup);
	assert_int_equal(d->max_active_runs, DAG_DEFAULT_ACTIVE_RUNS);
	assert_int_equal(d->max_active_tasks, DAG_DEFAULT_ACTIVE_TASKS);
	assert_null(d->description);
	assert_int_equal(d->dagrun_timeout_s, 0);
	const struct dag_task *t = &d->tasks[0];
	assert_int_equal(t->retries, 0);
	assert_int_equal(t->retry_delay_s, DAG_DEFAULT_RETRY_DELAY_S);
	assert_false(t->retry_exponential_backoff);
	assert_int_equal(t->max_retry_delay_s, 0);
	assert_int_equal(t->execution_timeout_s, 0);
	assert_null(t->pool);
	assert_int_equal(t->priority, 0);
	assert_int_equal(t->resources.memory_mb, 2048);
	assert_int_equal(t->resources.vcores, 1);
	assert_int_equal(t->resources.gpus, 0);
	assert_int_equal(t->trigger_rule, TRIGGER_ALL_SUCCESS);
	dag_spec_destroy(d);
	dag_spec_destroy(NULL);

	/* schedule null, a single depends_on name, @once with its date */
	d = parse_ok("dag_id: x\nschedule: '@once'\nstart_date: 2024-05-01T10:00:00+02:00\n"
		     "tasks:\n - {task_id: a, command: 'true'}\n - {task_id: b, command: 'true', "
		     "depends_on: a}\n");
	assert_int_equal(d->schedule.kind, CRON_ONCE);
	assert_true(d->start_date_ms == schedule_make_time(2024, 5, 1, 8, 0, 0));
	assert_int_equal(d->tasks[1].n_upstream, 1);
	dag_spec_destroy(d);

	/* dagrun_timeout: a duration or seconds, kept through the JSON form */
	d = parse_ok("dag_id: x\ndagrun_timeout: 2h\ntasks: [{task_id: a, command: 'true'}]\n");
	assert_int_equal(d->dagrun_timeout_s, 7200);
	json_t *j = dag_spec_to_json(d);
	assert_int_equal(json_integer_value(json_object_get(j, "dagrun_timeout")), 7200);
	struct weir_error err = {0};
	struct dag_spec *e = dag_spec_from_json(j, "api", NULL, &err);
	assert_non_null(e);
	assert_int_equal(e->dagrun_timeout_s, 7200);
	json_decref(j);
	dag_spec_destroy(e);
	dag_spec_destroy(d);
	d = parse_ok("dag_id: x\ndagrun_timeout: 90\ntasks: [{task_id: a, command: 'true'}]\n");
	assert_int_equal(d->dagrun_timeout_s, 90);
	dag_spec_destroy(d);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct dag_spec *d = parse_ok(full_dag);
	json_t *j = dag_spec_to_json(d);
	assert_non_null(j);
	struct weir_error err = {0};
	struct dag_spec *e = dag_spec_from_json(j, "api", NULL, &err);
	if (!e)
		fail_msg("%s", err.msg);
	json_t *k = dag_spec_to_json(e);
	if (!json_equal(j, k)) {
		char *a = json_dumps(j, JSON_INDENT(1) | JSON_SORT_KEYS);
		char *b = json_dumps(k, JSON_INDENT(1) | JSON_SORT_KEYS);
		fail_msg("round trip differs:\n%s\n---\n%s", a, b);
	}
	assert_string_equal(json_string_value(json_object_get(j, "start_date")),
			    "2024-01-01T00:00:00+00:00");
	assert_string_equal(json_string_value(json_object_get(j, "doc_md")), "# Nightly");
	/* a task's class, as Airflow's API names it */
	const char *name, *module;
	size_t module_len;
	dag_task_class(&e->tasks[0], &name, &module, &module_len);
	assert_string_equal(name, "BashOperator");
	assert_int_equal(module_len, strlen("airflow.operators.bash"));
	assert_memory_equal(module, "airflow.operators.bash", module_len);
	dag_task_class(&e->tasks[1], &name, &module, &module_len);
	assert_string_equal(name, "WeirCommand");
	assert_string_equal(module, "weir");
	json_decref(j);
	json_decref(k);
	dag_spec_destroy(d);
	dag_spec_destroy(e);
}

/* Prints every mismatch, so one run shows them all; test_bad_files fails
 * at its end if there was any. */
static int bad_mismatches;

static void expect_error(const char *text, const char *needle)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse(text, &err);
	if (d) {
		dag_spec_destroy(d);
		print_error("parsed, expected an error containing \"%s\"\n", needle);
		bad_mismatches++;
	} else if (!strstr(err.msg, needle) || err.kind != WEIR_E_INVALID) {
		print_error("error \"%s\" lacks \"%s\"\n", err.msg, needle);
		bad_mismatches++;
	}
}

#define HEAD "dag_id: x\n"
#define TASK_A "tasks:\n  - {task_id: a, command: 'true'}\n"

static void test_bad_files(void **state)
{
	(void)state;
	expect_error("dag_id: [\n", "d.yaml:");
	expect_error("- a\n", "d.yaml:1: dag: expected a mapping with dag_id and tasks, got a list");
	expect_error(TASK_A, "d.yaml:1: dag: expected a dag_id");
	expect_error("dag_id: 'a b'\n" TASK_A, "d.yaml:1: dag_id: expected an id of letters");
	expect_error(HEAD "colour: red\n" TASK_A,
		     "d.yaml:2: colour: unknown key; expected one of: dag_id, description");
	expect_error(HEAD, "d.yaml:1: tasks: expected a list of at least one task");
	expect_error(HEAD "tasks: []\n", "tasks: expected a list of at least one task");
	expect_error(HEAD "tasks: {a: 1}\n", "d.yaml:2: tasks: expected a list of tasks, got a mapping");
	expect_error(HEAD "schedule: '61 * * * *'\nstart_date: 2024-01-01\n" TASK_A,
		     "d.yaml:2: schedule: minute field \"61\": expected 0-59");
	expect_error(HEAD "schedule: '@daily'\n" TASK_A, "d.yaml:2: schedule: a scheduled DAG "
							 "needs a start_date");
	expect_error(HEAD "start_date: 2023-02-29\n" TASK_A,
		     "d.yaml:2: start_date: \"2023-02-29\" is not a date");
	expect_error(HEAD "start_date: soon\n" TASK_A, "start_date: expected a date like");
	expect_error(HEAD "start_date: 2024-02-01\nend_date: 2024-01-01\n" TASK_A,
		     "d.yaml:3: end_date: expected a date at or after start_date");
	expect_error(HEAD "catchup: yes\n" TASK_A, "d.yaml:2: catchup: expected true or false");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: 'true', operator: 'a..B'}\n",
		     "tasks[0].operator: expected a class's dotted path of Python names");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: 'true', operator: '1x.B'}\n",
		     "tasks[0].operator: expected a class's dotted path of Python names");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: 'true', operator: 3}\n",
		     "tasks[0].operator: expected a class's dotted path");
	expect_error(HEAD "dagrun_timeout: soon\n" TASK_A, "d.yaml:2: dagrun_timeout:");
	expect_error(HEAD "dagrun_timeout: 0\n" TASK_A,
		     "d.yaml:2: dagrun_timeout: expected a duration above 0");
	expect_error(HEAD "dagrun_timeout: [1]\n" TASK_A,
		     "dagrun_timeout: expected seconds or a duration");
	expect_error(HEAD "max_active_runs: 0\n" TASK_A,
		     "max_active_runs: expected an integer from 1 to 10000, got 0");
	expect_error(HEAD "params: {a-b: 1}\n" TASK_A, "d.yaml:2: params.a-b: expected a param name");
	expect_error(HEAD "tags: [1]\n" TASK_A, "tags[0]: expected a string, got an integer");
	expect_error(HEAD "default_args: {retries: -1}\n" TASK_A,
		     "default_args.retries: expected an integer from 0 to 100");
	expect_error(HEAD "default_args: {retry_delay: 5 minutes}\n" TASK_A,
		     "default_args.retry_delay: expected a duration like 600, 90s");
	expect_error(HEAD "default_args: {timeout: 1h}\n" TASK_A,
		     "default_args.timeout: unknown key; expected one of: retries, retry_delay");
	expect_error(HEAD "default_args: {resources: {memory: lots}}\n" TASK_A,
		     "default_args.resources.memory");
	expect_error(HEAD "default_args: {resources: {cpus: 2}}\n" TASK_A,
		     "default_args.resources.cpus: unknown key; expected one of: memory, vcores, gpus");
	expect_error(HEAD "default_args: {pool: 'a b'}\n" TASK_A, "default_args.pool: expected a pool");
	/* tasks */
	expect_error(HEAD "tasks:\n  - {command: 'true'}\n", "d.yaml:3: tasks[0]: expected a task_id");
	expect_error(HEAD "tasks:\n  - {task_id: a/b, command: 'true'}\n",
		     "tasks[0].task_id: expected a task id of letters, digits");
	expect_error(HEAD "tasks:\n  - {task_id: a}\n", "tasks[0]: expected exactly one of command");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, job: y.yaml}\n",
		     "tasks[0]: expected exactly one of command, job, sql, transfer, sensor and "
		     "trigger_dag, got more");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: ''}\n",
		     "tasks[0].command: expected a shell command, got an empty string");
	expect_error(HEAD "tasks:\n  - task_id: a\n    command: x\n    retires: 3\n",
		     "d.yaml:5: tasks[0].retires: unknown key; expected one of: task_id, depends_on");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, trigger_rule: sometimes}\n",
		     "tasks[0].trigger_rule: expected all_success, all_done");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, env: {1X: y}}\n",
		     "tasks[0].env.1X: expected an environment variable name");
	expect_error(HEAD "tasks:\n  - {task_id: a, job: x.yaml, env: {X: y}}\n",
		     "tasks[0].env: env and cwd go with command");
	expect_error(HEAD "tasks:\n  - {task_id: a, job: x.yaml, resources: {vcores: 2}}\n",
		     "tasks[0].resources: a job task has the resources of its roles");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, resources: {vcores: 0}}\n",
		     "tasks[0].resources.vcores: expected an integer from 1 to 1024, got 0");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, execution_timeout: forever}\n",
		     "tasks[0].execution_timeout: expected a duration");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, foreach: 3}\n",
		     "tasks[0].foreach: expected a list of items, \"{{ params.NAME }}\"");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, foreach: [[1]]}\n",
		     "tasks[0].foreach[0]: expected a string or a number, got a list");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, foreach: '{{ params.m }}'}\n",
		     "tasks[0].foreach: \"m\" is not in params");
	expect_error(HEAD "params: {m: 3}\ntasks:\n  - {task_id: a, command: x, foreach: "
			  "'{{ params.m }}'}\n",
		     "tasks[0].foreach: params.m: expected a list to fan out over");
	/* jobs */
	expect_error(HEAD "tasks:\n  - task_id: a\n    job:\n      roles: {worker: {memory: "
			  "lots}}\n",
		     "d.yaml:5: tasks[0].job.roles.worker.memory: expected an amount");
	expect_error(HEAD "tasks:\n  - task_id: a\n    job: {roles: {worker: {}}, colour: red}\n",
		     "tasks[0].job.colour: unknown key");
	expect_error(HEAD "tasks:\n  - {task_id: a, job: 3}\n",
		     "tasks[0].job: expected an inline job spec");
	expect_error(HEAD "tasks:\n  - {task_id: a, job: {conf_file: t.xml, queue: q}}\n",
		     "tasks[0].job.queue: unknown key; expected one of: conf_file, executes");
	expect_error(HEAD "tasks:\n  - {task_id: a, job: {conf_file: t.xml, shell_env: [X]}}\n",
		     "tasks[0].job.shell_env[0]: expected NAME=value, got \"X\"");
	/* the graph */
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x}\n  - {task_id: a, command: y}\n",
		     "d.yaml:4: tasks[1].task_id: \"a\" is already the id of tasks[0]");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x}\n"
			  "  - task_id: b\n    command: y\n    depends_on: [a, c]\n",
		     "d.yaml:6: tasks[1].depends_on[1]: \"c\" is not a task of this DAG");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, depends_on: [b, b]}\n"
			  "  - {task_id: b, command: y}\n",
		     "tasks[0].depends_on[1]: \"b\" is listed twice");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, depends_on: [a]}\n",
		     "tasks[0].depends_on: a dependency cycle: a -> a");
	expect_error(HEAD "tasks:\n"
			  "  - {task_id: start, command: x}\n"
			  "  - {task_id: a, command: x, depends_on: [start, c]}\n"
			  "  - {task_id: b, command: x, depends_on: [a]}\n"
			  "  - {task_id: c, command: x, depends_on: [b]}\n",
		     "d.yaml:4: tasks[1].depends_on: a dependency cycle: a -> c -> b -> a");
	/* templates */
	expect_error(HEAD TASK_A "  - {task_id: b, command: 'echo {{ dss }}'}\n",
		     "d.yaml:4: tasks[1].command: column 6 of the template: unknown variable "
		     "\"dss\"");
	expect_error(HEAD "params: {x: 1}\n" TASK_A
			  "  - {task_id: b, command: 'echo {{ params.y }}'}\n",
		     "unknown variable \"params.y\"; known here: ds, ds_nodash");
	expect_error(HEAD TASK_A "  - {task_id: b, command: 'echo {{ item }}'}\n",
		     "unknown variable \"item\"");
	expect_error(HEAD TASK_A "  - {task_id: b, command: 'echo {{ outputs.a.n }}'}\n",
		     "tasks[1].command: column 6 of the template: unknown variable \"outputs.a.n\"");
	expect_error(HEAD "tasks:\n  - {task_id: a, command: x, foreach: [1]}\n"
			  "  - {task_id: b, command: 'echo {{ outputs.a.n }}', depends_on: [a]}\n",
		     "unknown variable \"outputs.a.n\"");
	expect_error(HEAD TASK_A "  - {task_id: b, command: 'echo {{ ds ', env: {A: b}}\n",
		     "{{ without a closing }}");
	expect_error(HEAD TASK_A "  - {task_id: b, command: x, env: {A: '{{ nope }}'}}\n",
		     "tasks[1].env.A: column 1 of the template: unknown variable \"nope\"");
	expect_error(HEAD "params: {x: 1}\n" TASK_A
			  "  - {task_id: b, command: 'echo `{{ params.x }}`'}\n",
		     "tasks[1].command: column 7 of the template: {{ params.x }} comes from "
		     "outside");
	expect_error(HEAD "tasks:\n  - task_id: a\n    job: {roles: {w: {command: 'x {{ y }}'}}}\n",
		     "tasks[0].job.roles.w.command: column 3 of the template: unknown variable");
	/* sql: and transfer: tasks */
	expect_error(HEAD "tasks:\n  - task_id: a\n    sql: {conn: pg}\n",
		     "tasks[0].sql: expected exactly one of statement and file");
	expect_error(HEAD "tasks:\n  - task_id: a\n    sql: {conn: pg, statement: x, "
			  "parameters: {d: '{{ nope }}'}}\n",
		     "tasks[0].sql.parameters.d: column 1 of the template: unknown variable");
	expect_error(HEAD "tasks:\n  - task_id: a\n    transfer: {from: {file: a.csv}, "
			  "to: {conn: r, redis: list, key: k}}\n",
		     "tasks[0].transfer.to.redis: expected hash, string or zset");
	expect_error(HEAD "tasks:\n  - task_id: a\n    transfer: {from: {conn: pg, query: q}, "
			  "to: {conn: p2, table: t, mode: upsert}}\n",
		     "tasks[0].transfer.to.key: upsert needs a key");
	expect_error(HEAD "tasks:\n  - task_id: a\n    transfer: {from: {conn: pg, query: q}, "
			  "to: {file: '{{ params.dir }}/x.csv'}}\n",
		     "tasks[0].transfer.to.file: column 1 of the template: unknown variable");
	assert_int_equal(bad_mismatches, 0);
}

/* Airflow's pool_slots: per task, from default_args, 1 when neither says;
 * a whole number >= 1, the error naming the file, line, task and key; and
 * kept through the JSON a server stores. */
static void test_pool_slots(void **state)
{
	struct weir_error err = {0};
	struct dag_spec *d, *e;
	json_t *j;

	(void)state;
	d = parse_ok("dag_id: x\n"
		     "default_args: {pool: gpu, pool_slots: 2}\n"
		     "tasks:\n"
		     "  - {task_id: a, command: 'true'}\n"
		     "  - {task_id: b, command: 'true', pool_slots: 4}\n"
		     "  - {task_id: c, command: 'true', pool: other}\n");
	assert_int_equal(d->tasks[0].pool_slots, 2);
	assert_string_equal(d->tasks[0].pool_slots_at, "default_args.pool_slots");
	assert_int_equal(d->tasks[1].pool_slots, 4);
	assert_string_equal(d->tasks[1].pool_slots_at, "tasks[1].pool_slots");
	assert_int_equal(d->tasks[2].pool_slots, 2);
	j = dag_spec_to_json(d);
	e = dag_spec_from_json(j, "api", NULL, &err);
	if (!e)
		fail_msg("%s", err.msg);
	assert_int_equal(e->tasks[1].pool_slots, 4);
	assert_int_equal(e->default_args.pool_slots, 2);
	json_decref(j);
	dag_spec_destroy(e);
	dag_spec_destroy(d);

	d = parse_ok(HEAD TASK_A);
	assert_int_equal(d->tasks[0].pool_slots, 1);
	assert_string_equal(d->tasks[0].pool_slots_at, "");
	dag_spec_destroy(d);

	d = parse(HEAD "tasks:\n  - task_id: a\n    command: x\n    pool_slots: 0\n", &err);
	assert_null(d);
	assert_non_null(strstr(err.msg, "d.yaml:5: tasks[0].pool_slots: expected an integer from 1"));
	d = parse(HEAD "default_args: {pool_slots: two}\n" TASK_A, &err);
	assert_null(d);
	assert_non_null(strstr(err.msg, "d.yaml:2: default_args.pool_slots: expected an integer"));
}

static void test_templates_and_foreach(void **state)
{
	(void)state;
	struct dag_spec *d = parse_ok(
		HEAD "params: {models: [als, gbdt], n: 2}\n"
		"tasks:\n"
		"  - {task_id: prep, command: 'echo {\"rows\": 3} > \"$WEIR_OUTPUT\"'}\n"
		"  - {task_id: mid, command: 'echo {{ outputs.prep.rows }}', depends_on: [prep]}\n"
		"  - task_id: train\n"
		"    depends_on: [mid]\n"
		"    foreach: '{{ params.models }}'\n"
		"    command: 'train {{ item }} {{ outputs.prep.rows }} {{ params.n }}'\n"
		"  - {task_id: lit, command: 'x {{ item }}', foreach: [a, 2]}\n");
	struct weir_error err = {0};
	const struct dag_task *t = dag_spec_find_task(d, "train");
	json_t *items = dag_task_foreach_items(d, t, NULL, &err);
	assert_non_null(items);
	assert_int_equal(json_array_size(items), 2);
	json_decref(items);
	/* a trigger's conf overrides params */
	json_t *conf = json_pack("{s:[s,s,s]}", "models", "a", "b", "c");
	json_t *params = dag_spec_run_params(d, conf, &err);
	assert_non_null(params);
	assert_int_equal(json_integer_value(json_object_get(params, "n")), 2);
	items = dag_task_foreach_items(d, t, params, &err);
	assert_int_equal(json_array_size(items), 3);
	json_decref(items);
	json_decref(params);
	json_decref(conf);
	conf = json_pack("{s:s}", "models", "als");
	params = dag_spec_run_params(d, conf, &err);
	assert_null(dag_task_foreach_items(d, t, params, &err));
	assert_non_null(strstr(err.msg, "params.models: task train fans out over it; expected a "
				       "list, got a string"));
	json_decref(params);
	json_decref(conf);
	conf = json_pack("[i]", 1);
	assert_null(dag_spec_run_params(d, conf, &err));
	json_decref(conf);
	t = dag_spec_find_task(d, "lit");
	items = dag_task_foreach_items(d, t, NULL, &err);
	assert_int_equal(json_array_size(items), 2);
	json_decref(items);
	assert_null(dag_task_foreach_items(d, dag_spec_find_task(d, "mid"), NULL, &err));
	assert_string_equal(trigger_rule_name(TRIGGER_ONE_FAILED), "one_failed");
	enum trigger_rule rule;
	assert_int_equal(trigger_rule_from_name("none_skipped", &rule), 0);
	assert_int_equal(rule, TRIGGER_NONE_SKIPPED);
	assert_int_equal(trigger_rule_from_name("All_Success", &rule), -1);
	dag_spec_destroy(d);
}

static void test_examples(void **state)
{
	(void)state;
	DIR *dir = opendir("examples/dags");
	if (!dir)
		fail_msg("examples/dags not found: run from the repository root");
	struct dirent *e;
	int parsed = 0;
	while ((e = readdir(dir))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
			continue;
		char path[512];
		snprintf(path, sizeof path, "examples/dags/%s", e->d_name);
		struct weir_error err = {0};
		struct dag_spec *d = dag_spec_parse_file(path, &err);
		if (!d)
			fail_msg("%s", err.msg);
		json_t *j = dag_spec_to_json(d);
		assert_non_null(j);
		json_decref(j);
		dag_spec_destroy(d);
		parsed++;
	}
	closedir(dir);
	assert_true(parsed >= 2);

	struct weir_error err = {0};
	assert_null(dag_spec_parse_file("examples/dags/no-such.yaml", &err));
	assert_non_null(strstr(err.msg, "no-such.yaml"));
}

/* `access:`: names to permissions in weir's words, Airflow's and Airflow's
 * per-resource form; edit includes read; the JSON round trip keeps it; bad
 * values name the field */
static void test_access(void **state)
{
	struct weir_error err = {0};
	struct dag_spec *d, *back;
	json_t *j;

	(void)state;
	d = parse_ok(HEAD "access:\n"
	                  "  ann: edit\n"
	                  "  Viewer: [can_read]\n"
	                  "  ops: {DAGs: [can_read], DAG Runs: [can_create]}\n"
	                  "  bob: [read, can_delete]\n"
	                  "  eve: []\n" TASK_A);
	assert_true(d->access.set);
	assert_int_equal(d->access.n, 5);
	assert_string_equal(d->access.v[0].who, "ann");
	assert_int_equal(d->access.v[0].perms, DAG_ACCESS_READ | DAG_ACCESS_EDIT);
	assert_string_equal(d->access.v[1].who, "Viewer");
	assert_int_equal(d->access.v[1].perms, DAG_ACCESS_READ);
	assert_int_equal(d->access.v[2].perms, DAG_ACCESS_READ | DAG_ACCESS_EDIT);
	assert_int_equal(d->access.v[3].perms, DAG_ACCESS_READ | DAG_ACCESS_EDIT);
	assert_int_equal(d->access.v[4].perms, 0);
	j = dag_spec_to_json(d);
	back = dag_spec_from_json(j, "d.json", "/dags", &err);
	if (!back)
		fail_msg("%s", err.msg);
	assert_int_equal(back->access.n, 5);
	assert_int_equal(back->access.v[1].perms, DAG_ACCESS_READ);
	assert_int_equal(back->access.v[4].perms, 0);
	dag_spec_destroy(back);
	json_decref(j);
	dag_spec_destroy(d);
	/* none: not set; an empty one is set (only an Admin reaches the DAG) */
	d = parse_ok(HEAD TASK_A);
	assert_false(d->access.set);
	dag_spec_destroy(d);
	d = parse_ok(HEAD "access: {}\n" TASK_A);
	assert_true(d->access.set);
	assert_int_equal(d->access.n, 0);
	dag_spec_destroy(d);

	bad_mismatches = 0;
	expect_error(HEAD "access: [ann]\n" TASK_A, "access: expected a mapping of roles or users");
	expect_error(HEAD "access: {ann: fly}\n" TASK_A,
	             "access.ann: expected read, edit, can_read, can_edit or can_delete");
	expect_error(HEAD "access: {ann: [read, 3]}\n" TASK_A, "access.ann[1]: expected a string");
	expect_error(HEAD "access: {ann: {Pools: [can_read]}}\n" TASK_A, "Pools");
	expect_error(HEAD "access: {ann: {DAGs: [can_create]}}\n" TASK_A,
	             "access.ann.DAGs[0]: expected can_read, can_edit or can_delete");
	expect_error(HEAD "access: {ann: {DAGs: [edit]}}\n" TASK_A, "access.ann.DAGs");
	assert_int_equal(bad_mismatches, 0);
}

/* max_active_tis_per_dag(run): read, 0 meaning none, written back and
 * read again; a count under 1 refused with its field. */
static void test_task_concurrency(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_spec *d = parse_ok(HEAD "tasks:\n"
	                                   "  - {task_id: a, command: 'true', max_active_tis_per_dag: 2,"
	                                   " max_active_tis_per_dagrun: 1}\n"
	                                   "  - {task_id: b, command: 'true'}\n");
	assert_int_equal(d->tasks[0].max_active_tis_per_dag, 2);
	assert_int_equal(d->tasks[0].max_active_tis_per_dagrun, 1);
	assert_int_equal(d->tasks[1].max_active_tis_per_dag, 0);
	assert_int_equal(d->tasks[1].max_active_tis_per_dagrun, 0);
	json_t *j = dag_spec_to_json(d);
	json_t *t = json_array_get(json_object_get(j, "tasks"), 0);
	assert_int_equal(json_integer_value(json_object_get(t, "max_active_tis_per_dag")), 2);
	assert_null(json_object_get(json_array_get(json_object_get(j, "tasks"), 1),
	                            "max_active_tis_per_dag"));
	struct dag_spec *e = dag_spec_from_json(j, "api", NULL, &err);
	if (!e)
		fail_msg("%s", err.msg);
	assert_int_equal(e->tasks[0].max_active_tis_per_dagrun, 1);
	json_decref(j);
	dag_spec_destroy(d);
	dag_spec_destroy(e);

	bad_mismatches = 0;
	expect_error(HEAD "tasks:\n  - {task_id: a, command: 'true', max_active_tis_per_dag: 0}\n",
	             "tasks[0].max_active_tis_per_dag: expected");
	expect_error(HEAD
	             "tasks:\n  - {task_id: a, command: 'true', max_active_tis_per_dagrun: x}\n",
	             "tasks[0].max_active_tis_per_dagrun: expected");
	assert_int_equal(bad_mismatches, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_access),
		cmocka_unit_test(test_full_dag),   cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_round_trip), cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_pool_slots), cmocka_unit_test(test_task_concurrency),
		cmocka_unit_test(test_templates_and_foreach), cmocka_unit_test(test_examples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
