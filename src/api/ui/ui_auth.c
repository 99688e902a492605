/* ui_auth.c: the web UI's login, session and logout routes, cookie
 * authentication with its CSRF check, and the cross-origin check
 * (api/ui_auth.h).
 *
 * A failed login is answered from a timer UI_LOGIN_FAIL_DELAY_MS later,
 * the request suspended meanwhile: the loop keeps serving others.
 */
#include "api/ui/ui_auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "api/reply.h"
#include "api/ui/ui_assets.h"
#include "lib/clock.h"
#include "lib/log.h"

#define TOKEN_USER "token" /* the user a token login is shown as */

struct delayed {
	uv_timer_t timer;
	struct http_request *req;
	struct ui_auth *ua;
	struct delayed *prev, *next;
};

struct ui_auth {
	uv_loop_t *loop;
	struct ui_sessions *sessions;
	struct delayed *delayed;
	bool secure_always; /* ui_auth_set_secure_cookie */
};

struct ui_auth *ui_auth_create(uv_loop_t *loop)
{
	struct ui_auth *ua = calloc(1, sizeof *ua);

	if (!ua)
		return NULL;
	ua->loop = loop;
	ua->sessions = ui_sessions_create();
	if (!ua->sessions) {
		free(ua);
		return NULL;
	}
	return ua;
}

static void delayed_closed(uv_handle_t *h)
{
	free(h->data);
}

static void delayed_unlink(struct delayed *d)
{
	if (d->prev)
		d->prev->next = d->next;
	else if (d->ua)
		d->ua->delayed = d->next;
	if (d->next)
		d->next->prev = d->prev;
	d->prev = d->next = NULL;
	d->ua = NULL;
}

static void respond_login_failed(struct http_request *req)
{
	reply_problem(req, 401,
	              "wrong user name or password, or wrong token: log in with a "
	              "user of the server's configuration or the server's token");
}

static void on_delay(uv_timer_t *t)
{
	struct delayed *d = t->data;

	delayed_unlink(d);
	respond_login_failed(d->req);
	uv_close((uv_handle_t *)&d->timer, delayed_closed);
}

void ui_auth_destroy(struct ui_auth *ua)
{
	if (!ua)
		return;
	while (ua->delayed) {
		struct delayed *d = ua->delayed;
		delayed_unlink(d);
		uv_timer_stop(&d->timer);
		respond_login_failed(d->req);
		uv_close((uv_handle_t *)&d->timer, delayed_closed);
	}
	ui_sessions_destroy(ua->sessions);
	free(ua);
}

static void fail_later(struct ui_auth *ua, struct http_request *req)
{
	struct delayed *d = calloc(1, sizeof *d);

	if (!d) {
		respond_login_failed(req);
		return;
	}
	d->req = req;
	d->ua = ua;
	d->next = ua->delayed;
	if (ua->delayed)
		ua->delayed->prev = d;
	ua->delayed = d;
	uv_timer_init(ua->loop, &d->timer);
	d->timer.data = d;
	uv_timer_start(&d->timer, on_delay, UI_LOGIN_FAIL_DELAY_MS, 0);
	http_request_suspend(req);
}

void ui_auth_set_secure_cookie(struct ui_auth *ua, bool always)
{
	ua->secure_always = always;
}

/* "; Secure" when the browser reached the server over https. */
static const char *secure_attr(const struct ui_auth *ua, const struct http_request *req)
{
	return ua->secure_always || http_request_is_tls(req) ? "; Secure" : "";
}

bool ui_auth_owns(const char *path)
{
	return !strcmp(path, "/ui/login") || !strcmp(path, "/ui/session") ||
	       !strcmp(path, "/ui/logout");
}

bool ui_auth_method_safe(const char *method)
{
	return !strcmp(method, "GET") || !strcmp(method, "HEAD") || !strcmp(method, "OPTIONS");
}

/* Whether a and b are equal strings; no early exit on the bytes of b. */
static bool str_eq_ct(const char *a, const char *b)
{
	size_t al = strlen(a), bl = strlen(b);
	unsigned char diff = 0;

	for (size_t i = 0; i < bl; i++)
		diff |= (unsigned char)(b[i] ^ (i < al ? a[i] : 0));
	return diff == 0 && al == bl && bl > 0;
}

