/* agent.c: the node's agent (agent.h): one poll() loop over its socket,
 * its connections, the shims' pipe, a signalfd for SIGCHLD and a pidfd per
 * shim it adopted after a restart; a task table keyed by journal key; the
 * spare shims of agent_pool.c. */
#include "launch/agent.h"
#include "launch/agent_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>
#include <jansson.h>

#include "exec/cgroup.h"
#include "launch/journal.h"
#include "launch/launch.h"
#include "launch/supervise.h"
#include "lib/clock.h"
#include "lib/error.h"
#include "lib/fs.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/strbuf.h"
#include "lib/usock.h"

#define MAX_CONNS 16
/* How long a "started" waits for its task's "exited" (docs/internals/launch.md) */
#define STARTED_HOLD_MS 10
#define LINE_MAX_BYTES (16 * 1024 * 1024)
/* How many times a start is given again to a new shim when the one given
 * it died before its journal's first line (its program never started) */
#define TASK_RESTARTS_MAX 2

extern char **environ;

struct agent_task {
	char key[JOURNAL_KEY_MAX];
	long long job;
	char role[64];
	int index, attempt;
	pid_t pid;           /* the shim */
	int pidfd;           /* an adopted shim (not our child): readable at its end; -1 */
	bool alive;
	bool started_sent;   /* "started" went to the current server */
	int64_t hold_until;  /* monotonic: "started" held until then, for its "exited"
	                        to go in the same write; INT64_MAX: none held */
	int started_pid, started_port; /* the held "started"'s */
	json_t *result;      /* "exited" or "lost", kept until acknowledged */
	bool acked;          /* the server has the result (the journal is gone) */
	char *group;         /* an adopted shim's pool group, removed at its end; NULL */
	int64_t kill_at;     /* monotonic: SIGKILL to the shim's session; INT64_MAX: none */
	json_t *start;       /* the start, until the journal's first line is read: given
	                        again if the shim dies before it (task_restart); NULL */
	int restarts;        /* how many times it was */
	bool stopping;       /* a signal was sent to it: never started again */
};

struct conn {
	int fd;
	struct strbuf in, out;
};

struct agent {
	char *home, *dir;   /* dir: the journals' (journal_dir_for) */
	bool dir_in_memory; /* dir is ours alone in memory: removed when empty at the end */
	int lfd, sfd, notify_r, notify_w, lock_fd;
	struct conn conns[MAX_CONNS];
	int n_conns;
	int server; /* the index in conns of the server's connection; -1: none */
	struct hashmap *tasks; /* key -> struct agent_task */
	struct hashmap *pids;  /* shim pid -> struct agent_task (our children) */
	int idle_s;
	int64_t idle_since; /* monotonic; 0: not idle */
	int kill_grace_s;
	char **env; /* the server's environment for shims (owned) */
	bool quit;
	struct agent_pool pool; /* groups made ahead (agent_pool.h) */
};

static json_t *task_key_json(const struct agent_task *t)
{
	return json_pack("{s:I,s:s,s:i,s:i}", "job", (json_int_t)t->job, "role", t->role, "index",
	                 t->index, "attempt", t->attempt);
}

/* ---- connections ---- */

static void conn_send(struct conn *c, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);

	if (text) {
		strbuf_addstr(&c->out, text);
		strbuf_addch(&c->out, '\n');
	}
	free(text);
}

/* To the server, when one is connected; what is not sent is kept in the
 * task table and sent again at the next hello. */
static void send_server(struct agent *a, json_t *msg)
{
	if (a->server >= 0)
		conn_send(&a->conns[a->server], msg);
	json_decref(msg);
}

static void conn_close(struct agent *a, int i)
{
	close(a->conns[i].fd);
	strbuf_release(&a->conns[i].in);
	strbuf_release(&a->conns[i].out);
	if (a->server == i)
		a->server = -1;
	a->n_conns--;
	if (i != a->n_conns) {
		a->conns[i] = a->conns[a->n_conns];
		if (a->server == a->n_conns)
			a->server = i;
	}
	memset(&a->conns[a->n_conns], 0, sizeof a->conns[0]);
}

/* Writes what each connection has waiting, without blocking. */
static void flush_conns(struct agent *a)
{
	for (int i = 0; i < a->n_conns; i++) {
		struct conn *c = &a->conns[i];
		while (c->out.len > 0) {
			ssize_t n = send(c->fd, c->out.buf, c->out.len, MSG_NOSIGNAL);
			if (n > 0) {
				strbuf_remove(&c->out, 0, (size_t)n);
				continue;
			}
			break; /* EAGAIN: POLLOUT; an error: the read side sees it */
		}
	}
}

