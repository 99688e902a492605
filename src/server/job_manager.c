/* job_manager.c: events in, store updates and executor actions out.
 *
 * Owns: the in-memory gang allocations (an alloc_state rebuilt from the
 * store at start), a cache of parsed specs of active jobs, the list of
 * launchers that ended without reporting (checked again ~1 s later, since
 * an `exited` report may still be in flight), the list of launchers found
 * alive at recovery (not our children: polled with is_alive), and one timer
 * for sched's timeouts.
 *
 * Every entry point brackets its work in turn_begin()/turn_end(): one
 * SQLite transaction per loop turn's handling of one event, with the
 * timeout check folded in before the commit.
 */
#include "server/job_manager.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/artifact.h"
#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "model/job_spec.h"
#include "sched/due_table.h"
#include "sched/job_progress.h"
#include "sched/queue.h"
#include "sched/states.h"
#include "sched/timers.h"

#define HOUSEKEEPING_MS 250
#define LOST_GRACE_MS 1000

/* A gang backend (Slurm) counts its cluster's resources itself: the jobs
 * routed to it share an allocator of their own that never runs out, so
 * they neither wait for nor take the local node's resources, and a job
 * too large for the cluster is refused by the backend, in its words. */
#define GANG_NODE_VCORES 1000000
#define GANG_NODE_MEMORY_MB ((uint64_t)1 << 40)
#define GANG_NODE_GPUS 256

/* A queue of the server's (job_manager_set_routes), copied. */
struct route_queue {
	char *name;
	bool gang;
	char *shared_dir, *node_cache_dir; /* NULL: the server's */
	struct executor_placement place; /* strings owned (const only for the type) */
};

/* Where one job runs: stored in the meta table (`route.<id>` = "local" or
 * "slurm", then " QUEUE" when it named one) at submission, so that a
 * restart follows the job with the same backend whatever the config
 * says by then. */
struct job_route {
	bool gang;
	char queue[72]; /* "" when none */
};

struct spec_entry {
	int64_t job_id;
	struct job_spec *spec;
	struct spec_entry *next;
};

/* A launcher to look at again: ended without reporting (due), or found
 * alive at recovery (watch: polled until it is gone). */
struct launcher_watch {
	int64_t job_id;
	int attempt;
	char *role;
	int index;
	int launcher_pid;
	int64_t due_ms; /* monotonic; 0 while watching a live one */
	char why[128];
	/* EXECUTOR_GANG_ENDED: an unreported task is lost; OOM, TIME_LIMIT or
	 * CANCELLED (a gang backend's verdict): see launcher_gone */
	enum executor_gang_event end;
	struct launcher_watch *next;
};

struct job_manager {
	uv_loop_t *loop;
	struct store *store;
	struct alloc_state *alloc;      /* the local node's */
	struct alloc_state *gang_alloc; /* the gang backend's, unbounded; NULL without one */
	struct node_resources node;
	char *home;
	struct executor *exec;      /* the local backend; NULL without one */
	struct executor *gang_exec; /* the gang backend (Slurm); NULL without one */
	bool default_gang;          /* work that names no queue goes to gang_exec */
	struct route_queue *queues;
	size_t n_queues;
	char *shared_dir, *node_cache_dir; /* gang work's, server-wide; NULL: none */
	struct api *api;
	uv_timer_t timeout_timer;
	/* timeouts: the next one of each active job that has one; the jobs
	 * this turn changed, to look at again at its end; every active job
	 * to look at (at start, or when a note could not be kept) */
	struct due_table dues;
	int64_t *touched;
	size_t n_touched, cap_touched;
	bool timers_all;
	uv_timer_t housekeeping;
	struct spec_entry *specs;
	struct launcher_watch *watches;
	int depth;
	int open_handles;
	bool in_queue_pass;
	bool queue_again;
	/* jobs that reached a final state in this turn: told to end_fn at the
	 * end of the turn, before the commit (the DAG manager's reaction shares
	 * the transaction and the loop turn) */
	struct ended_job *ended;
	job_manager_end_fn end_fn;
	void *end_arg;
};

struct ended_job {
	int64_t job_id;
	char state[STORE_STATE_MAX];
	int exit_code;
	char *reason;
	struct ended_job *next;
};


/* ---- small helpers ---- */

static void set_str(char **dst, const char *v)
{
	char *c = strdup(v ? v : "");
	if (!c)
		return;
	free(*dst);
	*dst = c;
}

