/* agent_pool.h: the node's agent's groups made ahead (launch/agent.h).
 *
 * Moving a process into a cgroup v1 group waits for an RCU grace period
 * (7-13 ms measured, docs/internals/launch.md); a process forked inside a
 * group is born there for free.  So the agent keeps spare shims, each
 * already in a fresh group PARENT/pool-AGENTPID-N of its own (the move
 * paid while nothing waits), blocked on a pipe; a task with limits goes to
 * a spare, which sets its group's limits and runs it.  How many spares:
 * after a turn of k starts, up to min(max(2, the largest k seen lately),
 * AGENT_POOL_MAX); back to 2 after 30 s without a turn of more than 2.
 * Once a task's shim is reaped its group is kept, up to the pool's size,
 * for the next spare, which resets it (v1: cgroup_create_empty on a group
 * that is there); a mkdir and an rmdir per task under each controller
 * saved.  Groups over that, and every group on v2, are removed.  Each
 * spare also makes its task's folders and log ahead (spare_dirs.h).
 *
 * A spare's task ended, the shim comes back (v1): its group reset as a
 * kept one is, a new folder made, it says "free" and waits for the next
 * start on the same pipe: one fork a task fewer.  The agent tells, for
 * each child, a spare (`spares`) from one running a task (its task table)
 * by that word alone, which comes after the task's end on the same pipe.
 */
#ifndef WEIR_LAUNCH_AGENT_POOL_H
#define WEIR_LAUNCH_AGENT_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "launch/cgroup.h"
#include "launch/spare_dirs.h"
#include "lib/hashmap.h"
#include "lib/strvec.h"

#define AGENT_POOL_MAX 16
/* The exit status of a spare that could not make or join its group, before
 * it read any start (none of weir's own codes: 124 gang timeout, 125 launch
 * failed, 127 exec).  It writes why to the agent's log first.  A start the
 * agent wrote to it as it died is given again (agent_task.c: its journal blank). */
#define AGENT_SPARE_UNPREPARED 123
/* the most tasks one shim runs before it exits (what a task's run may
 * leave in the shim's own memory stays bounded) */
#define AGENT_POOL_TASKS_MAX 200

/* A child of the pool's making: an idle spare (in `spares`), or one given
 * a task or let go (in `children`, until reaped). */
struct agent_spare {
	pid_t pid;
	int wfd;       /* its pipe: starts go down it; EOF lets it go; -1: closed */
	char name[48]; /* its group */
	unsigned gen;  /* the environment it has (agent_pool_retire's count) */
	bool used;     /* it ran a task already (back in the pool after it) */
	bool ended;    /* its task has ended: back soon, unless it exits */
	bool unbegun;  /* given a start whose program has not started yet */
};

/* What a spare needs of the agent, in the spare (the child of a fork). */
struct agent_pool_hooks {
	/* closes what the agent's child must not keep (the pool's own pipes
	 * are closed by the pool) */
	void (*detach)(void *arg);
	/* runs the task given to the spare: `msg` the start message, `cg` the
	 * group it is in, `group` its name, `start_ticks` its start time
	 * (lib/proc.h), `sd` its folders made ahead (spare_dirs.h; not ready
	 * when none).  Returns with *code the exit status: 1 when the task's
	 * end is in its journal and nothing of the task is left in the process
	 * (no thread, no descriptor but the spare's), so that it may run
	 * another; 0 when it must exit. */
	int (*run)(void *arg, json_t *msg, struct cgroup *cg, const char *group,
	           uint64_t start_ticks, struct spare_dir *sd, int *code);
	/* tells the agent the spare is free again ("free PID" on the shims'
	 * pipe, after its task's end): 0, or -1 when the agent is gone */
	int (*back)(void *arg);
	void *arg;
};

struct agent_pool {
	struct cgroup_support cs; /* valid once `detected` */
	bool detected, on;
	int failures; /* spares that died unused; 3 turn the pool off */
	unsigned seq;
	unsigned gen; /* agent_pool_retire's count: spares of an older one go */
	struct agent_spare spares[AGENT_POOL_MAX]; /* idle, the longest waiting first */
	struct agent_spare taken;                  /* agent_pool_take's, until agent_pool_give */
	int n_spares;
	int want;                 /* spares to keep */
	int64_t burst_at;         /* monotonic ms: the last turn of more starts than the floor */
	int64_t busy_at;          /* monotonic ms: the last turn with a start with limits */
	int turn_starts;          /* starts with limits in this turn */
	struct hashmap *children; /* pid -> struct agent_spare (owned): given or let go */
	int n_kept;               /* children whose pipe is kept open (to come back) */
	int n_back_soon;          /* those whose task ended: not replaced by a fork meanwhile */
	struct strvec stale; /* groups to remove after the turn, or refused by the kernel for now */
	struct strvec free;  /* emptied groups of ended tasks, for the next spares (v1) */
	/* the real path of HOME/jobs, where spares make their task's folders
	 * ahead (spare_dirs.h); NULL: they do not (owned) */
	char *jobs;
	struct agent_pool_hooks hooks;
	int n_unbegun;    /* children given a start whose program has not started */
	int64_t given_at; /* monotonic ms: the first start given while n_unbegun > 0 */
	/* this process's pid, read once: the agent's; in a spare, or a shim
	 * the agent forked fresh, its own (set first thing after the fork) */
	pid_t self;
};

/* An empty pool; nothing is made before the first task with limits.
 * `jobs`: the real path of HOME/jobs (copied), or NULL: no folders made
 * ahead.  0 or -1 (out of memory). */