/* ---- tasks ---- */

static struct agent_task *task_new(struct agent *a, const char *key)
{
	struct agent_task *t = calloc(1, sizeof *t);

	if (!t || journal_key_parse(key, &t->job, t->role, sizeof t->role, &t->index,
	                            &t->attempt) < 0) {
		free(t);
		return NULL;
	}
	snprintf(t->key, sizeof t->key, "%s", key);
	t->pidfd = -1;
	t->kill_at = INT64_MAX;
	t->hold_until = INT64_MAX;
	if (hashmap_put_str(a->tasks, key, t, NULL) < 0) {
		free(t);
		return NULL;
	}
	return t;
}

/* a task's own parts (hashmap_destroy_free's too) */
static void task_free(void *value)
{
	struct agent_task *t = value;

	if (!t)
		return;
	if (t->pidfd >= 0)
		close(t->pidfd);
	json_decref(t->result);
	json_decref(t->start);
	free(t->group);
	free(t);
}

static void task_drop(struct agent *a, struct agent_task *t)
{
	hashmap_remove_str(a->tasks, t->key);
	if (hashmap_get_int(a->pids, t->pid) == t)
		hashmap_remove_int(a->pids, t->pid);
	task_free(t);
}

static size_t live_tasks(struct agent *a)
{
	struct hashmap_iter it;
	size_t n = 0;

	hashmap_iter_init(&it, a->tasks);
	while (hashmap_iter_next(&it))
		n += ((struct agent_task *)it.value)->alive;
	return n;
}

/* "started" to the server now (the one held, if any). */
static void started_send_now(struct agent *a, struct agent_task *t, int pid, int port)
{
	json_t *m;

	t->hold_until = INT64_MAX;
	if (t->started_sent || a->server < 0)
		return;
	m = task_key_json(t);
	json_object_set_new(m, "t", json_string("started"));
	json_object_set_new(m, "pid", json_integer(pid));
	json_object_set_new(m, "port", json_integer(port));
	json_object_set_new(m, "launcher_pid", json_integer(t->pid));
	send_server(a, m);
	t->started_sent = true;
}

/* The held "started" goes before anything else of its task. */
static void started_flush(struct agent *a, struct agent_task *t)
{
	if (t->hold_until != INT64_MAX)
		started_send_now(a, t, t->started_pid, t->started_port);
}

/* The journal's "started" for the server.  Held up to STARTED_HOLD_MS when
 * `hold` and the task has not ended: a short task's "exited" then goes in
 * the same write, and the server takes one read's reports in one store
 * transaction (one commit a task instead of two).  Nothing is lost by
 * the wait: it is in the journal, which a restarted agent reads again. */
static void send_started(struct agent *a, struct agent_task *t, const struct journal_state *st,
                         bool hold)
{
	if (t->started_sent || !st->started || a->server < 0)
		return;
	if (hold && !st->exited && t->alive) {
		if (t->hold_until == INT64_MAX) {
			t->hold_until = clock_mono_ms() + STARTED_HOLD_MS;
			t->started_pid = st->pid;
			t->started_port = st->port;
		}
		return;
	}
	started_send_now(a, t, st->pid, st->port);
}

static void send_result(struct agent *a, struct agent_task *t)
{
	if (t->result)
		send_server(a, json_incref(t->result));
}

/* What the journal says now: "started" forwarded once, the result taken
 * when there is one (a shim that reported over HTTP itself needs nothing
 * more: the task is forgotten once its shim is gone).  False when the task
 * was forgotten (t is freed then). */
static bool task_take_state(struct agent *a, struct agent_task *t, struct journal_state *st_in);

static bool task_read_journal(struct agent *a, struct agent_task *t)
{
	struct journal_state st;

	/* the result is the journal's last word: nothing more to read (a short
	 * task's "started" and "exited" notes and its reaping come together) */
	if (t->result)
		return true;
	if (journal_read(a->dir, t->key, &st) < 0)
		return true;
	return task_take_state(a, t, &st);
}

/* A shim's note "KEY RECORD": the record it journalled, taken as read from
 * the journal (its lines before it are known already: a "started" with a
 * "started" held or sent); the journal is read instead when the note is
 * not enough (an end whose "started" was not seen, or no record). */
static void task_note(struct agent *a, struct agent_task *t, const char *record)
{
	struct journal_state st;

	if (t->result)
		return;
	memset(&st, 0, sizeof st);
	journal_state_add(&st, record);
	if (st.started && t->start) {
		json_decref(t->start); /* begun (its "shim" line is before) */
		t->start = NULL;
	}
	bool seen_started = t->started_sent || t->hold_until != INT64_MAX;
	if (st.exited ? (!seen_started || t->start) : !st.started) {
		/* a program that never started ends too (launch failed): the
		 * journal tells that, and any line the notes missed */
		journal_state_release(&st);
		task_read_journal(a, t);
		return;
	}
	if (st.exited) {
		/* its "started" first, with the same pid and port */
		st.started = true;
		st.pid = t->started_pid;
		st.port = t->started_port;
	}
	task_take_state(a, t, &st);
}

