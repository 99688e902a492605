/* strvec.h: a growable list of owned strings (warnings, argv pieces).
 *
 * Embed a struct strvec zeroed (or STRVEC_INIT); strvec_release() frees
 * every string and the array and leaves it empty and reusable.  `v` is kept
 * NULL-terminated so it can be handed to execv-style calls.
 */
#ifndef WEIR_LIB_STRVEC_H
#define WEIR_LIB_STRVEC_H

#include <stddef.h>

struct strvec {
	char **v; /* NULL-terminated once anything was pushed; NULL before */
	size_t n;
	size_t cap;
};

#define STRVEC_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/* Appends a copy of `s`.  0, or -1 when out of memory (the list unchanged). */
int strvec_push(struct strvec *sv, const char *s);
/* Appends the text PREFIX NAME=VALUE (one allocation, no format; a NULL
 * value is "").  0 or -1. */
int strvec_push_kv(struct strvec *sv, const char *prefix, const char *name, const char *value);
/* Appends a formatted string.  0 or -1. */
int strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strvec_release(struct strvec *sv);

#endif
