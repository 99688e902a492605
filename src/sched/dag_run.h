/* dag_run.h: what a DAG run does next, from its graph, its task instances'
 * states and an event.
 *
 * Pure: no I/O, no clock (the time comes in as `now_ms`).  The server's DAG
 * manager (server/dag_manager/run_ctx.c) builds a dag_graph from the parsed
 * DAG file, reads the run's task instances from the store, calls
 * dag_run_decide() on every event, and writes the changes back in one
 * transaction: TIs that became `scheduled` go to dag_pool_decide()
 * (dag_pool.h) to become jobs, TIs marked `stop` have their job killed,
 * and the run's new state is recorded.
 *
 * Task instances (TIs): every task has one, a foreach task one per item
 * (its "instances"), laid out in task order: task 0's instances, then task
 * 1's, ...  (dag_graph_ti_base()).  A foreach task with 0 items has none and
 * counts as skipped for its downstream.
 *
 * Rules (docs/internals/dags.md says why):
 *  - only a `running` run schedules anything; START moves a queued run to
 *    running (max_active_runs is the caller's check: dag_pool.h);
 *  - a success that carries skips (dag_event.skip: a branch, a short
 *    circuit) makes the waiting TIs of those tasks skipped before the
 *    trigger rules are evaluated; a stale end carries none;
 *  - a TI in `none` is decided by its trigger rule (dag_trigger.h) from its
 *    upstreams (a held task, dag_task_node.held, waits where it would run);
 *    a foreach upstream counts once with its group state
 *    (dag_trigger_group_state()), so a join waits for every instance;
 *    decisions cascade through the whole graph in one call, in dependency
 *    order, so a task that ends makes its ready successors `scheduled` in
 *    the same call;
 *  - a TI that ends skipped (a sensor's soft_fail timeout) is skipped;
 *    an end report may come for a TI queued, running or up_for_reschedule
 *    (a sensor between pokes: server/dag_manager/sensors.c);
 *  - a TI that ends failed goes up_for_retry while try_number < max_tries
 *    (and the failure is retryable), at now + dag_retry_delay_ms(); else
 *    failed.  The TIMER event makes due retries `scheduled` again;
 *  - an end report for a TI that is not queued or running, or of
 *    another try, is stale and changes nothing (a late report of a cleared or
 *    marked TI);
 *  - the run ends when every TI is finished: failed if any leaf task (one
 *    no task depends on) is failed or upstream_failed, else success
 *    (Airflow's rule: a failure upstream of an all_done leaf does not fail
 *    the run); a teardown that is `ignorable` is no leaf and does not stop
 *    its upstream from being one (Airflow's teardowns: their failure does
 *    not fail the run), unless every task is such;
 *  - CLEAR resets the chosen TIs (and, with `downstream`, every TI of every
 *    task downstream of them; with `only_failed`, only failed and
 *    upstream_failed ones) to `none` and gives each its retries again
 *    (max_tries = try_number + retries + 1).  Active ones are stopped.  A
 *    finished run goes back to `queued` (it waits for max_active_runs
 *    again); a running run keeps running and is re-evaluated at once;
 *  - MARK_TI sets one TI success or failed (no retry; stopped if active),
 *    then a running run is re-evaluated;
 *  - MARK_RUN success: every unfinished TI becomes success; failed: active
 *    TIs become failed, the other unfinished ones skipped (as Airflow).
 *    Active TIs are stopped.
 *  - TIMED_OUT (the run ran past its dagrun_timeout: dag_run_timeout_at())
 *    fails a running run with the reason "timed_out" and makes every
 *    unfinished TI skipped, active ones stopped (Airflow 2's scheduler); a
 *    run in another state is left as it is;
 *  - a run never deadlocks: a TI waits only while an upstream is unfinished,
 *    and every rule decides once all its upstreams are finished.
 */
#ifndef WEIR_SCHED_DAG_RUN_H
#define WEIR_SCHED_DAG_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "sched/dag_states.h"
#include "sched/dag_trigger.h"

struct dag_retry_policy {
	int retries;          /* tries after the first */
	int64_t delay_ms;     /* retry_delay */
	bool exponential;     /* retry_exponential_backoff */
	int64_t max_delay_ms; /* max_retry_delay; <= 0: no cap */
};

/* One task of the DAG, as the scheduler needs it.  Strings and arrays are
 * borrowed. */
