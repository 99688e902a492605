/* shell_context.c: reads a command's literal text as sh (and bash) would,
 * far enough to say how a value is quoted where it lands and where no
 * quoting is safe (shell_context.h lists the places).  Every rule here was
 * checked by running the quoted value in dash and bash; the unit and fuzz
 * tests run rendered commands through both.
 *
 * Errs on the side of refusing: where it cannot tell (a construct it does
 * not follow, nesting too deep) a value is refused, never let through.
 */
#include "model/shell_context.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum frame {
	F_TOP,       /* plain text */
	F_CMDSUB,    /* $( ... ): plain text again */
	F_DQ,        /* " ... " */
	F_BACKTICK,  /* ` ... `: quoting rules of its own; refused */
	F_BRACE,     /* ${ ... }: refused */
	F_ARITH,     /* $(( ... )): refused */
	F_ARITH_SQ,  /* bash's $[ ... ]: refused */
	F_ARITH_CMD, /* bash's (( ... )) command: refused */
	F_ARRAY,     /* bash's NAME=( ... ): words, no commands */
};

#define ENV_ADVICE "use its environment variable (WEIR_PARAM_<NAME>, WEIR_ITEM) there instead"
#define NUMBER_DO                                                                                  \
	"check in the task that its environment variable (WEIR_PARAM_<NAME>, WEIR_ITEM) holds a "  \
	"number (case \"$WEIR_PARAM_X\" in ''|*[!0-9]*) exit 2;; esac) and use that variable "     \
	"there"
#define NUMBER_ADVICE                                                                              \
	"where the shell runs $(...) and bash runs a[$(...)] even within quotes; " NUMBER_DO
#define NAME_ADVICE                                                                                \
	"where bash evaluates a[$(...)] in a variable name; write the name in the template and "   \
	"pass the value as a quoted argument or its environment variable"
#define CODE_ADVICE                                                                                \
	"which runs its arguments as shell code; pass the value to the command itself, or use "    \
	"its environment variable (WEIR_PARAM_<NAME>, WEIR_ITEM) quoted in that code"

static bool is_cmd_frame(enum frame f)
{
	return f == F_TOP || f == F_CMDSUB || f == F_BACKTICK || f == F_ARRAY;
}

void shell_ctx_init(struct shell_ctx *sh)
{
	memset(sh, 0, sizeof *sh);
	sh->stack[0] = F_TOP;
	sh->sp = 1;
	sh->word_start = true;
}

static enum frame top(const struct shell_ctx *sh)
{
	return (enum frame)sh->stack[sh->sp - 1];
}

/* The frame of the command being read: the innermost that holds words. */
static int cur_idx(const struct shell_ctx *sh)
{
	int i = sh->sp - 1;
	while (i > 0 && !is_cmd_frame((enum frame)sh->stack[i]))
		i--;
	return i;
}

static struct shell_cmd *cur_cmd(struct shell_ctx *sh)
{
	return &sh->cmd[cur_idx(sh)];
}

static void push(struct shell_ctx *sh, enum frame f)
{
	if (sh->sp == SHELL_CTX_DEPTH) {
		sh->overflow = true;
		return;
	}
	sh->depth[sh->sp] = 0;
	memset(&sh->cmd[sh->sp], 0, sizeof sh->cmd[sh->sp]);
	sh->stack[sh->sp++] = (unsigned char)f;
}

static bool is_expansion(enum frame f)
{
	return f != F_TOP && f != F_DQ && f != F_ARRAY;
}

static void pop(struct shell_ctx *sh)
{
	if (sh->sp > 1) {
		enum frame f = top(sh);
		sh->sp--;
		/* "$(echo)eval" is eval: a command's name is read from the text
		 * after the last expansion */
		if (is_expansion(f))
			cur_cmd(sh)->tlen = 0;
	}
}

/* ---- words and commands ----------------------------------------------- */

