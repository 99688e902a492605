/* shell_context.h: where a templated value lands in a shell command, and
 * whether any quoting makes it safe there.
 *
 * The template renderer (model/template.c) feeds the literal text of a
 * command through a shell_ctx the way sh reads it: quotes, escapes, $(...),
 * backticks, ${...}, arithmetic, comments, here-documents, and the words of
 * each simple command.  At each `{{ }}` it asks two things: how to quote a
 * value there (continue an open '...', close and reopen a "...", or write
 * '...') and whether a value may stand there at all.
 *
 * A value is refused (shell_ctx_unsafe) where single quotes do not keep it
 * one literal string, because the shell, or bash when /bin/sh is bash or a
 * command calls it, reads the text again as code or as arithmetic (whose
 * `a[$(cmd)]` runs cmd in bash, and whose $(cmd) runs in every shell):
 *   - inside backticks, ${...}, $'...', a here-document or a comment,
 *     right after an unquoted $ (bash reads $'...' there) or a backslash,
 *     or as a here-document's delimiter;
 *   - inside arithmetic: $((...)), bash's $[...] and ((...)) (for ((...))
 *     too), and anywhere inside bash's [[ ... ]];
 *   - as an argument of eval, trap, alias, fc, let, read, unset, mapfile,
 *     readarray, getopts, compgen, complete; the word after -v of printf,
 *     test or [; a name (not the value of NAME=value) given to declare,
 *     typeset, local, export or readonly, and anything in such a command
 *     with -i or -n (after one, every later NAME=value too); an array
 *     subscript being assigned (a[...]=);
 *   - as the script of a shell's -c (sh, bash, dash, zsh, ksh, ... and
 *     su, runuser, script, flock), or before a shell's script or script
 *     file (where it could be -c), or in a here-string to a shell; any word
 *     after ssh or watch (they join their arguments into a remote or inner
 *     shell's command);
 *   - as the value of PS0-PS4, PROMPT_COMMAND, ENV or BASH_ENV (the shell
 *     expands them as code), also through printf -v;
 *   - inside a $(...) or `...` whose output lands in any of these places;
 *   - anywhere after text that dash and bash read differently, or after a
 *     syntax error bash goes on from at the next line (which may be inside
 *     a value): bash's $[...]; a quote or backslash inside arithmetic;
 *     $((a) b); \' inside $'...'; ( ; | & < > inside bash's NAME=(...);
 *     and after alias (a later command's name could mean eval).
 * A command is known by the text of its name after the last expansion
 * ("$(true)eval" is eval); one named by an expansion alone ($CMD) is not.
 * docs/security.md lists what was checked with dash and bash and why, and
 * what a check of the text cannot see (values stored and read back).
 */
#ifndef WEIR_MODEL_SHELL_CONTEXT_H
#define WEIR_MODEL_SHELL_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

#define SHELL_CTX_DEPTH 32

/* The simple command being read in a frame that holds commands (the top
 * level, $(...), `...`). */
struct shell_cmd {
	char word[48]; /* the current word so far, quotes removed ('\1' for a value) */
	size_t wlen;
	bool wlong;    /* longer than word[] holds */
	char tail[24]; /* its text after the last '/' or expansion (a program's name) */
	size_t tlen;
	bool tlong;
	bool in_word;
	char name[16];   /* the command's name (its basename), "" until read */
	char prev[8];    /* the word before the current one */
	bool redir;      /* the current word is a redirection's target */
	bool heredoc;    /* ... a here-document's delimiter */
	bool herestring; /* ... a here-string (<<<), standard input */
	bool shell;      /* a shell (sh, bash, su, ...) is named in this command */
	bool script;     /* ... with -c */
	bool operands;   /* ... and its first operand (script or file) is read */
	bool opt_arg;    /* the next word is an option's argument (-o NAME) */
	bool joins;      /* ssh or watch named: later words become shell code */
	bool decl_attr;  /* declare/typeset/local/... with -i or -n, printf -v PS4 */
	bool dbracket;   /* inside [[ ... ]] */
};

/* Embed it; shell_ctx_init() before use.  No allocation. */
struct shell_ctx {
	unsigned char stack[SHELL_CTX_DEPTH]; /* frames (shell_context.c) */
	int depth[SHELL_CTX_DEPTH];           /* open ( or [ inside a frame */
	struct shell_cmd cmd[SHELL_CTX_DEPTH];
	int sp;        /* stack[sp - 1] is the current frame */
	bool overflow; /* nested deeper than followed: refuse values */
	bool sq;       /* inside '...' */
	bool ansi;     /* inside $'...' */
	bool comment;
	bool word_start;      /* the last character ended a word */
	bool after_dollar;    /* the last character was an unquoted $ */
	bool after_backslash; /* ... a backslash that quotes what follows */
	bool int_attr;        /* declare -i/-n seen: assignments may be arithmetic */
	const char *broken;   /* why every later value is refused (text that sh and bash
	                       * read differently, or not at all), or NULL */
	int heredoc;          /* 0: none, 1: announced (body from the next line), 2: in the body */
	bool strip_tabs;
	char delim[64];
	char line[80]; /* the body line so far, to spot the delimiter */
	size_t line_len;
	bool line_long;
};

/* How a value is written where the context stands now. */
enum shell_quoting {
	SHELL_QUOTE_WORD,   /* plain text: 'value' */
	SHELL_QUOTE_INNER,  /* inside an open '...': value with ' as '\'' */
	SHELL_QUOTE_REOPEN, /* inside "...": close, 'value', reopen */
};

void shell_ctx_init(struct shell_ctx *sh);

/* Reads `len` bytes of literal command text (lookahead stays inside them,
 * so feed literal text that stands together in one call). */
void shell_ctx_feed(struct shell_ctx *sh, const char *text, size_t len);

/* Records that a value was written at this point (it is part of the
 * current word, its text unknown). */
void shell_ctx_value(struct shell_ctx *sh);

/* Why no quoting makes a value safe here, with what to do instead, as one
 * phrase that follows "cannot be quoted safely " (e.g. "inside arithmetic
 * $((...)), ..."); NULL when a quoted value is one literal string here. */
const char *shell_ctx_unsafe(const struct shell_ctx *sh);

/* How to quote a value here (when shell_ctx_unsafe() is NULL). */
enum shell_quoting shell_ctx_quoting(const struct shell_ctx *sh);

#endif
