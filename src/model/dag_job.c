/* dag_job.c: a DAG task's try as a job spec (dag_job.h).
 *
 * Owns the rules of what a task's job is made of: the command task's
 * one-role job, the templating of a job task's job, and what the DAG sets
 * over either (environment, name, timeout, priority, route).  The job is
 * built field by field into a struct job_spec and validated at the end, so
 * errors read as a submitted job's would ("job: name: ...").
 */
#include "model/dag_job.h"
#include "model/connection.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shell.h"
#include "lib/strbuf.h"
#include "model/job_spec_edit.h"

/* The longest name the DAG gives a job: DAG.TASK.N, cut (the job's own
 * check then says that it is too long). */
#define DAG_JOB_NAME_MAX (DAG_MAX_ID + 80)
/* An error's field prefix ("env.NAME"), as long as weir_error_prefix() keeps. */
#define DAG_JOB_FIELD_MAX 256

/* Renders `tmpl` into *out (replacing it); `field` prefixes an error. */
static int render(char **out, const char *tmpl, const struct template_ctx *ctx,
                  enum template_mode mode, const char *field, struct weir_error *err)
{
	char *s = template_render(tmpl, ctx, mode, err);

	if (!s) {
		weir_error_prefix(err, "%s", field);
		return -1;
	}
	free(*out);
	*out = s;
	return 0;
}

static void slurm_release(struct job_slurm *sl)
{
	free(sl->partition);
	free(sl->account);
	free(sl->qos);
	free(sl->time);
	for (size_t i = 0; i < sl->n_sbatch_options; i++)
		free(sl->sbatch_options[i]);
	free(sl->sbatch_options);
	memset(sl, 0, sizeof *sl);
}

static int slurm_copy(struct job_slurm *dst, const struct job_slurm *src, struct weir_error *err)
{
	if (job_spec_set_string(&dst->partition, src->partition, err) < 0 ||
	    job_spec_set_string(&dst->account, src->account, err) < 0 ||
	    job_spec_set_string(&dst->qos, src->qos, err) < 0 ||
	    job_spec_set_string(&dst->time, src->time, err) < 0)
		return -1;
	if (src->n_sbatch_options == 0)
		return 0;
	dst->sbatch_options = calloc(src->n_sbatch_options + 1, sizeof *dst->sbatch_options);
	if (!dst->sbatch_options)
		return weir_error_oom(err);
	for (size_t i = 0; i < src->n_sbatch_options; i++) {
		if (job_spec_set_string(&dst->sbatch_options[i], src->sbatch_options[i], err) < 0)
			return -1;
		dst->n_sbatch_options++;
	}
	return 0;
}

static int env_copy(struct env_var **dst, size_t *n_dst, const struct env_var *src, size_t n,
                    struct weir_error *err)
{
	for (size_t i = 0; i < n; i++)
		if (env_list_set(dst, n_dst, src[i].name, src[i].value, err) < 0)
			return -1;
	return 0;
}

/* A deep copy of `src`.  A sidecar role comes out untracked, as every job
 * read from its JSON form does.  NULL with err. */
/* The ids of `from` added to `to` (once each). */
static int add_connections(struct strvec *to, const struct strvec *from, struct weir_error *err)
{
	for (size_t i = 0; i < from->n; i++)
		if (connection_list_add(to, from->v[i], err) < 0)
			return -1;
	return 0;
}

static struct job_spec *job_copy(const struct job_spec *src, struct weir_error *err)
{
	struct job_spec *s = job_spec_create();

