/* job_views.c: jobs, tasks and events as weir's own routes show them
 * (job_views.h). */
#include "api/job_views.h"

#include <stdlib.h>
#include <string.h>

#include "lib/json_util.h"
#include "model/states.h"

/* The one place each view turns a row's state into the API's name. */
static const char *job_state_text(const struct job_row *job)
{
	return job_state_name(job->state);
}

static const char *task_state_text(const struct task_row *t)
{
	return task_state_name(t->state);
}

void job_view_release(struct job_view *v)
{
	if (!v)
		return;
	job_row_release(&v->row);
	task_rows_free(v->tasks, v->n_tasks);
	memset(v, 0, sizeof *v);
}

void job_views_free(struct job_view *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		job_view_release(&v[i]);
	free(v);
}

json_t *job_view_task(const struct task_row *t)
{
	return json_pack("{s:s, s:i, s:i, s:s, s:s, s:s, s:i, s:o, s:s, s:o, s:o, s:b, s:I, "
	                 "s:I, s:o, s:o}",
	                 "role", t->role, "index", t->idx, "attempt", t->attempt, "state",
	                 task_state_text(t), "reason", t->reason ? t->reason : "", "host",
	                 t->host ? t->host : "", "port", t->port, "pid",
	                 t->pid > 0 ? json_integer(t->pid) : json_null(), "gpus",
	                 t->gpus ? t->gpus : "", "exit_code",
	                 t->exit_code >= 0 ? json_integer(t->exit_code) : json_null(), "signal",
	                 t->signal > 0 ? json_integer(t->signal) : json_null(), "oom_killed",
	                 t->oom_killed, "peak_memory_bytes", (json_int_t)t->peak_memory_bytes,
	                 "cpu_time_ms", (json_int_t)t->cpu_time_ms, "started_at",
	                 json_util_time_iso(t->started_at), "ended_at",
	                 json_util_time_iso(t->ended_at));
}

json_t *job_view_tasks(const struct task_row *rows, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, job_view_task(&rows[i]));
	return a;
}

/* The fields every view of a job has. */
static json_t *job_head(const struct job_row *job, const struct job_place *place)
{
	json_t *o = json_pack(
	    "{s:I, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:o, s:o, s:o, s:o}", "id",
	    (json_int_t)job->id, "name", job->name, "state", job_state_text(job), "reason",
	    job->reason ? job->reason : "", "framework", job->framework ? job->framework : "none",
	    "priority", job->priority, "attempt", job->attempt, "max_restarts", job->max_restarts,
	    "exit_code", job->exit_code >= 0 ? json_integer(job->exit_code) : json_null(),
	    "submitted_at", json_util_time_iso(job->submitted_at), "started_at",
	    json_util_time_iso(job->started_at), "ended_at", json_util_time_iso(job->ended_at));

	if (!o)
		return NULL;
	json_object_set_new(o, "executor", json_string(place->gang ? "slurm" : "local"));
	json_object_set_new(o, "queue", place->queue[0] ? json_string(place->queue) : json_null());
	return o;
}

json_t *job_view_job(const struct job_row *job, const struct job_place *place,
                     const struct task_row *tasks, size_t n_tasks)
{
	json_t *o = job_head(job, place);
	json_t *spec, *ta;

	if (!o)
		return NULL;
	spec = json_loads(job->spec_json ? job->spec_json : "", 0, NULL);
	ta = job_view_tasks(tasks, n_tasks);
	if (!ta) {
		json_decref(spec);
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "spec", spec ? spec : json_object());
	json_object_set_new(o, "tasks", ta);
	return o;
}

json_t *job_view_job_brief(const struct job_row *job, const struct job_place *place,
                           const struct job_spec *spec, const struct task_row *tasks,
                           size_t n_tasks)
{
	json_t *o = job_head(job, place);
	json_t *roles, *counts;

	if (!o)
		return NULL;
	roles = json_array();
	counts = json_object();
	for (size_t i = 0; spec && i < spec->n_roles; i++) {
		const struct role_spec *r = &spec->roles[i];
		json_array_append_new(roles, json_pack("{s:s, s:i, s:i, s:I, s:i}", "name", r->name,
		                                       "instances", r->instances, "vcores",
		                                       r->vcores, "memory_mb",
		                                       (json_int_t)r->memory_mb, "gpus", r->gpus));
	}
	for (size_t i = 0; i < n_tasks; i++) {
		const char *state = task_state_text(&tasks[i]);
		json_t *c = json_object_get(counts, state);
		json_object_set_new(counts, state, json_integer(c ? json_integer_value(c) + 1 : 1));
	}
	json_object_set_new(o, "roles", roles);
	json_object_set_new(o, "tasks_by_state", counts);
	return o;
}

json_t *job_view_event(const struct event_row *e)
{
	return json_pack("{s:o, s:s, s:s}", "time", json_util_time_iso(e->time), "kind", e->kind,
	                 "message", e->message);
}

json_t *job_view_events(const struct event_row *rows, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, job_view_event(&rows[i]));
	return a;
}

json_t *job_view_collection(const char *key, json_t *items)
{
	return items ? json_pack("{s:o}", key, items) : NULL;
}
