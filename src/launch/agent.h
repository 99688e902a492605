/* agent.h: the node's agent: `weir agent` (`weir-launch agent`), one per
 * home and machine, the parent of every local task's shim.
 *
 *   weir agent [--stay] [--home DIR]  runs it (the server starts it itself
 *                                     when none answers; --stay: a service's,
 *                                     packaging/systemd/weir-agent.service.in)
 *   weir agent status [--json] [--home DIR]   what it holds: tasks, pids, states
 *   env: WEIR_AGENT_IDLE_S (default 30): with no task and no server for
 *        that long it exits (not with --stay, nor at a server's bye)
 *
 * It listens on HOME/agent.sock (mode 0600: the home's owner only) and
 * holds HOME/agent/lock while it lives.  The server connects once and keeps
 * the connection; both sides write newline-delimited JSON, as many
 * messages in one write as a loop turn has (docs/internals/launch.md, "The
 * agent"); exec/agent_proto.h defines the kinds, keys and framing both
 * ends use:
 *
 *   server -> agent   hello {version, env, kill_grace_s, mask}, start {key
 *                     fields, nonce, task (the register answer, or null:
 *                     the shim registers over HTTP), log, log_to_server},
 *                     kill {key fields, nonce, sig}, ack {keys, nonces},
 *                     bye, status
 *   agent -> server   held {version, tasks} (the answer to hello), spawned, started,
 *                     exited (the exited report's fields), lost {why},
 *                     status
 *
 * Each start forks a shim from the agent (no exec; launch_shim_run), in a
 * session of its own; the shim journals its task's events
 * (launch/journal.h) before it tells the agent through a pipe.  A result
 * stays in the journal until the server acknowledges it, so it is
 * delivered once whatever restarts; an agent restarted reads the journals,
 * follows the shims still alive (pidfd) and reports as lost those that
 * died without a result.
 */
#ifndef WEIR_LAUNCH_AGENT_H
#define WEIR_LAUNCH_AGENT_H

#include <stdbool.h>

#include "exec/agent_proto.h"

/* argv[0] is "agent", argv[-1] the program's name (the mains pass their
 * argv + 1).  An agent started with what lib/env_scrub.h drops in its
 * environment (the server's token, connections, secret-looking names: by
 * hand, from a shell) runs itself again without them first, so that
 * neither it nor its shims (forks: /proc/PID/environ shows the block the
 * agent was started with) nor their programs hold them.  Returns the
 * process's exit status. */
int agent_main(int argc, char **argv);

/* The socket's name in the home. */
#define AGENT_SOCKET AGENT_PROTO_SOCKET

/* `weir agent status [--json]`: asks the agent of `home` and prints its pid,
 * its resident size and a line per task, or with `as_json` its answer as it
 * came (agent_pid, rss_kb, server, tasks).  0, or 1 when no agent answers. */
int agent_status_print(const char *home, bool as_json);

/* The home `weir agent` uses: --home, else WEIR_HOME, else ~/.weir; new
 * (free() it), NULL when out of memory. */
char *agent_home(const char *given);

#endif