bool ui_auth_origin_ok(struct http_request *req, char *why, size_t whysz)
{
	const char *origin = http_request_header(req, "Origin");
	const char *site = http_request_header(req, "Sec-Fetch-Site");
	const char *host = http_request_header(req, "Host");
	const char *hp;

	if (site && !strcasecmp(site, "cross-site")) {
		snprintf(why, whysz, "cross-site request refused (Sec-Fetch-Site: cross-site)");
		return false;
	}
	if (!origin)
		return true;
	if (!strncasecmp(origin, "http://", 7))
		hp = origin + 7;
	else if (!strncasecmp(origin, "https://", 8))
		hp = origin + 8;
	else
		hp = NULL;
	if (!hp || !host || strcasecmp(hp, host)) {
		snprintf(why, whysz,
		         "cross-origin request refused: Origin \"%.100s\" does not match Host "
		         "\"%.100s\" (expected http://HOST of this server)",
		         origin, host ? host : "");
		return false;
	}
	return true;
}

bool ui_auth_from_script(struct http_request *req)
{
	const char *mode = http_request_header(req, "Sec-Fetch-Mode");
	char id[UI_SESSION_ID_LEN + 1];

	if (mode && strcasecmp(mode, "navigate"))
		return true;
	return ui_cookie_value(http_request_header(req, "Cookie"), UI_SESSION_COOKIE, id,
	                       sizeof id);
}

static bool session_of(struct ui_auth *ua, struct http_request *req, struct ui_session *out)
{
	char id[UI_SESSION_ID_LEN + 1];

	if (!ui_cookie_value(http_request_header(req, "Cookie"), UI_SESSION_COOKIE, id, sizeof id))
		return false;
	return ui_sessions_find(ua->sessions, id, clock_mono_ms(), out);
}

enum ui_auth_result ui_auth_cookie(struct ui_auth *ua, struct http_request *req)
{
	struct ui_session s;
	enum ui_auth_result r = UI_AUTH_OK;

	if (!session_of(ua, req, &s))
		return UI_AUTH_NONE;
	if (!ui_auth_method_safe(http_request_method(req)) &&
	    !ui_session_csrf_ok(&s, http_request_header(req, UI_CSRF_HEADER)))
		r = UI_AUTH_BAD_CSRF;
	http_request_set_user(req, s.user); /* the event log's owner */
	http_request_set_role(req, s.role);
	explicit_bzero(&s, sizeof s);
	return r;
}

static void respond_session(struct http_request *req, const struct ui_session *s)
{
	http_request_respond_json(req, 200,
	                          json_pack("{s:s, s:s}", "user", s->user, "csrf_token", s->csrf));
}

static bool is_json(const char *ctype)
{
	size_t n = strlen("application/json");

	return ctype && !strncasecmp(ctype, "application/json", n) &&
	       (ctype[n] == '\0' || ctype[n] == ';' || ctype[n] == ' ');
}

static void route_login(struct ui_auth *ua, struct http_request *req, const char *token,
                        struct auth_gate *gate)
{
	const char *body;
	size_t len;
	json_t *j = NULL;
	json_error_t je;
	const char *user = NULL, *password = NULL, *given_token = NULL, *who = NULL;
	enum weir_role role = ROLE_NONE;
	struct ui_session s;
	struct weir_error err = {0};
	char cookie[UI_SESSION_ID_LEN + 80];
	int64_t retry_s = 1;
	enum auth_gate_result r;

