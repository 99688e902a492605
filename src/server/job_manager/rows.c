/* rows.c: the rows of active jobs, kept in memory.  While a job is active
 * its entry holds its row, its waiting result, its current attempt's task
 * rows and its route as last read or written, and what the manager reads
 * comes from the entry, so a task's start and end read the store once
 * instead of a dozen times.  Inside a turn a change is written behind: the
 * entry notes it and jm_rows_flush() writes each changed row once, with the
 * values it has by then (the turn's end, and before anything reads these
 * rows from the store), so a task that registers in the turn it was added
 * is inserted `starting`, and a result decided and recorded in one turn is
 * never written as waiting.  The writes stay in the turn's transaction: a
 * crash loses them with the rest of the turn, as before.  The entry is made
 * when the job is submitted or first read while not final, dropped with its
 * spec (jm_spec_forget, which writes what waits first) or when a write of
 * it fails; a rolled-back transaction drops them all (the store is read
 * again).  The API's views read the store, after jm_rows_flush().
 */
#include "server/job_manager/jm_internal.h"

#include "lib/grow.h"
#include "lib/hashmap.h"
#include "lib/log.h"

/* A kept task row against the store's. */
enum jm_held { HELD_STORED, HELD_CHANGED, HELD_NEW };

struct jm_rows_entry {
	bool have_row, have_tasks, have_route, have_outcome;
	bool row_changed; /* the row differs from the store's */
	bool listed;      /* in jm->unwritten */
	struct job_row row;
	int tasks_attempt;
	struct task_row *tasks;
	unsigned char *held; /* enum jm_held of each task */
	size_t n_tasks, cap_tasks;
	struct jm_route route;
	/* the waiting result, and what the store has of it */
	bool outcome_waits, stored_waits;
	struct job_outcome outcome, stored;
};

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static int job_row_copy(const struct job_row *src, struct job_row *dst)
{
	*dst = *src;
	dst->name = dup_or_empty(src->name);
	dst->spec_json = dup_or_empty(src->spec_json);
	dst->framework = dup_or_empty(src->framework);
	dst->reason = dup_or_empty(src->reason);
	if (!dst->name || !dst->spec_json || !dst->framework || !dst->reason) {
		job_row_release(dst);
		return -1;
	}
	return 0;
}

static int task_row_copy(const struct task_row *src, struct task_row *dst)
{
	*dst = *src;
	dst->role = dup_or_empty(src->role);
	dst->reason = dup_or_empty(src->reason);
	dst->host = dup_or_empty(src->host);
	dst->gpus = dup_or_empty(src->gpus);
	if (!dst->role || !dst->reason || !dst->host || !dst->gpus) {
		task_row_release(dst);
		return -1;
	}
	return 0;
}

static void tasks_clear(struct jm_rows_entry *e)
{
	for (size_t i = 0; i < e->n_tasks; i++)
		task_row_release(&e->tasks[i]);
	e->n_tasks = 0;
	e->have_tasks = false;
}

static void entry_free(struct jm_rows_entry *e)
{
	if (!e)
		return;
	if (e->have_row)
		job_row_release(&e->row);
	tasks_clear(e);
	free(e->tasks);
	free(e->held);
	free(e);
}

static void rows_clear(struct job_manager *jm)
{
	struct hashmap_iter it;

	hashmap_iter_init(&it, jm->rows);
	while (hashmap_iter_next(&it)) {
		entry_free(it.value);
		hashmap_iter_remove(&it);
	}
	jm->n_unwritten = 0; /* rolled back with their transaction */
}

static bool outcome_same(bool wa, const struct job_outcome *a, bool wb, const struct job_outcome *b)
{
	return wa == wb && (!wa || (a->state == b->state && a->exit_code == b->exit_code &&
	                            a->cause == b->cause && !strcmp(a->reason, b->reason)));
}

/* Writes what the entry holds and the store has not (0, or -1 with err:
 * the entry is then dropped by the caller). */