static void set_reason(char **dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(char **dst, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	set_str(dst, buf);
}

static void event(struct job_manager *jm, int64_t job_id, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void event(struct job_manager *jm, int64_t job_id, const char *kind, const char *fmt, ...)
{
	char buf[768];
	struct weir_error err = {0};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (store_event_add(jm->store, job_id, clock_now_ms(), kind, buf, NULL, &err) < 0)
		log_error("job %lld: cannot journal \"%s\": %s", (long long)job_id, buf, err.msg);
}

static void turn_begin(struct job_manager *jm)
{
	struct weir_error err = {0};

	if (jm->depth++ == 0 && store_begin(jm->store, &err) < 0)
		log_error("store: %s", err.msg);
}

static void check_timers(struct job_manager *jm);
static void timers_touch(struct job_manager *jm, int64_t job_id);

/* Writes the job's row; its timeouts are looked at again at the turn's end. */
static int job_save(struct job_manager *jm, const struct job_row *job, struct weir_error *err)
{
	timers_touch(jm, job->id);
	return store_job_update(jm->store, job, err);
}

static void ended_add(struct job_manager *jm, const struct job_row *job)
{
	struct ended_job *e, **tail;

	if (!jm->end_fn)
		return;
	e = calloc(1, sizeof *e);
	if (!e || !(e->reason = strdup(job->reason ? job->reason : ""))) {
		free(e);
		log_error("job %lld: out of memory noting its end", (long long)job->id);
		return;
	}
	e->job_id = job->id;
	snprintf(e->state, sizeof e->state, "%s", job->state);
	e->exit_code = job->exit_code;
	for (tail = &jm->ended; *tail; tail = &(*tail)->next)
		;
	*tail = e;
}

/* Tells end_fn of every job that ended in this turn; what it does (new
 * submissions that fail at once, kills) may end more, so until none is left. */
static void ended_flush(struct job_manager *jm)
{
	while (jm->ended) {
		struct ended_job *e = jm->ended;
		jm->ended = e->next;
		if (jm->end_fn)
			jm->end_fn(jm->end_arg, e->job_id, e->state, e->exit_code, e->reason);
		free(e->reason);
		free(e);
	}
}

static void turn_end(struct job_manager *jm)
{
	struct weir_error err = {0};

	if (jm->depth == 1) {
		ended_flush(jm);
		check_timers(jm);
		ended_flush(jm);
	}
	if (--jm->depth == 0 && store_in_transaction(jm->store)) {
		if (store_commit(jm->store, &err) < 0) {
			log_error("store: commit failed: %s", err.msg);
			store_rollback(jm->store, NULL);
		}
		/* After the commit: clients waiting on a job see what was stored. */
		api_notify_jobs(jm->api);
	}
}

static bool job_final(const struct job_row *job)
{
	enum job_state s;
	return job_state_from_name(job->state, &s) == 0 && job_state_is_final(s);
}

static bool task_final(const struct task_row *t)
{
	enum task_state s;
	return task_state_from_name(t->state, &s) == 0 && task_state_is_final(s);
}

static void job_set_state(struct job_row *job, enum job_state s)
{
	snprintf(job->state, sizeof job->state, "%s", job_state_name(s));
}

static void task_set_state(struct task_row *t, enum task_state s)
{
	snprintf(t->state, sizeof t->state, "%s", task_state_name(s));
}

/* A job's result is recorded once its last task has ended (so a killed
 * job reads `killed` only when nothing of it runs any more).  Until then
 * the decided outcome waits in the store's meta table, which makes it
 * survive a server restart: "STATE EXIT_CODE REASON". */
struct outcome {
	enum job_state state;
	int exit_code;
	char reason[PROGRESS_REASON_MAX];
};

static void outcome_key(int64_t job_id, char *key, size_t size)
{
	snprintf(key, size, "outcome.%lld", (long long)job_id);
}

static bool outcome_get(struct job_manager *jm, int64_t job_id, struct outcome *o)
{
	char key[48], state[STORE_STATE_MAX];
	char *v = NULL;
	int n = 0;
	bool found = false;

	outcome_key(job_id, key, sizeof key);
	if (store_meta_get(jm->store, key, &v, NULL) != 0 || !v)
		goto out;
	if (sscanf(v, "%15s %d %n", state, &o->exit_code, &n) < 2 ||
	    job_state_from_name(state, &o->state) < 0)
		goto out;
	snprintf(o->reason, sizeof o->reason, "%s", v + n);
	found = true;
out:
	free(v);
	return found;
}

static void outcome_set(struct job_manager *jm, int64_t job_id, const struct outcome *o)
{
	char key[48], val[PROGRESS_REASON_MAX + 64];
	struct weir_error err = {0};

	timers_touch(jm, job_id);
	outcome_key(job_id, key, sizeof key);
	if (o)
		snprintf(val, sizeof val, "%s %d %s", job_state_name(o->state), o->exit_code,
		         o->reason);
	else
		val[0] = '\0';
	if (store_meta_set(jm->store, key, val, &err) < 0)
		log_error("job %lld: %s", (long long)job_id, err.msg);
}

/* Ended, or on its way to an end or a restart: late reports are recorded
 * and nothing new is decided. */
static bool winding(struct job_manager *jm, const struct job_row *job)
{
	struct outcome o;
	return job_final(job) || job->restart_pending || outcome_get(jm, job->id, &o);
}

static char *job_path(struct job_manager *jm, int64_t job_id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static char *job_path(struct job_manager *jm, int64_t job_id, const char *fmt, ...)
{
	char tail[256];
	char *p = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tail, sizeof tail, fmt, ap);
	va_end(ap);
	if (asprintf(&p, "%s/jobs/%lld/%s", jm->home, (long long)job_id, tail) < 0)
		return NULL;
	return p;
}

static char *log_path(struct job_manager *jm, int64_t job_id, const char *role, int index,
                      int attempt)
{
	return job_path(jm, job_id, "logs/%s-%d.%d.log", role, index, attempt);
}

static char *workdir_path(struct job_manager *jm, int64_t job_id, const char *role, int index,
                          int attempt)
{
	return job_path(jm, job_id, "%d/%s-%d", attempt, role, index);
}

/* ---- specs of active jobs ---- */

static const struct job_spec *spec_of(struct job_manager *jm, const struct job_row *job,
                                      struct weir_error *err)
{
	struct spec_entry *e;
	json_error_t je;
	json_t *j;
	struct job_spec *spec;

	for (e = jm->specs; e; e = e->next)
		if (e->job_id == job->id)
			return e->spec;
	j = json_loads(job->spec_json, 0, &je);
	if (!j) {
		weir_error_set(err, WEIR_E_INTERNAL, "job %lld: stored spec is not JSON: %s",
		               (long long)job->id, je.text);
		return NULL;
	}
	spec = job_spec_from_json(j, err);
	json_decref(j);
	if (!spec) {
		weir_error_prefix(err, "job %lld: stored spec", (long long)job->id);
		return NULL;
	}
	e = calloc(1, sizeof *e);
	if (!e) {
		job_spec_destroy(spec);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	e->job_id = job->id;
	e->spec = spec;
	e->next = jm->specs;
	jm->specs = e;
	return spec;
}

static void spec_forget(struct job_manager *jm, int64_t job_id)
{
	for (struct spec_entry **pe = &jm->specs; *pe; pe = &(*pe)->next)
		if ((*pe)->job_id == job_id) {
			struct spec_entry *e = *pe;
			*pe = e->next;
			job_spec_destroy(e->spec);
			free(e);
			return;
		}
}

/* ---- routes ---- */

static const struct route_queue *queue_find(const struct job_manager *jm, const char *name)
{
	for (size_t i = 0; name && i < jm->n_queues; i++)
		if (!strcmp(jm->queues[i].name, name))
			return &jm->queues[i];
	return NULL;
}

bool job_manager_has_queue(struct job_manager *jm, const char *name, char *names, size_t size)
{
	size_t off = 0;

	names[0] = '\0';
	for (size_t i = 0; i < jm->n_queues && off < size - 1; i++)
		off += (size_t)snprintf(names + off, size - off, "%s%s", i ? ", " : "",
		                        jm->queues[i].name);
	return queue_find(jm, name) != NULL;
}

static void route_key(int64_t job_id, char *key, size_t size)
{
	snprintf(key, size, "route.%lld", (long long)job_id);
}

/* A job stored before routes existed (no key) runs where work without a
 * queue runs. */
static void route_get(struct job_manager *jm, int64_t job_id, struct job_route *r)
{
	char key[48], kind[16];
	char *v = NULL;

	r->gang = jm->default_gang;
	r->queue[0] = '\0';
	route_key(job_id, key, sizeof key);
	if (store_meta_get(jm->store, key, &v, NULL) != 0 || !v)
		return;
	if (sscanf(v, "%15s %71s", kind, r->queue) >= 1)
		r->gang = !strcmp(kind, "slurm") || !strcmp(kind, "gang");
	free(v);
}

static struct executor *exec_of(struct job_manager *jm, int64_t job_id)
{
	struct job_route r;
	route_get(jm, job_id, &r);
	return r.gang ? jm->gang_exec : jm->exec;
}

static struct alloc_state *alloc_of(struct job_manager *jm, int64_t job_id)
{
	struct job_route r;
	route_get(jm, job_id, &r);
	return r.gang && jm->gang_alloc ? jm->gang_alloc : jm->alloc;
}

/* The job's resources back to whichever allocator holds them. */
static void release_alloc(struct job_manager *jm, int64_t job_id)
{
	alloc_release(jm->alloc, job_id);
	if (jm->gang_alloc)
		alloc_release(jm->gang_alloc, job_id);
}

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
	                 "role", t->role, "index", t->idx, "attempt", t->attempt, "state", t->state,
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
	json_t *o = json_pack(
	    "{s:I, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:o, s:o, s:o, s:o}", "id",
	    (json_int_t)job->id, "name", job->name, "state", job->state, "reason",
	    job->reason ? job->reason : "", "framework", job->framework ? job->framework : "none",
	    "priority", job->priority, "attempt", job->attempt, "max_restarts", job->max_restarts,
	    "exit_code", job->exit_code >= 0 ? json_integer(job->exit_code) : json_null(),
	    "submitted_at", time_json(job->submitted_at), "started_at", time_json(job->started_at),
	    "ended_at", time_json(job->ended_at));
	if (!o) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	{
		struct job_route rt;
		route_get(jm, job->id, &rt);
		json_object_set_new(o, "executor", json_string(rt.gang ? "slurm" : "local"));
		json_object_set_new(o, "queue", rt.queue[0] ? json_string(rt.queue) : json_null());
	}
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

/* ---- carrying out decisions ---- */

static void queue_pass(struct job_manager *jm);
static void progress(struct job_manager *jm, int64_t job_id, const struct progress_event *ev);

static void stop_task(struct job_manager *jm, const struct task_row *t)
{
	struct weir_error err = {0};
	struct executor_task et = {.job_id = t->job_id,
	                           .role = t->role,
	                           .index = t->idx,
	                           .attempt = t->attempt,
	                           .launcher_pid = t->launcher_pid};

	struct executor *ex = exec_of(jm, t->job_id);

	if (!ex || (t->launcher_pid <= 0 && !ex->ops->start_gang))
		return;
	if (ex->ops->stop_task(ex, &et, SIGTERM, &err) < 0)
		log_warn("job %lld %s:%d: %s", (long long)t->job_id, t->role, t->idx, err.msg);
}

/* When every task of the current attempt has ended: a final job gives its
 * resources back; a restarting one goes back to the queue as attempt + 1. */
static void wind_down(struct job_manager *jm, int64_t job_id)
{
	struct weir_error err = {0};
	struct job_row job = {0};
	struct task_row *rows = NULL;
	size_t n = 0;
	bool all_ended = true;

	if (store_job_get(jm->store, job_id, &job, &err) < 0)
		return;
	if (store_tasks_of_job(jm->store, job_id, job.attempt, &rows, &n, &err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!task_final(&rows[i]))
			all_ended = false;
	if (!all_ended)
		goto out;
	if (!job_final(&job)) {
		struct outcome o;
		if (outcome_get(jm, job_id, &o)) {
			job_set_state(&job, o.state);
			job.exit_code = o.exit_code;
			job.restart_pending = false;
			set_str(&job.reason, o.reason);
			job.ended_at = clock_now_ms();
			if (job_save(jm, &job, &err) < 0)
				log_error("job %lld: %s", (long long)job_id, err.msg);
			outcome_set(jm, job_id, NULL);
			event(jm, job_id, "state", "%s%s%s", job.state, o.reason[0] ? ": " : "",
			      o.reason);
			ended_add(jm, &job);
		}
	}
	if (job_final(&job)) {
		release_alloc(jm, job_id);
		spec_forget(jm, job_id);
		api_notify_cluster(jm->api, job_id);
		api_notify_logs(jm->api, job_id);
		queue_pass(jm);
	} else if (job.restart_pending) {
		release_alloc(jm, job_id);
		job.restart_pending = false;
		job.attempt++;
		job_set_state(&job, JOB_QUEUED);
		job.queued_at = clock_now_ms();
		job.allocated_at = 0;
		job.running_at = 0;
		set_str(&job.reason, "");
		if (job_save(jm, &job, &err) < 0)
			log_error("job %lld: %s", (long long)job_id, err.msg);
		event(jm, job_id, "state", "queued (attempt %d)", job.attempt);
		api_notify_cluster(jm->api, job_id);
		api_notify_logs(jm->api, job_id);
		queue_pass(jm);
	}
out:
	task_rows_free(rows, n);
	job_row_release(&job);
}

static void apply_decision(struct job_manager *jm, struct job_row *job,
                           const struct task_row *tasks, size_t n,
                           const struct progress_decision *d)
{
	struct weir_error err = {0};

	switch (d->outcome) {
	case PROGRESS_NONE:
		return;
	case PROGRESS_JOB_SUCCEEDED:
	case PROGRESS_JOB_FAILED:
	case PROGRESS_JOB_KILLED: {
		struct outcome o = {0};
		o.state = d->outcome == PROGRESS_JOB_SUCCEEDED ? JOB_SUCCEEDED
		          : d->outcome == PROGRESS_JOB_FAILED  ? JOB_FAILED
		                                               : JOB_KILLED;
		o.exit_code = d->outcome == PROGRESS_JOB_SUCCEEDED ? 0 : d->exit_code;
		snprintf(o.reason, sizeof o.reason, "%s", d->reason);
		outcome_set(jm, job->id, &o);
		job->restart_pending = false;
		if (d->n_stop > 0)
			set_reason(&job->reason, "stopping: %s",
			           d->reason[0] ? d->reason : job_state_name(o.state));
		if (job_save(jm, job, &err) < 0)
			log_error("job %lld: %s", (long long)job->id, err.msg);
		if (d->n_stop > 0) {
			event(jm, job->id, "stopping", "%s%s%s: stopping %zu tasks",
			      job_state_name(o.state), d->reason[0] ? ": " : "", d->reason,
			      d->n_stop);
		}
		break;
	}
	case PROGRESS_RESTART_GANG:
		job->restart_pending = true;
		set_reason(&job->reason, "restarting: %s", d->reason);
		if (job_save(jm, job, &err) < 0)
			log_error("job %lld: %s", (long long)job->id, err.msg);
		event(jm, job->id, "restart", "restarting the gang after attempt %d: %s",
		      job->attempt, d->reason);
		break;
	}
	for (size_t i = 0; i < n && i < d->n_tasks; i++)
		if (d->stop && d->stop[i] && !task_final(&tasks[i]))
			stop_task(jm, &tasks[i]);
	api_notify_cluster(jm->api, job->id);
	wind_down(jm, job->id);
}

static void progress(struct job_manager *jm, int64_t job_id, const struct progress_event *ev)
{
	struct weir_error err = {0};
	struct job_row job = {0};
	struct task_row *rows = NULL;
	size_t n = 0;
	struct task_status *st = NULL;
	struct progress_decision d = {0};
	const struct job_spec *spec;
	enum job_state js;

	if (store_job_get(jm->store, job_id, &job, &err) < 0)
		return;
	if (winding(jm, &job)) {
		/* winding down: late ends are only recorded */
		wind_down(jm, job_id);
		goto out;
	}
	spec = spec_of(jm, &job, &err);
	if (!spec)
		goto fail;
	if (job_state_from_name(job.state, &js) == 0 && js != JOB_QUEUED &&
	    store_tasks_of_job(jm->store, job_id, job.attempt, &rows, &n, &err) < 0)
		goto fail;
	st = calloc(n ? n : 1, sizeof *st);
	if (!st)
		goto out;
	for (size_t i = 0; i < n; i++) {
		st[i].role = rows[i].role;
		st[i].index = rows[i].idx;
		task_state_from_name(rows[i].state, &st[i].state);
		st[i].exit_code = rows[i].exit_code;
		st[i].signal = rows[i].signal;
		st[i].oom_killed = rows[i].oom_killed;
		st[i].reason = rows[i].reason;
	}
	if (job_progress_decide(spec, job.attempt, st, n, ev, &d, &err) < 0)
		goto fail;
	apply_decision(jm, &job, rows, n, &d);
	progress_decision_release(&d);
	goto out;
fail:
	log_error("job %lld: cannot decide what follows: %s", (long long)job_id, err.msg);
out:
	free(st);
	task_rows_free(rows, n);
	job_row_release(&job);
}

static void task_ended(struct job_manager *jm, int64_t job_id, const char *role, int index)
{
	struct progress_event ev = {.kind = PROGRESS_TASK_ENDED, .role = role, .index = index};

	api_notify_logs(jm->api, job_id);
	progress(jm, job_id, &ev);
}

/* Starts one task's launcher; on failure the task ends `lost` at once. */
static bool spawn_task(struct job_manager *jm, struct task_row *t)
{
	struct weir_error err = {0};
	char *lp = log_path(jm, t->job_id, t->role, t->idx, t->attempt);
	struct executor_task et = {.job_id = t->job_id,
	                           .role = t->role,
	                           .index = t->idx,
	                           .attempt = t->attempt,
	                           .log_path = lp};
	int pid = 0;
	bool ok = false;
	struct executor *ex = exec_of(jm, t->job_id);

	if (!lp)
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
	else if (!ex)
		weir_error_set(&err, WEIR_E_INTERNAL, "no executor");
	else if (ex->ops->start_task(ex, &et, &pid, &err) == 0)
		ok = true;
	if (ok) {
		t->launcher_pid = pid;
	} else {
		task_set_state(t, TASK_LOST);
		set_reason(&t->reason, "cannot start: %s", err.msg);
		t->ended_at = clock_now_ms();
		log_error("job %lld %s:%d: %s", (long long)t->job_id, t->role, t->idx, err.msg);
	}
	if (store_task_update(jm->store, t, &err) < 0)
		log_error("job %lld: %s", (long long)t->job_id, err.msg);
	free(lp);
	return ok;
}

void job_manager_set_shipping(struct job_manager *jm, const char *shared_dir,
                              const char *node_cache_dir)
{
	free(jm->shared_dir);
	free(jm->node_cache_dir);
	jm->shared_dir = shared_dir ? strdup(shared_dir) : NULL;
	jm->node_cache_dir = node_cache_dir ? strdup(node_cache_dir) : NULL;
}

/* Where a gang job's archives go and are unpacked: its queue's shared_dir,
 * else the server's; NULL *shared when the job ships nothing (a local job,
 * or none is configured).  *node_cache: new, with %n for the node. */
static void job_shipping(struct job_manager *jm, int64_t job_id, const char **shared,
                         char **node_cache)
{
	struct job_route rt;
	const struct route_queue *q;
	const char *nc;

	*shared = NULL;
	*node_cache = NULL;
	route_get(jm, job_id, &rt);
	if (!rt.gang)
		return;
	q = queue_find(jm, rt.queue);
	*shared = q && q->shared_dir ? q->shared_dir : jm->shared_dir;
	if (!*shared)
		return;
	nc = q && q->node_cache_dir ? q->node_cache_dir : jm->node_cache_dir;
	if (nc)
		*node_cache = strdup(nc);
	else if (asprintf(node_cache, "%s/nodes/%%n", *shared) < 0)
		*node_cache = NULL;
}

/* The archive as the job's tasks read it: shipped to the shared folder when
 * the job ships (placed there now if it is not yet: once per content). */
static char *shipped_path(struct job_manager *jm, const char *shared, const char *archive,
                          struct weir_error *err)
{
	char *dir = fs_join(shared, "artifacts"), *memo = fs_join(jm->home, "cache"), *out = NULL;

	if (!dir || !memo)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	else
		artifact_ship(archive, dir, memo, &out, err);
	free(dir);
	free(memo);
	return out;
}

/* Before a gang job is submitted: each archive in the shared folder. */
static int ship_artifacts(struct job_manager *jm, int64_t job_id, const struct job_spec *spec,
                          struct weir_error *err)
{
	const char *shared;
	char *nc;

	job_shipping(jm, job_id, &shared, &nc);
	free(nc);
	for (size_t i = 0; shared && i < spec->n_artifacts; i++) {
		char *p;
		if (!spec->artifacts[i].archive)
			continue;
		p = shipped_path(jm, shared, spec->artifacts[i].path, err);
		if (!p)
			return -1;
		free(p);
	}
	return 0;
}

/* Where a gang goes: its queue's settings, the job's own `slurm:` over
 * them (the backend adds its defaults under both).  place->options is new
 * (free() it).  0, or -1 when out of memory. */
static int job_placement(struct job_manager *jm, int64_t job_id, const struct job_spec *spec,
                         struct executor_placement *place)
{
	struct job_route rt;
	const struct route_queue *q;
	struct executor_placement own = {
	    .partition = spec->slurm.partition,
	    .account = spec->slurm.account,
	    .qos = spec->slurm.qos,
	    .time = spec->slurm.time,
	    .options = (const char *const *)spec->slurm.sbatch_options,
	    .n_options = spec->slurm.n_sbatch_options,
	};

	route_get(jm, job_id, &rt);
	q = queue_find(jm, rt.queue);
	return executor_placement_merge(q ? &q->place : NULL, &own, place);
}

/* A gang backend (slurm) takes the whole gang at once; the outcome comes
 * later through job_manager_on_gang_event.  On a refusal now, every task
 * ends `lost` with the reason. */
static bool spawn_gang(struct job_manager *jm, const struct job_row *job, struct task_row *rows,
                       size_t n)
{
	struct weir_error err = {0};
	const struct job_spec *spec = spec_of(jm, job, &err);
	struct executor_task *et = calloc(n ? n : 1, sizeof *et);
	char **lp = calloc(n ? n : 1, sizeof *lp);
	struct executor_placement place = {0};
	bool ok = false;

	if (!et || !lp) {
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (!spec)
		goto out;
	if (job_placement(jm, job->id, spec, &place) < 0) {
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (ship_artifacts(jm, job->id, spec, &err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct role_spec *rs = job_spec_find_role(spec, rows[i].role);
		lp[i] = log_path(jm, rows[i].job_id, rows[i].role, rows[i].idx, rows[i].attempt);
		if (!lp[i] || !rs) {
			weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
			goto out;
		}
		et[i] = (struct executor_task){.job_id = rows[i].job_id,
		                               .role = rows[i].role,
		                               .index = rows[i].idx,
		                               .attempt = rows[i].attempt,
		                               .log_path = lp[i],
		                               .vcores = rs->vcores,
		                               .memory_mb = rs->memory_mb,
		                               .gpus = rs->gpus,
		                               .time_limit_s = spec->execution_timeout_s,
		                               .place = &place};
	}
	ok = jm->gang_exec->ops->start_gang(jm->gang_exec, et, n, &err) == 0;
out:
	for (size_t i = 0; i < n; i++) {
		if (!ok) {
			task_set_state(&rows[i], TASK_LOST);
			set_reason(&rows[i].reason, "cannot start: %s", err.msg);
			rows[i].ended_at = clock_now_ms();
			if (store_task_update(jm->store, &rows[i], NULL) < 0)
				log_error("job %lld: cannot record a task", (long long)job->id);
		}
		if (lp)
			free(lp[i]);
	}
	if (!ok)
		log_error("job %lld: %s", (long long)job->id, err.msg);
	free((void *)place.options);
	free(lp);
	free(et);
	return ok;
}

static void start_gang(struct job_manager *jm, int64_t job_id, const struct job_alloc *a)
{
	struct weir_error err = {0};
	struct job_row job = {0};
	struct task_row *rows = NULL;
	int failed = -1;

	if (store_job_get(jm->store, job_id, &job, &err) < 0)
		goto fail;
	job_set_state(&job, JOB_STARTING);
	job.allocated_at = clock_now_ms();
	set_str(&job.reason, "");
	if (job_save(jm, &job, &err) < 0)
		goto fail;
	event(jm, job_id, "state", "starting: attempt %d, %zu tasks", job.attempt, a->n_tasks);
	rows = calloc(a->n_tasks ? a->n_tasks : 1, sizeof *rows);
	if (!rows)
		goto fail;
	/* every row exists before any launcher can register */
	for (size_t i = 0; i < a->n_tasks; i++) {
		struct task_row *t = &rows[i];
		t->job_id = job_id;
		t->attempt = job.attempt;
		t->role = strdup(a->tasks[i].role);
		t->idx = a->tasks[i].index;
		task_set_state(t, TASK_PENDING);
		t->reason = strdup("");
		t->host = strdup("");
		t->gpus = strdup(a->tasks[i].gpus ? a->tasks[i].gpus : "");
		t->exit_code = -1;
		if (store_task_insert(jm->store, t, &err) < 0)
			goto fail;
	}
	struct executor *ex = exec_of(jm, job_id);
	if (ex && ex->ops->start_gang) {
		if (!spawn_gang(jm, &job, rows, a->n_tasks))
			failed = 0;
	} else {
		for (size_t i = 0; i < a->n_tasks; i++)
			if (!spawn_task(jm, &rows[i]) && failed < 0)
				failed = (int)i;
	}
	if (failed >= 0) {
		event(jm, job_id, "task", "%s:%d lost: %s", rows[failed].role, rows[failed].idx,
		      rows[failed].reason);
		task_ended(jm, job_id, rows[failed].role, rows[failed].idx);
	}
	goto out;
fail:
	log_error("job %lld: cannot start its gang: %s", (long long)job_id, err.msg);
out:
	if (rows)
		task_rows_free(rows, a->n_tasks);
	job_row_release(&job);
}

static void fail_job_now(struct job_manager *jm, int64_t job_id, const char *reason)
{
	struct weir_error err = {0};
	struct job_row job = {0};

	if (store_job_get(jm->store, job_id, &job, &err) < 0)
		return;
	job_set_state(&job, JOB_FAILED);
	set_str(&job.reason, reason);
	job.ended_at = clock_now_ms();
	if (job_save(jm, &job, &err) < 0)
		log_error("job %lld: %s", (long long)job_id, err.msg);
	event(jm, job_id, "state", "failed: %s", reason);
	ended_add(jm, &job);
	spec_forget(jm, job_id);
	job_row_release(&job);
}

static void queue_pass(struct job_manager *jm)
{
	struct weir_error err = {0};
	struct job_row *rows = NULL;
	size_t n = 0, nq = 0;
	struct queue_entry *q = NULL;
	struct queue_decision *d = NULL;
	size_t n_local = 0;

	if (jm->in_queue_pass) {
		jm->queue_again = true;
		return;
	}
	jm->in_queue_pass = true;
again:
	jm->queue_again = false;
	if (store_jobs_queued(jm->store, &rows, &n, &err) < 0)
		goto fail;
	q = calloc(n ? n : 1, sizeof *q);
	d = calloc(n ? n : 1, sizeof *d);
	if (!q || !d)
		goto fail;
	/* two queues, each with its own allocator: the local jobs first in q[],
	 * then those of the gang backend */
	nq = 0;
	for (int gang = 0; gang < 2; gang++) {
		for (size_t i = 0; i < n; i++) {
			const struct job_spec *spec;
			struct job_route rt;
			if (strcmp(rows[i].state, "queued") || rows[i].restart_pending)
				continue;
			route_get(jm, rows[i].id, &rt);
			if (rt.gang != (gang == 1))
				continue;
			spec = spec_of(jm, &rows[i], &err);
			if (!spec) {
				fail_job_now(jm, rows[i].id, err.msg);
				continue;
			}
			q[nq].job_id = rows[i].id;
			q[nq].priority = rows[i].priority;
			q[nq].spec = spec;
			nq++;
		}
		if (gang == 0)
			n_local = nq;
	}
	if (n_local > 0 && queue_schedule(jm->alloc, q, n_local, d, &err) < 0)
		goto fail;
	if (nq > n_local &&
	    queue_schedule(jm->gang_alloc ? jm->gang_alloc : jm->alloc, q + n_local, nq - n_local,
	                   d + n_local, &err) < 0)
		goto fail;
	for (size_t i = 0; i < nq; i++) {
		struct job_row *job = NULL;
		for (size_t k = 0; k < n; k++)
			if (rows[k].id == d[i].job_id)
				job = &rows[k];
		if (!job)
			continue;
		switch (d[i].action) {
		case QUEUE_START:
			start_gang(jm, job->id, &d[i].alloc);
			break;
		case QUEUE_WAIT:
			if (strcmp(job->reason ? job->reason : "", d[i].reason)) {
				set_str(&job->reason, d[i].reason);
				if (job_save(jm, job, &err) < 0)
					log_error("job %lld: %s", (long long)job->id, err.msg);
			}
			break;
		case QUEUE_REJECT:
			fail_job_now(jm, job->id, d[i].reason);
			break;
		}
	}
	queue_decisions_release(d, nq);
	free(q);
	free(d);
	q = NULL;
	d = NULL;
	job_rows_free(rows, n);
	rows = NULL;
	n = 0;
	if (jm->queue_again)
		goto again;
	jm->in_queue_pass = false;
	return;
fail:
	log_error("queue pass: %s", err.msg);
	free(q);
	free(d);
	job_rows_free(rows, n);
	jm->in_queue_pass = false;
}

/* ---- timeouts ---- */

static void on_timeout_timer(uv_timer_t *t)
{
	struct job_manager *jm = t->data;
	turn_begin(jm);
	turn_end(jm);
}

/* jm->dues holds each active job's next timeout.  Whatever changes a job's
 * row or outcome notes the job (job_save, outcome_set, a new job); the turn's
 * end looks again at those and at the jobs whose time has come, instead of
 * reading every active job from the store on every turn. */
static void timers_touch(struct job_manager *jm, int64_t job_id)
{
	if (jm->n_touched == jm->cap_touched) {
		size_t cap = jm->cap_touched ? 2 * jm->cap_touched : 64;
		int64_t *t = realloc(jm->touched, cap * sizeof *t);
		if (!t) {
			jm->timers_all = true;
			return;
		}
		jm->touched = t;
		jm->cap_touched = cap;
	}
	jm->touched[jm->n_touched++] = job_id;
}

/* Reads the job again: files its next timeout, or acts on one that expired. */
static void timers_review(struct job_manager *jm, int64_t job_id, int64_t now)
{
	struct weir_error err = {0};
	struct job_row job = {0};
	struct timer_job tj = {0};
	struct timer_result tr = {.expired = TIMER_NONE, .next_due_ms = TIMER_NEVER};

	if (store_job_get(jm->store, job_id, &job, &err) == 0 && !winding(jm, &job) &&
	    (tj.spec = spec_of(jm, &job, &err)) &&
	    job_state_from_name(job.state, &tj.state) == 0) {
		tj.queued_at_ms = job.queued_at;
		tj.allocated_at_ms = job.allocated_at;
		tj.running_at_ms = job.running_at;
		timers_check(&tj, now, &tr);
	}
	job_row_release(&job);
	if (due_table_set(&jm->dues, job_id, tr.next_due_ms) < 0)
		jm->timers_all = true;
	if (tr.expired != TIMER_NONE) {
		struct progress_event ev = {
		    .kind = PROGRESS_TIMEOUT, .timer = tr.expired, .reason = tr.reason};
		event(jm, job_id, "timeout", "%s", tr.reason);
		progress(jm, job_id, &ev);
	}
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Looks again at the noted jobs, each once. */
static void timers_review_touched(struct job_manager *jm, int64_t now)
{
	int64_t *ids = jm->touched;
	size_t n = jm->n_touched;

	if (n == 0)
		return;
	jm->touched = NULL;
	jm->n_touched = jm->cap_touched = 0;
	qsort(ids, n, sizeof *ids, cmp_id);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || ids[i] != ids[i - 1])
			timers_review(jm, ids[i], now);
	free(ids);
}

static void check_timers(struct job_manager *jm)
{
	int64_t now = clock_now_ms(), next;
	int64_t *due;
	size_t n = 0;

	if (jm->timers_all) {
		struct weir_error err = {0};
		struct job_row *rows = NULL;

		jm->timers_all = false;
		due_table_clear(&jm->dues);
		if (store_jobs_active(jm->store, &rows, &n, &err) < 0) {
			log_error("timers: %s", err.msg);
			jm->timers_all = true;
		}
		for (size_t i = 0; i < n; i++)
			timers_touch(jm, rows[i].id);
		job_rows_free(rows, n);
	}
	timers_review_touched(jm, now);
	due = due_table_due(&jm->dues, now, &n);
	for (size_t i = 0; i < n; i++)
		timers_review(jm, due[i], now);
	free(due);
	/* what the expired ones changed */
	timers_review_touched(jm, now);
	next = due_table_earliest(&jm->dues);
	if (next == TIMER_NEVER)
		uv_timer_stop(&jm->timeout_timer);
	else
		uv_timer_start(&jm->timeout_timer, on_timeout_timer,
		               (uint64_t)(next > now ? next - now : 0) + 5, 0);
}

/* ---- launchers that ended or vanished ---- */

static struct launcher_watch *watch_add(struct job_manager *jm, int64_t job_id, int attempt,
                                        const char *role, int index, int launcher_pid,
                                        int64_t due_ms, const char *why)
{
	struct launcher_watch *w = calloc(1, sizeof *w);

	if (!w || !(w->role = strdup(role))) {
		free(w);
		return NULL;
	}
	w->end = EXECUTOR_GANG_ENDED;
	w->job_id = job_id;
	w->attempt = attempt;
	w->index = index;
	w->launcher_pid = launcher_pid;
	w->due_ms = due_ms;
	snprintf(w->why, sizeof w->why, "%s", why);
	w->next = jm->watches;
	jm->watches = w;
	return w;
}

/* A gang backend's verdict on a task that did report a failure (a SIGKILL in
 * a Slurm job that ran out of memory is an OOM kill): the task, and the job
 * when this attempt decided it, take the backend's words. */
static void verdict_on_reported(struct job_manager *jm, const struct launcher_watch *w,
                                struct task_row *t, struct job_row *job)
{
	struct weir_error err = {0};
	enum task_state ts;

	if (task_state_from_name(t->state, &ts) < 0 || ts == TASK_SUCCEEDED)
		return;
	set_str(&t->reason, w->why);
	if (w->end == EXECUTOR_GANG_OOM)
		t->oom_killed = true;
	if (store_task_update(jm->store, t, &err) < 0)
		log_error("job %lld: %s", (long long)t->job_id, err.msg);
	event(jm, t->job_id, "task", "%s:%d %s: %s", t->role, t->idx, t->state, t->reason);
	if (job->attempt == t->attempt && job_final(job) && strcmp(job->state, "succeeded")) {
		set_reason(&job->reason, "%s:%d %s", t->role, t->idx, w->why);
		if (job_save(jm, job, &err) < 0)
			log_error("job %lld: %s", (long long)job->id, err.msg);
	}
}

/* The launcher is gone: if the task never reported its end, it is lost
 * (or killed, when weir was stopping it anyway). */
static void launcher_gone(struct job_manager *jm, const struct launcher_watch *w)
{
	struct weir_error err = {0};
	struct task_row t = {0};
	struct job_row job = {0};
	bool stopping;

	if (store_task_get(jm->store, w->job_id, w->attempt, w->role, w->index, &t, &err) < 0)
		return;
	if (store_job_get(jm->store, w->job_id, &job, &err) < 0)
		goto out;
	if (task_final(&t)) {
		if (w->end != EXECUTOR_GANG_ENDED)
			verdict_on_reported(jm, w, &t, &job);
		goto out;
	}
	stopping = winding(jm, &job) || job.attempt != t.attempt;
	if (stopping) {
		task_set_state(&t, TASK_KILLED);
		set_str(&t.reason, "stopped");
	} else {
		/* lost: the restart policy treats it as a SIGKILL; the backend's
		 * verdict, when it gave one, is a failure of the job's own */
		switch (w->end) {
		case EXECUTOR_GANG_OOM:
			task_set_state(&t, TASK_FAILED);
			t.oom_killed = true;
			t.exit_code = 137;
			t.signal = SIGKILL;
			break;
		case EXECUTOR_GANG_TIME_LIMIT:
			task_set_state(&t, TASK_FAILED);
			t.exit_code = 124; /* as weir's own execution timeout: not retried */
			break;
		case EXECUTOR_GANG_CANCELLED:
			task_set_state(&t, TASK_KILLED);
			t.signal = SIGKILL;
			t.exit_code = 137;
			break;
		default:
			task_set_state(&t, TASK_LOST);
		}
		set_str(&t.reason, w->why);
	}
	t.ended_at = clock_now_ms();
	if (store_task_update(jm->store, &t, &err) < 0)
		log_error("job %lld: %s", (long long)t.job_id, err.msg);
	event(jm, t.job_id, "task", "%s:%d %s: %s", t.role, t.idx, t.state, t.reason);
	if (t.attempt == job.attempt)
		task_ended(jm, t.job_id, t.role, t.idx);
out:
	job_row_release(&job);
	task_row_release(&t);
}

static void on_housekeeping(uv_timer_t *timer)
{
	struct job_manager *jm = timer->data;
	int64_t now = clock_mono_ms();
	struct launcher_watch **pw = &jm->watches;
	bool began = false;

	while (*pw) {
		struct launcher_watch *w = *pw;
		bool gone = false;
		if (w->due_ms > 0) {
			gone = now >= w->due_ms;
		} else if (exec_of(jm, w->job_id)) {
			struct executor *ex = exec_of(jm, w->job_id);
			struct executor_task et = {.job_id = w->job_id,
			                           .role = w->role,
			                           .index = w->index,
			                           .attempt = w->attempt,
			                           .launcher_pid = w->launcher_pid};
			gone = !ex->ops->is_alive(ex, &et);
		}
		if (!gone) {
			pw = &w->next;
			continue;
		}
		*pw = w->next;
		if (!began) {
			turn_begin(jm);
			began = true;
		}
		launcher_gone(jm, w);
		free(w->role);
		free(w);
	}
	if (began)
		turn_end(jm);
}

void job_manager_on_launcher_exit(void *arg, int64_t job_id, const char *role, int index,
                                  int attempt, int launcher_pid, int64_t exit_status,
                                  int term_signal)
{
	struct job_manager *jm = arg;
	char why[128];

	if (term_signal)
		snprintf(why, sizeof why, "launcher killed by signal %d without reporting",
		         term_signal);
	else
		snprintf(why, sizeof why, "launcher exited %lld without reporting",
		         (long long)exit_status);
	/* an `exited` report may still be on its way: look again in a second */
	watch_add(jm, job_id, attempt, role, index, launcher_pid, clock_mono_ms() + LOST_GRACE_MS,
	          why);
}

void job_manager_on_gang_event(void *arg, int64_t job_id, int attempt,
                               enum executor_gang_event ev, const char *backend_id,
                               const char *reason)
{
	struct job_manager *jm = arg;
	struct weir_error err = {0};
	struct job_row job = {0};
	struct task_row *rows = NULL;
	size_t n = 0;
	char key[64];

	turn_begin(jm);
	if (store_job_get(jm->store, job_id, &job, &err) < 0)
		goto out;
	snprintf(key, sizeof key, "backend_id.%lld", (long long)job_id);
	switch (ev) {
	case EXECUTOR_GANG_SUBMITTED:
		/* the backend's id of the attempt, for people and for a later recovery */
		{
			char val[96];
			snprintf(val, sizeof val, "%d %s", attempt, backend_id);
			if (store_meta_set(jm->store, key, val, &err) < 0)
				log_error("job %lld: %s", (long long)job_id, err.msg);
		}
		event(jm, job_id, "backend", "attempt %d: %s job %s submitted", attempt,
		      jm->gang_exec ? jm->gang_exec->ops->name : "", backend_id);
		break;
	case EXECUTOR_GANG_REJECTED: {
		struct outcome o = {.state = JOB_FAILED, .exit_code = -1};
		event(jm, job_id, "backend", "attempt %d refused: %s", attempt, reason);
		if (job.attempt != attempt || winding(jm, &job))
			break;
		snprintf(o.reason, sizeof o.reason, "%s refused the job: %s",
		         jm->gang_exec ? jm->gang_exec->ops->name : "the backend", reason);
		outcome_set(jm, job_id, &o);
		if (store_tasks_of_job(jm->store, job_id, attempt, &rows, &n, &err) < 0)
			break;
		for (size_t i = 0; i < n; i++) {
			if (task_final(&rows[i]))
				continue;
			task_set_state(&rows[i], TASK_LOST);
			set_reason(&rows[i].reason, "cannot start: %s", reason);
			rows[i].ended_at = clock_now_ms();
			if (store_task_update(jm->store, &rows[i], &err) < 0)
				log_error("job %lld: %s", (long long)job_id, err.msg);
		}
		api_notify_cluster(jm->api, job_id);
		wind_down(jm, job_id);
		break;
	}
	case EXECUTOR_GANG_PENDING:
	case EXECUTOR_GANG_RUNNING:
		if (job.attempt != attempt || strcmp(job.state, "starting"))
			break;
		if (ev == EXECUTOR_GANG_PENDING)
			set_reason(&job.reason, "pending in %s%s%s",
			           jm->gang_exec ? jm->gang_exec->ops->name : "the backend",
			           reason[0] ? ": " : "", reason);
		else
			set_str(&job.reason, "");
		if (job_save(jm, &job, &err) < 0)
			log_error("job %lld: %s", (long long)job_id, err.msg);
		if (ev == EXECUTOR_GANG_PENDING)
			event(jm, job_id, "backend", "%s", job.reason);
		break;
	case EXECUTOR_GANG_ENDED:
	case EXECUTOR_GANG_OOM:
	case EXECUTOR_GANG_TIME_LIMIT:
	case EXECUTOR_GANG_CANCELLED:
		event(jm, job_id, "backend", "attempt %d: %s", attempt, reason);
		if (store_tasks_of_job(jm->store, job_id, attempt, &rows, &n, &err) < 0)
			break;
		/* tasks that did not report are lost (a report may still be in flight);
		 * with a verdict, reported failures take its words too */
		for (size_t i = 0; i < n; i++)
			if (!task_final(&rows[i]) || ev != EXECUTOR_GANG_ENDED) {
				struct launcher_watch *w =
				    watch_add(jm, job_id, attempt, rows[i].role, rows[i].idx, 0,
				              clock_mono_ms() + LOST_GRACE_MS, reason);
				if (w)
					w->end = ev;
			}
		break;
	}
out:
	task_rows_free(rows, n);
	job_row_release(&job);
	turn_end(jm);
}

/* ---- api ops ---- */

/* Stores a validated spec as a queued job and runs a queue pass (inside the
 * caller's turn). */
static int submit_spec(struct job_manager *jm, const struct job_spec *spec, int64_t *id,
                       struct weir_error *err)
{
	struct job_row row = {0};
	json_t *sj = NULL;
	char *text = NULL;
	int rc = -1;
	bool gang = jm->default_gang;
	char key[48], val[96];

	if (spec->queue) {
		const struct route_queue *q = queue_find(jm, spec->queue);
		if (!q) {
			char names[512];
			job_manager_has_queue(jm, spec->queue, names, sizeof names);
			weir_error_set(err, WEIR_E_UNFIT,
			               "queue: no queue \"%s\" on this server (%s%s)", spec->queue,
			               jm->n_queues ? "its queues: " : "it has no queues",
			               names);
			goto out;
		}
		gang = q->gang;
	}
	if (gang && !jm->gang_exec) {
		weir_error_set(err, WEIR_E_UNFIT, "queue: this server has no Slurm backend");
		goto out;
	}
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
	snprintf(row.state, sizeof row.state, "queued");
	row.reason = "";
	row.priority = spec->priority;
	row.attempt = 1;
	row.max_restarts = spec->max_restarts;
	row.exit_code = -1;
	row.submitted_at = clock_now_ms();
	row.queued_at = row.submitted_at;
	turn_begin(jm);
	if (store_job_insert(jm->store, &row, id, err) < 0) {
		turn_end(jm);
		goto out;
	}
	timers_touch(jm, *id);
	route_key(*id, key, sizeof key);
	snprintf(val, sizeof val, "%s%s%s", gang ? "slurm" : "local", spec->queue ? " " : "",
	         spec->queue ? spec->queue : "");
	if (store_meta_set(jm->store, key, val, err) < 0) {
		turn_end(jm);
		goto out;
	}
	event(jm, *id, "submitted", "%s: %d tasks, %s%s%s", row.name, job_spec_task_count(spec),
	      gang ? "on slurm" : "local", spec->queue ? ", queue " : "",
	      spec->queue ? spec->queue : "");
	queue_pass(jm);
	turn_end(jm);
	rc = 0;
out:
	free(text);
	json_decref(sj);
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
	turn_begin(jm);
	if (submit_spec(jm, spec, &id, err) == 0)
		r = job_json_by_id(jm, id, err);
	turn_end(jm);
	job_spec_destroy(spec);
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
			json_t *c = json_object_get(counts, rows[i].state);
			json_object_set_new(counts, rows[i].state,
			                    json_integer(c ? json_integer_value(c) + 1 : 1));
		}
		task_rows_free(rows, n);
	}
	json_object_set_new(o, "roles", roles);
	json_object_set_new(o, "tasks_by_state", counts);
	job_spec_destroy(spec);
	json_decref(sj);
}

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
	if (store_job_list(jm->store, state, limit, &rows, &n, err) < 0)
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

static json_t *op_kill_job(void *ctx, int64_t id, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	json_t *r = NULL;

	turn_begin(jm);
	if (job_manager_kill(jm, id, err) == 0)
		r = job_json_by_id(jm, id, err);
	turn_end(jm);
	return r;
}

int job_manager_kill(struct job_manager *jm, int64_t id, struct weir_error *err)
{
	struct job_row job = {0};
	int rc = -1;
	enum job_state js;

	turn_begin(jm);
	if (store_job_get(jm->store, id, &job, err) < 0) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "job %lld: no such job", (long long)id);
		goto out;
	}
	if (job_final(&job)) {
		weir_error_set(err, WEIR_E_CONFLICT, "job %lld has already ended (%s)",
		               (long long)id, job.state);
		goto out;
	}
	event(jm, id, "kill", "kill requested");
	job_state_from_name(job.state, &js);
	if (js == JOB_QUEUED || job.restart_pending) {
		/* nothing runs for the current attempt (or it is already being
		 * stopped): the job ends now, the tasks' ends are only recorded */
		struct progress_decision d = {.outcome = PROGRESS_JOB_KILLED};
		snprintf(d.reason, sizeof d.reason, "killed by the user");
		d.exit_code = -1;
		apply_decision(jm, &job, NULL, 0, &d);
	} else {
		struct progress_event ev = {.kind = PROGRESS_KILL};
		progress(jm, id, &ev);
	}
	rc = 0;
out:
	turn_end(jm);
	job_row_release(&job);
	return rc;
}

static json_t *op_tasks(void *ctx, int64_t id, int attempt, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	json_t *a;

	if (store_job_get(jm->store, id, &job, err) < 0) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "job %lld: no such job", (long long)id);
		return NULL;
	}
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

	if (store_job_get(jm->store, id, &job, err) < 0) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "job %lld: no such job", (long long)id);
		return NULL;
	}
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

	if (store_job_get(jm->store, id, &job, err) < 0) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "job %lld: no such job", (long long)id);
		return -1;
	}
	if (attempt <= 0)
		attempt = job.attempt;
	if (store_task_get(jm->store, id, attempt, role, index, &t, err) < 0) {
		weir_error_set(err, WEIR_E_NOT_FOUND,
		               "job %lld has no task %s:%d in attempt %d (yet)", (long long)id,
		               role, index, attempt);
		goto out;
	}
	*path = log_path(jm, id, role, index, attempt);
	if (!*path) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	*ended = task_final(&t);
	rc = 0;
