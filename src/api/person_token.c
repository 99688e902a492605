/* person_token.c: a person's token made, its shape, its hash, the names of
 * users and tokens (person_token.h). */
#include "api/person_token.h"

#include <nettle/sha2.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

int person_token_new(char token[PERSON_TOKEN_LEN + 1], char hash[PERSON_TOKEN_HASH_LEN + 1],
                     struct weir_error *err)
{
	uint8_t b[32];

	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
		return weir_error_set(err, WEIR_E_INTERNAL, "a token: no randomness (getrandom)");
	memcpy(token, PERSON_TOKEN_PREFIX, 5);
	hex(b, sizeof b, token + 5);
	memset(b, 0, sizeof b);
	person_token_hash(token, hash);
	return 0;
}

bool person_token_shape(const char *s)
{
	if (!s || strncmp(s, PERSON_TOKEN_PREFIX, 5) || strlen(s) != PERSON_TOKEN_LEN)
		return false;
	return strspn(s + 5, "0123456789abcdef") == 64;
}

void person_token_hash(const char *token, char hash[PERSON_TOKEN_HASH_LEN + 1])
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, strlen(token), (const uint8_t *)token);
	sha256_digest(&ctx, sizeof d, d);
	hex(d, sizeof d, hash);
}

int person_name_check(const char *name, const char *what, struct weir_error *err)
{
	static const char allowed[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                              "0123456789._-@";
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > PERSON_TOKEN_NAME_MAX || strspn(name, allowed) != n || name[0] == '-')
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s \"%.80s\": expected 1 to %d letters, digits and . _ - @ "
		                      "(not starting with -)",
		                      what, name ? name : "", PERSON_TOKEN_NAME_MAX);
	return 0;
}
