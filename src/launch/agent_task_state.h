/* agent_task_state.h: the states of a task in the node agent's table
 * (launch/agent_state.h: struct agent_task) and the legal moves between
 * them.  One setter, agent_task_set_state() in agent_task.c, moves a task;
 * this file is its rule.  Pure; no allocation.
 *
 *   new       in the table (a journal found at start, or a start taken),
 *             no shim followed yet
 *   running   its shim is alive (our child, or an adopted one's pidfd)
 *   stopping  its shim is alive and was sent a signal: never started again
 *   acked     its shim is alive and the server has its result (the journal
 *             is gone): dropped when the shim goes
 *   gone      its shim is gone; its result waits for the server's ack
 *
 *   new -> running | gone        (spawned or adopted alive; adopted dead)
 *   running -> stopping | acked | gone
 *   stopping -> acked | gone
 *   acked -> gone
 *   gone -> running              (a shim that died before its task began:
 *                                 the start given to a new shim)
 *   any -> itself                (a second signal, an idempotent note)
 */
#ifndef WEIR_LAUNCH_AGENT_TASK_STATE_H
#define WEIR_LAUNCH_AGENT_TASK_STATE_H

#include <stdbool.h>

enum agent_task_state {
	AGENT_TASK_NEW = 0,
	AGENT_TASK_RUNNING,
	AGENT_TASK_STOPPING,
	AGENT_TASK_ACKED,
	AGENT_TASK_GONE,
};

#define AGENT_TASK_STATE_COUNT (AGENT_TASK_GONE + 1)

/* "new", "running", ...; "?" for a value out of range. */
const char *agent_task_state_name(enum agent_task_state s);
/* Whether `from` -> `to` is legal (the top of this file). */
bool agent_task_state_can_move(enum agent_task_state from, enum agent_task_state to);
/* Whether its shim is alive: running, stopping or acked. */
bool agent_task_state_alive(enum agent_task_state s);

#endif
