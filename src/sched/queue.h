/* queue.h: which queued jobs start now.
 *
 * Order: priority DESC, then id ASC (FIFO).  Strict head-of-line: the first
 * job that does not fit blocks every job after it, so a big job is never
 * starved by a stream of small ones; it waits with its own shortfall
 * ("waiting: 4g memory") and those behind it wait for it
 * ("waiting: job 11 (higher priority)" when its priority is higher,
 * "waiting: job 11 ahead in queue" otherwise).  A job that can never fit
 * this node (its spec or the node changed) is rejected and blocks nobody.
 *
 * Pure: the only state it changes is the alloc_state it is given.
 */
#ifndef WEIR_SCHED_QUEUE_H
#define WEIR_SCHED_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/job_spec.h"
#include "sched/alloc.h"

struct queue_entry {
	int64_t job_id;
	int priority;
	const struct job_spec *spec; /* borrowed */
	bool gang;                   /* routed to a gang backend (queue_schedule_routes) */
};

enum queue_action {
	QUEUE_WAIT = 0, /* reason says why */
	QUEUE_START,    /* alloc is filled; the state holds it */
	QUEUE_REJECT,   /* can never fit; reason has alloc_never_fits()'s message */
};

#define QUEUE_REASON_MAX 256

struct queue_decision {
	int64_t job_id;
	enum queue_action action;
	struct job_alloc alloc; /* QUEUE_START only; owned: queue_decisions_release() */
	char reason[QUEUE_REASON_MAX];
};

/* Decides for each of the `n` queued jobs (any order: they are sorted
 * here).  out[] has room for n decisions, written in the queue's order.
 * Jobs decided QUEUE_START hold their allocation in `st` until the caller
 * alloc_release()s them (also when it then fails to start them).  0, or -1
 * with err (out of memory; nothing allocated then). */
int queue_schedule(struct alloc_state *st, const struct queue_entry *jobs, size_t n,
                   struct queue_decision *out, struct weir_error *err);

/* Two queues, each with its own allocator: the jobs routed to the local
 * node (gang false) against `local`, those of a gang backend against
 * `gang` (which counts its cluster itself; NULL: `local` too), so neither
 * blocks the other.  out[] gets the local jobs' decisions first, then the
 * gang backend's, each in its queue's order.  0, or -1 with err (nothing
 * allocated then). */
int queue_schedule_routes(struct alloc_state *local, struct alloc_state *gang,
                          const struct queue_entry *jobs, size_t n, struct queue_decision *out,
                          struct weir_error *err);

/* Releases the allocations' memory held in decisions (not the resources in
 * the state). */
void queue_decisions_release(struct queue_decision *d, size_t n);

#endif
