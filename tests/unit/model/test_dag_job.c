/* Tests of a DAG task's try as a job (model/dag_job.h): every field the
 * DAG sets on a command task's job and on a job task's, the environment in
 * its order, the command shown by the API, and the errors.  The expected
 * jobs are what the manager's former JSON path (a job spec's JSON built,
 * then read back) produced for the same tasks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dag_job.h"
#include "model/job_spec_edit.h"

#define OUT_PATH "/home/dag_runs/7/t.-1.1.output.json"

/* ---- fixtures ---- */

static const char *const DAG = "dag_id: nightly\n"
                               "params: {table: events, models: [als, knn], limit: 100, dir: /out}\n"
                               "default_args: {priority: 2}\n"
                               "tasks:\n"
                               "  - task_id: extract\n"
                               "    command: count {{ params.table }} --day {{ ds }} > rows\n"
                               "    env: {DAY: \"{{ ds }}\", N: 3, WEIR_TRY_NUMBER: mine}\n"
                               "    cwd: /srv/it's here/{{ ds_nodash }}\n"
                               "    execution_timeout: 90s\n"
                               "    queue: cpu\n"
                               "    resources: {memory: 3g, vcores: 4, gpus: 1}\n"
                               "    slurm: {partition: short, sbatch_options: [--exclusive]}\n"
                               "  - task_id: train\n"
                               "    depends_on: [extract]\n"
                               "    foreach: \"{{ params.models }}\"\n"
                               "    priority: 9\n"
                               "    queue: gpu\n"
                               "    command: train --model {{ item }} --rows "
                               "{{ outputs.extract.rows }}\n"
                               "  - task_id: plain\n"
                               "    priority: 0\n"
                               "    command: \"true\"\n"
                               "  - task_id: dist\n"
                               "    depends_on: [extract]\n"
                               "    execution_timeout: 2h\n"
                               "    job:\n"
                               "      src_dir: /src\n"
                               "      entry_point: train.py\n"
                               "      params: --day {{ ds }} --table {{ params.table }}\n"
                               "      env: {WEIR_DS: old, KEEP: 1}\n"
                               "      timeouts: {allocation: 60}\n"
                               "      artifacts: [/data/venv.zip]\n"
                               "      roles:\n"
                               "        chief: {command: \"python lead.py {{ ds }}\"}\n"
                               "        worker: {instances: 2, memory: 1g}\n"
                               "        board: {sidecar: true, command: tensorboard}\n"
                               "  - task_id: named\n"
                               "    priority: 0\n"
                               "    slurm: {account: ml, time: 90}\n"
                               "    job:\n"
                               "      name: own-name\n"
                               "      queue: big\n"
                               "      priority: 5\n"
                               "      slurm: {partition: long, qos: high}\n"
                               "      roles: {worker: {command: run}}\n"
                               "  - task_id: export\n"
                               "    transfer:\n"
                               "      from: {conn: pg, query: 'SELECT * FROM t WHERE d = :d',\n"
                               "             parameters: {d: \"{{ ds }}\"}}\n"
                               "      to: {file: \"{{ params.dir }}/{{ params.table }}-{{ ds }}.csv\"}\n"
                               "  - task_id: reload\n"
                               "    transfer:\n"
                               "      from: {file: \"in/{{ ds_nodash }}.jsonl\"}\n"
                               "      to: {file: \"{{ params.table }}.csv\"}\n";

struct fixture {
	struct dag_spec *dag;
	json_t *params, *outputs;
	struct template_run run;
	struct dag_job_try t;
};

static void setup(struct fixture *f, const char *task_id, int map_index, const char *item)
{
	struct weir_error err = {0};

	memset(f, 0, sizeof *f);
	f->dag = dag_spec_parse_string(DAG, strlen(DAG), "d.yaml", "/dags", &err);
	if (!f->dag)
		fail_msg("%s", err.msg);
	f->params = dag_spec_run_params(f->dag, NULL, &err);
	f->outputs = json_pack("{s:{s:i}}", "extract", "rows", 42);
	f->run.dag_id = f->dag->dag_id;
	f->run.run_id = "manual__2024-03-05T06:00:00+00:00";
	f->run.task_id = task_id;
	f->run.logical_ms = 1709618400000LL; /* 2024-03-05T06:00:00Z */
	f->run.interval_start_ms = f->run.logical_ms;
	f->run.interval_end_ms = f->run.logical_ms + 86400000LL;
	f->run.try_number = 2;
	f->run.params = f->params;
	f->run.outputs = f->outputs;
	f->run.item = item;
	f->t.task = dag_spec_find_task(f->dag, task_id);
	assert_non_null(f->t.task);
	f->t.run = &f->run;
	f->t.map_index = map_index;
	f->t.priority = f->t.task->priority;
	f->t.output_path = OUT_PATH;
	f->t.pool_queue = NULL;
	f->t.job = f->t.task->job;
}

