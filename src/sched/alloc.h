/* alloc.h: the resources of one node and all-or-nothing (gang) allocation.
 *
 * A node has vcores, memory (MiB) and a list of GPU ids (strings, e.g.
 * "0", "1", or "GPU-ab12..." UUIDs).  A job's gang is every instance of
 * every role; it gets all of its resources at once or none.  Each task gets
 * exclusive GPU ids: no id is held by two tasks at a time.
 *
 * Pure: no I/O, no clock.  An alloc_state is owned by its creator; the
 * caller releases a job's allocation (alloc_release) when its last task has
 * ended, and rebuilds the state at recovery with alloc_reserve().
 */
#ifndef WEIR_SCHED_ALLOC_H
#define WEIR_SCHED_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/job_spec.h"

/* What a node offers.  The strings belong to the caller; functions that
 * keep a node copy it. */
struct node_resources {
	int vcores;
	uint64_t memory_mb;
	const char *const *gpu_ids;
	size_t n_gpus;
};

/* One task's share of a gang. */
struct task_alloc {
	char *role; /* owned */
	int index;
	char *gpus; /* owned; "0,1" (the node's ids joined by ','), "" when none */
};

/* A job's gang: its tasks in the spec's order (roles as listed, then index). */
struct job_alloc {
	int64_t job_id;
	struct task_alloc *tasks; /* owned */
	size_t n_tasks;
};

void job_alloc_release(struct job_alloc *a);

struct alloc_state; /* opaque */

/* Copies `node`.  NULL on out of memory (err filled). */
struct alloc_state *alloc_state_create(const struct node_resources *node, struct weir_error *err);
/* NULL is a no-op. */
void alloc_state_destroy(struct alloc_state *st);

/* -1 with err (WEIR_E_UNFIT) when `spec` could never fit `node`, even empty:
 * one instance larger than the node ("worker needs 64g memory per instance;
 * this node has 32g memory") or the whole gang larger ("job needs 4 gpus
 * per worker x 1; this node has 3 gpus").  0 when it fits an empty node. */
int alloc_never_fits(const struct node_resources *node, const struct job_spec *spec,
                     struct weir_error *err);

/* The same against the node an alloc_state was created with. */
int alloc_state_never_fits(const struct alloc_state *st, const struct job_spec *spec,
                           struct weir_error *err);

/* Tries to allocate the whole gang of job `job_id` now.
 *  0: allocated; `out` is filled (job_alloc_release() it) and the state
 *     holds the resources until alloc_release(st, job_id);
 *  1: does not fit now; `reason` gets what is short first (memory, then
 *     gpus, then vcores), as much more as is needed: "waiting: 4g memory",
 *     "waiting: 2 gpus", "waiting: 3 vcores"; the state is unchanged;
 * -1: never fits (err as alloc_never_fits), the job already holds an
 *     allocation (WEIR_E_CONFLICT), or out of memory. */
int alloc_try_gang(struct alloc_state *st, int64_t job_id, const struct job_spec *spec,
                   struct job_alloc *out, char *reason, size_t reason_size, struct weir_error *err);

/* Records a known allocation (recovery: rebuilt from the tasks in the
 * store).  `tasks` gives each task's GPU ids ("" or NULL: none) and must
 * name the spec's tasks; vcores and memory come from the spec.  Does not
 * check capacity (what runs, runs: a node that shrank across a restart is
 * over-committed until jobs end), but -1 with err and no change when a GPU
 * id is not the node's or is already held, or the job already holds one. */
int alloc_reserve(struct alloc_state *st, int64_t job_id, const struct job_spec *spec,
                  const struct task_alloc *tasks, size_t n_tasks, struct weir_error *err);

/* Frees what job `job_id` holds.  0, or -1 (no error text) if it holds nothing. */
int alloc_release(struct alloc_state *st, int64_t job_id);

bool alloc_holds(const struct alloc_state *st, int64_t job_id);

/* What is free now (vcores and memory may be negative after an
 * over-committed recovery; reported as 0). */
void alloc_free_resources(const struct alloc_state *st, int *vcores, uint64_t *memory_mb,
                          size_t *gpus);

/* "4g" when a whole number of GiB, else "512m"; into buf; returns buf. */
char *alloc_format_memory(uint64_t mb, char *buf, size_t size);

#endif
