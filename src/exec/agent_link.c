/* agent_link.c: the server's side of the agent's socket (agent_link.h). */
#include "exec/agent_link.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/agent_proto.h"
#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/hashmap.h"
#include "lib/json_line.h"
#include "lib/json_util.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "lib/usock.h"

#define AGENT_START_WAIT_MS 5000
/* Reports whose turn was rolled back (a full disk) are told again after. */
#define RETELL_MS 1000
/* The acknowledgements of stored reports wait this long for the durable
 * commit they need (an fsync), which serves every one that came meanwhile. */
#define ACK_MS 10

/* A task the agent was asked to start (start_line kept until it says it
 * spawned it, to send again after a reconnect) or says it holds. */
struct held {
	char *start_line;
	int shim_pid;
	long long nonce; /* the job's (the start's, or the agent's word) */
};

struct agent_link {
	uv_loop_t *loop;
	char *home, *exe;
	char **args, **env; /* owned copies */
	char *token;        /* masked in every task's output (the hello's "mask") */
	int kill_grace_s;
	executor_reports_fn reports;
	executor_exit_fn lost;
	void *arg;
	uv_pipe_t *pipe;    /* NULL while not connected */
	uv_timer_t *pump;   /* the next iteration: buffered input, then the writes */
	uv_timer_t *retry;  /* connecting again */
	uv_timer_t *retell; /* reports not stored, told again (untold) */
	uv_timer_t *ack;    /* on_ack: the durable commit, then `acks` go out */
	bool pump_armed;
	/* the server has finished starting (agent_link_open): reports are
	 * told; until then they wait in `in`, read but not told */
	bool open;
	struct strbuf out, in;
	/* the open turn's starts and kills: out once it is stored, dropped
	 * when it is rolled back (agent_link_turn_end), with the held entries
	 * of its starts (staged_keys) */
	struct strbuf staged;
	struct strvec staged_keys;
	struct strbuf untold; /* report lines not stored: told again at retell */
	/* the acknowledgement of reports stored (not yet durably): out at
	 * on_ack; `ack_nonces` their nonces, in the same order */
	struct strbuf acks, ack_nonces;
	/* ends the server's turn before reports are acknowledged: true when
	 * what they said was stored (agent_link_set_end_turn) */
	bool (*end_turn)(void *arg, bool durable);
	void *end_turn_arg;
	/* whether the store knows a job with that nonce (agent_link_set_known);
	 * NULL: every one is known */
	bool (*known)(void *arg, int64_t job, int64_t nonce);
	void *known_arg;
	bool restarted_old;   /* an agent of an older protocol was stopped once */
	struct hashmap *held; /* key -> struct held */
};

struct link_write {
	uv_write_t req;
	char *base;
};

static void handle_free(uv_handle_t *h)
{
	free(h);
}

/* The key of the task message m names (agent_proto.h). */
static void key_of_msg(char *buf, size_t size, json_t *m)
{
	agent_proto_msg_key(m, buf, size);
}

static void held_free(struct held *h)
{
	if (h) {
		free(h->start_line);
		free(h);
	}
}

static void held_free_value(void *value)
{
	held_free(value);
}

static void held_drop(struct agent_link *l, const char *key)
{
	held_free(hashmap_remove_str(l->held, key));
}

