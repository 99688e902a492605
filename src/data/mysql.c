/* mysql.c: the MariaDB/MySQL driver, through libmariadb (driver.h).
 *
 * A statement without parameters runs as text, its rows streamed with
 * mysql_use_result (one row in memory at a time).  One with parameters is
 * a prepared statement: `?` for each `:name`, the values bound as strings
 * (NULL as NULL), so they never enter the SQL text; its rows stream with
 * mysql_stmt_fetch into one buffer per column that grows to the longest
 * value seen.  Rows load as multi-row INSERTs of `batch` rows (or about
 * 1 MiB, whichever comes first), each value a literal written by the
 * library's escaping (mysql_real_escape_string, for the connection's
 * character set).
 */
#include "data/driver.h"

#include <mysql.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dynlib.h"

/* libmariadb, loaded at its first use (lib/dynlib.h), not at every start of weir;
 * the Makefile names it as the system's library does */
#ifndef WEIR_SONAME_MARIADB
#define WEIR_SONAME_MARIADB "libmariadb.so.3"
#endif
/* clang-format off */
#define MY_FUNCS(X, t)                   \
	X(t, mysql_affected_rows)        \
	X(t, mysql_close)                \
	X(t, mysql_errno)                \
	X(t, mysql_error)                \
	X(t, mysql_fetch_fields)         \
	X(t, mysql_fetch_lengths)        \
	X(t, mysql_fetch_row)            \
	X(t, mysql_field_count)          \
	X(t, mysql_free_result)          \
	X(t, mysql_init)                 \
	X(t, mysql_options)              \
	X(t, mysql_real_connect)         \
	X(t, mysql_real_escape_string)   \
	X(t, mysql_real_query)           \
	X(t, mysql_stmt_affected_rows)   \
	X(t, mysql_stmt_bind_param)      \
	X(t, mysql_stmt_bind_result)     \
	X(t, mysql_stmt_close)           \
	X(t, mysql_stmt_error)           \
	X(t, mysql_stmt_execute)         \
	X(t, mysql_stmt_fetch)           \
	X(t, mysql_stmt_fetch_column)    \
	X(t, mysql_stmt_field_count)     \
	X(t, mysql_stmt_init)            \
	X(t, mysql_stmt_prepare)         \
	X(t, mysql_stmt_result_metadata) \
	X(t, mysql_use_result)
/* clang-format on */
DYNLIB_TABLE(mdb, MY_FUNCS, WEIR_SONAME_MARIADB, "MySQL and MariaDB connections");
#define mysql_affected_rows (mdb.mysql_affected_rows)
#define mysql_close (mdb.mysql_close)
#define mysql_errno (mdb.mysql_errno)
#define mysql_error (mdb.mysql_error)
#define mysql_fetch_fields (mdb.mysql_fetch_fields)
#define mysql_fetch_lengths (mdb.mysql_fetch_lengths)
#define mysql_fetch_row (mdb.mysql_fetch_row)
#define mysql_field_count (mdb.mysql_field_count)
#define mysql_free_result (mdb.mysql_free_result)
#define mysql_init (mdb.mysql_init)
#define mysql_options (mdb.mysql_options)
#define mysql_real_connect (mdb.mysql_real_connect)
#define mysql_real_escape_string (mdb.mysql_real_escape_string)
#define mysql_real_query (mdb.mysql_real_query)
#define mysql_stmt_affected_rows (mdb.mysql_stmt_affected_rows)
#define mysql_stmt_bind_param (mdb.mysql_stmt_bind_param)
#define mysql_stmt_bind_result (mdb.mysql_stmt_bind_result)
#define mysql_stmt_close (mdb.mysql_stmt_close)
#define mysql_stmt_error (mdb.mysql_stmt_error)
#define mysql_stmt_execute (mdb.mysql_stmt_execute)
#define mysql_stmt_fetch (mdb.mysql_stmt_fetch)
#define mysql_stmt_fetch_column (mdb.mysql_stmt_fetch_column)
#define mysql_stmt_field_count (mdb.mysql_stmt_field_count)
#define mysql_stmt_init (mdb.mysql_stmt_init)
#define mysql_stmt_prepare (mdb.mysql_stmt_prepare)
#define mysql_stmt_result_metadata (mdb.mysql_stmt_result_metadata)
#define mysql_use_result (mdb.mysql_use_result)

#define MY_INSERT_MAX (1024 * 1024)

