/* agent_state.h: the node's agent's state (launch/agent.h) and the contract
 * between its files, all run in the agent's one thread:
 *
 *   agent.c       setup, the poll() loop, the end
 *   agent_conn.c  the connections: the server's messages read and answered
 *   agent_task.c  the task table: journals read, reports to the server,
 *                 shims' notes and ends, recovery after a restart
 *   agent_shim.c  a task's shim: a spare of the pool or a fork, and what
 *                 runs in it
 *   agent_held.c  what the agent holds, as "held" and "status" say it
 *   agent_task_state.c  a task's states and their legal moves (pure)
 */
#ifndef WEIR_LAUNCH_AGENT_STATE_H
#define WEIR_LAUNCH_AGENT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "exec/agent_proto.h"
#include "launch/agent_pool.h"
#include "launch/agent_task_state.h"
#include "launch/journal.h"
#include "lib/hashmap.h"
#include "lib/strbuf.h"

#define MAX_CONNS 16
/* How long a "started" waits for its task's "exited" (docs/internals/launch.md) */
#define STARTED_HOLD_MS 10
#define LINE_MAX_BYTES (16 * 1024 * 1024)
/* How many times a start is given again to a new shim when the one given
 * it died before its journal's first line (its program never started) */
#define TASK_RESTARTS_MAX 2

struct agent_task {
	char key[JOURNAL_KEY_MAX];
	long long job;
	char role[64];
	int index, attempt;
	pid_t pid;                   /* the shim */
	int pidfd;                   /* an adopted shim (not our child): readable at its end; -1 */
	enum agent_task_state state; /* agent_task_state.h; moved by agent_task_set_state() */
	bool started_sent;           /* "started" went to the current server */
	int64_t hold_until;          /* monotonic: "started" held until then, for its "exited"
	                                to go in the same write; INT64_MAX: none held */
	int started_pid, started_port; /* the held "started"'s */
	json_t *result;                /* "exited" or "lost", kept until acknowledged */
	char *group;                   /* an adopted shim's pool group, removed at its end; NULL */
	int64_t kill_at; /* monotonic: SIGKILL to the shim's session; INT64_MAX: none */
	json_t *start;   /* the start, until the journal's first line is read: given
	                    again if the shim dies before it (agent_task.c: task_restart); NULL */
	int restarts;    /* how many times it was */
	long long nonce; /* its job's (the start's, or its journal's); 0: none known */
	/* Of a job a power cut lost: a start came for its key under another
	 * nonce.  Killed; nothing of it goes to the server any more, and at its
	 * end it is forgotten (its journal removed) and `next` runs in its
	 * place. */
	bool stale;
	json_t *next; /* that start, while the stale task dies; NULL */
};

struct conn {
	int fd;
	struct strbuf in, out;
	/* monotonic ms since `out` holds lines that may wait (agent_send_lazy)
	 * and nothing else; 0: it holds none, or something that may not */
	int64_t lazy_since;
};

struct agent {
	char *home, *dir; /* dir: the journals' (journal_dir_for) */
	/* this binary and HOME/airflow-warm, for the shims' Airflow tasks
	 * (launch_shim's airflow_warm_bin and _dir); NULL when not known */
	char *warm_bin, *warm_dir;
	bool dir_in_memory; /* dir is ours alone in memory: removed when empty at the end */
	int lfd, sfd, notify_r, notify_w, lock_fd;
	struct conn conns[MAX_CONNS];
	int n_conns;
	int server;            /* the index in conns of the server's connection; -1: none */
	struct hashmap *tasks; /* key -> struct agent_task */
	struct hashmap *pids;  /* shim pid -> struct agent_task (our children) */
	int idle_s;
	int64_t idle_since; /* monotonic; 0: not idle */
	bool stay;          /* --stay: never exits when idle (a service's agent) */
	int kill_grace_s;
	char **env;  /* the server's environment for shims (owned) */
	char *token; /* the server's token, to mask in tasks' output (the hello's); NULL: none */
	bool quit;
	struct agent_pool pool; /* groups made ahead (agent_pool.h) */
};

/* ---- agent_conn.c ---- */

/* `msg` (consumed) to the server, when one is connected; what is not sent
 * is kept in the task table and sent again at the next hello. */
void agent_send(struct agent *a, json_t *msg);
/* The same for a message the server may hear up to LAZY_HOLD_MS later
 * ("spawned": the server only notes the shim's pid and lets go of the start
 * it kept to send again): it waits in the connection's output until
 * anything else is written after it, or the time is up.  Most often the
 * task's "started" and "exited" follow within it, and the server reads
 * the three in one wake instead of two.  The order of the lines is kept. */
