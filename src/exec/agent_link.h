/* agent_link.h: the local executor's one connection to the node's agent
 * (`weir agent`, launch/agent.h).
 *
 * The link connects to HOME/agent.sock, starting the agent (detached: it
 * outlives the server) when none answers, and greets it with the server's
 * URL and environment; the agent's answer (what it holds) is read before
 * agent_link_create returns, so that recovery asks about tasks knowing it.
 * After that everything is asynchronous on the libuv loop, in batches: the
 * starts and kills of one loop turn go in one write on the next iteration
 * (after the turn's transaction has committed: a task the store does not
 * have is never started), and each read's reports go to the reports
 * callback together, then are acknowledged, so the agent forgets a result
 * only once the server has recorded it.  A lost connection is made again
 * (the agent started again when needed); starts the agent never got are
 * sent again, and it answers a start it knows without running it twice.
 */
#ifndef WEIR_EXEC_AGENT_LINK_H
#define WEIR_EXEC_AGENT_LINK_H

#include <stdbool.h>

#include <jansson.h>
#include <uv.h>

#include "exec/executor.h"
#include "lib/error.h"
#include "lib/strbuf.h"

struct agent_link;

/* `exe` and `args` (NULL-terminated, borrowed for the call) start the
 * agent; `env` is the shims' environment (executor_launcher_env's, copied);
 * `token` (copied) goes in the hello's "mask" only, over the agent's socket,
 * so that every shim masks it in its task's output (never in an
 * environment).
 * reports: the "started" and "exited" messages of one read, a JSON array
 * (borrowed for the call); lost: a shim that died without reporting
 * (exit_status, term_signal as the agent saw them).  NULL with err when no
 * agent could be reached. */
struct agent_link *agent_link_create(uv_loop_t *loop, const char *home, const char *exe,
                                     char *const *args, char *const *env, const char *token,
                                     int kill_grace_s, executor_reports_fn reports,
                                     executor_exit_fn lost, void *arg, struct weir_error *err);

/* Queues the task's start: the register answer when the job manager gave
 * one (task->answer), else the shim registers over HTTP with `secret`, the
 * task's launch secret (exec/launch_secret.h).  0 or -1 with err. */
int agent_link_start(struct agent_link *l, const struct executor_task *task, bool log_to_server,
                     const char *secret, struct weir_error *err);

/* Appends the start message's line to sb, written without a tree:
 * {"t":"start","job","role","index","attempt","task" (task->answer's text
 * as it is, or null),"log","log_to_server","secret"} and a newline, as the
 * agent reads it ("secret" left out when NULL).  0, or -1 (out of memory, a
 * string not UTF-8). */
int agent_link_start_line(struct strbuf *sb, const struct executor_task *task, bool log_to_server,
                          const char *secret);

/* Queues a signal to the task's shim (SIGTERM: the agent's last resort
 * follows after the kill grace plus 2 s).  0 or -1 with err. */
int agent_link_signal(struct agent_link *l, const struct executor_task *task, int sig,
                      struct weir_error *err);

/* The server's turn ended (executor op turn_end): the starts and kills
 * queued since the last call go out when it was `stored`, and are dropped
 * when it was rolled back (nothing runs that the store does not know of).
 * Until then they wait: nothing the link was asked leaves before the
 * commit of the turn that asked it.  NULL is a no-op. */
void agent_link_turn_end(struct agent_link *l, bool stored);
/* `fn` ends the server's turn before the agent's reports of a read are
 * acknowledged (NULL: none, every report counts as stored): true when
 * what they said was stored; false (a full disk) and they are not
 * acknowledged but told again a second later.  The acknowledgements of
 * what was stored wait up to 10 ms, then `fn` is called once more with
 * `durable` true, for all of them: true then must mean that what was
 * stored survives a power cut (store_commit_durable()), since the agent
 * drops what is acknowledged from its journal; false and they wait a
 * second more.  NULL l is a no-op. */
void agent_link_set_end_turn(struct agent_link *l, bool (*fn)(void *arg, bool durable), void *arg);

/* `fn` says whether the store knows job `job` with this nonce (the job
 * manager's job_manager_knows_nonce): a report of a task of a job it does
 * not know (a power cut lost the turns that made it; its id may be
 * another job's now) is acknowledged, never told, and such a task the
 * agent holds is killed once the link is open and at every later held
 * answer.  NULL: every job is known.  NULL l is a no-op. */
void agent_link_set_known(struct agent_link *l, bool (*fn)(void *arg, int64_t job, int64_t nonce),
                          void *arg);

/* The server has finished starting: the agent's reports (started, exited,
 * lost), kept until now, are told from the next loop iteration on.  Until
 * then the link only settles what the agent holds (agent_link_holds).
 * NULL is a no-op. */
void agent_link_open(struct agent_link *l);

/* Whether the agent holds the task: started and not yet over, or over
 * with a result not yet recorded. */
bool agent_link_holds(struct agent_link *l, const struct executor_task *task);

/* Says goodbye (an agent holding nothing exits then) and frees the link;
 * the tasks run on.  NULL is a no-op. */
void agent_link_destroy(struct agent_link *l);

#endif
