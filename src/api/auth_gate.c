/* auth_gate.c: password checks on libuv's thread pool, a per-address
 * throttle in front (auth_gate.h). */
#include "api/auth_gate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/auth_throttle.h"
#include "lib/log.h"

/* the verdict kept on a request across its redispatch */
#define MARK_OK 1
#define MARK_NO 2

/* One check: queued, or running on a thread.  gate NULL once the gate is
 * gone (the thread's end then only frees it). */
struct item {
	uv_work_t work;
	struct basic_attempt a;
	struct http_request *req;
	struct auth_gate *gate;
	char addr[64];
	unsigned users; /* the gate's users when it began (auth_gate.users) */
	bool running;
	struct item *prev, *next;
};

struct auth_gate {
	uv_loop_t *loop;
	struct basic_auth *basic;
	struct auth_throttle *throttle;
	struct item *first, *last; /* running ones and queued ones, in arrival order */
	int running, queued;
	/* moved at every auth_gate_set_users(): a check begun on the users
	 * before is begun again on the new ones, so that a password changed
	 * or a user deleted meanwhile never passes (nor is remembered) */
	unsigned users;
};

struct auth_gate *auth_gate_create(uv_loop_t *loop, unsigned attempts, int64_t window_ms)
{
	struct auth_gate *g = calloc(1, sizeof *g);

	if (!g)
		return NULL;
	g->loop = loop;
	g->throttle = auth_throttle_create(attempts, window_ms);
	if (!g->throttle) {
		free(g);
		return NULL;
	}
	return g;
}

static void unlink_item(struct item *it)
{
	struct auth_gate *g = it->gate;

	if (it->prev)
		it->prev->next = it->next;
	else
		g->first = it->next;
	if (it->next)
		it->next->prev = it->prev;
	else
		g->last = it->prev;
	it->prev = it->next = NULL;
	if (it->running)
		g->running--;
	else
		g->queued--;
	it->gate = NULL;
}

void auth_gate_destroy(struct auth_gate *g)
{
	if (!g)
		return;
	while (g->first) {
		struct item *it = g->first;
		bool running = it->running;

		unlink_item(it);
		http_request_respond_errorf(it->req, WEIR_E_UNAVAILABLE, "the server is stopping");
		it->req = NULL;
		if (!running) {
			basic_auth_finish(NULL, &it->a);
			free(it);
		}
	}
	auth_throttle_destroy(g->throttle);
	basic_auth_destroy(g->basic);
	free(g);
}

int auth_gate_set_users(struct auth_gate *g, const struct basic_user *users, size_t n,
                        struct weir_error *err)
{
	struct basic_auth *ba = basic_auth_create(users, n, err);

	if (!ba)
		return -1;
	basic_auth_destroy(g->basic);
	g->basic = ba;
	g->users++;
	return 0;
}

size_t auth_gate_count(const struct auth_gate *g)
{
	return g ? basic_auth_count(g->basic) : 0;
}

enum weir_role auth_gate_role(const struct auth_gate *g, const char *user)
{
	return g ? basic_auth_role(g->basic, user) : ROLE_NONE;
}

static void work_run(uv_work_t *w)
{
	struct item *it = w->data;

	basic_auth_run(&it->a);
}

static void start_next(struct auth_gate *g);

static void work_after(uv_work_t *w, int status)
{
	struct item *it = w->data;
	struct auth_gate *g = it->gate;
	struct http_request *req = it->req;
	bool ok;

	(void)status;
	if (!g) { /* the gate is gone; the request was answered then */
		basic_auth_finish(NULL, &it->a);
		free(it);
		return;
	}
	if (it->users != g->users) { /* the users changed: checked again, on the new ones */
		basic_auth_finish(NULL, &it->a);
		unlink_item(it);
		free(it);
		start_next(g);
		http_request_redispatch(req);
		return;
	}
	ok = basic_auth_finish(g->basic, &it->a) && status == 0;
	if (ok)
		auth_throttle_clear(g->throttle, it->addr);
	unlink_item(it);
	free(it);
	start_next(g);
	http_request_set_mark(req, ok ? MARK_OK : MARK_NO);
	http_request_redispatch(req);
}

