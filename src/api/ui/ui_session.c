/* ui_session.c: the in-memory store of web UI sessions (api/ui_session.h).
 *
 * A fixed table of UI_SESSION_MAX slots: a server has a handful of people
 * logged in, and a bound keeps a client that logs in in a loop from growing
 * the server without limit (the least recently used session goes first).
 */
#include "api/ui/ui_session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct ui_sessions {
	struct ui_session slot[UI_SESSION_MAX]; /* free when id[0] == '\0' */
};

struct ui_sessions *ui_sessions_create(void)
{
	return calloc(1, sizeof(struct ui_sessions));
}

void ui_sessions_destroy(struct ui_sessions *s)
{
	if (!s)
		return;
	explicit_bzero(s, sizeof *s);
	free(s);
}

static int random_hex(char out[UI_SESSION_ID_LEN + 1], struct weir_error *err)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char raw[UI_SESSION_ID_LEN / 2];

	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		return weir_error_set(err, WEIR_E_INTERNAL,
		                      "session id: cannot draw random bytes: %s", strerror(errno));
	for (size_t i = 0; i < sizeof raw; i++) {
		out[2 * i] = digits[raw[i] >> 4];
		out[2 * i + 1] = digits[raw[i] & 15];
	}
	out[UI_SESSION_ID_LEN] = '\0';
	explicit_bzero(raw, sizeof raw);
	return 0;
}

/* Whether a and b (b of any length, NUL-terminated) hold the same
 * UI_SESSION_ID_LEN characters; no early exit on the bytes. */
static bool id_eq(const char *a, const char *b)
{
	unsigned char diff = 0;

	if (!b || strnlen(b, UI_SESSION_ID_LEN + 1) != UI_SESSION_ID_LEN)
		return false;
	for (size_t i = 0; i < UI_SESSION_ID_LEN; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

static bool expired(const struct ui_session *e, int64_t now_ms)
{
	return now_ms - e->last_used_ms >= UI_SESSION_IDLE_MS;
}

static void drop(struct ui_session *e)
{
	explicit_bzero(e, sizeof *e);
}

static void sweep(struct ui_sessions *s, int64_t now_ms)
{
	for (size_t i = 0; i < UI_SESSION_MAX; i++)
		if (s->slot[i].id[0] && expired(&s->slot[i], now_ms))
			drop(&s->slot[i]);
}

int ui_sessions_open(struct ui_sessions *s, const char *user, int64_t now_ms,
                     struct ui_session *out, struct weir_error *err)
{
	return ui_sessions_open_as(s, user, ROLE_ADMIN, now_ms, out, err);
}

int ui_sessions_open_as(struct ui_sessions *s, const char *user, enum weir_role role,
                        int64_t now_ms, struct ui_session *out, struct weir_error *err)
{
	struct ui_session *free_slot = NULL, *lru = NULL, e;

	if (!user || !*user || strlen(user) > UI_SESSION_USER_MAX)
		return weir_error_set(err, WEIR_E_INVALID, "session user: expected 1 to %d bytes",
		                      UI_SESSION_USER_MAX);
	memset(&e, 0, sizeof e);
	if (random_hex(e.id, err) < 0 || random_hex(e.csrf, err) < 0)
		return -1;
	memcpy(e.user, user, strlen(user) + 1);
	e.role = role;
	e.last_used_ms = now_ms;
	sweep(s, now_ms);
	for (size_t i = 0; i < UI_SESSION_MAX && !free_slot; i++) {
		struct ui_session *c = &s->slot[i];
		if (!c->id[0])
			free_slot = c;
		else if (!lru || c->last_used_ms < lru->last_used_ms)
			lru = c;
	}
	if (!free_slot)
		free_slot = lru; /* full: the least recently used session ends */
	*free_slot = e;
	if (out)
		*out = e;
	explicit_bzero(&e, sizeof e);
	return 0;
}

static struct ui_session *lookup(struct ui_sessions *s, const char *id, int64_t now_ms)
{
	struct ui_session *found = NULL;

	if (!id || strnlen(id, UI_SESSION_ID_LEN + 1) != UI_SESSION_ID_LEN)
		return NULL;
	/* every slot is compared, so the time taken does not depend on where
	 * (or whether) the id sits */
	for (size_t i = 0; i < UI_SESSION_MAX; i++) {
		struct ui_session *c = &s->slot[i];
		bool eq = id_eq(c->id, id);
		if (eq && c->id[0])
			found = c;
	}
	if (found && expired(found, now_ms)) {
		drop(found);
		return NULL;
	}
	return found;
}

bool ui_sessions_find(struct ui_sessions *s, const char *id, int64_t now_ms, struct ui_session *out)
{
	struct ui_session *e = lookup(s, id, now_ms);

	if (!e)
		return false;
	e->last_used_ms = now_ms;
	if (out)
		*out = *e;
	return true;
}

bool ui_sessions_close(struct ui_sessions *s, const char *id)
{
	/* expiry is no matter here: any matching session goes */
	struct ui_session *e = lookup(s, id, INT64_MIN / 2);

	if (!e)
		return false;
	drop(e);
	return true;
}

size_t ui_sessions_count(struct ui_sessions *s, int64_t now_ms)
{
	size_t n = 0;

	sweep(s, now_ms);
	for (size_t i = 0; i < UI_SESSION_MAX; i++)
		n += s->slot[i].id[0] != '\0';
	return n;
}

bool ui_session_csrf_ok(const struct ui_session *sess, const char *given)
{
	return sess && sess->csrf[0] && id_eq(sess->csrf, given);
}

bool ui_cookie_value(const char *cookie_header, const char *name, char *out, size_t outsz)
{
	size_t nl = strlen(name);
	const char *p = cookie_header;

	if (!p || !outsz)
		return false;
	while (*p) {
		const char *end;
		size_t vl;

		while (*p == ' ' || *p == ';' || *p == '\t')
			p++;
		end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		if ((size_t)(end - p) > nl && !strncmp(p, name, nl) && p[nl] == '=') {
			const char *v = p + nl + 1;
			vl = (size_t)(end - v);
			while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
				vl--;
			if (vl == 0 || vl >= outsz)
				return false;
			memcpy(out, v, vl);
			out[vl] = '\0';
			return true;
		}
		p = end;
	}
	return false;
}
