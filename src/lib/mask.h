/* mask.h: a streaming masker: bytes in, the same bytes out with every
 * occurrence of a secret replaced by "***".
 *
 * Correct across chunk boundaries: a secret split between two feeds is
 * still masked, because the bytes that could begin one are held back until
 * the next feed (or the flush) says whether they do; at most the longest
 * secret's length less one byte is ever held.  Where secrets overlap, the
 * leftmost match wins, and of those the longest; the output is the same
 * whatever the chunking.
 *
 * Pure: no I/O; output goes to a callback.  Used by the launcher on a
 * task's output before it reaches the log (launch/launch.c), and by the
 * views that show what a task was given.
 *
 * Ownership: the masker copies its secrets (and wipes them when destroyed).
 * Empty secrets are ignored.
 */
#ifndef WEIR_LIB_MASK_H
#define WEIR_LIB_MASK_H

#include <stdbool.h>
#include <stddef.h>

#define MASK_TEXT "***"

typedef void (*mask_out_fn)(void *arg, const char *data, size_t n);

struct mask; /* opaque */

/* A masker of secrets[0..n); NULL on out of memory. */
struct mask *mask_create(const char *const *secrets, size_t n);
void mask_destroy(struct mask *m);
/* Whether the masker has any secret (a masker without one passes bytes on). */
bool mask_active(const struct mask *m);

/* Feeds `n` bytes; what is settled goes to out(arg, ...), possibly in
 * several calls. */
void mask_feed(struct mask *m, const char *data, size_t n, mask_out_fn out, void *arg);
/* The end of the stream: the bytes held back go out (masked where whole). */
void mask_flush(struct mask *m, mask_out_fn out, void *arg);

/* The whole of `text` masked: newly allocated; NULL on out of memory. */
char *mask_string(const struct mask *m, const char *text);

#endif