int agent_pool_init(struct agent_pool *p, const struct agent_pool_hooks *hooks, const char *jobs);

/* Once: cgroup_detect (reading WEIR_CGROUP), WEIR_AGENT_POOL=0 turns the
 * spares off, and the groups and spare folders of agents that are gone
 * are removed. */
void agent_pool_detect(struct agent_pool *p);

/* The spare for a start, or NULL (none left, the pool off, or a task
 * without limits: a register answer without memory_mb or vcores, or one
 * whose backend confines it; a start without one registers over HTTP, and
 * every role of a job has a memory limit, model/job_spec.c). */
struct agent_spare *agent_pool_take(struct agent_pool *p, json_t *msg);

/* Hands the start to `sp` (the message down its pipe, one line): `line`
 * (`len` bytes, no newline) as the server sent it when the agent changed
 * nothing in it, else NULL and `msg` is encoded.  Its pipe stays open for
 * it to come back after its task (agent_pool_back); its group is kept or
 * removed once `sp->pid` is reaped.  0, or -1 when the spare is gone. */
int agent_pool_give(struct agent_pool *p, struct agent_spare *sp, json_t *msg, const char *line,
                    size_t len);

/* The task of child `pid` has ended (its journal says so): it may come
 * back, and is not replaced by a new spare while it may. */
void agent_pool_task_ended(struct agent_pool *p, pid_t pid);

/* Child `pid` says it is free again, its task's end journalled and read
 * (`take`; false: it is not to be trusted): an idle spare once more
 * (true), or let go (false: EOF on its pipe) when not `take`, the pool is
 * full or off, or the child's environment is older than the last
 * agent_pool_retire.  False too for a pid that is no child of the pool's
 * with its pipe open. */
bool agent_pool_back(struct agent_pool *p, pid_t pid, bool take);

/* The rule of the pool's size (pure): after a turn of `turn_starts` starts
 * with limits at `now` (monotonic ms), the number of spares to keep, from
 * `want` the number so far; *burst_at is the time of the last turn of more
 * than 2, updated here.  More than 2: up to that many (at most
 * AGENT_POOL_MAX, never fewer than before); else 2 after 30 s since the
 * last such turn. */
int agent_pool_want(int want, int turn_starts, int64_t now, int64_t *burst_at);

/* After a turn, once its messages are out: the groups of the shims that
 * ended removed, the pool's size from the turn's starts, then new spares
 * forked up to it (less the shims whose task ended: they come back).
 * Spares over it, shims back from a task among them, are let go once 30 s
 * passed without a start, else over AGENT_POOL_MAX.  `now`: monotonic ms. */
void agent_pool_turn_end(struct agent_pool *p, int64_t now);

/* The program of the task given to child `pid` started (or the task
 * ended): new spares need not wait for it any longer.  Until every start
 * given has begun, or AGENT_POOL_REFILL_WAIT_MS after the first of them,
 * agent_pool_turn_end() forks no new spare: the forks would take the CPU
 * from the programs just starting (a gang's).  A start that finds no spare
 * meanwhile is given a shim forked fresh, as always. */
#define AGENT_POOL_REFILL_WAIT_MS 20
void agent_pool_task_begun(struct agent_pool *p, pid_t pid);
/* Whether agent_pool_turn_end() at `now` holds new spares back so. */
bool agent_pool_refill_waits(const struct agent_pool *p, int64_t now);
/* When a refill waits for starts to begin: the monotonic ms at which it
 * goes ahead anyway (the agent's poll wakes for it); else INT64_MAX. */
int64_t agent_pool_wake(const struct agent_pool *p);

/* Every spare let go (they were forked with an environment that changed),
 * and those running a task when they come back; new ones come at the
 * turn's end. */
void agent_pool_retire(struct agent_pool *p);

/* In a child of the agent that is not a spare: the spares' pipes closed. */
void agent_pool_close_in_child(const struct agent_pool *p);

/* A child given a start died before it read it (AGENT_SPARE_UNPREPARED,
 * its task's journal blank): counted as a spare that died unused. */
void agent_pool_spare_failed(struct agent_pool *p, pid_t pid);

/* A child of the agent was reaped: a spare that died unused is dropped,
 * the group of a child that had one is kept for the next spare or, over
 * the pool's size, removed; the folder of a spare, used or not, is
 * removed (spare_dirs.h: what its task left there, if anything). */
void agent_pool_reaped(struct agent_pool *p, pid_t pid);

/* The group NAME (an adopted shim's, once it ended) is to be removed: by
 * agent_pool_tick(), which agent_pool_turn_end() calls after the turn's
 * messages are out (a cgroup's rmdir costs a fraction of a millisecond, and
 * the exit report of the shim just reaped should not wait for it), and
 * again while the kernel says busy. */
void agent_pool_remove_group(struct agent_pool *p, const char *name);
void agent_pool_tick(struct agent_pool *p);

/* A shim forked fresh (no spare's group) was killed (or adopted, how it
 * ended unknown): the group its launch made for the task (cgroup_task_name,
 * with the shim's pid), which the shim removes at its task's end and a
 * killed one never does, is removed as agent_pool_remove_group() does.
 * Nothing when the host has no groups, or the task made none (its rmdir
 * finds nothing). */
void agent_pool_remove_task_group(struct agent_pool *p, long long job, int attempt,
                                  const char *role, int index, pid_t shim);

/* At the agent's exit: spares told to go and reaped, their groups removed
 * (waiting up to a second for the kernel); then everything freed. */
void agent_pool_close(struct agent_pool *p);
void agent_pool_release(struct agent_pool *p);

#endif
