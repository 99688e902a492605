/* ui_session.h: the web UI's login sessions, kept in the server's memory.
 *
 * A session is what `POST /ui/login` makes: an id (the weir_session cookie)
 * and a CSRF token, each 32 bytes from getrandom() written as 64 lowercase
 * hex digits, and the user it belongs to.  Sessions are not stored on disk:
 * a restarted server has none, and the browser logs in again.  A session
 * ends at logout or after UI_SESSION_IDLE_MS without use; when the store is
 * full the least recently used one makes room.
 *
 * Ids and CSRF tokens are compared in constant time, over every stored
 * session, so timing tells nothing about which ids exist.  Time is passed
 * in (monotonic milliseconds) so that tests need no clock.
 */
#ifndef WEIR_API_UI_SESSION_H
#define WEIR_API_UI_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/role.h"

#define UI_SESSION_ID_LEN 64 /* hex digits of the id and of the CSRF token */
#define UI_SESSION_IDLE_MS (12ll * 3600 * 1000)
#define UI_SESSION_MAX 1024
#define UI_SESSION_USER_MAX 128

struct ui_session {
	char id[UI_SESSION_ID_LEN + 1];
	char csrf[UI_SESSION_ID_LEN + 1];
	char user[UI_SESSION_USER_MAX + 1];
	enum weir_role role; /* what the user may do (model/role.h) */
	int64_t last_used_ms;
};

struct ui_sessions; /* opaque */

/* An empty store; NULL on out of memory. */
struct ui_sessions *ui_sessions_create(void);
/* Forgets every session (their ids are wiped); NULL is a no-op. */
void ui_sessions_destroy(struct ui_sessions *s);

/* A new session for `user` (at most UI_SESSION_USER_MAX bytes, else -1)
 * with the role `role`.  Returns a copy in *out.  0, or -1 with err (no
 * randomness, bad user). */
int ui_sessions_open_as(struct ui_sessions *s, const char *user, enum weir_role role,
                        int64_t now_ms, struct ui_session *out, struct weir_error *err);
/* ui_sessions_open_as() with ROLE_ADMIN. */
int ui_sessions_open(struct ui_sessions *s, const char *user, int64_t now_ms,
                     struct ui_session *out, struct weir_error *err);
/* The live session with this id, its idle clock restarted; a copy in *out.
 * false when none (unknown, expired or malformed id). */
bool ui_sessions_find(struct ui_sessions *s, const char *id, int64_t now_ms,
                      struct ui_session *out);
/* Ends the session with this id; whether there was one. */
bool ui_sessions_close(struct ui_sessions *s, const char *id);
/* How many live sessions there are at now_ms (drops expired ones). */
size_t ui_sessions_count(struct ui_sessions *s, int64_t now_ms);

/* Whether `given` (a header value, may be NULL) equals the session's CSRF
 * token, in constant time. */
bool ui_session_csrf_ok(const struct ui_session *sess, const char *given);

/* The value of cookie `name` in a Cookie header ("a=1; name=v; b=2"),
 * copied into out (size outsz); false when absent, empty or too long. */
bool ui_cookie_value(const char *cookie_header, const char *name, char *out, size_t outsz);

#endif
