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
 */
#ifndef WEIR_LAUNCH_AGENT_POOL_H
#define WEIR_LAUNCH_AGENT_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "exec/cgroup.h"
#include "launch/spare_dirs.h"
#include "lib/hashmap.h"
#include "lib/strvec.h"

#define AGENT_POOL_MAX 16

struct agent_spare {
	pid_t pid;
	int wfd; /* the start goes down it */
	char name[48];
};

/* What a spare needs of the agent, in the spare (the child of a fork). */
struct agent_pool_hooks {
	/* closes what the agent's child must not keep (the pool's own pipes
	 * are closed by the pool) */
	void (*detach)(void *arg);
	/* runs the task given to the spare: `msg` the start message, `cg` the
	 * group it is in, `group` its name, `start_ticks` its start time
	 * (lib/proc.h), `sd` its folders made ahead (spare_dirs.h; not ready
	 * when none); must not return (the spare exits 125 if it does) */
	void (*run)(void *arg, json_t *msg, struct cgroup *cg, const char *group,
	            uint64_t start_ticks, struct spare_dir *sd);
	void *arg;
};

struct agent_pool {
	struct cgroup_support cs; /* valid once `detected` */
	bool detected, on;
	int failures; /* spares that died unused; 3 turn the pool off */
	unsigned seq;
	struct agent_spare spares[AGENT_POOL_MAX];
	int n_spares;
	int want;           /* spares to keep */
	int64_t burst_at;   /* monotonic ms: the last turn of more starts than the floor */
	int turn_starts;    /* starts with limits in this turn */
	struct hashmap *groups; /* child pid -> its group's name (owned), until reaped */
	struct strvec stale;    /* groups to remove after the turn, or refused by the kernel for now */
	struct strvec free;     /* emptied groups of ended tasks, for the next spares (v1) */
	/* the real path of HOME/jobs, where spares make their task's folders
	 * ahead (spare_dirs.h); NULL: they do not (owned) */
	char *jobs;
	struct agent_pool_hooks hooks;
};

/* An empty pool; nothing is made before the first task with limits.
 * `jobs`: the real path of HOME/jobs (copied), or NULL: no folders made
 * ahead.  0 or -1 (out of memory). */
int agent_pool_init(struct agent_pool *p, const struct agent_pool_hooks *hooks,
                    const char *jobs);

/* Once: cgroup_detect (reading WEIR_CGROUP), WEIR_AGENT_POOL=0 turns the
 * spares off, and the groups and spare folders of agents that are gone
 * are removed. */
void agent_pool_detect(struct agent_pool *p);

/* The spare for a start, or NULL (none left, the pool off, or a task
 * without limits: a register answer without memory_mb or vcores, or one
 * whose backend confines it; a start without one registers over HTTP, and
 * every role of a job has a memory limit, model/job_spec.c). */
struct agent_spare *agent_pool_take(struct agent_pool *p, json_t *msg);

/* Hands the start to `sp` (the message down its pipe, then EOF); either
 * way its group is removed once `sp->pid` is reaped.  0, or -1 when the
 * spare is gone. */
int agent_pool_give(struct agent_pool *p, struct agent_spare *sp, json_t *msg);

/* The rule of the pool's size (pure): after a turn of `turn_starts` starts
 * with limits at `now` (monotonic ms), the number of spares to keep, from
 * `want` the number so far; *burst_at is the time of the last turn of more
 * than 2, updated here.  More than 2: up to that many (at most
 * AGENT_POOL_MAX, never fewer than before); else 2 after 30 s since the
 * last such turn. */
int agent_pool_want(int want, int turn_starts, int64_t now, int64_t *burst_at);

/* After a turn, once its messages are out: the groups of the shims that
 * ended removed, the pool's size from the turn's starts (spares over it
 * let go), then new spares forked up to it.  `now`: monotonic ms. */
void agent_pool_turn_end(struct agent_pool *p, int64_t now);

/* Every spare let go (they were forked with an environment that changed);
 * new ones come at the turn's end. */
void agent_pool_retire(struct agent_pool *p);

/* In a child of the agent that is not a spare: the spares' pipes closed. */
void agent_pool_close_in_child(const struct agent_pool *p);

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

/* At the agent's exit: spares told to go and reaped, their groups removed
 * (waiting up to a second for the kernel); then everything freed. */
void agent_pool_close(struct agent_pool *p);
void agent_pool_release(struct agent_pool *p);

#endif
