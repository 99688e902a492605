/* clickhouse.c: the ClickHouse driver, over its HTTP interface with
 * lib/http_client.h (driver.h).
 *
 * Debian's clickhouse-server is 18.16, whose HTTP interface has no query
 * parameters ({name:Type} came in 19.x): `:name` values are written into
 * the text as string literals by sqltext_quote_clickhouse(), the one
 * function that escapes for ClickHouse (tested on its own).  A statement
 * that returns rows is a GET (read-only) answered in
 * TabSeparatedWithNamesAndTypes and parsed as it streams, a line at a time;
 * other statements are POSTed.  Rows load as POSTed `INSERT ... FORMAT
 * TabSeparated` bodies of `batch` rows.  The login and password travel as
 * the `user` and `password` query parameters, on loopback or the caller's
 * network: weir never writes those URLs anywhere.
 */
#include "data/driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/http_client.h"

#define CH_INSERT_MAX (4 * 1024 * 1024)

struct ch_conn {
	struct data_conn base;
	struct http_client *http;
	char *auth;          /* "user=..&password=..&database=.." (escaped) */
	struct strbuf query; /* while loading: the INSERT */
	struct strbuf batch; /* while loading: TSV rows */
	size_t rows;
	long timeout_ms; /* a POST's answer within it (0: none) */
	char where[300]; /* "http://host:port", for messages */
};

/* The HTTP client's error without the request's path, which holds the
 * login and password: "clickhouse: http://host:port: timed out". */
static void ch_transport_fail(const struct ch_conn *c, struct weir_error *err)
{
	const char *why;
	char reason[WEIR_ERROR_MSG_MAX];

	if (!err)
		return;
	why = strrchr(err->msg, ':');
	snprintf(reason, sizeof reason, "%s", why && why[1] == ' ' ? why + 2 : err->msg);
	if (strstr(reason, "password="))
		snprintf(reason, sizeof reason, "no answer");
	weir_error_set(err, err->kind, "clickhouse: %s: %s", c->where, reason);
}

/* The parse of a streamed TSV answer. */
struct ch_stream {
	const struct data_rows_cb *cb;
	long *status;
	struct strbuf line;  /* a line not yet ended */
	struct strbuf error; /* the body of a failed answer */
	int header;          /* header lines still to read (names, types) */
	struct data_columns cols;
	struct strbuf cells; /* unescaped cells of one row, NUL-separated */
	size_t *off;
	const char **v;
	size_t *len;
	int64_t count;
	struct weir_error *err;
	int failed;
};

static void ch_unescape(struct strbuf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' && i + 1 < n) {
			c = s[++i];
			switch (c) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case '0':
				c = '\0';
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			default:
				break;
			}
		}
		strbuf_addch(out, c);
	}
}

static enum data_type ch_type(const char *t)
{
	if (!strncmp(t, "Nullable(", 9))
		t += 9;
	if (!strncmp(t, "Int", 3) || !strncmp(t, "UInt", 4))
		return DATA_INT;
	if (!strncmp(t, "Float", 5) || !strncmp(t, "Decimal", 7))
		return DATA_FLOAT;
	return DATA_TEXT;
}

/* One line of the answer: a header line or a row. */
static int ch_line(struct ch_stream *s, const char *p, size_t n)
{
	size_t nf = 1, start = 0, f = 0;

	for (size_t i = 0; i < n; i++)
		nf += p[i] == '\t';
	if (s->header == 2) {
		for (size_t i = 0; i <= n; i++)
			if (i == n || p[i] == '\t') {
				struct strbuf name = STRBUF_INIT;
				ch_unescape(&name, p + start, i - start);
				if (data_columns_add(&s->cols, name.buf, DATA_TEXT) < 0)
					s->failed = 1;
				strbuf_release(&name);
				start = i + 1;
			}
		s->header--;
		s->off = calloc(nf + 1, sizeof *s->off);
		s->v = calloc(nf + 1, sizeof *s->v);
		s->len = calloc(nf + 1, sizeof *s->len);
		if (s->failed || !s->off || !s->v || !s->len)
			return weir_error_set(s->err, WEIR_E_INTERNAL, "out of memory");
		return 0;
	}
	if (nf != s->cols.n)
		return weir_error_set(s->err, WEIR_E_INVALID, "clickhouse: %.*s",
		                      (int)(n > 900 ? 900 : n), p);
	if (s->header == 1) {
		for (size_t i = 0; i <= n; i++)
			if (i == n || p[i] == '\t') {
				char t[64];
				snprintf(t, sizeof t, "%.*s", (int)(i - start), p + start);
				s->cols.types[f++] = ch_type(t);
				start = i + 1;
			}
		s->header--;
		if (s->cb && s->cb->columns)
			return s->cb->columns(s->cb->arg, &s->cols, s->err);
		return 0;
	}
	strbuf_reset(&s->cells);
	for (size_t i = 0; i <= n; i++)
		if (i == n || p[i] == '\t') {
			if (i - start == 2 && p[start] == '\\' && p[start + 1] == 'N')
				s->off[f] = (size_t)-1;
			else {
				s->off[f] = s->cells.len;
				ch_unescape(&s->cells, p + start, i - start);
			}
			s->len[f] = s->off[f] == (size_t)-1 ? 0 : s->cells.len - s->off[f];
			strbuf_addch(&s->cells, '\0');
			f++;
			start = i + 1;
		}
	if (s->cells.failed)
		return weir_error_set(s->err, WEIR_E_INTERNAL, "out of memory");
	for (size_t i = 0; i < nf; i++)
		s->v[i] = s->off[i] == (size_t)-1 ? NULL : s->cells.buf + s->off[i];
	s->count++;
	if (s->cb && s->cb->row) {
		struct data_row row = {nf, s->v, s->len};
		return s->cb->row(s->cb->arg, &row, s->err);
	}
	return 0;
}