static void word_add(struct shell_ctx *sh, char c)
{
	struct shell_cmd *cm = cur_cmd(sh);
	cm->in_word = true;
	if (cm->wlen + 1 < sizeof cm->word)
		cm->word[cm->wlen++] = c;
	else
		cm->wlong = true;
	cm->word[cm->wlen] = '\0';
	if (c == '/') {
		cm->tlen = 0;
		cm->tlong = false;
	} else if (cm->tlen + 1 < sizeof cm->tail) {
		cm->tail[cm->tlen++] = c;
	} else {
		cm->tlong = true;
	}
	cm->tail[cm->tlen] = '\0';
}

static bool in_list(const char *w, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(w, list[i]))
			return true;
	return false;
}

/* Programs that run their -c argument as shell code. */
static const char *const shells[] = {"sh",   "bash",    "dash",   "zsh",   "ksh",  "ksh93",
                                     "mksh", "pdksh",   "oksh",   "lksh",  "ash",  "yash",
                                     "posh", "rbash",   "fish",   "csh",   "tcsh", "busybox",
                                     "su",   "runuser", "script", "flock", NULL};
/* Programs that join their arguments into a command another shell runs. */
static const char *const joiners[] = {"ssh", "watch", NULL};
/* Words after which the next word is still in a command's first place. */
static const char *const prefixes[] = {"!",       "{",       "if",    "then",   "else",
                                       "elif",    "do",      "while", "until",  "time",
                                       "command", "builtin", "exec",  "coproc", NULL};
static const char *const declarers[] = {"declare", "typeset", "local", "export", "readonly", NULL};
/* Those of them whose -i and -n make values arithmetic or names. */
static const char *const attr_declarers[] = {"declare", "typeset", "local", NULL};

/* "NAME=" or "NAME+=" at the start of w (length of NAME, or 0). */
static size_t assign_name(const char *w)
{
	size_t n = 0;
	if (!(isalpha((unsigned char)w[0]) || w[0] == '_'))
		return 0;
	while (isalnum((unsigned char)w[n]) || w[n] == '_')
		n++;
	if (w[n] == '=' || (w[n] == '+' && w[n + 1] == '='))
		return n;
	return 0;
}

static bool is_option(const char *w)
{
	return (w[0] == '-' || w[0] == '+') && w[1] && w[1] != '-';
}

static const char *const special_vars[] = {"PS0", "PS1",      "PS2", "PS3", "PS4", "PROMPT_COMMAND",
                                           "ENV", "BASH_ENV", NULL};

