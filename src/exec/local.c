/* local.c: the local backend: spawning, signalling and reaping launchers.
 *
 * Owns one uv_process_t per launcher it started and one uv_timer_t per
 * task being stopped (the last-resort SIGKILL).  The launcher is the
 * task's parent and does the real work (cgroup, signal forwarding,
 * reports); this file only makes sure nothing of a stopped task outlives
 * the grace period by much.
 */
#include "exec/local.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/agent_link.h"
#include "exec/launch_secret.h"
#include "lib/fs.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/proc.h"

struct local_executor;

struct launcher {
	uv_process_t proc;
	struct local_executor *lx;
	int64_t job_id;
	char *role;
	int index;
	int attempt;
	int pid;
};

struct stopper {
	uv_timer_t timer;
	struct local_executor *lx;
	int pid;
};

struct local_executor {
	struct executor base;
	uv_loop_t *loop;
	char *exe;
	bool lean;           /* exe is weir-launch, which takes no "launch" word */
	char *env_server;    /* "WEIR_SERVER=..." */
	char *token;         /* the key of launchers' secrets (exec/launch_secret.h) */
	char *env_mask;      /* "WEIR_MASK_TOKEN=...": the token, masked in tasks' output */
	char *env_task_user; /* "WEIR_TASK_USER=..."; NULL: tasks run as we do */
	int kill_grace_s;
	executor_exit_fn on_exit;
	void *arg;
	struct hashmap *launchers; /* pid -> struct launcher, until it exits */
	struct hashmap *stoppers;  /* launcher pid -> struct stopper, until its deadline */
	/* The node's agent: when set, every task is a shim of it (no launcher
	 * process of ours); NULL: launchers as processes */
	struct agent_link *agent;
};

static void launcher_closed(uv_handle_t *h)
{
	struct launcher *l = h->data;
	free(l->role);
	free(l);
}

static void launcher_unlink(struct launcher *l)
{
	struct local_executor *lx = l->lx;
	if (hashmap_get_int(lx->launchers, l->pid) == l)
		hashmap_remove_int(lx->launchers, l->pid);
}

static void on_launcher_exit(uv_process_t *p, int64_t exit_status, int term_signal)
{
	struct launcher *l = p->data;
	struct local_executor *lx = l->lx;

	launcher_unlink(l);
	if (lx->on_exit)
		lx->on_exit(lx->arg, l->job_id, l->role, l->index, l->attempt, l->pid, exit_status,
		            term_signal);
	uv_close((uv_handle_t *)p, launcher_closed);
}

static int local_start_task(struct executor *ex, const struct executor_task *task,
                            int *launcher_pid, struct weir_error *err)
{
	struct local_executor *lx = (struct local_executor *)ex;
	struct launcher *l = NULL;
	char job[24], idx[16], att[16];
	char *args[14];
	char **env = NULL;
	char *dir = NULL, *slash;
	char secret[LAUNCH_SECRET_HEX + 1];
	char env_secret[sizeof "WEIR_LAUNCH_SECRET=" + LAUNCH_SECRET_HEX];
	int in_fd = -1, out_fd = -1, rc = -1, r;

	/* the launcher's proof on the launch routes, for this task only: no
	 * token (docs/security.md) */
	launch_secret_task(lx->token, task->job_id, task->role, task->index, task->attempt, secret);
	if (lx->agent) {
		/* the shim's pid comes with its first report */
		*launcher_pid = 0;
		return agent_link_start(lx->agent, task, ex->log_to_server, secret, err);
	}
	snprintf(env_secret, sizeof env_secret, "WEIR_LAUNCH_SECRET=%s", secret);
	dir = strdup(task->log_path);
	if (!dir) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (fs_mkdir_p(dir, 0755, err) < 0)
			goto out;
	}
	/* With the log over HTTP the launcher writes the log through the server;
	 * its own stderr stays the server's (for what it says before it can ship). */
	out_fd = ex->log_to_server
	             ? fcntl(2, F_DUPFD_CLOEXEC, 3)
	             : open(task->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot open the task's log: %s",
		               task->log_path, strerror(errno));
		goto out;
	}
	in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in_fd < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "/dev/null: %s", strerror(errno));
		goto out;
	}
	l = calloc(1, sizeof *l);
	env = executor_launcher_env(lx->env_server, env_secret, lx->env_mask, lx->env_task_user);
	if (!l || !env || !(l->role = strdup(task->role))) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	snprintf(job, sizeof job, "%lld", (long long)task->job_id);
	snprintf(idx, sizeof idx, "%d", task->index);
	snprintf(att, sizeof att, "%d", task->attempt);
	int a = 0;
	args[a++] = lx->exe;
	if (!lx->lean)
		args[a++] = "launch";
	args[a++] = "--job";
	args[a++] = job;
	args[a++] = "--role";
	args[a++] = (char *)task->role;
	args[a++] = "--index";
	args[a++] = idx;
	args[a++] = "--attempt";
	args[a++] = att;
	args[a++] = "--host";
	args[a++] = "127.0.0.1";
	if (ex->log_to_server)
		args[a++] = "--log-to-server";
	args[a] = NULL;

	l->lx = lx;
	l->job_id = task->job_id;
	l->index = task->index;
	l->attempt = task->attempt;
	l->proc.data = l;
	r = executor_spawn_detached(lx->loop, &l->proc, lx->exe, args, env, in_fd, out_fd,
	                            on_launcher_exit);
	if (r != 0) {
		weir_error_set(
		    err, WEIR_E_INTERNAL, "job %lld %s:%d: cannot start the launcher %s: %s",
		    (long long)task->job_id, task->role, task->index, lx->exe, uv_strerror(r));
		/* uv_spawn leaves an initialized handle behind even on failure */
		uv_close((uv_handle_t *)&l->proc, launcher_closed);
		l = NULL;
		goto out;
	}
	l->pid = l->proc.pid;
	/* it runs now whatever happens: without an entry (out of memory) only
	 * is_alive knows less (a zombie reads as gone a little early) */
	if (hashmap_put_int(lx->launchers, l->pid, l, NULL) < 0)
		log_warn("launcher %d: out of memory noting it", l->pid);
	*launcher_pid = l->pid;
	l = NULL;
	rc = 0;