	if (!s) {
		weir_error_oom(err);
		return NULL;
	}
	if (job_spec_set_string(&s->name, src->name, err) < 0 ||
	    job_spec_set_string(&s->queue, src->queue, err) < 0 ||
	    slurm_copy(&s->slurm, &src->slurm, err) < 0 ||
	    job_spec_set_string(&s->src_dir, src->src_dir, err) < 0 ||
	    job_spec_set_string(&s->entry_point, src->entry_point, err) < 0 ||
	    job_spec_set_string(&s->params, src->params, err) < 0 ||
	    job_spec_set_string(&s->python, src->python, err) < 0 ||
	    env_copy(&s->env, &s->n_env, src->env, src->n_env, err) < 0 ||
	    add_connections(&s->connections, &src->connections, err) < 0)
		goto fail;
	s->framework = src->framework;
	s->priority = src->priority;
	s->success = src->success;
	s->fail_on_worker_failure = src->fail_on_worker_failure;
	s->max_restarts = src->max_restarts;
	s->retry_exit_min = src->retry_exit_min;
	s->retry_exit_max = src->retry_exit_max;
	s->allocation_timeout_s = src->allocation_timeout_s;
	s->registration_timeout_s = src->registration_timeout_s;
	s->execution_timeout_s = src->execution_timeout_s;
	for (size_t i = 0; i < src->n_roles; i++) {
		const struct role_spec *from = &src->roles[i];
		struct role_spec *to = job_spec_add_role(s, from->name ? from->name : "", err);
		if (!to || job_spec_set_string(&to->command, from->command, err) < 0 ||
		    env_copy(&to->env, &to->n_env, from->env, from->n_env, err) < 0)
			goto fail;
		to->instances = from->instances;
		to->memory_mb = from->memory_mb;
		to->vcores = from->vcores;
		to->gpus = from->gpus;
		to->untracked = from->untracked || from->sidecar;
		to->stop_on_failure = from->stop_on_failure;
		to->sidecar = from->sidecar;
	}
	for (size_t i = 0; i < src->n_artifacts; i++) {
		const struct artifact *a = &src->artifacts[i];
		if (job_spec_add_artifact(s, a->path ? a->path : "", a->name ? a->name : "",
		                          a->archive, err) < 0)
			goto fail;
	}
	return s;
fail:
	job_spec_destroy(s);
	return NULL;
}

/* The task's variables: WEIR_VARIABLES (their keys, comma-separated) and
 * WEIR_VARIABLE_<i> (each value as it is, so that a secret one's mask
 * finds it). */
static int set_variables_env(struct job_spec *s, const struct strvec *vars, struct weir_error *err)
{
	struct strbuf keys = STRBUF_INIT;
	int rc = 0;

	for (size_t i = 0; vars && i < vars->n && rc == 0; i++) {
		const char *eq = strchr(vars->v[i], '=');
		char name[40];
		if (!eq)
			continue;
		if ((i && strbuf_addch(&keys, ',') < 0) ||
		    strbuf_add(&keys, vars->v[i], (size_t)(eq - vars->v[i])) < 0) {
			rc = weir_error_oom(err);
			break;
		}
		snprintf(name, sizeof name, "WEIR_VARIABLE_%zu", i);
		rc = env_list_set(&s->env, &s->n_env, name, eq + 1, err);
	}
	if (rc == 0 && vars && vars->n)
		rc = env_list_set(&s->env, &s->n_env, "WEIR_VARIABLES", keys.buf, err);
	strbuf_release(&keys);
	return rc;
}

/* The try's environment ("NAME=value" entries) into the job's, over what
 * it has, then WEIR_OUTPUT (and WEIR_RUN_OUTPUTS, the variables). */
static int set_try_env(struct job_spec *s, const struct strvec *env, const struct dag_job_try *t,
                       struct weir_error *err)
{
	const char *output_path = t->output_path;

	for (size_t i = 0; i < env->n; i++) {
		const char *eq = strchr(env->v[i], '=');
		char *name;
		int rc;
		if (!eq)
			continue;
		name = strndup(env->v[i], (size_t)(eq - env->v[i]));
		if (!name)
			return weir_error_oom(err);
		rc = env_list_set(&s->env, &s->n_env, name, eq + 1, err);
		free(name);
		if (rc < 0)
			return -1;
	}
	if (t->run_outputs_path &&
	    env_list_set(&s->env, &s->n_env, "WEIR_RUN_OUTPUTS", t->run_outputs_path, err) < 0)
		return -1;
	if (t->inlet_events_path &&
	    env_list_set(&s->env, &s->n_env, "WEIR_INLET_EVENTS", t->inlet_events_path, err) < 0)
		return -1;
	if (set_variables_env(s, t->variables, err) < 0)
		return -1;
	return env_list_set(&s->env, &s->n_env, "WEIR_OUTPUT", output_path ? output_path : "", err);
}

/* A transfer's spec[side].file rendered raw in place, like cwd; a path
 * that was a template must come out absolute. */
static int data_file(json_t *spec, const char *side, const struct template_ctx *ctx,
                     struct weir_error *err)
{
	json_t *v = json_object_get(json_object_get(spec, side), "file");
	const char *tmpl = json_string_value(v);
	char field[32], *s = NULL;
	int rc;

