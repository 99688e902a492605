/* protocol.c: the launch protocol, the server's side (docs/internals/launch.md):
 * a launcher registers its task (and gets what to run), waits for the
 * cluster of its gang, says its program started, reports its end.  A report
 * for an attempt that is no longer current is answered 410 (WEIR_E_GONE) so
 * the launcher stops; an end is recorded as sched/task_end.c says, and
 * sched/job_progress.c decides what follows for the job.
 */
#include "server/job_manager/jm_internal.h"

#include <stdio.h>

#include "exec/launch_secret.h"
#include "launch/report.h"
#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/strbuf.h"
#include "server/job_manager/answer.h"
#include "server/secrets.h"

/* Reads {"job","role","index","attempt"} of a launch call. */
static int launch_key(json_t *body, int64_t *job, const char **role, int *index, int *attempt,
                      struct weir_error *err)
{
	json_t *j = json_object_get(body, "job"), *r = json_object_get(body, "role"),
	       *i = json_object_get(body, "index"), *a = json_object_get(body, "attempt");

	if (!json_is_integer(j) || !json_is_string(r) || !json_is_integer(i) ||
	    !json_is_integer(a) || json_integer_value(j) < 1 || json_integer_value(i) < 0 ||
	    json_integer_value(a) < 1 || !api_role_name_ok(json_string_value(r)))
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "launch: expected {\"job\": ID, \"role\": NAME, \"index\": N, "
		    "\"attempt\": N, ...}");
	*job = json_integer_value(j);
	*role = json_string_value(r);
	*index = (int)json_integer_value(i);
	*attempt = (int)json_integer_value(a);
	return 0;
}

/* Loads the job and the task; WEIR_E_GONE when the attempt is no longer
 * the one that runs (so the launcher stops). */
static int launch_load(struct job_manager *jm, int64_t id, const char *role, int index, int attempt,
                       bool need_current, struct job_row *job, struct task_row *t,
                       struct weir_error *err)
{
	if (jm_job_load(jm, id, job, err) < 0)
		return weir_error_set(err, WEIR_E_GONE, "job %lld: no such job", (long long)id);
	if (need_current && (jm_winding(jm, job) || job->attempt != attempt))
		return weir_error_set(err, WEIR_E_GONE,
		                      "job %lld attempt %d is no longer current (job %s%s)",
		                      (long long)id, attempt, job_state_name(job->state),
		                      job->restart_pending ? ", restarting" : "");
	if (jm_task_load(jm, id, attempt, role, index, t, err) < 0)
		return weir_error_set(err, WEIR_E_GONE, "job %lld attempt %d has no task %s:%d",
		                      (long long)id, attempt, role, index);
	return 0;
}

static json_t *env_json(const struct job_spec *spec, const struct role_spec *rs)
{
	json_t *env = json_object();
	for (size_t i = 0; i < spec->n_env; i++)
		json_object_set_new(env, spec->env[i].name, json_string(spec->env[i].value));
	for (size_t i = 0; i < rs->n_env; i++)
		json_object_set_new(env, rs->env[i].name, json_string(rs->env[i].value));
	return env;
}

/* The spec's `connections:` into the answer's env (WEIR_CONN_<ID>) and its
 * "mask" (what the launcher masks in the output), with the spec's own
 * `mask` (the secret variables a DAG task's templates used); resolved now,
 * when the try starts, and never stored.  A connection that does not resolve is the
 * answer's "launch_error": the launcher fails the task with it.  *env and
 * *mask are new trees; *launch_error "" when none. */
