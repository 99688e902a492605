/* manager.c: the job manager itself (jm_internal.h has the map of its
 * pieces): its lifetime and each concern's context, the journal (a
 * turn's events written together at its end, turn.c), the specs of active
 * jobs, and the paths of a job's files under the home.
 */
#include "server/job_manager/jm_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "server/observe_series.h"
#include "server/secrets.h"

/* ---- helpers ---- */

void jm_set_reason(char **dst, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	str_set(dst, buf);
}

/* The turn's events, in the order they came, written at its end. */
struct jm_events {
	struct event_row *v;
	size_t n, cap;
};

/* Keeps the event for the turn's end; -1 when out of memory. */
static int events_keep(struct job_manager *jm, int64_t job_id, int64_t time, const char *kind,
                       const char *message)
{
	struct jm_events *q = jm->events;
	struct event_row *e;

	if (!q && !(q = jm->events = calloc(1, sizeof *q)))
		return -1;
	if (ALLOC_GROW(q->v, q->n + 1, q->cap) < 0)
		return -1;
	e = &q->v[q->n];
	*e = (struct event_row){.job_id = job_id, .time = time};
	if (!(e->kind = strdup(kind)) || !(e->message = strdup(message))) {
		event_row_release(e);
		return -1;
	}
	q->n++;
	return 0;
}

/* Writes the turn's events: a statement for up to STORE_EVENTS_MAX of
 * them, or, when one fails (nothing of it stored), its events one by one to
 * say which could not be. */
static void events_flush(struct job_manager *jm)
{
	struct jm_events *q = jm->events;

	if (!q || q->n == 0)
		return;
	for (size_t at = 0; at < q->n; at += STORE_EVENTS_MAX) {
		size_t m = q->n - at < STORE_EVENTS_MAX ? q->n - at : STORE_EVENTS_MAX;
		struct weir_error err = {0};
		if (store_events_add(jm->store, q->v + at, m, &err) == 0)
			continue;
		for (size_t i = at; i < at + m; i++) {
			struct event_row *e = &q->v[i];
			struct weir_error e2 = {0};
			if (store_event_add(jm->store, e->job_id, e->time, e->kind, e->message,
			                    NULL, &e2) < 0)
				log_error("job %lld: cannot journal \"%s\": %s",
				          (long long)e->job_id, e->message, e2.msg);
		}
	}
	for (size_t i = 0; i < q->n; i++)
		event_row_release(&q->v[i]);
	q->n = 0;
}

static void events_destroy(struct job_manager *jm)
{
	struct jm_events *q = jm->events;

	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++)
		event_row_release(&q->v[i]);
	free(q->v);
	free(q);
	jm->events = NULL;
}

void jm_settle(struct job_manager *jm)
{
	jm_rows_flush(jm);
	events_flush(jm);
}

void jm_event(struct job_manager *jm, int64_t job_id, const char *kind, const char *fmt, ...)
{
	char buf[768];
	struct weir_error err = {0};
	int64_t now = clock_now_ms();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (events_keep(jm, job_id, now, kind, buf) == 0)
		return;
	events_flush(jm); /* those before it first */
	if (store_event_add(jm->store, job_id, now, kind, buf, NULL, &err) < 0)
		log_error("job %lld: cannot journal \"%s\": %s", (long long)job_id, buf, err.msg);
}

bool jm_job_final(const struct job_row *job)
{
	return job_state_is_final(job->state);
}

bool jm_task_final(const struct task_row *t)
{
	return task_state_is_final(t->state);
}

int jm_job_set_state(struct job_row *job, enum job_state s)
{
	if (!job_state_can_move(job->state, s)) {
		log_error("job %lld: illegal state move %s -> %s refused", (long long)job->id,
		          job_state_name(job->state), job_state_name(s));
		return -1;
	}
	job->state = s;
	return 0;
}

int jm_task_set_state(struct task_row *t, enum task_state s)
{
	if (!task_state_can_move(t->state, s)) {
		log_error("job %lld task %s.%d (attempt %d): illegal state move %s -> %s refused",
		          (long long)t->job_id, t->role ? t->role : "?", t->idx, t->attempt,
		          task_state_name(t->state), task_state_name(s));
		return -1;
	}
	t->state = s;
	return 0;
}

void jm_task_end_of(const struct task_row *t, struct task_end *out)
{
	memset(out, 0, sizeof *out);
	out->state = t->state;
	out->cause = t->cause;
	out->exit_code = t->exit_code;
	out->signal = t->signal;
	out->oom_killed = t->oom_killed;
	snprintf(out->reason, sizeof out->reason, "%s", t->reason ? t->reason : "");
}

