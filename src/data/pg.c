/* pg.c: the PostgreSQL driver, through libpq (driver.h).
 *
 * A statement that returns rows is read through a cursor (DECLARE, then
 * FETCH FORWARD `batch` at a time, the next asked for while the last is
 * handed on), so at most two batches are in memory; the cursor lives in
 * the caller's transaction or in one of its own.  Rows
 * are loaded with COPY ... FROM STDIN in the text format, handed to libpq
 * in pieces of about 256 KiB.  Parameters are bound by libpq
 * (PQexecParams): `:name` becomes `$N`.
 */
#include "data/driver.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/dynlib.h"

/* libpq, loaded at its first use (lib/dynlib.h), not at every start of weir;
 * the Makefile names it as the system's library does */
#ifndef WEIR_SONAME_PQ
#define WEIR_SONAME_PQ "libpq.so.5"
#endif
/* clang-format off */
#define PQ_FUNCS(X, t)             \
	X(t, PQclear)              \
	X(t, PQcmdTuples)          \
	X(t, PQconnectdbParams)    \
	X(t, PQerrorMessage)       \
	X(t, PQexec)               \
	X(t, PQexecParams)         \
	X(t, PQfinish)             \
	X(t, PQfname)              \
	X(t, PQftype)              \
	X(t, PQgetResult)          \
	X(t, PQgetisnull)          \
	X(t, PQgetlength)          \
	X(t, PQgetvalue)           \
	X(t, PQnfields)            \
	X(t, PQntuples)            \
	X(t, PQputCopyData)        \
	X(t, PQputCopyEnd)         \
	X(t, PQresultErrorMessage) \
	X(t, PQresultStatus)       \
	X(t, PQsendQuery)          \
	X(t, PQsetClientEncoding)  \
	X(t, PQsetNoticeProcessor) \
	X(t, PQstatus)
/* clang-format on */
DYNLIB_TABLE(pq, PQ_FUNCS, WEIR_SONAME_PQ, "PostgreSQL connections");
#define PQclear (pq.PQclear)
#define PQcmdTuples (pq.PQcmdTuples)
#define PQconnectdbParams (pq.PQconnectdbParams)
#define PQerrorMessage (pq.PQerrorMessage)
#define PQexec (pq.PQexec)
#define PQexecParams (pq.PQexecParams)
#define PQfinish (pq.PQfinish)
#define PQfname (pq.PQfname)
#define PQftype (pq.PQftype)
#define PQgetResult (pq.PQgetResult)
#define PQgetisnull (pq.PQgetisnull)
#define PQgetlength (pq.PQgetlength)
#define PQgetvalue (pq.PQgetvalue)
#define PQnfields (pq.PQnfields)
#define PQntuples (pq.PQntuples)
#define PQputCopyData (pq.PQputCopyData)
#define PQputCopyEnd (pq.PQputCopyEnd)
#define PQresultErrorMessage (pq.PQresultErrorMessage)
#define PQresultStatus (pq.PQresultStatus)
#define PQsendQuery (pq.PQsendQuery)
#define PQsetClientEncoding (pq.PQsetClientEncoding)
#define PQsetNoticeProcessor (pq.PQsetNoticeProcessor)
#define PQstatus (pq.PQstatus)

#define PG_COPY_CHUNK (256 * 1024)

struct pg_conn {
	struct data_conn base;
	PGconn *pg;
	struct strbuf copy; /* COPY data not yet handed to libpq */
	bool copying;
};

/* libpq's message without its trailing newline, after "postgres: ". */
static int pg_fail(const char *msg, struct weir_error *err)
{
	size_t n = strlen(msg);

	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	return weir_error_set(err, WEIR_E_INVALID, "postgres: %.*s", (int)n, msg);
}

static enum data_type pg_type(Oid t)
{
	switch (t) {
	case 20:
	case 21:
	case 23:
	case 26:
		return DATA_INT;
	case 700:
	case 701:
	case 1700:
		return DATA_FLOAT;
	default:
		return DATA_TEXT;
	}
}