static void add_connections(struct job_manager *jm, const struct job_spec *spec,
                            const struct role_spec *rs, json_t **env, json_t **mask,
                            char *launch_error, size_t size)
{
	struct weir_error err = {0};

	*env = env_json(spec, rs);
	*mask = json_array();
	launch_error[0] = '\0';
	for (size_t i = 0; *mask && i < spec->mask.n; i++)
		json_array_append_new(*mask, json_string(spec->mask.v[i]));
	if (!spec->connections.n)
		return;
	if (!jm->secrets)
		weir_error_set(&err, WEIR_E_INVALID, "this server resolves no connections");
	if (!jm->secrets ||
	    secrets_task_env(jm->secrets, &spec->connections, *env, *mask, &err) < 0) {
		snprintf(launch_error, size, "%s", err.msg);
		for (size_t i = 0; i < spec->connections.n; i++) {
			char *n = connection_env_name(spec->connections.v[i]);
			if (n)
				json_object_del(*env, n);
			free(n);
		}
	}
}

/* Whether the task's environment asks for a read key
 * (WEIR_TASK_READS=dag_runs: an Airflow ExternalTaskSensor that pokes in
 * Python reads the other DAG's runs through POST /launch/dagRuns). */
static bool reads_runs(const struct job_spec *spec, const struct role_spec *rs)
{
	const char *v = NULL;

	for (size_t i = 0; i < spec->n_env; i++)
		if (!strcmp(spec->env[i].name, "WEIR_TASK_READS"))
			v = spec->env[i].value;
	for (size_t i = 0; i < rs->n_env; i++)
		if (!strcmp(rs->env[i].name, "WEIR_TASK_READS"))
			v = rs->env[i].value;
	return v && !strcmp(v, "dag_runs");
}

/* The task's read key into the answer's env (WEIR_TASK_READ_KEY) and
 * mask: derived now, never stored. */
static void add_read_key(struct job_manager *jm, const struct task_row *t, json_t *env,
                         json_t *mask)
{
	char key[LAUNCH_SECRET_HEX + 1];

	launch_secret_read(jm->read_key, t->job_id, t->role, t->idx, t->attempt, key);
	json_object_set_new(env, "WEIR_TASK_READ_KEY", json_string(key));
	json_array_append_new(mask, json_string(key));
	memset(key, 0, sizeof key);
}

