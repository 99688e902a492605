/* json_util.h: small jansson helpers for the JSON views: strings and
 * times that are null when absent; and JSON strings written straight into
 * a strbuf, for messages written without building a tree.
 *
 * Each returns a new reference (NULL only when out of memory).
 */
#ifndef WEIR_LIB_JSON_UTIL_H
#define WEIR_LIB_JSON_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/strbuf.h"

/* s as a JSON string, or null for NULL. */
json_t *json_util_string(const char *s);

/* Sets o[key] to s, or to null for NULL.  0, or -1 (as jansson). */
int json_util_set_string(json_t *o, const char *key, const char *s);

/* A time as clock_format_iso() writes it ("2026-11-30T12:00:00.123Z");
 * null for ms <= 0 (never happened). */
json_t *json_util_time_iso(int64_t ms);

/* A time as clock_format_airflow() writes it; null for ms <= 0. */
json_t *json_util_time_airflow(int64_t ms);

/* Appends s to sb as a JSON string (quoted; '"', '\\' and control
 * characters escaped as jansson's json_dumps writes them; other bytes as
 * they are), or null for NULL.  0, or -1 when s is not valid UTF-8 (which
 * jansson refuses too) or sb is out of memory (sb->failed). */
int json_util_write_string(struct strbuf *sb, const char *s);
/* Whether s is valid UTF-8, which json_util_write_string writes (and jansson
 * takes): false for NULL. */
bool json_util_utf8_ok(const char *s);

/* Appends `"key":`, with a ',' before it unless sb is empty or ends with
 * '{' (an object's first member): the members of an object written one
 * after the other.  The key is written as a JSON string (plain ASCII copied
 * at once).  0, or -1 as json_util_write_string. */
int json_util_write_key(struct strbuf *sb, const char *key);
/* A member: the key, then s as a JSON string (null for NULL), an integer
 * or true/false.  0, or -1 as json_util_write_string (sb->failed tells). */
int json_util_write_field(struct strbuf *sb, const char *key, const char *s);
void json_util_write_int_field(struct strbuf *sb, const char *key, long long v);
void json_util_write_bool_field(struct strbuf *sb, const char *key, bool v);
/* A real as jansson's json_dumps writes it (17 significant digits, a ".0"
 * added when neither '.' nor 'e' shows, the exponent without '+' or leading
 * zeros).  -1 when it is not finite (jansson has no such real) or sb is out
 * of memory. */
int json_util_write_real(struct strbuf *sb, double v);
#endif
