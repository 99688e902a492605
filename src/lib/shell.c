/* shell.c: single-quoting for /bin/sh, and whether a command needs the
 * shell at all (shell.h). */
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

/* Words that mean something to sh as a command's first word: its keywords,
 * and builtins that have no program of the same name (or whose program
 * would not act on the shell itself). */
static const char *const sh_first_words[] = {
    "!",       "{",        "}",      "[[",       "]]",       "case",   "do",    "done",    "elif",
    "else",    "esac",     "fi",     "for",      "function", "if",     "in",    "select",  "then",
    "time",    "until",    "while",  ".",        ":",        "alias",  "bg",    "break",   "cd",
    "command", "continue", "eval",   "exec",     "exit",     "export", "fg",    "getopts", "hash",
    "jobs",    "local",    "read",   "readonly", "return",   "set",    "shift", "source",  "times",
    "trap",    "type",     "ulimit", "umask",    "unalias",  "unset",  "wait",
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

bool shell_needed(const char *cmd)
{
	const char *p, *w;
	size_t wl;

	if (!cmd)
		return true;
	if (strpbrk(cmd, ";&|<>()$`\\\"'*?[#~=%\n\r"))
		return true;
	for (p = cmd; is_blank(*p); p++)
		;
	if (!*p)
		return true; /* nothing to run: the shell's empty command */
	w = p;
	while (*p && !is_blank(*p))
		p++;
	wl = (size_t)(p - w);
	for (size_t i = 0; i < sizeof sh_first_words / sizeof sh_first_words[0]; i++)
		if (strlen(sh_first_words[i]) == wl && !strncmp(sh_first_words[i], w, wl))
			return true;
	return false;
}

int shell_words(const char *cmd, struct strvec *out)
{
	char word[4096];

	if (shell_needed(cmd))
		return 1;
	for (const char *p = cmd; *p;) {
		size_t n = 0;
		while (is_blank(*p))
			p++;
		if (!*p)
			break;
		while (*p && !is_blank(*p)) {
			if (n + 1 >= sizeof word) {
				strvec_release(out);
				return 1; /* a word this long: let the shell have it */
			}
			word[n++] = *p++;
		}
		word[n] = '\0';
		if (strvec_push(out, word) < 0) {
			strvec_release(out);
			return -1;
		}
	}
	return 0;
}
