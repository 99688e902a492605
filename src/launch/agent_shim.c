/* agent_shim.c: a task's shim (agent_state.h): a start given to a spare of
 * the pool or to a fork of the agent, and what runs in that child: the
 * agent's descriptors closed, the task's log and journal opened, then
 * launch_shim_run; the hooks the pool's spares run their tasks through. */
#include "launch/agent_state.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "launch/cgroup.h"
#include "launch/launch.h"
#include "launch/spare_dirs.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/proc.h"

/* In a new child of the agent: the agent's descriptors closed (there is no
 * exec to close them), its signal mask undone, a session of its own, stdin
 * from /dev/null. */
static void child_detach(struct agent *a)
{
	struct hashmap_iter it;
	sigset_t none;
	int fd;

	close(a->lfd);
	close(a->sfd);
	close(a->notify_r);
	close(a->lock_fd);
	for (int i = 0; i < a->n_conns; i++)
		close(a->conns[i].fd);
	agent_pool_close_in_child(&a->pool);
	hashmap_iter_init(&it, a->tasks);
	while (hashmap_iter_next(&it)) {
		struct agent_task *o = it.value;
		if (o->pidfd >= 0)
			close(o->pidfd);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_IGN); /* the agent's pipe, when the agent is gone */
	setsid();
	prctl(PR_SET_NAME, "weir-shim");
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
}

/* The shim's task: its log as stdout and stderr, its journal, then the
 * launcher's work (launch_shim_run).  `cg`: the group it is in already
 * (the pool), or NULL; `start_ticks`: its start time read ahead, or 0;
 * `sd`: the spare's folders made ahead (spare_dirs.h), or NULL: the job's
 * folder, the work folder and the log are renamed into place from there
 * when they can be, else made here as by a shim forked fresh.  Returns
 * the exit status; *again: the task's end is journalled and nothing of it
 * is left in this process (its log and journal closed, no thread), so that
 * the shim may run another. */
static int shim_task(struct agent *a, const char *key, json_t *msg, struct cgroup *cg,
                     const char *group, uint64_t start_ticks, struct spare_dir *sd, bool *again)
{
	struct launch_shim sh = {0};
	const char *log_path = json_string_value(json_object_get(msg, "log"));
	json_t *task = json_object_get(msg, "task");
	bool to_server = json_is_true(json_object_get(msg, "log_to_server")), ended = false;
	char role[64];
	int fd, jfd, code;

	*again = false;
	if (!to_server && log_path) {
		bool placed =
		    sd && sd->ready &&
		    spare_dir_place(sd, log_path,
		                    json_string_value(json_object_get(task, "workdir"))) == 0;
		/* both in place: the work folder at the task's "workdir" */
		sh.workdir_placed = placed && json_is_string(json_object_get(task, "workdir"));
		char *dir = placed ? NULL : fs_abs_dirname(log_path);
		if (dir)
			fs_mkdir_p(dir, 0755, NULL);
		free(dir);
		fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
	}
	jfd = journal_open(a->dir, key);
	if (jfd < 0 ||
	    journal_key_parse(key, &sh.job, role, sizeof role, &sh.index, &sh.attempt) < 0) {
		log_error("%s: cannot open the task's journal: %s", key, strerror(errno));
		if (jfd >= 0)
			close(jfd);
		return 125;
	}
	sh.role = role;
	sh.key = key;
	sh.task = json_is_object(task) ? task : NULL;
	sh.log_to_server = to_server;
	sh.journal_fd = jfd;
	sh.notify_fd = a->notify_w;
	sh.cg = cg;
	sh.group = group;
	sh.start_ticks = start_ticks;
	sh.end_journalled = &ended;
	sh.pid = a->pool.self;
	sh.secret = json_string_value(json_object_get(msg, "secret"));
	sh.nonce = (long long)json_integer_value(json_object_get(msg, AGENT_KEY_NONCE));
	sh.token = a->token;
	sh.airflow_warm_bin = a->warm_bin;
	sh.airflow_warm_dir = a->warm_dir;
	code = launch_shim_run(&sh);
	close(jfd);
	/* after the task's end is journalled: what is left of the spare's
	 * folder (empty, when its parts went into a job's folder there) */
	if (sd)
		spare_dir_clear(sd->path);
	/* a shim that reported over HTTP, or shipped its log (a thread), ends */
	*again = ended && sh.task && !to_server;
	return code;
}

/* The journal key of a start or kill message (its job, role, index and
 * attempt) into key (JOURNAL_KEY_MAX).  0, or -1 when it has none. */
int agent_msg_key(json_t *msg, char *key)
{
	const char *role = json_string_value(json_object_get(msg, "role"));

	if (!role)
		return -1;
	return journal_key(key, JOURNAL_KEY_MAX,
	                   (long long)json_integer_value(json_object_get(msg, "job")), role,
	                   (int)json_integer_value(json_object_get(msg, "index")),
	                   (int)json_integer_value(json_object_get(msg, "attempt")));
}

/* agent_pool_hooks: a spare is a child of the agent, and runs its task as
 * a shim forked fresh would */
static void spare_detach(void *arg)
{
	child_detach(arg);
}

static int spare_run(void *arg, json_t *msg, struct cgroup *cg, const char *group,
                     uint64_t start_ticks, struct spare_dir *sd, int *code)
{
	char key[JOURNAL_KEY_MAX];
	bool again;

	/* agent_on_start checked the key before it gave the start to the spare */
	if (agent_msg_key(msg, key) < 0)
		return 0;
	*code = shim_task(arg, key, msg, cg, group, start_ticks, sd, &again);
	return again;
}

