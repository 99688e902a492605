/* supervise.c: the user program from fork to its end (supervise.h): one
 * poll loop, one handler per event, then the outcome. */
#include "launch/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/shell.h"

static void describe_signal(int sig, char *buf, size_t size)
{
	const char *name = sigabbrev_np(sig);
	snprintf(buf, size, "SIG%s", name ? name : "?");
}

/* Kills the program's process group and, with a cgroup, everything in it. */
static void kill_everything(pid_t pgid, struct cgroup *cg)
{
	kill(-pgid, SIGKILL);
	if (cg)
		cgroup_kill_all(cg);
}

/* Usage of every process we reap: the program, and as subreaper the
 * orphans it leaves (a daemonised grandchild's CPU counts too). */
struct usage {
	int64_t cpu_ms;
	uint64_t maxrss_bytes;
};

static void usage_add(struct usage *u, const struct rusage *r)
{
	u->cpu_ms += (int64_t)r->ru_utime.tv_sec * 1000 + r->ru_utime.tv_usec / 1000 +
	             (int64_t)r->ru_stime.tv_sec * 1000 + r->ru_stime.tv_usec / 1000;
	if ((uint64_t)r->ru_maxrss * 1024 > u->maxrss_bytes)
		u->maxrss_bytes = (uint64_t)r->ru_maxrss * 1024;
}

static int kill_if_child(const struct proc_stat *p, void *arg)
{
	if (p->ppid == *(pid_t *)arg && p->state != 'Z')
		kill(p->pid, SIGKILL);
	return 0;
}

/* SIGKILLs every live child of this process (found through /proc). */
static void kill_children(void)
{
	pid_t self = getpid();
	proc_each(kill_if_child, &self);
}

static void reap_orphans(struct usage *u)
{
	struct rusage r;
	struct timespec ts = {0, 2 * 1000 * 1000};

	/* Killing a child orphans its own children to us: repeat until none is
	 * left.  Without a cgroup this is what catches a setsid()ed daemon. */
	for (int i = 0; i < 500; i++) {
		pid_t w;
		while ((w = wait4(-1, NULL, WNOHANG, &r)) > 0)
			usage_add(u, &r);
		if (w < 0)
			break; /* ECHILD: none left */
		kill_children();
		nanosleep(&ts, NULL);
	}
}

/* The supervisor of the user program: one loop that waits (poll on the
 * signalfd and the log pipe, timeout = the nearest deadline) and one handler
 * per event.  Its state lives here between events. */
struct supervisor {
	const struct supervise_spec *spec;
	struct supervise_outcome *o;
	int log_r; /* the log pipe's read end while open, else -1 */
	pid_t pid;
	int sfd;    /* SIGCHLD, SIGTERM, SIGINT, SIGHUP, blocked and read here */
	int status; /* the program's wait status, once exited */
	bool exited;
	bool no_child;    /* the last wait4 said ECHILD: no child, alive or not */
	bool terminating; /* a signal went to the program; SIGKILL at kill_at */
	/* why it terminates: END_CAUSE_EXEC_TIMEOUT or END_CAUSE_STOPPED (a
	 * signal to the launcher); END_CAUSE_NONE while it does not */
	enum end_cause stopping;
	bool started_sent;
	struct usage usage;
	uint64_t fallback_peak; /* the highest RSS polled, without a cgroup */
	int64_t exec_deadline, kill_at, next_rss, next_started; /* INT64_MAX: none */
};

/* The signalfd, made at the first task and kept: a shim that serves again
 * (agent_pool.c) reads the same signals with it at every task. */
static int sup_sfd = -1;

/* Blocks the signals the supervisor reads from its signalfd, so none is lost
 * between the fork and the moment it can be forwarded.  The signalfd, or -1;
 * `old` gets the mask the program must run with. */
static int supervise_signals(sigset_t *old)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, old);
	if (sup_sfd < 0) {
		sup_sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
		if (sup_sfd < 0)
			log_error("signalfd: %s", strerror(errno));
	}
	return sup_sfd;
}

/* What the child reports when it cannot become the program: the step, and
 * errno.  It writes them in the parent's memory, which it shares until it
 * execs or exits (CLONE_VM|CLONE_VFORK: spawn_child), and the parent reads
 * them only once it resumes, as glibc's posix_spawn does: no pipe made,
 * read and closed a task.  Step 0: exec succeeded. */
enum spawn_step { SPAWN_CGROUP = 1, SPAWN_USER, SPAWN_CHDIR, SPAWN_EXEC };

