/* seal.h: values sealed at rest: ChaCha20-Poly1305 (nettle), a random
 * 96-bit nonce per value, and the place the value belongs to as associated
 * data.
 *
 * A sealed value is the bytes SEAL_VERSION, nonce (12), ciphertext (as long
 * as the plain text) and tag (16).  The associated data ("connection
 * my_db password") binds it to its row and column: a sealed value copied
 * into another row does not open.  The key is 32 bytes (the server's key
 * file, server/token.h).
 *
 * Pure but for the random nonce (getrandom()).  Errors: -1 with err
 * (WEIR_E_INTERNAL: no randomness or out of memory; WEIR_E_INVALID: a value
 * that does not open with this key: a wrong key file, or bytes changed).
 */
#ifndef WEIR_STORE_SEAL_H
#define WEIR_STORE_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

#define SEAL_KEY_SIZE 32
#define SEAL_VERSION 1
#define SEAL_NONCE_SIZE 12
#define SEAL_TAG_SIZE 16
/* The bytes a sealed value adds to its plain text. */
#define SEAL_OVERHEAD (1 + SEAL_NONCE_SIZE + SEAL_TAG_SIZE)

/* Seals `len` bytes of `plain` into *out (newly allocated, *out_len bytes:
 * len + SEAL_OVERHEAD).  `ad` (may be NULL) is the associated data. */
int seal_value(const uint8_t key[SEAL_KEY_SIZE], const char *ad, const void *plain, size_t len,
               uint8_t **out, size_t *out_len, struct weir_error *err);

/* Opens what seal_value() made into *plain (newly allocated, NUL-ended,
 * *plain_len bytes without the NUL).  -1 with err (WEIR_E_INVALID) when the
 * tag does not match: a wrong key, other associated data, changed bytes. */
int seal_open(const uint8_t key[SEAL_KEY_SIZE], const char *ad, const uint8_t *sealed, size_t len,
              char **plain, size_t *plain_len, struct weir_error *err);

/* A key from its text form: 64 hex digits (white space around ignored).
 * 0, or -1 with err. */
int seal_key_from_hex(const char *text, uint8_t key[SEAL_KEY_SIZE], struct weir_error *err);

#endif
