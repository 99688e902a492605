/* states.h: the legal moves between job and task states.  The states, their
 * names and what each is (final, active) are nouns, in model/states.h; what
 * may follow what is the scheduler's rule, so it lives here, beside the
 * decisions that follow it.
 *
 * Job:  queued -> starting -> running -> succeeded | failed | killed
 *       starting | running -> queued     (a gang restart: the next attempt)
 *       queued | starting -> failed | killed
 *       starting -> succeeded   (its tasks' ends, when a power cut lost the turns
 *                                that made it running)
 * Task: pending -> starting -> running -> succeeded | failed | killed | lost
 *       any unended state may move forward (a launcher that re-registers after
 *       a server restart may report `running` for a task still `pending`) or
 *       end; an ended state never moves.
 *
 * Every move of a state goes through one setter per noun that asks these
 * first and refuses what they refuse (docs/internals/sched.md, "States").
 *
 * Pure functions; no allocation, no errors beyond the return value.
 */
#ifndef WEIR_SCHED_STATES_H
#define WEIR_SCHED_STATES_H

#include <stdbool.h>

#include "model/states.h"

/* Whether `from` -> `to` is a legal move (see the top of this file).
 * from == to is legal for unended states (an idempotent report). */
bool job_state_can_move(enum job_state from, enum job_state to);
bool task_state_can_move(enum task_state from, enum task_state to);

#endif