struct my_conn {
	struct data_conn base;
	MYSQL *my;
	struct strbuf head;  /* "INSERT INTO t (a, b) VALUES " while loading */
	struct strbuf batch; /* the rows of the INSERT being made */
	size_t rows;
};

static int my_fail(MYSQL *my, struct weir_error *err)
{
	return weir_error_set(err, WEIR_E_INVALID, "mysql: %s", mysql_error(my));
}

/* '...' escaped by the library; NULL for NULL. */
static void my_quote_len(struct strbuf *out, const char *v, size_t n, MYSQL *my)
{
	if (!v) {
		strbuf_addstr(out, "NULL");
		return;
	}
	if (strbuf_grow(out, 2 * n + 3) < 0)
		return;
	out->buf[out->len++] = '\'';
	out->len += mysql_real_escape_string(my, out->buf + out->len, v, (unsigned long)n);
	out->buf[out->len++] = '\'';
	out->buf[out->len] = '\0';
}

static enum data_type my_type(enum enum_field_types t)
{
	switch (t) {
	case MYSQL_TYPE_TINY:
	case MYSQL_TYPE_SHORT:
	case MYSQL_TYPE_LONG:
	case MYSQL_TYPE_LONGLONG:
	case MYSQL_TYPE_INT24:
		return DATA_INT;
	case MYSQL_TYPE_FLOAT:
	case MYSQL_TYPE_DOUBLE:
	case MYSQL_TYPE_DECIMAL:
	case MYSQL_TYPE_NEWDECIMAL:
		return DATA_FLOAT;
	default:
		return DATA_TEXT;
	}
}

static int my_query(struct my_conn *c, const char *sql, size_t len, struct weir_error *err)
{
	if (mysql_real_query(c->my, sql, (unsigned long)len) != 0)
		return my_fail(c->my, err);
	return 0;
}

static int my_stmt_fail(MYSQL_STMT *st, struct weir_error *err)
{
	return weir_error_set(err, WEIR_E_INVALID, "mysql: %s", mysql_stmt_error(st));
}

/* The columns of a result (names and types) to cb->columns. */
static int my_columns(MYSQL_FIELD *f, unsigned int nf, const struct data_rows_cb *cb,
                      struct weir_error *err)
{
	struct data_columns cols = {0};
	int rc = 0;

	if (!cb || !cb->columns)
		return 0;
	for (unsigned int i = 0; i < nf && rc == 0; i++)
		rc = data_columns_add(&cols, f[i].name, my_type(f[i].type));
	rc = rc < 0 ? weir_error_set(err, WEIR_E_INTERNAL, "out of memory")
	            : cb->columns(cb->arg, &cols, err);
	data_columns_release(&cols);
	return rc;
}

/* A statement without parameters: text, rows through mysql_use_result. */
static int my_run_text(struct my_conn *c, const char *sql, size_t sql_len,
                       const struct data_rows_cb *cb, int64_t *count, struct weir_error *err)
{
	MYSQL_RES *res;
	MYSQL_ROW r;
	unsigned int nf;
	int rc = -1;

	if (my_query(c, sql, sql_len, err) < 0)
		return -1;
	nf = mysql_field_count(c->my);
	if (nf == 0) {
		*count = (int64_t)mysql_affected_rows(c->my);
		return 0;
	}
	res = mysql_use_result(c->my);
	if (!res)
		return my_fail(c->my, err);
	if (my_columns(mysql_fetch_fields(res), nf, cb, err) < 0)
		goto drain;
	while ((r = mysql_fetch_row(res)) != NULL) {
		unsigned long *l = mysql_fetch_lengths(res);
		size_t len[nf];
		struct data_row row = {nf, (const char *const *)r, len};
		for (unsigned int i = 0; i < nf; i++)
			len[i] = l[i];
		if (cb && cb->row && cb->row(cb->arg, &row, err) < 0)
			goto drain;
		(*count)++;
	}
	if (mysql_errno(c->my))
		my_fail(c->my, err);
	else
		rc = 0;
	goto out;
drain: /* the rest of the result must be read before the next statement */
	while (mysql_fetch_row(res))
		;
out:
	mysql_free_result(res);
	return rc;
}

#define MY_COL_START 256

/* One result column's buffer, grown to the longest value fetched. */
struct my_col {
	char *buf;
	unsigned long cap; /* bytes in buf, the NUL included */
	unsigned long len;
	my_bool is_null;
	my_bool truncated;
};