static int entry_write(struct job_manager *jm, struct jm_rows_entry *e, int64_t job_id,
                       struct weir_error *err)
{
	if (e->row_changed) {
		if (store_job_update(jm->store, &e->row, err) < 0)
			return -1;
		e->row_changed = false;
	}
	if (e->have_outcome &&
	    !outcome_same(e->outcome_waits, &e->outcome, e->stored_waits, &e->stored)) {
		if (store_job_outcome_set(jm->store, job_id, e->outcome_waits ? &e->outcome : NULL,
		                          err) < 0)
			return -1;
		e->stored_waits = e->outcome_waits;
		e->stored = e->outcome;
	}
	for (size_t i = 0; i < e->n_tasks; i++) {
		if (e->held[i] == HELD_NEW && store_task_insert(jm->store, &e->tasks[i], err) < 0)
			return -1;
		if (e->held[i] == HELD_CHANGED &&
		    store_task_update(jm->store, &e->tasks[i], err) < 0)
			return -1;
		e->held[i] = HELD_STORED;
	}
	return 0;
}

/* entry_write(), the entry dropped when it fails. */
static int entry_settle(struct job_manager *jm, struct jm_rows_entry *e, int64_t job_id)
{
	struct weir_error err = {0};

	if (entry_write(jm, e, job_id, &err) == 0)
		return 0;
	log_error("job %lld: cannot write its rows: %s", (long long)job_id, err.msg);
	entry_free(hashmap_remove_int(jm->rows, job_id));
	return -1;
}

/* Notes that the entry holds what the store has not, for jm_rows_flush();
 * outside a turn (or when the note cannot be kept) it is written now.  0, or
 * -1 when that write failed (the entry is gone). */
static int entry_changed(struct job_manager *jm, struct jm_rows_entry *e, int64_t job_id)
{
	if (e->listed)
		return 0;
	if (ALLOC_GROW(jm->unwritten, jm->n_unwritten + 1, jm->cap_unwritten) == 0) {
		jm->unwritten[jm->n_unwritten++] = job_id;
		e->listed = true;
		return 0;
	}
	return entry_settle(jm, e, job_id);
}

void jm_rows_flush(struct job_manager *jm)
{
	if (jm_rolled_back(jm, &jm->rows_rollbacks))
		rows_clear(jm);
	/* a write that fails drops its entry only: the others are written */
	for (size_t i = 0; i < jm->n_unwritten; i++) {
		struct jm_rows_entry *e = hashmap_get_int(jm->rows, jm->unwritten[i]);
		if (e && e->listed) {
			e->listed = false;
			entry_settle(jm, e, jm->unwritten[i]);
		}
	}
	jm->n_unwritten = 0;
}

/* The job's entry; a new one when `make` and there is none (NULL when out
 * of memory, or none and not `make`). */
static struct jm_rows_entry *entry_of(struct job_manager *jm, int64_t job_id, bool make)
{
	struct jm_rows_entry *e;

	if (jm_rolled_back(jm, &jm->rows_rollbacks))
		rows_clear(jm);
	e = hashmap_get_int(jm->rows, job_id);
	if (e || !make)
		return e;
	e = calloc(1, sizeof *e);
	if (!e || hashmap_put_int(jm->rows, job_id, e, NULL) < 0) {
		free(e);
		return NULL;
	}
	return e;
}

void jm_rows_forget(struct job_manager *jm, int64_t job_id)
{
	struct jm_rows_entry *e = entry_of(jm, job_id, false);

	if (e && e->listed && entry_settle(jm, e, job_id) < 0)
		return; /* dropped */
	entry_free(hashmap_remove_int(jm->rows, job_id));
}

/* Drops the entry without writing it (a write of it failed). */
static void entry_drop(struct job_manager *jm, int64_t job_id)
{
	entry_free(hashmap_remove_int(jm->rows, job_id));
}

void jm_rows_destroy(struct job_manager *jm)
{
	if (!jm->rows)
		return;
	rows_clear(jm);
	hashmap_destroy(jm->rows);
	jm->rows = NULL;
	free(jm->unwritten);
	jm->unwritten = NULL;
	jm->cap_unwritten = 0;
}

/* ---- the job's row ---- */

