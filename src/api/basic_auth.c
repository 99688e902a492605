/* basic_auth.c: PBKDF2-HMAC-SHA256 password hashes (nettle) and the check
 * of an "Authorization: Basic ..." header against configured users.
 *
 * Why PBKDF2 from nettle: nettle is already linked (artifact hashing) and
 * mapped by libmicrohttpd's GnuTLS, so this costs no new dependency.
 */
#include "api/basic_auth.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <nettle/base64.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <nettle/pbkdf2.h>

#include "lib/clock.h"

#define SALT_LEN 16 /* what weir draws */
#define SALT_MIN 8  /* what it accepts from hashes made elsewhere */
#define SALT_MAX 64
#define KEY_LEN 32
#define PREFIX "pbkdf2-sha256$"
#define MAX_HEADER 4096
#define CACHE_SLOTS 16
#define CACHE_TTL_MS (5 * 60 * 1000)

struct parsed_hash {
	unsigned iterations;
	uint8_t salt[SALT_MAX];
	size_t salt_len;
	uint8_t key[KEY_LEN];
};

struct cache_slot {
	uint8_t mac[SHA256_DIGEST_SIZE];
	int64_t expires_ms; /* 0: empty */
};

struct basic_auth {
	struct basic_user *users; /* strings owned */
	size_t n;
	uint8_t mac_key[32];
	struct cache_slot cache[CACHE_SLOTS];
};

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Exactly 2*n lowercase hex digits from s up to `end` into out. */
static int hex_decode(const char *s, const char *end, uint8_t *out, size_t n)
{
	if ((size_t)(end - s) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static void hex_encode(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static int parse_hash(const char *hash, struct parsed_hash *ph, struct weir_error *err)
{
	const char *p, *salt, *key;
	char *end;
	unsigned long long it;

	if (!hash || strncmp(hash, PREFIX, strlen(PREFIX)))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "password_hash: expected \"pbkdf2-sha256$ITER$SALT_HEX$"
		                      "HASH_HEX\" (make one with `weir hash-password`)");
	p = hash + strlen(PREFIX);
	if (*p < '1' || *p > '9')
		return weir_error_set(err, WEIR_E_INVALID,
		                      "password_hash: expected an iteration count after "
		                      "\"pbkdf2-sha256$\"");
	errno = 0;
	it = strtoull(p, &end, 10);
	if (errno || *end != '$' || it < BASIC_AUTH_MIN_ITERATIONS ||
	    it > BASIC_AUTH_MAX_ITERATIONS)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "password_hash: expected an iteration count from %u to %u",
		                      BASIC_AUTH_MIN_ITERATIONS, BASIC_AUTH_MAX_ITERATIONS);
	salt = end + 1;
	key = strchr(salt, '$');
	ph->salt_len = key ? (size_t)(key - salt) / 2 : 0;
	if (!key || ph->salt_len < SALT_MIN || ph->salt_len > SALT_MAX ||
	    hex_decode(salt, key, ph->salt, ph->salt_len) < 0)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "password_hash: expected a salt of %d to %d lowercase hex "
		                      "digits (an even count)",
		                      2 * SALT_MIN, 2 * SALT_MAX);
	key++;
	if (hex_decode(key, key + strlen(key), ph->key, KEY_LEN) < 0)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "password_hash: expected a hash of %d lowercase hex digits "
		                      "at the end",
		                      2 * KEY_LEN);
	ph->iterations = (unsigned)it;
	return 0;
}

int basic_auth_hash_valid(const char *hash, struct weir_error *err)
{
	struct parsed_hash ph;

	return parse_hash(hash, &ph, err);
}

int basic_auth_hash_password(const char *password, unsigned iterations, char **out,
                             struct weir_error *err)
{
	uint8_t salt[SALT_LEN], key[KEY_LEN];
	char salt_hex[2 * SALT_LEN + 1], key_hex[2 * KEY_LEN + 1];
	size_t size;

	if (iterations == 0)
		iterations = BASIC_AUTH_DEFAULT_ITERATIONS;
	if (iterations < BASIC_AUTH_MIN_ITERATIONS || iterations > BASIC_AUTH_MAX_ITERATIONS)
		return weir_error_set(err, WEIR_E_INVALID, "iterations %u: expected %u to %u",
		                      iterations, BASIC_AUTH_MIN_ITERATIONS,
		                      BASIC_AUTH_MAX_ITERATIONS);
	if (getrandom(salt, sizeof salt, 0) != (ssize_t)sizeof salt)
		return weir_error_set(err, WEIR_E_INTERNAL, "cannot draw a random salt: %s",
		                      strerror(errno));
	pbkdf2_hmac_sha256(strlen(password), (const uint8_t *)password, iterations, SALT_LEN, salt,
	                   KEY_LEN, key);
	hex_encode(salt, SALT_LEN, salt_hex);
	hex_encode(key, KEY_LEN, key_hex);
	size = strlen(PREFIX) + 12 + sizeof salt_hex + sizeof key_hex + 2;
	*out = malloc(size);
	if (!*out)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	snprintf(*out, size, PREFIX "%u$%s$%s", iterations, salt_hex, key_hex);
	return 0;
}

