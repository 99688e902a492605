/* sqltext.c: splitting scripts, reading `:name` placeholders, quoting
 * values and names (sqltext.h).  One scanner, skip_noncode(), knows what is
 * not code in each dialect; the splitter and the binder both walk with it. */
#include "data/sqltext.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void data_params_release(struct data_params *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->names[i]);
		free(p->values[i]);
	}
	free(p->names);
	free(p->values);
	memset(p, 0, sizeof *p);
}

int data_params_find(const struct data_params *p, const char *name, const char **value)
{
	for (size_t i = 0; p && i < p->n; i++)
		if (!strcmp(p->names[i], name)) {
			*value = p->values[i];
			return 0;
		}
	return -1;
}

static int is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* The end of a $tag$ opener at s[i] (the index after its second '$'), or 0. */
static size_t dollar_tag_end(const char *s, size_t i)
{
	size_t j = i + 1;

	if (s[i] != '$' || (i > 0 && is_ident((unsigned char)s[i - 1])))
		return 0;
	if (isdigit((unsigned char)s[j]))
		return 0; /* $1: a parameter */
	while (is_ident((unsigned char)s[j]))
		j++;
	return s[j] == '$' ? j + 1 : 0;
}

/* When s[i] starts a string, a quoted name or a comment, the index just
 * after it (*unclosed set when it never ends); else i. */
static size_t skip_noncode(const char *s, size_t i, enum sql_dialect d, int *unclosed)
{
	char c = s[i], q;
	bool backslash;
	size_t j, tag;

	*unclosed = 0;
	if (c == '-' && s[i + 1] == '-')
		goto line_comment;
	if (c == '#' && d == SQL_MYSQL)
		goto line_comment;
	if (c == '/' && s[i + 1] == '*') {
		const char *e = strstr(s + i + 2, "*/");
		if (!e) {
			*unclosed = 1;
			return i + strlen(s + i);
		}
		return (size_t)(e - s) + 2;
	}
	if (d == SQL_POSTGRES && (tag = dollar_tag_end(s, i)) != 0) {
		size_t len = tag - i;
		for (j = tag; s[j]; j++)
			if (s[j] == '$' && !strncmp(s + j, s + i, len))
				return j + len;
		*unclosed = 1;
		return j;
	}
	if (c != '\'' && c != '"' && !(c == '`' && d != SQL_POSTGRES))
		return i;
	q = c;
	backslash = (d == SQL_MYSQL || d == SQL_CLICKHOUSE) ||
	            (q == '\'' && i > 0 && (s[i - 1] == 'E' || s[i - 1] == 'e') &&
	             (i < 2 || !is_ident((unsigned char)s[i - 2])));
	for (j = i + 1; s[j]; j++) {
		if (backslash && s[j] == '\\' && s[j + 1]) {
			j++;
			continue;
		}
		if (s[j] == q) {
			if (s[j + 1] == q) {
				j++;
				continue;
			}
			return j + 1;
		}
	}
	*unclosed = 1;
	return j;
line_comment:
	for (j = i; s[j] && s[j] != '\n'; j++)
		;
	return j;
}

static int unclosed_error(const char *s, size_t at, struct weir_error *err)
{
	char near[24];
	size_t n = strcspn(s + at, "\n");

	if (n > sizeof near - 1)
		n = sizeof near - 1;
	memcpy(near, s + at, n);
	near[n] = '\0';
	return weir_error_set(err, WEIR_E_INVALID,
	                      "unclosed quote or comment at offset %zu (\"%s\")", at, near);
}

/* Only blanks and comments in s[a, b)? */
static bool only_blank(const char *s, size_t a, size_t b, enum sql_dialect d)
{
	for (size_t i = a; i < b;) {
		int unclosed;
		size_t j;
		if (isspace((unsigned char)s[i])) {
			i++;
			continue;
		}
		j = skip_noncode(s, i, d, &unclosed);
		if (j == i || s[i] == '\'' || s[i] == '"' || s[i] == '`' || s[i] == '$')
			return false;
		i = j;
	}
	return true;
}

static int push_trimmed(struct strvec *out, const char *s, size_t a, size_t b)
{
	char *t;
	int rc;

	while (a < b && isspace((unsigned char)s[a]))
		a++;
	while (b > a && isspace((unsigned char)s[b - 1]))
		b--;
	t = strndup(s + a, b - a);
	if (!t)
		return -1;
	rc = strvec_push(out, t);
	free(t);
	return rc;
}

int sqltext_split(const char *s, enum sql_dialect d, struct strvec *out, struct weir_error *err)
{
	size_t start = 0, i = 0;

	for (;;) {
		int unclosed;
		size_t j;
		if (!s[i] || s[i] == ';') {
			if (!only_blank(s, start, i, d) && push_trimmed(out, s, start, i) < 0)
				return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			if (!s[i])
				return 0;
			start = ++i;
			continue;
		}
		j = skip_noncode(s, i, d, &unclosed);
		if (unclosed)
			return unclosed_error(s, i, err);
		i = j > i ? j : i + 1;
	}
}

