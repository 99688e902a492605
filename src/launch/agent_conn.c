/* agent_conn.c: the agent's connections (agent_state.h): lines read and
 * written without blocking, and the server's messages: hello (its
 * environment taken, what the agent holds told), start, kill, ack, bye,
 * status. */
#include "launch/agent_state.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exec/agent_proto.h"
#include "lib/clock.h"
#include "lib/env_scrub.h"
#include "lib/json_line.h"

extern char **environ;

static void conn_send(struct conn *c, json_t *msg, bool lazy)
{
	bool was_empty = !c->out.len;

	if (agent_proto_frame(&c->out, msg) < 0)
		return;
	if (!lazy)
		c->lazy_since = 0;
	else if (was_empty)
		c->lazy_since = clock_mono_ms();
}

void agent_send(struct agent *a, json_t *msg)
{
	if (a->server >= 0)
		conn_send(&a->conns[a->server], msg, false);
	json_decref(msg);
}

void agent_send_lazy(struct agent *a, json_t *msg)
{
	if (a->server >= 0)
		conn_send(&a->conns[a->server], msg, true);
	json_decref(msg);
}

/* Whether connection c's output waits at `now` (lazy lines alone, not due). */
static bool conn_holds(const struct conn *c, int64_t now)
{
	return c->lazy_since && now < c->lazy_since + LAZY_HOLD_MS;
}

bool agent_conn_wants_write(const struct agent *a, int i, int64_t now)
{
	const struct conn *c = &a->conns[i];

	return c->out.len > 0 && !conn_holds(c, now);
}

int64_t agent_conns_due(const struct agent *a)
{
	int64_t due = INT64_MAX;

	for (int i = 0; i < a->n_conns; i++) {
		const struct conn *c = &a->conns[i];
		if (c->out.len && c->lazy_since && c->lazy_since + LAZY_HOLD_MS < due)
			due = c->lazy_since + LAZY_HOLD_MS;
	}
	return due;
}

