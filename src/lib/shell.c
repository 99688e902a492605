/* shell.c: single-quoting for /bin/sh. */
#include "lib/shell.h"

#include <string.h>

int shell_quote_inner(struct strbuf *sb, const char *s)
{
	for (const char *q; (q = strchr(s, '\'')); s = q + 1) {
		strbuf_add(sb, s, (size_t)(q - s));
		strbuf_addstr(sb, "'\\''");
	}
	strbuf_addstr(sb, s);
	return sb->failed ? -1 : 0;
}

int shell_quote(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '\'');
	shell_quote_inner(sb, s);
	strbuf_addch(sb, '\'');
	return sb->failed ? -1 : 0;
}

char *shell_quoted(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	shell_quote(&sb, s);
	return strbuf_detach(&sb, NULL);
}
