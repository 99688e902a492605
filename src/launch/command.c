/* command.c: a command run directly or by the shell (command.h). */
#include "launch/command.h"

#include <string.h>

/* Words that mean something to sh as a command's first word: its keywords,
 * and builtins that have no program of the same name (or whose program
 * would not act on the shell itself). */
static const char *const shell_words[] = {
    "!", "{", "}", "[[", "]]", "case", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "time", "until", "while",
    ".", ":", "alias", "bg", "break", "cd", "command", "continue", "eval", "exec", "exit",
    "export", "fg", "getopts", "hash", "jobs", "local", "read", "readonly", "return", "set",
    "shift", "source", "times", "trap", "type", "ulimit", "umask", "unalias", "unset", "wait",
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

bool command_needs_shell(const char *cmd)
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
	for (size_t i = 0; i < sizeof shell_words / sizeof shell_words[0]; i++)
		if (strlen(shell_words[i]) == wl && !strncmp(shell_words[i], w, wl))
			return true;
	return false;
}

int command_words(const char *cmd, struct strvec *out)
{
	char word[4096];

	if (command_needs_shell(cmd))
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
