/* ops.c: the operations the API calls (api_ops, api/api.h): submit, list,
 * get, kill, tasks, events, a log's place; the DAG manager's submit and
 * kill; and the JSON views of jobs and tasks they answer with.
 */
#include "server/job_manager/jm_internal.h"

#include <stdio.h>

#include "lib/clock.h"

/* ---- JSON views ---- */

static json_t *time_json(int64_t ms)
{
	char buf[40];
	if (ms <= 0)
		return json_null();
	return json_string(clock_format_iso(ms, buf, sizeof buf));
}

static json_t *task_json(const struct task_row *t)
{
	return json_pack("{s:s, s:i, s:i, s:s, s:s, s:s, s:i, s:o, s:s, s:o, s:o, s:b, s:I, "
	                 "s:I, s:o, s:o}",
	                 "role", t->role, "index", t->idx, "attempt", t->attempt, "state",
	                 task_state_name(t->state),
	                 "reason", t->reason ? t->reason : "", "host", t->host ? t->host : "",
	                 "port", t->port, "pid", t->pid > 0 ? json_integer(t->pid) : json_null(),
	                 "gpus", t->gpus ? t->gpus : "", "exit_code",
	                 t->exit_code >= 0 ? json_integer(t->exit_code) : json_null(), "signal",
	                 t->signal > 0 ? json_integer(t->signal) : json_null(), "oom_killed",
	                 t->oom_killed, "peak_memory_bytes", (json_int_t)t->peak_memory_bytes,
	                 "cpu_time_ms", (json_int_t)t->cpu_time_ms, "started_at",
	                 time_json(t->started_at), "ended_at", time_json(t->ended_at));
}

static json_t *tasks_json(struct job_manager *jm, int64_t job_id, int attempt,
                          struct weir_error *err)
{
	struct task_row *rows = NULL;
	size_t n = 0;
	json_t *a;

	if (store_tasks_of_job(jm->store, job_id, attempt, &rows, &n, err) < 0)
		return NULL;
	a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, task_json(&rows[i]));
	task_rows_free(rows, n);
	return a;
}

static json_t *job_json(struct job_manager *jm, const struct job_row *job, bool full,
                        struct weir_error *err)
{
	struct jm_route rt;
	json_t *o = json_pack(
	    "{s:I, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:o, s:o, s:o, s:o}", "id",
	    (json_int_t)job->id, "name", job->name, "state", job_state_name(job->state), "reason",
	    job->reason ? job->reason : "", "framework", job->framework ? job->framework : "none",
	    "priority", job->priority, "attempt", job->attempt, "max_restarts", job->max_restarts,
	    "exit_code", job->exit_code >= 0 ? json_integer(job->exit_code) : json_null(),
	    "submitted_at", time_json(job->submitted_at), "started_at", time_json(job->started_at),
	    "ended_at", time_json(job->ended_at));

	if (!o) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	jm_route_get(jm, job->id, &rt);
	json_object_set_new(o, "executor", json_string(rt.gang ? "slurm" : "local"));
	json_object_set_new(o, "queue", rt.queue[0] ? json_string(rt.queue) : json_null());
	if (full) {
		json_t *spec = json_loads(job->spec_json, 0, NULL);
		json_t *tasks = tasks_json(jm, job->id, job->attempt, err);
		if (!tasks) {
			json_decref(spec);
			json_decref(o);
			return NULL;
		}
		json_object_set_new(o, "spec", spec ? spec : json_object());
		json_object_set_new(o, "tasks", tasks);
	}
	return o;
}

/* The job's row, WEIR_E_NOT_FOUND in the API's words when there is none. */
static int job_get(struct job_manager *jm, int64_t id, struct job_row *job,
                   struct weir_error *err)
{
	if (store_job_get(jm->store, id, job, err) < 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "job %lld: no such job", (long long)id);
	return 0;
}

static json_t *job_json_by_id(struct job_manager *jm, int64_t id, struct weir_error *err)
{
	struct job_row job = {0};
	json_t *r;

	if (store_job_get(jm->store, id, &job, err) < 0) {
		if (err && err->kind == WEIR_E_NOT_FOUND)
			weir_error_set(err, WEIR_E_NOT_FOUND, "job %lld: no such job",
			               (long long)id);
		return NULL;
	}
	r = job_json(jm, &job, true, err);
	job_row_release(&job);
	return r;
}

/* What a job list shows besides the job: its roles' shape and resources, and
 * how many tasks of the current attempt are in each state. */