struct spawn_error {
	int step;
	int err;
};

/* How the child becomes the program: argv of the words when the command
 * has no shell syntax (path: argv[0] found on the program's PATH), else
 * sh -c.  Prepared before the fork: the child only calls what is
 * async-signal-safe. */
struct spawn_plan {
	struct strvec words;
	char *path; /* for words; NULL: sh -c */
	char *sh_argv[4];
	/* With another user to run as: the files after `path` on PATH that
	 * the launcher may run, tried in turn when that user may not (a PATH
	 * folder of the launcher's own, say /root/bin, comes first) */
	struct strvec later;
};

static const char *env_value(char **envp, const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, nl) && envp[i][nl] == '=')
			return envp[i] + nl + 1;
	return NULL;
}

/* A file a search takes: executable and a regular file. */
static bool runnable(const char *path)
{
	struct stat st;

	return access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* What this process's last search of a PATH found: a shim that serves again
 * (agent_pool.c) runs the same few programs task after task, and a search
 * is an access() per PATH directory (16 with a long PATH).  Keyed by the
 * PATH string and the name, for PROG_SEEN_MS after the search, and checked
 * as the search checks what it finds (runnable) before it is taken: gone,
 * no longer executable, no longer a file, and the search is made afresh.
 * So a fresh search and the memory differ only for a program made
 * executable, in those 100 ms, in a PATH directory before the one
 * remembered.  100 ms: a shim of a fan-out or a chain gets a task every
 * 5-10 ms.  Only absolute finds are kept (a relative PATH entry is
 * relative to where the search runs). */
#define PROG_SEEN_MS 100
static struct {
	char *path_env, *name, *found;
	int64_t at_ms;
} prog_seen;

static void prog_seen_forget(void)
{
	free(prog_seen.path_env);
	free(prog_seen.name);
	free(prog_seen.found);
	memset(&prog_seen, 0, sizeof prog_seen);
}

static void prog_seen_note(const char *path_env, const char *name, const char *found)
{
	prog_seen_forget();
	if (found[0] != '/')
		return;
	prog_seen.path_env = strdup(path_env);
	prog_seen.name = strdup(name);
	prog_seen.found = strdup(found);
	if (!prog_seen.path_env || !prog_seen.name || !prog_seen.found)
		prog_seen_forget();
	else
		prog_seen.at_ms = clock_mono_ms();
}

/* The remembered find for `name` on `path`, still runnable; NULL: search. */
static char *prog_seen_take(const char *path, const char *name)
{
	if (!prog_seen.found)
		return NULL;
	if (clock_mono_ms() - prog_seen.at_ms >= PROG_SEEN_MS || strcmp(prog_seen.name, name) ||
	    strcmp(prog_seen.path_env, path))
		return NULL;
	if (!runnable(prog_seen.found)) {
		prog_seen_forget();
		return NULL;
	}
	return strdup(prog_seen.found);
}

/* argv[0] on the program's own PATH, as execvp would find it (the first
 * executable file); not found: the first candidate, so that exec gives the
 * OS's words for it.  `later` (NULL: not wanted): every runnable file after
 * the one found, what the child tries when the task's user may not run
 * that one (a PATH folder of the launcher's own, say /root/bin, first);
 * no remembered find is taken then. */
static char *find_program(const char *name, char **envp, const char *workdir, struct strvec *later)
{
	const char *path = env_value(envp, "PATH");
	char *first = NULL, *found = NULL;

	if (strchr(name, '/')) {
		if (name[0] == '/' || !workdir)
			return strdup(name);
		/* relative to the working directory the child enters */
		char *p;
		return asprintf(&p, "%s/%s", workdir, name) < 0 ? NULL : p;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	char *seen = later ? NULL : prog_seen_take(path, name);
	if (seen)
		return seen;
	for (const char *d = path;; d++) {
		const char *e = strchr(d, ':');
		size_t dl = e ? (size_t)(e - d) : strlen(d);
		char *cand;
		if (asprintf(&cand, "%.*s%s%s", (int)dl, d, dl ? "/" : "", name) < 0)
			break;
		if (found) {
			if (runnable(cand))
				strvec_push(later, cand);
			free(cand);
		} else if (runnable(cand)) {
			free(first);
			first = NULL;
			prog_seen_note(path, name, cand);
			found = cand;
			if (!later)
				return found;
		} else if (!first) {
			first = cand;
		} else {
			free(cand);
		}
		if (!e)
			break;
		d = e;
	}
	if (found)
		return found;
	return first ? first : strdup(name);
}

static int spawn_plan_make(const struct supervise_spec *spec, struct spawn_plan *p)
{
	memset(p, 0, sizeof *p);
	int w = spec->force_shell ? 1 : shell_words(spec->command, &p->words);
	if (w < 0)
		return -1;
	if (w == 0) {
		bool other = spec->run_as && spec->run_as->set;
		p->path = find_program(p->words.v[0], spec->envp, spec->workdir,
		                       other ? &p->later : NULL);
		if (!p->path) {
			strvec_release(&p->words);
			return -1;
		}
		log_debug("running %s directly (no shell syntax)", p->path);
		return 0;
	}
	p->sh_argv[0] = "sh";
	p->sh_argv[1] = "-c";
	p->sh_argv[2] = (char *)spec->command;
	return 0;
}

static void spawn_plan_release(struct spawn_plan *p)
{
	strvec_release(&p->words);
	strvec_release(&p->later);
	free(p->path);
}

static volatile struct spawn_error spawn_err;

static _Noreturn void spawn_fail(int step, int code)
{
	spawn_err.err = errno;
	spawn_err.step = step;
	_exit(code);
}

static sigset_t ignored_sigs; /* supervise_note_ignored: not SIG_DFL */
static bool ignored_known;

void supervise_note_ignored(void)
{
	sigemptyset(&ignored_sigs);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &sa) == 0 &&
		    sa.sa_handler != SIG_DFL)
			sigaddset(&ignored_sigs, sig);
	}
	ignored_known = true;
}