bool basic_auth_verify_password(const char *password, const char *hash)
{
	struct parsed_hash ph;
	uint8_t key[KEY_LEN];

	if (!password || parse_hash(hash, &ph, NULL) < 0)
		return false;
	pbkdf2_hmac_sha256(strlen(password), (const uint8_t *)password, ph.iterations, ph.salt_len,
	                   ph.salt, KEY_LEN, key);
	return memeql_sec(key, ph.key, KEY_LEN) != 0;
}

bool basic_auth_verify(const char *userpass, const struct basic_user *users, size_t n)
{
	const char *colon = userpass ? strchr(userpass, ':') : NULL;
	size_t nl;

	if (!colon)
		return false;
	nl = (size_t)(colon - userpass);
	for (size_t i = 0; i < n; i++) {
		if (users[i].name && strlen(users[i].name) == nl &&
		    !memcmp(users[i].name, userpass, nl))
			return basic_auth_verify_password(colon + 1, users[i].password_hash);
	}
	/* an unknown name costs one hash too (the first user's iterations, as
	 * hashes of one server are usually made alike): timing tells no names */
	if (n)
		basic_auth_verify_password(colon + 1, users[0].password_hash);
	return false;
}

struct basic_auth *basic_auth_create(const struct basic_user *users, size_t n,
                                     struct weir_error *err)
{
	struct basic_auth *ba = calloc(1, sizeof *ba);

	if (!ba)
		goto oom;
	if (getrandom(ba->mac_key, sizeof ba->mac_key, 0) != (ssize_t)sizeof ba->mac_key) {
		weir_error_set(err, WEIR_E_INTERNAL, "cannot draw a random key: %s",
		               strerror(errno));
		goto fail;
	}
	if (n && !(ba->users = calloc(n, sizeof *ba->users)))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		if (!users[i].name || !*users[i].name || strchr(users[i].name, ':')) {
			weir_error_set(err, WEIR_E_INVALID,
			               "users[%zu].name: expected a name without ':'", i);
			goto fail;
		}
		if (parse_hash(users[i].password_hash, &(struct parsed_hash){0}, err) < 0) {
			weir_error_prefix(err, "users[%zu] (%s)", i, users[i].name);
			goto fail;
		}
		ba->users[i].name = strdup(users[i].name);
		ba->users[i].password_hash = strdup(users[i].password_hash);
		ba->users[i].role = users[i].role == ROLE_NONE ? ROLE_ADMIN : users[i].role;
		ba->n = i + 1;
		if (!ba->users[i].name || !ba->users[i].password_hash)
			goto oom;
	}
	return ba;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
fail:
	basic_auth_destroy(ba);
	return NULL;
}

void basic_auth_destroy(struct basic_auth *ba)
{
	if (!ba)
		return;
	for (size_t i = 0; i < ba->n; i++) {
		free((char *)ba->users[i].name);
		free((char *)ba->users[i].password_hash);
	}
	free(ba->users);
	free(ba);
}

size_t basic_auth_count(const struct basic_auth *ba)
{
	return ba ? ba->n : 0;
}

enum weir_role basic_auth_role(const struct basic_auth *ba, const char *user)
{
	for (size_t i = 0; ba && user && i < ba->n; i++)
		if (!strcmp(ba->users[i].name, user))
			return ba->users[i].role;
	return ROLE_NONE;
}

/* base64 (standard alphabet, padding required) into a NUL-terminated buffer
 * of at least BASE64_DECODE_LENGTH(len) + 1 bytes.  -1 when not base64. */
static int b64_decode(const char *s, size_t len, char *out)
{
	struct base64_decode_ctx ctx;
	size_t n = BASE64_DECODE_LENGTH(len);

	base64_decode_init(&ctx);
	if (!base64_decode_update(&ctx, &n, (uint8_t *)out, len, s) || !base64_decode_final(&ctx))
		return -1;
	out[n] = '\0';
	if (strlen(out) != n) /* a NUL inside */
		return -1;
	return 0;
}

/* "user:password" of a Basic Authorization header into buf (at least
 * BASE64_DECODE_LENGTH(MAX_HEADER) + 1 bytes); -1 when it is not one. */