/* Keeps `row` as the entry's (a copy; an active job's entry is made). */
static void keep_row(struct job_manager *jm, const struct job_row *row)
{
	struct jm_rows_entry *e = entry_of(jm, row->id, !jm_job_final(row));
	struct job_row copy;

	if (!e)
		return;
	if (job_row_copy(row, &copy) < 0) {
		jm_rows_forget(jm, row->id);
		return;
	}
	if (e->have_row)
		job_row_release(&e->row);
	e->row = copy;
	e->have_row = true;
}

int jm_job_add(struct job_manager *jm, struct job_row *row, const struct jm_route *route,
               struct weir_error *err)
{
	struct jm_rows_entry *e;

	if (!row->nonce)
		row->nonce = store_job_nonce_new();
	if (store_job_insert_routed(jm->store, row, route->gang ? JOB_ROUTE_GANG : JOB_ROUTE_LOCAL,
	                            route->queue[0] ? route->queue : NULL, &row->id, err) < 0)
		return -1;
	if (row->state == JOB_QUEUED)
		jm_queue_note(jm, row->id);
	keep_row(jm, row);
	jm_rows_keep_route(jm, row->id, route, true);
	/* a new job: no result waits */
	if ((e = entry_of(jm, row->id, false)))
		e->have_outcome = true;
	return 0;
}