	if (!tmpl || !strstr(tmpl, "{{"))
		return 0;
	snprintf(field, sizeof field, "transfer.%s.file", side);
	if (render(&s, tmpl, ctx, TEMPLATE_RAW, field, err) < 0)
		return -1;
	if (s[0] != '/')
		rc = weir_error_set(err, WEIR_E_INVALID,
		                    "%s: expected an absolute path, got \"%s\"", field, s);
	else
		rc = json_string_set(v, s) < 0 ? weir_error_oom(err) : 0;
	free(s);
	return rc;
}

/* A sql, transfer or sensor task's spec: its mapping with each string
 * parameter rendered raw (the driver binds it; it never becomes SQL text),
 * a transfer's file paths, a sensor's templated fields. */
static char *data_spec(const struct dag_task *task, const struct template_ctx *ctx,
                       int64_t logical_ms, struct weir_error *err)
{
	json_t *spec, *params;
	const char *k;
	json_t *v;
	char *text = NULL;

	/* a sensor's: its mapping rendered for this try and the run's logical
	 * date (data/sensor_poke.h) */
	if (task->kind == DAG_TASK_SENSOR) {
		struct dag_sensor *r = dag_sensor_render(task->sensor, ctx, err);
		if (!r)
			return NULL;
		spec = json_pack("{sOsI}", "sensor", r->spec, "logical_date_ms",
		                 (json_int_t)logical_ms);
		dag_sensor_free(r);
	} else {
		spec = json_deep_copy(task->data);
	}
	if (!spec) {
		weir_error_oom(err);
		return NULL;
	}
	params = task->kind == DAG_TASK_SQL
	             ? json_object_get(spec, "parameters")
	             : json_object_get(json_object_get(spec, "from"), "parameters");
	json_object_foreach(params, k, v)
	{
		char *s = NULL;
		char field[DAG_JOB_FIELD_MAX];
		if (!json_is_string(v))
			continue;
		snprintf(field, sizeof field, "%s.parameters.%s",
		         task->kind == DAG_TASK_SQL ? "sql" : "transfer.from", k);
		if (render(&s, json_string_value(v), ctx, TEMPLATE_RAW, field, err) < 0)
			goto out;
		json_string_set(v, s);
		free(s);
	}
	if (task->kind == DAG_TASK_TRANSFER &&
	    (data_file(spec, "from", ctx, err) < 0 || data_file(spec, "to", ctx, err) < 0))
		goto out;
	text = json_dumps(spec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!text)
		weir_error_oom(err);
out:
	json_decref(spec);
	return text;
}

/* What a sql or transfer task runs: weir's own subcommand. */
static char *data_command(const struct dag_job_try *t, struct weir_error *err)
{
	char *q = shell_quoted(t->weir_program ? t->weir_program : "weir"), *cmd = NULL;

	if (!q || asprintf(&cmd, "exec %s %s", q,
	                   t->task->kind == DAG_TASK_SQL      ? "task-sql"
	                   : t->task->kind == DAG_TASK_SENSOR ? "task-sensor"
	                                                      : "task-transfer") < 0)
		cmd = NULL;
	free(q);
	if (!cmd)
		weir_error_oom(err);
	return cmd;
}

/* A command task's one-role job; *command gets the command that runs. */
static struct job_spec *command_job(const struct dag_job_try *t, const struct template_ctx *ctx,
                                    const struct strvec *env, char **command,
                                    struct weir_error *err)
{
	const struct dag_task *task = t->task;
	struct job_spec *s = job_spec_create();
	struct role_spec *role;
	char *cmd = NULL;