static void teardown(struct fixture *f)
{
	json_decref(f->params);
	json_decref(f->outputs);
	dag_spec_destroy(f->dag);
}

/* The environment every try of the fixture's run gets, from WEIR_DS_NODASH
 * to WEIR_DAG_ID (WEIR_DS comes first, where a job's own WEIR_DS was). */
#define RUN_ENV                                                                                    \
	"WEIR_DS_NODASH=20240305", "WEIR_TS=2024-03-05T06:00:00+00:00",                            \
	    "WEIR_LOGICAL_DATE=2024-03-05T06:00:00+00:00",                                         \
	    "WEIR_DATA_INTERVAL_START=2024-03-05T06:00:00+00:00",                                  \
	    "WEIR_DATA_INTERVAL_END=2024-03-06T06:00:00+00:00",                                    \
	    "WEIR_RUN_ID=manual__2024-03-05T06:00:00+00:00", "WEIR_DAG_ID=nightly"
#define PARAM_ENV                                                                                  \
	"WEIR_PARAM_table=events", "WEIR_PARAM_models=[\"als\",\"knn\"]", "WEIR_PARAM_limit=100", \
	    "WEIR_PARAM_dir=/out"
/* What try 2 of a task that is no foreach instance gets, in order. */
#define TRY_ENV(task)                                                                              \
	"WEIR_DS=2024-03-05", RUN_ENV, "WEIR_TASK_ID=" task, "WEIR_TRY_NUMBER=2", PARAM_ENV,       \
	    "WEIR_OUTPUT=" OUT_PATH

/* The job of `t` is `expected` (a job spec in YAML, its defaults as a
 * submitted job's), with exactly the environment `env` in that order
 * (NULL-terminated "NAME=value"), and the API shows `command`. */
static void assert_job(const struct dag_job_try *t, const char *expected, const char *const *env,
                       const char *command)
{
	struct weir_error err = {0};
	char *cmd = NULL;
	struct job_spec *got = dag_job_build(t, &cmd, &err);
	struct job_spec *want =
	    job_spec_parse_string(expected, strlen(expected), "want", NULL, &err);
	size_t n = 0;

	if (!got)
		fail_msg("%s", err.msg);
	if (!want)
		fail_msg("expected job: %s", err.msg);
	assert_string_equal(cmd, command);
	for (; env[n]; n++) {
		char *eq = strchr(env[n], '=');
		assert_true(n < got->n_env);
		assert_int_equal(strlen(got->env[n].name), (size_t)(eq - env[n]));
		assert_memory_equal(got->env[n].name, env[n], (size_t)(eq - env[n]));
		assert_string_equal(got->env[n].value, eq + 1);
	}
	assert_int_equal(got->n_env, n);
	/* the rest, field by field through the job's JSON form (it has them all);
	 * roles in their order, with the flag the JSON form writes merged */
	json_t *jg = job_spec_to_json(got), *jw = job_spec_to_json(want);
	json_object_del(jg, "env");
	json_object_del(jw, "env");
	char *tg = json_dumps(jg, JSON_SORT_KEYS), *tw = json_dumps(jw, JSON_SORT_KEYS);
	assert_string_equal(tg, tw);
	assert_int_equal(got->n_roles, want->n_roles);
	for (size_t i = 0; i < got->n_roles; i++) {
		assert_string_equal(got->roles[i].name, want->roles[i].name);
		assert_int_equal(got->roles[i].untracked, want->roles[i].untracked);
	}
	free(tg);
	free(tw);
	json_decref(jg);
	json_decref(jw);
	job_spec_destroy(got);
	job_spec_destroy(want);
	free(cmd);
}

static void assert_fails(const struct dag_job_try *t, enum weir_error_kind kind, const char *msg)
{
	struct weir_error err = {0};
	char *cmd = (char *)"unset";
	struct job_spec *got = dag_job_build(t, &cmd, &err);

	assert_null(got);
	assert_null(cmd);
	assert_int_equal(err.kind, kind);
	assert_string_equal(err.msg, msg);
}

