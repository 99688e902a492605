/* Tests of a DAG task's try as a job (model/dag_job.h): the typed result
 * against the JSON path the DAG manager used to take, for representative
 * tasks and errors. */
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

/* ---- the JSON path (build_job before dag_job_build), for comparison ---- */

static char *legacy_quote(const char *s)
{
	size_t n = 3;
	char *out, *p;
	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	out = malloc(n);
	p = out;
	*p++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *c;
		}
	}
	*p++ = '\'';
	*p = '\0';
	return out;
}

static int render_into(json_t *obj, const char *key, const struct template_ctx *ctx,
                       enum template_mode mode, const char *field, struct weir_error *err)
{
	json_t *v = json_object_get(obj, key);
	char *s;

	if (!json_is_string(v))
		return 0;
	s = template_render(json_string_value(v), ctx, mode, err);
	if (!s) {
		weir_error_prefix(err, "%s", field);
		return -1;
	}
	json_object_set_new(obj, key, json_string(s));
	free(s);
	return 0;
}

static struct job_spec *legacy_build(const struct dag_job_try *in, char **command,
                                     struct weir_error *err)
{
	const struct dag_task *t = in->task;
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct strvec env = STRVEC_INIT;
	json_t *j = NULL, *envj = NULL;
	char *cmd = NULL;
	struct job_spec *spec = NULL;
	char name[DAG_MAX_ID + 80];

