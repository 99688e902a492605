/* sqlite.c: the SQLite driver (driver.h).  The connection's path
 * (connection_path()) is the database file; parameters bind as text (or
 * NULL) through sqlite3_bind_text; rows load through one prepared INSERT
 * stepped per row. */
#include "data/driver.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct lite_conn {
	struct data_conn base;
	sqlite3 *db;
	sqlite3_stmt *ins; /* while loading */
};

static int lite_fail(sqlite3 *db, struct weir_error *err)
{
	return weir_error_set(err, WEIR_E_INVALID, "sqlite: %s", sqlite3_errmsg(db));
}

static enum data_type lite_type(sqlite3_stmt *st, int i)
{
	const char *t = sqlite3_column_decltype(st, i);

	if (!t) /* an expression: the first row's value says */
		return sqlite3_column_type(st, i) == SQLITE_INTEGER ? DATA_INT
		       : sqlite3_column_type(st, i) == SQLITE_FLOAT ? DATA_FLOAT
		                                                    : DATA_TEXT;
	if (strcasestr(t, "int"))
		return DATA_INT;
	if (strcasestr(t, "real") || strcasestr(t, "floa") || strcasestr(t, "doub"))
		return DATA_FLOAT;
	return DATA_TEXT;
}

/* The statement's columns to cb. */
static int lite_columns(sqlite3_stmt *st, int nf, const struct data_rows_cb *cb,
                        struct weir_error *err)
{
	struct data_columns cols = {0};
	int rc = 0;

	for (int i = 0; i < nf && rc == 0; i++)
		rc = data_columns_add(&cols, sqlite3_column_name(st, i), lite_type(st, i));
	rc = rc < 0 ? weir_error_set(err, WEIR_E_INTERNAL, "out of memory")
	            : cb->columns(cb->arg, &cols, err);
	data_columns_release(&cols);
	return rc;
}

static int lite_run(struct data_conn *dc, const char *sql, const struct data_params *p,
                    const struct data_rows_cb *cb, int64_t *count, struct weir_error *err)
{
	struct lite_conn *c = (struct lite_conn *)dc;
	struct strbuf text = STRBUF_INIT;
	size_t *order = NULL, n = 0;
	sqlite3_stmt *st = NULL;
	const char **v = NULL;
	size_t *len = NULL;
	int rc = -1, nf, s;
	bool first = true;

	*count = 0;
	if (sqltext_bind(sql, SQL_SQLITE, p, &text, &order, &n, err) < 0)
		goto out;
	if (sqlite3_prepare_v2(c->db, text.buf, -1, &st, NULL) != SQLITE_OK) {
		lite_fail(c->db, err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const char *val = p->values[order[i]];
		if (val ? sqlite3_bind_text(st, (int)i + 1, val, -1, SQLITE_TRANSIENT)
		        : sqlite3_bind_null(st, (int)i + 1)) {
			lite_fail(c->db, err);
			goto out;
		}
	}
	nf = sqlite3_column_count(st);
	v = calloc((size_t)nf + 1, sizeof *v);
	len = calloc((size_t)nf + 1, sizeof *len);
	if (!v || !len) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		struct data_row row = {(size_t)nf, v, len};
		if (first && cb && cb->columns && lite_columns(st, nf, cb, err) < 0)
			goto out;
		first = false;
		for (int i = 0; i < nf; i++) {
			v[i] = (const char *)sqlite3_column_text(st, i);
			len[i] = (size_t)sqlite3_column_bytes(st, i);
		}
		if (cb && cb->row && cb->row(cb->arg, &row, err) < 0)
			goto out;
		(*count)++;
	}
	if (s != SQLITE_DONE) {
		lite_fail(c->db, err);
		goto out;
	}
	/* no rows: still the columns */
	if (first && nf > 0 && cb && cb->columns && lite_columns(st, nf, cb, err) < 0)
		goto out;
	if (nf == 0)
		*count = sqlite3_changes(c->db);
	rc = 0;
out:
	sqlite3_finalize(st);
	strbuf_release(&text);
	free(order);
	free(v);
	free(len);
	return rc;
}

static int lite_load_begin(struct data_conn *dc, const char *table, const struct data_columns *cols,
                           struct weir_error *err)
{
	struct lite_conn *c = (struct lite_conn *)dc;
	struct strbuf sql = STRBUF_INIT;
	int rc = 0;

	strbuf_addf(&sql, "INSERT INTO %s (", table);
	sqltext_quote_idents(&sql, cols->names, cols->n, SQL_SQLITE);
	strbuf_addstr(&sql, ") VALUES (");
	for (size_t i = 0; i < cols->n; i++)
		strbuf_addstr(&sql, i ? ", ?" : "?");
	strbuf_addch(&sql, ')');
	if (sqlite3_prepare_v2(c->db, sql.buf, -1, &c->ins, NULL) != SQLITE_OK)
		rc = lite_fail(c->db, err);
	strbuf_release(&sql);
	return rc;
}

static int lite_load_row(struct data_conn *dc, const struct data_row *row, struct weir_error *err)
{
	struct lite_conn *c = (struct lite_conn *)dc;

	sqlite3_reset(c->ins);
	for (size_t i = 0; i < row->n; i++)
		if (row->v[i] ? sqlite3_bind_text(c->ins, (int)i + 1, row->v[i], (int)row->len[i],
		                                  SQLITE_STATIC)
		              : sqlite3_bind_null(c->ins, (int)i + 1))
			return lite_fail(c->db, err);
	if (sqlite3_step(c->ins) != SQLITE_DONE)
		return lite_fail(c->db, err);
	return 0;
}

static int lite_load_end(struct data_conn *dc, struct weir_error *err)
{
	struct lite_conn *c = (struct lite_conn *)dc;

	(void)err;
	sqlite3_finalize(c->ins);
	c->ins = NULL;
	return 0;
}

static void lite_close(struct data_conn *dc)
{
	struct lite_conn *c = (struct lite_conn *)dc;

	sqlite3_finalize(c->ins);
	sqlite3_close(c->db);
	free(c);
}

static const struct data_ops lite_ops = {
    .dialect = SQL_SQLITE,
    .run = lite_run,
    .load_begin = lite_load_begin,
    .load_row = lite_load_row,
    .load_end = lite_load_end,
    .close = lite_close,
};

struct data_conn *data_sqlite_open(const struct connection *conn, struct weir_error *err)
{
	char *path = connection_path(conn);
	struct lite_conn *c;

	if (!path) {
		weir_error_set(err, WEIR_E_INVALID, "connection %s: expected a database path",
		               conn->id ? conn->id : "?");
		return NULL;
	}
	c = calloc(1, sizeof *c);
	if (!c) {
		free(path);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		weir_error_set(err, WEIR_E_INVALID, "sqlite: %s: %s", path,
		               c->db ? sqlite3_errmsg(c->db) : "cannot open");
		sqlite3_close(c->db);
		free(c);
		free(path);
		return NULL;
	}
	free(path);
	sqlite3_busy_timeout(c->db, 10000);
	c->base.ops = &lite_ops;
	return &c->base;
}
