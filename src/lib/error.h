/* error.h: the error a caller can show a person.
 *
 * Every function that can fail for a reason a user may see takes a
 * `struct weir_error *` (which may be NULL) and, on failure, fills it with a
 * message saying what went wrong, where, and what was expected.  The kind
 * maps to an HTTP status through weir_error_http_status(), the one place
 * that mapping lives.
 */
#ifndef WEIR_LIB_ERROR_H
#define WEIR_LIB_ERROR_H

#include <stddef.h>

enum weir_error_kind {
	WEIR_OK = 0,
	WEIR_E_INVALID,     /* bad input: 400 */
	WEIR_E_AUTH,        /* missing or wrong token: 401 */
	WEIR_E_FORBIDDEN,   /* 403 */
	WEIR_E_NOT_FOUND,   /* 404 */
	WEIR_E_CONFLICT,    /* state does not allow it: 409 */
	WEIR_E_GONE,        /* stale attempt, finished job: 410 */
	WEIR_E_UNFIT,       /* a request that can never be satisfied: 422 */
	WEIR_E_INTERNAL,    /* our fault or the system's: 500 */
	WEIR_E_UNAVAILABLE, /* try again later: 503 */
};

#define WEIR_ERROR_MSG_MAX 1024

struct weir_error {
	enum weir_error_kind kind;
	char msg[WEIR_ERROR_MSG_MAX];
};

/* Fills `err` (if not NULL) and returns -1, so `return weir_error_set(...)`
 * works in functions returning 0 / -1. */
int weir_error_set(struct weir_error *err, enum weir_error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Puts "prefix: " in front of an already filled message (to add where). */
void weir_error_prefix(struct weir_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Out of memory: WEIR_E_INTERNAL, "out of memory" (err may be NULL).
 * weir_error_oom returns -1 and weir_error_oom_null NULL, so that a caller
 * returns either at once. */
int weir_error_oom(struct weir_error *err);
void *weir_error_oom_null(struct weir_error *err);

void weir_error_clear(struct weir_error *err);

/* The HTTP status for an error kind. */
int weir_error_http_status(enum weir_error_kind kind);

#endif
