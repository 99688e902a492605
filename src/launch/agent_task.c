/* agent_task.c: the agent's task table (agent_state.h), keyed by journal
 * key: what each task's journal and its shim's notes say, forwarded to the
 * server ("started", "exited", "lost", "done") and kept until acknowledged;
 * shims reaped or seen gone (pidfd), a start given again to a new shim when
 * its task never began; the journals read again after a restart. */
#include "launch/agent_state.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/proc.h"

json_t *agent_task_key_json(const struct agent_task *t)
{
	return json_pack("{s:I,s:s,s:i,s:i,s:I}", "job", (json_int_t)t->job, "role", t->role,
	                 "index", t->index, "attempt", t->attempt, AGENT_KEY_NONCE,
	                 (json_int_t)t->nonce);
}

struct agent_task *agent_task_new(struct agent *a, const char *key)
{
	struct agent_task *t = calloc(1, sizeof *t);

	if (!t ||
	    journal_key_parse(key, &t->job, t->role, sizeof t->role, &t->index, &t->attempt) < 0) {
		free(t);
		return NULL;
	}
	snprintf(t->key, sizeof t->key, "%s", key);
	t->pidfd = -1;
	t->kill_at = INT64_MAX;
	t->hold_until = INT64_MAX;
	agent_task_set_state(t, AGENT_TASK_NEW); /* a new task: its first state */
	if (hashmap_put_str(a->tasks, key, t, NULL) < 0) {
		free(t);
		return NULL;
	}
	return t;
}

int agent_task_set_state(struct agent_task *t, enum agent_task_state to)
{
	if (!agent_task_state_can_move(t->state, to)) {
		log_error("agent: task %s: illegal state move %s -> %s refused", t->key,
		          agent_task_state_name(t->state), agent_task_state_name(to));
		return -1;
	}
	t->state = to;
	return 0;
}

/* a task's own parts (hashmap_destroy_free's too) */
void agent_task_free(void *value)
{
	struct agent_task *t = value;

	if (!t)
		return;
	if (t->pidfd >= 0)
		close(t->pidfd);
	json_decref(t->result);
	json_decref(t->start);
	json_decref(t->next);
	free(t->group);
	free(t);
}

void agent_task_drop(struct agent *a, struct agent_task *t)
{
	hashmap_remove_str(a->tasks, t->key);
	if (hashmap_get_int(a->pids, t->pid) == t)
		hashmap_remove_int(a->pids, t->pid);
	agent_task_free(t);
}

size_t agent_live_tasks(struct agent *a)
{
	struct hashmap_iter it;
	size_t n = 0;

	hashmap_iter_init(&it, a->tasks);
	while (hashmap_iter_next(&it))
		n += agent_task_state_alive(((struct agent_task *)it.value)->state);
	return n;
}