static int ch_chunk(const char *data, size_t n, void *arg)
{
	struct ch_stream *s = arg;
	size_t start = 0;

	if (*s->status != 200) {
		if (s->error.len < 4096)
			strbuf_add(&s->error, data, n);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (data[i] != '\n')
			continue;
		int rc;
		if (s->line.len) {
			strbuf_add(&s->line, data + start, i - start);
			rc = ch_line(s, s->line.buf, s->line.len);
			strbuf_reset(&s->line);
		} else
			rc = ch_line(s, data + start, i - start);
		start = i + 1;
		if (rc < 0) {
			s->failed = 1;
			return 1;
		}
	}
	strbuf_add(&s->line, data + start, n - start);
	return 0;
}

static int ch_error(const char *body, size_t n, struct weir_error *err)
{
	while (n && (body[n - 1] == '\n' || body[n - 1] == ' '))
		n--;
	return weir_error_set(err, WEIR_E_INVALID, "clickhouse: %.*s", (int)(n > 900 ? 900 : n),
	                      body);
}

/* POST `body` with the query parameter `query` (may be NULL). */
static int ch_post(struct ch_conn *c, const char *query, const char *body, size_t len,
                   struct weir_error *err)
{
	struct http_response resp = {0};
	struct strbuf path = STRBUF_INIT;
	int rc = 0;

	strbuf_addf(&path, "/?%s", c->auth);
	if (query) {
		char *q = http_url_escape(query);
		strbuf_addf(&path, "&query=%s", q ? q : "");
		free(q);
	}
	if (http_client_request_body(c->http, "POST", path.buf, "text/plain", body, len,
	                             c->timeout_ms, &resp, err) < 0) {
		ch_transport_fail(c, err);
		rc = -1;
	} else if (resp.status != 200)
		rc = ch_error(resp.body ? resp.body : "", resp.len, err);
	http_response_release(&resp);
	strbuf_release(&path);
	return rc;
}

static int ch_run(struct data_conn *dc, const char *sql, const struct data_params *p,
                  const struct data_rows_cb *cb, int64_t *count, struct weir_error *err)
{
	struct ch_conn *c = (struct ch_conn *)dc;
	struct strbuf text = STRBUF_INIT, path = STRBUF_INIT;
	struct ch_stream s = {.cb = cb, .header = 2, .err = err};
	size_t *order = NULL, n = 0;
	long status = 0;
	char *q;
	int rc = -1;

	*count = -1;
	if (sqltext_bind(sql, SQL_CLICKHOUSE, p, &text, &order, &n, err) < 0)
		goto out;
	free(order);
	if (!sqltext_returns_rows(text.buf)) {
		rc = ch_post(c, NULL, text.buf, text.len, err);
		goto out;
	}
	strbuf_addstr(&text, "\nFORMAT TabSeparatedWithNamesAndTypes");
	q = http_url_escape(text.buf);
	strbuf_addf(&path, "/?%s&query=%s", c->auth, q ? q : "");
	free(q);
	strbuf_init(&s.line);
	strbuf_init(&s.error);
	strbuf_init(&s.cells);
	s.status = &status;
	if (http_client_stream(c->http, path.buf, ch_chunk, &s, &status, err) < 0) {
		ch_transport_fail(c, err);
		goto done;
	}
	if (s.failed)
		goto done;
	if (status != 200) {
		ch_error(s.error.buf, s.error.len, err);
		goto done;
	}
	if (s.line.len && ch_line(&s, s.line.buf, s.line.len) < 0)
		goto done;
	*count = s.count;
	rc = 0;
done:
	strbuf_release(&s.line);
	strbuf_release(&s.error);
	strbuf_release(&s.cells);
	data_columns_release(&s.cols);
	free(s.off);
	free(s.v);
	free(s.len);
out:
	strbuf_release(&text);
	strbuf_release(&path);
	return rc;
}