static void job_list_extras(struct job_manager *jm, const struct job_row *job, json_t *o)
{
	json_t *sj = json_loads(job->spec_json ? job->spec_json : "{}", 0, NULL);
	struct job_spec *spec = sj ? job_spec_from_json(sj, NULL) : NULL;
	json_t *roles = json_array(), *counts = json_object();
	struct task_row *rows = NULL;
	size_t n = 0;

	for (size_t i = 0; spec && i < spec->n_roles; i++) {
		const struct role_spec *r = &spec->roles[i];
		json_array_append_new(roles, json_pack("{s:s, s:i, s:i, s:I, s:i}", "name", r->name,
		                                       "instances", r->instances, "vcores",
		                                       r->vcores, "memory_mb",
		                                       (json_int_t)r->memory_mb, "gpus", r->gpus));
	}
	if (store_tasks_of_job(jm->store, job->id, job->attempt, &rows, &n, NULL) == 0) {
		for (size_t i = 0; i < n; i++) {
			const char *name = task_state_name(rows[i].state);
			json_t *c = json_object_get(counts, name);
			json_object_set_new(counts, name,
			                    json_integer(c ? json_integer_value(c) + 1 : 1));
		}
		task_rows_free(rows, n);
	}
	json_object_set_new(o, "roles", roles);
	json_object_set_new(o, "tasks_by_state", counts);
	job_spec_destroy(spec);
	json_decref(sj);
}

/* ---- submit ---- */

/* Stores a validated spec as a queued job and runs a queue pass (inside the
 * caller's turn). */
static int submit_spec(struct job_manager *jm, const struct job_spec *spec, int64_t *id,
                       struct weir_error *err)
{
	struct job_row row = {0};
	json_t *sj = NULL;
	char *text = NULL;
	int rc = -1;
	bool gang;

	if (jm_route_choose(jm, spec->queue, &gang, err) < 0)
		goto out;
	if (!gang && alloc_never_fits(&jm->node, spec, err) < 0) {
		err->kind = WEIR_E_UNFIT;
		goto out;
	}
	sj = job_spec_to_json(spec);
	text = sj ? json_dumps(sj, JSON_COMPACT) : NULL;
	if (!text) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	row.name = spec->name ? spec->name : "job";
	row.spec_json = text;
	row.framework = (char *)framework_name(spec->framework);
	row.state = JOB_QUEUED;
	row.reason = "";
	row.priority = spec->priority;
	row.attempt = 1;
	row.max_restarts = spec->max_restarts;
	row.exit_code = -1;
	row.submitted_at = clock_now_ms();
	row.queued_at = row.submitted_at;
	jm_turn_begin(jm);
	if (store_job_insert(jm->store, &row, id, err) < 0) {
		jm_turn_end(jm);
		goto out;
	}
	jm_timers_touch(jm, *id);
	if (jm_route_store(jm, *id, gang, spec->queue, err) < 0) {
		jm_turn_end(jm);
		goto out;
	}
	jm_event(jm, *id, "submitted", "%s: %d tasks, %s%s%s", row.name, job_spec_task_count(spec),
	         gang ? "on slurm" : "local", spec->queue ? ", queue " : "",
	         spec->queue ? spec->queue : "");
	jm_queue_pass(jm);
	jm_turn_end(jm);
	rc = 0;
out:
	free(text);
	json_decref(sj);
	return rc;
}

int job_manager_submit_spec(struct job_manager *jm, const struct job_spec *spec, int64_t *job_id,
                            struct weir_error *err)
{
	int rc;

	if (job_spec_validate(spec, err) < 0)
		return -1;
	jm_turn_begin(jm);
	rc = submit_spec(jm, spec, job_id, err);
	jm_turn_end(jm);
	return rc;
}

static json_t *op_submit(void *ctx, json_t *body, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_spec *spec = job_spec_from_json(body, err);
	json_t *r = NULL;
	int64_t id = 0;

	if (!spec)
		return NULL;
	jm_turn_begin(jm);
	if (submit_spec(jm, spec, &id, err) == 0)
		r = job_json_by_id(jm, id, err);
	jm_turn_end(jm);
	job_spec_destroy(spec);
	return r;
}

/* ---- kill ---- */

