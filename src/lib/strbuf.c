/* strbuf.c: the growable string buffer of strbuf.h. */
#include "lib/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char strbuf_empty[1];

void strbuf_init(struct strbuf *sb)
{
	sb->buf = strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
	sb->failed = false;
}

int strbuf_grow(struct strbuf *sb, size_t extra)
{
	if (sb->failed)
		return -1;
	if (extra > SIZE_MAX - sb->len - 1) {
		sb->failed = true;
		return -1;
	}
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return 0;
	size_t ncap = sb->alloc ? sb->alloc : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	char *nb = realloc(sb->alloc ? sb->buf : NULL, ncap);
	if (!nb) {
		sb->failed = true;
		return -1;
	}
	if (!sb->alloc)
		nb[0] = '\0';
	sb->buf = nb;
	sb->alloc = ncap;
	return 0;
}

int strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (strbuf_grow(sb, len) < 0)
		return -1;
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf_addstr(struct strbuf *sb, const char *s)
{
	return strbuf_add(sb, s, strlen(s));
}

int strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;
	return strbuf_add(sb, &ch, 1);
}

int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	char tmp[1];

	if (sb->failed)
		return -1;
	va_copy(cp, ap);
	int n = vsnprintf(tmp, sizeof tmp, fmt, cp);
	va_end(cp);
	if (n < 0 || strbuf_grow(sb, (size_t)n) < 0) {
		sb->failed = true;
		return -1;
	}
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
	return 0;
}

int strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return rc;
}

void strbuf_remove(struct strbuf *sb, size_t pos, size_t n)
{
	if (pos >= sb->len)
		return;
	if (n > sb->len - pos)
		n = sb->len - pos;
	memmove(sb->buf + pos, sb->buf + pos + n, sb->len - pos - n);
	sb->len -= n;
	sb->buf[sb->len] = '\0';
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
	sb->failed = false;
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *s = NULL;
	if (sb->failed) {
		strbuf_release(sb);
	} else {
		s = sb->alloc ? sb->buf : strdup("");
		if (len && s)
			*len = sb->len;
		strbuf_init(sb);
	}
	return s;
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb);
}

int strbuf_addi(struct strbuf *sb, long long v)
{
	char buf[24], *p = buf + sizeof buf;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	return strbuf_add(sb, p, (size_t)(buf + sizeof buf - p));
}
