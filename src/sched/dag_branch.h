/* dag_branch.h: what a branch task, a short circuit and the past decide
 * (docs/internals/dags.md, "Branches, short circuits and the past").
 *
 * Pure: the task's output (the JSON object it wrote to $WEIR_OUTPUT) and
 * the graph in, the tasks to skip out.  The server (server/dag_manager/
 * flow.c) hands the skips to dag_run_decide() with the task's end
 * (dag_event.skip): the waiting TIs of those tasks become skipped in the
 * same decision, before the trigger rules, and the trigger rules carry the
 * skip on (all_success skips on a skipped upstream; a join with
 * none_failed_min_one_success runs when one chosen path succeeded).
 *
 *  - branch: output.branch is a task id, a list of them, or null (choose
 *    none: every direct downstream task is skipped, as Airflow's branch
 *    returning None); every direct downstream task not chosen is skipped.
 *    A chosen id that is not a direct downstream task, a value of another
 *    type, or no `branch` key fails the task, with the reason.
 *  - short_circuit: a false output.result (false, null, 0, "", [] or {})
 *    skips every task downstream of it, whatever their trigger rules
 *    (Airflow's ShortCircuitOperator with ignore_downstream_trigger_rules);
 *    a true one, or no `result`, skips nothing.
 *  - depends_on_past: a TI may start only when the same task in the
 *    previous run (the run with the latest earlier logical date) succeeded
 *    or was skipped, or did not exist there; with wait_for_downstream,
 *    its direct downstream tasks there also succeeded or were skipped.  A
 *    TI held so waits in `none` (dag_task_node.held): it never fails.
 */
#ifndef WEIR_SCHED_DAG_BRANCH_H
#define WEIR_SCHED_DAG_BRANCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "sched/dag_run.h"
#include "sched/dag_states.h"

/* Task indexes to skip; owned (dag_skip_release()). */
struct dag_skip {
	size_t *tasks;
	size_t n;
};

void dag_skip_release(struct dag_skip *s);

/* Adds task `t` once; -1 when out of memory. */
int dag_skip_add(struct dag_skip *s, size_t t);

/* The direct downstream tasks of `task` into `out` (appended); -1 when
 * out of memory. */
int dag_graph_downstream(const struct dag_graph *g, size_t task, struct dag_skip *out);

/* Branch task `task`'s choice: its output (NULL: it wrote none) into the
 * tasks to skip.  0, or -1 with `why` ("branch: \"x\" is not a direct
 * downstream task of choose; expected one of a, b") and `out` empty;
 * -1 with `why` "out of memory" too. */
int dag_branch_skips(const struct dag_graph *g, size_t task, const json_t *output,
                     struct dag_skip *out, char *why, size_t why_size);

/* Whether a result is true (Python's truth: false, null, 0, 0.0, "", []
 * and {} are false). */
bool dag_result_truthy(const json_t *v);

/* Short-circuit task `task`: every task downstream of it when its
 * output's `result` is false, none otherwise.  0, or -1 when out of
 * memory. */
int dag_short_circuit_skips(const struct dag_graph *g, size_t task, const json_t *output,
                            struct dag_skip *out);

/* Whether a task mapped over an upstream's output is (re)expanded now
 * that the upstream succeeded, its instances being in `states` (n of
 * them): when every one waits in none (the first expansion, over the
 * placeholder instance; or after a clear of both).  Instances that ran
 * stand as they are. */
bool dag_expand_due(const enum dag_ti_state *states, size_t n);

/* What the previous run says of a task with depends_on_past. */
struct dag_past {
	bool found;                    /* the previous run has the task */
	enum dag_ti_state state;       /* its state there (a foreach task: its group state) */
	const enum dag_ti_state *down; /* wait_for_downstream: its direct downstream tasks'
	                                * states there (those it has) */
	size_t n_down;
};

/* Whether the task may start now (see above). */
bool dag_past_allows(bool wait_for_downstream, const struct dag_past *p);

#endif
