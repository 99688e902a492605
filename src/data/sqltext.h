/* sqltext.h: SQL text as weir reads it: statements split out of a script,
 * `:name` placeholders turned into each engine's bound parameters, and the
 * one function that writes a value as a ClickHouse literal.
 *
 * Both the splitter and the placeholder reader skip what is not code:
 * '...' strings ('' inside; backslash escapes in MySQL and ClickHouse, and
 * in PostgreSQL's E'...'), "..." and `...` quoted names, -- and # (MySQL)
 * comments to the end of the line, C-style block comments, and PostgreSQL's
 * $tag$ ... $tag$ dollar quoting.  A `:` followed by a name
 * ([A-Za-z_][A-Za-z0-9_]*) is a placeholder unless it follows another ':'
 * (PostgreSQL's `x::int` cast) or a letter, digit or '_'.
 *
 * Pure: no I/O.  Errors: -1 with err (WEIR_E_INVALID) naming the
 * placeholder or the unclosed quote.
 */
#ifndef WEIR_DATA_SQLTEXT_H
#define WEIR_DATA_SQLTEXT_H

#include <stddef.h>

#include "lib/error.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

enum sql_dialect {
	SQL_POSTGRES = 0,
	SQL_MYSQL,
	SQL_SQLITE,
	SQL_CLICKHOUSE,
};

/* Named values for a statement: value NULL is SQL NULL. */
struct data_params {
	size_t n;
	char **names;
	char **values;
};

void data_params_release(struct data_params *p);
/* 0 and p->values[i] when `name` is given, -1 when not. */
int data_params_find(const struct data_params *p, const char *name, const char **value);

/* The statements of `script`, in order, each without its ';' and without
 * leading and trailing blanks; empty statements (and ones of only comments)
 * are left out.  0, or -1 with err for an unclosed quote or comment. */
int sqltext_split(const char *script, enum sql_dialect d, struct strvec *out,
                  struct weir_error *err);

/* `sql` with each `:name` replaced: by `$N` (PostgreSQL; one N per name),
 * by `?` (MySQL, SQLite; one value per occurrence), or, for ClickHouse,
 * whose HTTP interface before 19.x binds nothing, by the value as a
 * literal (sqltext_quote_clickhouse).  The
 * values to bind, in order, go to *order as indices into p (for `$N`: the
 * N-1th name).  *out is appended to.  A placeholder p does not give is an
 * error naming it. */
int sqltext_bind(const char *sql, enum sql_dialect d, const struct data_params *p,
                 struct strbuf *out, size_t **order, size_t *n_order, struct weir_error *err);

/* A value as a ClickHouse string literal: '...' with \\, \', and the
 * control characters \0 \b \f \n \r \t escaped; NULL gives NULL. */
void sqltext_quote_clickhouse(struct strbuf *out, const char *value);

/* A name quoted for the dialect: "x" (doubling ") or `x` (doubling `). */
void sqltext_quote_ident(struct strbuf *out, const char *name, enum sql_dialect d);

/* n names quoted and joined by ", ". */
void sqltext_quote_idents(struct strbuf *out, char *const *names, size_t n, enum sql_dialect d);

/* True when the statement starts (after blanks, comments and opening
 * parentheses) with a word that returns rows: SELECT, WITH, SHOW, VALUES,
 * DESCRIBE, DESC, EXPLAIN, TABLE, PRAGMA. */
int sqltext_returns_rows(const char *sql);

#endif
