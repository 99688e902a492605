/* token.h: the API token in HOME/token.
 *
 * Generated on the first start from /dev/urandom (32 bytes, 64 hex
 * characters), written with mode 0600; read back on later starts.
 */
#ifndef WEIR_SERVER_TOKEN_H
#define WEIR_SERVER_TOKEN_H

#include "lib/error.h"

/* The token (newly allocated, no newline), creating the file if absent.
 * NULL with err when it cannot be read or written, or is too short. */
char *server_token_load_or_create(const char *home, struct weir_error *err);

#endif