struct dag_task_node {
	const char *task_id;
	const size_t *upstream; /* indexes into dag_graph.tasks */
	size_t n_upstream;
	enum trigger_rule trigger_rule;
	struct dag_retry_policy retry;
	const char *pool; /* NULL or "": default_pool */
	int pool_slots;   /* <= 0: 1 */
	int priority;     /* higher runs first */
	bool foreach;
	int n_instances; /* foreach: the expanded count (>= 0); ignored (1) otherwise */
	bool held;       /* depends_on_past not met (sched/dag_branch.h): a ready verdict
	                  * waits; the caller re-decides (EVALUATE) when it changes */
	bool setup;      /* a setup task: counted for all_done_setup_success below it */
	bool ignorable;  /* a teardown that does not decide the run's result (Airflow's
	                  * teardown without on_failure_fail_dagrun) */
};

struct dag_graph {
	const struct dag_task_node *tasks; /* borrowed */
	size_t n_tasks;
};

/* One task instance of the run. */
struct dag_ti {
	enum dag_ti_state state;
	int try_number;        /* tries started so far; 0 before the first */
	int max_tries;         /* the last try number allowed; <= 0: the task's retries + 1 */
	int64_t next_retry_at; /* up_for_retry: when (epoch ms) */
};

enum dag_event_kind {
	DAG_EV_EVALUATE = 0, /* look at everything (recovery, a changed DAG file) */
	DAG_EV_START,        /* the run leaves the queue: queued -> running */
	DAG_EV_TI_ENDED,     /* ti's try `try_number` ended: success or not */
	DAG_EV_TIMER,        /* now_ms passed: retries that are due */
	DAG_EV_CLEAR,        /* tasks[] (all when n_tasks is 0), downstream, only_failed */
	DAG_EV_MARK_TI,      /* ti -> mark_ti (success | failed) */
	DAG_EV_MARK_RUN,     /* the run -> mark_run (success | failed) */
	DAG_EV_TIMED_OUT,    /* the run ran past its dagrun_timeout */
};

struct dag_event {
	enum dag_event_kind kind;
	size_t ti;          /* TI_ENDED, MARK_TI: index into the TIs */
	int try_number;     /* TI_ENDED */
	bool success;       /* TI_ENDED */
	bool no_retry;      /* TI_ENDED: a failure not to retry (a user's kill) */
	const size_t *skip; /* TI_ENDED with success: tasks whose waiting TIs become
	                     * skipped (a branch's or a short circuit's choice,
	                     * sched/dag_branch.h; an empty expansion); borrowed */
	size_t n_skip;
	bool skipped;        /* TI_ENDED, not success: the TI ends skipped (a sensor's soft_fail) */
	const size_t *tasks; /* CLEAR: task indexes (borrowed) */
	size_t n_tasks;
	bool downstream;             /* CLEAR */
	bool only_failed;            /* CLEAR */
	enum dag_ti_state mark_ti;   /* MARK_TI */
	enum dag_run_state mark_run; /* MARK_RUN */
};

/* One TI whose state (or max_tries) changes.  A TI appears once, with the
 * state it had before the call and the one it ends the call in. */
struct dag_ti_change {
	size_t ti;
	enum dag_ti_state from, to;
	int64_t retry_at; /* to == up_for_retry: when it runs again; else 0 */
	int max_tries;    /* the TI's max_tries after the call */
	bool stop;        /* it was queued or running: stop its job */
	/* it was reset to none (a clear) before the rules moved it on: the
	 * move is `from` -> none -> `to`, two legal moves in one change */
	bool cleared;
};

#define DAG_REASON_MAX 256

struct dag_run_decision {
	enum dag_run_state run_from, run_to;
	struct dag_ti_change *changes; /* owned, by TI index; NULL when none */
	size_t n_changes;
	size_t n_scheduled;          /* changes to `scheduled` (to hand to dag_pool_decide()) */
	int64_t next_wakeup;         /* earliest retry time of an up_for_retry TI; 0: none */
	char reason[DAG_REASON_MAX]; /* run_to failed: "task load failed" ...; else "" */
};

/* The reason a run that timed out fails with (Airflow's callback reason). */
#define DAG_REASON_TIMED_OUT "timed_out"

/* When a run in state `run`, started at started_ms (epoch ms; 0: not yet),
 * times out under a dagrun_timeout of timeout_s seconds (<= 0: none):
 * started_ms + the timeout for a running run (a TIMED_OUT event is due once
 * now_ms reaches it); 0 for no deadline (no timeout, not running, not
 * started).  Airflow 2's rule, for every kind of run. */
int64_t dag_run_timeout_at(enum dag_run_state run, int64_t started_ms, int64_t timeout_s);

