/* shell.h: /bin/sh's rules: quoting text for it, and whether a command
 * needs it.
 *
 * A quoted string is one word to the shell whatever it holds: it is
 * written between single quotes, and each single quote inside as '\''
 * (close, an escaped quote, reopen).  Nothing else is special there.
 */
#ifndef WEIR_LIB_SHELL_H
#define WEIR_LIB_SHELL_H

#include <stdbool.h>

#include "lib/strbuf.h"
#include "lib/strvec.h"

/* Appends 's' (quotes included) to sb.  0, or -1 when out of memory. */
int shell_quote(struct strbuf *sb, const char *s);

/* Appends only what stands between the quotes: s with each ' written as
 * '\'' (for a value continued inside an already open '...').  0 or -1. */
int shell_quote_inner(struct strbuf *sb, const char *s);

/* 's' as a new string (free() it); NULL when out of memory. */
char *shell_quoted(const char *s);

/* Whether a command needs the shell.  As make does: a command with none of
 * the shell's special characters (; & | < > ( ) $ ` \ " ' * ? [ # ~ = %
 * and newline), whose first word is no keyword or builtin of the shell
 * (if, for, {, !, cd, exit, export, ...), means the same run directly as
 * words split at blanks (spaces and tabs) as it means to /bin/sh -c; the
 * launcher and the notifier then save the shell's start.  Pure; no I/O. */

/* True when `cmd` must go through /bin/sh -c (an empty command too). */
bool shell_needed(const char *cmd);

/* The command's words, when it needs no shell: 0 with `out` filled (a
 * NULL-terminated argv in out->v); 1 when it needs the shell (out left
 * empty); -1 when out of memory. */
int shell_words(const char *cmd, struct strvec *out);

#endif
