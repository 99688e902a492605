/* queue.c: the queue context: the local node's allocator, the gang
 * backend's (one that never runs out: the cluster counts its own
 * resources), and the queue pass, which hands the queued jobs to
 * sched/queue.c (queue_schedule_routes: each route against its allocator)
 * and carries out what it decided: start, wait with a reason, or fail.
 */
#include "server/job_manager/jm_internal.h"

#include <stdio.h>

#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/log.h"
#include "sched/queue.h"

/* A gang backend (Slurm) counts its cluster's resources itself: the jobs
 * routed to it share an allocator of their own that never runs out, so
 * they neither wait for nor take the local node's resources, and a job
 * too large for the cluster is refused by the backend, in its words. */
#define GANG_NODE_VCORES 1000000
#define GANG_NODE_MEMORY_MB ((uint64_t)1 << 40)
#define GANG_NODE_GPUS 256

struct jm_queue {
	struct alloc_state *alloc;      /* the local node's */
	struct alloc_state *gang_alloc; /* the gang backend's, unbounded; NULL without one */
	bool in_pass;                   /* a pass runs (a start may end a job: no recursion) */
	bool again;                     /* ... and another was asked for */
	/* the jobs that may wait in the queue, when that is known: each row
	 * written queued notes its id (jm_queue_note) and a pass keeps those it
	 * leaves waiting, so a pass reads their kept rows (rows.c), and one
	 * with none reads nothing (most passes: one runs at each job's end).
	 * Unknown at start, after a rolled-back transaction or when a note could
	 * not be kept: the pass reads the store's queue. */
	bool known;
	int64_t *ids;
	size_t n_ids, cap_ids;
	uint64_t rollbacks; /* store_rollbacks() it was known under */
	/* the jobs whose start took resources in the open turn: given back
	 * when it is rolled back (jm_queue_turn_end) */
	int64_t *taken;
	size_t n_taken, cap_taken;
};