/* What the journal says (st, consumed) taken.  False when the task was
 * forgotten (t is freed then). */
static bool task_take_state(struct agent *a, struct agent_task *t, struct journal_state *st_in)
{
	struct journal_state st = *st_in;

	if (st.shim_pid && t->start) {
		/* begun: never given again */
		json_decref(t->start);
		t->start = NULL;
	}
	send_started(a, t, &st, true);
	if (st.exited && !t->result && !st.reported) {
		json_t *r = st.exited;
		json_object_set_new(r, "t", json_string("exited"));
		t->result = json_incref(r);
		send_result(a, t);
		/* its shim comes back to the pool, most often: no fork for it */
		if (t->alive && t->pidfd < 0)
			agent_pool_task_ended(&a->pool, t->pid);
	} else if (st.exited && st.reported && !t->alive) {
		/* nothing to deliver: the server only forgets it */
		json_t *m = task_key_json(t);
		json_object_set_new(m, "t", json_string("done"));
		send_server(a, m);
		journal_remove(a->dir, t->key);
		journal_state_release(&st);
		task_drop(a, t);
		return false;
	}
	journal_state_release(&st);
	return true;
}

static bool task_restart(struct agent *a, struct agent_task *t, int wstatus);

/* The shim is gone: its result is in the journal, or it died without one
 * (kill -9): then the task is lost, and the server hears so. */
static void task_gone(struct agent *a, struct agent_task *t, int wstatus)
{
	char how[64];

	if (t->group) {
		proc_kill_session(t->pid); /* the group empty before it goes */
		agent_pool_remove_group(&a->pool, t->group);
		free(t->group);
		t->group = NULL;
	}
	t->alive = false;
	if (hashmap_get_int(a->pids, t->pid) == t)
		hashmap_remove_int(a->pids, t->pid);
	if (t->pidfd >= 0) {
		close(t->pidfd);
		t->pidfd = -1;
	}
	if (t->acked) {
		/* its result was delivered before the shim was reaped */
		task_drop(a, t);
		return;
	}
	if (!task_read_journal(a, t) || t->result)
		return;
	started_flush(a, t);
	if (task_restart(a, t, wstatus))
		return;
	if (wstatus < 0)
		snprintf(how, sizeof how, "ended");
	else if (WIFSIGNALED(wstatus))
		snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(wstatus));
	else
		snprintf(how, sizeof how, "exited %d", WEXITSTATUS(wstatus));
	/* nothing of a task whose shim died may run on */
	proc_kill_session(t->pid);
	json_t *m = task_key_json(t);
	json_object_set_new(m, "t", json_string("lost"));
	json_object_set_new(m, "pid", json_integer(t->pid));
	char why[160];
	if (t->restarts)
		snprintf(why, sizeof why,
		         "launcher (shim %d) %s without reporting; its task never began on %d shims",
		         (int)t->pid, how, t->restarts + 1);
	else
		snprintf(why, sizeof why, "launcher (shim %d) %s without reporting", (int)t->pid,
		         how);
	json_object_set_new(m, "why", json_string(why));
	if (wstatus >= 0 && WIFSIGNALED(wstatus))
		json_object_set_new(m, "signal", json_integer(WTERMSIG(wstatus)));
	else if (wstatus >= 0)
		json_object_set_new(m, "exit_status", json_integer(WEXITSTATUS(wstatus)));
	t->result = m;
	send_result(a, t);
}

/* A shim found in a journal at start: followed while its process lives
 * (the same pid and start time), else gone. */
static void adopt(struct agent *a, const char *key)
{
	struct journal_state st;
	struct proc_stat ps;
	struct agent_task *t;

	if (journal_read(a->dir, key, &st) < 0)
		return;
	if (st.exited && st.reported) {
		journal_remove(a->dir, key);
		journal_state_release(&st);
		return;
	}
	t = task_new(a, key);
	if (!t) {
		journal_state_release(&st);
		return;
	}
	t->pid = st.shim_pid;
	if (st.shim_pid > 0 && proc_read_stat(st.shim_pid, &ps) == 0 && ps.state != 'Z' &&
	    ps.start_ticks == st.shim_start) {
		t->pidfd = (int)syscall(SYS_pidfd_open, st.shim_pid, 0);
		t->alive = t->pidfd >= 0;
	}
	if (st.group[0]) {
		/* its pool group goes when it ends (now, if it has) */
		agent_pool_detect(&a->pool);
		t->group = strdup(st.group);
	}
	journal_state_release(&st);
	if (!t->alive)
		task_gone(a, t, -1);
	else
		log_info("agent: following task %s (shim %d) again", key, (int)t->pid);
}