void agent_conn_close(struct agent *a, int i)
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
void agent_flush_conns(struct agent *a, bool all)
{
	int64_t now = clock_mono_ms();

	for (int i = 0; i < a->n_conns; i++) {
		struct conn *c = &a->conns[i];
		if (!all && conn_holds(c, now))
			continue;
		/* what is left after a short write is sent as soon as it can */
		c->lazy_since = 0;
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

static struct agent_task *task_of_msg(struct agent *a, json_t *msg)
{
	char key[JOURNAL_KEY_MAX];

	if (agent_msg_key(msg, key) < 0)
		return NULL;
	return hashmap_get_str(a->tasks, key);
}

/* The start waiting for stale task t's end was stopped: it never runs, and
 * the server hears it as a task lost before it began (by signal sig). */
static void next_stopped(struct agent *a, struct agent_task *t, int sig)
{
	json_t *n = t->next, *m = json_object();

	t->next = NULL;
	const char *keys[] = {AGENT_KEY_JOB, AGENT_KEY_ROLE, AGENT_KEY_INDEX, AGENT_KEY_ATTEMPT,
	                      AGENT_KEY_NONCE};
	for (size_t i = 0; m && i < sizeof keys / sizeof keys[0]; i++)
		json_object_set(m, keys[i], json_object_get(n, keys[i]));
	json_object_set_new(m, AGENT_KEY_KIND, json_string(AGENT_MSG_LOST));
	json_object_set_new(m, AGENT_KEY_PID, json_integer(0));
	json_object_set_new(m, AGENT_KEY_WHY,
	                    json_string("stopped before its shim started (the agent was ending "
	                                "a task of a lost job under the same key)"));
	if (sig > 0)
		json_object_set_new(m, AGENT_KEY_SIGNAL, json_integer(sig));
	agent_send(a, m);
	json_decref(n);
}

/* A stop goes to the shim (it forwards it to the program's group); after
 * SIGTERM, the kill grace plus 2 s, then SIGKILL to all of its session. */
static void on_kill(struct agent *a, json_t *msg)
{
	struct agent_task *t = task_of_msg(a, msg);
	int sig = (int)json_integer_value(json_object_get(msg, AGENT_KEY_SIG));

	long long nonce = (long long)json_integer_value(json_object_get(msg, AGENT_KEY_NONCE));

	if (t && nonce && nonce != t->nonce) {
		/* not this task's (a stale one's, of a job the server lost):
		 * the start that waits for it goes, told as stopped before it
		 * began */
		if (t->next && (long long)json_integer_value(
		                   json_object_get(t->next, AGENT_KEY_NONCE)) == nonce)
			next_stopped(a, t, sig);
		return;
	}
	if (!t || !agent_task_state_alive(t->state) || sig <= 0)
		return;
	if (t->state != AGENT_TASK_ACKED) /* acked: dropped at its end, never started again */
		agent_task_set_state(t, AGENT_TASK_STOPPING);
	kill(t->pid, sig);
	if (sig == SIGTERM && t->kill_at == INT64_MAX)
		t->kill_at = clock_mono_ms() + (int64_t)(a->kill_grace_s + 2) * 1000;
}

static void on_ack(struct agent *a, json_t *msg)
{
	json_t *keys = json_object_get(msg, AGENT_KEY_KEYS),
	       *nonces = json_object_get(msg, AGENT_KEY_NONCES);
	size_t i;
	json_t *k;

	json_array_foreach(keys, i, k)
	{
		struct agent_task *t =
		    hashmap_get_str(a->tasks, json_string_value(k) ? json_string_value(k) : "");
		json_t *n = json_array_get(nonces, i);
		if (!t || !t->result)
			continue;
		/* the acknowledgement of another task under the key (a server
		 * of protocol 1 sends no nonces: any) */
		if (json_is_integer(n) && json_integer_value(n) != t->nonce)
			continue;
		journal_remove(a->dir, t->key);
		json_decref(t->result);
		t->result = NULL;
		if (agent_task_state_alive(t->state))
			agent_task_set_state(t, AGENT_TASK_ACKED); /* dropped when its shim goes */
		else if (t->stale)
			agent_stale_end(a, t);
		else
			agent_task_drop(a, t);
	}
}

/* The server's environment becomes the shims': what `weir launch` got
 * from the local executor (executor_launcher_env: WEIR_SERVER, no token),
 * less what lib/env_scrub.h drops should a server send it anyway. */
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
		if (s && strchr(s, '=') && !env_scrub_drops(s) && (e[k] = strdup(s)))
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
	json_t *g = json_object_get(msg, AGENT_KEY_KILL_GRACE_S);

	/* a previous server's connection, if still open, closes by itself */
	a->server = ci;
	take_env(a, json_object_get(msg, AGENT_KEY_ENV));
	/* the server's token, masked in every task's output: kept in memory
	 * (the shims are forks), never in an environment */
	free(a->token);
	a->token = NULL;
	if (json_string_value(json_array_get(json_object_get(msg, AGENT_KEY_MASK), 0)))
		a->token = strdup(
		    json_string_value(json_array_get(json_object_get(msg, AGENT_KEY_MASK), 0)));
	/* spares were forked with the previous server's environment (its URL,
	 * its token): new ones are made after this turn */
	agent_pool_retire(&a->pool);
	if (json_is_integer(g))
		a->kill_grace_s = (int)json_integer_value(g);
	agent_send(a, json_pack("{s:s,s:i,s:i,s:o}", AGENT_KEY_KIND, AGENT_MSG_HELD,
	                        AGENT_KEY_VERSION, AGENT_PROTO_VERSION, AGENT_KEY_AGENT_PID,
	                        (int)getpid(), AGENT_KEY_TASKS, agent_held_json(a)));
	/* what the previous server may not have had: everything again (the
	 * server ignores what it knows) */
	hashmap_iter_init(&it, a->tasks);
	while (hashmap_iter_next(&it)) {
		struct agent_task *t = it.value;
		t->started_sent = false;
		if (t->result) {
			agent_send_result(a, t);
		} else {
			struct journal_state st;
			t->hold_until = INT64_MAX;
			if (journal_read(a->dir, t->key, &st) == 0) {
				agent_send_started(a, t, &st, false);
				journal_state_release(&st);
			}
		}
	}
}

/* One message; `line` (`len` bytes) is its text as received. */
static void on_message(struct agent *a, int ci, json_t *msg, const char *line, size_t len)
{
	const char *t = agent_proto_kind(msg);

	if (!t)
		return;
	if (!strcmp(t, AGENT_MSG_HELLO)) {
		on_hello(a, ci, msg);
	} else if (!strcmp(t, AGENT_MSG_START)) {
		agent_on_start(a, msg, line, len);
	} else if (!strcmp(t, AGENT_MSG_KILL)) {
		on_kill(a, msg);
	} else if (!strcmp(t, AGENT_MSG_ACK)) {
		on_ack(a, msg);
	} else if (!strcmp(t, AGENT_MSG_BYE)) {
		if (a->server == ci)
			a->server = -1;
		if (agent_live_tasks(a) == 0 && !a->stay)
			a->quit = true;
	} else if (!strcmp(t, AGENT_MSG_STATUS)) {
		json_t *m = agent_status_json(a);
		conn_send(&a->conns[ci], m, false);
		json_decref(m);
	}
}

/* Reads what the connection has; each whole line is one message.  false
 * when it is closed. */
bool agent_on_conn(struct agent *a, int ci)
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
		size_t len;
		const char *line = agent_proto_next_line(&c->in, &start, &len);
		if (!line)
			break;
		json_t *msg = json_line_loads(line);
		/* a NUL inside: what was parsed is not the whole line */
		if (msg)
			on_message(a, ci, msg, memchr(line, '\0', len) ? NULL : line, len);
		json_decref(msg);
	}
	c = &a->conns[ci];
	strbuf_remove(&c->in, 0, start);
	return open_still && c->in.len <= LINE_MAX_BYTES;
}

void agent_on_accept(struct agent *a)
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
