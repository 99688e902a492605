/* agent.c: the node's agent (agent.h): its setup (the lock, the socket,
 * the shims' pipe, a signalfd for SIGCHLD), one poll() loop over its
 * socket, its connections, the shims' pipe, the signalfd and a pidfd per
 * shim it adopted after a restart, and its end.  The parts the loop calls
 * are in agent_state.h. */
#include "launch/agent.h"
#include "launch/agent_state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/supervise.h"
#include "lib/clock.h"
#include "lib/env_scrub.h"
#include "lib/error.h"
#include "lib/fs.h"
#include "lib/grow.h"
#include "lib/log.h"
#include "lib/usock.h"

extern char **environ;

static int agent_setup(struct agent *a)
{
	struct weir_error err = {0};
	char *lock;
	sigset_t mask;
	int p[2];

	/* as the server's (it starts us with it; an agent started otherwise
	 * too): the jobs' folders it makes 0711, the logs 0600 */
	umask(066);
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
	struct agent_pool_hooks hooks;
	agent_spare_hooks(a, &hooks);
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

	agent_adopt_all(a);
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
		/* new spares held back for programs just starting (agent_pool.h) */
		int64_t refill = agent_pool_wake(&a->pool), due = agent_conns_due(a);
		if (refill < wake)
			wake = refill;
		/* a "spawned" held for the lines that follow it (agent_send_lazy) */
		if (due < wake)
			wake = due;
		need = 3 + (size_t)a->n_conns + n_adopted;
		if (ALLOC_GROW(pfd, need, cap) < 0)
			break;
		pfd[k++] = (struct pollfd){a->lfd, POLLIN, 0};
		pfd[k++] = (struct pollfd){a->sfd, POLLIN, 0};
		pfd[k++] = (struct pollfd){a->notify_r, POLLIN, 0};
		for (int i = 0; i < a->n_conns; i++)
			pfd[k++] = (struct pollfd){
			    a->conns[i].fd,
			    (short)(POLLIN | (agent_conn_wants_write(a, i, now) ? POLLOUT : 0)), 0};
		hashmap_iter_init(&it, a->tasks);
		while (hashmap_iter_next(&it)) {
			struct agent_task *t = it.value;
			if (t->pidfd >= 0)
				pfd[k++] = (struct pollfd){t->pidfd, POLLIN, 0};
		}
		/* idle: no server and no shim alive (a service's agent stays) */
		if (!a->stay && a->server < 0 && agent_live_tasks(a) == 0) {
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
			agent_on_accept(a);
		if (pfd[1].revents)
			agent_on_sigchld(a);
		if (pfd[2].revents)
			agent_on_notify(a);
		/* connections, from the last (agent_conn_close moves the last into i) */
		for (int i = polled_conns - 1; i >= 0; i--)
			if (pfd[3 + i].revents & (POLLIN | POLLHUP | POLLERR) &&
			    !agent_on_conn(a, i))
				agent_conn_close(a, i);
		if (n_adopted)
			agent_on_adopted(a);
		agent_on_tick(a, now);
		agent_flush_conns(a, false);
		/* after the answers are out: the pool's next spares */
		agent_pool_turn_end(&a->pool, now);
	}
	agent_flush_conns(a, true);
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
		agent_conn_close(a, a->n_conns - 1);
	hashmap_destroy_free(a->tasks, agent_task_free);
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
	free(a->token);
	free(a->warm_bin);
	free(a->warm_dir);
	free(a->home);
	free(a->dir);
}

/* The usage: on stdout with status 0 for --help, else on stderr with 2. */
static int agent_usage(bool help)
{
	fprintf(help ? stdout : stderr,
	        "usage: weir agent [--stay] [--home DIR]\n"
	        "       weir agent status [--json] [--home DIR]\n"
	        "       (env: WEIR_HOME, WEIR_AGENT_IDLE_S: seconds idle before it "
	        "exits, default 30;\n"
	        "        --stay: it never exits when idle nor at a server's goodbye, "
	        "as a service's agent does)\n");
	return help ? 0 : 2;
}

/* Runs this program again (argv[-1..argc)) with the environment less what
 * lib/env_scrub.h drops; returns only when that fails. */
static void run_again_scrubbed(int argc, char **argv)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 1, sizeof *env);
	if (!env)
		return;
	for (size_t i = 0; i < n; i++)
		if (!env_scrub_drops(environ[i]))
			env[k++] = environ[i];
	(void)argc;
	execve("/proc/self/exe", argv - 1, env);
	log_warn("agent: cannot run itself again without the server's secrets in its "
	         "environment: %s",
	         strerror(errno));
	free(env);
}

int agent_main(int argc, char **argv)
{
	struct agent a;
	const char *home_arg = NULL, *idle = getenv("WEIR_AGENT_IDLE_S");
	bool status = false, as_json = false, stay = false;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "status"))
			status = true;
		else if (status && !strcmp(argv[i], "--json"))
			as_json = true;
		else if (!status && !strcmp(argv[i], "--stay"))
			stay = true;
		else if (!strcmp(argv[i], "--home") && i + 1 < argc)
			home_arg = argv[++i];
		else
			return agent_usage(!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"));
	}
	memset(&a, 0, sizeof a);
	a.lfd = a.sfd = a.notify_r = a.notify_w = a.lock_fd = -1;
	a.server = -1;
	a.kill_grace_s = 5;
	a.stay = stay;
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
	if (env_scrub_count(environ) > 0)
		run_again_scrubbed(argc, argv);
	if (chdir("/") < 0)
		log_warn("agent: chdir /: %s", strerror(errno));
	a.warm_bin = realpath("/proc/self/exe", NULL);
	a.warm_dir = fs_join(a.home, "airflow-warm");
	rc = agent_setup(&a);
	if (rc == 0)
		rc = agent_run(&a);
	else
		rc = rc > 0 ? 0 : 1;
	/* the journals stay: the next agent finds what this one held */
	agent_release(&a);
	return rc;
}
