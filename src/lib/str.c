/* str.c: the small string helpers of str.h. */
#include "lib/str.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int str_set(char **dst, const char *v)
{
	char *c = NULL;
	if (v && !(c = strdup(v)))
		return -1;
	free(*dst);
	*dst = c;
	return 0;
}

char *str_dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int str_append(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(dst, size);
	if (n == size)
		return -1;
	size_t room = size - n - 1, len = strlen(src);
	size_t take = len < room ? len : room;
	memcpy(dst + n, src, take);
	dst[n + take] = '\0';
	return take == len ? 0 : -1;
}

int str_to_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

char *str_put2(char *p, int v)
{
	p[0] = (char)('0' + v / 10);
	p[1] = (char)('0' + v % 10);
	return p + 2;
}

char *str_copy_cut(char *buf, size_t size, const char *text, size_t len)
{
	if (size) {
		if (len >= size)
			len = size - 1;
		memcpy(buf, text, len);
		buf[len] = '\0';
	}
	return buf;
}

int str_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool str_url_has_control(const char *url)
{
	for (const char *p = url; p && *p; p++) {
		int c = (unsigned char)*p;
		if (c == '%' && str_hex_digit(p[1]) >= 0 && str_hex_digit(p[2]) >= 0) {
			c = str_hex_digit(p[1]) << 4 | str_hex_digit(p[2]);
			p += 2;
		}
		if (c < 0x20 || c == 0x7f)
			return true;
	}
	return false;
}
