/* person_token.h: the API tokens that act as a person (`weir tokens`,
 * docs/security.md, "Tokens"): how one is made and how it is known again.
 *
 * A token is "weir_" and 64 lowercase hex digits: 32 bytes from
 * getrandom(), the prefix so that a leaked one is recognised (by a secret
 * scanner, by a person).  The store keeps only its SHA-256, as 64 hex
 * digits: a token is shown once, when made, and a request's token is
 * looked up by that hash.  A fast hash is right here, unlike a password's
 * PBKDF2: 256 random bits cannot be guessed, so slowing each guess buys
 * nothing, while every request pays the hash.
 *
 * Pure, apart from the randomness of person_token_new().
 */
#ifndef WEIR_API_PERSON_TOKEN_H
#define WEIR_API_PERSON_TOKEN_H

#include <stdbool.h>

#include "lib/error.h"

#define PERSON_TOKEN_PREFIX "weir_"
#define PERSON_TOKEN_LEN (5 + 64) /* the prefix and 32 bytes in hex */
#define PERSON_TOKEN_HASH_LEN 64  /* SHA-256 in hex */
#define PERSON_TOKEN_NAME_MAX 60  /* a token's name, and a user's */

/* A new token into token (NUL-terminated) and its hash into hash.  0, or
 * -1 with err when no randomness could be had. */
int person_token_new(char token[PERSON_TOKEN_LEN + 1], char hash[PERSON_TOKEN_HASH_LEN + 1],
                     struct weir_error *err);

/* Whether `s` has a person's token's shape (prefix, length, hex). */
bool person_token_shape(const char *s);

/* The hash of `token` as the store keeps it (lowercase hex SHA-256). */
void person_token_hash(const char *token, char hash[PERSON_TOKEN_HASH_LEN + 1]);

/* Whether `name` may name a user or a token: 1 to PERSON_TOKEN_NAME_MAX
 * bytes of letters, digits and . _ - @, not starting with '-'.  0, or -1
 * with err naming `what` ("username", "name") and what is expected. */
int person_name_check(const char *name, const char *what, struct weir_error *err);

#endif
