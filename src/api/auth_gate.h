/* auth_gate.h: password checks off the event loop.
 *
 * A Basic-auth header or the web UI's login form costs one PBKDF2 hash
 * (about 70 ms by design, api/basic_auth.h): run on the loop, forty of them
 * at once stopped the server for seconds.  The gate runs each on libuv's
 * thread pool (at most AUTH_GATE_RUNNING at once, the rest waiting in a
 * queue of AUTH_GATE_QUEUE), the request suspended meanwhile; when the hash
 * is done the verdict is kept on the request (http_request_set_mark) and
 * the request handed to the router again (http_request_redispatch), which
 * asks the gate again and gets the verdict at once.
 *
 * Before a hash: credentials that succeeded a moment ago pass without one
 * (basic_auth's cache); an address that has had its share of checks in the
 * window is refused (api/auth_throttle.h: the router answers 429 with
 * Retry-After); a full queue is refused too (503).  Unknown user names are
 * hashed like known ones and count alike.
 */
#ifndef WEIR_API_AUTH_GATE_H
#define WEIR_API_AUTH_GATE_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "api/basic_auth.h"
#include "api/http.h"
#include "lib/error.h"

#define AUTH_GATE_RUNNING 2 /* of libuv's 4 threads: the others stay for the rest */
#define AUTH_GATE_QUEUE 64

enum auth_gate_result {
	AUTH_GATE_OK,        /* the credentials are a configured user's */
	AUTH_GATE_NO,        /* no credentials to check, or wrong ones */
	AUTH_GATE_WAIT,      /* being checked: the request is suspended and comes back */
	AUTH_GATE_THROTTLED, /* this address had its share: 429, *retry_s */
	AUTH_GATE_BUSY,      /* too many checks waiting: 503, *retry_s */
};

struct auth_gate; /* opaque */

/* attempts/window_ms: the per-address share (0: the defaults). */
struct auth_gate *auth_gate_create(uv_loop_t *loop, unsigned attempts, int64_t window_ms);
/* Requests still waiting for a check are answered 503; a hash still
 * running finishes on its thread and is dropped. */
void auth_gate_destroy(struct auth_gate *g);

/* The configured users (basic_auth_create's rules); 0 or -1 with err. */
int auth_gate_set_users(struct auth_gate *g, const struct basic_user *users, size_t n,
                        struct weir_error *err);
/* How many users it knows. */
size_t auth_gate_count(const struct auth_gate *g);
/* The role of a configured user (basic_auth_role()); ROLE_NONE when none
 * is named so. */
enum weir_role auth_gate_role(const struct auth_gate *g, const char *user);

/* The Authorization header's Basic credentials for `req`. */
enum auth_gate_result auth_gate_basic(struct auth_gate *g, struct http_request *req,
                                      const char *authorization, int64_t *retry_s);
/* A user name and password for `req` (the web UI's login form). */
enum auth_gate_result auth_gate_user(struct auth_gate *g, struct http_request *req,
                                     const char *user, const char *password, int64_t *retry_s);

#endif
