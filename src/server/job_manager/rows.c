/* rows.c: the rows of active jobs, kept in memory.  While a job is active
 * its entry holds its row, its current attempt's task rows and its route as
 * last read or written: every change is written through to the store, and
 * what the manager reads comes from the entry, so a task's start and end
 * read the store once instead of a dozen times.  The entry is made when the
 * job is submitted or first read while not final, dropped with its spec
 * (jm_spec_forget) or when a write of it fails; a rolled-back transaction
 * drops them all (the store is read again).  The API's views read the store.
 */
#include "server/job_manager/jm_internal.h"

#include "lib/hashmap.h"
#include "lib/log.h"

struct jm_rows_entry {
	bool have_row, have_tasks, have_route;
	struct job_row row;
	int tasks_attempt;
	struct task_row *tasks;
	size_t n_tasks, cap_tasks;
	struct jm_route route;
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
	entry_free(hashmap_remove_int(jm->rows, job_id));
}

void jm_rows_destroy(struct job_manager *jm)
{
	if (!jm->rows)
		return;
	rows_clear(jm);
	hashmap_destroy(jm->rows);
	jm->rows = NULL;
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

int jm_job_load(struct job_manager *jm, int64_t job_id, struct job_row *out,
                struct weir_error *err)
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

	jm_timers_touch(jm, job->id);
	if (e && e->have_row && row_same(&e->row, job))
		return 0; /* the store has it already */
	if (store_job_update(jm->store, job, err) < 0) {
		jm_rows_forget(jm, job->id);
		return -1;
	}
	keep_row(jm, job);
	return 0;
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
	size_t cap;

	if (e->n_tasks < e->cap_tasks)
		return 0;
	cap = e->cap_tasks ? e->cap_tasks * 2 : 4;
	t = realloc(e->tasks, cap * sizeof *t);
	if (!t)
		return -1;
	e->tasks = t;
	e->cap_tasks = cap;
	return 0;
}

/* The entry's tasks become copies of rows[0..n) of `attempt`. */
static void keep_tasks(struct job_manager *jm, int64_t job_id, int attempt,
                       const struct task_row *rows, size_t n)
{
	struct jm_rows_entry *e = entry_of(jm, job_id, false);

	if (!e || (e->have_tasks && e->tasks_attempt > attempt))
		return;
	tasks_clear(e);
	e->tasks_attempt = attempt;
	for (size_t i = 0; i < n; i++) {
		if (tasks_grow(e) < 0 || task_row_copy(&rows[i], &e->tasks[e->n_tasks]) < 0) {
			tasks_clear(e);
			return;
		}
		e->n_tasks++;
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

int jm_task_load(struct job_manager *jm, int64_t job_id, int attempt, const char *role,
                 int index, struct task_row *out, struct weir_error *err)
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
		return weir_error_set(err, WEIR_E_NOT_FOUND, "job %lld attempt %d has no task %s:%d",
		                      (long long)job_id, attempt, role, index);
	if (task_row_copy(t, out) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return 0;
}

int jm_task_add(struct job_manager *jm, const struct task_row *t, struct weir_error *err)
{
	struct jm_rows_entry *e;

	if (store_task_insert(jm->store, t, err) < 0) {
		jm_rows_forget(jm, t->job_id);
		return -1;
	}
	e = entry_of(jm, t->job_id, false);
	if (!e)
		return 0;
	if (e->have_tasks && e->tasks_attempt != t->attempt)
		tasks_clear(e);
	if (!e->have_tasks) {
		/* the first row of a new attempt: the rest follow in this turn */
		e->tasks_attempt = t->attempt;
		e->have_tasks = true;
	}
	if (tasks_grow(e) < 0 || task_row_copy(t, &e->tasks[e->n_tasks]) < 0) {
		jm_rows_forget(jm, t->job_id);
		return 0;
	}
	e->n_tasks++;
	return 0;
}

int jm_task_save(struct job_manager *jm, const struct task_row *t, struct weir_error *err)
{
	struct jm_rows_entry *e;
	struct task_row *held, copy;

	if (store_task_update(jm->store, t, err) < 0) {
		jm_rows_forget(jm, t->job_id);
		return -1;
	}
	e = tasks_held(jm, t->job_id, t->attempt);
	if (!e || !(held = task_find(e, t->role, t->idx)))
		return 0;
	if (task_row_copy(t, &copy) < 0) {
		jm_rows_forget(jm, t->job_id);
		return 0;
	}
	task_row_release(held);
	*held = copy;
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

void jm_rows_keep_route(struct job_manager *jm, int64_t job_id, const struct jm_route *r,
                        bool make)
{
	struct jm_rows_entry *e = entry_of(jm, job_id, make);

	if (!e)
		return;
	e->route = *r;
	e->have_route = true;
}
