/* auth_throttle.c: the per-address table of password checks
 * (auth_throttle.h). */
#include "api/auth_throttle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	char addr[64]; /* "": free */
	unsigned count;
	int64_t since_ms; /* the window's start */
	int64_t seen_ms;  /* the last check: who gives up a slot */
};

struct auth_throttle {
	unsigned attempts;
	int64_t window_ms;
	struct slot slots[AUTH_THROTTLE_SLOTS];
};

struct auth_throttle *auth_throttle_create(unsigned attempts, int64_t window_ms)
{
	struct auth_throttle *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->attempts = attempts ? attempts : AUTH_THROTTLE_DEFAULT_ATTEMPTS;
	t->window_ms = window_ms > 0 ? window_ms : AUTH_THROTTLE_DEFAULT_WINDOW_MS;
	return t;
}

void auth_throttle_destroy(struct auth_throttle *t)
{
	free(t);
}

/* The table's key: an unknown address is one address, "?". */
static const char *key(const char *addr)
{
	return addr && *addr ? addr : "?";
}

static struct slot *find(const struct auth_throttle *t, const char *addr)
{
	addr = key(addr);
	for (int i = 0; i < AUTH_THROTTLE_SLOTS; i++)
		if (t->slots[i].addr[0] && !strcmp(t->slots[i].addr, addr))
			return (struct slot *)&t->slots[i];
	return NULL;
}

int64_t auth_throttle_wait_ms(const struct auth_throttle *t, const char *addr, int64_t now_ms)
{
	const struct slot *s = find(t, addr);

	if (!s || now_ms - s->since_ms >= t->window_ms || s->count < t->attempts)
		return 0;
	return s->since_ms + t->window_ms - now_ms;
}

void auth_throttle_note(struct auth_throttle *t, const char *addr, int64_t now_ms)
{
	struct slot *s = find(t, addr);

	if (!s) {
		s = &t->slots[0];
		for (int i = 0; i < AUTH_THROTTLE_SLOTS && s->addr[0]; i++)
			if (!t->slots[i].addr[0] || t->slots[i].seen_ms < s->seen_ms)
				s = &t->slots[i];
		snprintf(s->addr, sizeof s->addr, "%s", key(addr));
		s->count = 0;
		s->since_ms = now_ms;
	}
	if (now_ms - s->since_ms >= t->window_ms) {
		s->count = 0;
		s->since_ms = now_ms;
	}
	s->count++;
	s->seen_ms = now_ms;
}

void auth_throttle_clear(struct auth_throttle *t, const char *addr)
{
	struct slot *s = find(t, addr);

	if (s)
		memset(s, 0, sizeof *s);
}