/* The child's side of the spawn: its own process group, the log pipe as
 * stdout and stderr, the cgroup, the task's user (after the cgroup: its
 * cgroup.procs is root's), the working directory (entered as that user, so
 * a folder it may not enter fails here), umask 022 (the server's is 066),
 * every signal's disposition back to the default (those not at the
 * default already: an ignored one would outlive exec, a handler must not
 * run in a child that shares its parent's memory) and an empty mask, the
 * next file on PATH when the task's user may not run the first (execvp's
 * way), descriptors above 2
 * closed on exec, then exec.  Only async-signal-safe calls until exec,
 * and no write to memory the parent uses (the child runs in it, the parent
 * stopped, until exec: spawn_child) but `spawn_err`, where a failure goes. */
static _Noreturn void exec_program(const struct supervise_spec *spec, const struct spawn_plan *plan)
{
	sigset_t none;

	setpgid(0, 0);
	if (spec->log_w && *spec->log_w >= 0) {
		dup2(*spec->log_w, 1);
		dup2(*spec->log_w, 2);
	}
	if (spec->cg && !spec->cg_joined && cgroup_join_self(spec->cg) < 0)
		spawn_fail(SPAWN_CGROUP, EXIT_LAUNCH_FAILED);
	if (run_as_become(spec->run_as) < 0)
		spawn_fail(SPAWN_USER, EXIT_LAUNCH_FAILED);
	umask(022);
	if (chdir(spec->workdir) < 0)
		spawn_fail(SPAWN_CHDIR, EXIT_LAUNCH_FAILED);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&ignored_sigs, sig) == 1)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* whatever the launcher (or the agent it was forked from) held open */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (plan->path) {
		execve(plan->path, plan->words.v, spec->envp);
		/* the task's user may not run it: the next on PATH, as execvp */
		for (size_t i = 0; (errno == EACCES || errno == ENOENT) && i < plan->later.n; i++)
			execve(plan->later.v[i], plan->words.v, spec->envp);
	} else
		execve("/bin/sh", plan->sh_argv, spec->envp);
	spawn_fail(SPAWN_EXEC, 127);
}

struct spawn_args {
	const struct supervise_spec *spec;
	const struct spawn_plan *plan;
};

static int spawn_child_main(void *arg)
{
	const struct spawn_args *a = arg;
	exec_program(a->spec, a->plan);
}

/* The child's own stack while it shares the launcher's memory (one thread,
 * one program at a time; untouched pages cost nothing, and no mmap and
 * munmap a task). */
#define SPAWN_STACK (64 * 1024)
static _Alignas(64) char spawn_stack[SPAWN_STACK];

/* Starts the child as vfork does (clone CLONE_VM|CLONE_VFORK): no page
 * tables copied and torn down again, the parent stopped until the child
 * execs or exits.  Every signal is blocked around it so that no handler of
 * the parent runs on the child's stack (the child resets dispositions, then
 * empties its mask).  The child's pid, or -1 with errno. */