/* Every field a command task sets: cwd quoted into the command, templates,
 * resources, timeout, the TI's priority, the task's queue over its pool's,
 * its slurm, env rendered raw over the try's (WEIR_TRY_NUMBER here). */
static void test_command_task(void **state)
{
	struct fixture f;
	const char *const env[] = {"WEIR_DS=2024-03-05",   RUN_ENV,   "WEIR_TASK_ID=extract",
	                           "WEIR_TRY_NUMBER=mine", PARAM_ENV, "WEIR_OUTPUT=" OUT_PATH,
	                           "DAY=2024-03-05",       "N=3",     NULL};
	const char *cmd =
	    "cd '/srv/it'\\''s here/20240305' && count 'events' --day 2024-03-05 > rows";
	char want[1024];

	(void)state;
	snprintf(want, sizeof want,
	         "name: nightly.extract\n"
	         "priority: 2\n"
	         "timeouts: {execution: 90}\n"
	         "queue: cpu\n"
	         "slurm: {partition: short, sbatch_options: [--exclusive]}\n"
	         "roles:\n"
	         "  task: {instances: 1, memory: 3g, vcores: 4, gpus: 1, command: \"%s\"}\n",
	         "cd '/srv/it'\\\\''s here/20240305' && count 'events' --day 2024-03-05 > rows");
	setup(&f, "extract", -1, NULL);
	assert_job(&f.t, want, env, cmd);
	f.t.pool_queue = "pooled";
	assert_job(&f.t, want, env, cmd);
	teardown(&f);
}

/* A foreach instance: its item in the command and WEIR_ITEM, DAG.TASK.N,
 * an upstream's output, the parser's default resources. */
static void test_command_task_instance(void **state)
{
	struct fixture f;
	const char *const env[] = {"WEIR_DS=2024-03-05",    RUN_ENV,   "WEIR_TASK_ID=train",
	                           "WEIR_TRY_NUMBER=2",     PARAM_ENV, "WEIR_ITEM=knn",
	                           "WEIR_MAP_INDEX=1",
	                           "WEIR_OUTPUT=" OUT_PATH, NULL};

	(void)state;
	setup(&f, "train", 1, "knn");
	assert_job(&f.t,
	           "name: nightly.train.1\n"
	           "priority: 9\n"
	           "queue: gpu\n"
	           "roles: {task: {memory: 2g, command: \"train --model 'knn' --rows '42'\"}}\n",
	           env, "train --model 'knn' --rows '42'");
	teardown(&f);
}

/* No queue of its own: none, or its pool's; no memory at all: 512m. */
static void test_command_task_defaults(void **state)
{
	struct fixture f;
	const char *const env[] = {TRY_ENV("plain"), NULL};

	(void)state;
	setup(&f, "plain", -1, NULL);
	assert_job(&f.t, "name: nightly.plain\nroles: {task: {memory: 2g, command: \"true\"}}\n",
	           env, "true");
	f.t.pool_queue = "pooled";
	assert_job(&f.t,
	           "name: nightly.plain\nqueue: pooled\n"
	           "roles: {task: {memory: 2g, command: \"true\"}}\n",
	           env, "true");
	f.dag->tasks[dag_spec_task_index(f.dag, "plain")].resources.memory_mb = 0;
	assert_job(&f.t,
	           "name: nightly.plain\nqueue: pooled\n"
	           "roles: {task: {memory: 512m, command: \"true\"}}\n",
	           env, "true");
	teardown(&f);
}

/* An inline job: params and role commands rendered, a role without a
 * command shown with the entry point, a sidecar, the job's env kept and
 * the try's over it (WEIR_DS in its place), the DAG's name for a job
 * named "job", the task's timeout over the job's, its other timeouts kept,
 * the TI's priority unless 0. */
static void test_job_task(void **state)
{
	struct fixture f;
	const char *const env[] = {"WEIR_DS=2024-03-05",
	                           "KEEP=1",
	                           RUN_ENV,
	                           "WEIR_TASK_ID=dist",
	                           "WEIR_TRY_NUMBER=2",
	                           PARAM_ENV,
	                           "WEIR_OUTPUT=" OUT_PATH,
	                           NULL};
	const char *job = "name: nightly.dist\n"
	                  "src_dir: /src\n"
	                  "entry_point: train.py\n"
	                  "params: --day 2024-03-05 --table 'events'\n"
	                  "timeouts: {allocation: 60, execution: 7200}\n"
	                  "artifacts: [/data/venv.zip]\n"
	                  "roles:\n"
	                  "  chief: {command: \"python lead.py 2024-03-05\"}\n"
	                  "  worker: {instances: 2, memory: 1g}\n"
	                  "  board: {sidecar: true, command: tensorboard}\n";
	const char *cmd = "chief: python lead.py 2024-03-05\nworker: train.py\nboard: tensorboard";
	char want[1024];

	(void)state;
	setup(&f, "dist", -1, NULL);
	snprintf(want, sizeof want, "%spriority: 2\n", job);
	assert_job(&f.t, want, env, cmd);
	f.t.priority = 0;
	assert_job(&f.t, job, env, cmd);
	teardown(&f);
}