static char **strv_copy(char *const *v)
{
	size_t n = 0;
	char **c;

	while (v && v[n])
		n++;
	c = calloc(n + 1, sizeof *c);
	for (size_t i = 0; c && i < n; i++)
		if (!(c[i] = strdup(v[i]))) {
			for (size_t j = 0; j < i; j++)
				free(c[j]);
			free(c);
			return NULL;
		}
	return c;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void on_pump(uv_timer_t *t);

static void pump_arm(struct agent_link *l)
{
	if (!l->pump_armed) {
		uv_timer_start(l->pump, on_pump, 0, 0);
		l->pump_armed = true;
	}
}

/* A line of the open turn: out once the turn is stored (or at the pump). */
static void stage_line(struct agent_link *l, json_t *msg)
{
	agent_proto_frame(&l->staged, msg);
	pump_arm(l);
}

/* What the turns asked goes out (the pump: any turn has ended by then). */
static void staged_out(struct agent_link *l)
{
	strbuf_add(&l->out, l->staged.buf, l->staged.len);
	strbuf_reset(&l->staged);
	strvec_release(&l->staged_keys);
}

static void flush_out(struct agent_link *l);

void agent_link_set_known(struct agent_link *l, bool (*fn)(void *arg, int64_t job, int64_t nonce),
                          void *arg)
{
	if (!l)
		return;
	l->known = fn;
	l->known_arg = arg;
}

void agent_link_set_end_turn(struct agent_link *l, bool (*fn)(void *arg, bool durable), void *arg)
{
	if (!l)
		return;
	l->end_turn = fn;
	l->end_turn_arg = arg;
}

void agent_link_turn_end(struct agent_link *l, bool stored)
{
	if (!l || !l->staged.len)
		return;
	if (!stored) {
		/* the rows of these starts were rolled back: nothing runs that
		 * the store does not know of */
		for (size_t i = 0; i < l->staged_keys.n; i++)
			held_drop(l, l->staged_keys.v[i]);
		strbuf_reset(&l->staged);
		strvec_release(&l->staged_keys);
		return;
	}
	staged_out(l);
	flush_out(l);
}

static void on_written(uv_write_t *req, int status)
{
	struct link_write *w = (struct link_write *)req;

	if (status < 0)
		log_warn("agent: write: %s", uv_strerror(status));
	free(w->base);
	free(w);
}

static void flush_out(struct agent_link *l)
{
	struct link_write *w;
	uv_buf_t b;
	size_t len;

	if (!l->pipe || l->out.len == 0)
		return;
	w = calloc(1, sizeof *w);
	if (!w)
		return;
	w->base = strbuf_detach(&l->out, &len);
	/* libuv copies the buffer list; the bytes stay ours until on_written */
	b = uv_buf_init(w->base, (unsigned)len);
	if (uv_write(&w->req, (uv_stream_t *)l->pipe, &b, 1, on_written) < 0) {
		free(w->base);
		free(w);
	}
}

/* ---- what the agent says ---- */

/* The nonce a task message carries; 0: none (an agent of protocol 1, or a
 * task whose journal it could not read). */
static long long nonce_of(json_t *m)
{
	return (long long)json_integer_value(json_object_get(m, AGENT_KEY_NONCE));
}

/* Whether the store knows the job of task message m under m's nonce. */
static bool msg_known(struct agent_link *l, json_t *m)
{
	return !l->known || l->known(l->known_arg,
	                             (int64_t)json_integer_value(json_object_get(m, AGENT_KEY_JOB)),
	                             nonce_of(m));
}

/* A kill of task `key` (its nonce `nonce`) into `out`. */
static void kill_line(struct strbuf *out, const char *key, long long nonce, int sig)
{
	long long job;
	int index, attempt;
	char role[64];

	if (sscanf(key, "%lld.%63[^.].%d.%d", &job, role, &index, &attempt) != 4)
		return;
	json_t *m = json_pack("{s:s,s:I,s:s,s:i,s:i,s:I,s:i}", AGENT_KEY_KIND, AGENT_MSG_KILL,
	                      AGENT_KEY_JOB, (json_int_t)job, AGENT_KEY_ROLE, role, AGENT_KEY_INDEX,
	                      index, AGENT_KEY_ATTEMPT, attempt, AGENT_KEY_NONCE, (json_int_t)nonce,
	                      AGENT_KEY_SIG, sig);
	if (m)
		agent_proto_frame(out, m);
	json_decref(m);
}

/* The tasks the agent holds of jobs the store does not know under their
 * nonce (a power cut lost the turns that made them: their ids are handed
 * out again) are killed and forgotten: their reports are acknowledged
 * unread (process_input).  Once the server has started (the store is
 * read), and at each later held answer. */
static void sweep_unknown(struct agent_link *l)
{
	struct hashmap_iter it;

	if (!l->known)
		return;
	hashmap_iter_init(&it, l->held);
	while (hashmap_iter_next(&it)) {
		struct held *h = it.value;
		long long job;
		if (h->start_line || sscanf(it.key_str, "%lld.", &job) != 1 ||
		    l->known(l->known_arg, job, h->nonce))
			continue;
		log_warn("agent: task %s (nonce %lld) is of a job the store does not know (a "
		         "turn lost in a power cut): killed",
		         it.key_str, h->nonce);
		kill_line(&l->out, it.key_str, h->nonce, SIGKILL);
		hashmap_iter_remove(&it);
		held_free(h);
	}
}

static void reconcile(struct agent_link *l, json_t *tasks)
{
	struct hashmap *seen = hashmap_create(HASHMAP_KEY_STR);
	struct hashmap_iter it;
	size_t i;
	json_t *t;

	if (!seen)
		return;
	json_array_foreach(tasks, i, t)
	{
		char key[160];
		struct held *h;
		long long nonce = nonce_of(t);
		key_of_msg(key, sizeof key, t);
		hashmap_put_str(seen, key, NULL, NULL);
		h = hashmap_get_str(l->held, key);
		if (h && h->start_line && h->nonce != nonce) {
			/* the agent holds a task of a job a power cut lost under
			 * this key: it kills that one and runs this start (sent
			 * again: it may not have had it) */
			strbuf_addstr(&l->out, h->start_line);
			continue;
		}
		if (!h) {
			h = calloc(1, sizeof *h);
			if (!h || hashmap_put_str(l->held, key, h, NULL) < 0) {
				free(h);
				continue;
			}
		}
		free(h->start_line);
		h->start_line = NULL;
		h->shim_pid = (int)json_integer_value(json_object_get(t, AGENT_KEY_SHIM_PID));
		h->nonce = nonce;
	}
	hashmap_iter_init(&it, l->held);
	while (hashmap_iter_next(&it)) {
		struct held *h = it.value;
		const char *key = it.key_str;
		if (hashmap_find_str(seen, key, NULL))
			continue;
		if (h->start_line) {
			/* it never reached the agent: now it does */
			strbuf_addstr(&l->out, h->start_line);
			continue;
		}
		/* spawned, then unknown to the agent (its journal never written):
		 * the task never ran; it is lost */
		long long job;
		int index, attempt;
		char role[64];
		if (sscanf(key, "%lld.%63[^.].%d.%d", &job, role, &index, &attempt) == 4)
			l->lost(l->arg, job, role, index, attempt, h->shim_pid, -1, SIGKILL);
		hashmap_iter_remove(&it);
		held_free(h);
	}
	hashmap_destroy(seen);
	if (l->open)
		sweep_unknown(l);
	pump_arm(l);
}

/* Key `key` into the acknowledgement being written ({"t":"ack","keys":[...],
 * "nonces":[...]}, as text: a tree and its dump cost more than the line),
 * its nonce into `nonces`; a key that is not valid UTF-8 is left out, as a
 * JSON string could not hold it. */
static void ack_add(struct strbuf *acks, struct strbuf *nonces, const char *key, long long nonce)
{
	size_t at = acks->len;

	strbuf_addstr(acks, at ? ","
	                       : "{\"" AGENT_KEY_KIND "\":\"" AGENT_MSG_ACK "\",\"" AGENT_KEY_KEYS
	                         "\":[");
	if (json_util_write_string(acks, key) < 0 && !acks->failed) {
		strbuf_remove(acks, at, acks->len - at);
		return;
	}
	strbuf_addstr(nonces, nonces->len ? "," : "");
	strbuf_addi(nonces, nonce);
}

/* Whether line `t` is a report for the job manager (told only once the
 * link is open). */
static bool is_report(const char *t)
{
	return !strcmp(t, AGENT_MSG_STARTED) || !strcmp(t, AGENT_MSG_EXITED) ||
	       !strcmp(t, AGENT_MSG_LOST);
}

/* Every whole line of the input: spawned and held settle the table at
 * once; started and exited go to the job manager together, lost ones to
 * the exit callback; then what was recorded is acknowledged.  While the
 * link is not open (the server still starting) it stops at the first
 * report: that line and the rest wait in the input for agent_link_open. */
static void on_retell(uv_timer_t *t);
static void on_ack(uv_timer_t *t);

static void process_input(struct agent_link *l)
{
	json_t *batch = json_array(), *lost = json_array();
	size_t start = 0, i;
	json_t *m;

	for (;;) {
		size_t at = start, len;
		char *line = agent_proto_next_line(&l->in, &start, &len);
		if (!line)
			break;
		json_t *msg = json_line_loads(line);
		const char *t = agent_proto_kind(msg);
		char key[160];
		if (t && !l->open && is_report(t)) {
			line[len] = '\n'; /* it waits in the input for agent_link_open */
			start = at;
			json_decref(msg);
			break;
		}
		if (!t) {
			json_decref(msg);
			continue;
		}
		if (!strcmp(t, AGENT_MSG_SPAWNED)) {
			key_of_msg(key, sizeof key, msg);
			struct held *h = hashmap_get_str(l->held, key);
			/* of the task under this key the link knows (not one of a
			 * lost job's, which the agent kills for this start) */
			if (h && (h->nonce == nonce_of(msg) || !nonce_of(msg))) {
				free(h->start_line);
				h->start_line = NULL;
				h->shim_pid =
				    (int)json_integer_value(json_object_get(msg, AGENT_KEY_PID));
			}
		} else if (!strcmp(t, AGENT_MSG_DONE)) {
			key_of_msg(key, sizeof key, msg);
			struct held *h = hashmap_get_str(l->held, key);
			if (h && (h->nonce == nonce_of(msg) || !nonce_of(msg)))
				held_drop(l, key); /* it reported over HTTP itself */
		} else if (!strcmp(t, AGENT_MSG_HELD)) {
			reconcile(l, json_object_get(msg, AGENT_KEY_TASKS));
		} else if (is_report(t) && !msg_known(l, msg)) {
			/* of a job a power cut lost (its id may be another's now):
			 * never told; acknowledged, so the agent forgets it */
			key_of_msg(key, sizeof key, msg);
			log_warn("agent: %s of task %s (nonce %lld), of a job the store does not "
			         "know (a turn lost in a power cut): not recorded",
			         t, key, nonce_of(msg));
			struct held *h = hashmap_get_str(l->held, key);
			if (h && !h->start_line && h->nonce == nonce_of(msg))
				held_drop(l, key);
			if (strcmp(t, AGENT_MSG_STARTED))
				ack_add(&l->acks, &l->ack_nonces, key, nonce_of(msg));
		} else if (!strcmp(t, AGENT_MSG_STARTED) || !strcmp(t, AGENT_MSG_EXITED)) {
			json_array_append(batch, msg);
		} else if (!strcmp(t, AGENT_MSG_LOST)) {
			json_array_append(lost, msg);
		}
		json_decref(msg);
	}
	strbuf_remove(&l->in, 0, start);
	if (json_array_size(batch) > 0)
		l->reports(l->arg, batch);
	json_array_foreach(lost, i, m)
	{
		json_t *sig = json_object_get(m, AGENT_KEY_SIGNAL),
		       *st = json_object_get(m, AGENT_KEY_EXIT_STATUS);
		l->lost(l->arg, (int64_t)json_integer_value(json_object_get(m, AGENT_KEY_JOB)),
		        json_string_value(json_object_get(m, AGENT_KEY_ROLE)),
		        (int)json_integer_value(json_object_get(m, AGENT_KEY_INDEX)),
		        (int)json_integer_value(json_object_get(m, AGENT_KEY_ATTEMPT)),
		        (int)json_integer_value(json_object_get(m, AGENT_KEY_PID)),
		        json_is_integer(st) ? json_integer_value(st) : -1,
		        json_is_integer(sig) ? (int)json_integer_value(sig) : 0);
	}
	/* the acknowledgement leaves only once what they said is stored, and
	 * durably (on_ack): the agent forgets what it acknowledges */
	if ((json_array_size(batch) > 0 || json_array_size(lost) > 0) && l->end_turn &&
	    !l->end_turn(l->end_turn_arg, false)) {
		/* not stored (a full disk): not acknowledged, told again later;
		 * the agent keeps them meanwhile */
		json_array_foreach(batch, i, m)
		{
			agent_proto_frame(&l->untold, m);
		}
		json_array_foreach(lost, i, m)
		{
			agent_proto_frame(&l->untold, m);
		}
		json_array_clear(batch);
		json_array_clear(lost);
		uv_timer_start(l->retell, on_retell, RETELL_MS, 0);
	}
	json_array_foreach(batch, i, m)
	{
		char key[160];
		if (strcmp(agent_proto_kind(m), AGENT_MSG_EXITED))
			continue;
		key_of_msg(key, sizeof key, m);
		held_drop(l, key);
		ack_add(&l->acks, &l->ack_nonces, key, nonce_of(m));
	}
	json_array_foreach(lost, i, m)
	{
		char key[160];
		key_of_msg(key, sizeof key, m);
		held_drop(l, key);
		ack_add(&l->acks, &l->ack_nonces, key, nonce_of(m));
	}
	if (l->acks.len > 0 && !uv_is_active((uv_handle_t *)l->ack))
		uv_timer_start(l->ack, on_ack, ACK_MS, 0);
	json_decref(lost);
	json_decref(batch);
}

/* ---- the connection ---- */

static void link_lost(struct agent_link *l);

/* One room for every read: on_read copies what came into the link's input
 * before the loop reads again (one thread), so a malloc and a free of
 * libuv's 64 KB suggestion a read bought nothing (the free of so large a
 * block also made malloc merge its small free lists each time). */
static char read_room[65536];

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	(void)suggested;
	buf->base = read_room;
	buf->len = sizeof read_room;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct agent_link *l = s->data;

	if (n > 0) {
		strbuf_add(&l->in, buf->base, (size_t)n);
		process_input(l);
	}
	if (n < 0) {
		log_warn("agent: connection lost (%s); connecting again", uv_strerror((int)n));
		link_lost(l);
	}
}

