/* str.h: small string helpers every layer needs: replacing an owned
 * string, copying one that may be NULL, appending into a fixed buffer,
 * reading a whole decimal integer, and writing digits by hand where
 * snprintf costs too much (timestamps formatted per task).
 */
#ifndef WEIR_LIB_STR_H
#define WEIR_LIB_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Replaces the owned string *dst with a copy of v (v NULL: *dst becomes
 * NULL), freeing the old one.  0, or -1 when out of memory, *dst unchanged.
 * A caller that wants "" for NULL passes `v ? v : ""`. */
int str_set(char **dst, const char *v);

/* A copy of s, or NULL for NULL (and when out of memory). */
char *str_dup_or_null(const char *s);

/* Appends src to the NUL-terminated string in dst (`size` bytes in all),
 * cutting it to fit; dst stays NUL-terminated.  0, or -1 when src was cut
 * (or dst was not terminated within size). */
int str_append(char *dst, size_t size, const char *src);

/* Reads `s` as a decimal integer in [min, max]: the whole string is an
 * optional sign and digits (no spaces, no base prefix).  0, or -1 (*out
 * untouched) for NULL, "", anything else, or a value out of range. */
int str_to_int64(const char *s, int64_t min, int64_t max, int64_t *out);

/* Two decimal digits of v (0..99) at p; returns p + 2. */
char *str_put2(char *p, int v);

/* The first `len` bytes of `text` into buf as snprintf("%s") would write
 * them: cut to size - 1 and terminated (nothing written when size is 0).
 * Returns buf. */
char *str_copy_cut(char *buf, size_t size, const char *text, size_t len);

/* The value of one hex digit (either case), or -1. */
int str_hex_digit(char c);

/* Whether a URL as sent (its %XX escapes not yet decoded) holds a control
 * character, raw or escaped: a byte below 0x20 or 0x7f (%00, %0a, %1B,
 * %7f...).  A '%' not followed by two hex digits is not an escape. */
bool str_url_has_control(const char *url);

#endif