/* "started" to the server now (the one held, if any). */
static void started_send_now(struct agent *a, struct agent_task *t, int pid, int port)
{
	json_t *m;

	t->hold_until = INT64_MAX;
	if (t->started_sent || t->stale || a->server < 0)
		return;
	m = agent_task_key_json(t);
	json_object_set_new(m, AGENT_KEY_KIND, json_string(AGENT_MSG_STARTED));
	json_object_set_new(m, "pid", json_integer(pid));
	json_object_set_new(m, "port", json_integer(port));
	json_object_set_new(m, "launcher_pid", json_integer(t->pid));
	agent_send(a, m);
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
void agent_send_started(struct agent *a, struct agent_task *t, const struct journal_state *st,
                        bool hold)
{
	if (t->started_sent || !st->started || a->server < 0)
		return;
	if (hold && !st->exited && agent_task_state_alive(t->state)) {
		if (t->hold_until == INT64_MAX) {
			t->hold_until = clock_mono_ms() + STARTED_HOLD_MS;
			t->started_pid = st->pid;
			t->started_port = st->port;
		}
		return;
	}
	started_send_now(a, t, st->pid, st->port);
}

void agent_send_result(struct agent *a, struct agent_task *t)
{
	if (t->result && !t->stale)
		agent_send(a, json_incref(t->result));
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
	agent_send_started(a, t, &st, true);
	/* its program runs (or the task is over): the pool's next forks may go */
	if ((st.started || st.exited) && agent_task_state_alive(t->state) && t->pidfd < 0)
		agent_pool_task_begun(&a->pool, t->pid);
	if (st.exited && !t->result && !st.reported) {
		json_t *r = st.exited;
		json_object_set_new(r, AGENT_KEY_KIND, json_string(AGENT_MSG_EXITED));
		json_object_set_new(r, AGENT_KEY_NONCE, json_integer(t->nonce));
		t->result = json_incref(r);
		agent_send_result(a, t);
		/* its shim comes back to the pool, most often: no fork for it */
		if (agent_task_state_alive(t->state) && t->pidfd < 0)
			agent_pool_task_ended(&a->pool, t->pid);
	} else if (st.exited && st.reported && !agent_task_state_alive(t->state) && !t->stale) {
		/* nothing to deliver: the server only forgets it */
		json_t *m = agent_task_key_json(t);
		json_object_set_new(m, AGENT_KEY_KIND, json_string(AGENT_MSG_DONE));
		agent_send(a, m);
		journal_remove(a->dir, t->key);
		journal_state_release(&st);
		agent_task_drop(a, t);
		return false;
	}
	journal_state_release(&st);
	return true;
}

static bool task_restart(struct agent *a, struct agent_task *t, int wstatus, bool stopped);

/* The shim is gone: its result is in the journal, or it died without one
 * (kill -9): then the task is lost, and the server hears so. */
static void task_gone(struct agent *a, struct agent_task *t, int wstatus)
{
	char how[64];
	/* what its state said while the shim lived */
	bool acked = t->state == AGENT_TASK_ACKED, stopped = t->state == AGENT_TASK_STOPPING;

	if (t->group) {
		proc_kill_session(t->pid); /* the group empty before it goes */
		agent_pool_remove_group(&a->pool, t->group);
		free(t->group);
		t->group = NULL;
	} else if (wstatus < 0 || WIFSIGNALED(wstatus)) {
		/* killed (or adopted: how it ended is not known), so a fresh
		 * shim's own group may be left: not a spare's (those are the
		 * pool's, agent_pool_reaped) */
		proc_kill_session(t->pid);
		agent_pool_remove_task_group(&a->pool, t->job, t->attempt, t->role, t->index,
		                             t->pid);
	}
	agent_task_set_state(t, AGENT_TASK_GONE);
	if (hashmap_get_int(a->pids, t->pid) == t)
		hashmap_remove_int(a->pids, t->pid);
	if (t->pidfd >= 0) {
		close(t->pidfd);
		t->pidfd = -1;
	}
	if (t->stale) {
		/* of a job a power cut lost: its start's task runs in its place */
		agent_stale_end(a, t);
		return;
	}
	if (acked) {
		/* its result was delivered before the shim was reaped */
		agent_task_drop(a, t);
		return;
	}
	if (!task_read_journal(a, t) || t->result)
		return;
	started_flush(a, t);
	if (task_restart(a, t, wstatus, stopped))
		return;
	if (wstatus < 0)
		snprintf(how, sizeof how, "ended");
	else if (WIFSIGNALED(wstatus))
		snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(wstatus));
	else
		snprintf(how, sizeof how, "exited %d", WEXITSTATUS(wstatus));
	/* nothing of a task whose shim died may run on */
	proc_kill_session(t->pid);
	json_t *m = agent_task_key_json(t);
	json_object_set_new(m, AGENT_KEY_KIND, json_string(AGENT_MSG_LOST));
	json_object_set_new(m, "pid", json_integer(t->pid));
	char why[160];
	if (t->restarts)
		snprintf(
		    why, sizeof why,
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
	agent_send_result(a, t);
}

void agent_stale_end(struct agent *a, struct agent_task *t)
{
	json_t *next = t->next;

	t->next = NULL;
	log_info("agent: task %s (nonce %lld), of a job the server lost, is over; forgotten",
	         t->key, t->nonce);
	journal_remove(a->dir, t->key);
	agent_task_drop(a, t);
	if (next)
		agent_on_start(a, next, NULL, 0);
	json_decref(next);
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
	t = agent_task_new(a, key);
	if (!t) {
		journal_state_release(&st);
		return;
	}
	t->pid = st.shim_pid;
	t->nonce = st.nonce;
	if (st.shim_pid > 0 && proc_read_stat(st.shim_pid, &ps) == 0 && ps.state != 'Z' &&
	    ps.start_ticks == st.shim_start) {
		t->pidfd = (int)syscall(SYS_pidfd_open, st.shim_pid, 0);
		if (t->pidfd >= 0)
			agent_task_set_state(t, AGENT_TASK_RUNNING);
	}
	if (st.group[0]) {
		/* its pool group goes when it ends (now, if it has) */
		agent_pool_detect(&a->pool);
		t->group = strdup(st.group);
	}
	journal_state_release(&st);
	if (!agent_task_state_alive(t->state))
		task_gone(a, t, -1);
	else
		log_info("agent: following task %s (shim %d) again", key, (int)t->pid);
}

void agent_adopt_all(struct agent *a)
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

/* A shim died before its task's journal had its first line (the "shim"
 * record, written before anything of the task runs: launch_shim_run), so
 * its program never started: most often a spare that could not prepare,
 * the start written to it as it died.  The start is given to a shim
 * forked fresh, up to TASK_RESTARTS_MAX times, never for a task sent a signal.
 * True when it was (a new shim runs it).  `stopped`: the task was sent a
 * signal. */
static bool task_restart(struct agent *a, struct agent_task *t, int wstatus, bool stopped)
{
	if (!t->start || stopped || t->started_sent || wstatus < 0 ||
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
	pid_t pid = agent_task_spawn(a, t->key, t->start, NULL, 0, false);
	if (pid < 0)
		return false;
	t->restarts++;
	agent_task_spawned(a, t, pid);
	return true;
}

/* "free PID": a shim of the pool whose task ended waits for another.  Its
 * task's lines came first on the same pipe, so its journal's end is read;
 * from here the pid is a spare's, not the task's.  One that says so
 * without an end in its journal is not trusted: killed, and reaped as a
 * shim that died (its task lost). */
static void on_free(struct agent *a, pid_t pid)
{
	struct agent_task *t = hashmap_get_int(a->pids, pid);

	if (t && !t->result && t->state != AGENT_TASK_ACKED)
		task_read_journal(a, t);
	if (!t || (!t->result && t->state != AGENT_TASK_ACKED)) {
		log_warn("agent: shim %d says it is free without its task's end; killed", (int)pid);
		agent_pool_back(&a->pool, pid, false); /* let go: EOF */
		if (t)
			kill(pid, SIGKILL);
		return;
	}
	started_flush(a, t);
	hashmap_remove_int(a->pids, pid);
	bool acked = t->state == AGENT_TASK_ACKED;
	agent_task_set_state(t, AGENT_TASK_GONE);
	t->kill_at = INT64_MAX;
	agent_pool_back(&a->pool, pid, true);
	if (t->stale)
		agent_stale_end(a, t);
	else if (acked)
		agent_task_drop(a, t);
}

void agent_on_notify(struct agent *a)
{
	char buf[8192];
	ssize_t n;
	struct strbuf lines = STRBUF_INIT;

	while ((n = read(a->notify_r, buf, sizeof buf)) > 0)
		strbuf_add(&lines, buf, (size_t)n);
	for (char *p = lines.buf, *nl;
	     p && (nl = memchr(p, '\n', lines.len - (size_t)(p - lines.buf))); p = nl + 1) {
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

void agent_on_sigchld(struct agent *a)
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
			agent_on_notify(a);
			task_gone(a, t, st);
		}
		agent_pool_reaped(&a->pool, pid);
	}
}

/* Adopted shims whose pidfd says they ended. */
void agent_on_adopted(struct agent *a)
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
void agent_on_tick(struct agent *a, int64_t now)
{
	struct hashmap_iter it;

	hashmap_iter_init(&it, a->tasks);
	while (hashmap_iter_next(&it)) {
		struct agent_task *t = it.value;
		if (now >= t->hold_until)
			started_flush(a, t);
		if (agent_task_state_alive(t->state) && now >= t->kill_at) {
			if (proc_kill_session(t->pid) + (kill(t->pid, SIGKILL) == 0) > 0)
				log_warn("agent: task %s did not stop in time; killed its session",
				         t->key);
			t->kill_at = INT64_MAX;
		}
	}
}