static int my_col_grow(struct my_col *col, MYSQL_BIND *b, unsigned long need)
{
	char *nb;

	if (need <= col->cap)
		return 0;
	nb = realloc(col->buf, need);
	if (!nb)
		return -1;
	col->buf = nb;
	col->cap = need;
	b->buffer = nb;
	b->buffer_length = need - 1; /* room for the NUL weir adds */
	return 0;
}

/* The rows of an executed prepared statement to cb, one at a time. */
static int my_stmt_rows(MYSQL_STMT *st, const struct data_rows_cb *cb, int64_t *count,
                        struct weir_error *err)
{
	MYSQL_RES *meta = mysql_stmt_result_metadata(st);
	unsigned int nf = mysql_stmt_field_count(st);
	MYSQL_BIND *out = calloc(nf, sizeof *out);
	struct my_col *col = calloc(nf, sizeof *col);
	const char **v = calloc(nf, sizeof *v);
	size_t *len = calloc(nf, sizeof *len);
	int rc = -1, f;

	if (!meta) {
		my_stmt_fail(st, err);
		goto out;
	}
	if (!out || !col || !v || !len) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	for (unsigned int i = 0; i < nf; i++) {
		out[i].buffer_type = MYSQL_TYPE_STRING;
		out[i].length = &col[i].len;
		out[i].is_null = &col[i].is_null;
		out[i].error = &col[i].truncated;
		if (my_col_grow(&col[i], &out[i], MY_COL_START) < 0) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			goto out;
		}
	}
	if (mysql_stmt_bind_result(st, out) != 0) {
		my_stmt_fail(st, err);
		goto out;
	}
	if (my_columns(mysql_fetch_fields(meta), nf, cb, err) < 0)
		goto out;
	while ((f = mysql_stmt_fetch(st)) == 0 || f == MYSQL_DATA_TRUNCATED) {
		struct data_row row = {nf, v, len};
		int grown = 0;
		for (unsigned int i = 0; i < nf; i++) {
			if (col[i].is_null) {
				v[i] = NULL;
				len[i] = 0;
				continue;
			}
			if (col[i].len >= col[i].cap) { /* longer than the buffer: read it whole */
				if (my_col_grow(&col[i], &out[i], col[i].len + 1) < 0) {
					weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
					goto out;
				}
				if (mysql_stmt_fetch_column(st, &out[i], i, 0) != 0) {
					my_stmt_fail(st, err);
					goto out;
				}
				grown = 1;
			}
			col[i].buf[col[i].len] = '\0';
			v[i] = col[i].buf;
			len[i] = col[i].len;
		}
		if (grown && mysql_stmt_bind_result(st, out) != 0) {
			my_stmt_fail(st, err);
			goto out;
		}
		if (cb && cb->row && cb->row(cb->arg, &row, err) < 0)
			goto out;
		(*count)++;
	}
	if (f != MYSQL_NO_DATA)
		my_stmt_fail(st, err);
	else
		rc = 0;
out:
	if (meta)
		mysql_free_result(meta);
	for (unsigned int i = 0; col && i < nf; i++)
		free(col[i].buf);
	free(col);
	free(out);
	free(v);
	free(len);
	return rc;
}

/* A statement with parameters: prepared, the values bound in `order`. */
static int my_run_stmt(struct my_conn *c, const struct strbuf *text, const struct data_params *p,
                       const size_t *order, size_t n, const struct data_rows_cb *cb, int64_t *count,
                       struct weir_error *err)
{
	MYSQL_STMT *st = mysql_stmt_init(c->my);
	MYSQL_BIND *in = calloc(n, sizeof *in);
	unsigned long *lens = calloc(n, sizeof *lens);
	my_bool *nulls = calloc(n, sizeof *nulls);
	int rc = -1;