out:
	if (l) {
		free(l->role);
		free(l);
	}
	free(env);
	free(dir);
	if (in_fd >= 0)
		close(in_fd);
	if (out_fd >= 0)
		close(out_fd);
	return rc;
}

static void stopper_closed(uv_handle_t *h)
{
	free(h->data);
}

static void stopper_unlink(struct stopper *s)
{
	if (hashmap_get_int(s->lx->stoppers, s->pid) == s)
		hashmap_remove_int(s->lx->stoppers, s->pid);
}

static void on_stop_deadline(uv_timer_t *t)
{
	struct stopper *s = t->data;
	int n = 0;

	/* the launcher had its grace; whatever is left of the session goes */
	if (kill(s->pid, 0) == 0 || errno == EPERM)
		n += kill(-s->pid, SIGKILL) == 0;
	n += proc_kill_session(s->pid);
	if (n > 0)
		log_warn("launcher %d did not stop in time; killed its session", s->pid);
	stopper_unlink(s);
	uv_close((uv_handle_t *)t, stopper_closed);
}

static int local_stop_task(struct executor *ex, const struct executor_task *task, int sig,
                           struct weir_error *err)
{
	struct local_executor *lx = (struct local_executor *)ex;
	int pid = task->launcher_pid;

	if (lx->agent && agent_link_holds(lx->agent, task))
		return agent_link_signal(lx->agent, task, sig, err);
	if (pid <= 1)
		return 0;
	if (kill(pid, sig) < 0 && errno != ESRCH)
		return weir_error_set(err, WEIR_E_INTERNAL, "cannot signal launcher %d: %s", pid,
		                      strerror(errno));
	if (sig == SIGTERM) {
		if (hashmap_find_int(lx->stoppers, pid, NULL))
			return 0;
		struct stopper *s = calloc(1, sizeof *s);
		if (!s || hashmap_put_int(lx->stoppers, pid, s, NULL) < 0) {
			free(s);
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		}
		s->lx = lx;
		s->pid = pid;
		uv_timer_init(lx->loop, &s->timer);
		s->timer.data = s;
		uv_timer_start(&s->timer, on_stop_deadline, (uint64_t)(lx->kill_grace_s + 2) * 1000,
		               0);
		uv_unref((uv_handle_t *)&s->timer);
	}
	return 0;
}

static bool local_is_alive(struct executor *ex, const struct executor_task *task)
{
	struct local_executor *lx = (struct local_executor *)ex;

	if (lx->agent && agent_link_holds(lx->agent, task))
		return true;
	if (task->launcher_pid <= 1)
		return false;
	/* our own child stays "alive" as a zombie until libuv reaps it; the
	 * map is the truth for those */
	if (hashmap_find_int(lx->launchers, task->launcher_pid, NULL))
		return true;
	if (kill(task->launcher_pid, 0) == 0 || errno == EPERM) {
		struct proc_stat ps;
		/* A zombie is gone for our purpose: it will never report. */
		return proc_read_stat(task->launcher_pid, &ps) < 0 || ps.state != 'Z';
	}
	return false;
}

