/* states.c: the one door through which a task instance's and a run's state
 * change (sched/dag_states.h says which moves are legal).
 *
 * Owns: dm_ti_set_state(), dm_run_set_state() and dm_book_started(), the
 * only writers of a TI row's, a run row's and a book entry's state in the
 * DAG manager.  An illegal move is refused: logged as an error naming the
 * TI or run, its state and the one refused, and the state left as it was.
 * A row read from the store (dag_store_*_get, the run cache's load) is not
 * a change: its state is the store's.  The store writes stay with the
 * callers (dm_ti_save(), dm_ti_save_state(), dm_ti_defer(),
 * dag_store_run_update()), as they were.
 */
#include "server/dag_manager/dm_internal.h"

#include "lib/log.h"
#include "sched/dag_book.h"
#include "sched/dag_states.h"

int dm_ti_set_state(struct dag_ti_row *r, enum dag_ti_state to)
{
	if (!dag_ti_state_can_move(r->state, to)) {
		log_error("DAG %s run %s task %s%s: illegal state move %s -> %s refused", r->dag_id,
		          r->run_id, r->task_id, r->map_index >= 0 ? " (instance)" : "",
		          dag_ti_state_name(r->state), dag_ti_state_name(to));
		return -1;
	}
	r->state = to;
	return 0;
}

int dm_run_set_state(struct dag_run_row *run, enum dag_run_state to)
{
	if (!dag_run_state_can_move(run->state, to)) {
		log_error("DAG %s run %s: illegal state move %s -> %s refused", run->dag_id,
		          run->run_id, dag_run_state_name(run->state), dag_run_state_name(to));
		return -1;
	}
	run->state = to;
	return 0;
}

int dm_book_started(struct run_ctx *rc, size_t ti, enum dag_ti_state to, int try_number)
{
	struct dag_ti v = rc->book.tis[ti];

	if (!dag_ti_state_can_move(v.state, to)) {
		const struct dag_ti_row *r = &rc->rows[rc->ti_row[ti]];
		log_error("DAG %s run %s task %s: illegal state move %s -> %s of its book refused",
		          r->dag_id, r->run_id, r->task_id, dag_ti_state_name(v.state),
		          dag_ti_state_name(to));
		return -1;
	}
	v.state = to;
	v.try_number = try_number;
	v.next_retry_at = 0;
	dag_book_set(&rc->book, ti, &v);
	return 0;
}