#define LAZY_HOLD_MS 10
void agent_send_lazy(struct agent *a, json_t *msg);
/* When connection i has output it does not hold back at `now`: POLLOUT. */
bool agent_conn_wants_write(const struct agent *a, int i, int64_t now);
/* The time at which lazy output is due (the poll's timeout); INT64_MAX
 * when none waits. */
int64_t agent_conns_due(const struct agent *a);
/* Connection i closed; the last one takes its place in conns. */
void agent_conn_close(struct agent *a, int i);
/* Writes what each connection has waiting, without blocking; lazy output
 * alone only once due, unless `all`. */
void agent_flush_conns(struct agent *a, bool all);
/* Reads what connection ci has; each whole line is one message, handled.
 * false when it is closed. */
bool agent_on_conn(struct agent *a, int ci);
/* New connections accepted (up to MAX_CONNS). */
void agent_on_accept(struct agent *a);

/* ---- agent_task.c ---- */

/* The one door of a task's state: t moves to `to` when
 * agent_task_state_can_move() allows it; else the move is refused, logged
 * as an error naming the task and both states, and t left as it was.  0,
 * or -1 when refused. */
int agent_task_set_state(struct agent_task *t, enum agent_task_state to);
/* {job, role, index, attempt} of t (new) */
json_t *agent_task_key_json(const struct agent_task *t);
/* A new task in the table for journal key `key`, or NULL (a bad key, out
 * of memory). */
struct agent_task *agent_task_new(struct agent *a, const char *key);
/* a task's own parts (hashmap_destroy_free's too) */
void agent_task_free(void *value);
/* t out of the table and freed */
void agent_task_drop(struct agent *a, struct agent_task *t);
/* the tasks whose shim is alive */
size_t agent_live_tasks(struct agent *a);
/* The journal's "started" (st) for the server, once.  Held up to
 * STARTED_HOLD_MS when `hold` and the task has not ended, for its "exited"
 * to go in the same write. */
void agent_send_started(struct agent *a, struct agent_task *t, const struct journal_state *st,
                        bool hold);
/* t's result, if it has one, to the server again */
void agent_send_result(struct agent *a, struct agent_task *t);
/* At start: every journal's task followed (its shim alive) or reported. */
void agent_adopt_all(struct agent *a);
/* A stale task (agent_task's `stale`) whose shim is gone: forgotten, its
 * journal removed, and its `next` start run. */
void agent_stale_end(struct agent *a, struct agent_task *t);
/* The shims' pipe: their notes read and taken. */
void agent_on_notify(struct agent *a);
/* The signalfd: children reaped (their tasks gone), SIGTERM/SIGINT. */
void agent_on_sigchld(struct agent *a);
/* Adopted shims whose pidfd says they ended. */
void agent_on_adopted(struct agent *a);
/* Deadlines: a held "started" whose wait is over, and the last resort
 * after a stop.  `now`: monotonic ms. */
void agent_on_tick(struct agent *a, int64_t now);

/* ---- agent_shim.c ---- */

/* The journal key of a start or kill message (its job, role, index and
 * attempt) into key (JOURNAL_KEY_MAX).  0, or -1 when it has none. */
int agent_msg_key(json_t *msg, char *key);
/* A start: its task's shim given it (a spare, or a fork), the server told. */
void agent_on_start(struct agent *a, json_t *msg, const char *line, size_t len);
/* The task's shim: a spare of the pool when one fits (and `pool`), else a
 * fork.  `line` (`len` bytes): the start as the server wrote it, or NULL.
 * Its pid, or -1 (errno). */
pid_t agent_task_spawn(struct agent *a, const char *key, json_t *msg, const char *line, size_t len,
                       bool pool);
/* `pid` runs task `t`: the server hears so. */
void agent_task_spawned(struct agent *a, struct agent_task *t, pid_t pid);
/* What the pool's spares need of the agent (agent_pool_hooks). */
void agent_spare_hooks(struct agent *a, struct agent_pool_hooks *hooks);

/* ---- agent_held.c ---- */

/* A line per task: key, shim_pid, pid, state, adopted (new). */
json_t *agent_held_json(struct agent *a);
/* The answer to "status": agent_pid, rss_kb, server, tasks (new). */
json_t *agent_status_json(struct agent *a);

#endif