/* Hands the rows of `res` to cb (the columns first when `first`). */
static int pg_rows(PGresult *res, bool first, const struct data_rows_cb *cb, int64_t *count,
                   struct weir_error *err)
{
	int nf = PQnfields(res), nt = PQntuples(res);
	const char **v = calloc((size_t)nf + 1, sizeof *v);
	size_t *len = calloc((size_t)nf + 1, sizeof *len);
	int rc = -1;

	if (!v || !len) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (first && cb && cb->columns) {
		struct data_columns cols = {0};
		for (int i = 0; i < nf; i++)
			if (data_columns_add(&cols, PQfname(res, i), pg_type(PQftype(res, i))) <
			    0) {
				data_columns_release(&cols);
				weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
				goto out;
			}
		rc = cb->columns(cb->arg, &cols, err);
		data_columns_release(&cols);
		if (rc < 0)
			goto out;
		rc = -1;
	}
	for (int r = 0; r < nt; r++) {
		struct data_row row = {(size_t)nf, v, len};
		for (int i = 0; i < nf; i++) {
			v[i] = PQgetisnull(res, r, i) ? NULL : PQgetvalue(res, r, i);
			len[i] = (size_t)PQgetlength(res, r, i);
		}
		if (cb && cb->row && cb->row(cb->arg, &row, err) < 0)
			goto out;
		(*count)++;
	}
	rc = 0;
out:
	free(v);
	free(len);
	return rc;
}

static PGresult *pg_exec_params(struct pg_conn *c, const char *sql, const struct data_params *p,
                                struct weir_error *err)
{
	struct strbuf text = STRBUF_INIT;
	size_t *order = NULL, n = 0;
	const char **vals = NULL;
	PGresult *res = NULL;

	if (sqltext_bind(sql, SQL_POSTGRES, p, &text, &order, &n, err) < 0)
		goto out;
	if (n && !(vals = calloc(n, sizeof *vals))) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		vals[i] = p->values[order[i]];
	res = PQexecParams(c->pg, text.buf, (int)n, NULL, vals, NULL, NULL, 0);
	if (!res)
		pg_fail(PQerrorMessage(c->pg), err);
	else if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	         PQresultStatus(res) != PGRES_TUPLES_OK) {
		pg_fail(PQresultErrorMessage(res), err);
		PQclear(res);
		res = NULL;
	}
out:
	strbuf_release(&text);
	free(order);
	free(vals);
	return res;
}

static int pg_simple(struct pg_conn *c, const char *sql, struct weir_error *err)
{
	static const struct data_params none = {0};
	PGresult *res = pg_exec_params(c, sql, &none, err);

	if (!res)
		return -1;
	PQclear(res);
	return 0;
}

/* The result of the query sent (PQsendQuery), the connection left ready
 * for the next; NULL when there was none. */
static PGresult *pg_take(struct pg_conn *c)
{
	PGresult *res = PQgetResult(c->pg), *extra;

	while ((extra = PQgetResult(c->pg)))
		PQclear(extra);
	return res;
}

/* A query that starts with SELECT, WITH, VALUES or TABLE, through a cursor. */
static bool pg_cursor_fits(const char *sql)
{
	static const char *const w[] = {"select", "with", "values", "table", NULL};
	while (*sql == ' ' || *sql == '\t' || *sql == '\n' || *sql == '\r' || *sql == '(')
		sql++;
	for (int i = 0; w[i]; i++) {
		size_t n = strlen(w[i]);
		if (!strncasecmp(sql, w[i], n) &&
		    !((sql[n] >= 'a' && sql[n] <= 'z') || (sql[n] >= 'A' && sql[n] <= 'Z') ||
		      sql[n] == '_'))
			return true;
	}
	return false;
}