int jm_task_end_apply(struct task_row *t, const struct task_end *e)
{
	if (jm_task_set_state(t, e->state) < 0)
		return -1; /* the row as it was */
	t->cause = e->cause;
	t->exit_code = e->exit_code;
	t->signal = e->signal;
	t->oom_killed = e->oom_killed;
	str_set(&t->reason, e->reason);
	return 0;
}

struct executor_task jm_executor_task(const struct task_row *t)
{
	return (struct executor_task){.job_id = t->job_id,
	                              .role = t->role,
	                              .index = t->idx,
	                              .attempt = t->attempt,
	                              .launcher_pid = t->launcher_pid};
}

struct task_status *jm_task_statuses(const struct task_row *rows, size_t n)
{
	struct task_status *st = calloc(n ? n : 1, sizeof *st);

	for (size_t i = 0; st && i < n; i++) {
		st[i].role = rows[i].role;
		st[i].index = rows[i].idx;
		st[i].state = rows[i].state;
		st[i].cause = rows[i].cause;
		st[i].exit_code = rows[i].exit_code;
		st[i].signal = rows[i].signal;
		st[i].reason = rows[i].reason;
	}
	return st;
}

bool jm_rolled_back(struct job_manager *jm, uint64_t *seen)
{
	uint64_t rb = store_rollbacks(jm->store);

	if (rb == *seen)
		return false;
	*seen = rb;
	return true;
}

/* ---- results waiting for the last task ---- */

bool jm_winding(struct job_manager *jm, const struct job_row *job)
{
	struct job_outcome o;
	return jm_job_final(job) || job->restart_pending || jm_outcome_get(jm, job->id, &o);
}

/* ---- paths ---- */

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

char *jm_log_path(struct job_manager *jm, int64_t job_id, const char *role, int index, int attempt)
{
	/* ROLE-INDEX.ATTEMPT.log beside the try's folder, not in a logs/ of its
	 * own: a one-task job (every DAG task) makes one directory fewer */
	return job_path(jm, job_id, "%s-%d.%d.log", role, index, attempt);
}

char *jm_log_path_found(struct job_manager *jm, int64_t job_id, const char *role, int index,
                        int attempt)
{
	char *p = jm_log_path(jm, job_id, role, index, attempt), *before;

	if (!p || access(p, F_OK) == 0 || errno != ENOENT)
		return p;
	/* a task of an earlier version wrote HOME/jobs/ID/logs/ROLE-INDEX.ATTEMPT.log */
	before = job_path(jm, job_id, "logs/%s-%d.%d.log", role, index, attempt);
	if (before && access(before, F_OK) == 0) {
		free(p);
		return before;
	}
	free(before);
	return p;
}

char *jm_workdir_path(struct job_manager *jm, int64_t job_id, const char *role, int index,
                      int attempt)
{
	/* ROLE-INDEX.ATTEMPT beside logs/: one folder a try, not two (a new inode
	 * costs the file system more than its name suggests) */
	return job_path(jm, job_id, "%s-%d.%d", role, index, attempt);
}

/* ---- specs of active jobs ---- */

const struct job_spec *jm_spec_of(struct job_manager *jm, const struct job_row *job,
                                  struct weir_error *err)
{
	json_error_t je;
	json_t *j;
	struct job_spec *spec = hashmap_get_int(jm->specs, job->id);

	struct weir_error e2 = {0};
	char *sealed = NULL;

	if (spec)
		return spec;
	/* a spec with secrets: the sealed one, the row's is masked */
	if (jm->secrets &&
	    secrets_store_spec_get(secrets_store_of(jm->secrets), job->id, &sealed, &e2) < 0 &&
	    e2.kind != WEIR_E_NOT_FOUND) {
		if (err)
			*err = e2;
		return NULL;
	}
	j = json_loads(sealed ? sealed : job->spec_json, 0, &je);
	if (sealed)
		memset(sealed, 0, strlen(sealed));
	free(sealed);
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
	if (hashmap_put_int(jm->specs, job->id, spec, NULL) < 0) {
		job_spec_destroy(spec);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	return spec;
}

void jm_spec_keep(struct job_manager *jm, int64_t job_id, struct job_spec *spec)
{
	void *old = NULL;

	if (spec && hashmap_put_int(jm->specs, job_id, spec, &old) < 0)
		job_spec_destroy(spec);
	/* the spec of a job whose insert was rolled back (a full disk): its
	 * id is the next job's */
	if (old != spec)
		job_spec_destroy(old);
}

void jm_spec_forget(struct job_manager *jm, int64_t job_id)
{
	job_spec_destroy(hashmap_remove_int(jm->specs, job_id));
	jm_rows_forget(jm, job_id);
}

void job_manager_forget_ended(struct job_manager *jm, int64_t job_id)
{
	jm_spec_forget(jm, job_id);
}

/* ---- lifetime ---- */

struct job_manager *job_manager_create(uv_loop_t *loop, struct store *store,
                                       const struct node_resources *node, const char *home,
                                       struct weir_error *err)
{
	struct job_manager *jm = calloc(1, sizeof *jm);