	*command = NULL;
	if (template_ctx_fill(&ctx, in->run, err) < 0 || template_env(in->run, &env, err) < 0)
		goto out;
	envj = json_object();
	for (size_t i = 0; i < env.n; i++) {
		char *eq = strchr(env.v[i], '=');
		if (!eq)
			continue;
		*eq = '\0';
		json_object_set_new(envj, env.v[i], json_string(eq + 1));
		*eq = '=';
	}
	json_object_set_new(envj, "WEIR_OUTPUT", json_string(in->output_path));
	if (in->map_index >= 0)
		snprintf(name, sizeof name, "%s.%s.%d", in->run->dag_id, t->task_id, in->map_index);
	else
		snprintf(name, sizeof name, "%s.%s", in->run->dag_id, t->task_id);
	if (t->kind == DAG_TASK_COMMAND) {
		char mem[32];
		cmd = template_render(t->command, &ctx, TEMPLATE_SHELL, err);
		if (!cmd) {
			weir_error_prefix(err, "command");
			goto out;
		}
		if (t->cwd) {
			char *cwd = template_render(t->cwd, &ctx, TEMPLATE_RAW, err), *q, *c2 = NULL;
			if (!cwd) {
				weir_error_prefix(err, "cwd");
				goto out;
			}
			q = legacy_quote(cwd);
			free(cwd);
			if (asprintf(&c2, "cd %s && %s", q, cmd) < 0)
				c2 = NULL;
			free(q);
			free(cmd);
			cmd = c2;
		}
		for (size_t i = 0; i < t->n_env; i++) {
			char *v = template_render(t->env[i].value, &ctx, TEMPLATE_RAW, err);
			if (!v) {
				weir_error_prefix(err, "env.%s", t->env[i].name);
				goto out;
			}
			json_object_set_new(envj, t->env[i].name, json_string(v));
			free(v);
		}
		snprintf(mem, sizeof mem, "%llum",
		         (unsigned long long)(t->resources.memory_mb ? t->resources.memory_mb : 512));
		j = json_pack("{s:s, s:i, s:{s:{s:i, s:s, s:i, s:i, s:s}}, s:O, s:{s:I}}", "name",
		              name, "priority", in->priority, "roles", "task", "instances", 1,
		              "memory", mem, "vcores",
		              t->resources.vcores > 0 ? t->resources.vcores : 1, "gpus",
		              t->resources.gpus > 0 ? t->resources.gpus : 0, "command", cmd, "env",
		              envj, "timeouts", "execution", (json_int_t)t->execution_timeout_s);
		*command = cmd;
		cmd = NULL;
	} else {
		json_t *roles, *role, *jenv, *v;
		const char *rn, *k;
		char *all = NULL;

		j = job_spec_to_json(in->job);
		if (render_into(j, "params", &ctx, TEMPLATE_SHELL, "job.params", err) < 0)
			goto out;
		roles = json_object_get(j, "roles");
		json_object_foreach(roles, rn, role)
		{
			char field[128];
			snprintf(field, sizeof field, "job.roles.%s.command", rn);
			if (render_into(role, "command", &ctx, TEMPLATE_SHELL, field, err) < 0)
				goto out;
		}
		jenv = json_object_get(j, "env");
		if (!json_is_object(jenv)) {
			jenv = json_object();
			json_object_set_new(j, "env", jenv);
		}
		json_object_foreach(envj, k, v) json_object_set(jenv, k, v);
		if (!json_is_string(json_object_get(j, "name")) ||
		    !strcmp(json_string_value(json_object_get(j, "name")), "job"))
			json_object_set_new(j, "name", json_string(name));
		if (t->execution_timeout_s > 0) {
			json_t *to = json_object_get(j, "timeouts");
			if (!json_is_object(to)) {
				to = json_object();
				json_object_set_new(j, "timeouts", to);
			}
			json_object_set_new(to, "execution", json_integer(t->execution_timeout_s));
		}
		if (in->priority)
			json_object_set_new(j, "priority", json_integer(in->priority));
		json_object_foreach(roles, rn, role)
		{
			const char *c = json_string_value(json_object_get(role, "command"));
			char *n2 = NULL;
			if (!c)
				c = json_string_value(json_object_get(j, "entry_point"));
			if (asprintf(&n2, "%s%s%s: %s", all ? all : "", all ? "\n" : "", rn,
			             c ? c : "") < 0)
				n2 = NULL;
			free(all);
			all = n2;
		}
		*command = all ? all : strdup("");
	}
	if (t->queue)
		json_object_set_new(j, "queue", json_string(t->queue));
	else if (!json_is_string(json_object_get(j, "queue")) && in->pool_queue)
		json_object_set_new(j, "queue", json_string(in->pool_queue));
	if (t->slurm)
		json_object_set(j, "slurm", t->slurm);
	spec = job_spec_from_json(j, err);
	if (!spec) {
		weir_error_prefix(err, "job");
		free(*command);
		*command = NULL;
	}
out:
	template_ctx_release(&ctx);
	strvec_release(&env);
	json_decref(j);
	json_decref(envj);
	free(cmd);
	return spec;
}

/* ---- fixtures ---- */

static const char *const DAG = "dag_id: nightly\n"
                               "params: {table: events, models: [als, knn], limit: 100}\n"
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
                               "      roles: {worker: {command: run}}\n";

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

/* Both paths give the same job (as its JSON form, which carries every
 * field) and the same command, or the same error. */
static void assert_same(const struct dag_job_try *t)
{
	struct weir_error e1 = {0}, e2 = {0};
	char *c1 = NULL, *c2 = NULL;
	struct job_spec *s1 = dag_job_build(t, &c1, &e1);
	struct job_spec *s2 = legacy_build(t, &c2, &e2);

	if (!s2) {
		assert_null(s1);
		assert_null(c1);
		assert_string_equal(e1.msg, e2.msg);
		assert_int_equal(e1.kind, e2.kind);
		return;
	}
	if (!s1)
		fail_msg("typed: %s", e1.msg);
	json_t *j1 = job_spec_to_json(s1), *j2 = job_spec_to_json(s2);
	char *t1 = json_dumps(j1, JSON_SORT_KEYS), *t2 = json_dumps(j2, JSON_SORT_KEYS);
	assert_string_equal(t1, t2);
	assert_string_equal(c1, c2);
	/* env order too (the JSON form is a mapping) */
	assert_int_equal(s1->n_env, s2->n_env);
	for (size_t i = 0; i < s1->n_env; i++)
		assert_string_equal(s1->env[i].name, s2->env[i].name);
	assert_int_equal(s1->n_roles, s2->n_roles);
	for (size_t i = 0; i < s1->n_roles; i++)
		assert_string_equal(s1->roles[i].name, s2->roles[i].name);
	free(t1);
	free(t2);
	json_decref(j1);
	json_decref(j2);
	free(c1);
	free(c2);
	job_spec_destroy(s1);
	job_spec_destroy(s2);
}

