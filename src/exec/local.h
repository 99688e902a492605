/* local.h: the local backend: a shim of the node's agent per task
 * (local_executor_use_agent), or one detached `weir launch` process per
 * task.
 *
 * Each launcher is started with uv_spawn (UV_PROCESS_DETACHED: its own
 * session, so it and the program it runs survive the server), stdin from
 * /dev/null, stdout and stderr appended to the task's log file, and the
 * server's environment plus WEIR_SERVER and WEIR_TOKEN.  While the server
 * lives the launcher is its child, so its end is reported through the
 * executor_exit_fn.
 */
#ifndef WEIR_EXEC_LOCAL_H
#define WEIR_EXEC_LOCAL_H

#include <uv.h>

#include "exec/executor.h"
#include "lib/run_as.h"

/* `server_url` ("http://127.0.0.1:8270") and `token` are copied.
 * `exe` is the program to run as the launcher (NULL: /proc/self/exe).
 * `kill_grace_s` is how long the launcher has between SIGTERM and its own
 * SIGKILL; the backend's last resort comes 2 s after that.  NULL with err
 * on out of memory. */
struct executor *local_executor_create(uv_loop_t *loop, const char *exe, const char *server_url,
                                       const char *token, int kill_grace_s,
                                       executor_exit_fn on_exit, void *arg, struct weir_error *err);

/* The user every task's program runs as from now on (ra copied as
 * WEIR_TASK_USER into the launchers' and the agent's environment: before
 * local_executor_use_agent); NULL or !set: the launcher's own.  0, or -1
 * with err when out of memory. */
int local_executor_set_task_user(struct executor *ex, const struct run_as *ra,
                                 struct weir_error *err);

/* From now on every task runs as a shim of the node's agent for `home`
 * (exec/agent_link.h: started when none answers): no process of ours per
 * task; the shims' started and exited reports come through `reports` (with
 * the exit function's arg), a
 * shim that died without one through the executor_exit_fn.  Before the
 * server's recovery, so that is_alive knows what the agent holds.  0, or
 * -1 with err (the executor keeps starting launchers as processes). */
int local_executor_use_agent(struct executor *ex, const char *home, executor_reports_fn reports,
                             struct weir_error *err);
/* The agent link's agent_link_set_end_turn(); a no-op without an
 * agent. */
void local_executor_set_end_turn(struct executor *ex, bool (*fn)(void *arg, bool durable),
                                 void *arg);
/* The agent link's agent_link_set_known(); a no-op without an agent. */
void local_executor_set_known(struct executor *ex,
                              bool (*fn)(void *arg, int64_t job, int64_t nonce), void *arg);

#endif
