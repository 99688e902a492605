/* json_util.c: null-when-absent strings and times for the JSON views;
 * JSON strings written into a strbuf. */
#include "lib/json_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/clock.h"

json_t *json_util_string(const char *s)
{
	return s ? json_string(s) : json_null();
}

int json_util_set_string(json_t *o, const char *key, const char *s)
{
	return json_object_set_new(o, key, json_util_string(s));
}

json_t *json_util_time_iso(int64_t ms)
{
	char buf[40];
	return ms <= 0 ? json_null() : json_string(clock_format_iso(ms, buf, sizeof buf));
}

json_t *json_util_time_airflow(int64_t ms)
{
	char buf[48];
	return ms <= 0 ? json_null() : json_string(clock_format_airflow(ms, buf, sizeof buf));
}

/* The length of the UTF-8 sequence at s (a lead byte >= 0x80), or 0 when it
 * is not a valid one (overlong, a surrogate, above U+10FFFF, cut short). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0], cp;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* 1: a byte a JSON string holds as it is (plain ASCII but '"' and '\\') */
static const unsigned char plain_byte[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* One byte, without strbuf_add's call when there is room. */
static void put_byte(struct strbuf *sb, char c)
{
	if (sb->len + 1 < sb->alloc && !sb->failed) {
		sb->buf[sb->len++] = c;
		sb->buf[sb->len] = '\0';
	} else {
		strbuf_addch(sb, c);
	}
}

int json_util_write_string(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run;

	if (!s)
		return strbuf_add(sb, "null", 4);
	put_byte(sb, '"');
	run = p;
	for (;;) {
		const char *esc = NULL;
		char u[8];
		size_t n;

		while (plain_byte[*p])
			p++;
		if (!*p)
			break;
		if (*p >= 0x80) {
			if (!(n = utf8_len(p)))
				return -1;
			p += n;
			continue;
		}
		strbuf_add(sb, run, (size_t)(p - run));
		switch (*p) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		default:
			snprintf(u, sizeof u, "\\u%04X", *p);
			esc = u;
		}
		strbuf_addstr(sb, esc);
		run = ++p;
	}
	strbuf_add(sb, run, (size_t)(p - run));
	put_byte(sb, '"');
	return sb->failed ? -1 : 0;
}

bool json_util_utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (!s)
		return false;
	while (*p) {
		if (*p < 0x80) {
			p++;
			continue;
		}
		if (!(n = utf8_len(p)))
			return false;
		p += n;
	}
	return true;
}

int json_util_write_key(struct strbuf *sb, const char *key)
{
	size_t n = 0;

	if (sb->len && sb->buf[sb->len - 1] != '{')
		put_byte(sb, ',');
	/* a key of plain ASCII (most: the writers' own) is copied as it is */
	while (plain_byte[(unsigned char)key[n]])
		n++;
	if (key[n] || strbuf_grow(sb, n + 3) < 0) {
		int rc = json_util_write_string(sb, key);
		put_byte(sb, ':');
		return rc;
	}
	sb->buf[sb->len] = '"';
	memcpy(sb->buf + sb->len + 1, key, n);
	memcpy(sb->buf + sb->len + 1 + n, "\":", 3); /* and the NUL */
	sb->len += n + 3;
	return 0;
}

int json_util_write_field(struct strbuf *sb, const char *key, const char *v)
{
	int rc = json_util_write_key(sb, key);
	return json_util_write_string(sb, v) | rc;
}

void json_util_write_int_field(struct strbuf *sb, const char *key, long long v)
{
	json_util_write_key(sb, key);
	strbuf_addi(sb, v);
}

void json_util_write_bool_field(struct strbuf *sb, const char *key, bool v)
{
	json_util_write_key(sb, key);
	strbuf_addstr(sb, v ? "true" : "false");
}

int json_util_write_real(struct strbuf *sb, double v)
{
	char buf[40], *e;
	int n;

	if (!isfinite(v))
		return -1;
	n = snprintf(buf, sizeof buf - 3, "%.17g", v);
	if (n < 0 || (size_t)n >= sizeof buf - 3)
		return -1;
	e = strchr(buf, 'e');
	if (!e && !strchr(buf, '.')) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	if (e) {
		char *from = e + 1, *to = e + 1;
		if (*from == '-')
			from++, to++;
		else if (*from == '+')
			from++;
		while (*from == '0' && from[1])
			from++;
		memmove(to, from, strlen(from) + 1);
		n = (int)strlen(buf);
	}
	return strbuf_add(sb, buf, (size_t)n);
}
