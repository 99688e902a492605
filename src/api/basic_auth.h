/* basic_auth.h: HTTP Basic authentication against users of the server's
 * configuration, whose passwords are stored only as salted, iterated hashes.
 *
 * A stored hash reads "pbkdf2-sha256$ITER$SALT_HEX$HASH_HEX" (PBKDF2-HMAC-
 * SHA256, nettle): ITER iterations, a salt (weir draws 16 random bytes;
 * 8 to 64 are accepted from other tools) and a 32-byte key, both in
 * lowercase hex.  Keys are compared in constant time.
 *
 * Who calls what:
 * - the server's configuration (users: [{name, password_hash}]) checks each
 *   hash with basic_auth_hash_valid() and hands the list to api_set_users();
 * - `weir hash-password` makes a hash with basic_auth_hash_password() (any
 *   PBKDF2 tool can too, e.g. Python's hashlib.pbkdf2_hmac("sha256", ...));
 * - the API keeps a struct basic_auth and asks basic_auth_check() with the
 *   request's Authorization header.
 *
 * The default cost, 600,000 iterations (OWASP's figure for PBKDF2-HMAC-
 * SHA256), costs about 65 ms on these machines, by design; so a struct
 * basic_auth remembers recent successes (an HMAC of "user:password" under a key drawn
 * per process, for a few minutes): a script polling with Basic auth pays the
 * hash once, not on every request.  Nothing a client sends is kept in clear.
 */
#ifndef WEIR_API_BASIC_AUTH_H
#define WEIR_API_BASIC_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/role.h"

#define BASIC_AUTH_DEFAULT_ITERATIONS 600000u
#define BASIC_AUTH_MIN_ITERATIONS 1000u
#define BASIC_AUTH_MAX_ITERATIONS 10000000u

/* One configured user; strings are the caller's (copied by basic_auth_create). */
struct basic_user {
	const char *name;
	const char *password_hash;
	enum weir_role role; /* ROLE_NONE: Admin, the default (docs/security.md, "Roles") */
};

/* A new hash of `password` with a fresh random salt; iterations 0 means
 * BASIC_AUTH_DEFAULT_ITERATIONS.  *out newly allocated.  0, or -1 with err
 * (iterations out of range, no randomness, out of memory). */
int basic_auth_hash_password(const char *password, unsigned iterations, char **out,
                             struct weir_error *err);

/* Whether `hash` is a well-formed stored hash (format, iteration bounds,
 * lengths).  0, or -1 with err naming what is wrong and what was expected. */
int basic_auth_hash_valid(const char *hash, struct weir_error *err);

/* Whether `password` matches `hash` (false for a malformed hash).  Constant
 * time in the key's bytes. */
bool basic_auth_verify_password(const char *password, const char *hash);

/* Whether "user:password" names one of `users` with that password (the
 * password may itself contain ':').  An unknown user costs as much as a
 * wrong password, so timing does not tell which names exist. */
bool basic_auth_verify(const char *userpass, const struct basic_user *users, size_t n);

struct basic_auth; /* opaque: the users and the cache of recent successes */

/* Copies the users after checking every hash: NULL with err naming the
 * first bad one (or out of memory).  n may be 0 (Basic auth then never
 * succeeds). */
struct basic_auth *basic_auth_create(const struct basic_user *users, size_t n,
                                     struct weir_error *err);
void basic_auth_destroy(struct basic_auth *ba);

/* One check of credentials in three steps, so that the hash can run on
 * another thread (api/auth_gate.h): begin on the loop, run anywhere,
 * finish on the loop.  Everything it holds is its own copy. */
struct basic_attempt {
	char *userpass;  /* "user:password", zeroed when freed */
	char *hash;      /* the hash to compare with: the user's, or the first
	                  * user's for an unknown name (the same cost) */
	bool known;      /* the name is a configured user's */
	bool ok;         /* what run found */
	uint8_t mac[32]; /* the cache's key for a success */
};

/* From the header value "Basic BASE64(user:password)": 1 when these
 * credentials succeeded a moment ago (nothing to hash; *a untouched), 0
 * with *a to run, -1 when there is nothing to check (NULL, another scheme,
 * bad base64, no users) or out of memory. */
int basic_auth_begin(struct basic_auth *ba, const char *authorization, struct basic_attempt *a);
/* The same for a user name and password (the web UI's login form). */
int basic_auth_begin_user(struct basic_auth *ba, const char *user, const char *password,
                          struct basic_attempt *a);
/* The hash and the comparison: a->ok.  Touches nothing but *a (any thread). */
void basic_auth_run(struct basic_attempt *a);
/* a->ok, a success remembered in ba's cache (ba NULL: not), *a freed. */
bool basic_auth_finish(struct basic_auth *ba, struct basic_attempt *a);

/* begin, run and finish at once, on the caller's thread: whether the header
 * value "Basic BASE64(user:password)" is a configured user's.  NULL,
 * another scheme or bad base64: false. */
bool basic_auth_check(struct basic_auth *ba, const char *authorization);

/* The user name of an HTTP Basic Authorization header into `out` (the part
 * before ':'; nothing is checked: call after basic_auth_check).  false
 * when the header is not Basic or does not decode. */
bool basic_auth_header_user(const char *authorization, char *out, size_t size);

/* How many users it knows (0: do not advertise Basic). */
size_t basic_auth_count(const struct basic_auth *ba);

/* The role of the user named `user` (never ROLE_NONE for a known user);
 * ROLE_NONE when it knows no such user (or `ba` is NULL). */
enum weir_role basic_auth_role(const struct basic_auth *ba, const char *user);

#endif