	if (!s) {
		weir_error_oom(err);
		return NULL;
	}
	if (task->kind != DAG_TASK_COMMAND) {
		char *spec = data_spec(task, ctx, t->run->logical_ms, err);
		if (!spec || env_list_set(&s->env, &s->n_env, "WEIR_DATA_SPEC", spec, err) < 0) {
			free(spec);
			goto fail;
		}
		free(spec);
		if (!(cmd = data_command(t, err)))
			goto fail;
	} else if (render(&cmd, task->command, ctx, TEMPLATE_SHELL, "command", err) < 0)
		goto fail;
	if (task->cwd) {
		char *cwd = NULL, *q, *both = NULL;
		if (render(&cwd, task->cwd, ctx, TEMPLATE_RAW, "cwd", err) < 0)
			goto fail;
		q = shell_quoted(cwd);
		free(cwd);
		if (!q || asprintf(&both, "cd %s && %s", q, cmd) < 0)
			both = NULL;
		free(q);
		free(cmd);
		cmd = both;
		if (!cmd) {
			weir_error_oom(err);
			goto fail;
		}
	}
	if (set_try_env(s, env, t, err) < 0)
		goto fail;
	for (size_t i = 0; i < task->n_env; i++) {
		char *v = NULL;
		char field[DAG_JOB_FIELD_MAX];
		snprintf(field, sizeof field, "env.%s", task->env[i].name);
		if (render(&v, task->env[i].value, ctx, TEMPLATE_RAW, field, err) < 0)
			goto fail;
		if (env_list_set(&s->env, &s->n_env, task->env[i].name, v, err) < 0) {
			free(v);
			goto fail;
		}
		free(v);
	}
	role = job_spec_add_role(s, "task", err);
	if (!role || job_spec_set_string(&role->command, cmd, err) < 0)
		goto fail;
	role->instances = 1;
	role->memory_mb =
	    task->resources.memory_mb ? task->resources.memory_mb : DAG_JOB_DEFAULT_MEMORY_MB;
	role->vcores = task->resources.vcores > 0 ? task->resources.vcores : 1;
	role->gpus = task->resources.gpus > 0 ? task->resources.gpus : 0;
	s->priority = t->priority;
	s->execution_timeout_s = task->execution_timeout_s;
	*command = cmd;
	return s;
fail:
	free(cmd);
	job_spec_destroy(s);
	return NULL;
}

/* A job task's job, templated; the DAG's settings over its own. */
static struct job_spec *task_job(const struct dag_job_try *t, const struct template_ctx *ctx,
                                 const struct strvec *env, struct weir_error *err)
{
	struct job_spec *s;

	if (!t->job) {
		weir_error_set(err, WEIR_E_INTERNAL, "task %s: no job to run",
		               t->task->task_id ? t->task->task_id : "?");
		return NULL;
	}
	s = job_copy(t->job, err);
	if (!s)
		return NULL;
	if (s->params && render(&s->params, s->params, ctx, TEMPLATE_SHELL, "job.params", err) < 0)
		goto fail;
	for (size_t i = 0; i < s->n_roles; i++) {
		struct role_spec *r = &s->roles[i];
		char field[DAG_JOB_FIELD_MAX];
		if (!r->command)
			continue;
		snprintf(field, sizeof field, "job.roles.%s.command", r->name);
		if (render(&r->command, r->command, ctx, TEMPLATE_SHELL, field, err) < 0)
			goto fail;
	}
	if (set_try_env(s, env, t, err) < 0)
		goto fail;
	if (t->task->execution_timeout_s > 0)
		s->execution_timeout_s = t->task->execution_timeout_s;
	if (t->priority)
		s->priority = t->priority;
	return s;
fail:
	job_spec_destroy(s);
	return NULL;
}

/* "ROLE: command" per role, one a line: what a job task runs. */
static char *roles_command(const struct job_spec *s)
{
	size_t n = 1, used = 0;
	char *out;

	for (size_t i = 0; i < s->n_roles; i++) {
		const char *c = s->roles[i].command ? s->roles[i].command : s->entry_point;
		n += strlen(s->roles[i].name) + 2 + (c ? strlen(c) : 0) + 1;
	}
	out = malloc(n);
	if (!out)
		return NULL;
	out[0] = '\0';
	for (size_t i = 0; i < s->n_roles; i++) {
		const char *c = s->roles[i].command ? s->roles[i].command : s->entry_point;
		used += (size_t)snprintf(out + used, n - used, "%s%s: %s", i ? "\n" : "",
		                         s->roles[i].name, c ? c : "");
	}
	return out;
}

/* The task's `slurm:` (a JSON mapping the DAG's parser checked) in place of
 * the job's: read by the job spec's own reader, so the two cannot drift. */
