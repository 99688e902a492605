/* resp.c: RESP2 commands and replies (resp.h). */
#include "data/resp.h"

#include <stdlib.h>
#include <string.h>

/* `mark`, n in decimal, CRLF: a header line, written without printf (it
 * is most of a pipeline's formatting time). */
static void header(struct strbuf *out, char mark, size_t n)
{
	char buf[32];
	size_t i = sizeof buf;

	buf[--i] = '\n';
	buf[--i] = '\r';
	do {
		buf[--i] = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	buf[--i] = mark;
	strbuf_add(out, buf + i, sizeof buf - i);
}

void resp_command(struct strbuf *out, size_t argc, const char *const *argv, const size_t *len)
{
	header(out, '*', argc);
	for (size_t i = 0; i < argc; i++) {
		size_t n = len ? len[i] : strlen(argv[i]);
		header(out, '$', n);
		strbuf_add(out, argv[i], n);
		strbuf_add(out, "\r\n", 2);
	}
}

/* The line at buf[0, n) up to CRLF: its length, or -1 when not complete. */
static long line_len(const char *buf, size_t n)
{
	const char *e = memchr(buf, '\r', n);

	if (!e || (size_t)(e - buf) + 1 >= n)
		return -1;
	return e[1] == '\n' ? e - buf : -2;
}

static int parse_int(const char *s, long n, int64_t *out)
{
	char tmp[32], *end;

	if (n <= 0 || n >= (long)sizeof tmp)
		return -1;
	memcpy(tmp, s, (size_t)n);
	tmp[n] = '\0';
	*out = strtoll(tmp, &end, 10);
	return *end ? -1 : 0;
}

long resp_parse(const char *buf, size_t n, struct resp_reply *r)
{
	long l;
	size_t used;

	if (n < 1)
		return 0;
	l = line_len(buf + 1, n - 1);
	if (l == -2)
		return -1;
	if (l < 0)
		return 0;
	r->kind = buf[0];
	r->str = buf + 1;
	r->len = (size_t)l;
	used = (size_t)l + 3;
	switch (buf[0]) {
	case '+':
	case '-':
		return (long)used;
	case ':':
		return parse_int(buf + 1, l, &r->integer) < 0 ? -1 : (long)used;
	case '$':
		if (parse_int(buf + 1, l, &r->integer) < 0)
			return -1;
		if (r->integer < 0)
			return (long)used;
		if (n < used + (size_t)r->integer + 2)
			return 0;
		r->str = buf + used;
		r->len = (size_t)r->integer;
		if (memcmp(buf + used + r->len, "\r\n", 2))
			return -1;
		return (long)(used + r->len + 2);
	case '*': {
		int64_t items;
		if (parse_int(buf + 1, l, &items) < 0)
			return -1;
		r->integer = items;
		for (int64_t i = 0; i < items; i++) {
			struct resp_reply sub;
			long k = resp_parse(buf + used, n - used, &sub);
			if (k <= 0)
				return k;
			used += (size_t)k;
		}
		return (long)used;
	}
	default:
		return -1;
	}
}