static pid_t spawn_child(const struct supervise_spec *spec, const struct spawn_plan *plan)
{
	struct spawn_args a = {spec, plan};
	sigset_t all, saved;
	pid_t pid;

	sigfillset(&all);
	spawn_err.step = 0;
	spawn_err.err = 0;
	sigprocmask(SIG_SETMASK, &all, &saved);
	pid = clone(spawn_child_main, spawn_stack + SPAWN_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD,
	            &a);
	int err = errno;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	errno = err;
	return pid;
}

/* The child's word, once spawn_child has returned (the child exec'd or
 * exited by then): 0 when it exec'd, else the step that failed with *e
 * filled. */
static int spawn_wait(struct spawn_error *e)
{
	e->step = spawn_err.step;
	e->err = spawn_err.err;
	return e->step;
}

/* The program could not be started: the child's exit is reaped and the
 * outcome says why, in the OS's words. */
static void spawn_failed(struct supervisor *s, const struct spawn_plan *plan,
                         const struct spawn_error *e)
{
	struct supervise_outcome *o = s->o;
	struct rusage r;
	int st;

	while (wait4(s->pid, &st, 0, &r) < 0 && errno == EINTR)
		;
	o->cause = END_CAUSE_LAUNCH_FAILED;
	o->exit_code = e->step == SPAWN_EXEC ? 127 : EXIT_LAUNCH_FAILED;
	if (e->step == SPAWN_CGROUP)
		snprintf(o->reason, sizeof o->reason,
		         "launch failed: cannot join the task's "
		         "cgroup: %s",
		         strerror(e->err));
	else if (e->step == SPAWN_USER)
		snprintf(o->reason, sizeof o->reason,
		         "launch failed: cannot become the task's user (uid %lu): %s",
		         (unsigned long)s->spec->run_as->uid, strerror(e->err));
	else if (e->step == SPAWN_CHDIR)
		snprintf(o->reason, sizeof o->reason, "launch failed: cannot enter %s: %s",
		         s->spec->workdir, strerror(e->err));
	else
		snprintf(o->reason, sizeof o->reason, "launch failed: cannot run %s: %s",
		         plan->path ? plan->words.v[0] : "/bin/sh", strerror(e->err));
	log_error("%s", o->reason + strlen("launch failed: "));
}

/* How long poll() may wait: until the nearest deadline, -1 when none. */
static int supervise_timeout(const struct supervisor *s, int64_t now)
{
	int64_t next = s->exec_deadline;

	if (s->kill_at < next)
		next = s->kill_at;
	if (s->next_rss < next)
		next = s->next_rss;
	if (!s->started_sent && s->next_started < next)
		next = s->next_started;
	return next == INT64_MAX ? -1 : (int)(next > now ? next - now : 0);
}

/* A signal to the launcher: the first is forwarded to the program's group
 * with SIGKILL kill_grace_ms later, a second one kills at once.  SIGCHLD
 * only wakes the loop (the reap follows). */
static void on_signals(struct supervisor *s)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
		int sig = (int)si.ssi_signo;
		char sname[32];
		if (sig == SIGCHLD)
			continue;
		describe_signal(sig, sname, sizeof sname);
		if (!s->terminating) {
			log_info("got %s: forwarding to the program, SIGKILL in %lld ms", sname,
			         (long long)s->spec->kill_grace_ms);
			kill(-s->pid, sig);
			s->terminating = true;
			s->stopping = END_CAUSE_STOPPED;
			s->kill_at = clock_mono_ms() + s->spec->kill_grace_ms;
			snprintf(s->o->reason, sizeof s->o->reason, "killed (launcher got %s)",
			         sname);
		} else {
			log_info("got %s again: killing the program now", sname);
			s->kill_at = clock_mono_ms();
		}
	}
}

/* Reaps the program, and the orphans it left to us (their usage counts). */
static void on_child_exit(struct supervisor *s)
{
	for (;;) {
		int st;
		struct rusage r;
		pid_t w = wait4(-1, &st, WNOHANG, &r);
		if (w <= 0) {
			s->no_child = w < 0 && errno == ECHILD;
			break;
		}
		usage_add(&s->usage, &r);
		if (w == s->pid) {
			s->status = st;
			s->exited = true;
		}
	}
}

