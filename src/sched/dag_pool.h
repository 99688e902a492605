/* dag_pool.h: which scheduled task instances become jobs now, and which DAG
 * runs leave the queue.
 *
 * Order: priority DESC, then the run's order ASC (its logical date: older
 * runs first), then the TI's order in its run (task order).  Unlike the job
 * queue (queue.h) there is no head-of-line blocking: a TI that waits for a
 * full pool does not hold back TIs of other pools or DAGs, as in Airflow.
 * A TI waits, with the reason, when
 *   - its DAG has max_active_tasks TIs queued or running
 *     ("waiting: dag etl max_active_tasks reached (4/4)");
 *   - its task has max_active_tis_per_dag instances queued or running
 *     across the DAG's runs, or max_active_tis_per_dagrun in its run
 *     (Airflow's task concurrency; mapped instances count each:
 *     "waiting: task load max_active_tis_per_dag reached (2/2)");
 *   - its pool has fewer free slots than it needs
 *     ("waiting: pool gpu_pool full (1/1)");
 *   - its pool is not configured ("waiting: no pool named gpus") or can
 *     never hold it ("waiting: needs 3 slots; pool gpu_pool has 2").
 * max_active_tasks <= 0, a task limit's max <= 0 and a pool's slots < 0
 * mean no limit.
 *
 * Pure: the only state it changes is the pools', DAGs' and tasks' counts
 * it is given (a TI queued takes its slots, one active task of its DAG
 * and one place in each of its task's limits).
 */
#ifndef WEIR_SCHED_DAG_POOL_H
#define WEIR_SCHED_DAG_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

#define DAG_DEFAULT_POOL "default_pool"

struct dag_pool {
	const char *name; /* borrowed */
	int slots;        /* < 0: unlimited */
	int used;         /* slots held by queued and running TIs; grows here */
};

struct dag_limit {
	const char *dag_id;   /* borrowed */
	int max_active_tasks; /* <= 0: no limit */
	int active;           /* queued + running TIs of all its runs; grows here */
};

/* A task's cap on its instances queued or running at once: one per DAG
 * and task (max_active_tis_per_dag: every run's instances count), or per
 * run and task (max_active_tis_per_dagrun), shared by that task's
 * candidates. */
struct dag_task_limit {
	const char *task_id; /* borrowed, for the reason */
	bool per_run;        /* max_active_tis_per_dagrun's (the reason's wording) */
	int max;             /* <= 0: no limit */
	int active;          /* its queued + running instances; grows here */
};

/* One scheduled TI. */
struct dag_candidate {
	size_t dag;                         /* index into the limits */
	struct dag_task_limit *tis_per_dag; /* its task's limits; NULL: none */
	struct dag_task_limit *tis_per_run;
	int64_t run_order; /* the run's logical date (ms): older runs first */
	size_t ti_order;   /* its index in the run */
	int priority;
	const char *pool; /* NULL or "": DAG_DEFAULT_POOL */
	int pool_slots;   /* <= 0: 1 */
};

enum dag_pool_action {
	DAG_POOL_WAIT = 0, /* reason says why */
	DAG_POOL_QUEUE,    /* make its job now */
};

#define DAG_POOL_REASON_MAX 160

struct dag_pool_decision {
	size_t candidate; /* index into the candidates */
	enum dag_pool_action action;
	char reason[DAG_POOL_REASON_MAX]; /* "" when queued */
};

/* Decides for each of the `n` candidates; out[] has room for n decisions,
 * written in the order above.  0, or -1 with err: WEIR_E_INVALID for a
 * candidate naming a DAG out of range, WEIR_E_INTERNAL when out of memory
 * (nothing changed then). */
int dag_pool_decide(const struct dag_candidate *c, size_t n, struct dag_limit *dags, size_t n_dags,
                    struct dag_pool *pools, size_t n_pools, struct dag_pool_decision *out,
                    struct weir_error *err);

/* As dag_pool_decide, but it stops at the first candidate (in the order
 * above) that waits for a full pool while every pool is full (none
 * unlimited): no later one could start.  out[0..*n_out) are written (the
 * last of them that candidate); the candidates not named there wait, and
 * have no decision.  Same errors. */
int dag_pool_decide_prefix(const struct dag_candidate *c, size_t n, struct dag_limit *dags,
                           size_t n_dags, struct dag_pool *pools, size_t n_pools,
                           struct dag_pool_decision *out, size_t *n_out, struct weir_error *err);

/* dag_pool_decide_prefix() on the next `n` candidates of one order, given
 * a batch at a time (the pools' and DAGs' counts carry the batches before
 * it): *stopped says whether it stopped at out[*n_out - 1]; when it did
 * not, the next batch goes on as one call over both would (the reasons'
 * wording included).  A pass that reads its waiting TIs in this order a
 * few at a time thus reads only what it can start and the one that
 * stops it.  Same errors. */
int dag_pool_decide_batch(const struct dag_candidate *c, size_t n, struct dag_limit *dags,
                          size_t n_dags, struct dag_pool *pools, size_t n_pools,
                          struct dag_pool_decision *out, size_t *n_out, bool *stopped,
                          struct weir_error *err);

/* How many of a DAG's `n_queued` queued runs (oldest logical date first)
 * start now, with `running` runs running; max_active_runs <= 0: no limit. */
size_t dag_runs_startable(int max_active_runs, int running, size_t n_queued);

#endif