static int set_task_slurm(struct job_spec *s, json_t *slurm, struct weir_error *err)
{
	json_t *probe =
	    json_pack("{s:{s:{s:s}}, s:O}", "roles", "t", "command", "true", "slurm", slurm);
	struct job_spec *p;

	if (!probe)
		return weir_error_oom(err);
	p = job_spec_from_json(probe, err);
	json_decref(probe);
	if (!p)
		return -1;
	slurm_release(&s->slurm);
	s->slurm = p->slurm;
	memset(&p->slurm, 0, sizeof p->slurm);
	job_spec_destroy(p);
	return 0;
}

/* Environment names are checked before the rest (a param given by a
 * trigger's conf may not make one), with the job reader's words. */
static int check_env_names(const struct job_spec *s, struct weir_error *err)
{
	for (size_t i = 0; i < s->n_env; i++)
		if (!env_name_valid(s->env[i].name))
			return weir_error_set(err, WEIR_E_INVALID,
			                      "env.%s: expected an environment variable name like "
			                      "[A-Za-z_][A-Za-z0-9_]*",
			                      s->env[i].name);
	return 0;
}

struct job_spec *dag_job_build(const struct dag_job_try *t, char **command, struct weir_error *err)
{
	const struct dag_task *task = t->task;
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct strvec env = STRVEC_INIT;
	struct job_spec *s = NULL;
	char *cmd = NULL;
	char name[DAG_JOB_NAME_MAX];

	*command = NULL;
	ctx.src = t->secrets;
	if (template_ctx_fill(&ctx, t->run, err) < 0 || template_ctx_env(&ctx, &env, err) < 0)
		goto fail;
	/* a foreach instance's index: a transfer's marker tells instances apart by it */
	if (t->map_index >= 0 && strvec_pushf(&env, "WEIR_MAP_INDEX=%d", t->map_index) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto fail;
	}
	if (task->kind == DAG_TASK_COMMAND || task->kind == DAG_TASK_SQL ||
	    task->kind == DAG_TASK_TRANSFER || task->kind == DAG_TASK_SENSOR)
		s = command_job(t, &ctx, &env, &cmd, err);
	else
		s = task_job(t, &ctx, &env, err);
	if (!s)
		goto fail;
	if (t->map_index >= 0)
		snprintf(name, sizeof name, "%s.%s.%d", t->run->dag_id, task->task_id,
		         t->map_index);
	else
		snprintf(name, sizeof name, "%s.%s", t->run->dag_id, task->task_id);
	if (task->kind == DAG_TASK_COMMAND || task->kind == DAG_TASK_SQL ||
	    task->kind == DAG_TASK_TRANSFER || task->kind == DAG_TASK_SENSOR || !s->name ||
	    !strcmp(s->name, JOB_SPEC_DEFAULT_NAME))
		if (job_spec_set_string(&s->name, name, err) < 0)
			goto fail;
	/* the task's route and Slurm settings win over its job's own; a task
	 * that names no queue takes its pool's */
	if (task->queue || !s->queue)
		if (job_spec_set_string(&s->queue, task->queue ? task->queue : t->pool_queue, err) <
		    0)
			goto fail;
	if (task->slurm && set_task_slurm(s, task->slurm, err) < 0)
		goto fail;
	/* a foreach item's own resources, for every role */
	for (size_t i = 0; t->resources && i < s->n_roles; i++) {
		struct role_spec *role = &s->roles[i];
		if (t->resources->memory_mb)
			role->memory_mb = t->resources->memory_mb;
		if (t->resources->vcores > 0)
			role->vcores = t->resources->vcores;
		if (t->resources->gpus >= 0)
			role->gpus = t->resources->gpus;
	}
	/* the task's connections join its job's own */
	if (add_connections(&s->connections, &task->connections, err) < 0)
		goto fail;
	if (check_env_names(s, err) < 0 || job_spec_validate(s, err) < 0) {
		weir_error_prefix(err, "job");
		goto fail;
	}
	if (task->kind == DAG_TASK_JOB || task->kind == DAG_TASK_JOB_FILE ||
	    task->kind == DAG_TASK_JOB_TONY) {
		cmd = roles_command(s);
		if (!cmd) {
			weir_error_oom(err);
			goto fail;
		}
	}
	template_ctx_release(&ctx);
	strvec_release(&env);
	*command = cmd;
	return s;
fail:
	template_ctx_release(&ctx);
	strvec_release(&env);
	job_spec_destroy(s);
	free(cmd);
	return NULL;
}