static void test_compare_command_tasks(void **state)
{
	struct fixture f;

	(void)state;
	setup(&f, "extract", -1, NULL);
	assert_same(&f.t);
	f.t.pool_queue = "pooled"; /* the task's own queue (default_args) wins */
	assert_same(&f.t);
	teardown(&f);

	setup(&f, "train", 1, "knn");
	assert_same(&f.t);
	teardown(&f);

	setup(&f, "plain", -1, NULL);
	assert_same(&f.t);
	f.t.pool_queue = "pooled";
	assert_same(&f.t);
	teardown(&f);
}

static void test_compare_job_tasks(void **state)
{
	struct fixture f;

	(void)state;
	setup(&f, "dist", -1, NULL);
	assert_same(&f.t);
	f.t.priority = 0;
	assert_same(&f.t);
	teardown(&f);

	setup(&f, "named", -1, NULL);
	assert_same(&f.t);
	f.t.pool_queue = "pooled";
	assert_same(&f.t);
	teardown(&f);
}

/* A job read from a file, and one made in code with a sidecar that is not
 * marked untracked (tony_to_spec's kind): both paths agree. */
static void test_compare_job_bases(void **state)
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
	assert_same(&f.t);
	f.t.job = made;
	assert_same(&f.t);
	teardown(&f);
	job_spec_destroy(file);
	job_spec_destroy(made);
}

static void test_compare_errors(void **state)
{
	struct fixture f;
	struct weir_error err = {0};
	json_t *conf = json_pack("{s:s}", "bad-name", "x");
	char long_id[140];
	struct job_spec *made;
	struct role_spec *r;

	(void)state;
	/* an output that is not there */
	setup(&f, "train", 0, "als");
	json_decref(f.outputs);
	f.outputs = json_object();
	f.run.outputs = f.outputs;
	assert_same(&f.t);
	teardown(&f);

	/* a conf key that makes no environment name */
	setup(&f, "extract", -1, NULL);
	json_decref(f.params);
	f.params = dag_spec_run_params(f.dag, conf, &err);
	f.run.params = f.params;
	assert_same(&f.t);
	f.t.task = dag_spec_find_task(f.dag, "dist");
	f.t.job = f.t.task->job;
	assert_same(&f.t);
	teardown(&f);

	/* a name over 128 characters */
	setup(&f, "extract", -1, NULL);
	memset(long_id, 'd', sizeof long_id - 1);
	long_id[sizeof long_id - 1] = '\0';
	f.run.dag_id = long_id;
	assert_same(&f.t);
	teardown(&f);

	/* job.params and a role's command that do not render */
	setup(&f, "dist", -1, NULL);
	json_decref(f.params);
	f.params = json_object();
	f.run.params = f.params;
	assert_same(&f.t);
	made = job_spec_create();
	r = job_spec_add_role(made, "worker", &err);
	job_spec_set_string(&r->command, "python w.py {{ params.limit }}", &err);
	f.t.job = made;
	assert_same(&f.t);
	job_spec_destroy(made);
	teardown(&f);
	json_decref(conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare_command_tasks),
		cmocka_unit_test(test_compare_job_tasks),
		cmocka_unit_test(test_compare_job_bases),
		cmocka_unit_test(test_compare_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