/* 0, or -1 with WEIR_E_INVALID naming the task: an upstream index out of
 * range or itself, a cycle, a negative foreach count. */
int dag_graph_check(const struct dag_graph *g, struct weir_error *err);
/* A topological order of the tasks into `order` (n_tasks entries): every
 * task after its upstreams.  -1 with err as dag_graph_check(). */
int dag_graph_order(const struct dag_graph *g, size_t *order, struct weir_error *err);
/* How many TIs a run of `g` has. */
size_t dag_graph_ti_count(const struct dag_graph *g);
/* The index of task `task`'s first TI. */
size_t dag_graph_ti_base(const struct dag_graph *g, size_t task);
/* How many TIs task `task` has (1, or its foreach count). */
size_t dag_graph_task_tis(const struct dag_graph *g, size_t task);

/* The wait before the try after try `try_number` (>= 1) failed:
 * delay * 2^(try_number - 1) when exponential, else delay, capped by
 * max_delay_ms when it is > 0 (also the fixed delay: a cap is a cap; Airflow
 * caps only the exponential one).  Saturates instead of overflowing. */
int64_t dag_retry_delay_ms(const struct dag_retry_policy *p, int try_number);

/* The last try number TI `ti` of task `task` may have: its max_tries, or
 * the task's retries + 1 when it has none. */
int dag_ti_max_tries(const struct dag_graph *g, size_t task, const struct dag_ti *ti);

/* What the end of try ev->try_number (a DAG_EV_TI_ENDED) makes of a TI
 * now in `now_state` whose last allowed try is `max_tries`: success,
 * up_for_retry (*retry_at: when) or failed; `now_state` itself for a stale
 * report (the TI is not queued or running, or it is of another try). */
enum dag_ti_state dag_ti_after_end(const struct dag_task_node *task, const struct dag_ti *ti,
                                   enum dag_ti_state now_state, int max_tries,
                                   const struct dag_event *ev, int64_t now_ms, int64_t *retry_at);

/* Task `task`'s trigger rule over its upstreams, each as `shown(ctx, u)`
 * says it looks to its downstream (a foreach task: its group state); and
 * the state a verdict moves a waiting TI to (DAG_TI_NONE: it waits). */
enum dag_trigger_verdict dag_task_verdict(const struct dag_graph *g, size_t task,
                                          enum dag_ti_state (*shown)(const void *ctx, size_t t),
                                          const void *ctx);
enum dag_ti_state dag_verdict_state(enum dag_trigger_verdict v);
/* Both, with the task's hold: the state a waiting TI of `task` moves to
 * (DAG_TI_NONE: it waits).  The full decision and the books' fast path
 * (dag_book.h) both decide by it. */
enum dag_ti_state dag_task_next(const struct dag_graph *g, size_t task,
                                enum dag_ti_state (*shown)(const void *ctx, size_t t),
                                const void *ctx);

/* Decides for a run in state `run` with `n_tis` TIs (dag_graph_ti_count(g)).
 * 0 with `out` filled (release it), or -1 with err: WEIR_E_INVALID for a bad
 * graph (dag_graph_check()), a TI count that does not match, or an event
 * naming a TI or task out of range or a mark to a state other than
 * success/failed; WEIR_E_INTERNAL when out of memory. */
int dag_run_decide(const struct dag_graph *g, enum dag_run_state run, const struct dag_ti *tis,
                   size_t n_tis, const struct dag_event *ev, int64_t now_ms,
                   struct dag_run_decision *out, struct weir_error *err);

void dag_run_decision_release(struct dag_run_decision *d);

/* What a TI's try means when it could not be made a job, by the kind of
 * its error. */
enum dag_start_fault {
	/* a fault of the server's own (WEIR_E_INTERNAL: out of memory, a store
	 * write, a folder it cannot make; WEIR_E_UNAVAILABLE): not the task's.
	 * No try is spent: the TI stays scheduled and is started again later */
	DAG_START_WAIT,
	/* an input that may be there by the next try (WEIR_E_NOT_FOUND: a
	 * variable or connection not defined yet; Airflow retries such a
	 * task): the try fails, its retries apply */
	DAG_START_RETRY,
	/* the same input would fail again (a template, a job file, a job that
	 * can never fit): the try fails without retry */
	DAG_START_FAIL,
};
enum dag_start_fault dag_start_fault_of(enum weir_error_kind kind);

/* Writes a decision's changes into `tis` and `*run` (what the server does to
 * its rows; the tests use it to play runs forward). */
void dag_run_apply(const struct dag_run_decision *d, struct dag_ti *tis, enum dag_run_state *run);

#endif
