/* ui_auth.h: how a browser logs in to the web UI and stays logged in.
 *
 * Routes (all answers JSON; errors are RFC 7807 problems):
 *   POST /ui/login    {"username","password"} (a user of the server's
 *                     configuration) or {"token"} (the server's token):
 *                     200 {"user","csrf_token"} and the session cookie
 *                     "weir_session=ID; HttpOnly; SameSite=Strict; Path=/";
 *                     401 after a fixed delay when wrong; 415 unless the
 *                     body is application/json.
 *   GET  /ui/session  200 {"user","csrf_token"} for a live session, or 401.
 *
 * A session carries its user's role (model/role.h; the token's is Admin),
 * which the route table's role column is checked against.
 *   POST /ui/logout   ends the session (needs X-CSRF-Token); the cookie is
 *                     cleared.
 *
 * The API's other routes accept the cookie instead of a token
 * (ui_auth_cookie): a cookie-authenticated request with a method other
 * than GET/HEAD/OPTIONS must carry the session's CSRF token in the
 * X-CSRF-Token header.  Independent of how it authenticates, a
 * state-changing request that a browser marks as coming from another
 * origin (Origin not matching Host, or Sec-Fetch-Site: cross-site) is
 * refused (ui_auth_origin_ok): that also covers a browser's cached Basic
 * credentials.  docs/internals/ui.md explains the choices.
 */
#ifndef WEIR_API_UI_AUTH_H
#define WEIR_API_UI_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "api/auth_gate.h"
#include "api/http.h"
#include "api/ui/ui_session.h"

#define UI_SESSION_COOKIE "weir_session"
#define UI_CSRF_HEADER "X-CSRF-Token"
/* How long a failed login waits before its 401, so that guessing is slow
 * and a wrong name and a wrong password look alike. */
#define UI_LOGIN_FAIL_DELAY_MS 300

struct ui_auth; /* opaque: the session store and failed logins being delayed */

/* NULL on out of memory. */
struct ui_auth *ui_auth_create(uv_loop_t *loop);
/* Answers the failed logins still waiting (401) and forgets every session.
 * Call before the http server is destroyed.  NULL is a no-op. */
void ui_auth_destroy(struct ui_auth *ua);

/* Whether path is one of /ui/login, /ui/session, /ui/logout. */
bool ui_auth_owns(const char *path);
/* POST /ui/login.  `token` is the server's token; `gate` (may be NULL)
 * checks the configured users' passwords, off the loop: a login may be
 * suspended and handed to the router again with the verdict. */
void ui_auth_login_route(struct ui_auth *ua, struct http_request *req, const char *token,
                         struct auth_gate *gate);
/* POST /ui/logout. */
void ui_auth_logout_route(struct ui_auth *ua, struct http_request *req);
/* GET /ui/session: the session's user and CSRF token, or a 401. */
void ui_auth_session_route(struct ui_auth *ua, struct http_request *req);
/* The 405 of those routes (problem details, with an Allow header). */
void ui_auth_no_method(struct http_request *req);
/* Whether the session cookie always says Secure (a server reached over
 * https through a proxy); else it says so when the request came over TLS
 * (http_request_is_tls). */
void ui_auth_set_secure_cookie(struct ui_auth *ua, bool always);

enum ui_auth_result {
	UI_AUTH_NONE,    /* no cookie, or no live session with its id */
	UI_AUTH_OK,      /* a live session (and the CSRF token where needed) */
	UI_AUTH_BAD_CSRF /* a live session, but a state-changing request lacks its token */
};
/* Authenticates a request by its session cookie. */
enum ui_auth_result ui_auth_cookie(struct ui_auth *ua, struct http_request *req);

/* Whether a method changes nothing (GET, HEAD, OPTIONS). */
bool ui_auth_method_safe(const char *method);
/* false, with a reason in why, when a browser says the request comes from
 * another origin; true for requests without Origin (scripts, weir's CLI). */
bool ui_auth_origin_ok(struct http_request *req, char *why, size_t whysz);
/* Whether the request comes from a page's script (fetch) rather than a
 * navigation or a plain client: a 401 to it must not challenge with Basic,
 * or the browser pops its own password dialog over the UI. */
bool ui_auth_from_script(struct http_request *req);

#endif
