/* strbuf.h: a growable, NUL-terminated byte buffer.
 *
 * Embed a struct strbuf initialised with STRBUF_INIT (or strbuf_init());
 * `buf` then always points to a NUL-terminated string of `len` bytes (it
 * may hold NULs of its own), even before anything was added, so it can be
 * printed or compared at any time.  Never free(buf) directly: call
 * strbuf_release(), or take the string with strbuf_detach().
 *
 * Out of memory: every function that adds returns 0, or -1 and leaves the
 * buffer as it was and `failed` set.  Once `failed` is set, later adds do
 * nothing and return -1 until strbuf_reset() or strbuf_release(), so a
 * caller may append many pieces and check once at the end.
 */
#ifndef WEIR_LIB_STRBUF_H
#define WEIR_LIB_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;    /* NUL-terminated; strbuf_empty until the first allocation */
	size_t len;   /* bytes used, without the NUL */
	size_t alloc; /* bytes allocated; 0 while buf is strbuf_empty */
	bool failed;  /* an add ran out of memory */
};

/* The shared "" an unallocated buffer points to; never written. */
extern char strbuf_empty[1];

#define STRBUF_INIT                                                                                \
	{                                                                                          \
		strbuf_empty, 0, 0, false                                                          \
	}

void strbuf_init(struct strbuf *sb);

/* Makes room for `extra` more bytes (and the NUL) without reallocating. */
int strbuf_grow(struct strbuf *sb, size_t extra);

int strbuf_add(struct strbuf *sb, const void *data, size_t len);
int strbuf_addstr(struct strbuf *sb, const char *s);
int strbuf_addch(struct strbuf *sb, int c);
/* v in decimal, without printf's cost. */
int strbuf_addi(struct strbuf *sb, long long v);
int strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* Drops `n` bytes at `pos` (clamped to the end), moving the rest down. */
void strbuf_remove(struct strbuf *sb, size_t pos, size_t n);

/* Empties the buffer, keeping its memory, and clears `failed`. */
void strbuf_reset(struct strbuf *sb);

/* Hands the string to the caller (free() it) and leaves the buffer empty,
 * as after strbuf_init().  *len (if not NULL) gets its length.  Returns a
 * newly allocated "" for a buffer that never allocated; NULL only when that
 * allocation fails, or when `failed` is set (the buffer is released then). */
char *strbuf_detach(struct strbuf *sb, size_t *len);

/* Frees the memory and leaves the buffer as after strbuf_init(). */
void strbuf_release(struct strbuf *sb);

#endif
