/* job_views.c: jobs, tasks and events as weir's own routes show them
 * (job_views.h). */
#include "api/job_views.h"

#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
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
	return json_pack(
	    "{s:s, s:i, s:i, s:s, s:s, s:s, s:i, s:o, s:s, s:o, s:o, s:b, s:I, "
	    "s:I, s:o, s:o}",
	    "role", t->role, "index", t->idx, "attempt", t->attempt, "state", task_state_text(t),
	    "reason", t->reason ? t->reason : "", "host", t->host ? t->host : "", "port", t->port,
	    "pid", t->pid > 0 ? json_integer(t->pid) : json_null(), "gpus", t->gpus ? t->gpus : "",
	    "exit_code", t->exit_code >= 0 ? json_integer(t->exit_code) : json_null(), "signal",
	    t->signal > 0 ? json_integer(t->signal) : json_null(), "oom_killed", t->oom_killed,
	    "peak_memory_bytes", (json_int_t)t->peak_memory_bytes, "cpu_time_ms",
	    (json_int_t)t->cpu_time_ms, "started_at", json_util_time_iso(t->started_at), "ended_at",
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

/* ---- written as text ---- */

/* A member that is an integer, or null when `present` is false. */
static void write_int_or_null(struct strbuf *sb, const char *key, bool present, long long v)
{
	json_util_write_key(sb, key);
	if (present)
		strbuf_addi(sb, v);
	else
		strbuf_add(sb, "null", 4);
}

/* A time as json_util_time_iso() makes it: null for ms <= 0. */
static void write_time(struct strbuf *sb, const char *key, int64_t ms)
{
	char buf[40];

	json_util_write_field(sb, key, ms > 0 ? clock_format_iso(ms, buf, sizeof buf) : NULL);
}

static int write_task(struct strbuf *sb, const struct task_row *t)
{
	int rc = 0;

	strbuf_addch(sb, '{');
	rc |= json_util_write_field(sb, "role", t->role);
	json_util_write_int_field(sb, "index", t->idx);
	json_util_write_int_field(sb, "attempt", t->attempt);
	rc |= json_util_write_field(sb, "state", task_state_text(t));
	rc |= json_util_write_field(sb, "reason", t->reason ? t->reason : "");
	rc |= json_util_write_field(sb, "host", t->host ? t->host : "");
	json_util_write_int_field(sb, "port", t->port);
	write_int_or_null(sb, "pid", t->pid > 0, t->pid);
	rc |= json_util_write_field(sb, "gpus", t->gpus ? t->gpus : "");
	write_int_or_null(sb, "exit_code", t->exit_code >= 0, t->exit_code);
	write_int_or_null(sb, "signal", t->signal > 0, t->signal);
	json_util_write_bool_field(sb, "oom_killed", t->oom_killed);
	json_util_write_int_field(sb, "peak_memory_bytes", (long long)t->peak_memory_bytes);
	json_util_write_int_field(sb, "cpu_time_ms", (long long)t->cpu_time_ms);
	write_time(sb, "started_at", t->started_at);
	write_time(sb, "ended_at", t->ended_at);
	strbuf_addch(sb, '}');
	return rc;
}

int job_view_job_write(struct strbuf *sb, const struct job_row *job, const struct job_place *place,
                       const struct task_row *tasks, size_t n_tasks)
{
	const char *spec = job->spec_json ? job->spec_json : "";
	size_t spec_len = strlen(spec);
	int rc = 0;

	strbuf_addch(sb, '{');
	json_util_write_int_field(sb, "id", (long long)job->id);
	rc |= json_util_write_field(sb, "name", job->name ? job->name : "");
	rc |= json_util_write_field(sb, "state", job_state_text(job));
	rc |= json_util_write_field(sb, "reason", job->reason ? job->reason : "");
	rc |= json_util_write_field(sb, "framework", job->framework ? job->framework : "none");
	json_util_write_int_field(sb, "priority", job->priority);
	json_util_write_int_field(sb, "attempt", job->attempt);
	json_util_write_int_field(sb, "max_restarts", job->max_restarts);
	write_int_or_null(sb, "exit_code", job->exit_code >= 0, job->exit_code);
	write_time(sb, "submitted_at", job->submitted_at);
	write_time(sb, "started_at", job->started_at);
	write_time(sb, "ended_at", job->ended_at);
	rc |= json_util_write_field(sb, "executor", place->gang ? "slurm" : "local");
	rc |= json_util_write_field(sb, "queue", place->queue[0] ? place->queue : NULL);
	/* the stored spec as it is: the job manager stored the compact text
	 * job_spec_write_json() writes, which the tree reads back and dumps
	 * the same (reading it costs more than the rest of the job); a text
	 * that is no object at all shows as {}, as there */
	json_util_write_key(sb, "spec");
	if (spec_len >= 2 && spec[0] == '{' && spec[spec_len - 1] == '}')
		strbuf_add(sb, spec, spec_len);
	else
		strbuf_add(sb, "{}", 2);
	json_util_write_key(sb, "tasks");
	strbuf_addch(sb, '[');
	for (size_t i = 0, n = 0; i < n_tasks; i++) {
		size_t mark = sb->len;

		if (n)
			strbuf_addch(sb, ',');
		/* a task with a string that is not UTF-8 is left out, as the
		 * tree leaves out the element it cannot make */
		if (write_task(sb, &tasks[i]) < 0 && !sb->failed)
			strbuf_remove(sb, mark, sb->len - mark);
		else
			n++;
	}
	strbuf_add(sb, "]}", 2);
	return rc < 0 || sb->failed ? -1 : 0;
}

int job_view_events_write(struct strbuf *sb, const struct event_row *rows, size_t n)
{
	strbuf_addch(sb, '[');
	for (size_t i = 0, k = 0; i < n; i++) {
		size_t mark = sb->len;
		int rc = 0;

		strbuf_add(sb, k ? ",{" : "{", k ? 2 : 1);
		write_time(sb, "time", rows[i].time);
		rc |= json_util_write_field(sb, "kind", rows[i].kind);
		rc |= json_util_write_field(sb, "message", rows[i].message);
		strbuf_addch(sb, '}');
		/* left out when not UTF-8, as the tree leaves it out */
		if (rc < 0 && !sb->failed)
			strbuf_remove(sb, mark, sb->len - mark);
		else
			k++;
	}
	strbuf_addch(sb, ']');
	return sb->failed ? -1 : 0;
}

json_t *job_view_collection(const char *key, json_t *items)
{
	return items ? json_pack("{s:o}", key, items) : NULL;
}