int jm_job_load(struct job_manager *jm, int64_t job_id, struct job_row *out, struct weir_error *err)
{
	struct jm_rows_entry *e = entry_of(jm, job_id, false);

	if (e && e->have_row) {
		if (job_row_copy(&e->row, out) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return 0;
	}
	if (store_job_get(jm->store, job_id, out, err) < 0)
		return -1;
	keep_row(jm, out);
	return 0;
}

int jm_job_nonce(struct job_manager *jm, int64_t job_id, int64_t *nonce)
{
	struct jm_rows_entry *e = entry_of(jm, job_id, false);
	struct weir_error err = {0};
	int rc;

	if (e && e->have_row) {
		*nonce = e->row.nonce;
		return 0;
	}
	rc = store_job_nonce_get(jm->store, job_id, nonce, &err);
	if (rc < 0)
		log_error("job %lld: %s", (long long)job_id, err.msg);
	return rc;
}

/* Whether the columns store_job_update() writes are the same in both. */
static bool row_same(const struct job_row *a, const struct job_row *b)
{
	return a->state == b->state && a->cause == b->cause && a->priority == b->priority &&
	       a->attempt == b->attempt && a->exit_code == b->exit_code &&
	       a->restart_pending == b->restart_pending && a->queued_at == b->queued_at &&
	       a->allocated_at == b->allocated_at && a->running_at == b->running_at &&
	       a->started_at == b->started_at && a->ended_at == b->ended_at &&
	       !strcmp(a->reason ? a->reason : "", b->reason ? b->reason : "");
}

int jm_job_save(struct job_manager *jm, const struct job_row *job, struct weir_error *err)
{
	struct jm_rows_entry *e = entry_of(jm, job->id, false);
	struct job_row copy;

	jm_timers_touch(jm, job->id);
	if (job->state == JOB_QUEUED)
		jm_queue_note(jm, job->id);
	if (e && e->have_row && row_same(&e->row, job))
		return 0; /* kept already */
	if (e && e->have_row && job_row_copy(job, &copy) == 0) {
		job_row_release(&e->row);
		e->row = copy;
		e->row_changed = true;
		if (entry_changed(jm, e, job->id) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL,
			                      "job %lld: its row was not written",
			                      (long long)job->id);
		return 0;
	}
	if (e && e->listed)
		entry_settle(jm, e, job->id);
	if (store_job_update(jm->store, job, err) < 0) {
		entry_drop(jm, job->id);
		return -1;
	}
	keep_row(jm, job);
	return 0;
}

/* ---- its waiting result ---- */

bool jm_outcome_get(struct job_manager *jm, int64_t job_id, struct job_outcome *o)
{
	struct weir_error err = {0};
	struct jm_rows_entry *e = entry_of(jm, job_id, false);
	int r;

	if (e && e->have_outcome) {
		if (e->outcome_waits)
			*o = e->outcome;
		return e->outcome_waits;
	}
	r = store_job_outcome_get(jm->store, job_id, o, &err);
	if (r < 0) {
		log_error("job %lld: %s", (long long)job_id, err.msg);
		return false;
	}
	if (e) {
		e->have_outcome = true;
		e->outcome_waits = e->stored_waits = r == 0;
		if (r == 0)
			e->outcome = e->stored = *o;
	}
	return r == 0;
}

void jm_outcome_set(struct job_manager *jm, int64_t job_id, const struct job_outcome *o)
{
	struct weir_error err = {0};
	struct job_outcome was;
	struct jm_rows_entry *e;

	jm_timers_touch(jm, job_id);
	jm_outcome_get(jm, job_id, &was); /* what the store has, when not kept yet */
	e = entry_of(jm, job_id, false);
	if (e && e->have_outcome) {
		e->outcome_waits = o != NULL;
		if (o)
			e->outcome = *o;
		entry_changed(jm, e, job_id);
		return;
	}
	if (store_job_outcome_set(jm->store, job_id, o, &err) < 0)
		log_error("job %lld: %s", (long long)job_id, err.msg);
}

/* ---- its tasks ---- */

/* Copies of rows[0..n) into *out; -1 when out of memory. */
static int tasks_copy(const struct task_row *rows, size_t n, struct task_row **out)
{
	struct task_row *c = calloc(n ? n : 1, sizeof *c);

	if (!c)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (task_row_copy(&rows[i], &c[i]) < 0) {
			task_rows_free(c, i);
			return -1;
		}
	*out = c;
	return 0;
}

/* Makes room for one more task row in the entry. */
static int tasks_grow(struct jm_rows_entry *e)
{
	struct task_row *t;
	unsigned char *h;
	size_t cap;

	if (e->n_tasks < e->cap_tasks)
		return 0;
	cap = e->cap_tasks ? e->cap_tasks * 2 : 4;
	t = realloc(e->tasks, cap * sizeof *t);
	if (!t)
		return -1;
	e->tasks = t;
	h = realloc(e->held, cap);
	if (!h)
		return -1;
	e->held = h;
	e->cap_tasks = cap;
	return 0;
}

/* The entry's tasks become copies of rows[0..n) of `attempt`. */
static void keep_tasks(struct job_manager *jm, int64_t job_id, int attempt,
                       const struct task_row *rows, size_t n)
{
	struct jm_rows_entry *e = entry_of(jm, job_id, false);

	if (!e || (e->have_tasks && e->tasks_attempt >= attempt))
		return; /* what is kept is as new (and may not be written yet) */
	if (e->listed && entry_settle(jm, e, job_id) < 0)
		return;
	tasks_clear(e);
	e->tasks_attempt = attempt;
	for (size_t i = 0; i < n; i++) {
		if (tasks_grow(e) < 0 || task_row_copy(&rows[i], &e->tasks[e->n_tasks]) < 0) {
			tasks_clear(e);
			return;
		}
		e->held[e->n_tasks++] = HELD_STORED;
	}
	e->have_tasks = true;
}

/* The entry when it holds the tasks of `attempt`, else NULL. */
static struct jm_rows_entry *tasks_held(struct job_manager *jm, int64_t job_id, int attempt)
{
	struct jm_rows_entry *e = entry_of(jm, job_id, false);

	return e && e->have_tasks && e->tasks_attempt == attempt ? e : NULL;
}

int jm_tasks_load(struct job_manager *jm, int64_t job_id, int attempt, struct task_row **rows,
                  size_t *n, struct weir_error *err)
{
	struct jm_rows_entry *e = tasks_held(jm, job_id, attempt);

	if (e) {
		if (tasks_copy(e->tasks, e->n_tasks, rows) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		*n = e->n_tasks;
		return 0;
	}
	if (store_tasks_of_job(jm->store, job_id, attempt, rows, n, err) < 0)
		return -1;
	keep_tasks(jm, job_id, attempt, *rows, *n);
	return 0;
}

static struct task_row *task_find(struct jm_rows_entry *e, const char *role, int index)
{
	for (size_t i = 0; i < e->n_tasks; i++)
		if (e->tasks[i].idx == index && !strcmp(e->tasks[i].role, role))
			return &e->tasks[i];
	return NULL;
}

int jm_task_load(struct job_manager *jm, int64_t job_id, int attempt, const char *role, int index,
                 struct task_row *out, struct weir_error *err)
{
	struct jm_rows_entry *e = tasks_held(jm, job_id, attempt);
	struct task_row *rows = NULL, *t;
	size_t n = 0;

	if (!e && entry_of(jm, job_id, false)) {
		/* an active job: the attempt's rows at once, its other tasks are
		 * read next */
		if (jm_tasks_load(jm, job_id, attempt, &rows, &n, err) < 0)
			return -1;
		task_rows_free(rows, n);
		e = tasks_held(jm, job_id, attempt);
	}
	if (!e)
		return store_task_get(jm->store, job_id, attempt, role, index, out, err);
	t = task_find(e, role, index);
	if (!t)
		return weir_error_set(err, WEIR_E_NOT_FOUND,
		                      "job %lld attempt %d has no task %s:%d", (long long)job_id,
		                      attempt, role, index);
	if (task_row_copy(t, out) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return 0;
}

int jm_task_add(struct job_manager *jm, const struct task_row *t, struct weir_error *err)
{
	struct jm_rows_entry *e = entry_of(jm, t->job_id, false);

	if (e && e->have_tasks && e->tasks_attempt != t->attempt) {
		if (e->listed && entry_settle(jm, e, t->job_id) < 0)
			e = NULL;
		else
			tasks_clear(e);
	}
	if (e && !e->have_tasks) {
		/* the first row of a new attempt: the rest follow in this turn */
		e->tasks_attempt = t->attempt;
		e->have_tasks = true;
	}
	if (e && tasks_grow(e) == 0 && task_row_copy(t, &e->tasks[e->n_tasks]) == 0) {
		/* inserted with what it holds at the flush */
		e->held[e->n_tasks++] = HELD_NEW;
		if (entry_changed(jm, e, t->job_id) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL,
			                      "job %lld: its task rows were not written",
			                      (long long)t->job_id);
		return 0;
	}
	if (e && e->listed && entry_settle(jm, e, t->job_id) < 0)
		e = NULL;
	if (store_task_insert(jm->store, t, err) < 0) {
		entry_drop(jm, t->job_id);
		return -1;
	}
	e = entry_of(jm, t->job_id, false);
	if (!e || !e->have_tasks || e->tasks_attempt != t->attempt)
		return 0;
	if (tasks_grow(e) < 0 || task_row_copy(t, &e->tasks[e->n_tasks]) < 0) {
		jm_rows_forget(jm, t->job_id);
		return 0;
	}
	e->held[e->n_tasks++] = HELD_STORED;
	return 0;
}

int jm_task_save(struct job_manager *jm, const struct task_row *t, struct weir_error *err)
{
	struct jm_rows_entry *e = tasks_held(jm, t->job_id, t->attempt);
	struct task_row *held = e ? task_find(e, t->role, t->idx) : NULL, copy;

	if (held && task_row_copy(t, &copy) == 0) {
		size_t i = (size_t)(held - e->tasks);
		task_row_release(held);
		*held = copy;
		if (e->held[i] == HELD_STORED)
			e->held[i] = HELD_CHANGED;
		if (entry_changed(jm, e, t->job_id) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL,
			                      "job %lld: its task rows were not written",
			                      (long long)t->job_id);
		return 0;
	}
	if (store_task_update(jm->store, t, err) < 0) {
		entry_drop(jm, t->job_id);
		return -1;
	}
	return 0;
}

/* ---- its route ---- */

bool jm_rows_route(struct job_manager *jm, int64_t job_id, struct jm_route *r)
{
	struct jm_rows_entry *e = entry_of(jm, job_id, false);

	if (!e || !e->have_route)
		return false;
	*r = e->route;
	return true;
}

void jm_rows_keep_route(struct job_manager *jm, int64_t job_id, const struct jm_route *r, bool make)
{
	struct jm_rows_entry *e = entry_of(jm, job_id, make);

	if (!e)
		return;
	e->route = *r;
	e->have_route = true;
}
