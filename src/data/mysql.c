/* mysql.c: the MariaDB/MySQL driver, through libmariadb (driver.h).
 *
 * Rows stream with mysql_use_result (one row in memory at a time).
 * Parameters reach the server as literals written by the library's own
 * escaping (mysql_real_escape_string, for the connection's character set),
 * never pasted as they are.  Rows load as multi-row INSERTs of `batch` rows
 * (or about 1 MiB, whichever comes first), each value escaped the same way.
 */
#include "data/driver.h"

#include <mysql.h>
#include <stdlib.h>
#include <string.h>

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

static void my_quote(struct strbuf *out, const char *v, void *arg)
{
	my_quote_len(out, v, v ? strlen(v) : 0, arg);
}

static enum data_type my_type(enum enum_field_types t)
{
	switch (t) {
	case MYSQL_TYPE_TINY: case MYSQL_TYPE_SHORT: case MYSQL_TYPE_LONG:
	case MYSQL_TYPE_LONGLONG: case MYSQL_TYPE_INT24: return DATA_INT;
	case MYSQL_TYPE_FLOAT: case MYSQL_TYPE_DOUBLE: case MYSQL_TYPE_DECIMAL:
	case MYSQL_TYPE_NEWDECIMAL: return DATA_FLOAT;
	default: return DATA_TEXT;
	}
}

static int my_query(struct my_conn *c, const char *sql, size_t len, struct weir_error *err)
{
	if (mysql_real_query(c->my, sql, (unsigned long)len) != 0)
		return my_fail(c->my, err);
	return 0;
}

static int my_run(struct data_conn *dc, const char *sql, const struct data_params *p,
		  const struct data_rows_cb *cb, int64_t *count, struct weir_error *err)
{
	struct my_conn *c = (struct my_conn *)dc;
	struct strbuf text = STRBUF_INIT;
	size_t *order = NULL, n = 0;
	MYSQL_RES *res = NULL;
	MYSQL_ROW r;
	unsigned int nf;
	int rc = -1;

	*count = 0;
	if (sqltext_bind(sql, SQL_MYSQL, p, my_quote, c->my, &text, &order, &n, err) < 0)
		goto out;
	if (text.failed) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (my_query(c, text.buf, text.len, err) < 0)
		goto out;
	nf = mysql_field_count(c->my);
	if (nf == 0) {
		*count = (int64_t)mysql_affected_rows(c->my);
		rc = 0;
		goto out;
	}
	res = mysql_use_result(c->my);
	if (!res) {
		my_fail(c->my, err);
		goto out;
	}
	if (cb && cb->columns) {
		MYSQL_FIELD *f = mysql_fetch_fields(res);
		struct data_columns cols = {0};
		int r2 = 0;
		for (unsigned int i = 0; i < nf && r2 == 0; i++)
			r2 = data_columns_add(&cols, f[i].name, my_type(f[i].type));
		r2 = r2 < 0 ? weir_error_set(err, WEIR_E_INTERNAL, "out of memory")
			    : cb->columns(cb->arg, &cols, err);
		data_columns_release(&cols);
		if (r2 < 0)
			goto drain;
	}
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
	if (mysql_errno(c->my)) {
		my_fail(c->my, err);
		goto out;
	}
	rc = 0;
	goto out;
drain: /* the rest of the result must be read before the next statement */
	while (mysql_fetch_row(res))
		;
out:
	if (res)
		mysql_free_result(res);
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
	struct my_conn *c = calloc(1, sizeof *c);
	unsigned int timeout = timeout_ms > 0 ? (unsigned int)((timeout_ms + 999) / 1000) : 10;

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
				conn->password, conn->schema, (unsigned int)(conn->port > 0 ? conn->port : 3306),
				NULL, 0)) {
		my_fail(c->my, err);
		mysql_close(c->my);
		free(c);
		return NULL;
	}
	c->base.ops = &my_ops;
	return &c->base;
}
