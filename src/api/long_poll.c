/* long_poll.c: suspended requests, their notices and deadlines
 * (long_poll.h). */
#include "api/long_poll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/reply.h"
#include "lib/clock.h"

struct waiter {
	struct http_request *req;
	int kind;
	int64_t key;
	int64_t deadline_ms;
	long_poll_check_fn check;
	void *arg;
	struct waiter *prev, *next;
};

#define SEEN_SLOTS 8

/* What a check saw of a key, and the notice count of its kind then. */
struct seen {
	int kind;
	int64_t key;
	uint64_t notices;
	char what[LONG_POLL_SEEN_MAX + 1];
};

struct long_polls {
	uv_timer_t timer;
	bool timer_on;
	struct waiter *waiters;
	uint64_t notices[LONG_POLL_KINDS]; /* long_polls_notify() calls, by kind */
	struct seen seen[SEEN_SLOTS];
	size_t seen_next; /* the slot the next new key takes */
};

static void on_deadline(uv_timer_t *t);

/* The timer goes off at the earliest deadline, or not at all. */
static void timer_arm(struct long_polls *lp)
{
	int64_t first = INT64_MAX, now;

	for (struct waiter *w = lp->waiters; w; w = w->next)
		if (w->deadline_ms < first)
			first = w->deadline_ms;
	if (first == INT64_MAX) {
		if (lp->timer_on)
			uv_timer_stop(&lp->timer);
		lp->timer_on = false;
		return;
	}
	now = clock_mono_ms();
	uv_timer_start(&lp->timer, on_deadline, first > now ? (uint64_t)(first - now) : 0, 0);
	lp->timer_on = true;
}

static void waiter_unlink(struct long_polls *lp, struct waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		lp->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	free(w->arg);
	free(w);
}

/* Asks one waiter; frees it once answered. */
static bool waiter_ask(struct long_polls *lp, struct waiter *w, bool timed_out)
{
	if (!w->check(w->req, w->arg, timed_out))
		return false;
	waiter_unlink(lp, w);
	return true;
}

static void on_deadline(uv_timer_t *t)
{
	struct long_polls *lp = t->data;
	int64_t now = clock_mono_ms();
	struct waiter *w, *wn;

	lp->timer_on = false;
	for (w = lp->waiters; w; w = wn) {
		wn = w->next;
		if (now >= w->deadline_ms)
			waiter_ask(lp, w, true);
	}
	timer_arm(lp);
}

struct long_polls *long_polls_create(uv_loop_t *loop)
{
	struct long_polls *lp = calloc(1, sizeof *lp);

	if (!lp)
		return NULL;
	uv_timer_init(loop, &lp->timer);
	lp->timer.data = lp;
	return lp;
}

static void timer_closed(uv_handle_t *h)
{
	free(h->data);
}

void long_polls_destroy(struct long_polls *lp)
{
	if (!lp)
		return;
	while (lp->waiters) {
		reply_status(lp->waiters->req, 503, "the server is stopping");
		waiter_unlink(lp, lp->waiters);
	}
	uv_timer_stop(&lp->timer);
	uv_close((uv_handle_t *)&lp->timer, timer_closed);
}

int long_polls_add(struct long_polls *lp, struct http_request *req, int kind, int64_t key,
                   int64_t deadline_ms, long_poll_check_fn check, void *arg)
{
	struct waiter *w = arg ? calloc(1, sizeof *w) : NULL;

	if (!w) {
		free(arg);
		reply_status(req, 500, "out of memory");
		return -1;
	}
	w->req = req;
	w->kind = kind;
	w->key = key;
	w->deadline_ms = deadline_ms;
	w->check = check;
	w->arg = arg;
	w->next = lp->waiters;
	if (lp->waiters)
		lp->waiters->prev = w;
	lp->waiters = w;
	http_request_suspend(req);
	timer_arm(lp);
	return 0;
}

void long_polls_notify(struct long_polls *lp, int kind, int64_t key)
{
	struct waiter *w, *wn;
	bool any = false;

	if (!lp)
		return;
	/* what was seen of every key of the kind may be out of date now */
	if (kind >= 0 && kind < LONG_POLL_KINDS)
		lp->notices[kind]++;
	for (w = lp->waiters; w; w = wn) {
		wn = w->next;
		if (w->kind == kind && (key == LONG_POLL_ANY_KEY || w->key == key))
			any = waiter_ask(lp, w, false) || any;
	}
	if (any)
		timer_arm(lp);
}

void long_polls_hurry(struct long_polls *lp, struct http_request *req, int64_t at_ms)
{
	if (!lp)
		return;
	for (struct waiter *w = lp->waiters; w; w = w->next)
		if (w->req == req) {
			if (at_ms < w->deadline_ms) {
				w->deadline_ms = at_ms;
				timer_arm(lp);
			}
			return;
		}
}

void long_polls_seen(struct long_polls *lp, int kind, int64_t key, const char *what)
{
	struct seen *slot = NULL;

	if (!lp || kind < 0 || kind >= LONG_POLL_KINDS || strlen(what) > LONG_POLL_SEEN_MAX)
		return;
	for (size_t i = 0; i < SEEN_SLOTS && !slot; i++)
		if (lp->seen[i].what[0] && lp->seen[i].kind == kind && lp->seen[i].key == key)
			slot = &lp->seen[i];
	if (!slot) {
		slot = &lp->seen[lp->seen_next];
		lp->seen_next = (lp->seen_next + 1) % SEEN_SLOTS;
	}
	slot->kind = kind;
	slot->key = key;
	slot->notices = lp->notices[kind];
	snprintf(slot->what, sizeof slot->what, "%s", what);
}

bool long_polls_still(const struct long_polls *lp, int kind, int64_t key, const char *what)
{
	if (!lp || kind < 0 || kind >= LONG_POLL_KINDS || !what[0])
		return false;
	for (size_t i = 0; i < SEEN_SLOTS; i++) {
		const struct seen *s = &lp->seen[i];
		if (s->what[0] && s->kind == kind && s->key == key)
			return s->notices == lp->notices[kind] && !strcmp(s->what, what);
	}
	return false;
}
