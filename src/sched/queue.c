/* queue.c: which queued jobs start now (queue.h): priority, then FIFO, with
 * strict head-of-line blocking. */
#include "sched/queue.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_text(char *dst, size_t size, const char *src)
{
	size_t len = strlen(src);
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static int entry_cmp(const void *a, const void *b)
{
	const struct queue_entry *x = *(const struct queue_entry *const *)a;
	const struct queue_entry *y = *(const struct queue_entry *const *)b;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->job_id != y->job_id)
		return x->job_id < y->job_id ? -1 : 1;
	return 0;
}

void queue_decisions_release(struct queue_decision *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		job_alloc_release(&d[i].alloc);
}

int queue_schedule(struct alloc_state *st, const struct queue_entry *jobs, size_t n,
                   struct queue_decision *out, struct weir_error *err)
{
	const struct queue_entry **order = NULL;
	int rc = -1;

	if (n == 0)
		return 0;
	order = calloc(n, sizeof(*order));
	if (!order) {
		weir_error_set(err, WEIR_E_INTERNAL, "queue: out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = &jobs[i];
	qsort(order, n, sizeof(*order), entry_cmp);

	const struct queue_entry *blocker = NULL;
	size_t done = 0;
	for (; done < n; done++) {
		const struct queue_entry *e = order[done];
		struct queue_decision *d = &out[done];
		memset(d, 0, sizeof(*d));
		d->job_id = e->job_id;

		struct weir_error e2 = {0};
		if (alloc_state_never_fits(st, e->spec, &e2) < 0) {
			d->action = QUEUE_REJECT;
			copy_text(d->reason, sizeof(d->reason), e2.msg);
			continue;
		}
		if (blocker) {
			d->action = QUEUE_WAIT;
			if (blocker->priority > e->priority)
				snprintf(d->reason, sizeof(d->reason),
				         "waiting: job %" PRId64 " (higher priority)",
				         blocker->job_id);
			else
				snprintf(d->reason, sizeof(d->reason),
				         "waiting: job %" PRId64 " ahead in queue",
				         blocker->job_id);
			continue;
		}
		int r = alloc_try_gang(st, e->job_id, e->spec, &d->alloc, d->reason,
		                       sizeof(d->reason), &e2);
		if (r == 0) {
			d->action = QUEUE_START;
		} else if (r == 1) {
			d->action = QUEUE_WAIT;
			blocker = e;
		} else if (e2.kind == WEIR_E_CONFLICT) {
			/* already holds its gang (a caller's slip): nothing to start */
			d->action = QUEUE_WAIT;
			copy_text(d->reason, sizeof(d->reason), e2.msg);
		} else {
			if (err)
				*err = e2;
			goto fail;
		}
	}
	rc = 0;
	goto out;
fail:
	/* undo: nothing allocated when we fail */
	for (size_t i = 0; i < done; i++) {
		if (out[i].action == QUEUE_START)
			alloc_release(st, out[i].job_id);
	}
	queue_decisions_release(out, done);
out:
	free(order);
	return rc;
}

int queue_schedule_routes(struct alloc_state *local, struct alloc_state *gang,
                          const struct queue_entry *jobs, size_t n, struct queue_decision *out,
                          struct weir_error *err)
{
	struct queue_entry *split;
	size_t n_local = 0, k = 0;
	int rc = -1;

	if (n == 0)
		return 0;
	split = calloc(n, sizeof(*split));
	if (!split)
		return weir_error_set(err, WEIR_E_INTERNAL, "queue: out of memory");
	for (int g = 0; g < 2; g++) {
		for (size_t i = 0; i < n; i++)
			if (jobs[i].gang == (g == 1))
				split[k++] = jobs[i];
		if (g == 0)
			n_local = k;
	}
	if (n_local > 0 && queue_schedule(local, split, n_local, out, err) < 0)
		goto out;
	if (n > n_local && queue_schedule(gang ? gang : local, split + n_local, n - n_local,
	                                  out + n_local, err) < 0) {
		/* undo the local half: nothing allocated when we fail */
		for (size_t i = 0; i < n_local; i++)
			if (out[i].action == QUEUE_START)
				alloc_release(local, out[i].job_id);
		queue_decisions_release(out, n_local);
		goto out;
	}
	rc = 0;
out:
	free(split);
	return rc;
}