/* Starts `weir agent` detached: its own session, its output in
 * HOME/agent.log; it outlives this server. */
static int spawn_agent(struct agent_link *l, struct weir_error *err)
{
	uv_process_t *p = calloc(1, sizeof *p);
	char *log = fs_join(l->home, "agent.log");
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int out = log ? open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
	int r = -1;

	if (!p || in < 0 || out < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "cannot start the agent: %s",
		               !p ? "out of memory" : strerror(errno));
		goto out;
	}
	r = executor_spawn_detached(l->loop, p, l->exe, l->args, l->env, in, out, NULL);
	if (r < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "cannot start the agent %s: %s", l->exe,
		               uv_strerror(r));
		uv_close((uv_handle_t *)p, handle_free);
		p = NULL;
		goto out;
	}
	/* the agent lives on after the server; its handle keeps nothing */
	uv_unref((uv_handle_t *)p);
	uv_close((uv_handle_t *)p, handle_free);
	p = NULL;
	r = 0;
out:
	free(p);
	free(log);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return r;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Whether the agent that answered (its held answer, the first line of the
 * input) speaks an older protocol: 0 no; 1 it did, and was stopped (its
 * shims run on, and their journals are a new agent's to follow); -1 it
 * did and would not stop within AGENT_START_WAIT_MS. */
static int older_agent(struct agent_link *l)
{
	char *nl = memchr(l->in.buf, '\n', l->in.len);
	json_t *m = json_loadb(l->in.buf, (size_t)(nl - l->in.buf), 0, NULL);
	const char *t = agent_proto_kind(m);
	json_t *v = json_object_get(m, AGENT_KEY_VERSION);
	int pid = (int)json_integer_value(json_object_get(m, AGENT_KEY_AGENT_PID));
	int version = json_is_integer(v) ? (int)json_integer_value(v) : 1;
	bool held = t && !strcmp(t, AGENT_MSG_HELD);

	json_decref(m); /* t was m's */
	if (!held || version >= AGENT_PROTO_VERSION)
		return 0;
	log_warn("agent: the node's agent (pid %d) speaks protocol %d, this server %d: it is "
	         "stopped and a new one started; its tasks run on",
	         pid, version, AGENT_PROTO_VERSION);
	strbuf_reset(&l->in);
	if (pid <= 1 || pid == getpid() || kill(pid, SIGTERM) < 0)
		return -1;
	for (int64_t end = clock_mono_ms() + AGENT_START_WAIT_MS; clock_mono_ms() < end;) {
		struct proc_stat ps;
		/* gone, or a zombie (it had been this server's own child) */
		if ((kill(pid, 0) < 0 && errno == ESRCH) ||
		    (proc_read_stat(pid, &ps) == 0 && ps.state == 'Z'))
			return 1;
		clock_sleep_ms(5);
	}
	return -1;
}

/* Connects (starting the agent when none answers), greets it, and reads
 * its answer: what it holds.  Blocking, bounded.  0 or -1 with err. */
static int link_connect(struct agent_link *l, struct weir_error *err)
{
	int fd = usock_connect(l->home, AGENT_PROTO_SOCKET, err);
	int64_t deadline;
	json_t *hello, *env;
	char *text;

	if (fd < 0) {
		if (spawn_agent(l, err) < 0)
			return -1;
		deadline = clock_mono_ms() + AGENT_START_WAIT_MS;
		while (fd < 0 && clock_mono_ms() < deadline) {
			clock_sleep_ms(5);
			fd = usock_connect(l->home, AGENT_PROTO_SOCKET, err);
		}
		if (fd < 0)
			return weir_error_set(err, WEIR_E_UNAVAILABLE,
			                      "the agent did not answer at %s/%s within %d ms",
			                      l->home, AGENT_PROTO_SOCKET, AGENT_START_WAIT_MS);
	}
	env = json_array();
	for (size_t i = 0; l->env[i]; i++)
		json_array_append_new(env, json_string(l->env[i]));
	hello = json_pack("{s:s,s:i,s:o,s:i,s:[s]}", AGENT_KEY_KIND, AGENT_MSG_HELLO,
	                  AGENT_KEY_VERSION, AGENT_PROTO_VERSION, AGENT_KEY_ENV, env,
	                  AGENT_KEY_KILL_GRACE_S, l->kill_grace_s, AGENT_KEY_MASK, l->token);
	text = hello ? json_dumps(hello, JSON_COMPACT) : NULL;
	json_decref(hello);
	if (!text || write_all(fd, text, strlen(text)) < 0 || write_all(fd, "\n", 1) < 0) {
		free(text);
		close(fd);
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "the agent: cannot write: %s",
		                      strerror(errno));
	}
	free(text);
	/* its first line answers: what it holds */
	deadline = clock_mono_ms() + AGENT_START_WAIT_MS;
	strbuf_reset(&l->in);
	while (!memchr(l->in.buf ? l->in.buf : "", '\n', l->in.len)) {
		struct pollfd p = {fd, POLLIN, 0};
		char buf[65536];
		int64_t left = deadline - clock_mono_ms();
		ssize_t n;
		if (left <= 0 || poll(&p, 1, (int)left) <= 0 ||
		    (n = read(fd, buf, sizeof buf)) <= 0) {
			close(fd);
			return weir_error_set(err, WEIR_E_UNAVAILABLE,
			                      "the agent did not greet back");
		}
		strbuf_add(&l->in, buf, (size_t)n);
	}
	int old = older_agent(l);
	if (old != 0) {
		close(fd);
		if (old < 0 || l->restarted_old)
			return weir_error_set(
			    err, WEIR_E_UNAVAILABLE,
			    "the node's agent at %s/%s speaks an older protocol than "
			    "this server's (%d) and did not stop: stop it (its tasks "
			    "run on), and the server starts a new one",
			    l->home, AGENT_PROTO_SOCKET, AGENT_PROTO_VERSION);
		l->restarted_old = true;
		return link_connect(l, err);
	}
	l->pipe = calloc(1, sizeof *l->pipe);
	if (!l->pipe || uv_pipe_init(l->loop, l->pipe, 0) < 0) {
		free(l->pipe);
		l->pipe = NULL;
		close(fd);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	l->pipe->data = l;
	if (uv_pipe_open(l->pipe, fd) < 0 ||
	    uv_read_start((uv_stream_t *)l->pipe, on_alloc, on_read) < 0) {
		uv_close((uv_handle_t *)l->pipe, handle_free);
		l->pipe = NULL;
		return weir_error_set(err, WEIR_E_INTERNAL, "the agent's socket: cannot watch it");
	}
	/* the answer is read at once: the held list settles the table before
	 * anyone asks (is_alive at recovery); the reports that came with it
	 * wait until the link is open */
	process_input(l);
	return 0;
}

static void on_retry(uv_timer_t *t)
{
	struct agent_link *l = t->data;
	struct weir_error err = {0};

	if (l->pipe)
		return;
	if (link_connect(l, &err) < 0) {
		log_warn("agent: %s; trying again", err.msg);
		uv_timer_start(l->retry, on_retry, 1000, 0);
	}
}

static void link_lost(struct agent_link *l)
{
	if (l->pipe) {
		uv_read_stop((uv_stream_t *)l->pipe);
		uv_close((uv_handle_t *)l->pipe, handle_free);
		l->pipe = NULL;
	}
	strbuf_reset(&l->in);
	uv_timer_start(l->retry, on_retry, 100, 0);
}

static void on_pump(uv_timer_t *t)
{
	struct agent_link *l = t->data;

	l->pump_armed = false;
	if (l->in.len)
		process_input(l);
	flush_out(l);
}

static void on_retell(uv_timer_t *t)
{
	struct agent_link *l = t->data;

	if (!l->untold.len)
		return;
	/* before what came since: the agent's order */
	struct strbuf in = l->untold;
	strbuf_add(&in, l->in.buf, l->in.len);
	l->untold = l->in;
	l->in = in;
	strbuf_reset(&l->untold);
	process_input(l);
	flush_out(l);
}

/* The acknowledgements waiting: out once a durable commit holds what they
 * answer (and every turn before it), the same sync for all of them; a
 * failed one (a full disk, a failed sync) tries again later. */
static void on_ack(uv_timer_t *t)
{
	struct agent_link *l = t->data;

	if (!l->acks.len)
		return;
	if (l->end_turn && !l->end_turn(l->end_turn_arg, true)) {
		uv_timer_start(l->ack, on_ack, RETELL_MS, 0);
		return;
	}
	strbuf_addstr(&l->acks, "],\"" AGENT_KEY_NONCES "\":[");
	strbuf_add(&l->acks, l->ack_nonces.buf, l->ack_nonces.len);
	strbuf_addstr(&l->acks, "]}\n");
	if (!l->acks.failed)
		strbuf_add(&l->out, l->acks.buf, l->acks.len);
	strbuf_reset(&l->acks);
	strbuf_reset(&l->ack_nonces);
	pump_arm(l);
}

/* ---- the executor's calls ---- */

struct agent_link *agent_link_create(uv_loop_t *loop, const char *home, const char *exe,
                                     char *const *args, char *const *env, const char *token,
                                     int kill_grace_s, executor_reports_fn reports,
                                     executor_exit_fn lost, void *arg, struct weir_error *err)
{
	struct agent_link *l = calloc(1, sizeof *l);

	if (!l || !(l->home = strdup(home)) || !(l->exe = strdup(exe)) ||
	    !(l->token = strdup(token ? token : "")) || !(l->args = strv_copy(args)) ||
	    !(l->env = strv_copy(env)) || !(l->held = hashmap_create(HASHMAP_KEY_STR))) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto fail;
	}
	l->pump = calloc(1, sizeof *l->pump);
	l->retry = calloc(1, sizeof *l->retry);
	l->retell = calloc(1, sizeof *l->retell);
	l->ack = calloc(1, sizeof *l->ack);
	if (!l->pump || !l->retry || !l->retell || !l->ack) {
		free(l->pump);
		free(l->retry);
		free(l->retell);
		free(l->ack);
		l->pump = l->retry = l->retell = l->ack = NULL;
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto fail;
	}
	l->loop = loop;
	l->kill_grace_s = kill_grace_s;
	l->reports = reports;
	l->lost = lost;
	l->arg = arg;
	uv_timer_init(loop, l->pump);
	uv_timer_init(loop, l->retry);
	uv_timer_init(loop, l->retell);
	uv_timer_init(loop, l->ack);
	l->pump->data = l->retry->data = l->retell->data = l->ack->data = l;
	uv_unref((uv_handle_t *)l->retry);
	if (link_connect(l, err) < 0)
		goto fail;
	return l;
fail:
	agent_link_destroy(l);
	return NULL;
}