/* The word being read is complete. */
static void word_end(struct shell_ctx *sh)
{
	struct shell_cmd *cm = cur_cmd(sh);
	if (!cm->in_word)
		return;
	const char *w = cm->word;
	/* a program's name: the text after the last / or expansion
	 * ("$(echo)eval" is eval), "" when too long to tell */
	const char *base = cm->tlong ? "" : cm->tail;
	bool end_of_opts = !strcmp(w, "--") || !strcmp(w, "-");
	cm->in_word = false;
	if (cm->redir) {
		cm->redir = cm->heredoc = cm->herestring = false;
		goto done; /* a file name: no part of the command's arguments */
	}
	if (cm->dbracket) {
		if (!strcmp(w, "]]"))
			cm->dbracket = false;
	} else if (sh->stack[cur_idx(sh)] == F_ARRAY) {
		/* an element: no command name */
	} else if (!cm->name[0]) {
		if (!strcmp(w, "[["))
			cm->dbracket = true;
		else if (!assign_name(w) && !in_list(base, prefixes) && !is_option(w) &&
		         !end_of_opts && !cm->wlong)
			snprintf(cm->name, sizeof cm->name, "%s", base[0] ? base : "/");
		if (!strcmp(cm->name, "alias")) /* dash expands aliases in scripts too */
			sh->broken = "after alias, which can give a later command the meaning of "
			             "eval; " ENV_ADVICE;
	} else if (!strcmp(cm->name, "function") && !strcmp(w, "{")) {
		cm->name[0] = '\0'; /* function NAME { ...: commands follow */
	} else if (in_list(cm->name, attr_declarers) && is_option(w) && strpbrk(w + 1, "in")) {
		cm->decl_attr = true;
		sh->int_attr = true;
	} else if (!strcmp(cm->name, "printf") && !strcmp(cm->prev, "-v") &&
	           in_list(w, special_vars)) {
		cm->decl_attr = true; /* printf -v PS4 ...: the value becomes code */
	}
	if (cm->shell && !cm->operands && !cm->opt_arg && !is_option(w) && !end_of_opts)
		cm->operands = true; /* the script (or -c's): positional arguments follow */
	cm->opt_arg = cm->shell && (!strcmp(w, "-o") || !strcmp(w, "+o") || !strcmp(w, "-O") ||
	                            !strcmp(w, "+O"));
	if (!(cm->shell && cm->operands) && in_list(base, shells)) {
		/* (after a shell's operands, "sh" is only an argument: $0) */
		cm->shell = true;
		cm->operands = false;
	} else if (cm->shell && ((is_option(w) && strchr(w, 'c')) || !strncmp(w, "--command", 9))) {
		cm->script = true;
	}
	if (in_list(base, joiners))
		cm->joins = true;
	snprintf(cm->prev, sizeof cm->prev, "%s", cm->wlong ? "" : w);
done:
	cm->wlen = cm->tlen = 0;
	cm->wlong = cm->tlong = false;
	cm->word[0] = cm->tail[0] = '\0';
}

/* The simple command is complete (; & | newline ( )). */
static void cmd_end(struct shell_ctx *sh)
{
	word_end(sh);
	struct shell_cmd *cm = cur_cmd(sh);
	bool dbracket = cm->dbracket; /* [[ a && b ]] is one command */
	memset(cm, 0, sizeof *cm);
	cm->dbracket = dbracket;
}

/* ---- here-documents ----------------------------------------------------- */

/* After "<<" at s: reads the delimiter word (quotes removed). */
static void heredoc_start(struct shell_ctx *sh, const char *s)
{
	size_t n = 0;
	sh->strip_tabs = *s == '-';
	if (*s == '-')
		s++;
	while (*s == ' ' || *s == '\t')
		s++;
	while (*s && !strchr(" \t\n;|&<>()", *s)) {
		if (*s != '\'' && *s != '"' && *s != '\\' && n + 1 < sizeof sh->delim)
			sh->delim[n++] = *s;
		s++;
	}
	sh->delim[n] = '\0';
	sh->heredoc = 1;
}

static void heredoc_line_end(struct shell_ctx *sh)
{
	const char *l = sh->line;
	size_t len = sh->line_len;
	if (sh->strip_tabs)
		while (len > 0 && *l == '\t') {
			l++;
			len--;
		}
	if (!sh->line_long && len == strlen(sh->delim) && !memcmp(l, sh->delim, len))
		sh->heredoc = 0;
	sh->line_len = 0;
	sh->line_long = false;
}

/* ---- one character at a time ---------------------------------------------- */

/* At a '$' in plain text, "..." or arithmetic: opens what it starts.
 * Returns the characters consumed. */
static size_t dollar(struct shell_ctx *sh, const char *s, bool plain)
{
	word_add(sh, '$');
	cur_cmd(sh)->tlen = 0;
	if (s[1] == '(' && s[2] == '(') {
		push(sh, F_ARITH);
		return 3;
	}
	if (s[1] == '(') {
		push(sh, F_CMDSUB);
		sh->word_start = true;
		return 2;
	}
	if (s[1] == '{') {
		push(sh, F_BRACE);
		return 2;
	}
	if (s[1] == '[') {
		push(sh, F_ARITH_SQ);
		sh->broken = "after bash's $[...], which dash reads as plain text; " ENV_ADVICE;
		return 2;
	}
	if (plain && s[1] == '\'') {
		sh->sq = sh->ansi = true;
		return 2;
	}
	sh->after_dollar = plain && !s[1];
	return 1;
}

