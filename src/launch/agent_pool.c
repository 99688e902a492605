/* agent_pool.c: spare shims in groups made ahead, their number following
 * demand, and the removal of their groups (agent_pool.h). */
#include "launch/agent_pool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/error.h"
#include "lib/json_line.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/strbuf.h"

#define POOL_PARENT "weir"
#define POOL_FLOOR 2
#define POOL_QUIET_MS 30000
/* a group that holds more once its task ended is removed, not reused */
#define POOL_REUSE_MAX (1024 * 1024)
/* the same, for a shim that stays in its group after its task: its own
 * pages are charged there too */
#define POOL_BACK_MAX (2 * 1024 * 1024)
/* pipes kept open to children running a task, for them to come back; over
 * it a start's pipe is closed after the start (the shim exits after it) */
#define POOL_KEPT_MAX 256

int agent_pool_init(struct agent_pool *p, const struct agent_pool_hooks *hooks, const char *jobs)
{
	memset(p, 0, sizeof *p);
	p->want = POOL_FLOOR;
	p->hooks = *hooks;
	p->children = hashmap_create(HASHMAP_KEY_INT);
	p->self = getpid();
	if (jobs && !(p->jobs = strdup(jobs)))
		return -1;
	return p->children ? 0 : -1;
}

/* Whether process `pid` has ended: none, or a zombie not reaped yet (an
 * agent killed after its server is reaped by init, which may take a while:
 * its groups are still to be swept). */
static bool pid_ended(int pid)
{
	struct proc_stat ps;

	if (kill(pid, 0) < 0)
		return errno == ESRCH;
	return proc_read_stat(pid, &ps) == 0 && ps.state == 'Z';
}

/* The pool's groups of agents that are gone (killed with -9), emptied by
 * now: removed (a group still holding a shim refuses).  At the first use
 * of the pool and again at the agent's exit (agents killed while it ran). */