int agent_link_start_line(struct strbuf *sb, const struct executor_task *task, bool log_to_server,
                          const char *secret)
{
	int rc = 0;

	strbuf_addstr(sb, "{\"" AGENT_KEY_KIND "\":\"" AGENT_MSG_START "\",\"" AGENT_KEY_JOB "\":");
	strbuf_addi(sb, task->job_id);
	strbuf_addstr(sb, ",\"" AGENT_KEY_ROLE "\":");
	rc |= json_util_write_string(sb, task->role);
	strbuf_addstr(sb, ",\"" AGENT_KEY_INDEX "\":");
	strbuf_addi(sb, task->index);
	strbuf_addstr(sb, ",\"" AGENT_KEY_ATTEMPT "\":");
	strbuf_addi(sb, task->attempt);
	strbuf_addstr(sb, ",\"" AGENT_KEY_NONCE "\":");
	strbuf_addi(sb, task->nonce);
	strbuf_addstr(sb, ",\"" AGENT_KEY_TASK "\":");
	strbuf_addstr(sb, task->answer ? task->answer : "null");
	strbuf_addstr(sb, ",\"" AGENT_KEY_LOG "\":");
	rc |= json_util_write_string(sb, task->log_path);
	strbuf_addstr(sb, log_to_server ? ",\"" AGENT_KEY_LOG_TO_SERVER "\":true"
	                                : ",\"" AGENT_KEY_LOG_TO_SERVER "\":false");
	if (secret) {
		strbuf_addstr(sb, ",\"" AGENT_KEY_SECRET "\":");
		rc |= json_util_write_string(sb, secret);
	}
	strbuf_addstr(sb, "}\n");
	return rc < 0 || sb->failed ? -1 : 0;
}

