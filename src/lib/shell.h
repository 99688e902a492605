/* shell.h: quoting text for /bin/sh.
 *
 * A quoted string is one word to the shell whatever it holds: it is
 * written between single quotes, and each single quote inside as '\''
 * (close, an escaped quote, reopen).  Nothing else is special there.
 */
#ifndef WEIR_LIB_SHELL_H
#define WEIR_LIB_SHELL_H

#include "lib/strbuf.h"

/* Appends 's' (quotes included) to sb.  0, or -1 when out of memory. */
int shell_quote(struct strbuf *sb, const char *s);

/* Appends only what stands between the quotes: s with each ' written as
 * '\'' (for a value continued inside an already open '...').  0 or -1. */
int shell_quote_inner(struct strbuf *sb, const char *s);

/* 's' as a new string (free() it); NULL when out of memory. */
char *shell_quoted(const char *s);

#endif