/* A job with its own name, queue and priority keeps them (a pool's queue
 * too); the task's slurm replaces the job's whole. */
static void test_job_task_own_settings(void **state)
{
	struct fixture f;
	const char *const env[] = {TRY_ENV("named"), NULL};
	const char *want = "name: own-name\n"
	                   "priority: 5\n"
	                   "queue: big\n"
	                   "slurm: {account: ml, time: \"90\"}\n"
	                   "roles: {worker: {command: run}}\n";

	(void)state;
	setup(&f, "named", -1, NULL);
	assert_job(&f.t, want, env, "worker: run");
	f.t.pool_queue = "pooled";
	assert_job(&f.t, want, env, "worker: run");
	teardown(&f);
}

/* The job of a spec file (every field of a job kept), and one made in code
 * whose sidecar is not marked untracked (as tony_to_spec() makes them): it
 * comes out untracked, as a job read back from JSON does. */
static void test_job_bases(void **state)
{
	struct fixture f;
	struct weir_error err = {0};
	const char *text = "name: job\n"
	                   "framework: pytorch\n"
	                   "python: venv/bin/python\n"
	                   "entry_point: main.py\n"
	                   "success_policy: all\n"
	                   "fail_on_worker_failure: true\n"
	                   "restart: {max_restarts: 3, retry_exit_codes: 137}\n"
	                   "roles:\n"
	                   "  worker: {instances: 3, vcores: 2, gpus: 1, env: {R: \"{{ ds }}\"},\n"
	                   "           stop_on_failure: true}\n"
	                   "  ps: {untracked: true, command: \"serve '{{ ds }}'\"}\n";
	const char *const env[] = {TRY_ENV("dist"), NULL};
	struct job_spec *file = job_spec_parse_string(text, strlen(text), "job.yaml", "/j", &err);
	struct job_spec *made = job_spec_create();
	struct role_spec *r;

	(void)state;
	assert_non_null(file);
	r = job_spec_add_role(made, "worker", &err);
	job_spec_set_string(&r->command, "python w.py {{ params.limit }}", &err);
	r = job_spec_add_role(made, "tb", &err);
	job_spec_set_string(&r->command, "tensorboard", &err);
	r->sidecar = true;
	setup(&f, "dist", -1, NULL);
	f.t.job = file;
	assert_job(&f.t,
	           "name: nightly.dist\n"
	           "framework: pytorch\n"
	           "priority: 2\n"
	           "python: venv/bin/python\n"
	           "entry_point: main.py\n"
	           "success_policy: all\n"
	           "fail_on_worker_failure: true\n"
	           "restart: {max_restarts: 3, retry_exit_codes: 137}\n"
	           "timeouts: {execution: 7200}\n"
	           "roles:\n"
	           "  worker: {instances: 3, vcores: 2, gpus: 1, env: {R: \"{{ ds }}\"},\n"
	           "           stop_on_failure: true}\n"
	           "  ps: {untracked: true, command: \"serve '2024-03-05'\"}\n",
	           env, "worker: main.py\nps: serve '2024-03-05'");
	f.t.job = made;
	assert_job(&f.t,
	           "name: nightly.dist\n"
	           "priority: 2\n"
	           "timeouts: {execution: 7200}\n"
	           "roles:\n"
	           "  worker: {command: \"python w.py '100'\"}\n"
	           "  tb: {sidecar: true, untracked: true, command: tensorboard}\n",
	           env, "worker: python w.py '100'\ntb: tensorboard");
	assert_false(made->roles[1].untracked); /* the task's job is not changed */
	teardown(&f);
	job_spec_destroy(file);
	job_spec_destroy(made);
}