static int header_credentials(const char *authorization, char *buf)
{
	const char *b64;
	size_t len;

	if (!authorization || strncasecmp(authorization, "Basic ", 6))
		return -1;
	b64 = authorization + 6;
	while (*b64 == ' ')
		b64++;
	len = strlen(b64);
	while (len && b64[len - 1] == ' ')
		len--;
	if (len == 0 || len > MAX_HEADER || b64_decode(b64, len, buf) < 0)
		return -1;
	return 0;
}

bool basic_auth_header_user(const char *authorization, char *out, size_t size)
{
	char buf[BASE64_DECODE_LENGTH(MAX_HEADER) + 1];
	char *colon;

	if (!size || header_credentials(authorization, buf) < 0)
		return false;
	colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	snprintf(out, size, "%s", buf);
	explicit_bzero(buf, sizeof buf);
	return true;
}

/* Fills *a from "user:password" (ul bytes of name): 1 for a cached
 * success, 0 to run, -1 out of memory. */
static int begin_userpass(struct basic_auth *ba, const char *userpass, size_t ul,
                          struct basic_attempt *a)
{
	struct hmac_sha256_ctx hctx;
	int64_t now = clock_mono_ms();
	const char *hash = ba->users[0].password_hash;

	memset(a, 0, sizeof *a);
	hmac_sha256_set_key(&hctx, sizeof ba->mac_key, ba->mac_key);
	hmac_sha256_update(&hctx, strlen(userpass), (const uint8_t *)userpass);
	hmac_sha256_digest(&hctx, sizeof a->mac, a->mac);
	for (int i = 0; i < CACHE_SLOTS; i++) {
		struct cache_slot *s = &ba->cache[i];
		if (s->expires_ms > now && memeql_sec(s->mac, a->mac, sizeof a->mac))
			return 1;
	}
	for (size_t i = 0; i < ba->n; i++) {
		if (strlen(ba->users[i].name) == ul && !memcmp(ba->users[i].name, userpass, ul)) {
			hash = ba->users[i].password_hash;
			a->known = true;
			break;
		}
	}
	a->userpass = strdup(userpass);
	a->hash = strdup(hash);
	if (!a->userpass || !a->hash) {
		basic_auth_finish(NULL, a);
		return -1;
	}
	return 0;
}

int basic_auth_begin(struct basic_auth *ba, const char *authorization, struct basic_attempt *a)
{
	char buf[BASE64_DECODE_LENGTH(MAX_HEADER) + 1];
	const char *colon;
	int rc;

	if (!ba || !ba->n || header_credentials(authorization, buf) < 0)
		return -1;
	colon = strchr(buf, ':');
	rc = begin_userpass(ba, buf, colon ? (size_t)(colon - buf) : strlen(buf), a);
	explicit_bzero(buf, sizeof buf);
	return rc;
}

int basic_auth_begin_user(struct basic_auth *ba, const char *user, const char *password,
                          struct basic_attempt *a)
{
	char *userpass;
	size_t ul, pl;
	int rc;

	if (!ba || !ba->n || !user || !password || strchr(user, ':'))
		return -1;
	ul = strlen(user);
	pl = strlen(password);
	if (ul + pl + 1 > MAX_HEADER || !(userpass = malloc(ul + pl + 2)))
		return -1;
	memcpy(userpass, user, ul);
	userpass[ul] = ':';
	memcpy(userpass + ul + 1, password, pl + 1);
	rc = begin_userpass(ba, userpass, ul, a);
	explicit_bzero(userpass, ul + pl + 2);
	free(userpass);
	return rc;
}

void basic_auth_run(struct basic_attempt *a)
{
	const char *colon = a->userpass ? strchr(a->userpass, ':') : NULL;

	/* an unknown name is hashed all the same: timing tells no names */
	a->ok = basic_auth_verify_password(colon ? colon + 1 : "", a->hash) && a->known && colon;
}

bool basic_auth_finish(struct basic_auth *ba, struct basic_attempt *a)
{
	bool ok = a->ok;

	if (ok && ba) {
		int64_t now = clock_mono_ms();
		struct cache_slot *oldest = &ba->cache[0];
		for (int i = 1; i < CACHE_SLOTS; i++)
			if (ba->cache[i].expires_ms < oldest->expires_ms)
				oldest = &ba->cache[i];
		memcpy(oldest->mac, a->mac, sizeof a->mac);
		oldest->expires_ms = now + CACHE_TTL_MS;
	}
	if (a->userpass) {
		explicit_bzero(a->userpass, strlen(a->userpass));
		free(a->userpass);
	}
	free(a->hash);
	explicit_bzero(a, sizeof *a);
	return ok;
}

bool basic_auth_check(struct basic_auth *ba, const char *authorization)
{
	struct basic_attempt a;
	int rc = basic_auth_begin(ba, authorization, &a);

	if (rc != 0)
		return rc == 1;
	basic_auth_run(&a);
	return basic_auth_finish(ba, &a);
}