	if (!st || !in || !lens || !nulls) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (mysql_stmt_prepare(st, text->buf, (unsigned long)text->len) != 0) {
		my_stmt_fail(st, err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const char *val = p->values[order[i]];
		in[i].buffer_type = MYSQL_TYPE_STRING;
		in[i].buffer = (void *)(val ? val : "");
		lens[i] = val ? (unsigned long)strlen(val) : 0;
		in[i].buffer_length = lens[i];
		in[i].length = &lens[i];
		nulls[i] = val == NULL;
		in[i].is_null = &nulls[i];
	}
	if (mysql_stmt_bind_param(st, in) != 0 || mysql_stmt_execute(st) != 0) {
		my_stmt_fail(st, err);
		goto out;
	}
	if (mysql_stmt_field_count(st) == 0) {
		*count = (int64_t)mysql_stmt_affected_rows(st);
		rc = 0;
	} else {
		rc = my_stmt_rows(st, cb, count, err);
	}
out:
	if (st)
		mysql_stmt_close(st); /* reads what is left of the result first */
	free(in);
	free(lens);
	free(nulls);
	return rc;
}

static int my_run(struct data_conn *dc, const char *sql, const struct data_params *p,
                  const struct data_rows_cb *cb, int64_t *count, struct weir_error *err)
{
	struct my_conn *c = (struct my_conn *)dc;
	struct strbuf text = STRBUF_INIT;
	size_t *order = NULL, n = 0;
	int rc = -1;

	*count = 0;
	if (sqltext_bind(sql, SQL_MYSQL, p, &text, &order, &n, err) < 0)
		goto out;
	if (text.failed) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	rc = n ? my_run_stmt(c, &text, p, order, n, cb, count, err)
	       : my_run_text(c, text.buf, text.len, cb, count, err);
out:
	strbuf_release(&text);
	free(order);
	return rc;
}

static int my_load_begin(struct data_conn *dc, const char *table, const struct data_columns *cols,
                         struct weir_error *err)
{
	struct my_conn *c = (struct my_conn *)dc;

	strbuf_reset(&c->head);
	strbuf_reset(&c->batch);
	c->rows = 0;
	strbuf_addf(&c->head, "INSERT INTO %s (", table);
	sqltext_quote_idents(&c->head, cols->names, cols->n, SQL_MYSQL);
	strbuf_addstr(&c->head, ") VALUES ");
	if (c->head.failed)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return 0;
}

static int my_flush(struct my_conn *c, struct weir_error *err)
{
	int rc;

	if (!c->rows)
		return 0;
	if (c->batch.failed)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	rc = my_query(c, c->batch.buf, c->batch.len, err);
	strbuf_reset(&c->batch);
	c->rows = 0;
	return rc;
}

static int my_load_row(struct data_conn *dc, const struct data_row *row, struct weir_error *err)
{
	struct my_conn *c = (struct my_conn *)dc;

	strbuf_addstr(&c->batch, c->rows ? ", (" : c->head.buf);
	if (!c->rows)
		strbuf_addch(&c->batch, '(');
	for (size_t i = 0; i < row->n; i++) {
		if (i)
			strbuf_addch(&c->batch, ',');
		my_quote_len(&c->batch, row->v[i], row->len[i], c->my);
	}
	strbuf_addch(&c->batch, ')');
	c->rows++;
	if (c->rows >= dc->batch || c->batch.len >= MY_INSERT_MAX)
		return my_flush(c, err);
	return 0;
}

static int my_load_end(struct data_conn *dc, struct weir_error *err)
{
	return my_flush((struct my_conn *)dc, err);
}

static void my_close(struct data_conn *dc)
{
	struct my_conn *c = (struct my_conn *)dc;

	mysql_close(c->my);
	strbuf_release(&c->head);
	strbuf_release(&c->batch);
	free(c);
}

static const struct data_ops my_ops = {
    .dialect = SQL_MYSQL,
    .run = my_run,
    .load_begin = my_load_begin,
    .load_row = my_load_row,
    .load_end = my_load_end,
    .close = my_close,
};

struct data_conn *data_mysql_open(const struct connection *conn, long timeout_ms,
                                  struct weir_error *err)
{
	struct my_conn *c;
	unsigned int timeout = timeout_ms > 0 ? (unsigned int)((timeout_ms + 999) / 1000) : 10;

	if (dynlib_load(&mdb_lib, mdb_syms, DYNLIB_COUNT(mdb_syms), err) < 0)
		return NULL;
	c = calloc(1, sizeof *c);
	if (!c || !(c->my = mysql_init(NULL))) {
		free(c);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	strbuf_init(&c->head);
	strbuf_init(&c->batch);
	mysql_options(c->my, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	if (timeout_ms > 0) {
		mysql_options(c->my, MYSQL_OPT_READ_TIMEOUT, &timeout);
		mysql_options(c->my, MYSQL_OPT_WRITE_TIMEOUT, &timeout);
	}
	mysql_options(c->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (!mysql_real_connect(c->my, conn->host ? conn->host : "127.0.0.1", conn->login,
	                        conn->password, conn->schema,
	                        (unsigned int)(conn->port > 0 ? conn->port : 3306), NULL, 0)) {
		my_fail(c->my, err);
		mysql_close(c->my);
		free(c);
		return NULL;
	}
	c->base.ops = &my_ops;
	return &c->base;
}