static void pool_sweep(struct agent_pool *p)
{
	char dir[600];
	DIR *d;
	struct dirent *de;

	snprintf(dir, sizeof dir, "%s/%s", p->cs.memory_root, POOL_PARENT);
	if (!(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		int pid;
		if (sscanf(de->d_name, "pool-%d-", &pid) == 1 && pid != (int)getpid() &&
		    pid_ended(pid))
			cgroup_remove_named(&p->cs, POOL_PARENT, de->d_name);
	}
	closedir(d);
}

void agent_pool_detect(struct agent_pool *p)
{
	const char *pool = getenv("WEIR_AGENT_POOL");

	if (p->detected)
		return;
	p->detected = true;
	cgroup_detect(&p->cs);
	p->on = p->cs.version != CGROUP_NONE && !(pool && !strcmp(pool, "0"));
	if (p->cs.version != CGROUP_NONE)
		pool_sweep(p);
	spare_dirs_sweep(p->jobs, getpid());
}

/* One start line from the agent, or NULL: EOF (the agent let the spare
 * go, or is gone), or a line that is no JSON.  `in` keeps what follows. */
static json_t *read_start(int rfd, struct strbuf *in)
{
	char buf[65536];

	for (;;) {
		char *nl = in->len ? memchr(in->buf, '\n', in->len) : NULL;
		if (nl) {
			size_t len = (size_t)(nl - in->buf);
			*nl = '\0';
			/* the agent's lines hold no NUL (agent_conn.c): the scan
			 * reads the line whole */
			json_t *msg = json_line_loads(in->buf);
			strbuf_remove(in, 0, len + 1);
			return msg;
		}
		ssize_t n = read(rfd, buf, sizeof buf);
		if (n > 0)
			strbuf_add(in, buf, (size_t)n);
		else if (n < 0 && errno == EINTR)
			continue;
		else
			return NULL;
	}
}

/* At a start: what a shim forked fresh has.  A shim back from a task has
 * the supervisor's signals blocked still, and may hold some sent for its
 * last task (a stop that came as it ended): every one of them was sent
 * before the agent read "free", so before this start, and is dropped
 * here; then the mask is empty again. */
static void spare_signals_fresh(void)
{
	static const int sigs[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP};
	struct timespec zero = {0, 0};
	sigset_t set, none;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaddset(&set, sigs[i]);
	while (sigtimedwait(&set, NULL, &zero) > 0)
		;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Let go: out of its group, which goes, and its folder too. */
static _Noreturn void spare_leave(struct agent_pool *p, struct spare_dir *sd, const char *name)
{
	spare_dir_remove(sd);
	if (cgroup_move_self_to(&p->cs, POOL_PARENT) == 0)
		cgroup_remove_named(&p->cs, POOL_PARENT, name);
	_exit(0);
}

/* Whether a shim whose task ended may wait for another: cgroup v1 (a v2
 * group's peak cannot be reset), fewer than AGENT_POOL_TASKS_MAX tasks so
 * far, its agent the same and not letting it go, nothing else in its
 * group, and little charged there (the task's page cache and the shim's
 * own pages, which the next task's peak starts from). */
static bool spare_may_serve_again(struct agent_pool *p, struct cgroup *cg, const char *name,
                                  int rfd, pid_t agent, int tasks)
{
	struct pollfd q = {rfd, POLLIN, 0};

	if (p->cs.version != CGROUP_V1 || tasks >= AGENT_POOL_TASKS_MAX || getppid() != agent)
		return false;
	if (poll(&q, 1, 0) != 0) /* EOF (let go), or a start it was not to get yet */
		return false;
	/* the kill after its task found it alone: no second read of
	 * cgroup.procs (itself not counted) */
	if (!cgroup_take_emptied(cg) && cgroup_count_procs(cg) != 0)
		return false;
	uint64_t left = cgroup_usage(cg);
	log_debug("agent: shim %d: %llu bytes charged to %s after its task", (int)p->self,
	          (unsigned long long)left, name);
	return left <= POOL_BACK_MAX;
}

/* Test builds: WEIR_TEST_SPARE_FAIL=FILE makes the spare that creates FILE
 * (the first one) fail as one that cannot prepare, once a start is in its
 * pipe (a start given to a dying spare, unread); "always": every spare. */
static void spare_test_fail(int rfd, struct weir_error *err)
{
#ifdef WEIR_TEST_HOOKS
	const char *hook = getenv("WEIR_TEST_SPARE_FAIL");
	int fd = -1;

	if (!hook || !*hook)
		return;
	if (strcmp(hook, "always") &&
	    (fd = open(hook, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return;
	if (fd >= 0)
		close(fd);
	struct pollfd q = {rfd, POLLIN, 0};
	while (poll(&q, 1, -1) < 0 && errno == EINTR)
		;
	weir_error_set(err, WEIR_E_INTERNAL,
	               "WEIR_TEST_SPARE_FAIL: failing as if its group could not be made");
#else
	(void)rfd;
	(void)err;
#endif
}

/* In the spare: its task's folders made (spare_dirs.h: their inodes
 * charged to the agent's group, not the task's), its group made and
 * joined, then the start awaited; EOF (the agent let it go, or is gone):
 * out of the group, which goes too, and so does the folder.  After a
 * task, when it may, it resets its group in place (cgroup_reset_own: the
 * peak and the OOM count; the limits in force read from the kernel, and
 * the next start writes only those that differ), makes its folders again, says "free" and
 * waits for the next start; else it exits with its task's status. */
static _Noreturn void spare_main(struct agent_pool *p, int rfd, int wfd, const char *name,
                                 pid_t agent)
{
	struct weir_error err = {0};
	struct strbuf in = STRBUF_INIT;
	struct spare_dir sd;
	struct cgroup *cg;
	struct proc_stat ps;

	p->self = getpid();
	p->hooks.detach(p->hooks.arg);
	close(wfd);
	/* the agent's log, for the shim's lines between tasks */
	int log_fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	memset(&sd, 0, sizeof sd);
	if (p->jobs && spare_dir_make(&sd, p->jobs, agent, p->self) < 0)
		log_debug("agent: spare %d: no folders made ahead: %s", (int)p->self,
		          strerror(errno));
	cg = cgroup_create_empty(&p->cs, POOL_PARENT, name, &err);
	if (cg && cgroup_join_self(cg) < 0)
		weir_error_set(&err, WEIR_E_INTERNAL, "cannot join %s: %s", name, strerror(errno));
	else if (cg)
		spare_test_fail(rfd, &err);
	else if (!err.msg[0])
		weir_error_set(&err, WEIR_E_INTERNAL, "cannot make %s", name);
	if (!cg || err.msg[0]) {
		log_warn("agent: spare %d: %s (exits %d unused)", (int)p->self, err.msg,
		         AGENT_SPARE_UNPREPARED);
		spare_dir_remove(&sd);
		_exit(AGENT_SPARE_UNPREPARED);
	}
	/* what the journal's first line needs, while no task waits */
	uint64_t start_ticks = proc_read_stat((int)p->self, &ps) == 0 ? ps.start_ticks : 0;
	for (int tasks = 1;; tasks++) {
		json_t *msg = read_start(rfd, &in);
		if (!msg)
			spare_leave(p, &sd, name);
		spare_signals_fresh();
		int code = 125;
		int again = p->hooks.run(p->hooks.arg, msg, cg, name, start_ticks, &sd, &code);
		json_decref(msg);
		if (log_fd >= 0) {
			dup2(log_fd, 1);
			dup2(log_fd, 2);
		}
		if (!again || !spare_may_serve_again(p, cg, name, rfd, agent, tasks))
			_exit(code);
		/* in place: it is in its group, alone (spare_may_serve_again) */
		if (cgroup_reset_own(cg) < 0) {
			log_debug("agent: shim %d: cannot reset %s: %s", (int)p->self, name,
			          strerror(errno));
			_exit(code);
		}
		/* under its task's names: most often the next one's too */
		if (p->jobs && spare_dir_make_named(&sd, p->jobs, agent, p->self, sd.placed_work,
		                                    sd.placed_log) < 0)
			log_debug("agent: shim %d: no folders made ahead: %s", (int)p->self,
			          strerror(errno));
		if (p->hooks.back(p->hooks.arg) < 0) {
			spare_dir_remove(&sd);
			_exit(code);
		}
	}
}

/* The last group kept for reuse, taken off the list into `out`. */
static void pool_pop_free(struct agent_pool *p, char *out, size_t size)
{
	char *name = p->free.v[--p->free.n];

	p->free.v[p->free.n] = NULL;
	snprintf(out, size, "%s", name);
	free(name);
}

/* Groups kept for reuse over `keep`: removed. */
static void pool_trim_free(struct agent_pool *p, int keep)
{
	char name[sizeof p->spares[0].name];

	while (p->free.n > (size_t)(keep > 0 ? keep : 0)) {
		pool_pop_free(p, name, sizeof name);
		agent_pool_remove_group(p, name);
	}
}

static void pool_refill(struct agent_pool *p)
{
	/* shims whose task ended come back soon: no fork in their stead */
	while (p->on && p->n_spares + p->n_back_soon < p->want && p->failures < 3) {
		struct agent_spare *sp = &p->spares[p->n_spares];
		int fds[2];
		if (pipe2(fds, O_CLOEXEC) < 0)
			return;
		memset(sp, 0, sizeof *sp);
		if (p->free.n) {
			/* a group whose task ended: the spare finds it there and
			 * resets it (cgroup_create_empty), cheaper than a new one */
			pool_pop_free(p, sp->name, sizeof sp->name);
		} else {
			snprintf(sp->name, sizeof sp->name, "pool-%d-%u", (int)p->self, p->seq++);
		}
		fflush(NULL);
		pid_t agent = p->self, pid = fork();
		if (pid == 0)
			spare_main(p, fds[0], fds[1], sp->name, agent);
		close(fds[0]);
		if (pid < 0) {
			close(fds[1]);
			strvec_push(&p->free, sp->name); /* kept for the next try */
			return;
		}
		sp->pid = pid;
		sp->wfd = fds[1];
		sp->gen = p->gen;
		p->n_spares++;
	}
}

/* The start given to `c` begun (or over): not waited for any longer. */
static void child_begun(struct agent_pool *p, struct agent_spare *c)
{
	if (c->unbegun) {
		c->unbegun = false;
		p->n_unbegun--;
	}
}

/* A child's entry gone: its counts undone, its pipe closed. */
static void child_forget(struct agent_pool *p, struct agent_spare *c)
{
	child_begun(p, c);
	if (c->ended && c->wfd >= 0)
		p->n_back_soon--;
	if (c->wfd >= 0) {
		close(c->wfd);
		p->n_kept--;
	}
	c->ended = false;
	c->wfd = -1;
}

/* `sp` (a copy) among the children, its pipe closed unless `keep`. */
static void pool_child(struct agent_pool *p, const struct agent_spare *sp, bool keep)
{
	struct agent_spare *c = malloc(sizeof *c);

	if (!keep && sp->wfd >= 0)
		close(sp->wfd);
	if (!c) {
		if (keep && sp->wfd >= 0)
			close(sp->wfd);
		return; /* its group is left to the next sweep */
	}
	*c = *sp;
	c->ended = false;
	c->unbegun = false;
	if (!keep)
		c->wfd = -1;
	void *was = NULL;
	if (hashmap_put_int(p->children, c->pid, c, &was) < 0) {
		if (c->wfd >= 0)
			close(c->wfd);
		free(c);
		return;
	}
	if (c->wfd >= 0)
		p->n_kept++;
	if (was) {
		child_forget(p, was);
		free(was);
	}
}

/* Spares over `keep` let go, the newest first: EOF on their pipe; each
 * leaves and removes its group, and the agent removes it too once it
 * reaps the spare, in case it could not. */
static void pool_shrink(struct agent_pool *p, int keep)
{
	while (p->n_spares > keep) {
		struct agent_spare *sp = &p->spares[--p->n_spares];
		pool_child(p, sp, false);
	}
	pool_trim_free(p, p->want);
}

struct agent_spare *agent_pool_take(struct agent_pool *p, json_t *msg)
{
	json_t *task = json_object_get(msg, "task");

	if (json_is_object(task) && (json_is_false(json_object_get(task, "cgroup")) ||
	                             (json_integer_value(json_object_get(task, "memory_mb")) <= 0 &&
	                              json_integer_value(json_object_get(task, "vcores")) <= 0)))
		return NULL;
	agent_pool_detect(p);
	if (!p->on)
		return NULL;
	p->turn_starts++;
	if (p->n_spares == 0)
		return NULL;
	/* the one waiting longest: its folders and group are surely ready
	 * (one just back may still be making them) */
	p->taken = p->spares[0];
	memmove(&p->spares[0], &p->spares[1], (size_t)(p->n_spares - 1) * sizeof p->spares[0]);
	p->n_spares--;
	return &p->taken;
}

int agent_pool_give(struct agent_pool *p, struct agent_spare *sp, json_t *msg, const char *line,
                    size_t len)
{
	char *text = NULL;
	int rc = -1;

	if (!line) {
		/* one line: JSON_COMPACT writes no newline of its own */
		text = json_dumps(msg, JSON_COMPACT);
		line = text;
		len = text ? strlen(text) : 0;
	}
	if (line) {
		/* the line and its newline in one write (writev: no copy) */
		struct iovec iov[2] = {{(void *)line, len}, {(void *)"\n", 1}};
		size_t off = 0, total = len + 1;
		/* blocking (pipe2 without O_NONBLOCK, pool_refill) */
		while (off < total) {
			ssize_t n;
			if (off < len) {
				struct iovec v[2] = {{(char *)iov[0].iov_base + off, len - off},
				                     iov[1]};
				n = writev(sp->wfd, v, 2);
			} else {
				n = write(sp->wfd, "\n", 1);
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		rc = off == total ? 0 : -1;
	}
	free(text);
	/* the pipe stays for the shim to come back after its task */
	pid_t pid = sp->pid;
	pool_child(p, sp, rc == 0 && p->n_kept < POOL_KEPT_MAX);
	sp->wfd = -1;
	struct agent_spare *c = rc == 0 ? hashmap_get_int(p->children, pid) : NULL;
	if (c && !c->unbegun) {
		/* the next spares wait for its program to start (turn_end),
		 * counted from the first start of a run of them given: starts
		 * that keep coming do not hold the spares back for longer */
		c->unbegun = true;
		if (p->n_unbegun++ == 0)
			p->given_at = clock_mono_ms();
	}
	return rc;
}

void agent_pool_task_begun(struct agent_pool *p, pid_t pid)
{
	struct agent_spare *c = hashmap_get_int(p->children, pid);

	if (c)
		child_begun(p, c);
}

bool agent_pool_refill_waits(const struct agent_pool *p, int64_t now)
{
	return p->n_unbegun > 0 && now - p->given_at < AGENT_POOL_REFILL_WAIT_MS;
}

int64_t agent_pool_wake(const struct agent_pool *p)
{
	if (p->n_unbegun > 0 && p->on && p->n_spares + p->n_back_soon < p->want)
		return p->given_at + AGENT_POOL_REFILL_WAIT_MS;
	return INT64_MAX;
}

void agent_pool_task_ended(struct agent_pool *p, pid_t pid)
{
	struct agent_spare *c = hashmap_get_int(p->children, pid);

	if (c)
		child_begun(p, c);
	if (c && c->wfd >= 0 && !c->ended) {
		c->ended = true;
		p->n_back_soon++;
	}
}

bool agent_pool_back(struct agent_pool *p, pid_t pid, bool take)
{
	struct agent_spare *c = hashmap_get_int(p->children, pid);

	if (!c || c->wfd < 0)
		return false;
	/* over the wanted number too: a shim back is one fork fewer for the
	 * next start, and the idle ones over it go after a quiet while */
	if (!take || !p->on || c->gen != p->gen || p->n_spares >= AGENT_POOL_MAX) {
		child_forget(p, c); /* EOF: it leaves, its group with it */
		return false;
	}
	if (c->ended)
		p->n_back_soon--;
	child_begun(p, c);
	p->n_kept--;
	hashmap_remove_int(p->children, pid);
	c->ended = false;
	c->used = true;
	p->spares[p->n_spares++] = *c;
	free(c);
	return true;
}

int agent_pool_want(int want, int turn_starts, int64_t now, int64_t *burst_at)
{
	if (turn_starts > POOL_FLOOR) {
		int burst = turn_starts < AGENT_POOL_MAX ? turn_starts : AGENT_POOL_MAX;
		*burst_at = now;
		return burst > want ? burst : want;
	}
	if (want > POOL_FLOOR && now - *burst_at >= POOL_QUIET_MS)
		return POOL_FLOOR;
	return want < POOL_FLOOR ? POOL_FLOOR : want;
}

void agent_pool_turn_end(struct agent_pool *p, int64_t now)
{
	agent_pool_tick(p);
	p->want = agent_pool_want(p->want, p->turn_starts, now, &p->burst_at);
	if (p->turn_starts)
		p->busy_at = now;
	p->turn_starts = 0;
	/* shims back from their tasks stay while starts keep coming: as many
	 * as ran at once, at most AGENT_POOL_MAX */
	pool_shrink(p, now - p->busy_at >= POOL_QUIET_MS ? p->want : AGENT_POOL_MAX);
	/* the programs of the starts just given first (agent_pool_task_begun) */
	if (!agent_pool_refill_waits(p, now))
		pool_refill(p);
}

void agent_pool_retire(struct agent_pool *p)
{
	int want = p->want;

	p->gen++; /* those running a task go when they come back */
	p->want = 0;
	pool_shrink(p, 0);
	p->want = want;
}

void agent_pool_close_in_child(const struct agent_pool *p)
{
	struct hashmap_iter it;

	for (int i = 0; i < p->n_spares; i++)
		close(p->spares[i].wfd);
	/* a pipe to a shim running a task: its EOF must come when the agent
	 * goes, whichever child lives on */
	hashmap_iter_init(&it, p->children);
	while (hashmap_iter_next(&it)) {
		const struct agent_spare *c = it.value;
		if (c->wfd >= 0)
			close(c->wfd);
	}
}

void agent_pool_remove_group(struct agent_pool *p, const char *name)
{
	strvec_push(&p->stale, name);
}

void agent_pool_remove_task_group(struct agent_pool *p, long long job, int attempt,
                                  const char *role, int index, pid_t shim)
{
	char name[160];

	agent_pool_detect(p);
	if (p->cs.version == CGROUP_NONE)
		return;
	agent_pool_remove_group(
	    p, cgroup_task_name(name, sizeof name, job, attempt, role, index, shim));
}

void agent_pool_spare_failed(struct agent_pool *p, pid_t pid)
{
	struct agent_spare *c = hashmap_get_int(p->children, pid);

	if (!c || c->used)
		return;
	if (++p->failures == 3)
		log_warn("agent: spare shims keep failing; no groups made ahead");
}

void agent_pool_reaped(struct agent_pool *p, pid_t pid)
{
	struct agent_spare *c = hashmap_remove_int(p->children, pid);
	char group[sizeof p->spares[0].name] = "";
	bool spare = c != NULL;

	if (c) {
		child_forget(p, c);
		snprintf(group, sizeof group, "%s", c->name);
		free(c);
	}
	for (int i = 0; i < p->n_spares; i++) {
		struct agent_spare *sp = &p->spares[i];
		if (sp->pid != pid)
			continue;
		spare = true;
		close(sp->wfd);
		if (sp->used) {
			/* back from a task, then gone (killed): its group is as
			 * any task's */
			snprintf(group, sizeof group, "%s", sp->name);
		} else {
			/* a spare that died unused: it could not make or join its
			 * group (AGENT_SPARE_UNPREPARED, its reason in the log) */
			agent_pool_remove_group(p, sp->name);
			log_warn("agent: spare %d died unused", (int)pid);
			if (++p->failures == 3)
				log_warn("agent: spare shims keep failing; no groups made ahead");
		}
		memmove(sp, sp + 1, (size_t)(p->n_spares - i - 1) * sizeof *sp);
		p->n_spares--;
		break;
	}
	/* most often gone already: renamed into its job's place, or removed
	 * by the spare itself */
	if (spare)
		spare_dirs_remove_of(p->jobs, getpid(), pid);
	if (!group[0])
		return;
	/* Its task's processes are gone with the shim (the spare that takes
	 * the group kills any left).  Kept for the next spare, up to the
	 * pool's size, on v1 only (v2's memory.peak cannot be reset), and only
	 * while what the task left charged there (page cache, tmpfs files) is
	 * small: the next task's peak starts from it, and its limit holds it. */
	bool keep = p->on && p->cs.version == CGROUP_V1 && p->free.n < (size_t)p->want;
	if (keep) {
		/* UINT64_MAX when the group is gone (a spare let go removes its own) */
		uint64_t left = cgroup_usage_named(&p->cs, POOL_PARENT, group);
		log_debug("agent: group %s: %llu bytes left by its task", group,
		          (unsigned long long)left);
		keep = left <= POOL_REUSE_MAX;
	}
	if (keep)
		strvec_push(&p->free, group);
	else
		agent_pool_remove_group(p, group);
}

void agent_pool_tick(struct agent_pool *p)
{
	struct strvec left = STRVEC_INIT;

	if (!p->stale.n)
		return;
	for (size_t i = 0; i < p->stale.n; i++)
		if (cgroup_remove_named(&p->cs, POOL_PARENT, p->stale.v[i]) < 0)
			strvec_push(&left, p->stale.v[i]);
	strvec_release(&p->stale);
	p->stale = left;
}

void agent_pool_close(struct agent_pool *p)
{
	struct hashmap_iter it;

	for (int i = 0; i < p->n_spares; i++) {
		int st;
		close(p->spares[i].wfd);
		while (waitpid(p->spares[i].pid, &st, 0) < 0 && errno == EINTR)
			;
		agent_pool_remove_group(p, p->spares[i].name);
		spare_dirs_remove_of(p->jobs, getpid(), p->spares[i].pid);
	}
	p->n_spares = 0;
	/* shims running a task exit after it (EOF), their groups left to the
	 * next agent's sweep */
	hashmap_iter_init(&it, p->children);
	while (hashmap_iter_next(&it))
		child_forget(p, it.value);
	pool_trim_free(p, 0);
	/* a group is busy for a moment after its last process is reaped */
	for (int i = 0; i < 100 && p->stale.n; i++) {
		clock_sleep_ms(10);
		agent_pool_tick(p);
	}
	/* what agents killed while this one ran left (their spares remove
	 * their own; the groups kept for reuse have no process to) */
	if (p->detected && p->cs.version != CGROUP_NONE)
		pool_sweep(p);
}

void agent_pool_release(struct agent_pool *p)
{
	hashmap_destroy_free(p->children, free);
	p->children = NULL;
	free(p->jobs);
	p->jobs = NULL;
	strvec_release(&p->stale);
	strvec_release(&p->free);
}
