/* json_line.c: one JSON text read fast (json_line.h).  The scan takes the
 * simple shapes only and gives up on anything else, which json_loads()
 * then reads: it never decides what is valid JSON on its own.
 */
#include "lib/json_line.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* deeper than this is rare in a line: json_loads reads it */
#define JSON_LINE_DEPTH 16
/* digits of an integer that cannot overflow int64 */
#define JSON_LINE_DIGITS 18

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* A string's body after its '"': its length, *end after the closing '"';
 * -1 for what the scan leaves to json_loads (an escape, a control or
 * non-ASCII byte, the text's end). */
static ptrdiff_t scan_string(const char *p, const char **end)
{
	const char *q = p;

	for (;;) {
		unsigned char c = (unsigned char)*q;
		if (c == '"')
			break;
		if (c < 0x20 || c >= 0x80 || c == '\\')
			return -1;
		q++;
	}
	*end = q + 1;
	return q - p;
}

static json_t *scan_value(const char **pp, int depth);

static json_t *scan_integer(const char **pp)
{
	const char *p = *pp;
	bool neg = *p == '-';
	int64_t v = 0;
	int n = 0;

	if (neg)
		p++;
	if (*p == '0' && p[1] >= '0' && p[1] <= '9')
		return NULL; /* a leading zero: an error, json_loads says which */
	while (*p >= '0' && *p <= '9') {
		if (++n > JSON_LINE_DIGITS)
			return NULL;
		v = v * 10 + (*p++ - '0');
	}
	if (n == 0 || *p == '.' || *p == 'e' || *p == 'E')
		return NULL; /* a real: json_loads reads it */
	*pp = p;
	return json_integer(neg ? -v : v);
}

static bool word(const char **pp, const char *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((*pp)[i] != w[i])
			return false;
	*pp += n;
	return true;
}

/* One member of an object at *p ("key": value) into o; *pp after it. */
static bool scan_member(const char **pp, int depth, json_t *o)
{
	const char *p = *pp, *key, *after;
	ptrdiff_t len;
	json_t *v;

	if (*p != '"')
		return false;
	key = p + 1;
	if ((len = scan_string(key, &after)) < 0)
		return false;
	p = skip_ws(after);
	if (*p != ':')
		return false;
	p = skip_ws(p + 1);
	if (!(v = scan_value(&p, depth)))
		return false;
	*pp = p;
	return json_object_setn_new_nocheck(o, key, (size_t)len, v) == 0;
}

/* One item of an array at *pp into a; *pp after it. */
static bool scan_item(const char **pp, int depth, json_t *a)
{
	json_t *v = scan_value(pp, depth);

	return v && json_array_append_new(a, v) == 0;
}

/* An object's or an array's content after its opening *pp: members read by
 * one(), separated by ',', up to `close`; *pp after it.  c is consumed: the
 * container, or NULL. */
static json_t *scan_container(const char **pp, int depth, char close, json_t *c,
                              bool (*one)(const char **, int, json_t *))
{
	const char *p = skip_ws(*pp + 1);

	if (!c)
		return NULL;
	if (*p != close) {
		for (;;) {
			if (!one(&p, depth + 1, c))
				goto fail;
			p = skip_ws(p);
			if (*p == close)
				break;
			if (*p != ',')
				goto fail;
			p = skip_ws(p + 1);
		}
	}
	*pp = p + 1;
	return c;
fail:
	json_decref(c);
	return NULL;
}

/* The value at *pp (no space before it), *pp moved past it; NULL for what
 * the scan leaves to json_loads. */
static json_t *scan_value(const char **pp, int depth)
{
	const char *p = *pp, *end;
	ptrdiff_t len;

	if (depth > JSON_LINE_DEPTH)
		return NULL;
	switch (*p) {
	case '{':
		return scan_container(pp, depth, '}', json_object(), scan_member);
	case '[':
		return scan_container(pp, depth, ']', json_array(), scan_item);
	case '"':
		if ((len = scan_string(p + 1, &end)) < 0)
			return NULL;
		*pp = end;
		return json_stringn_nocheck(p + 1, (size_t)len);
	case 't':
		return word(pp, "true", 4) ? json_true() : NULL;
	case 'f':
		return word(pp, "false", 5) ? json_false() : NULL;
	case 'n':
		return word(pp, "null", 4) ? json_null() : NULL;
	default:
		return (*p == '-' || (*p >= '0' && *p <= '9')) ? scan_integer(pp) : NULL;
	}
}

json_t *json_line_loads(const char *s)
{
	const char *p = skip_ws(s);
	json_t *v = NULL;

	if (*p == '{' || *p == '[')
		v = scan_value(&p, 0);
	if (v && *skip_ws(p) == '\0')
		return v;
	json_decref(v);
	return json_loads(s, 0, NULL);
}
