/* supervise.h: running the user program and watching it to its end.
 *
 * supervise_run() forks the program in its own process group (in the
 * task's cgroup when there is one, its stdout and stderr on the log pipe when
 * there is one): exec'd directly from the command's words when it has no
 * shell syntax (lib/shell.h), else as `sh -c command`; the child resets
 * every signal's disposition and its mask and closes what it inherited, and
 * a failure to become the program (the cgroup, the user, the directory,
 * exec) comes back in the memory the child shares until exec, in the OS's words.  It supervises it
 * in one loop: poll() on a signalfd and the log pipe, with the nearest deadline as the timeout,
 * then one handler per event: log bytes, a signal to the launcher (forwarded to the group, SIGKILL
 * after the grace), a child's exit (reaped, usage counted; as subreaper also
 * the orphans the program leaves), the execution timeout, the end of a grace,
 * the RSS poll without a cgroup, and the retry of the "started" report.
 * When the program is gone, everything it started is killed and reaped
 * (with spec.sweep_after and no child left, the cgroup's sweep is the
 * caller's, after its report).
 *
 * The launch protocol stays with the caller (launch.c): the supervisor only
 * calls back to report the start and to drain the log pipe.
 */
#ifndef WEIR_LAUNCH_SUPERVISE_H
#define WEIR_LAUNCH_SUPERVISE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "launch/cgroup.h"
#include "lib/error.h"
#include "lib/run_as.h"
#include "model/end_cause.h"

/* Exit status of a launcher whose program could not be started (also the
 * program's, when it cannot join its cgroup or enter its directory). */
#define EXIT_LAUNCH_FAILED 125

/* How the program ended, as the "exited" report carries it. */
struct supervise_outcome {
	enum end_cause cause; /* exited, signalled, oom, execution_timeout, stopped */
	int exit_code;
	int signal;
	bool oom_killed;
	uint64_t peak_memory_bytes;
	int64_t cpu_time_ms;
	char reason[WEIR_ERROR_MSG_MAX + 64];
	/* spec.sweep_after and the program left no process of ours: the
	 * cgroup is not swept yet (cgroup_kill_all), the caller does it once
	 * it has reported */
	bool sweep_left;
};

/* What to run and under which limits.  The callbacks get `arg`. */
struct supervise_spec {
	const char *command; /* its words exec'd, or /bin/sh -c command */
	bool force_shell;    /* always /bin/sh -c */
	const char *workdir;
	char **envp;
	/* The user the program runs as (its groups, gid, uid taken in the child
	 * after it joined its cgroup, before it enters workdir); NULL or !set:
	 * the launcher's own.  The program's umask is 022 either way. */
	const struct run_as *run_as;
	struct cgroup *cg; /* the program joins it; NULL: none (RSS polling with memory_mb) */
	bool cg_joined;    /* the caller is in cg already: the program is born there */
	/* The caller reports at once (the shim's journal) and sweeps the cgroup
	 * after its report: when the program's exit left this process no child
	 * (as child subreaper every descendant of the program comes back to
	 * it, so none is alive), the process group's kill and the cgroup's
	 * sweep are not made before the outcome (outcome.sweep_left). */
	bool sweep_after;
	uint64_t memory_mb;          /* 0: no limit */
	int64_t execution_timeout_s; /* 0: none */
	int64_t kill_grace_ms;       /* SIGTERM (or a forwarded signal) to SIGKILL */
	/* The log pipe: the write end becomes the program's stdout and stderr
	 * and is closed here once the program holds it (*log_w set to -1);
	 * log_w NULL or -1: the program inherits ours. */
	int *log_w;
	int log_r; /* the read end, polled; -1: none */
	/* Reads what the log pipe holds now, without waiting; false once every
	 * writer is gone (the read end is closed then). */
	bool (*drain_log)(void *arg);
	/* Reports the start: 0 when settled, else the ms until the next try. */
	int64_t (*report_started)(pid_t pid, void *arg);
	void *arg;
};

/* Notes which signals this process does not leave at the default now
 * (SIG_IGN is the one disposition an exec keeps; a handler must not run
 * in the program's side of the spawn, which shares the parent's memory
 * until exec): that side then resets those alone, not all 64.  Call it
 * after the process's last change of a disposition (the agent, at its
 * start: its forks inherit the note); supervise_run() calls it when
 * nothing did. */
void supervise_note_ignored(void);

/* Runs the program and supervises it until it exits; fills `o` (reason
 * "execution timeout after Ns", "OOMKilled (...)", "killed (launcher got
 * SIG...)", "killed by SIG...", "exited N", or empty).  A program that could
 * not be exec'd (or enter its cgroup or directory) is an outcome too: cause
 * launch_failed, exit code 127 (exec; 125 otherwise), reason "launch
 * failed: cannot run NAME: <the OS's words>"; "started" is not reported.
 * 0, or -1 when nothing could be forked (logged). */
int supervise_run(const struct supervise_spec *spec, struct supervise_outcome *o);

#endif