	if (!jm || !(jm->home = strdup(home)) || !(jm->specs = hashmap_create(HASHMAP_KEY_INT)) ||
	    !(jm->rows = hashmap_create(HASHMAP_KEY_INT))) {
		if (jm) {
			free(jm->home);
			hashmap_destroy(jm->specs);
		}
		free(jm);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	jm->loop = loop;
	jm->store = store;
	jm->node = *node;
	if (!(jm->placement = jm_placement_create(err)) ||
	    !(jm->queue = jm_queue_create(node, err)) ||
	    !(jm->timeouts = jm_timeouts_create(jm, err)) ||
	    !(jm->watch = jm_watch_create(jm, err)) || !(jm->turn = jm_turn_create(jm, err))) {
		job_manager_destroy(jm);
		return NULL;
	}
	return jm;
}

void job_manager_set_secrets(struct job_manager *jm, struct secrets *secrets)
{
	jm->secrets = secrets;
}

void job_manager_set_read_key(struct job_manager *jm, const char *key)
{
	jm->read_key = key;
}

void job_manager_set_observer(struct job_manager *jm, const struct job_manager_observer *obs)
{
	if (obs)
		jm->observer = *obs;
	else
		memset(&jm->observer, 0, sizeof jm->observer);
}

void jm_notify_cluster(struct job_manager *jm, int64_t job_id)
{
	if (jm->observer.cluster_changed)
		jm->observer.cluster_changed(jm->observer.ctx, job_id);
}

void jm_notify_logs(struct job_manager *jm, int64_t job_id)
{
	if (jm->observer.logs_changed)
		jm->observer.logs_changed(jm->observer.ctx, job_id);
}

void job_manager_set_end_callback(struct job_manager *jm, job_manager_end_fn fn, void *arg)
{
	jm->end_fn = fn;
	jm->end_arg = arg;
}

void job_manager_open(struct job_manager *jm)
{
	struct executor *backends[2] = {jm_local_exec(jm), jm_gang_exec(jm)};

	if (jm->open)
		return;
	jm->open = true;
	for (size_t i = 0; i < 2; i++)
		if (backends[i] && backends[i]->ops->open)
			backends[i]->ops->open(backends[i]);
	jm_queue_pass(jm);
}

void job_manager_counts(struct job_manager *jm, int *active_jobs, int *running_tasks)
{
	struct job_row *rows = NULL;
	size_t n = 0;
	int tasks = 0;

	*active_jobs = 0;
	*running_tasks = 0;
	jm_rows_flush(jm);
	if (store_jobs_active(jm->store, &rows, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct task_row *t = NULL;
		size_t nt = 0;
		if (store_tasks_of_job(jm->store, rows[i].id, rows[i].attempt, &t, &nt, NULL) ==
		    0) {
			for (size_t k = 0; k < nt; k++)
				tasks += !jm_task_final(&t[k]);
			task_rows_free(t, nt);
		}
	}
	*active_jobs = (int)n;
	*running_tasks = tasks;
	job_rows_free(rows, n);
}

void job_manager_destroy(struct job_manager *jm)
{
	if (!jm)
		return;
	if (jm->specs) {
		struct hashmap_iter it;
		hashmap_iter_init(&it, jm->specs);
		while (hashmap_iter_next(&it))
			job_spec_destroy(it.value);
		hashmap_destroy(jm->specs);
	}
	jm_turn_destroy(jm); /* what the turn wrote, committed */
	jm_rows_destroy(jm);
	events_destroy(jm);
	jm_watch_destroy(jm->watch);
	jm_timeouts_destroy(jm->timeouts);
	jm_queue_destroy(jm->queue);
	jm_placement_destroy(jm->placement);
	free(jm->home);
	free(jm);
}
