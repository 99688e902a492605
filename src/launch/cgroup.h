/* cgroup.h: per-task resource limits through Linux control groups.
 *
 * One cgroup per task, PARENT/NAME under each controller weir uses (memory
 * and cpu), on whichever hierarchy this process can write: cgroup v2 when its
 * memory controller is available there, else v1.  Memory: a hard limit
 * (v1 memory.limit_in_bytes and memsw when present; v2 memory.max and
 * memory.swap.max=0); CPU: a CFS quota of vcores * period (v1
 * cpu.cfs_quota_us; v2 cpu.max).  Afterwards: the peak memory and whether
 * the kernel's OOM killer fired inside the group.
 *
 * Where nothing is writable, cgroup_detect() says so and the caller falls
 * back to polling a process group's RSS (cgroup_pgroup_rss()).
 * See docs/internals/limits.md.
 */
#ifndef WEIR_LAUNCH_CGROUP_H
#define WEIR_LAUNCH_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/error.h"

enum cgroup_version { CGROUP_NONE = 0, CGROUP_V1 = 1, CGROUP_V2 = 2 };

struct cgroup_support {
	enum cgroup_version version;
	bool memory;           /* a memory limit can be set */
	bool cpu;              /* a CPU quota can be set */
	char memory_root[256]; /* v1: the memory controller's mount; v2: the unified mount */
	char cpu_root[256];    /* v1: the cpu controller's mount; v2: same as memory_root */
	bool memsw;            /* v1: memory.memsw.* exist (swap accounting on) */
	long cpu_period_us;    /* v1: a new group's CFS period (read once, from the parent) */
	char why[256];         /* when version is CGROUP_NONE: what was missing */
};

/* Looks at /proc/self/mounts and tries to create the "weir" parent group.
 * Never fails: returns and stores the version found (CGROUP_NONE when no
 * hierarchy is writable, or when the environment has WEIR_CGROUP=none,
 * which tests and hosts with broken delegation use to force the fallback).
 * Cheap enough to call once per launcher. */
enum cgroup_version cgroup_detect(struct cgroup_support *out);

/* A line for the log: "cgroup v1 (memory, cpu)" or "no writable cgroup
 * (...): memory enforced by polling RSS every 100 ms".  Returns buf. */
const char *cgroup_describe(const struct cgroup_support *s, char *buf, size_t size);

struct cgroup; /* opaque: one task's group */

/* The name of the group a launcher (or a shim forked fresh, not a spare of
 * the agent's pool) makes for its task under "weir": JOB-ATTEMPT-ROLE-INDEX-PID,
 * PID its own (names apart between homes sharing a machine, whose job ids
 * repeat).  Into buf; returns buf. */
const char *cgroup_task_name(char *buf, size_t size, long long job, int attempt, const char *role,
                             int index, pid_t pid);

/* Creates (or reuses, emptied and reset: peak watermark and OOM count
 * started again, limits not asked for lifted) PARENT/NAME with the
 * limits; memory_mb 0 or vcores 0: that limit is not set.  `name` is one path component.  NULL
 * with err when the support is CGROUP_NONE or a write is refused. */
struct cgroup *cgroup_create(const struct cgroup_support *s, const char *parent, const char *name,
                             uint64_t memory_mb, int vcores, struct weir_error *err);

/* A group without limits yet, under the memory controller and, where it
 * can be set, the cpu one (the agent's pool: made, and joined by a waiting
 * shim, before any task needs it).  NULL with err. */
struct cgroup *cgroup_create_empty(const struct cgroup_support *s, const char *parent,
                                   const char *name, struct weir_error *err);

/* Sets the group's limits (memory_mb 0, vcores 0: not set), in an order
 * that needs no failed write (v1: memsw >= limit at every moment, whether
 * the limit goes up or down).  0, or -1 with err. */
int cgroup_set_limits(struct cgroup *cg, uint64_t memory_mb, int vcores, struct weir_error *err);

