/* token.h: the API token in HOME/token, and the key that seals secrets in
 * the store (connection passwords and extras, variable values) in
 * HOME/secret.key.
 *
 * Generated on the first start from /dev/urandom (32 bytes, 64 hex
 * characters), written with mode 0600; read back on later starts.
 */
#ifndef WEIR_SERVER_TOKEN_H
#define WEIR_SERVER_TOKEN_H

#include <stdint.h>

#include "lib/error.h"
#include "store/seal.h"

/* The token (newly allocated, no newline), creating the file if absent.
 * NULL with err when it cannot be read or written, or is too short. */
char *server_token_load_or_create(const char *home, struct weir_error *err);

/* The file of the store's sealing key, in the home. */
#define SERVER_KEY_FILE "secret.key"

/* The store's key from HOME/secret.key (64 hex digits), made from
 * /dev/urandom with mode 0600 when absent.  0, or -1 with err.  Losing the
 * file loses every sealed value (docs/connections.md). */
int server_key_load_or_create(const char *home, uint8_t key[SEAL_KEY_SIZE], struct weir_error *err);

#endif