void jm_queue_note(struct job_manager *jm, int64_t job_id)
{
	struct jm_queue *qc = jm->queue;

	if (jm_rolled_back(jm, &qc->rollbacks))
		qc->known = false;
	if (!qc->known)
		return;
	if (ALLOC_GROW(qc->ids, qc->n_ids + 1, qc->cap_ids) < 0) {
		qc->known = false;
		return;
	}
	qc->ids[qc->n_ids++] = job_id;
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The store's queue order: priority DESC, id ASC. */
static int cmp_queue(const void *a, const void *b)
{
	const struct job_row *x = a, *y = b;
	if (x->priority != y->priority)
		return x->priority < y->priority ? 1 : -1;
	return (x->id > y->id) - (x->id < y->id);
}

/* The queued jobs in the queue's order (store_jobs_queued's): their kept
 * rows when they are known, else the store's.  0, or -1 with err. */
static int queued_rows(struct job_manager *jm, struct job_row **rows, size_t *n,
                       struct weir_error *err)
{
	struct jm_queue *qc = jm->queue;
	int64_t *ids = qc->ids;
	size_t m = qc->n_ids;
	struct job_row *v = NULL;

	qc->ids = NULL;
	qc->n_ids = qc->cap_ids = 0;
	*rows = NULL;
	*n = 0;
	if (jm_rolled_back(jm, &qc->rollbacks))
		qc->known = false;
	if (qc->known && (v = calloc(m ? m : 1, sizeof *v))) {
		if (m)
			qsort(ids, m, sizeof *ids, cmp_id);
		for (size_t i = 0; i < m; i++) {
			if (i && ids[i] == ids[i - 1])
				continue;
			if (jm_job_load(jm, ids[i], &v[*n], err) < 0) {
				job_rows_free(v, *n);
				v = NULL;
				*n = 0;
				break;
			}
			if (v[*n].state == JOB_QUEUED)
				(*n)++;
			else
				job_row_release(&v[*n]);
		}
	}
	free(ids);
	if (qc->known && v) {
		if (*n)
			qsort(v, *n, sizeof *v, cmp_queue);
		*rows = v;
		return 0;
	}
	/* the store's queue, from which the pass knows them again */
	free(v);
	*n = 0;
	qc->known = true;
	jm_rows_flush(jm); /* the states it reads */
	if (store_jobs_queued(jm->store, rows, n, err) < 0) {
		qc->known = false;
		return -1;
	}
	return 0;
}

struct jm_queue *jm_queue_create(const struct node_resources *node, struct weir_error *err)
{
	struct jm_queue *q = calloc(1, sizeof *q);

	if (!q) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	q->alloc = alloc_state_create(node, err);
	if (!q->alloc) {
		free(q);
		return NULL;
	}
	return q;
}

void jm_queue_destroy(struct jm_queue *q)
{
	if (!q)
		return;
	alloc_state_destroy(q->alloc);
	alloc_state_destroy(q->gang_alloc);
	free(q->ids);
	free(q->taken);
	free(q);
}

void jm_queue_turn_end(struct job_manager *jm, bool stored)
{
	struct jm_queue *qc = jm->queue;

	for (size_t i = 0; !stored && i < qc->n_taken; i++)
		jm_release_alloc(jm, qc->taken[i]);
	qc->n_taken = 0;
}

int jm_queue_want_gang(struct job_manager *jm, struct weir_error *err)
{
	static const char *ids[GANG_NODE_GPUS];
	static char names[GANG_NODE_GPUS][8];
	struct node_resources unbounded = {.vcores = GANG_NODE_VCORES,
	                                   .memory_mb = GANG_NODE_MEMORY_MB,
	                                   .gpu_ids = ids,
	                                   .n_gpus = GANG_NODE_GPUS};

	if (jm->queue->gang_alloc)
		return 0;
	for (size_t i = 0; i < GANG_NODE_GPUS; i++) {
		snprintf(names[i], sizeof names[i], "%zu", i);
		ids[i] = names[i];
	}
	jm->queue->gang_alloc = alloc_state_create(&unbounded, err);
	return jm->queue->gang_alloc ? 0 : -1;
}

struct alloc_state *jm_alloc_of(struct job_manager *jm, int64_t job_id)
{
	struct jm_route r;
	jm_route_get(jm, job_id, &r);
	return r.gang && jm->queue->gang_alloc ? jm->queue->gang_alloc : jm->queue->alloc;
}

void jm_release_alloc(struct job_manager *jm, int64_t job_id)
{
	alloc_release(jm->queue->alloc, job_id);
	if (jm->queue->gang_alloc)
		alloc_release(jm->queue->gang_alloc, job_id);
}

void jm_fail_job_now(struct job_manager *jm, int64_t job_id, const char *reason)
{
	struct weir_error err = {0};
	struct job_row job = {0};

	if (jm_job_load(jm, job_id, &job, &err) < 0)
		return;
	if (jm_job_set_state(&job, JOB_FAILED) < 0) {
		job_row_release(&job); /* refused (logged): the job as it was */
		return;
	}
	job.cause = END_CAUSE_REJECTED;
	str_set(&job.reason, reason ? reason : "");
	job.ended_at = clock_now_ms();
	if (jm_job_save(jm, &job, &err) < 0)
		log_error("job %lld: %s", (long long)job_id, err.msg);
	jm_event(jm, job_id, "state", "failed: %s", reason);
	jm_ended_add(jm, &job);
	jm_spec_forget(jm, job_id);
	jm_timers_forget(jm, job_id);
	job_row_release(&job);
}

/* The queued jobs as sched's entries (a job whose stored spec cannot be
 * read fails here); *nq of them. */
static struct queue_entry *entries_of(struct job_manager *jm, struct job_row *rows, size_t n,
                                      size_t *nq)
{
	struct queue_entry *q = calloc(n ? n : 1, sizeof *q);
	struct weir_error err = {0};

	*nq = 0;
	for (size_t i = 0; q && i < n; i++) {
		const struct job_spec *spec;
		struct jm_route rt;
		if (rows[i].state != JOB_QUEUED || rows[i].restart_pending)
			continue;
		spec = jm_spec_of(jm, &rows[i], &err);
		if (!spec) {
			jm_fail_job_now(jm, rows[i].id, err.msg);
			continue;
		}
		jm_route_get(jm, rows[i].id, &rt);
		q[*nq] = (struct queue_entry){.job_id = rows[i].id,
		                              .priority = rows[i].priority,
		                              .spec = spec,
		                              .gang = rt.gang};
		(*nq)++;
	}
	return q;
}

/* Carries out the decision; false when the job may still wait queued. */
static bool carry_out(struct job_manager *jm, struct job_row *rows, size_t n,
                      const struct queue_decision *d)
{
	struct weir_error err = {0};
	struct job_row *job = NULL, now = {0};
	bool left = true;

	for (size_t k = 0; k < n && !job; k++)
		if (rows[k].id == d->job_id)
			job = &rows[k];
	if (!job)
		return false;
	switch (d->action) {
	case QUEUE_START:
		if (ALLOC_GROW(jm->queue->taken, jm->queue->n_taken + 1, jm->queue->cap_taken) == 0)
			jm->queue->taken[jm->queue->n_taken++] = job->id;
		jm_start_gang(jm, job->id, &d->alloc);
		/* a start that failed before its first write leaves it queued */
		left = jm_job_load(jm, job->id, &now, &err) < 0 || now.state != JOB_QUEUED;
		job_row_release(&now);
		break;
	case QUEUE_WAIT:
		left = false;
		if (strcmp(job->reason ? job->reason : "", d->reason)) {
			str_set(&job->reason, d->reason);
			if (jm_job_save(jm, job, &err) < 0)
				log_error("job %lld: %s", (long long)job->id, err.msg);
		}
		break;
	case QUEUE_REJECT:
		jm_fail_job_now(jm, job->id, d->reason);
		break;
	}
	return left;
}

void jm_queue_pass(struct job_manager *jm)
{
	struct jm_queue *qc = jm->queue;

	if (!jm->open)
		return; /* still starting: job_manager_open() runs the first pass */
	if (qc->in_pass) {
		qc->again = true;
		return;
	}
	if (jm_rolled_back(jm, &qc->rollbacks))
		qc->known = false;
	if (qc->known && qc->n_ids == 0)
		return; /* none waits */
	qc->in_pass = true;
	do {
		struct weir_error err = {0};
		struct job_row *rows = NULL;
		size_t n = 0, nq = 0;
		struct queue_entry *q = NULL;
		struct queue_decision *d = NULL;

		qc->again = false;
		if (queued_rows(jm, &rows, &n, &err) < 0)
			goto fail;
		q = entries_of(jm, rows, n, &nq);
		/* restarting ones are not the pass's yet: they stay */
		for (size_t i = 0; i < n; i++)
			if (rows[i].state == JOB_QUEUED && rows[i].restart_pending)
				jm_queue_note(jm, rows[i].id);
		d = calloc(n ? n : 1, sizeof *d);
		if (!q || !d) {
			weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
			goto fail;
		}
		if (queue_schedule_routes(qc->alloc, qc->gang_alloc, q, nq, d, &err) < 0)
			goto fail;
		for (size_t i = 0; i < nq; i++)
			if (!carry_out(jm, rows, n, &d[i]))
				jm_queue_note(jm, d[i].job_id); /* it stays */
		queue_decisions_release(d, nq);
		free(q);
		free(d);
		job_rows_free(rows, n);
		continue;
	fail:
		qc->known = false;
		log_error("queue pass: %s", err.msg);
		free(q);
		free(d);
		job_rows_free(rows, n);
		qc->in_pass = false;
		return;
	} while (qc->again);
	qc->in_pass = false;
}