/* Inside arithmetic: only the closing )) or ] and what nests matter. */
static size_t feed_arith(struct shell_ctx *sh, const char *s)
{
	enum frame f = top(sh);
	char c = s[0];
	word_add(sh, c);
	switch (c) {
	case '\\':
	case '"':
	case '\'':
		/* quotes in arithmetic: dash and bash differ, (( )) is not
		 * arithmetic to dash at all */
		sh->broken = "after a quote or backslash inside arithmetic, which shells read "
		             "differently; " ENV_ADVICE;
		if (c == '"')
			push(sh, F_DQ);
		else if (c == '\'')
			sh->sq = true;
		return c == '\\' && s[1] ? 2 : 1;
	case '`':
		push(sh, F_BACKTICK);
		return 1;
	case '$':
		return dollar(sh, s, false);
	case '(':
		if (f != F_ARITH_SQ)
			sh->depth[sh->sp - 1]++;
		return 1;
	case '[':
		if (f == F_ARITH_SQ)
			sh->depth[sh->sp - 1]++;
		return 1;
	case ']':
		if (f == F_ARITH_SQ) {
			if (sh->depth[sh->sp - 1] == 0)
				pop(sh);
			else
				sh->depth[sh->sp - 1]--;
		}
		return 1;
	case ')':
		if (f == F_ARITH_SQ)
			return 1;
		if (sh->depth[sh->sp - 1] > 0) {
			sh->depth[sh->sp - 1]--;
			return 1;
		}
		pop(sh);
		if (s[1] == ')')
			return 2;
		/* "$((a) b)" or "((a) b)": bash reads a subshell inside $( ) or
		 * ( ), dash goes on with the arithmetic up to the next "))" */
		sh->broken = "after $((...) or ((...) closed by a single ), which dash and bash "
		             "read differently; " ENV_ADVICE;
		if (f == F_ARITH)
			push(sh, F_CMDSUB);
		else if (top(sh) == F_CMDSUB)
			sh->depth[sh->sp - 1]++; /* the outer ( is still open */
		return 1;
	default:
		return 1;
	}
}

static size_t feed_dq(struct shell_ctx *sh, const char *s)
{
	char c = s[0];
	if (c == '\\' && s[1]) {
		word_add(sh, s[1]);
		return 2;
	}
	if (c == '"') {
		pop(sh);
		return 1;
	}
	if (c == '$')
		return dollar(sh, s, false);
	word_add(sh, c);
	if (c == '`')
		push(sh, F_BACKTICK);
	return 1;
}