int job_manager_kill(struct job_manager *jm, int64_t id, struct weir_error *err)
{
	struct job_row job = {0};
	int rc = -1;

	jm_turn_begin(jm);
	if (job_get(jm, id, &job, err) < 0)
		goto out;
	if (jm_job_final(&job)) {
		weir_error_set(err, WEIR_E_CONFLICT, "job %lld has already ended (%s)",
		               (long long)id, job_state_name(job.state));
		goto out;
	}
	jm_event(jm, id, "kill", "kill requested");
	if (job.state == JOB_QUEUED || job.restart_pending) {
		/* nothing runs for the current attempt (or it is already being
		 * stopped): the job ends now, the tasks' ends are only recorded */
		struct progress_decision d;
		job_progress_kill_idle(&d);
		jm_apply_decision(jm, &job, NULL, 0, &d);
	} else {
		struct progress_event ev = {.kind = PROGRESS_KILL};
		jm_progress(jm, id, &ev);
	}
	rc = 0;
out:
	jm_turn_end(jm);
	job_row_release(&job);
	return rc;
}

static json_t *op_kill_job(void *ctx, int64_t id, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	json_t *r = NULL;

	jm_turn_begin(jm);
	if (job_manager_kill(jm, id, err) == 0)
		r = job_json_by_id(jm, id, err);
	jm_turn_end(jm);
	return r;
}

/* ---- reads ---- */

static json_t *op_list_jobs(void *ctx, const char *state, int limit, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row *rows = NULL;
	size_t n = 0;
	enum job_state js;
	json_t *a;

	if (state && job_state_from_name(state, &js) < 0) {
		weir_error_set(err, WEIR_E_INVALID,
		               "state: expected queued, starting, running, succeeded, failed or "
		               "killed, got \"%s\"",
		               state);
		return NULL;
	}
	if (store_job_list(jm->store, state ? &js : NULL, limit, &rows, &n, err) < 0)
		return NULL;
	a = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *o = job_json(jm, &rows[i], false, NULL);
		if (o)
			job_list_extras(jm, &rows[i], o);
		json_array_append_new(a, o);
	}
	job_rows_free(rows, n);
	return json_pack("{s:o}", "jobs", a);
}

static json_t *op_get_job(void *ctx, int64_t id, struct weir_error *err)
{
	return job_json_by_id(ctx, id, err);
}

static json_t *op_tasks(void *ctx, int64_t id, int attempt, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	json_t *a;

	if (job_get(jm, id, &job, err) < 0)
		return NULL;
	if (attempt == API_ATTEMPT_CURRENT)
		attempt = job.attempt;
	else if (attempt == API_ATTEMPT_ALL)
		attempt = 0;
	job_row_release(&job);
	a = tasks_json(jm, id, attempt, err);
	return a ? json_pack("{s:o}", "tasks", a) : NULL;
}

static json_t *op_events(void *ctx, int64_t id, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	struct event_row *rows = NULL;
	size_t n = 0;
	json_t *a;

	if (job_get(jm, id, &job, err) < 0)
		return NULL;
	job_row_release(&job);
	if (store_events_of_job(jm->store, id, &rows, &n, err) < 0)
		return NULL;
	a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a,
		                      json_pack("{s:o, s:s, s:s}", "time", time_json(rows[i].time),
		                                "kind", rows[i].kind, "message", rows[i].message));
	event_rows_free(rows, n);
	return json_pack("{s:o}", "events", a);
}

static int op_log_locate(void *ctx, int64_t id, const char *role, int index, int attempt,
                         char **path, bool *ended, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	struct task_row t = {0};
	int rc = -1;

	if (job_get(jm, id, &job, err) < 0)
		return -1;
	if (attempt <= 0)
		attempt = job.attempt;
	if (store_task_get(jm->store, id, attempt, role, index, &t, err) < 0) {
		weir_error_set(err, WEIR_E_NOT_FOUND,
		               "job %lld has no task %s:%d in attempt %d (yet)", (long long)id,
		               role, index, attempt);
		goto out;
	}
	*path = jm_log_path(jm, id, role, index, attempt);
	if (!*path) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	*ended = jm_task_final(&t);
	rc = 0;
out:
	task_row_release(&t);
	job_row_release(&job);
	return rc;
}

static const struct api_ops ops = {
    .submit = op_submit,
    .list_jobs = op_list_jobs,
    .get_job = op_get_job,
    .kill_job = op_kill_job,
    .tasks = op_tasks,
    .events = op_events,
    .log_locate = op_log_locate,
    .launch_register = jm_launch_register,
    .launch_cluster = jm_launch_cluster,
    .launch_started = jm_launch_started,
    .launch_exited = jm_launch_exited,
};

const struct api_ops *job_manager_api_ops(void)
{
	return &ops;
}