/* The execution timeout: SIGTERM to the group, SIGKILL after the grace. */
static void on_exec_deadline(struct supervisor *s, int64_t now)
{
	log_warn("execution timeout after %llds: stopping the program",
	         (long long)s->spec->execution_timeout_s);
	kill(-s->pid, SIGTERM);
	s->terminating = true;
	s->stopping = END_CAUSE_EXEC_TIMEOUT;
	s->kill_at = now + s->spec->kill_grace_ms;
	s->exec_deadline = INT64_MAX;
	snprintf(s->o->reason, sizeof s->o->reason, "execution timeout after %llds",
	         (long long)s->spec->execution_timeout_s);
}

/* The grace after a forwarded signal or a timeout is over. */
static void on_kill_deadline(struct supervisor *s)
{
	kill_everything(s->pid, s->spec->cg);
	s->kill_at = INT64_MAX;
}

/* Without a cgroup: the process group's RSS against the limit, every 100 ms. */
static void on_memory_poll(struct supervisor *s, int64_t now)
{
	uint64_t rss = cgroup_pgroup_rss(s->pid);
	uint64_t limit = s->spec->memory_mb * 1024 * 1024;

	if (rss > s->fallback_peak)
		s->fallback_peak = rss;
	if (rss > limit && !s->o->oom_killed) {
		log_warn("memory %llu MiB over the limit of %llu MiB: killing the program",
		         (unsigned long long)(rss >> 20), (unsigned long long)s->spec->memory_mb);
		kill_everything(s->pid, s->spec->cg);
		s->o->oom_killed = true;
	}
	s->next_rss = now + 100;
}

/* The start is reported (again, when a try was not settled). */
static void on_report_started(struct supervisor *s, int64_t now)
{
	int64_t retry_ms = s->spec->report_started(s->pid, s->spec->arg);

	s->started_sent = retry_ms == 0;
	s->next_started = now + retry_ms;
}

/* The log pipe is readable (or at its end). */
static void on_log(struct supervisor *s)
{
	if (s->log_r >= 0 && !s->spec->drain_log(s->spec->arg))
		s->log_r = -1;
}

/* One wait and the events it brought, in a fixed order: log bytes, signals,
 * exits, then each deadline that has come. */
static void supervise_turn(struct supervisor *s)
{
	struct pollfd pfd[2] = {{s->sfd, POLLIN, 0}, {s->log_r, POLLIN, 0}};
	int64_t now;

	if (poll(pfd, s->log_r >= 0 ? 2 : 1, supervise_timeout(s, clock_mono_ms())) < 0 &&
	    errno != EINTR) {
		log_error("poll: %s", strerror(errno));
		kill_everything(s->pid, s->spec->cg);
	}
	if (s->log_r >= 0 && pfd[1].revents)
		on_log(s);
	on_signals(s);
	on_child_exit(s);
	now = clock_mono_ms();
	if (!s->exited && now >= s->exec_deadline && !s->terminating)
		on_exec_deadline(s, now);
	if (!s->exited && now >= s->kill_at)
		on_kill_deadline(s);
	if (!s->exited && now >= s->next_rss)
		on_memory_poll(s, now);
	if (!s->started_sent && now >= s->next_started)
		on_report_started(s, now);
}

/* The outcome from the wait status, the cgroup's or polled peak memory and
 * what the supervisor did (a timeout, an OOM kill, a forwarded signal). */
static void finish_outcome(struct supervisor *s)
{
	struct supervise_outcome *o = s->o;
	const struct supervise_spec *spec = s->spec;

	o->cpu_time_ms = s->usage.cpu_ms;
	if (WIFEXITED(s->status)) {
		o->exit_code = WEXITSTATUS(s->status);
	} else if (WIFSIGNALED(s->status)) {
		o->signal = WTERMSIG(s->status);
		o->exit_code = 128 + o->signal;
	}
	if (spec->cg) {
		o->peak_memory_bytes = cgroup_peak_memory(spec->cg);
		if (cgroup_oom_kills(spec->cg) > 0)
			o->oom_killed = true;
	}
	if (!o->peak_memory_bytes) {
		o->peak_memory_bytes = s->fallback_peak;
		if (s->usage.maxrss_bytes > o->peak_memory_bytes)
			o->peak_memory_bytes = s->usage.maxrss_bytes;
	}
	if (o->oom_killed)
		o->cause = END_CAUSE_OOM;
	else if (s->stopping != END_CAUSE_NONE)
		o->cause = s->stopping;
	else
		o->cause = o->signal ? END_CAUSE_SIGNALLED : END_CAUSE_EXITED;
	if (o->cause == END_CAUSE_EXEC_TIMEOUT) {
		/* Like timeout(1): 124, the code users know for a timeout (the
		 * cause, not the code, keeps it from being retried). */
		o->exit_code = 124;
		o->signal = 0;
	}
	if (o->oom_killed) {
		o->exit_code = 137;
		o->signal = SIGKILL;
		snprintf(o->reason, sizeof o->reason, "OOMKilled (peak %llu MiB of %llu MiB)",
		         (unsigned long long)(o->peak_memory_bytes >> 20),
		         (unsigned long long)spec->memory_mb);
	} else if (!o->reason[0] && o->signal) {
		char sname[32];
		describe_signal(o->signal, sname, sizeof sname);
		snprintf(o->reason, sizeof o->reason, "killed by %s", sname);
	} else if (!o->reason[0] && o->exit_code) {
		snprintf(o->reason, sizeof o->reason, "exited %d", o->exit_code);
	}
	log_info("program exited: code %d%s%s, peak %llu MiB, cpu %lld ms", o->exit_code,
	         o->reason[0] ? ", " : "", o->reason,
	         (unsigned long long)(o->peak_memory_bytes >> 20), (long long)o->cpu_time_ms);
}