	if (!is_json(http_request_header(req, "Content-Type"))) {
		reply_problem(req, 415, "POST /ui/login: expected Content-Type: application/json");
		return;
	}
	body = http_request_body(req, &len);
	j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(j) ||
	    json_unpack_ex(j, &je, JSON_STRICT, "{s?s, s?s, s?s}", "username", &user, "password",
	                   &password, "token", &given_token) < 0 ||
	    (given_token ? (user || password) : !(user && password))) {
		reply_problem(req, 400,
		              "POST /ui/login: expected a JSON object {\"username\": U, "
		              "\"password\": P} or {\"token\": T}");
		goto out;
	}
	if (given_token) {
		if (str_eq_ct(token, given_token)) {
			who = TOKEN_USER;
			role = ROLE_ADMIN;
		}
	} else if ((r = auth_gate_user(gate, req, user, password, &retry_s)) == AUTH_GATE_OK) {
		who = user;
		role = auth_gate_role(gate, user);
	} else if (r == AUTH_GATE_WAIT) {
		goto out; /* checked off the loop; back here with the verdict */
	} else if (r != AUTH_GATE_NO) {
		char after[32];
		snprintf(after, sizeof after, "%lld", (long long)retry_s);
		http_request_add_header(req, "Retry-After", after);
		reply_problemf(req, r == AUTH_GATE_THROTTLED ? 429 : 503,
		               "too many password checks %s: try again in %lld s",
		               r == AUTH_GATE_THROTTLED ? "from this address" : "waiting",
		               (long long)retry_s);
		goto out;
	}
	if (!who) {
		/* the name given is not logged: it is the client's text, maybe a
		 * password typed in the wrong field */
		log_warn("web UI: a failed login (%s)",
		         given_token ? "token" : "user and password");
		fail_later(ua, req);
		goto out;
	}
	if (ui_sessions_open_as(ua->sessions, who, role, clock_mono_ms(), &s, &err) < 0) {
		reply_problem_error(req, &err);
		goto out;
	}
	snprintf(cookie, sizeof cookie,
	         UI_SESSION_COOKIE "=%s; HttpOnly; SameSite=Strict; Path=/%s", s.id,
	         secure_attr(ua, req));
	http_request_add_header(req, "Set-Cookie", cookie);
	log_info("web UI: %s logged in", who);
	http_request_set_user(req, who);
	respond_session(req, &s);
	explicit_bzero(cookie, sizeof cookie);
	explicit_bzero(&s, sizeof s);
out:
	json_decref(j);
}

static void route_logout(struct ui_auth *ua, struct http_request *req)
{
	char id[UI_SESSION_ID_LEN + 1];
	struct ui_session s;

	if (!ui_cookie_value(http_request_header(req, "Cookie"), UI_SESSION_COOKIE, id,
	                     sizeof id) ||
	    !ui_sessions_find(ua->sessions, id, clock_mono_ms(), &s)) {
		reply_problem(req, 401, "POST /ui/logout: not logged in");
		return;
	}
	if (!ui_session_csrf_ok(&s, http_request_header(req, UI_CSRF_HEADER))) {
		reply_problem(req, 403, "missing or wrong CSRF token");
		return;
	}
	ui_sessions_close(ua->sessions, id);
	log_info("web UI: %s logged out", s.user);
	http_request_set_user(req, s.user);
	{
		char cookie[96];
		snprintf(cookie, sizeof cookie,
		         UI_SESSION_COOKIE "=; Max-Age=0; HttpOnly; SameSite=Strict; Path=/%s",
		         secure_attr(ua, req));
		http_request_add_header(req, "Set-Cookie", cookie);
	}
	http_request_respond_json(req, 200,
	                          json_pack("{s:s, s:b}", "user", s.user, "logged_out", 1));
	explicit_bzero(&s, sizeof s);
	explicit_bzero(id, sizeof id);
}

void ui_auth_no_method(struct http_request *req)
{
	const char *path = http_request_path(req);
	const char *method = http_request_method(req);
	bool is_get = !strcmp(path, "/ui/session");
	char msg[128];

	ui_add_security_headers(req);
	snprintf(msg, sizeof msg, "%s %s: method not allowed (expected %s)", method, path,
	         is_get ? "GET" : "POST");
	http_request_add_header(req, "Allow", is_get ? "GET" : "POST");
	reply_problem(req, 405, msg);
}

void ui_auth_login_route(struct ui_auth *ua, struct http_request *req, const char *token,
                         struct auth_gate *gate)
{
	ui_add_security_headers(req);
	route_login(ua, req, token, gate);
}

void ui_auth_logout_route(struct ui_auth *ua, struct http_request *req)
{
	ui_add_security_headers(req);
	route_logout(ua, req);
}

void ui_auth_session_route(struct ui_auth *ua, struct http_request *req)
{
	struct ui_session s;

	ui_add_security_headers(req);
	if (session_of(ua, req, &s)) {
		respond_session(req, &s);
		explicit_bzero(&s, sizeof s);
	} else {
		reply_problem(req, 401, "not logged in (or the session has expired)");
	}
}
