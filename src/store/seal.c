/* seal.c: ChaCha20-Poly1305 sealing of the store's secret columns (seal.h).
 *
 * Why here and not in lib/: only the store seals and opens; the layers above
 * hand it plain values and the key, and never see a sealed byte.  Why this
 * AEAD: nettle is already linked (artifact hashes, password hashes), and
 * ChaCha20-Poly1305 needs no hardware support to be fast and constant-time.
 */
#include "store/seal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <nettle/chacha-poly1305.h>
#include <nettle/memops.h>

_Static_assert(SEAL_NONCE_SIZE == CHACHA_POLY1305_NONCE_SIZE, "nettle's nonce size");
_Static_assert(SEAL_TAG_SIZE == CHACHA_POLY1305_DIGEST_SIZE, "nettle's tag size");
_Static_assert(SEAL_KEY_SIZE == CHACHA_POLY1305_KEY_SIZE, "nettle's key size");

static int fill_random(uint8_t *buf, size_t n, struct weir_error *err)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = getrandom(buf + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return weir_error_set(err, WEIR_E_INTERNAL, "getrandom: %s",
			                      strerror(errno));
		got += (size_t)r;
	}
	return 0;
}

static void start(struct chacha_poly1305_ctx *ctx, const uint8_t *key, const uint8_t *nonce,
                  const char *ad)
{
	chacha_poly1305_set_key(ctx, key);
	chacha_poly1305_set_nonce(ctx, nonce);
	if (ad)
		chacha_poly1305_update(ctx, strlen(ad), (const uint8_t *)ad);
}

int seal_value(const uint8_t key[SEAL_KEY_SIZE], const char *ad, const void *plain, size_t len,
               uint8_t **out, size_t *out_len, struct weir_error *err)
{
	struct chacha_poly1305_ctx ctx;
	uint8_t *b;

	*out = NULL;
	if (len > SIZE_MAX - SEAL_OVERHEAD || !(b = malloc(len + SEAL_OVERHEAD)))
		return weir_error_set(err, WEIR_E_INTERNAL, "sealing a value: out of memory");
	b[0] = SEAL_VERSION;
	if (fill_random(b + 1, SEAL_NONCE_SIZE, err) < 0) {
		free(b);
		return -1;
	}
	start(&ctx, key, b + 1, ad);
	chacha_poly1305_encrypt(&ctx, len, b + 1 + SEAL_NONCE_SIZE, plain);
	chacha_poly1305_digest(&ctx, SEAL_TAG_SIZE, b + 1 + SEAL_NONCE_SIZE + len);
	memset(&ctx, 0, sizeof ctx);
	*out = b;
	*out_len = len + SEAL_OVERHEAD;
	return 0;
}

int seal_open(const uint8_t key[SEAL_KEY_SIZE], const char *ad, const uint8_t *sealed, size_t len,
              char **plain, size_t *plain_len, struct weir_error *err)
{
	struct chacha_poly1305_ctx ctx;
	uint8_t tag[SEAL_TAG_SIZE];
	size_t n;
	char *p;

	*plain = NULL;
	if (len < SEAL_OVERHEAD || sealed[0] != SEAL_VERSION)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "a sealed value of %zu bytes is not one this version "
		                      "wrote",
		                      len);
	n = len - SEAL_OVERHEAD;
	if (!(p = malloc(n + 1)))
		return weir_error_set(err, WEIR_E_INTERNAL, "opening a value: out of memory");
	start(&ctx, key, sealed + 1, ad);
	chacha_poly1305_decrypt(&ctx, n, (uint8_t *)p, sealed + 1 + SEAL_NONCE_SIZE);
	chacha_poly1305_digest(&ctx, SEAL_TAG_SIZE, tag);
	memset(&ctx, 0, sizeof ctx);
	if (!memeql_sec(tag, sealed + 1 + SEAL_NONCE_SIZE + n, SEAL_TAG_SIZE)) {
		memset(p, 0, n);
		free(p);
		return weir_error_set(err, WEIR_E_INVALID,
		                      "a sealed value does not open with this key (the key file "
		                      "is not the one that sealed it, or the bytes changed)");
	}
	p[n] = '\0';
	*plain = p;
	if (plain_len)
		*plain_len = n;
	return 0;
}

int seal_key_from_hex(const char *text, uint8_t key[SEAL_KEY_SIZE], struct weir_error *err)
{
	const char *p = text;
	size_t i;

	while (isspace((unsigned char)*p))
		p++;
	for (i = 0; i < SEAL_KEY_SIZE; i++) {
		int v = 0;
		for (int k = 0; k < 2; k++, p++) {
			int c = (unsigned char)*p;
			if (!isxdigit(c))
				goto bad;
			v = v * 16 + (isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
		}
		key[i] = (uint8_t)v;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		goto bad;
	return 0;
bad:
	memset(key, 0, SEAL_KEY_SIZE);
	return weir_error_set(err, WEIR_E_INVALID, "expected the key as 64 hex digits");
}