/* Plain text: the top level, $( ), ` ` and ${ }. */
static size_t feed_plain(struct shell_ctx *sh, const char *s)
{
	char c = s[0];
	enum frame f = top(sh);
	bool was_word_start = sh->word_start;
	bool cmd = is_cmd_frame(f);
	if (f == F_ARRAY && strchr(";|&<>(", c))
		sh->broken = "after a syntax error in bash's NAME=(...), from which bash goes on "
		             "reading at the next line, maybe inside a value; " ENV_ADVICE;
	sh->word_start = strchr(" \t\n;&|()", c) != NULL;
	if (!cmd) { /* ${ ... }: refused inside; only its end matters */
		word_add(sh, c);
		if (c == '}')
			pop(sh);
		else if (c == '\\' && s[1])
			return 2;
		else if (c == '\'')
			sh->sq = true;
		else if (c == '"')
			push(sh, F_DQ);
		else if (c == '`')
			push(sh, F_BACKTICK);
		else if (c == '$')
			return dollar(sh, s, false);
		return 1;
	}
	switch (c) {
	case '\\':
		if (s[1] == '\n')
			return 2;
		if (s[1])
			word_add(sh, s[1]);
		return s[1] ? 2 : 1;
	case '\'':
		cur_cmd(sh)->in_word = true;
		sh->sq = true;
		return 1;
	case '"':
		cur_cmd(sh)->in_word = true;
		push(sh, F_DQ);
		return 1;
	case '`':
		if (f == F_BACKTICK) {
			word_end(sh);
			pop(sh);
		} else {
			word_add(sh, '`');
			push(sh, F_BACKTICK);
		}
		return 1;
	case '$':
		return dollar(sh, s, true);
	case ' ':
	case '\t':
		word_end(sh);
		return 1;
	case ';':
	case '|':
	case '\n':
		cmd_end(sh);
		if (c == '\n' && sh->heredoc == 1 && sh->sp == 1)
			sh->heredoc = 2;
		return 1;
	case '&':
		if (s[1] == '>') { /* bash's &> and &>> */
			word_end(sh);
			cur_cmd(sh)->redir = true;
			return s[2] == '>' ? 3 : 2;
		}
		cmd_end(sh);
		return 1;
	case '(': {
		struct shell_cmd *cm = cur_cmd(sh);
		if (f != F_ARRAY && cm->in_word && !cm->wlong && cm->wlen > 0 &&
		    cm->word[cm->wlen - 1] == '=' && assign_name(cm->word) &&
		    strlen(cm->word) == cm->wlen) {
			push(sh, F_ARRAY); /* bash's NAME=( ... ) */
			sh->word_start = true;
			return 1;
		}
		if (was_word_start && s[1] == '(') {
			cmd_end(sh);
			push(sh, F_ARITH_CMD);
			return 2;
		}
		if (f == F_CMDSUB)
			sh->depth[sh->sp - 1]++;
		cmd_end(sh);
		return 1;
	}
	case ')':
		cmd_end(sh);
		if (f == F_ARRAY)
			pop(sh);
		if (f == F_CMDSUB) {
			if (sh->depth[sh->sp - 1] == 0)
				pop(sh);
			else
				sh->depth[sh->sp - 1]--;
		}
		return 1;
	case '#':
		if (was_word_start) {
			sh->comment = true;
			return 1;
		}
		word_add(sh, c);
		return 1;
	case '<':
	case '>': {
		struct shell_cmd *cm = cur_cmd(sh);
		if (cm->in_word && cm->wlen > 0 && strspn(cm->word, "0123456789") == cm->wlen) {
			/* "2>": a file descriptor, not a word */
			cm->in_word = false;
			cm->wlen = 0;
			cm->word[0] = '\0';
		}
		word_end(sh);
		cm->redir = true;
		if (c == '<' && s[1] == '<' && s[2] == '<') {
			cm->herestring = true;
			return 3; /* bash's here-string: a word follows */
		}
		if (c == '<' && s[1] == '<') {
			cm->heredoc = true;
			heredoc_start(sh, s + 2);
			return s[2] == '-' ? 3 : 2;
		}
		return s[1] && strchr("<>&|", s[1]) ? 2 : 1;
	}
	default:
		word_add(sh, c);
		return 1;
	}
}

/* Feeds the character at s[0] (s[1..] is lookahead); returns how many
 * characters it consumed. */
