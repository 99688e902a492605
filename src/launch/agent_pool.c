/* agent_pool.c: spare shims in groups made ahead, their number following
 * demand, and the removal of their groups (agent_pool.h). */
#include "launch/agent_pool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/error.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/strbuf.h"

#define POOL_PARENT "weir"
#define POOL_FLOOR 2
#define POOL_QUIET_MS 30000
/* a group that holds more once its task ended is removed, not reused */
#define POOL_REUSE_MAX (1024 * 1024)

int agent_pool_init(struct agent_pool *p, const struct agent_pool_hooks *hooks,
                    const char *jobs)
{
	memset(p, 0, sizeof *p);
	p->want = POOL_FLOOR;
	p->hooks = *hooks;
	p->groups = hashmap_create(HASHMAP_KEY_INT);
	if (jobs && !(p->jobs = strdup(jobs)))
		return -1;
	return p->groups ? 0 : -1;
}

/* The pool's groups of agents that are gone (killed with -9), emptied by
 * now: removed (a group still holding a shim refuses). */
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
		    kill(pid, 0) < 0 && errno == ESRCH)
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

/* In the spare: its task's folders made (spare_dirs.h: their inodes
 * charged to the agent's group, not the task's), its group made and
 * joined, then the start awaited; EOF (the agent let it go, or is gone):
 * out of the group, which goes too, and so does the folder. */