/* agent_pool_hooks.back: "free PID" on the shims' pipe, after the lines
 * of its task (the agent reads them first).  The pipe is non-blocking: a
 * full one is waited for a while; an agent gone (EPIPE) or silent: -1,
 * and the shim exits instead, which the agent sees as well. */
static int spare_back(void *arg)
{
	struct agent *a = arg;
	char line[32];
	int n = snprintf(line, sizeof line, "free %d\n", (int)a->pool.self);

	for (int i = 0; i < 100; i++) {
		if (write(a->notify_w, line, (size_t)n) == n)
			return 0;
		if (errno != EAGAIN && errno != EINTR)
			return -1;
		struct pollfd q = {a->notify_w, POLLOUT, 0};
		poll(&q, 1, 10);
	}
	return -1;
}

/* The task's shim: a spare of the pool when one fits (and `pool`), else a
 * fork.  `line` (`len` bytes): the start as the server wrote it, which a
 * spare is given as it is (the agent changes nothing in a start), or NULL.
 * Its pid, or -1 (errno). */
pid_t agent_task_spawn(struct agent *a, const char *key, json_t *msg, const char *line, size_t len,
                       bool pool)
{
	struct agent_spare *sp = pool ? agent_pool_take(&a->pool, msg) : NULL;

	if (sp && agent_pool_give(&a->pool, sp, msg, line, len) == 0)
		return sp->pid;
	/* none, or the spare is gone (its group goes when it is reaped) */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		bool again;
		a->pool.self = getpid();
		child_detach(a);
		_exit(shim_task(a, key, msg, NULL, NULL, 0, NULL, &again));
	}
	return pid;
}

/* `pid` runs task `t`: the server hears so. */
void agent_task_spawned(struct agent *a, struct agent_task *t, pid_t pid)
{
	t->pid = pid;
	agent_task_set_state(t, AGENT_TASK_RUNNING);
	hashmap_put_int(a->pids, pid, t, NULL);
	json_t *m = agent_task_key_json(t);
	json_object_set_new(m, AGENT_KEY_KIND, json_string(AGENT_MSG_SPAWNED));
	json_object_set_new(m, "pid", json_integer(pid));
	agent_send_lazy(a, m);
}

/* A start for the key of task t: true when it is not t's (another nonce:
 * t is of a job a power cut made the server lose, and this start's job has
 * its id now), and was taken so: t killed, never heard of again, and the
 * start run once t is gone (agent_stale_end).  False: a start of t's own,
 * sent again. */
static bool start_supersedes(struct agent *a, struct agent_task *t, json_t *msg)
{
	long long nonce = (long long)json_integer_value(json_object_get(msg, AGENT_KEY_NONCE));

	if (t->stale) {
		/* the newest start waits for the stale task's end */
		if ((long long)json_integer_value(json_object_get(t->next, AGENT_KEY_NONCE)) !=
		    nonce) {
			json_decref(t->next);
			t->next = json_incref(msg);
		}
		return true;
	}
	/* 0: a server that sends none (older), whose starts are t's own */
	if (!nonce || nonce == t->nonce)
		return false;
	log_warn("agent: %s: a start of nonce %lld while it holds a task of nonce %lld, of a job "
	         "the server no longer knows (a power cut lost it; its id is another job's now): "
	         "that task is killed, and the start runs once it is gone",
	         t->key, nonce, t->nonce);
	t->stale = true;
	t->next = json_incref(msg);
	json_decref(t->start); /* never given again */
	t->start = NULL;
	if (!agent_task_state_alive(t->state)) {
		agent_stale_end(a, t);
		return true;
	}
	if (t->state != AGENT_TASK_ACKED)
		agent_task_set_state(t, AGENT_TASK_STOPPING);
	proc_kill_session(t->pid);
	kill(t->pid, SIGKILL);
	return true;
}

void agent_on_start(struct agent *a, json_t *msg, const char *line, size_t len)
{
	char key[JOURNAL_KEY_MAX];
	struct agent_task *t;
	pid_t pid;

	if (agent_msg_key(msg, key) < 0) {
		log_warn("agent: a start without a valid key");
		return;
	}
	t = hashmap_get_str(a->tasks, key);
	if (t && start_supersedes(a, t, msg))
		return;
	if (t) {
		/* a start sent again after a reconnect: it runs (or ran) once */
		json_t *m = agent_task_key_json(t);
		json_object_set_new(m, AGENT_KEY_KIND, json_string(AGENT_MSG_SPAWNED));
		json_object_set_new(m, "pid", json_integer(t->pid));
		agent_send(a, m);
		return;
	}
	t = agent_task_new(a, key);
	if (!t) {
		log_error("agent: %s: out of memory", key);
		return;
	}
	pid = agent_task_spawn(a, key, msg, line, len, true);
	if (pid < 0) {
		char why[160];
		snprintf(why, sizeof why, "cannot fork the task's shim: %s", strerror(errno));
		json_t *m = agent_task_key_json(t);
		json_object_set_new(m, AGENT_KEY_KIND, json_string(AGENT_MSG_LOST));
		json_object_set_new(m, "why", json_string(why));
		agent_send(a, m);
		agent_task_drop(a, t);
		return;
	}
	t->start = json_incref(msg);
	t->nonce = (long long)json_integer_value(json_object_get(msg, AGENT_KEY_NONCE));
	agent_task_spawned(a, t, pid);
}

void agent_spare_hooks(struct agent *a, struct agent_pool_hooks *hooks)
{
	*hooks = (struct agent_pool_hooks){spare_detach, spare_run, spare_back, a};
}