/* The group of a shim back from its task, reset in place for the next one
 * (v1; the caller is in it and found no other process there): the peak
 * watermarks reset, the OOM kills so far the new baseline, the limits in
 * force read from the kernel (the task may have changed them), so that the
 * next cgroup_set_limits writes only what differs.  What cgroup_create_empty does to a group that
 * is there, less its mkdirs, its search for processes and its reopened cgroup.procs.  0, or -1 (the
 * group is gone: the caller exits). */
int cgroup_reset_own(struct cgroup *cg);

/* Frees the handle and leaves the group where it is (its owner removes it:
 * a shim inside its own group cannot).  NULL is a no-op. */
void cgroup_forget(struct cgroup *cg);

/* Moves the calling process into PARENT itself, under each controller (a
 * spare shim leaving its group so that the group can go).  0 or -1. */
int cgroup_move_self_to(const struct cgroup_support *s, const char *parent);

/* Removes the empty group PARENT/NAME under each controller.  0, or -1
 * when a directory is still busy (or cannot be removed). */
int cgroup_remove_named(const struct cgroup_support *s, const char *parent, const char *name);

/* The memory charged to PARENT/NAME now, in bytes (page cache and kernel
 * memory its processes left, once they are gone); UINT64_MAX when the
 * kernel does not say. */
uint64_t cgroup_usage_named(const struct cgroup_support *s, const char *parent, const char *name);
/* The same of the handle's group (its descriptor kept open). */
uint64_t cgroup_usage(struct cgroup *cg);

/* Moves the calling process into the group.  Only async-signal-safe calls
 * (write on descriptors opened by cgroup_create), so a child may call it
 * between fork and exec.  0 or -1. */
int cgroup_join_self(const struct cgroup *cg);

/* Moves `pid` into the group.  0 or -1 with err. */
int cgroup_add_pid(const struct cgroup *cg, pid_t pid, struct weir_error *err);

/* Highest memory use of the group in bytes; 0 if the kernel does not say. */
uint64_t cgroup_peak_memory(struct cgroup *cg);

/* How many processes the OOM killer killed inside the group since this
 * handle was made (v1 memory.oom_control, v2 memory.events "oom_kill",
 * less what a reused group had counted); -1 if unknown. */
int cgroup_oom_kills(struct cgroup *cg);

/* The group's cgroup.procs files, one a line ("MEM/cgroup.procs", then
 * "CPU/cgroup.procs" on v1 with a cpu group), into buf: what another
 * process writes its own pid ("0") to, to join the group (the Airflow warm
 * interpreter's task, launch/airflow_warm.h).  0, or -1 when it does not fit. */
int cgroup_procs_paths(const struct cgroup *cg, char *buf, size_t size);

/* Gives the group's cgroup.procs files to uid:gid (a task's user, so that a
 * process of that user may write its own pid there: the Airflow warm
 * interpreter's task joining the task's group).  0 or -1. */
int cgroup_give_procs(const struct cgroup *cg, uid_t uid, gid_t gid);

/* Number of processes in the group now, or -1. */
int cgroup_count_procs(const struct cgroup *cg);

/* SIGKILLs every process in the group but the caller until none is left
 * (bounded wait of about 2 s).  0 when empty. */
int cgroup_kill_all(struct cgroup *cg);

/* True when the last cgroup_kill_all on this handle ended finding none but
 * the caller in the group, and neither cgroup_set_limits nor
 * cgroup_reset_own came since (nothing of a task can have been born there
 * in between); the note is used up.  A shim asks it after its task instead
 * of reading cgroup.procs again (cgroup_count_procs). */
bool cgroup_take_emptied(struct cgroup *cg);

/* The limit it was created with, in bytes (0: none). */
uint64_t cgroup_memory_limit(const struct cgroup *cg);

/* Kills what is left, removes the group, frees.  NULL is a no-op. */
void cgroup_destroy(struct cgroup *cg);

/* The fallback without cgroups: total resident memory, in bytes, of every
 * process in process group `pgid` (from /proc). */
uint64_t cgroup_pgroup_rss(pid_t pgid);

#endif
