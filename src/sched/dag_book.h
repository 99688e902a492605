/* dag_book.h: a run's books, kept from one event to the next: the states
 * of its task instances, their counts by state, the ready set (the
 * scheduled TIs) and the graph's layout (each task's first TI, a
 * topological rank, the downstream lists), so that the end of a TI is
 * decided with work that follows what lies downstream of it, not the size
 * of the run.
 *
 * Pure, like dag_run.h, and bound by it: every decision the book makes is
 * the one dag_run_decide() makes on the same states (tests/unit/sched/
 * test_dag_book.c plays random runs through both).  The fast path is taken
 * for DAG_EV_TI_ENDED on a running run whose books are settled (the last
 * full decision evaluated every waiting TI, and nothing but decisions and
 * starts changed a state since) and that does not end the run; every other
 * event, and an end that finishes the run, goes through dag_run_decide().
 *
 * The one difference: a fast decision's next_wakeup names only the retry it
 * made (0 when none); the full one names the earliest of the run.  The
 * server re-reads the waiting retries when it arms its timer.
 */
#ifndef WEIR_SCHED_DAG_BOOK_H
#define WEIR_SCHED_DAG_BOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "sched/dag_run.h"
#include "sched/dag_states.h"

struct dag_book {
	const struct dag_graph *g; /* borrowed: outlives the book */
	struct dag_ti *tis;        /* owned, n_tis, in dag_run.h's order */
	enum dag_ti_state *st;     /* owned: the TIs' states alone (the group states read them) */
	size_t n_tis;
	size_t *base;           /* first TI of each task; base[n_tasks] = n_tis */
	size_t *task;           /* TI -> its task */
	size_t *rank;           /* task -> place in a topological order */
	size_t *down, *down_at; /* task t's downstream: down[down_at[t] .. down_at[t+1]) */
	size_t count[DAG_TI_STATE_COUNT]; /* TIs in each state */
	size_t *ready, n_ready;           /* the scheduled TIs, as they became so */
	size_t *ready_at;                 /* TI -> its place in ready[]; SIZE_MAX: not there */
	/* the TIs that became scheduled since the reader last emptied this
	 * log (n_fresh = 0, fresh_over = false: the pool pass's order of the
	 * waiting TIs follows it); fresh_over: more than n_tis did, or the
	 * books are new: the reader takes the whole ready set instead */
	size_t *fresh, n_fresh;
	bool fresh_over;
	bool settled; /* see above */
	/* scratch of a decision */
	size_t *heap, n_heap;
	bool *queued;
	bool decided_full;
};

/* The books of a run of `g` whose TIs are `tis` (copied).  Not settled: the
 * first decision is a full one.  0, or -1 with err (a bad graph, a TI count
 * that does not match it, out of memory). */
int dag_book_init(struct dag_book *b, const struct dag_graph *g, const struct dag_ti *tis,
                  size_t n_tis, struct weir_error *err);
void dag_book_release(struct dag_book *b);

/* TI `ti` is now `v` (a start: scheduled -> queued with its try).  A change
 * that a downstream TI could see (to or from a final state or none)
 * unsettles the books. */
void dag_book_set(struct dag_book *b, size_t ti, const struct dag_ti *v);

/* Decides on `ev` for the run in state `run`, as dag_run_decide() does
 * (its errors too).  The books are not changed: dag_book_apply() writes
 * the decision into them once the caller has stored it. */
int dag_book_decide(struct dag_book *b, enum dag_run_state run, const struct dag_event *ev,
                    int64_t now_ms, struct dag_run_decision *out, struct weir_error *err);
void dag_book_apply(struct dag_book *b, const struct dag_run_decision *d);

/* How many TIs are not finished (dag_ti_state_is_final()). */
size_t dag_book_unfinished(const struct dag_book *b);

#endif