static int pg_run(struct data_conn *dc, const char *sql, const struct data_params *p,
                  const struct data_rows_cb *cb, int64_t *count, struct weir_error *err)
{
	struct pg_conn *c = (struct pg_conn *)dc;
	bool own_tx = false, first = true;
	struct strbuf decl = STRBUF_INIT;
	char fetch[64];
	PGresult *res;
	int rc = -1;

	*count = 0;
	if (!sqltext_returns_rows(sql) || !pg_cursor_fits(sql)) {
		res = pg_exec_params(c, sql, p, err);
		if (!res)
			return -1;
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
			rc = pg_rows(res, true, cb, count, err);
		else {
			const char *n = PQcmdTuples(res);
			*count = *n ? strtoll(n, NULL, 10) : -1;
			rc = 0;
		}
		PQclear(res);
		return rc;
	}
	if (!dc->in_tx) {
		if (pg_simple(c, "BEGIN", err) < 0)
			return -1;
		own_tx = true;
	}
	strbuf_addstr(&decl, "DECLARE weir_rows NO SCROLL CURSOR FOR ");
	strbuf_addstr(&decl, sql);
	res = pg_exec_params(c, decl.buf, p, err);
	strbuf_release(&decl);
	if (!res)
		goto out;
	PQclear(res);
	snprintf(fetch, sizeof fetch, "FETCH FORWARD %zu FROM weir_rows", dc->batch);
	if (!PQsendQuery(c->pg, fetch)) {
		pg_fail(PQerrorMessage(c->pg), err);
		goto out;
	}
	for (;;) {
		bool more;
		res = pg_take(c);
		if (!res || PQresultStatus(res) != PGRES_TUPLES_OK) {
			pg_fail(res ? PQresultErrorMessage(res) : PQerrorMessage(c->pg), err);
			PQclear(res);
			goto out;
		}
		/* the next batch is asked for before this one is handed on, so the
		 * server makes it while the target takes these */
		more = PQntuples(res) >= (int)dc->batch;
		if (more && !PQsendQuery(c->pg, fetch)) {
			pg_fail(PQerrorMessage(c->pg), err);
			PQclear(res);
			goto out;
		}
		rc = pg_rows(res, first, cb, count, err);
		PQclear(res);
		if (rc < 0) {
			if (more)
				PQclear(pg_take(c));
			goto out;
		}
		rc = -1;
		first = false;
		if (!more)
			break;
	}
	if (pg_simple(c, "CLOSE weir_rows", err) < 0)
		goto out;
	rc = 0;
out:
	if (own_tx) {
		struct weir_error ignored = {0};
		if (rc == 0)
			rc = pg_simple(c, "COMMIT", err);
		else
			pg_simple(c, "ROLLBACK", &ignored);
	}
	return rc;
}

static int pg_flush(struct pg_conn *c, struct weir_error *err)
{
	if (c->copy.failed)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (c->copy.len && PQputCopyData(c->pg, c->copy.buf, (int)c->copy.len) != 1)
		return pg_fail(PQerrorMessage(c->pg), err);
	strbuf_reset(&c->copy);
	return 0;
}

static int pg_load_begin(struct data_conn *dc, const char *table, const struct data_columns *cols,
                         struct weir_error *err)
{
	struct pg_conn *c = (struct pg_conn *)dc;
	struct strbuf sql = STRBUF_INIT;
	PGresult *res;

	strbuf_addstr(&sql, "COPY ");
	strbuf_addstr(&sql, table);
	strbuf_addstr(&sql, " (");
	sqltext_quote_idents(&sql, cols->names, cols->n, SQL_POSTGRES);
	strbuf_addstr(&sql, ") FROM STDIN");
	res = PQexec(c->pg, sql.buf);
	strbuf_release(&sql);
	if (!res || PQresultStatus(res) != PGRES_COPY_IN) {
		int rc = pg_fail(res ? PQresultErrorMessage(res) : PQerrorMessage(c->pg), err);
		PQclear(res);
		return rc;
	}
	PQclear(res);
	c->copying = true;
	return 0;
}

static int pg_load_row(struct data_conn *dc, const struct data_row *row, struct weir_error *err)
{
	struct pg_conn *c = (struct pg_conn *)dc;
	struct strbuf *b = &c->copy;

	for (size_t i = 0; i < row->n; i++) {
		const char *v = row->v[i];
		size_t start = 0;
		if (i)
			strbuf_addch(b, '\t');
		if (!v) {
			strbuf_addstr(b, "\\N");
			continue;
		}
		for (size_t k = 0; k < row->len[i]; k++) {
			const char *esc = NULL;
			switch (v[k]) {
			case '\\':
				esc = "\\\\";
				break;
			case '\t':
				esc = "\\t";
				break;
			case '\n':
				esc = "\\n";
				break;
			case '\r':
				esc = "\\r";
				break;
			default:
				continue;
			}
			strbuf_add(b, v + start, k - start);
			strbuf_addstr(b, esc);
			start = k + 1;
		}
		strbuf_add(b, v + start, row->len[i] - start);
	}
	strbuf_addch(b, '\n');
	return b->len >= PG_COPY_CHUNK ? pg_flush(c, err) : 0;
}