static void adopt_all(struct agent *a)
{
	DIR *d = opendir(a->dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char key[JOURNAL_KEY_MAX];
		if (n <= 8 || strcmp(de->d_name + n - 8, ".journal") || n - 8 >= sizeof key)
			continue;
		snprintf(key, sizeof key, "%.*s", (int)(n - 8), de->d_name);
		adopt(a, key);
	}
	closedir(d);
}

/* ---- the shim ---- */

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
		bool placed = sd && sd->ready &&
		              spare_dir_place(sd, log_path,
		                              json_string_value(json_object_get(task, "workdir"))) == 0;
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
	if (jfd < 0 || journal_key_parse(key, &sh.job, role, sizeof role, &sh.index,
	                                 &sh.attempt) < 0) {
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
static int msg_key(json_t *msg, char *key)
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

	/* on_start checked the key before it gave the start to the spare */
	if (msg_key(msg, key) < 0)
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
	int n = snprintf(line, sizeof line, "free %d\n", (int)getpid());

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
static pid_t task_spawn(struct agent *a, const char *key, json_t *msg, const char *line,
                        size_t len, bool pool)
{
	struct agent_spare *sp = pool ? agent_pool_take(&a->pool, msg) : NULL;

	if (sp && agent_pool_give(&a->pool, sp, msg, line, len) == 0)
		return sp->pid;
	/* none, or the spare is gone (its group goes when it is reaped) */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		bool again;
		child_detach(a);
		_exit(shim_task(a, key, msg, NULL, NULL, 0, NULL, &again));
	}
	return pid;
}

/* `pid` runs task `t`: the server hears so. */
static void task_spawned(struct agent *a, struct agent_task *t, pid_t pid)
{
	t->pid = pid;
	t->alive = true;
	hashmap_put_int(a->pids, pid, t, NULL);
	json_t *m = task_key_json(t);
	json_object_set_new(m, "t", json_string("spawned"));
	json_object_set_new(m, "pid", json_integer(pid));
	send_server(a, m);
}

static void on_start(struct agent *a, json_t *msg, const char *line, size_t len)
{
	char key[JOURNAL_KEY_MAX];
	struct agent_task *t;
	pid_t pid;

	if (msg_key(msg, key) < 0) {
		log_warn("agent: a start without a valid key");
		return;
	}
	t = hashmap_get_str(a->tasks, key);
	if (t) {
		/* a start sent again after a reconnect: it runs (or ran) once */
		json_t *m = task_key_json(t);
		json_object_set_new(m, "t", json_string("spawned"));
		json_object_set_new(m, "pid", json_integer(t->pid));
		send_server(a, m);
		return;
	}
	t = task_new(a, key);
	if (!t) {
		log_error("agent: %s: out of memory", key);
		return;
	}
	pid = task_spawn(a, key, msg, line, len, true);
	if (pid < 0) {
		char why[160];
		snprintf(why, sizeof why, "cannot fork the task's shim: %s", strerror(errno));
		json_t *m = task_key_json(t);
		json_object_set_new(m, "t", json_string("lost"));
		json_object_set_new(m, "why", json_string(why));
		send_server(a, m);
		task_drop(a, t);
		return;
	}
	t->start = json_incref(msg);
	task_spawned(a, t, pid);
}

/* A shim died before its task's journal had its first line (the "shim"
 * record, written before anything of the task runs: launch_shim_run), so
 * its program never started: most often a spare that could not prepare,
 * the start written to it as it died.  The start is given to a shim
 * forked fresh, up to TASK_RESTARTS_MAX times, never for a task sent a signal.
 * True when it was (a new shim runs it). */
static bool task_restart(struct agent *a, struct agent_task *t, int wstatus)
{
	if (!t->start || t->stopping || t->started_sent || wstatus < 0 ||
	    journal_is_blank(a->dir, t->key) != 1)
		return false;
	bool unprepared = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == AGENT_SPARE_UNPREPARED;
	if (unprepared)
		agent_pool_spare_failed(&a->pool, t->pid);
	if (t->restarts >= TASK_RESTARTS_MAX)
		return false;
	log_warn("agent: %s: shim %d %s %d before its task began; given to a new shim", t->key,
	         (int)t->pid, WIFSIGNALED(wstatus) ? "killed by signal" : "exited",
	         WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus));
	proc_kill_session(t->pid); /* nothing of it may linger */
	/* a fresh fork, whose program joins its group at its start: the
	 * pool's spares may be failing alike */
	pid_t pid = task_spawn(a, t->key, t->start, NULL, 0, false);
	if (pid < 0)
		return false;
	t->restarts++;
	task_spawned(a, t, pid);
	return true;
}