/* This process made child subreaper, once: the attribute stays with the
 * process (a shim that serves again keeps it from its first task); a fork
 * does not inherit it, so a child of a process that set it starts over
 * (subreaper_forked). */
static bool subreaper_set;

static void subreaper_forked(void)
{
	subreaper_set = false;
}

static void supervise_subreaper(void)
{
	static bool hooked;

	if (subreaper_set)
		return;
	if (!hooked && pthread_atfork(NULL, NULL, subreaper_forked) == 0)
		hooked = true;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 && hooked)
		subreaper_set = true;
}

int supervise_run(const struct supervise_spec *spec, struct supervise_outcome *o)
{
	struct supervisor s = {
	    .spec = spec,
	    .o = o,
	    .log_r = spec->log_r,
	    .exec_deadline = INT64_MAX,
	    .kill_at = INT64_MAX,
	    .next_rss = INT64_MAX,
	};
	sigset_t old;
	struct spawn_plan plan;
	int64_t t0;

	if (spawn_plan_make(spec, &plan) < 0) {
		log_error("out of memory");
		return -1;
	}
	if (!ignored_known)
		supervise_note_ignored();
	s.sfd = supervise_signals(&old);
	if (s.sfd < 0) {
		spawn_plan_release(&plan);
		return -1;
	}
	supervise_subreaper();
	s.pid = spawn_child(spec, &plan);
	if (s.pid < 0) {
		log_error("clone: %s", strerror(errno));
		spawn_plan_release(&plan);
		return -1;
	}
	/* no setpgid here: the child's own ran before this one resumed (vfork) */
	struct spawn_error se;
	int failed = spawn_wait(&se);
	if (spec->log_w && *spec->log_w >= 0) {
		close(*spec->log_w); /* the program holds the write end now */
		*spec->log_w = -1;
	}
	if (failed) {
		spawn_failed(&s, &plan, &se);
		spawn_plan_release(&plan);
		reap_orphans(&s.usage);
		on_log(&s);
		return 0;
	}
	spawn_plan_release(&plan);
	t0 = clock_mono_ms();
	if (spec->execution_timeout_s > 0)
		s.exec_deadline = t0 + spec->execution_timeout_s * 1000;
	if (!spec->cg && spec->memory_mb > 0)
		s.next_rss = t0 + 100;
	/* the first report at once; a retry's delay counts from its answer */
	int64_t retry_ms = spec->report_started(s.pid, spec->arg);
	s.started_sent = retry_ms == 0;
	s.next_started = clock_mono_ms() + retry_ms;

	while (!s.exited)
		supervise_turn(&s);
	/* The program is gone; nothing it started may outlive it.  No child
	 * left: as child subreaper, every descendant of the program that
	 * outlived its parent came back to this process, so none is alive;
	 * its process group (in our session, which only our descendants
	 * join) is empty, and its number may be another's by now.  The
	 * cgroup may still hold what was moved into it: swept by the caller
	 * after its report when it asked to (sweep_after), else here. */
	if (!s.no_child) {
		kill_everything(s.pid, spec->cg);
		reap_orphans(&s.usage);
	} else if (spec->cg && spec->sweep_after) {
		o->sweep_left = true;
	} else if (spec->cg) {
		cgroup_kill_all(spec->cg);
	}
	on_log(&s);
	finish_outcome(&s);
	return 0;
}