static size_t feed(struct shell_ctx *sh, const char *s)
{
	char c = s[0];
	sh->after_dollar = false;
	if (sh->heredoc == 2) {
		if (c == '\n')
			heredoc_line_end(sh);
		else if (sh->line_len + 1 < sizeof sh->line)
			sh->line[sh->line_len++] = c;
		else
			sh->line_long = true;
		return 1;
	}
	if (sh->comment) {
		if (c == '\n') {
			sh->comment = false;
			sh->word_start = true;
			cmd_end(sh);
			if (sh->heredoc == 1)
				sh->heredoc = 2;
		}
		return 1;
	}
	/* a backslash just before a value would escape its opening quote */
	sh->after_backslash = c == '\\' && !s[1] && (!sh->sq || sh->ansi);
	if (sh->sq) {
		if (sh->ansi && c == '\\' && s[1]) {
			if (s[1] == '\'')
				sh->broken = "after \\' inside $'...', which ends the quote to "
				             "dash; " ENV_ADVICE;
			word_add(sh, s[1]);
			return 2;
		}
		if (c == '\'')
			sh->sq = sh->ansi = false;
		else
			word_add(sh, c);
		return 1;
	}
	switch (top(sh)) {
	case F_DQ:
		return feed_dq(sh, s);
	case F_ARITH:
	case F_ARITH_SQ:
	case F_ARITH_CMD:
		return feed_arith(sh, s);
	default:
		return feed_plain(sh, s);
	}
}

void shell_ctx_feed(struct shell_ctx *sh, const char *text, size_t len)
{
	/* a copy keeps the lookahead inside this text */
	char *copy = strndup(text, len);
	if (!copy) {
		sh->overflow = true; /* refuse values from here on */
		return;
	}
	for (size_t i = 0; copy[i];)
		i += feed(sh, copy + i);
	free(copy);
}

void shell_ctx_value(struct shell_ctx *sh)
{
	sh->after_dollar = sh->after_backslash = false;
	sh->word_start = false;
	word_add(sh, '\1');
}

/* ---- the verdict -------------------------------------------------------------- */