static struct agent_task *task_of_msg(struct agent *a, json_t *msg)
{
	char key[JOURNAL_KEY_MAX];

	if (msg_key(msg, key) < 0)
		return NULL;
	return hashmap_get_str(a->tasks, key);
}

/* A stop goes to the shim (it forwards it to the program's group); after
 * SIGTERM, the kill grace plus 2 s, then SIGKILL to all of its session. */
static void on_kill(struct agent *a, json_t *msg)
{
	struct agent_task *t = task_of_msg(a, msg);
	int sig = (int)json_integer_value(json_object_get(msg, "sig"));

	if (!t || !t->alive || sig <= 0)
		return;
	t->stopping = true;
	kill(t->pid, sig);
	if (sig == SIGTERM && t->kill_at == INT64_MAX)
		t->kill_at = clock_mono_ms() + (int64_t)(a->kill_grace_s + 2) * 1000;
}

static void on_ack(struct agent *a, json_t *msg)
{
	json_t *keys = json_object_get(msg, "keys");
	size_t i;
	json_t *k;

	json_array_foreach(keys, i, k) {
		struct agent_task *t = hashmap_get_str(a->tasks, json_string_value(k) ? json_string_value(k) : "");
		if (!t || !t->result)
			continue;
		journal_remove(a->dir, t->key);
		json_decref(t->result);
		t->result = NULL;
		t->acked = true;
		if (!t->alive)
			task_drop(a, t);
	}
}

static json_t *held_json(struct agent *a)
{
	json_t *list = json_array();
	struct hashmap_iter it;

	hashmap_iter_init(&it, a->tasks);
	while (hashmap_iter_next(&it)) {
		struct agent_task *t = it.value;
		struct journal_state st;
		json_t *e = task_key_json(t);
		bool read = journal_read(a->dir, t->key, &st) == 0;
		const char *state = t->alive ? (read && st.started ? "running" : "starting")
		                             : (t->result && !strcmp(json_string_value(json_object_get(
		                                                         t->result, "t")),
		                                                     "lost")
		                                    ? "lost"
		                                    : "ended");
		json_object_set_new(e, "key", json_string(t->key));
		json_object_set_new(e, "shim_pid", json_integer(t->pid));
		json_object_set_new(e, "pid", json_integer(read ? st.pid : 0));
		json_object_set_new(e, "state", json_string(state));
		json_object_set_new(e, "adopted", json_boolean(t->pidfd >= 0));
		if (read)
			journal_state_release(&st);
		json_array_append_new(list, e);
	}
	return list;
}

static long self_rss_kb(void)
{
	struct proc_stat ps;
	return proc_read_stat((int)getpid(), &ps) == 0 ? (long)(ps.rss_bytes / 1024) : -1;
}

/* The server's environment becomes the shims': what `weir launch` got
 * from the local executor (executor_launcher_env), WEIR_SERVER and
 * WEIR_TOKEN included. */
static void take_env(struct agent *a, json_t *env)
{
	size_t n = json_array_size(env), k = 0;
	char **e;

	if (!json_is_array(env))
		return;
	e = calloc(n + 1, sizeof *e);
	if (!e)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(env, i));
		if (s && strchr(s, '=') && (e[k] = strdup(s)))
			k++;
	}
	environ = e;
	if (a->env) {
		for (size_t i = 0; a->env[i]; i++)
			free(a->env[i]);
		free(a->env);
	}
	a->env = e;
}

static void on_hello(struct agent *a, int ci, json_t *msg)
{
	struct hashmap_iter it;
	json_t *g = json_object_get(msg, "kill_grace_s");

	/* a previous server's connection, if still open, closes by itself */
	a->server = ci;
	take_env(a, json_object_get(msg, "env"));
	/* spares were forked with the previous server's environment (its URL,
	 * its token): new ones are made after this turn */
	agent_pool_retire(&a->pool);
	if (json_is_integer(g))
		a->kill_grace_s = (int)json_integer_value(g);
	send_server(a, json_pack("{s:s,s:i,s:o}", "t", "held", "agent_pid", (int)getpid(), "tasks",
	                         held_json(a)));
	/* what the previous server may not have had: everything again (the
	 * server ignores what it knows) */
	hashmap_iter_init(&it, a->tasks);
	while (hashmap_iter_next(&it)) {
		struct agent_task *t = it.value;
		t->started_sent = false;
		if (t->result) {
			send_result(a, t);
		} else {
			struct journal_state st;
			t->hold_until = INT64_MAX;
			if (journal_read(a->dir, t->key, &st) == 0) {
				send_started(a, t, &st, false);
				journal_state_release(&st);
			}
		}
	}
}