static void local_destroy(struct executor *ex)
{
	struct local_executor *lx = (struct local_executor *)ex;

	if (!lx)
		return;
	agent_link_destroy(lx->agent);
	if (lx->launchers) {
		struct hashmap_iter it;
		hashmap_iter_init(&it, lx->launchers);
		while (hashmap_iter_next(&it)) {
			struct launcher *l = it.value;
			hashmap_iter_remove(&it);
			uv_close((uv_handle_t *)&l->proc, launcher_closed);
		}
		hashmap_destroy(lx->launchers);
	}
	if (lx->stoppers) {
		struct hashmap_iter it;
		hashmap_iter_init(&it, lx->stoppers);
		while (hashmap_iter_next(&it)) {
			struct stopper *s = it.value;
			hashmap_iter_remove(&it);
			uv_close((uv_handle_t *)&s->timer, stopper_closed);
		}
		hashmap_destroy(lx->stoppers);
	}
	free(lx->exe);
	free(lx->env_server);
	free(lx->token);
	free(lx->env_mask);
	free(lx->env_task_user);
	free(lx);
}

/* A port of this host (where the local backend runs every task) that no
 * socket holds now: bound to 127.0.0.1:0 and let go.  The task's shim binds
 * it again before anything else and holds it until its program starts. */
static int local_pick_port(struct executor *ex, struct weir_error *err)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	(void)ex;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	else
		weir_error_set(err, WEIR_E_INTERNAL, "cannot pick a port for the gang: %s",
		               strerror(errno));
	if (fd >= 0)
		close(fd);
	return port;
}

static void local_open(struct executor *ex)
{
	agent_link_open(((struct local_executor *)ex)->agent);
}

static void local_turn_end(struct executor *ex, bool stored)
{
	agent_link_turn_end(((struct local_executor *)ex)->agent, stored);
}

static const struct executor_ops local_ops = {
    .name = "local",
    .start_task = local_start_task,
    .stop_task = local_stop_task,
    .is_alive = local_is_alive,
    .pick_port = local_pick_port,
    .open = local_open,
    .turn_end = local_turn_end,
    .destroy = local_destroy,
};

struct executor *local_executor_create(uv_loop_t *loop, const char *exe, const char *server_url,
                                       const char *token, int kill_grace_s,
                                       executor_exit_fn on_exit, void *arg, struct weir_error *err)
{
	struct local_executor *lx = calloc(1, sizeof *lx);

	if (!lx)
		goto oom;
	lx->base.ops = &local_ops;
	lx->loop = loop;
	if (!(lx->launchers = hashmap_create(HASHMAP_KEY_INT)) ||
	    !(lx->stoppers = hashmap_create(HASHMAP_KEY_INT)))
		goto oom;
	lx->kill_grace_s = kill_grace_s < 0 ? 0 : kill_grace_s;
	lx->on_exit = on_exit;
	lx->arg = arg;
	lx->exe = exe ? strdup(exe) : executor_find_launcher(&lx->lean);
	if (!lx->exe && !exe)
		lx->exe = strdup("/proc/self/exe");
	if (!lx->exe)
		goto oom;
	if (asprintf(&lx->env_server, "WEIR_SERVER=%s", server_url) < 0) {
		lx->env_server = NULL;
		goto oom;
	}
	if (!(lx->token = strdup(token ? token : "")))
		goto oom;
	if (asprintf(&lx->env_mask, "WEIR_MASK_TOKEN=%s", lx->token) < 0) {
		lx->env_mask = NULL;
		goto oom;
	}
	return &lx->base;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (lx)
		local_destroy(&lx->base);
	return NULL;
}

int local_executor_set_task_user(struct executor *ex, const struct run_as *ra,
                                 struct weir_error *err)
{
	struct local_executor *lx = (struct local_executor *)ex;
	char text[RUN_AS_TEXT_MAX];

	free(lx->env_task_user);
	lx->env_task_user = NULL;
	if (!ra || !ra->set)
		return 0;
	if (run_as_format(ra, text, sizeof text) < 0 ||
	    asprintf(&lx->env_task_user, "%s=%s", RUN_AS_ENV, text) < 0) {
		lx->env_task_user = NULL;
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	return 0;
}

void local_executor_set_end_turn(struct executor *ex, bool (*fn)(void *arg, bool durable),
                                 void *arg)
{
	agent_link_set_end_turn(((struct local_executor *)ex)->agent, fn, arg);
}

void local_executor_set_known(struct executor *ex,
                              bool (*fn)(void *arg, int64_t job, int64_t nonce), void *arg)
{
	agent_link_set_known(((struct local_executor *)ex)->agent, fn, arg);
}

int local_executor_use_agent(struct executor *ex, const char *home, executor_reports_fn reports,
                             struct weir_error *err)
{
	struct local_executor *lx = (struct local_executor *)ex;
	char **env = executor_launcher_env(lx->env_server, NULL, NULL, lx->env_task_user);
	char *args[] = {lx->exe, "agent", "--home", (char *)home, NULL};

	if (!env)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	lx->agent = agent_link_create(lx->loop, home, lx->exe, args, env, lx->token,
	                              lx->kill_grace_s, reports, lx->on_exit, lx->arg, err);
	free(env);
	if (!lx->agent)
		return -1;
	ex->takes_answer = true;
	ex->keeps_tasks = true;
	return 0;
}