static int add_order(size_t **order, size_t *n, size_t v)
{
	size_t *o = realloc(*order, (*n + 1) * sizeof *o);

	if (!o)
		return -1;
	o[(*n)++] = v;
	*order = o;
	return 0;
}

int sqltext_bind(const char *s, enum sql_dialect d, const struct data_params *p, struct strbuf *out,
                 size_t **order, size_t *n_order, struct weir_error *err)
{
	size_t i = 0, *pg_slot = NULL; /* PostgreSQL: the $N of each param, 0 = none yet */
	size_t pg_next = 0;

	*order = NULL;
	*n_order = 0;
	if (d == SQL_POSTGRES && p->n && !(pg_slot = calloc(p->n, sizeof *pg_slot)))
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	while (s[i]) {
		int unclosed;
		size_t j = skip_noncode(s, i, d, &unclosed), k, idx;
		char name[130];
		if (unclosed) {
			free(pg_slot);
			return unclosed_error(s, i, err);
		}
		if (j > i) {
			strbuf_add(out, s + i, j - i);
			i = j;
			continue;
		}
		if (s[i] != ':' || !(isalpha((unsigned char)s[i + 1]) || s[i + 1] == '_') ||
		    (i > 0 && (s[i - 1] == ':' || is_ident((unsigned char)s[i - 1])))) {
			strbuf_addch(out, s[i++]);
			continue;
		}
		for (k = i + 1; is_ident((unsigned char)s[k]); k++)
			;
		if (k - i - 1 >= sizeof name) {
			free(pg_slot);
			return weir_error_set(err, WEIR_E_INVALID,
			                      "parameter name at offset %zu is too long", i);
		}
		memcpy(name, s + i + 1, k - i - 1);
		name[k - i - 1] = '\0';
		for (idx = 0; idx < p->n && strcmp(p->names[idx], name); idx++)
			;
		if (idx == p->n) {
			free(pg_slot);
			free(*order);
			*order = NULL;
			*n_order = 0;
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "the statement uses :%s, which parameters does not give", name);
		}
		if (d == SQL_CLICKHOUSE) {
			sqltext_quote_clickhouse(out, p->values[idx]);
		} else if (d == SQL_POSTGRES) {
			if (!pg_slot[idx]) {
				pg_slot[idx] = ++pg_next;
				if (add_order(order, n_order, idx) < 0)
					out->failed = true;
			}
			strbuf_addf(out, "$%zu", pg_slot[idx]);
		} else {
			strbuf_addch(out, '?');
			if (add_order(order, n_order, idx) < 0)
				out->failed = true;
		}
		i = k;
	}
	free(pg_slot);
	if (out->failed)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return 0;
}

void sqltext_quote_clickhouse(struct strbuf *out, const char *v)
{
	if (!v) {
		strbuf_addstr(out, "NULL");
		return;
	}
	strbuf_addch(out, '\'');
	for (; *v; v++) {
		switch (*v) {
		case '\\':
			strbuf_addstr(out, "\\\\");
			break;
		case '\'':
			strbuf_addstr(out, "\\'");
			break;
		case '\n':
			strbuf_addstr(out, "\\n");
			break;
		case '\r':
			strbuf_addstr(out, "\\r");
			break;
		case '\t':
			strbuf_addstr(out, "\\t");
			break;
		case '\b':
			strbuf_addstr(out, "\\b");
			break;
		case '\f':
			strbuf_addstr(out, "\\f");
			break;
		default:
			strbuf_addch(out, *v);
		}
	}
	strbuf_addch(out, '\'');
}

void sqltext_quote_ident(struct strbuf *out, const char *name, enum sql_dialect d)
{
	char q = (d == SQL_MYSQL || d == SQL_CLICKHOUSE) ? '`' : '"';

	strbuf_addch(out, q);
	for (; *name; name++) {
		if (*name == q)
			strbuf_addch(out, q);
		strbuf_addch(out, *name);
	}
	strbuf_addch(out, q);
}

void sqltext_quote_idents(struct strbuf *out, char *const *names, size_t n, enum sql_dialect d)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(out, ", ");
		sqltext_quote_ident(out, names[i], d);
	}
}

int sqltext_returns_rows(const char *s)
{
	static const char *const words[] = {"select", "with",    "show",  "values", "describe",
	                                    "desc",   "explain", "table", "pragma", NULL};
	size_t i = 0, n;

	for (;;) {
		int unclosed;
		size_t j;
		while (isspace((unsigned char)s[i]) || s[i] == '(')
			i++;
		j = skip_noncode(s, i, SQL_MYSQL, &unclosed);
		if (j == i || s[i] == '\'' || s[i] == '"' || s[i] == '`')
			break;
		i = j;
	}
	for (n = 0; isalpha((unsigned char)s[i + n]); n++)
		;
	for (size_t w = 0; words[w]; w++)
		if (strlen(words[w]) == n && !strncasecmp(s + i, words[w], n))
			return 1;
	return 0;
}