/* One message; `line` (`len` bytes) is its text as received. */
static void on_message(struct agent *a, int ci, json_t *msg, const char *line, size_t len)
{
	const char *t = json_string_value(json_object_get(msg, "t"));

	if (!t)
		return;
	if (!strcmp(t, "hello")) {
		on_hello(a, ci, msg);
	} else if (!strcmp(t, "start")) {
		on_start(a, msg, line, len);
	} else if (!strcmp(t, "kill")) {
		on_kill(a, msg);
	} else if (!strcmp(t, "ack")) {
		on_ack(a, msg);
	} else if (!strcmp(t, "bye")) {
		if (a->server == ci)
			a->server = -1;
		if (live_tasks(a) == 0)
			a->quit = true;
	} else if (!strcmp(t, "status")) {
		json_t *m = json_pack("{s:s,s:i,s:I,s:b,s:o}", "t", "status", "agent_pid",
		                      (int)getpid(), "rss_kb", (json_int_t)self_rss_kb(), "server",
		                      a->server >= 0, "tasks", held_json(a));
		conn_send(&a->conns[ci], m);
		json_decref(m);
	}
}

/* Reads what the connection has; each whole line is one message.  false
 * when it is closed. */
static bool on_conn(struct agent *a, int ci)
{
	struct conn *c = &a->conns[ci];
	char buf[65536];
	ssize_t n;
	bool open_still;

	for (;;) {
		n = read(c->fd, buf, sizeof buf);
		if (n > 0) {
			strbuf_add(&c->in, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	open_still = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	size_t start = 0;
	for (;;) {
		char *nl = memchr(c->in.buf + start, '\n', c->in.len - start);
		if (!nl)
			break;
		*nl = '\0';
		const char *line = c->in.buf + start;
		size_t len = (size_t)(nl - line);
		json_t *msg = json_loads(line, 0, NULL);
		start = (size_t)(nl - c->in.buf) + 1;
		/* a NUL inside: what was parsed is not the whole line */
		if (msg)
			on_message(a, ci, msg, memchr(line, '\0', len) ? NULL : line, len);
		json_decref(msg);
	}
	c = &a->conns[ci];
	strbuf_remove(&c->in, 0, start);
	return open_still && c->in.len <= LINE_MAX_BYTES;
}

static void on_accept(struct agent *a)
{
	for (;;) {
		int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		if (a->n_conns >= MAX_CONNS) {
			close(fd);
			continue;
		}
		struct conn *c = &a->conns[a->n_conns++];
		memset(c, 0, sizeof *c);
		c->fd = fd;
	}
}

/* "free PID": a shim of the pool whose task ended waits for another.  Its
 * task's lines came first on the same pipe, so its journal's end is read;
 * from here the pid is a spare's, not the task's.  One that says so
 * without an end in its journal is not trusted: killed, and reaped as a
 * shim that died (its task lost). */
static void on_free(struct agent *a, pid_t pid)
{
	struct agent_task *t = hashmap_get_int(a->pids, pid);

	if (t && !t->result && !t->acked)
		task_read_journal(a, t);
	if (!t || (!t->result && !t->acked)) {
		log_warn("agent: shim %d says it is free without its task's end; killed",
		         (int)pid);
		agent_pool_back(&a->pool, pid, false); /* let go: EOF */
		if (t)
			kill(pid, SIGKILL);
		return;
	}
	started_flush(a, t);
	hashmap_remove_int(a->pids, pid);
	t->alive = false;
	t->kill_at = INT64_MAX;
	if (t->acked)
		task_drop(a, t);
	agent_pool_back(&a->pool, pid, true);
}

static void on_notify(struct agent *a)
{
	char buf[8192];
	ssize_t n;
	struct strbuf lines = STRBUF_INIT;

	while ((n = read(a->notify_r, buf, sizeof buf)) > 0)
		strbuf_add(&lines, buf, (size_t)n);
	for (char *p = lines.buf, *nl; p && (nl = memchr(p, '\n', lines.len - (size_t)(p - lines.buf)));
	     p = nl + 1) {
		*nl = '\0';
		if (!strncmp(p, "free ", 5)) {
			on_free(a, (pid_t)atoi(p + 5));
			continue;
		}
		char *rec = strchr(p, ' ');
		if (rec)
			*rec++ = '\0';
		struct agent_task *t = hashmap_get_str(a->tasks, p);
		if (t && rec)
			task_note(a, t, rec);
		else if (t)
			task_read_journal(a, t);
	}
	strbuf_release(&lines);
}

static void on_sigchld(struct agent *a)
{
	struct signalfd_siginfo si;
	int st;
	pid_t pid;

	while (read(a->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			a->quit = true;
	}
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		struct agent_task *t = hashmap_get_int(a->pids, pid);
		if (t) {
			/* the journal's last lines may still be in the pipe */
			on_notify(a);
			task_gone(a, t, st);
		}
		agent_pool_reaped(&a->pool, pid);
	}
}

/* Adopted shims whose pidfd says they ended. */
static void on_adopted(struct agent *a)
{
	struct hashmap_iter it;
	struct agent_task *ended[64];
	size_t n = 0;

	hashmap_iter_init(&it, a->tasks);
	while (hashmap_iter_next(&it) && n < 64) {
		struct agent_task *t = it.value;
		struct pollfd q = {t->pidfd, POLLIN, 0};
		if (t->pidfd >= 0 && poll(&q, 1, 0) > 0)
			ended[n++] = t;
	}
	for (size_t i = 0; i < n; i++)
		task_gone(a, ended[i], -1);
}

/* Deadlines: a held "started" whose wait is over, and the last resort
 * after a stop. */
static void on_tick(struct agent *a, int64_t now)
{
	struct hashmap_iter it;

	hashmap_iter_init(&it, a->tasks);
	while (hashmap_iter_next(&it)) {
		struct agent_task *t = it.value;
		if (now >= t->hold_until)
			started_flush(a, t);
		if (t->alive && now >= t->kill_at) {
			if (proc_kill_session(t->pid) + (kill(t->pid, SIGKILL) == 0) > 0)
				log_warn("agent: task %s did not stop in time; killed its session", t->key);
			t->kill_at = INT64_MAX;
		}
	}
}

static int agent_setup(struct agent *a)
{
	struct weir_error err = {0};
	char *lock;
	sigset_t mask;
	int p[2];

	a->dir = journal_dir_for(a->home, &a->dir_in_memory);
	lock = fs_join(a->home, "agent/lock");
	char *own = fs_join(a->home, "agent");
	if (!a->dir || !lock || !own || fs_mkdir_p(own, 0700, &err) < 0 ||
	    fs_mkdir_p(a->dir, 0700, &err) < 0) {
		log_error("agent: %s", err.msg[0] ? err.msg : "out of memory");
		free(own);
		free(lock);
		return -1;
	}
	free(own);
	a->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(lock);
	if (a->lock_fd < 0 || flock(a->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		log_info("agent: another agent holds %s/agent/lock", a->home);
		return 1;
	}
	a->lfd = usock_listen(a->home, AGENT_SOCKET, &err);
	if (a->lfd < 0) {
		log_error("agent: %s", err.msg);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	a->notify_r = p[0];
	a->notify_w = p[1];
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	supervise_note_ignored(); /* once, for every shim forked from here */
	a->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (a->sfd < 0)
		return -1;
	a->tasks = hashmap_create(HASHMAP_KEY_STR);
	a->pids = hashmap_create(HASHMAP_KEY_INT);
	struct agent_pool_hooks hooks = {spare_detach, spare_run, spare_back, a};
	/* where the server puts jobs (its home's real path: the paths in its
	 * starts); not there (an agent started before any server): the spares
	 * make no folders ahead */
	char real[PATH_MAX], *jobs = NULL;
	if (realpath(a->home, real))
		jobs = fs_join(real, "jobs");
	struct stat jst;
	if (jobs && (stat(jobs, &jst) < 0 || !S_ISDIR(jst.st_mode))) {
		free(jobs);
		jobs = NULL;
	}
	int prc = agent_pool_init(&a->pool, &hooks, jobs);
	free(jobs);
	if (prc < 0)
		return -1;
	return a->tasks && a->pids ? 0 : -1;
}

static int agent_run(struct agent *a)
{
	struct pollfd *pfd = NULL;
	size_t cap = 0;

	adopt_all(a);
	while (!a->quit) {
		int64_t now = clock_mono_ms();
		size_t n_adopted = 0, k = 0, need;
		int64_t wake = now + 1000; /* the tick; sooner for a held "started" */
		struct hashmap_iter it;

		hashmap_iter_init(&it, a->tasks);
		while (hashmap_iter_next(&it)) {
			struct agent_task *t = it.value;
			n_adopted += t->pidfd >= 0;
			if (t->hold_until < wake)
				wake = t->hold_until;
		}
		need = 3 + (size_t)a->n_conns + n_adopted;
		if (need > cap) {
			struct pollfd *np = realloc(pfd, need * sizeof *pfd);
			if (!np)
				break;
			pfd = np;
			cap = need;
		}
		pfd[k++] = (struct pollfd){a->lfd, POLLIN, 0};
		pfd[k++] = (struct pollfd){a->sfd, POLLIN, 0};
		pfd[k++] = (struct pollfd){a->notify_r, POLLIN, 0};
		for (int i = 0; i < a->n_conns; i++)
			pfd[k++] = (struct pollfd){a->conns[i].fd,
			                           (short)(POLLIN | (a->conns[i].out.len ? POLLOUT : 0)), 0};
		hashmap_iter_init(&it, a->tasks);
		while (hashmap_iter_next(&it)) {
			struct agent_task *t = it.value;
			if (t->pidfd >= 0)
				pfd[k++] = (struct pollfd){t->pidfd, POLLIN, 0};
		}
		/* idle: no server and no shim alive */
		if (a->server < 0 && live_tasks(a) == 0) {
			if (!a->idle_since)
				a->idle_since = now;
			if (now - a->idle_since >= (int64_t)a->idle_s * 1000)
				break;
		} else {
			a->idle_since = 0;
		}
		int polled_conns = a->n_conns;
		if (poll(pfd, k, wake > now ? (int)(wake - now) : 0) < 0 && errno != EINTR)
			break;
		now = clock_mono_ms();
		if (pfd[0].revents)
			on_accept(a);
		if (pfd[1].revents)
			on_sigchld(a);
		if (pfd[2].revents)
			on_notify(a);
		/* connections, from the last (conn_close moves the last into i) */
		for (int i = polled_conns - 1; i >= 0; i--)
			if (pfd[3 + i].revents & (POLLIN | POLLHUP | POLLERR) && !on_conn(a, i))
				conn_close(a, i);
		if (n_adopted)
			on_adopted(a);
		on_tick(a, now);
		flush_conns(a);
		/* after the answers are out: the pool's next spares */
		agent_pool_turn_end(&a->pool, now);
	}
	flush_conns(a);
	agent_pool_close(&a->pool);
	/* the folder in memory goes with the last journal (else a restarted
	 * agent reads what is left) */
	if (a->dir_in_memory)
		rmdir(a->dir);
	free(pfd);
	return 0;
}

/* Frees what the agent holds; its shims run on. */
static void agent_release(struct agent *a)
{
	while (a->n_conns > 0)
		conn_close(a, a->n_conns - 1);
	hashmap_destroy_free(a->tasks, task_free);
	hashmap_destroy(a->pids);
	agent_pool_release(&a->pool);
	if (a->env) {
		if (environ == a->env)
			environ = NULL;
		for (size_t i = 0; a->env[i]; i++)
			free(a->env[i]);
		free(a->env);
	}
	int fds[] = {a->lfd, a->sfd, a->notify_r, a->notify_w, a->lock_fd};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(a->home);
	free(a->dir);
}

static int agent_usage(void)
{
	fprintf(stderr, "usage: weir agent [--home DIR]\n"
	                "       weir agent status [--json] [--home DIR]\n"
	                "       (env: WEIR_HOME, WEIR_AGENT_IDLE_S: seconds idle before it "
	                "exits, default 30)\n");
	return 2;
}

int agent_main(int argc, char **argv)
{
	struct agent a;
	const char *home_arg = NULL, *idle = getenv("WEIR_AGENT_IDLE_S");
	bool status = false, as_json = false;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "status"))
			status = true;
		else if (status && !strcmp(argv[i], "--json"))
			as_json = true;
		else if (!strcmp(argv[i], "--home") && i + 1 < argc)
			home_arg = argv[++i];
		else
			return agent_usage();
	}
	memset(&a, 0, sizeof a);
	a.lfd = a.sfd = a.notify_r = a.notify_w = a.lock_fd = -1;
	a.server = -1;
	a.kill_grace_s = 5;
	a.idle_s = idle && *idle ? atoi(idle) : 30;
	if (a.idle_s < 0)
		a.idle_s = 0;
	a.home = agent_home(home_arg);
	if (!a.home)
		return 1;
	log_set_program("weir agent");
	if (status) {
		rc = agent_status_print(a.home, as_json);
		free(a.home);
		return rc;
	}
	if (chdir("/") < 0)
		log_warn("agent: chdir /: %s", strerror(errno));
	rc = agent_setup(&a);
	if (rc == 0)
		rc = agent_run(&a);
	else
		rc = rc > 0 ? 0 : 1;
	/* the journals stay: the next agent finds what this one held */
	agent_release(&a);
	return rc;
}