static _Noreturn void spare_main(struct agent_pool *p, int rfd, int wfd, const char *name,
                                 pid_t agent)
{
	struct weir_error err = {0};
	struct strbuf in = STRBUF_INIT;
	struct spare_dir sd;
	struct cgroup *cg;
	struct proc_stat ps;
	char buf[65536];
	ssize_t n;

	p->hooks.detach(p->hooks.arg);
	close(wfd);
	if (p->jobs && spare_dir_make(&sd, p->jobs, agent, getpid()) < 0)
		log_debug("agent: spare %d: no folders made ahead: %s", (int)getpid(),
		          strerror(errno));
	else if (!p->jobs)
		memset(&sd, 0, sizeof sd);
	cg = cgroup_create_empty(&p->cs, POOL_PARENT, name, &err);
	if (!cg || cgroup_join_self(cg) < 0) {
		spare_dir_clear(sd.path);
		_exit(3);
	}
	/* what the journal's first line needs, while no task waits */
	uint64_t start_ticks = proc_read_stat((int)getpid(), &ps) == 0 ? ps.start_ticks : 0;
	while ((n = read(rfd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			strbuf_add(&in, buf, (size_t)n);
	close(rfd);
	json_t *msg = in.len ? json_loadb(in.buf, in.len, 0, NULL) : NULL;
	strbuf_release(&in);
	if (!msg) {
		spare_dir_clear(sd.path);
		if (cgroup_move_self_to(&p->cs, POOL_PARENT) == 0)
			cgroup_remove_named(&p->cs, POOL_PARENT, name);
		_exit(0);
	}
	p->hooks.run(p->hooks.arg, msg, cg, name, start_ticks, &sd);
	_exit(125);
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
	while (p->on && p->n_spares < p->want && p->failures < 3) {
		struct agent_spare *sp = &p->spares[p->n_spares];
		int fds[2];
		if (pipe2(fds, O_CLOEXEC) < 0)
			return;
		if (p->free.n) {
			/* a group whose task ended: the spare finds it there and
			 * resets it (cgroup_create_empty), cheaper than a new one */
			pool_pop_free(p, sp->name, sizeof sp->name);
		} else {
			snprintf(sp->name, sizeof sp->name, "pool-%d-%u", (int)getpid(), p->seq++);
		}
		fflush(NULL);
		pid_t agent = getpid(), pid = fork();
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
		p->n_spares++;
	}
}

/* Spares over the wanted number let go: EOF on their pipe; each leaves and
 * removes its group, and the agent removes it too once it reaps the spare,
 * in case it could not. */
static void pool_shrink(struct agent_pool *p)
{
	while (p->n_spares > p->want) {
		struct agent_spare *sp = &p->spares[--p->n_spares];
		close(sp->wfd);
		hashmap_put_int(p->groups, sp->pid, strdup(sp->name), NULL);
	}
	pool_trim_free(p, p->want);
}

struct agent_spare *agent_pool_take(struct agent_pool *p, json_t *msg)
{
	json_t *task = json_object_get(msg, "task");

	if (json_is_object(task) &&
	    (json_is_false(json_object_get(task, "cgroup")) ||
	     (json_integer_value(json_object_get(task, "memory_mb")) <= 0 &&
	      json_integer_value(json_object_get(task, "vcores")) <= 0)))
		return NULL;
	agent_pool_detect(p);
	if (!p->on)
		return NULL;
	p->turn_starts++;
	if (p->n_spares == 0)
		return NULL;
	return &p->spares[--p->n_spares];
}

int agent_pool_give(struct agent_pool *p, struct agent_spare *sp, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	int rc = -1;

	if (text) {
		size_t len = strlen(text), off = 0;
		fcntl(sp->wfd, F_SETFL, fcntl(sp->wfd, F_GETFL) & ~O_NONBLOCK);
		while (off < len) {
			ssize_t n = write(sp->wfd, text + off, len - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		rc = off == len ? 0 : -1;
	}
	free(text);
	close(sp->wfd);
	sp->wfd = -1;
	hashmap_put_int(p->groups, sp->pid, strdup(sp->name), NULL);
	return rc;
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
	p->turn_starts = 0;
	pool_shrink(p);
	pool_refill(p);
}

void agent_pool_retire(struct agent_pool *p)
{
	int want = p->want;

	p->want = 0;
	pool_shrink(p);
	p->want = want;
}

void agent_pool_close_in_child(const struct agent_pool *p)
{
	for (int i = 0; i < p->n_spares; i++)
		close(p->spares[i].wfd);
}

void agent_pool_remove_group(struct agent_pool *p, const char *name)
{
	strvec_push(&p->stale, name);
}

void agent_pool_reaped(struct agent_pool *p, pid_t pid)
{
	char *group = hashmap_remove_int(p->groups, pid);
	bool spare = group != NULL;

	for (int i = 0; i < p->n_spares; i++) {
		if (p->spares[i].pid != pid)
			continue;
		spare = true;
		/* a spare that died unused: it could not make or join its group */
		close(p->spares[i].wfd);
		agent_pool_remove_group(p, p->spares[i].name);
		p->spares[i] = p->spares[--p->n_spares];
		if (++p->failures == 3)
			log_warn("agent: spare shims keep failing; no groups made ahead");
		break;
	}
	/* most often gone already: renamed into its job's place, or removed
	 * by the spare itself */
	if (spare)
		spare_dirs_remove_of(p->jobs, getpid(), pid);
	if (!group)
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
	free(group);
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
	for (int i = 0; i < p->n_spares; i++) {
		int st;
		close(p->spares[i].wfd);
		while (waitpid(p->spares[i].pid, &st, 0) < 0 && errno == EINTR)
			;
		agent_pool_remove_group(p, p->spares[i].name);
		spare_dirs_remove_of(p->jobs, getpid(), p->spares[i].pid);
	}
	p->n_spares = 0;
	pool_trim_free(p, 0);
	/* a group is busy for a moment after its last process is reaped */
	for (int i = 0; i < 100 && p->stale.n; i++) {
		clock_sleep_ms(10);
		agent_pool_tick(p);
	}
}

void agent_pool_release(struct agent_pool *p)
{
	hashmap_destroy_free(p->groups, free);
	p->groups = NULL;
	free(p->jobs);
	p->jobs = NULL;
	strvec_release(&p->stale);
	strvec_release(&p->free);
}