static int ch_load_begin(struct data_conn *dc, const char *table, const struct data_columns *cols,
                         struct weir_error *err)
{
	struct ch_conn *c = (struct ch_conn *)dc;

	strbuf_reset(&c->query);
	strbuf_reset(&c->batch);
	c->rows = 0;
	strbuf_addf(&c->query, "INSERT INTO %s (", table);
	sqltext_quote_idents(&c->query, cols->names, cols->n, SQL_CLICKHOUSE);
	strbuf_addstr(&c->query, ") FORMAT TabSeparated");
	return c->query.failed ? weir_error_set(err, WEIR_E_INTERNAL, "out of memory") : 0;
}

static int ch_flush(struct ch_conn *c, struct weir_error *err)
{
	int rc;

	if (!c->rows)
		return 0;
	if (c->batch.failed)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	rc = ch_post(c, c->query.buf, c->batch.buf, c->batch.len, err);
	strbuf_reset(&c->batch);
	c->rows = 0;
	return rc;
}

static int ch_load_row(struct data_conn *dc, const struct data_row *row, struct weir_error *err)
{
	struct ch_conn *c = (struct ch_conn *)dc;
	struct strbuf *b = &c->batch;

	for (size_t i = 0; i < row->n; i++) {
		if (i)
			strbuf_addch(b, '\t');
		if (!row->v[i]) {
			strbuf_addstr(b, "\\N");
			continue;
		}
		for (size_t k = 0; k < row->len[i]; k++) {
			char ch = row->v[i][k];
			switch (ch) {
			case '\\':
				strbuf_addstr(b, "\\\\");
				break;
			case '\t':
				strbuf_addstr(b, "\\t");
				break;
			case '\n':
				strbuf_addstr(b, "\\n");
				break;
			case '\r':
				strbuf_addstr(b, "\\r");
				break;
			case '\0':
				strbuf_addstr(b, "\\0");
				break;
			default:
				strbuf_addch(b, ch);
			}
		}
	}
	strbuf_addch(b, '\n');
	c->rows++;
	if (c->rows >= dc->batch || b->len >= CH_INSERT_MAX)
		return ch_flush(c, err);
	return 0;
}

static int ch_load_end(struct data_conn *dc, struct weir_error *err)
{
	return ch_flush((struct ch_conn *)dc, err);
}

static void ch_close(struct data_conn *dc)
{
	struct ch_conn *c = (struct ch_conn *)dc;

	http_client_destroy(c->http);
	free(c->auth);
	strbuf_release(&c->query);
	strbuf_release(&c->batch);
	free(c);
}

static const struct data_ops ch_ops = {
    .dialect = SQL_CLICKHOUSE,
    .run = ch_run,
    .load_begin = ch_load_begin,
    .load_row = ch_load_row,
    .load_end = ch_load_end,
    .close = ch_close,
};

static void add_param(struct strbuf *b, const char *name, const char *v)
{
	char *e;

	if (!v)
		return;
	e = http_url_escape(v);
	strbuf_addf(b, "%s%s=%s", b->len ? "&" : "", name, e ? e : "");
	free(e);
}

struct data_conn *data_clickhouse_open(const struct connection *conn, long timeout_ms,
                                       struct weir_error *err)
{
	struct ch_conn *c = calloc(1, sizeof *c);
	struct strbuf auth = STRBUF_INIT;
	char base[512];

	if (!c) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	snprintf(base, sizeof base, "http://%s:%d", conn->host ? conn->host : "127.0.0.1",
	         conn->port > 0 ? conn->port : 8123);
	add_param(&auth, "user", conn->login);
	add_param(&auth, "password", conn->password);
	add_param(&auth, "database", conn->schema);
	c->auth = strbuf_detach(&auth, NULL);
	c->http = http_client_create(base, NULL);
	snprintf(c->where, sizeof c->where, "%s", base);
	strbuf_init(&c->query);
	strbuf_init(&c->batch);
	c->base.ops = &ch_ops;
	c->base.batch = 10000;
	if (!c->http || !c->auth) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		ch_close(&c->base);
		return NULL;
	}
	/* a login is checked at once, as the other drivers' are, by a POST
	 * (its answer bounded by the timeout, unlike a streamed GET) */
	c->timeout_ms = timeout_ms;
	if (ch_post(c, NULL, "SELECT 1", 8, err) < 0) {
		ch_close(&c->base);
		return NULL;
	}
	c->timeout_ms = 0;
	return &c->base;
}