/* The current word opens an array subscript being assigned: "a[" or "[". */
static bool in_subscript(const char *w)
{
	const char *b = strchr(w, '[');
	if (!b || strchr(b, ']') || strchr(w, '='))
		return false;
	for (const char *p = w; p < b; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return false;
	return true;
}

/* The rules of one command, `cm`, whose current word holds the value (or
 * the $(...) the value is in, whose output takes its place). */
static const char *cmd_unsafe(const struct shell_ctx *sh, const struct shell_cmd *cm)
{
	const char *w = cm->word;
	size_t an = assign_name(w);
	static const char *const code[] = {"eval", "trap", "alias", "fc", NULL};
	static const char *const names[] = {"read",    "unset",   "mapfile",  "readarray",
	                                    "getopts", "compgen", "complete", NULL};

	if (cm->heredoc)
		return "as a here-document's delimiter; " ENV_ADVICE;
	if (cm->redir && cm->herestring && cm->shell)
		return "in a here-string, the standard input of a shell, which may read it as "
		       "commands; " ENV_ADVICE;
	if (cm->redir)
		return NULL; /* a file name or a here-string: as safe as any argument */
	if (cm->dbracket)
		return "inside bash's [[ ... ]], whose -eq, -lt, ... operands are arithmetic and "
		       "whose -v takes a variable name, where bash runs a[$(...)] even within "
		       "quotes; " NUMBER_DO;
	if (cm->joins)
		return "in the arguments of ssh or watch, which join them into a command for "
		       "another shell; " ENV_ADVICE;
	if (cm->shell && !cm->operands && cm->script)
		return "in the script of a shell's -c, which the inner shell runs as code; pass it "
		       "as an argument after the script (sh -c '... \"$1\" ...' sh {{ params.X }}) "
		       "or use its environment variable there";
	if (cm->shell && !cm->operands)
		return "before a shell's script, where it could be an option such as -c; write "
		       "the script or its file in the template and pass the value after it";
	if (an) {
		char nm[32];
		snprintf(nm, sizeof nm, "%.*s", (int)(an < sizeof nm - 1 ? an : sizeof nm - 1), w);
		if (in_list(nm, special_vars))
			return "in the value of PS0-PS4, PROMPT_COMMAND, ENV or BASH_ENV, which "
			       "the "
			       "shell expands as code; set those from fixed text";
	}
	if (!cm->name[0] && in_subscript(w))
		return "inside an array subscript being assigned, " NUMBER_ADVICE;
	if (!cm->name[0] && an && sh->int_attr)
		return "in an assignment after declare -i or -n, where bash reads the value as "
		       "arithmetic or a variable name; " ENV_ADVICE;
	if (in_list(cm->name, code))
		return "in an argument of eval, trap, alias or fc, " CODE_ADVICE;
	if (!strcmp(cm->name, "let"))
		return "in an argument of let, which reads it as arithmetic, " NUMBER_ADVICE;
	if (in_list(cm->name, names))
		return "in an argument of read, unset, mapfile, readarray, getopts, compgen or "
		       "complete, " NAME_ADVICE;
	if (in_list(cm->name, declarers)) {
		if (cm->decl_attr || sh->int_attr)
			return "in a declare, typeset or local with -i or -n (or after one), where "
			       "bash reads values as arithmetic or variable names; " ENV_ADVICE;
		if (!an)
			return "where declare, typeset, local, export or readonly take a name "
			       "(only "
			       "the value of NAME=value may be templated), " NAME_ADVICE;
	}
	if ((!strcmp(cm->name, "printf") || !strcmp(cm->name, "test") || !strcmp(cm->name, "[")) &&
	    (!strcmp(cm->prev, "-v") || !strncmp(w, "-v", 2)))
		return "after -v, where bash reads a variable name, " NAME_ADVICE;
	if (!strcmp(cm->name, "printf") && cm->decl_attr)
		return "in a printf -v into PS0-PS4, PROMPT_COMMAND, ENV or BASH_ENV, which the "
		       "shell expands as code; set those from fixed text";
	return NULL;
}

const char *shell_ctx_unsafe(const struct shell_ctx *sh)
{
	if (sh->overflow)
		return "in quoting nested too deeply to follow; " ENV_ADVICE;
	if (sh->heredoc == 2)
		return "in a here-document; " ENV_ADVICE;
	if (sh->comment)
		return "in a comment; " ENV_ADVICE;
	if (sh->ansi)
		return "inside $'...'; " ENV_ADVICE;
	if (sh->broken)
		return sh->broken;
	if (sh->after_backslash)
		return "right after a backslash, which would escape the quote it starts "
		       "with; " ENV_ADVICE;
	if (sh->after_dollar)
		return "right after a $ (bash reads $'...' there); " ENV_ADVICE;
	for (int i = 0; i < sh->sp; i++) {
		switch ((enum frame)sh->stack[i]) {
		case F_BACKTICK:
			return "inside `...` (use $(...) instead); " ENV_ADVICE;
		case F_BRACE:
			return "inside ${...}; " ENV_ADVICE;
		case F_ARITH:
			return "inside arithmetic $((...)), " NUMBER_ADVICE;
		case F_ARITH_SQ:
			return "inside bash's arithmetic $[...], " NUMBER_ADVICE;
		case F_ARITH_CMD:
			return "inside bash's arithmetic ((...)), " NUMBER_ADVICE;
		default:
			break;
		}
	}
	/* the command the value is in, then each command whose word holds the
	 * $(...) or `...` around it: eval "$(printf %s VALUE)" runs the value */
	for (int i = sh->sp - 1; i >= 0; i--) {
		if (!is_cmd_frame((enum frame)sh->stack[i]))
			continue;
		const char *why = cmd_unsafe(sh, &sh->cmd[i]);
		if (why)
			return why;
	}
	return NULL;
}

enum shell_quoting shell_ctx_quoting(const struct shell_ctx *sh)
{
	if (sh->sq)
		return SHELL_QUOTE_INNER;
	if (top(sh) == F_DQ)
		return SHELL_QUOTE_REOPEN;
	return SHELL_QUOTE_WORD;
}