static void test_errors(void **state)
{
	struct fixture f;
	struct weir_error err = {0};
	json_t *conf = json_pack("{s:s}", "bad-name", "x");
	char long_id[140];
	struct job_spec *made;
	struct role_spec *r;
	const char *known = "known here: ds, ds_nodash, ts, logical_date, data_interval_start, "
	                    "data_interval_end, run_id, dag_id, task_id, try_number";
	char msg[WEIR_ERROR_MSG_MAX];

	(void)state;
	/* an output that is not there */
	setup(&f, "train", 0, "als");
	json_decref(f.outputs);
	f.outputs = json_object();
	f.run.outputs = f.outputs;
	snprintf(msg, sizeof msg,
	         "command: column 33 of the template: unknown variable \"outputs.extract.rows\"; "
	         "%s, params.table, params.models, params.limit, params.dir, item",
	         known);
	assert_fails(&f.t, WEIR_E_INVALID, msg);
	teardown(&f);

	/* a conf key that makes no environment name, for both kinds of task */
	setup(&f, "extract", -1, NULL);
	json_decref(f.params);
	f.params = dag_spec_run_params(f.dag, conf, &err);
	f.run.params = f.params;
	assert_fails(&f.t, WEIR_E_INVALID,
	             "job: env.WEIR_PARAM_bad-name: expected an environment variable name like "
	             "[A-Za-z_][A-Za-z0-9_]*");
	f.t.task = dag_spec_find_task(f.dag, "dist");
	f.t.job = f.t.task->job;
	assert_fails(&f.t, WEIR_E_INVALID,
	             "job: env.WEIR_PARAM_bad-name: expected an environment variable name like "
	             "[A-Za-z_][A-Za-z0-9_]*");
	teardown(&f);

	/* a name over 128 characters */
	setup(&f, "extract", -1, NULL);
	memset(long_id, 'd', sizeof long_id - 1);
	long_id[sizeof long_id - 1] = '\0';
	f.run.dag_id = long_id;
	assert_fails(&f.t, WEIR_E_INVALID, "job: name: expected a name of 1 to 128 characters");
	teardown(&f);

	/* job.params, then a role's command, that do not render */
	setup(&f, "dist", -1, NULL);
	json_decref(f.params);
	f.params = json_object();
	f.run.params = f.params;
	snprintf(msg, sizeof msg,
	         "job.params: column 24 of the template: unknown variable \"params.table\"; "
	         "%s, outputs.extract.rows",
	         known);
	assert_fails(&f.t, WEIR_E_INVALID, msg);
	made = job_spec_create();
	r = job_spec_add_role(made, "worker", &err);
	job_spec_set_string(&r->command, "python w.py {{ params.limit }}", &err);
	f.t.job = made;
	snprintf(msg, sizeof msg,
	         "job.roles.worker.command: column 13 of the template: unknown variable "
	         "\"params.limit\"; %s, outputs.extract.rows",
	         known);
	assert_fails(&f.t, WEIR_E_INVALID, msg);
	job_spec_destroy(made);

	/* a job task without its job */
	f.t.job = NULL;
	assert_fails(&f.t, WEIR_E_INTERNAL, "task dist: no job to run");
	teardown(&f);
	json_decref(conf);
}

/* A transfer's file paths are templated like cwd: one that starts with a
 * template is kept as written and must render absolute, one that does not
 * is the DAG folder's. */
static void test_transfer_files(void **state)
{
	struct fixture f;
	struct weir_error err = {0};
	char *cmd = NULL;
	struct job_spec *got;
	const char *spec = NULL;

	(void)state;
	setup(&f, "export", -1, NULL);
	got = dag_job_build(&f.t, &cmd, &err);
	if (!got)
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < got->n_env; i++)
		if (!strcmp(got->env[i].name, "WEIR_DATA_SPEC"))
			spec = got->env[i].value;
	assert_non_null(spec);
	assert_string_equal(spec, "{\"from\":{\"conn\":\"pg\",\"query\":\"SELECT * FROM t WHERE d = :d\","
	                          "\"parameters\":{\"d\":\"2024-03-05\"}},\"to\":{\"file\":"
	                          "\"/out/events-2024-03-05.csv\"}}");
	job_spec_destroy(got);
	free(cmd);
	teardown(&f);

	setup(&f, "reload", -1, NULL);
	assert_fails(&f.t, WEIR_E_INVALID,
	             "transfer.to.file: expected an absolute path, got \"events.csv\"");
	teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_command_task),
	    cmocka_unit_test(test_command_task_instance),
	    cmocka_unit_test(test_command_task_defaults),
	    cmocka_unit_test(test_job_task),
	    cmocka_unit_test(test_job_task_own_settings),
	    cmocka_unit_test(test_job_bases),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_transfer_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