/* Queued checks onto threads while fewer than AUTH_GATE_RUNNING run. */
static void start_next(struct auth_gate *g)
{
	for (struct item *it = g->first; it && g->running < AUTH_GATE_RUNNING;) {
		struct item *next = it->next;

		if (!it->running) {
			it->running = true;
			g->queued--;
			g->running++;
			if (uv_queue_work(g->loop, &it->work, work_run, work_after) < 0) {
				/* no thread: the check fails, said so */
				log_warn("password check: cannot queue work on a thread");
				it->a.ok = false;
				work_after(&it->work, -1);
				return;
			}
		}
		it = next;
	}
}

/* The peer's address without its port: the throttle's key. */
static void peer_addr(struct http_request *req, char *buf, size_t size)
{
	char *colon;

	http_request_peer(req, buf, size);
	colon = strrchr(buf, ':');
	if (colon && (buf[0] != '[' || colon[-1] == ']'))
		*colon = '\0';
}

static enum auth_gate_result check(struct auth_gate *g, struct http_request *req, int begun,
                                   struct basic_attempt *a, int64_t *retry_s)
{
	struct item *it;
	int64_t wait_ms;
	char addr[64];

	if (begun != 0)
		return begun == 1 ? AUTH_GATE_OK : AUTH_GATE_NO;
	peer_addr(req, addr, sizeof addr);
	wait_ms = auth_throttle_wait_ms(g->throttle, addr, (int64_t)uv_now(g->loop));
	if (wait_ms > 0 || g->queued >= AUTH_GATE_QUEUE) {
		basic_auth_finish(NULL, a);
		*retry_s = wait_ms > 0 ? (wait_ms + 999) / 1000 : 1;
		return wait_ms > 0 ? AUTH_GATE_THROTTLED : AUTH_GATE_BUSY;
	}
	if (!(it = calloc(1, sizeof *it))) {
		basic_auth_finish(NULL, a);
		return AUTH_GATE_NO;
	}
	auth_throttle_note(g->throttle, addr, (int64_t)uv_now(g->loop));
	it->a = *a;
	it->req = req;
	it->gate = g;
	it->users = g->users;
	it->work.data = it;
	snprintf(it->addr, sizeof it->addr, "%s", addr);
	it->prev = g->last;
	if (g->last)
		g->last->next = it;
	else
		g->first = it;
	g->last = it;
	g->queued++;
	http_request_suspend(req);
	start_next(g);
	return AUTH_GATE_WAIT;
}

/* Whether the answer is known without a check: the verdict a redispatched
 * request carries, or no gate. */
static bool settled(const struct auth_gate *g, struct http_request *req, enum auth_gate_result *r)
{
	int m = http_request_mark(req);

	*r = m == MARK_OK ? AUTH_GATE_OK : AUTH_GATE_NO;
	return m == MARK_OK || m == MARK_NO || !g;
}

enum auth_gate_result auth_gate_basic(struct auth_gate *g, struct http_request *req,
                                      const char *authorization, int64_t *retry_s)
{
	struct basic_attempt a;
	enum auth_gate_result r;

	if (settled(g, req, &r))
		return r;
	return check(g, req, basic_auth_begin(g->basic, authorization, &a), &a, retry_s);
}

enum auth_gate_result auth_gate_user(struct auth_gate *g, struct http_request *req,
                                     const char *user, const char *password, int64_t *retry_s)
{
	struct basic_attempt a;
	enum auth_gate_result r;

	if (settled(g, req, &r))
		return r;
	return check(g, req, basic_auth_begin_user(g->basic, user, password, &a), &a, retry_s);
}