int agent_link_start(struct agent_link *l, const struct executor_task *task, bool log_to_server,
                     const char *secret, struct weir_error *err)
{
	char key[160];
	struct held *h = calloc(1, sizeof *h);
	struct strbuf sb = STRBUF_INIT;

	agent_proto_task_key(key, sizeof key, (long long)task->job_id, task->role, task->index,
	                     task->attempt);
	if (!h || agent_link_start_line(&sb, task, log_to_server, secret) < 0 ||
	    !(h->start_line = strbuf_detach(&sb, NULL)) ||
	    hashmap_put_str(l->held, key, h, NULL) < 0) {
		if (h)
			free(h->start_line);
		free(h);
		strbuf_release(&sb);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	h->nonce = task->nonce;
	/* out once the turn that started it is stored */
	strbuf_addstr(&l->staged, h->start_line);
	if (strvec_push(&l->staged_keys, key) < 0)
		staged_out(l); /* out of memory: as before, out at the pump */
	pump_arm(l);
	return 0;
}

int agent_link_signal(struct agent_link *l, const struct executor_task *task, int sig,
                      struct weir_error *err)
{
	char key[160];

	agent_proto_task_key(key, sizeof key, (long long)task->job_id, task->role, task->index,
	                     task->attempt);
	struct held *h = hashmap_get_str(l->held, key);
	/* the nonce of the task the link knows under the key (the job's);
	 * none known: 0, which the agent takes as any */
	long long nonce = h ? h->nonce : task->nonce;
	json_t *m = json_pack("{s:s,s:I,s:s,s:i,s:i,s:I,s:i}", AGENT_KEY_KIND, AGENT_MSG_KILL,
	                      AGENT_KEY_JOB, (json_int_t)task->job_id, AGENT_KEY_ROLE, task->role,
	                      AGENT_KEY_INDEX, task->index, AGENT_KEY_ATTEMPT, task->attempt,
	                      AGENT_KEY_NONCE, (json_int_t)nonce, AGENT_KEY_SIG, sig);

	if (!m)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	stage_line(l, m);
	json_decref(m);
	return 0;
}

void agent_link_open(struct agent_link *l)
{
	if (!l || l->open)
		return;
	l->open = true;
	/* the store is read: what the agent holds of jobs it does not know
	 * goes (the held answer came before the recovery) */
	sweep_unknown(l);
	/* what waited is told at the next loop iteration (on_pump) */
	pump_arm(l);
}

bool agent_link_holds(struct agent_link *l, const struct executor_task *task)
{
	char key[160];

	agent_proto_task_key(key, sizeof key, (long long)task->job_id, task->role, task->index,
	                     task->attempt);
	return hashmap_find_str(l->held, key, NULL);
}

void agent_link_destroy(struct agent_link *l)
{
	if (!l)
		return;
	/* a turn not ended asked nothing the store knows of */
	strbuf_reset(&l->staged);
	strvec_release(&l->staged_keys);
	if (l->pipe) {
		/* what is queued, then goodbye: an agent with nothing to do exits */
		strbuf_addstr(&l->out, "{\"" AGENT_KEY_KIND "\":\"" AGENT_MSG_BYE "\"}\n");
		uv_buf_t b = uv_buf_init(l->out.buf, (unsigned)l->out.len);
		uv_try_write((uv_stream_t *)l->pipe, &b, 1);
		uv_read_stop((uv_stream_t *)l->pipe);
		uv_close((uv_handle_t *)l->pipe, handle_free);
	}
	if (l->pump)
		uv_close((uv_handle_t *)l->pump, handle_free);
	if (l->retry)
		uv_close((uv_handle_t *)l->retry, handle_free);
	if (l->retell)
		uv_close((uv_handle_t *)l->retell, handle_free);
	/* acknowledgements not sent: the agent tells those results again */
	if (l->ack)
		uv_close((uv_handle_t *)l->ack, handle_free);
	hashmap_destroy_free(l->held, held_free_value);
	strbuf_release(&l->ack_nonces);
	strbuf_release(&l->out);
	strbuf_release(&l->in);
	strbuf_release(&l->staged);
	strvec_release(&l->staged_keys);
	strbuf_release(&l->untold);
	strbuf_release(&l->acks);
	strv_free(l->args);
	strv_free(l->env);
	free(l->token);
	free(l->home);
	free(l->exe);
	free(l);
}