out:
	task_row_release(&t);
	job_row_release(&job);
	return rc;
}

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
	if (store_job_get(jm->store, id, job, err) < 0)
		return weir_error_set(err, WEIR_E_GONE, "job %lld: no such job", (long long)id);
	if (need_current && (winding(jm, job) || job->attempt != attempt))
		return weir_error_set(
		    err, WEIR_E_GONE, "job %lld attempt %d is no longer current (job %s%s)",
		    (long long)id, attempt, job->state, job->restart_pending ? ", restarting" : "");
	if (store_task_get(jm->store, id, attempt, role, index, t, err) < 0)
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

static json_t *register_answer(struct job_manager *jm, const struct job_spec *spec,
                               const struct role_spec *rs, const struct task_row *t)
{
	char *cmd = job_spec_role_command(spec, rs);
	char *wd = workdir_path(jm, t->job_id, t->role, t->idx, t->attempt);
	char *lp = log_path(jm, t->job_id, t->role, t->idx, t->attempt);
	const char *shared = NULL;
	char *node_cache = NULL;
	char *cache;
	json_t *roles = json_array(), *arts = json_array(), *r = NULL;

	job_shipping(jm, t->job_id, &shared, &node_cache);
	cache = node_cache ? node_cache : fs_join(jm->home, "cache");

	for (size_t i = 0; i < spec->n_roles; i++)
		json_array_append_new(
		    roles, json_pack("{s:s, s:i, s:b, s:b}", "name", spec->roles[i].name,
		                     "instances", spec->roles[i].instances, "untracked",
		                     spec->roles[i].untracked, "sidecar", spec->roles[i].sidecar));
	for (size_t i = 0; i < spec->n_artifacts; i++) {
		struct weir_error e2 = {0};
		char *p = shared && spec->artifacts[i].archive
		              ? shipped_path(jm, shared, spec->artifacts[i].path, &e2)
		              : NULL;
		if (shared && spec->artifacts[i].archive && !p)
			log_warn("job %lld: %s", (long long)t->job_id, e2.msg);
		json_array_append_new(arts, json_pack("{s:s, s:s, s:b}", "path",
		                                      p ? p : spec->artifacts[i].path, "name",
		                                      spec->artifacts[i].name, "archive",
		                                      spec->artifacts[i].archive));
		free(p);
	}
	/* A backend that binds devices itself (Slurm) gets null: the launcher
	 * keeps the CUDA_VISIBLE_DEVICES it was started with. */
	struct executor *ex = exec_of(jm, t->job_id);
	bool confined = ex && ex->confines_tasks;
	json_t *gpus = confined ? json_null() : json_string(t->gpus ? t->gpus : "");
	if (cmd && wd && lp && cache)
		r = json_pack("{s:I, s:s, s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:i, s:i, "
		              "s:o, s:o, s:o, s:o, s:I, s:I}",
		              "job", (json_int_t)t->job_id, "role", t->role, "index", t->idx,
		              "attempt", t->attempt, "framework", framework_name(spec->framework),
		              "command", cmd, "workdir", wd, "log", lp, "cache_dir", cache, "env",
		              env_json(spec, rs), "memory_mb", (json_int_t)rs->memory_mb, "vcores",
		              rs->vcores, "gpu_count", rs->gpus, "gpus", gpus,
		              "roles", roles, "artifacts", arts, "src_dir",
		              spec->src_dir ? json_string(spec->src_dir) : json_null(),
		              "registration_timeout_s", (json_int_t)spec->registration_timeout_s,
		              "execution_timeout_s", (json_int_t)spec->execution_timeout_s);
	else {
		json_decref(roles);
		json_decref(arts);
		json_decref(gpus);
	}
	if (r) {
		/* tells apart servers on one host (job ids start at 1 in every
		 * home): launchers can put it in names shared host-wide (cgroups) */
		char inst[24];
		uint64_t h = 1469598103934665603ULL;
		for (const char *c = jm->home; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
		snprintf(inst, sizeof inst, "%016llx", (unsigned long long)h);
		json_object_set_new(r, "server_instance", json_string(inst));
		/* the backend's step confines the task: the launcher makes
		 * no cgroup of its own (docs/slurm.md) */
		json_object_set_new(r, "cgroup", json_boolean(!confined));
	}
	if (wd)
		fs_mkdir_p(wd, 0755, NULL);
	free(cmd);
	free(wd);
	free(lp);
	free(cache);
	return r;
}

static json_t *op_launch_register(void *ctx, json_t *body, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	struct task_row t = {0};
	const struct job_spec *spec;
	const struct role_spec *rs;
	const char *role;
	int index, attempt;
	int64_t id;
	json_t *r = NULL, *v;
	enum task_state ts;

	if (launch_key(body, &id, &role, &index, &attempt, err) < 0)
		return NULL;
	turn_begin(jm);
	if (launch_load(jm, id, role, index, attempt, true, &job, &t, err) < 0)
		goto out;
	if (task_final(&t)) {
		weir_error_set(err, WEIR_E_GONE, "job %lld %s:%d has already ended (%s)",
		               (long long)id, role, index, t.state);
		goto out;
	}
	spec = spec_of(jm, &job, err);
	if (!spec)
		goto out;
	rs = job_spec_find_role(spec, role);
	if (!rs) {
		weir_error_set(err, WEIR_E_GONE, "job %lld has no role %s", (long long)id, role);
		goto out;
	}
	r = register_answer(jm, spec, rs, &t);
	if (!r) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if ((v = json_object_get(body, "host")) && json_is_string(v))
		set_str(&t.host, json_string_value(v));
	if ((v = json_object_get(body, "port")) && json_is_integer(v))
		t.port = (int)json_integer_value(v);
	if ((v = json_object_get(body, "pid")) && json_is_integer(v) && json_integer_value(v) > 0)
		t.launcher_pid = (int)json_integer_value(v);
	task_state_from_name(t.state, &ts);
	if (ts == TASK_PENDING) {
		task_set_state(&t, TASK_STARTING);
		t.registered_at = clock_now_ms();
		event(jm, id, "task", "%s:%d registered at %s:%d", role, index, t.host, t.port);
	}
	if (store_task_update(jm->store, &t, err) < 0) {
		json_decref(r);
		r = NULL;
		goto out;
	}
	/* the gang is complete when no task of the attempt waits to register */
	if (!strcmp(job.state, "starting")) {
		struct task_row *rows = NULL;
		size_t n = 0;
		bool all = true;
		if (store_tasks_of_job(jm->store, id, attempt, &rows, &n, err) == 0) {
			for (size_t i = 0; i < n; i++)
				if (!strcmp(rows[i].state, "pending"))
					all = false;
			task_rows_free(rows, n);
			if (all) {
				job_set_state(&job, JOB_RUNNING);
				job.running_at = clock_now_ms();
				if (!job.started_at)
					job.started_at = job.running_at;
				if (job_save(jm, &job, err) == 0)
					event(jm, id, "state",
					      "running: attempt %d, every task "
					      "registered",
					      attempt);
				api_notify_cluster(jm->api, id);
			}
		}
	}
out:
	turn_end(jm);
	task_row_release(&t);
	job_row_release(&job);
	return r;
}

static json_t *op_launch_cluster(void *ctx, int64_t id, int attempt, bool *ready,
                                 struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	struct task_row *rows = NULL;
	size_t n = 0;
	json_t *cluster = NULL, *r = NULL;

	*ready = false;
	if (store_job_get(jm->store, id, &job, err) < 0) {
		weir_error_set(err, WEIR_E_GONE, "job %lld: no such job", (long long)id);
		return NULL;
	}
	if (winding(jm, &job) || job.attempt != attempt) {
		weir_error_set(err, WEIR_E_GONE,
		               "job %lld attempt %d is no longer current (job %s)", (long long)id,
		               attempt, job.state);
		goto out;
	}
	if (strcmp(job.state, "running"))
		goto out;
	if (store_tasks_of_job(jm->store, id, attempt, &rows, &n, err) < 0)
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

static json_t *op_launch_started(void *ctx, json_t *body, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	struct task_row t = {0};
	const char *role;
	int index, attempt;
	int64_t id;
	json_t *r = NULL, *v;

	if (launch_key(body, &id, &role, &index, &attempt, err) < 0)
		return NULL;
	turn_begin(jm);
	if (launch_load(jm, id, role, index, attempt, false, &job, &t, err) < 0)
		goto out;
	if (!task_final(&t) && strcmp(t.state, "running")) {
		task_set_state(&t, TASK_RUNNING);
		if ((v = json_object_get(body, "pid")) && json_is_integer(v))
			t.pid = (int)json_integer_value(v);
		t.started_at = clock_now_ms();
		if (store_task_update(jm->store, &t, err) < 0)
			goto out;
		event(jm, id, "task", "%s:%d running (pid %d)", role, index, t.pid);
	}
	r = json_object();
out:
	turn_end(jm);
	task_row_release(&t);
	job_row_release(&job);
	return r;
}

static json_t *op_launch_exited(void *ctx, json_t *body, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	struct task_row t = {0};
	const char *role, *why = NULL;
	int index, attempt;
	int64_t id;
	json_t *r = NULL, *v;
	bool stopping;

	if (launch_key(body, &id, &role, &index, &attempt, err) < 0)
		return NULL;
	turn_begin(jm);
	if (launch_load(jm, id, role, index, attempt, false, &job, &t, err) < 0)
		goto out;
	if (task_final(&t)) {
		r = json_object(); /* a repeated report */
		goto out;
	}
	v = json_object_get(body, "exit_code");
	t.exit_code = json_is_integer(v) ? (int)json_integer_value(v) : -1;
	v = json_object_get(body, "signal");
	t.signal = json_is_integer(v) ? (int)json_integer_value(v) : 0;
	t.oom_killed = json_is_true(json_object_get(body, "oom_killed"));
	v = json_object_get(body, "peak_memory_bytes");
	if (json_is_integer(v))
		t.peak_memory_bytes = json_integer_value(v);
	v = json_object_get(body, "cpu_time_ms");
	if (json_is_integer(v))
		t.cpu_time_ms = json_integer_value(v);
	v = json_object_get(body, "reason");
	if (json_is_string(v) && json_string_length(v) > 0)
		why = json_string_value(v);
	t.ended_at = clock_now_ms();
	stopping = winding(jm, &job) || job.attempt != attempt;
	if (t.oom_killed) {
		task_set_state(&t, TASK_FAILED);
		set_str(&t.reason, "OOMKilled");
		if (t.exit_code < 0)
			t.exit_code = 137;
	} else if (t.exit_code == 0 && t.signal == 0) {
		task_set_state(&t, TASK_SUCCEEDED);
		set_str(&t.reason, why ? why : "");
	} else if (stopping) {
		task_set_state(&t, TASK_KILLED);
		set_str(&t.reason, why ? why : "stopped");
	} else {
		task_set_state(&t, TASK_FAILED);
		if (why)
			set_str(&t.reason, why);
		else if (t.signal > 0)
			set_reason(&t.reason, "killed by signal %d", t.signal);
		else
			set_reason(&t.reason, "exited %d", t.exit_code);
	}
	if (store_task_update(jm->store, &t, err) < 0)
		goto out;
	event(jm, id, "task", "%s:%d %s%s%s", role, index, t.state, t.reason[0] ? ": " : "",
	      t.reason);
	if (attempt == job.attempt)
		task_ended(jm, id, role, index);
	r = json_object();
out:
	turn_end(jm);
	task_row_release(&t);
	job_row_release(&job);
	return r;
}

static const struct api_ops ops = {
    .submit = op_submit,
    .list_jobs = op_list_jobs,
    .get_job = op_get_job,
    .kill_job = op_kill_job,
    .tasks = op_tasks,
    .events = op_events,
    .log_locate = op_log_locate,
    .launch_register = op_launch_register,
    .launch_cluster = op_launch_cluster,
    .launch_started = op_launch_started,
    .launch_exited = op_launch_exited,
};

const struct api_ops *job_manager_api_ops(void)
{
	return &ops;
}

int job_manager_submit_spec(struct job_manager *jm, const struct job_spec *spec, int64_t *job_id,
                            struct weir_error *err)
{
	int rc;

	if (job_spec_validate(spec, err) < 0)
		return -1;
	turn_begin(jm);
	rc = submit_spec(jm, spec, job_id, err);
	turn_end(jm);
	return rc;
}

void job_manager_set_end_callback(struct job_manager *jm, job_manager_end_fn fn, void *arg)
{
	jm->end_fn = fn;
	jm->end_arg = arg;
}

void job_manager_turn_begin(struct job_manager *jm)
{
	turn_begin(jm);
}

void job_manager_turn_end(struct job_manager *jm)
{
	turn_end(jm);
}

/* ---- recovery ---- */

/* A gang backend follows again the attempt it was given before the restart
 * (by the id stored at EXECUTOR_GANG_SUBMITTED); is_alive then answers for
 * its tasks until the backend sees the end. */
static void adopt_gang(struct job_manager *jm, const struct job_row *job,
                       const struct task_row *rows, size_t n)
{
	struct weir_error err = {0};
	char key[64], id[64];
	char *v = NULL;
	int attempt = 0;
	struct executor *ex = exec_of(jm, job->id);
	const struct task_row *open = NULL;

	if (!ex || !ex->ops->adopt_gang)
		return;
	snprintf(key, sizeof key, "backend_id.%lld", (long long)job->id);
	if (store_meta_get(jm->store, key, &v, NULL) == 0 && v &&
	    sscanf(v, "%d %63s", &attempt, id) == 2 && attempt == job->attempt) {
		if (ex->ops->adopt_gang(ex, job->id, attempt, id, &err) < 0)
			log_error("recovery: job %lld: %s", (long long)job->id, err.msg);
		free(v);
		return;
	}
	free(v);
	/* No id for this attempt: the server may have stopped between the
	 * backend taking the gang and the id being stored.  Look for it by what
	 * it was submitted with, rather than losing it or submitting it twice. */
	for (size_t i = 0; i < n && !open; i++)
		if (!task_final(&rows[i]))
			open = &rows[i];
	if (open && ex->ops->find_gang) {
		char *lp = log_path(jm, job->id, open->role, open->idx, open->attempt);
		if (!lp || ex->ops->find_gang(ex, job->id, job->attempt, lp, &err) < 0)
			log_error("recovery: job %lld: %s", (long long)job->id,
			          lp ? err.msg : "out of memory");
		else
			event(jm, job->id, "backend",
			      "attempt %d: no %s id stored; looking for its job by name", job->attempt,
			      ex->ops->name);
		free(lp);
	}
}

int job_manager_recover(struct job_manager *jm, struct weir_error *err)
{
	struct job_row *jobs = NULL;
	size_t nj = 0;
	int rc = -1;

	turn_begin(jm);
	if (store_jobs_active(jm->store, &jobs, &nj, err) < 0)
		goto out;
	for (size_t i = 0; i < nj; i++) {
		struct job_row *job = &jobs[i];
		struct task_row *rows = NULL;
		struct task_alloc *ta = NULL;
		size_t n = 0;
		const struct job_spec *spec;
		struct weir_error e2 = {0};
		bool any_lost = false;

		if (!strcmp(job->state, "queued") && !job->restart_pending)
			continue;
		spec = spec_of(jm, job, &e2);
		if (!spec) {
			fail_job_now(jm, job->id, e2.msg);
			continue;
		}
		if (store_tasks_of_job(jm->store, job->id, job->attempt, &rows, &n, &e2) < 0) {
			log_error("recovery: job %lld: %s", (long long)job->id, e2.msg);
			continue;
		}
		ta = calloc(n ? n : 1, sizeof *ta);
		for (size_t k = 0; ta && k < n; k++) {
			ta[k].role = rows[k].role;
			ta[k].index = rows[k].idx;
			ta[k].gpus = rows[k].gpus;
		}
		if (ta && n > 0 && alloc_reserve(alloc_of(jm, job->id), job->id, spec, ta, n, &e2) < 0)
			log_error("recovery: job %lld: cannot take its resources back: %s",
			          (long long)job->id, e2.msg);
		free(ta);
		adopt_gang(jm, job, rows, n);
		for (size_t k = 0; k < n; k++) {
			struct task_row *t = &rows[k];
			struct executor_task et = {.job_id = t->job_id,
			                           .role = t->role,
			                           .index = t->idx,
			                           .attempt = t->attempt,
			                           .launcher_pid = t->launcher_pid};
			if (task_final(t))
				continue;
			struct executor *ex = exec_of(jm, job->id);
			if (ex && (t->launcher_pid > 0 || ex->ops->adopt_gang) &&
			    ex->ops->is_alive(ex, &et)) {
				watch_add(jm, t->job_id, t->attempt, t->role, t->idx,
				          t->launcher_pid, 0,
				          "launcher vanished without reporting");
				continue;
			}
			bool stopping = winding(jm, job);
			task_set_state(t, stopping ? TASK_KILLED : TASK_LOST);
			set_str(&t->reason,
			        stopping ? "stopped" : "launcher gone while the server was down");
			t->ended_at = clock_now_ms();
			if (store_task_update(jm->store, t, &e2) < 0)
				log_error("recovery: %s", e2.msg);
			event(jm, job->id, "task", "%s:%d %s: %s", t->role, t->idx, t->state,
			      t->reason);
			any_lost = true;
		}
		task_rows_free(rows, n);
		if (any_lost || winding(jm, job)) {
			struct progress_event ev = {.kind = PROGRESS_TASK_ENDED, .role = NULL};
			progress(jm, job->id, &ev);
		}
	}
	queue_pass(jm);
	rc = 0;
out:
	job_rows_free(jobs, nj);
	turn_end(jm);
	return rc;
}

void job_manager_counts(struct job_manager *jm, int *active_jobs, int *running_tasks)
{
	struct job_row *rows = NULL;
	size_t n = 0;
	int tasks = 0;

	*active_jobs = 0;
	*running_tasks = 0;
	if (store_jobs_active(jm->store, &rows, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct task_row *t = NULL;
		size_t nt = 0;
		if (store_tasks_of_job(jm->store, rows[i].id, rows[i].attempt, &t, &nt, NULL) ==
		    0) {
			for (size_t k = 0; k < nt; k++)
				tasks += !task_final(&t[k]);
			task_rows_free(t, nt);
		}
	}
	*active_jobs = (int)n;
	*running_tasks = tasks;
	job_rows_free(rows, n);
}

/* ---- lifetime ---- */

struct job_manager *job_manager_create(uv_loop_t *loop, struct store *store,
                                       const struct node_resources *node, const char *home,
                                       struct weir_error *err)
{
	struct job_manager *jm = calloc(1, sizeof *jm);

	if (!jm || !(jm->home = strdup(home))) {
		free(jm);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	jm->alloc = alloc_state_create(node, err);
	if (!jm->alloc) {
		free(jm->home);
		free(jm);
		return NULL;
	}
	jm->loop = loop;
	jm->store = store;
	jm->node = *node;
	uv_timer_init(loop, &jm->timeout_timer);
	jm->timeout_timer.data = jm;
	jm->timers_all = true;
	uv_timer_init(loop, &jm->housekeeping);
	jm->housekeeping.data = jm;
	uv_timer_start(&jm->housekeeping, on_housekeeping, HOUSEKEEPING_MS, HOUSEKEEPING_MS);
	return jm;
}

void job_manager_set_executor(struct job_manager *jm, struct executor *ex)
{
	if (ex && ex->ops->start_gang)
		job_manager_set_routes(jm, NULL, ex, true, NULL, 0, NULL);
	else
		job_manager_set_routes(jm, ex, NULL, false, NULL, 0, NULL);
}

static void queues_free(struct job_manager *jm)
{
	for (size_t i = 0; i < jm->n_queues; i++) {
		struct route_queue *q = &jm->queues[i];
		free(q->name);
		free(q->shared_dir);
		free(q->node_cache_dir);
		free((void *)q->place.partition);
		free((void *)q->place.account);
		free((void *)q->place.qos);
		free((void *)q->place.time);
		for (size_t k = 0; k < q->place.n_options; k++)
			free((void *)q->place.options[k]);
		free((void *)q->place.options);
	}
	free(jm->queues);
	jm->queues = NULL;
	jm->n_queues = 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int job_manager_set_routes(struct job_manager *jm, struct executor *local, struct executor *gang,
                           bool default_gang, const struct job_manager_queue *queues, size_t n,
                           struct weir_error *err)
{
	queues_free(jm);
	jm->exec = local;
	jm->gang_exec = gang;
	jm->default_gang = default_gang && gang;
	if (gang && !jm->gang_alloc) {
		static const char *ids[GANG_NODE_GPUS];
		static char names[GANG_NODE_GPUS][8];
		struct node_resources unbounded = {.vcores = GANG_NODE_VCORES,
		                                   .memory_mb = GANG_NODE_MEMORY_MB,
		                                   .gpu_ids = ids,
		                                   .n_gpus = GANG_NODE_GPUS};
		for (size_t i = 0; i < GANG_NODE_GPUS; i++) {
			snprintf(names[i], sizeof names[i], "%zu", i);
			ids[i] = names[i];
		}
		jm->gang_alloc = alloc_state_create(&unbounded, err);
		if (!jm->gang_alloc)
			return -1;
	}
	if (n == 0)
		return 0;
	jm->queues = calloc(n, sizeof *jm->queues);
	if (!jm->queues)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		struct route_queue *q = &jm->queues[i];
		const struct executor_placement *p = &queues[i].place;
		char **opts = calloc(p->n_options + 1, sizeof *opts);
		jm->n_queues++;
		q->gang = queues[i].gang;
		q->name = strdup(queues[i].name);
		q->place.partition = dup_or_null(p->partition);
		q->place.account = dup_or_null(p->account);
		q->place.qos = dup_or_null(p->qos);
		q->place.time = dup_or_null(p->time);
		q->shared_dir = dup_or_null(queues[i].shared_dir);
		q->node_cache_dir = dup_or_null(queues[i].node_cache_dir);
		q->place.options = (const char *const *)opts;
		if (!q->name || !opts)
			goto oom;
		for (size_t k = 0; k < p->n_options; k++) {
			if (!(opts[k] = strdup(p->options[k])))
				goto oom;
			q->place.n_options++;
		}
	}
	return 0;
oom:
	queues_free(jm);
	return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
}

void job_manager_set_api(struct job_manager *jm, struct api *api)
{
	jm->api = api;
}

static void jm_closed(uv_handle_t *h)
{
	struct job_manager *jm = h->data;
	/* libuv gives no order between the two close callbacks */
	if (--jm->open_handles == 0)
		free(jm);
}

void job_manager_destroy(struct job_manager *jm)
{
	if (!jm)
		return;
	while (jm->specs)
		spec_forget(jm, jm->specs->job_id);
	due_table_clear(&jm->dues);
	free(jm->touched);
	while (jm->ended) {
		struct ended_job *e = jm->ended;
		jm->ended = e->next;
		free(e->reason);
		free(e);
	}
	while (jm->watches) {
		struct launcher_watch *w = jm->watches;
		jm->watches = w->next;
		free(w->role);
		free(w);
	}
	alloc_state_destroy(jm->alloc);
	alloc_state_destroy(jm->gang_alloc);
	queues_free(jm);
	free(jm->shared_dir);
	free(jm->node_cache_dir);
	free(jm->home);
	uv_timer_stop(&jm->timeout_timer);
	uv_timer_stop(&jm->housekeeping);
	jm->open_handles = 2;
	uv_close((uv_handle_t *)&jm->timeout_timer, jm_closed);
	uv_close((uv_handle_t *)&jm->housekeeping, jm_closed);
}
