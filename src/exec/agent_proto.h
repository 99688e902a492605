/* agent_proto.h: the wire protocol between the server and the node's agent,
 * defined once for both ends: the server's exec/agent_link.c and the
 * agent's launch/agent_conn.c (with the agent's files that write its
 * messages: agent_task.c, agent_shim.c, agent_held.c, agent_status.c).
 *
 * Framing: one message is one line, a JSON object written compact (no
 * newline inside) and ended by '\n', on the Unix socket AGENT_PROTO_SOCKET
 * in the agent's home.  Its kind is the string under AGENT_KEY_KIND ("t").
 *
 * Server to agent: hello {version, env, kill_grace_s, mask}, start {job,
 * role, index, attempt, nonce, task, log, log_to_server, secret?}, kill
 * {job, role, index, attempt, nonce, sig}, ack {keys, nonces}, bye,
 * status.  Agent to server: held {version, agent_pid, tasks: [{key, job,
 * role, index, attempt, nonce, shim_pid, pid, state, adopted}]}, and per
 * task (job, role, index, attempt, nonce and) spawned {pid}, started {pid, port,
 * launcher_pid}, exited (the shim's report), done, lost {pid, why,
 * signal?, exit_status?}; to `weir agent status`: status {agent_pid,
 * rss_kb, server, tasks}.  A task's key (agent_proto_task_key) names it
 * in an ack and is its journal's name.  docs/internals/launch.md tells the
 * exchange.
 *
 * Here in exec/ because it is the lowest layer of the two ends (launch
 * may include exec; exec may not include launch).  Lean: jansson and
 * lib/strbuf only, so weir-launch links it.
 */
#ifndef WEIR_EXEC_AGENT_PROTO_H
#define WEIR_EXEC_AGENT_PROTO_H

#include <stddef.h>

#include <jansson.h>

#include "lib/strbuf.h"

/* The protocol's version: in the hello and the held answer.  2: a task's
 * messages carry its job's nonce (AGENT_KEY_NONCE), an ack its nonces.  An
 * agent whose held answer says none (1) is stopped and started again by
 * the server (exec/agent_link.c). */
#define AGENT_PROTO_VERSION 2

/* The agent's socket, in its home. */
#define AGENT_PROTO_SOCKET "agent.sock"

/* The key of a message's kind. */
#define AGENT_KEY_KIND "t"

/* Kinds, server to agent. */
#define AGENT_MSG_HELLO "hello"
#define AGENT_MSG_START "start"
#define AGENT_MSG_KILL "kill"
#define AGENT_MSG_ACK "ack"
#define AGENT_MSG_BYE "bye"
#define AGENT_MSG_STATUS "status" /* both ways: the question and its answer */
/* Kinds, agent to server. */
#define AGENT_MSG_HELD "held"
#define AGENT_MSG_SPAWNED "spawned"
#define AGENT_MSG_STARTED "started"
#define AGENT_MSG_EXITED "exited"
#define AGENT_MSG_DONE "done"
#define AGENT_MSG_LOST "lost"

/* Keys. */
#define AGENT_KEY_JOB "job"
#define AGENT_KEY_ROLE "role"
#define AGENT_KEY_INDEX "index"
#define AGENT_KEY_ATTEMPT "attempt"
#define AGENT_KEY_TASK "task"
#define AGENT_KEY_LOG "log"
#define AGENT_KEY_LOG_TO_SERVER "log_to_server"
#define AGENT_KEY_SECRET "secret"
#define AGENT_KEY_ENV "env"
#define AGENT_KEY_KILL_GRACE_S "kill_grace_s"
#define AGENT_KEY_MASK "mask"
#define AGENT_KEY_KEYS "keys"
#define AGENT_KEY_SIG "sig"
#define AGENT_KEY_TASKS "tasks"
#define AGENT_KEY_AGENT_PID "agent_pid"
#define AGENT_KEY_PID "pid"
#define AGENT_KEY_SHIM_PID "shim_pid"
#define AGENT_KEY_SIGNAL "signal"
#define AGENT_KEY_EXIT_STATUS "exit_status"
#define AGENT_KEY_PORT "port"
#define AGENT_KEY_LAUNCHER_PID "launcher_pid"
#define AGENT_KEY_WHY "why"
/* The job's nonce (store.h's job_row): in start, kill, held's entries and
 * every task's report; 0 or absent: none known (an older peer) */
#define AGENT_KEY_NONCE "nonce"
/* In an ack: each key's nonce, in the keys' order */
#define AGENT_KEY_NONCES "nonces"
#define AGENT_KEY_VERSION "version"
/* In held's and status's task entries, and status's answer. */
#define AGENT_KEY_KEY "key"
#define AGENT_KEY_STATE "state"
#define AGENT_KEY_ADOPTED "adopted"
#define AGENT_KEY_RSS_KB "rss_kb"
#define AGENT_KEY_SERVER "server"

/* Appends `msg` as one line (compact JSON and '\n') to out.  0, or -1 when
 * it cannot be written (out of memory); out is then as it was. */
int agent_proto_frame(struct strbuf *out, const json_t *msg);

/* The next whole line of `in` from offset *start: ends it with a NUL in
 * place of its '\n', sets *len (its bytes) and moves *start past it;
 * NULL when no whole line is left.  The caller removes in[0..*start) when
 * done. */
char *agent_proto_next_line(struct strbuf *in, size_t *start, size_t *len);

/* A message's kind, or NULL when it has none. */
const char *agent_proto_kind(const json_t *msg);

/* A task's key, "JOB.ROLE.INDEX.ATTEMPT", into buf: 0, or -1 when it does
 * not fit (buf then holds as much as fits, NUL-terminated).  Written by
 * hand: the server writes one per message, and snprintf's parse of the
 * format costs more than the rest of the key. */
int agent_proto_task_key(char *buf, size_t size, long long job, const char *role, int index,
                         int attempt);

/* The key of the task a message names (job, role, index, attempt): 0, or
 * -1 when it names none (no role) or the key does not fit. */
int agent_proto_msg_key(const json_t *msg, char *buf, size_t size);

#endif