static int pg_load_end(struct data_conn *dc, struct weir_error *err)
{
	struct pg_conn *c = (struct pg_conn *)dc;
	PGresult *res;
	int rc = 0;

	if (!c->copying)
		return 0;
	c->copying = false;
	if (pg_flush(c, err) < 0) {
		PQputCopyEnd(c->pg, "weir: out of memory");
		rc = -1;
	} else if (PQputCopyEnd(c->pg, NULL) != 1)
		rc = pg_fail(PQerrorMessage(c->pg), err);
	while ((res = PQgetResult(c->pg)) != NULL) {
		if (rc == 0 && PQresultStatus(res) != PGRES_COMMAND_OK)
			rc = pg_fail(PQresultErrorMessage(res), err);
		PQclear(res);
	}
	return rc;
}

static void pg_close(struct data_conn *dc)
{
	struct pg_conn *c = (struct pg_conn *)dc;

	if (c->copying) {
		PQputCopyEnd(c->pg, "weir: cancelled");
		PQclear(PQgetResult(c->pg));
	}
	PQfinish(c->pg);
	strbuf_release(&c->copy);
	free(c);
}

static const struct data_ops pg_ops = {
    .dialect = SQL_POSTGRES,
    .run = pg_run,
    .load_begin = pg_load_begin,
    .load_row = pg_load_row,
    .load_end = pg_load_end,
    .close = pg_close,
};

/* PostgreSQL's notices ("relation ... already exists, skipping") are not the task's news. */
static void pg_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static void pg_kv(const char **keys, const char **vals, int *n, const char *k, const char *v)
{
	if (v && *n < 30) {
		keys[*n] = k;
		vals[(*n)++] = v;
	}
}

struct data_conn *data_pg_open(const struct connection *conn, long timeout_ms,
                               struct weir_error *err)
{
	const char *keys[32], *vals[32];
	char port[16], wait_s[24];
	int n = 0;
	struct pg_conn *c;
	const char *k;
	json_t *v;

	if (dynlib_load(&pq_lib, pq_syms, DYNLIB_COUNT(pq_syms), err) < 0)
		return NULL;
	c = calloc(1, sizeof *c);
	if (!c) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	strbuf_init(&c->copy);
	pg_kv(keys, vals, &n, "host", conn->host);
	if (conn->port > 0) {
		snprintf(port, sizeof port, "%d", conn->port);
		pg_kv(keys, vals, &n, "port", port);
	}
	pg_kv(keys, vals, &n, "user", conn->login);
	pg_kv(keys, vals, &n, "password", conn->password);
	pg_kv(keys, vals, &n, "dbname", conn->schema);
	/* libpq's connect_timeout is whole seconds (below 2 reads as 2) */
	snprintf(wait_s, sizeof wait_s, "%ld", timeout_ms > 0 ? (timeout_ms + 999) / 1000 : 10);
	pg_kv(keys, vals, &n, "connect_timeout", wait_s);
	pg_kv(keys, vals, &n, "application_name", "weir");
	if (json_is_object(conn->extra))
		json_object_foreach(conn->extra, k, v) if (json_is_string(v))
		    pg_kv(keys, vals, &n, k, json_string_value(v));
	keys[n] = vals[n] = NULL;
	c->pg = PQconnectdbParams(keys, vals, 0);
	if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
		pg_fail(c->pg ? PQerrorMessage(c->pg) : "out of memory", err);
		PQfinish(c->pg);
		free(c);
		return NULL;
	}
	PQsetClientEncoding(c->pg, "UTF8");
	PQsetNoticeProcessor(c->pg, pg_quiet, NULL);
	c->base.ops = &pg_ops;
	return &c->base;
}