/* Appends task t's register answer (answer.h) to sb.  0, or -1. */
static int register_answer(struct job_manager *jm, const struct job_spec *spec,
                           const struct role_spec *rs, const struct task_row *t, struct strbuf *sb)
{
	char *cmd = job_spec_role_command(spec, rs);
	char *wd = jm_workdir_path(jm, t->job_id, t->role, t->idx, t->attempt);
	char *lp = jm_log_path(jm, t->job_id, t->role, t->idx, t->attempt);
	const char *shared = NULL;
	char *node_cache = NULL;
	char *cache;
	char **paths = NULL;
	json_t *env = NULL, *mask = NULL;
	char launch_error[WEIR_ERROR_MSG_MAX];
	char inst[24];
	uint64_t h = 1469598103934665603ULL;
	bool reads;
	int rc = -1;

	jm_job_shipping(jm, t->job_id, &shared, &node_cache);
	cache = node_cache ? node_cache : fs_join(jm->home, "cache");
	if (shared && spec->n_artifacts && !(paths = calloc(spec->n_artifacts, sizeof *paths)))
		goto out;
	for (size_t i = 0; paths && i < spec->n_artifacts; i++) {
		struct weir_error e2 = {0};
		if (!spec->artifacts[i].archive)
			continue;
		paths[i] = jm_shipped_path(jm, shared, spec->artifacts[i].path, &e2);
		if (!paths[i])
			log_warn("job %lld: %s", (long long)t->job_id, e2.msg);
	}
	launch_error[0] = '\0';
	reads = jm->read_key && reads_runs(spec, rs);
	if (spec->connections.n || spec->mask.n || reads)
		add_connections(jm, spec, rs, &env, &mask, launch_error, sizeof launch_error);
	if (reads && env && mask)
		add_read_key(jm, t, env, mask);
	/* tells apart servers on one host (job ids start at 1 in every home):
	 * launchers can put it in names shared host-wide (cgroups) */
	for (const char *c = jm->home; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	snprintf(inst, sizeof inst, "%016llx", (unsigned long long)h);
	if (cmd && wd && lp && cache &&
	    (!(spec->connections.n || spec->mask.n || reads) || (env && mask))) {
		/* A backend that binds devices itself (Slurm) gets null gpus: the
		 * launcher keeps the CUDA_VISIBLE_DEVICES it was started with; and
		 * no cgroup of its own: the backend's step confines the task
		 * (docs/slurm.md) */
		struct executor *ex = jm_exec_of(jm, t->job_id);
		bool confined = ex && ex->confines_tasks;
		struct jm_answer a = {.spec = spec,
		                      .rs = rs,
		                      .job_id = t->job_id,
		                      .role = t->role,
		                      .index = t->idx,
		                      .attempt = t->attempt,
		                      .command = cmd,
		                      .workdir = wd,
		                      .log = lp,
		                      .cache_dir = cache,
		                      .gpus = confined  ? NULL
		                              : t->gpus ? t->gpus
		                                        : "",
		                      .artifact_paths = (const char *const *)paths,
		                      .server_instance = inst,
		                      .cgroup = !confined,
		                      .env = env,
		                      .mask = mask,
		                      .launch_error = launch_error[0] ? launch_error : NULL};
		rc = jm_answer_write(sb, &a);
	}
	/* the work folder is the launcher's to make (workdir_prepare), on its
	 * node: five mkdirs a task were the largest part of the server's
	 * kernel time */
out:
	for (size_t i = 0; paths && i < spec->n_artifacts; i++)
		free(paths[i]);
	free(paths);
	json_decref(env);
	json_decref(mask);
	free(cmd);
	free(wd);
	free(lp);
	free(cache);
	return rc;
}

/* The gang is complete when no task of the attempt waits to register: the
 * job runs, and its launchers' cluster polls are answered. */
static void gang_complete(struct job_manager *jm, struct job_row *job, int attempt,
                          struct weir_error *err)
{
	struct task_row *rows = NULL;
	size_t n = 0;
	bool all = true;

	if (jm_tasks_load(jm, job->id, attempt, &rows, &n, err) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (rows[i].state == TASK_PENDING)
			all = false;
	task_rows_free(rows, n);
	if (!all)
		return;
	if (jm_job_set_state(job, JOB_RUNNING) < 0)
		return; /* refused (logged): nothing written */
	job->running_at = clock_now_ms();
	if (!job->started_at)
		job->started_at = job->running_at;
	if (jm_job_save(jm, job, err) == 0)
		jm_event(jm, job->id, "state", "running: attempt %d, every task registered",
		         attempt);
	jm_notify_cluster(jm, job->id);
}

int jm_register(struct job_manager *jm, const struct jm_register_call *c, struct strbuf *answer,
                struct weir_error *err)
{
	struct job_row job = {0};
	struct task_row t = {0};
	const struct job_spec *spec;
	const struct role_spec *rs;
	int rc = -1;

	if (launch_load(jm, c->job_id, c->role, c->index, c->attempt, true, &job, &t, err) < 0)
		goto out;
	if (jm_task_final(&t)) {
		weir_error_set(err, WEIR_E_GONE, "job %lld %s:%d has already ended (%s)",
		               (long long)c->job_id, c->role, c->index, task_state_name(t.state));
		goto out;
	}
	spec = jm_spec_of(jm, &job, err);
	if (!spec)
		goto out;
	rs = job_spec_find_role(spec, c->role);
	if (!rs) {
		weir_error_set(err, WEIR_E_GONE, "job %lld has no role %s", (long long)c->job_id,
		               c->role);
		goto out;
	}
	if (register_answer(jm, spec, rs, &t, answer) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	/* where a task listens is its launcher's to say until its program
	 * runs; a register after that (only its launcher can make one) keeps
	 * what its gang was told */
	if (t.state == TASK_PENDING || t.state == TASK_STARTING) {
		if (c->host)
			str_set(&t.host, c->host);
		if (c->port >= 0)
			t.port = c->port;
		if (c->pid > 0)
			t.launcher_pid = c->pid;
	}
	if (t.state == TASK_PENDING) {
		jm_task_set_state(&t, TASK_STARTING);
		t.registered_at = clock_now_ms();
		jm_event(jm, c->job_id, "task", "%s:%d registered at %s:%d", c->role, c->index,
		         t.host, t.port);
	}
	if (jm_task_save(jm, &t, err) < 0)
		goto out;
	if (job.state == JOB_STARTING)
		gang_complete(jm, &job, c->attempt, err);
	rc = 0;
out:
	task_row_release(&t);
	job_row_release(&job);
	return rc;
}

json_t *jm_launch_register(void *ctx, json_t *body, struct weir_error *err)
{
	struct jm_register_call c = {.port = -1};
	struct strbuf sb = STRBUF_INIT;
	json_t *v, *r = NULL;

	if (launch_key(body, &c.job_id, &c.role, &c.index, &c.attempt, err) < 0)
		return NULL;
	if ((v = json_object_get(body, "host")) && json_is_string(v))
		c.host = json_string_value(v);
	if ((v = json_object_get(body, "port")) && json_is_integer(v))
		c.port = (int)json_integer_value(v);
	if ((v = json_object_get(body, "pid")) && json_is_integer(v) && json_integer_value(v) > 0)
		c.pid = (int)json_integer_value(v);
	/* the HTTP route answers a tree: the answer's text read back */
	if (jm_register(ctx, &c, &sb, err) == 0 && !(r = json_loadb(sb.buf, sb.len, 0, NULL)))
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	strbuf_release(&sb);
	return r;
}

json_t *jm_launch_cluster(void *ctx, int64_t id, int attempt, bool *ready, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	struct task_row *rows = NULL;
	size_t n = 0;
	json_t *cluster = NULL, *r = NULL;

	*ready = false;
	if (jm_job_load(jm, id, &job, err) < 0) {
		weir_error_set(err, WEIR_E_GONE, "job %lld: no such job", (long long)id);
		return NULL;
	}
	if (jm_winding(jm, &job) || job.attempt != attempt) {
		weir_error_set(err, WEIR_E_GONE,
		               "job %lld attempt %d is no longer current (job %s)", (long long)id,
		               attempt, job_state_name(job.state));
		goto out;
	}
	if (job.state != JOB_RUNNING)
		goto out;
	if (jm_tasks_load(jm, id, attempt, &rows, &n, err) < 0)
		goto out;
	cluster = json_object();
	for (size_t i = 0; i < n; i++) {
		json_t *list = json_object_get(cluster, rows[i].role);
		char addr[300];
		if (!list) {
			list = json_array();
			json_object_set_new(cluster, rows[i].role, list);
		}
		snprintf(addr, sizeof addr, "%s:%d", rows[i].host, rows[i].port);
		/* rows come in the spec's order, index ascending within a role */
		json_array_append_new(list, json_string(addr));
	}
	r = json_pack("{s:b, s:o}", "ready", 1, "cluster", cluster);
	*ready = true;
out:
	task_rows_free(rows, n);
	job_row_release(&job);
	return r;
}

/* A launcher's report on its task (started, exited): the job and the task
 * loaded in a turn, `fn` records it. */
typedef json_t *(*report_fn)(struct job_manager *jm, json_t *body, struct job_row *job,
                             struct task_row *t, struct weir_error *err);

static json_t *launch_report(void *ctx, json_t *body, report_fn fn, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	struct task_row t = {0};
	const char *role;
	int index, attempt;
	int64_t id;
	json_t *r = NULL;

	if (launch_key(body, &id, &role, &index, &attempt, err) < 0)
		return NULL;
	if (launch_load(jm, id, role, index, attempt, false, &job, &t, err) == 0)
		r = fn(jm, body, &job, &t, err);
	task_row_release(&t);
	job_row_release(&job);
	return r;
}

static json_t *started(struct job_manager *jm, json_t *body, struct job_row *job,
                       struct task_row *t, struct weir_error *err)
{
	json_t *v;

	(void)job;
	if (!jm_task_final(t) && t->state != TASK_RUNNING) {
		jm_task_set_state(t, TASK_RUNNING);
		if ((v = json_object_get(body, "pid")) && json_is_integer(v))
			t->pid = (int)json_integer_value(v);
		/* a shim the server registered itself (the agent's): its pid and
		 * the port it reserved come with the start */
		if ((v = json_object_get(body, "launcher_pid")) && json_is_integer(v) &&
		    json_integer_value(v) > 0)
			t->launcher_pid = (int)json_integer_value(v);
		if ((v = json_object_get(body, "port")) && json_is_integer(v) &&
		    json_integer_value(v) > 0)
			t->port = (int)json_integer_value(v);
		t->started_at = clock_now_ms();
		if (jm_task_save(jm, t, err) < 0)
			return NULL;
		jm_event(jm, t->job_id, "task", "%s:%d running (pid %d)", t->role, t->idx, t->pid);
	}
	return json_object();
}

json_t *jm_launch_started(void *ctx, json_t *body, struct weir_error *err)
{
	return launch_report(ctx, body, started, err);
}

static json_t *exited(struct job_manager *jm, json_t *body, struct job_row *job, struct task_row *t,
                      struct weir_error *err)
{
	struct exit_report r;
	struct task_report rep;
	struct task_end end;

	if (jm_task_final(t))
		return json_object(); /* a repeated report */
	exit_report_from_json(body, &r);
	rep = (struct task_report){.cause = r.cause,
	                           .exit_code = r.exit_code,
	                           .signal = r.signal,
	                           .oom_killed = r.oom_killed,
	                           .reason = r.reason};
	if (r.peak_memory_bytes >= 0)
		t->peak_memory_bytes = r.peak_memory_bytes;
	if (r.cpu_time_ms >= 0)
		t->cpu_time_ms = r.cpu_time_ms;
	t->ended_at = clock_now_ms();
	task_end_reported(&rep, jm_winding(jm, job) || job->attempt != t->attempt, &end);
	if (jm_task_end_apply(t, &end) < 0)
		return json_object(); /* refused (logged): nothing written, as for a repeat */
	if (jm_task_save(jm, t, err) < 0)
		return NULL;
	jm_event(jm, t->job_id, "task", "%s:%d %s%s%s", t->role, t->idx, task_state_name(t->state),
	         t->reason[0] ? ": " : "", t->reason);
	if (t->attempt == job->attempt)
		jm_task_ended(jm, t->job_id, t->role, t->idx);
	return json_object();
}

json_t *jm_launch_exited(void *ctx, json_t *body, struct weir_error *err)
{
	return launch_report(ctx, body, exited, err);
}

bool job_manager_knows_nonce(void *arg, int64_t job_id, int64_t nonce)
{
	int64_t have;

	/* -1 (an error, logged): known, so that a store that cannot be read
	 * for a moment kills nothing */
	int rc = jm_job_nonce(arg, job_id, &have);
	return rc < 0 || (rc == 0 && have == nonce);
}

void job_manager_on_agent_reports(void *arg, json_t *batch)
{
	struct job_manager *jm = arg;
	size_t i;
	json_t *m;

	json_array_foreach(batch, i, m)
	{
		struct weir_error err = {0};
		const char *t = json_string_value(json_object_get(m, "t"));
		json_t *r = NULL;
		if (t && !strcmp(t, "started"))
			r = jm_launch_started(jm, m, &err);
		else if (t && !strcmp(t, "exited"))
			r = jm_launch_exited(jm, m, &err);
		else
			continue;
		/* gone (a superseded attempt): nothing to record, as a 410; a
		 * full disk is logged once by the store, and told again */
		if (!r && err.kind != WEIR_E_GONE && !store_disk_full(jm->store))
			log_warn("agent report %s: %s", t, err.msg);
		json_decref(r);
	}
}
