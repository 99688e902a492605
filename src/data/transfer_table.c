/* transfer_table.c: table and file targets of a transfer (transfer.h).
 *
 * A table target creates its table when it is missing (columns from the
 * source's, typed as the source typed them), then, by mode:
 *  - append: rows are added;
 *  - create: as append, but the table must have no rows yet;
 *  - replace: the table's rows become the source's;
 *  - upsert: rows are inserted, or update the row of the same `key`.
 * On PostgreSQL, MariaDB/MySQL and SQLite all of it is one transaction:
 * DELETE (replace) and the load (COPY on PostgreSQL), or the load into a
 * temporary table and one INSERT ... ON CONFLICT / ON DUPLICATE KEY
 * (upsert), then COMMIT; a try killed half-way commits nothing.  In a
 * DAG's task, append and create also insert the task instance's marker
 * into weir_transfers in that transaction; a retry that finds it loads
 * nothing and reports the rows recorded (tt_done).
 * ClickHouse has no transactions: rows load into `TABLE__weir_new` (made
 * AS the table), which RENAME TABLE puts in the table's place (replace) or
 * one INSERT ... SELECT copies in (append, create); upsert is refused.
 * A file target writes a temporary file renamed over the target.
 */
#include "data/transfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/file.h"
#include "data/task.h"
#include "lib/fs.h"

enum table_mode { MODE_APPEND, MODE_CREATE, MODE_REPLACE, MODE_UPSERT };

struct table_target {
	struct transfer_target base;
	struct data_conn *dc;
	char *table;         /* as given */
	struct strbuf q;     /* the table's name, quoted */
	struct strbuf stage; /* the staging table's, quoted ("" when none) */
	enum table_mode mode;
	struct strvec key;
	struct data_columns cols;
	bool loading, published;
	char *marker; /* this task instance's key in weir_transfers; NULL: none */
	int64_t rows;
};

#define MARKER_TABLE "weir_transfers"

static void quote_name(struct strbuf *out, const char *name, const char *suffix, enum sql_dialect d)
{
	const char *dot = strchr(name, '.');

	if (dot) {
		char *schema = strndup(name, (size_t)(dot - name));
		sqltext_quote_ident(out, schema ? schema : "", d);
		free(schema);
		strbuf_addch(out, '.');
		name = dot + 1;
	}
	if (!suffix) {
		sqltext_quote_ident(out, name, d);
		return;
	}
	struct strbuf both = STRBUF_INIT;
	strbuf_addstr(&both, name);
	strbuf_addstr(&both, suffix);
	sqltext_quote_ident(out, both.buf, d);
	strbuf_release(&both);
}

static bool is_key(const struct table_target *t, const char *col)
{
	for (size_t i = 0; i < t->key.n; i++)
		if (!strcmp(t->key.v[i], col))
			return true;
	return false;
}

static const char *type_name(enum data_type ty, enum sql_dialect d, bool key)
{
	switch (d) {
	case SQL_CLICKHOUSE:
		return ty == DATA_INT     ? (key ? "Int64" : "Nullable(Int64)")
		       : ty == DATA_FLOAT ? (key ? "Float64" : "Nullable(Float64)")
		                          : (key ? "String" : "Nullable(String)");
	case SQL_MYSQL:
		return ty == DATA_INT     ? "BIGINT"
		       : ty == DATA_FLOAT ? "DOUBLE"
		       : key              ? "VARCHAR(255)"
		                          : "TEXT";
	case SQL_SQLITE:
		return ty == DATA_INT ? "INTEGER" : ty == DATA_FLOAT ? "REAL" : "TEXT";
	default:
		return ty == DATA_INT ? "BIGINT" : ty == DATA_FLOAT ? "DOUBLE PRECISION" : "TEXT";
	}
}

static void col_list(struct strbuf *b, const struct data_columns *cols, enum sql_dialect d)
{
	sqltext_quote_idents(b, cols->names, cols->n, d);
}

static int create_missing(struct table_target *t, struct weir_error *err)
{
	enum sql_dialect d = t->dc->ops->dialect;
	struct strbuf sql = STRBUF_INIT;
	int rc;

	strbuf_addf(&sql, "CREATE TABLE IF NOT EXISTS %s (", t->q.buf);
	for (size_t i = 0; i < t->cols.n; i++) {
		if (i)
			strbuf_addstr(&sql, ", ");
		sqltext_quote_ident(&sql, t->cols.names[i], d);
		strbuf_addf(&sql, " %s",
		            type_name(t->cols.types[i], d, is_key(t, t->cols.names[i])));
	}
	if (t->key.n && d != SQL_CLICKHOUSE) {
		strbuf_addstr(&sql, ", PRIMARY KEY (");
		sqltext_quote_idents(&sql, t->key.v, t->key.n, d);
		strbuf_addch(&sql, ')');
	}
	strbuf_addch(&sql, ')');
	if (d == SQL_CLICKHOUSE) {
		strbuf_addstr(&sql, " ENGINE = MergeTree ORDER BY ");
		if (t->key.n) {
			strbuf_addch(&sql, '(');
			sqltext_quote_idents(&sql, t->key.v, t->key.n, d);
			strbuf_addch(&sql, ')');
		} else
			strbuf_addstr(&sql, "tuple()");
	}
	rc = data_exec(t->dc, sql.buf, err);
	strbuf_release(&sql);
	return rc;
}

static int tt_begin(struct transfer_target *base, const struct data_columns *cols,
                    struct weir_error *err)
{
	struct table_target *t = (struct table_target *)base;
	enum sql_dialect d = t->dc->ops->dialect;
	struct strbuf sql = STRBUF_INIT;
	int rc = -1;

	for (size_t i = 0; i < cols->n; i++)
		if (data_columns_add(&t->cols, cols->names[i], cols->types[i]) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	for (size_t i = 0; i < t->key.n; i++) {
		size_t c;
		for (c = 0; c < cols->n && strcmp(cols->names[c], t->key.v[i]); c++)
			;
		if (c == cols->n)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "to.key: %s is not a column of the source",
			                      t->key.v[i]);
	}
	if (create_missing(t, err) < 0)
		return -1;
	if (t->mode == MODE_CREATE) {
		int64_t n = 0;
		strbuf_addf(&sql, "SELECT 1 FROM %s LIMIT 1", t->q.buf);
		if (data_run(t->dc, sql.buf, NULL, NULL, &n, err) < 0)
			goto out;
		if (n > 0) {
			weir_error_set(
			    err, WEIR_E_CONFLICT,
			    "to.table: %s already has rows (mode create loads an empty or "
			    "new table; append adds to one)",
			    t->table);
			goto out;
		}
		strbuf_reset(&sql);
	}
	if (d == SQL_CLICKHOUSE) {
		if (t->mode == MODE_UPSERT) {
			weir_error_set(
			    err, WEIR_E_INVALID,
			    "to.mode: clickhouse has no upsert; use replace, or append into "
			    "a ReplacingMergeTree table");
			goto out;
		}
		quote_name(&t->stage, t->table, "__weir_new", d);
		strbuf_addf(&sql, "DROP TABLE IF EXISTS %s", t->stage.buf);
		if (data_exec(t->dc, sql.buf, err) < 0)
			goto out;
		strbuf_reset(&sql);
		strbuf_addf(&sql, "CREATE TABLE %s AS %s", t->stage.buf, t->q.buf);
		if (data_exec(t->dc, sql.buf, err) < 0)
			goto out;
	} else {
		if (t->mode == MODE_UPSERT) {
			strbuf_addstr(&t->stage, "weir_stage");
			if (d == SQL_POSTGRES)
				strbuf_addf(
				    &sql,
				    "CREATE TEMP TABLE weir_stage (LIKE %s INCLUDING DEFAULTS)",
				    t->q.buf);
			else if (d == SQL_MYSQL)
				strbuf_addf(&sql, "CREATE TEMPORARY TABLE weir_stage LIKE %s",
				            t->q.buf);
			else
				strbuf_addf(
				    &sql,
				    "CREATE TEMP TABLE weir_stage AS SELECT * FROM %s WHERE 0",
				    t->q.buf);
			if (data_exec(t->dc, sql.buf, err) < 0)
				goto out;
			strbuf_reset(&sql);
		}
		if (data_begin(t->dc, err) < 0)
			goto out;
		if (t->mode == MODE_REPLACE) {
			strbuf_addf(&sql, "DELETE FROM %s", t->q.buf);
			if (data_exec(t->dc, sql.buf, err) < 0)
				goto out;
		}
	}
	if (t->dc->ops->load_begin(t->dc, t->stage.len ? t->stage.buf : t->q.buf, cols, err) < 0)
		goto out;
	t->loading = true;
	rc = 0;
out:
	strbuf_release(&sql);
	return rc;
}

static int tt_row(struct transfer_target *base, const struct data_row *row, struct weir_error *err)
{
	struct table_target *t = (struct table_target *)base;

	t->rows++;
	return t->dc->ops->load_row(t->dc, row, err);
}

/* ---- the marker: which task instances' appends are in ---- */

/* The task instance's key, from its environment: NULL outside a DAG. */
static char *marker_key(void)
{
	const char *dag = getenv("WEIR_DAG_ID"), *run = getenv("WEIR_RUN_ID");
	const char *task = getenv("WEIR_TASK_ID"), *index = getenv("WEIR_MAP_INDEX");
	json_t *k;
	char *s;

	if (!dag || !*dag || !run || !*run || !task || !*task)
		return NULL;
	k = json_pack("[s, s, s, I]", dag, run, task,
	              (json_int_t)(index && *index ? strtoll(index, NULL, 10) : -1));
	s = k ? json_dumps(k, JSON_COMPACT) : NULL;
	json_decref(k);
	return s;
}

static int marker_row(void *arg, const struct data_row *row, struct weir_error *err)
{
	(void)err;
	*(int64_t *)arg = row->n && row->v[0] ? strtoll(row->v[0], NULL, 10) : 0;
	return 0;
}

static int tt_done(struct transfer_target *base, int64_t *rows, struct weir_error *err)
{
	struct table_target *t = (struct table_target *)base;
	enum sql_dialect d = t->dc->ops->dialect;
	char *names[] = {(char *)"k"}, *values[] = {t->marker};
	struct data_params params = {1, names, values};
	struct data_rows_cb cb = {NULL, marker_row, rows};
	struct strbuf sql = STRBUF_INIT;
	int64_t n = 0;
	int rc;

	if (!t->marker)
		return 0;
	strbuf_addf(&sql,
	            "CREATE TABLE IF NOT EXISTS %s (transfer_key %s PRIMARY KEY, "
	            "row_count BIGINT NOT NULL, done_at TEXT NOT NULL)",
	            MARKER_TABLE, d == SQL_MYSQL ? "VARCHAR(512)" : "TEXT");
	rc = data_exec(t->dc, sql.buf, err);
	strbuf_reset(&sql);
	strbuf_addf(&sql, "SELECT row_count FROM %s WHERE transfer_key = :k", MARKER_TABLE);
	if (rc == 0)
		rc = data_run(t->dc, sql.buf, &params, &cb, &n, err);
	strbuf_release(&sql);
	if (rc < 0)
		return -1;
	return n > 0 ? 1 : 0;
}

/* In the load's transaction, just before its COMMIT. */
static int marker_write(struct table_target *t, struct weir_error *err)
{
	char count[32], at[32];
	char *names[] = {(char *)"k", (char *)"n", (char *)"at"},
	     *values[] = {t->marker, count, at};
	struct data_params params = {3, names, values};
	time_t now = time(NULL);
	struct tm tm;

	if (!t->marker)
		return 0;
	snprintf(count, sizeof count, "%lld", (long long)t->rows);
	gmtime_r(&now, &tm);
	strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return data_run(t->dc,
	                "INSERT INTO " MARKER_TABLE " (transfer_key, row_count, done_at) "
	                "VALUES (:k, :n, :at)",
	                &params, NULL, NULL, err);
}

static int upsert_sql(struct table_target *t, struct strbuf *sql)
{
	enum sql_dialect d = t->dc->ops->dialect;
	bool any = false;

	strbuf_addf(sql, "INSERT INTO %s (", t->q.buf);
	col_list(sql, &t->cols, d);
	strbuf_addstr(sql, ") SELECT ");
	col_list(sql, &t->cols, d);
	strbuf_addf(sql, " FROM weir_stage%s", d == SQL_SQLITE ? " WHERE true" : "");
	if (d == SQL_MYSQL)
		strbuf_addstr(sql, " ON DUPLICATE KEY UPDATE ");
	else {
		strbuf_addstr(sql, " ON CONFLICT (");
		sqltext_quote_idents(sql, t->key.v, t->key.n, d);
		strbuf_addstr(sql, ") DO ");
	}
	for (size_t i = 0; i < t->cols.n; i++) {
		const char *c = t->cols.names[i];
		if (is_key(t, c))
			continue;
		if (!any && d != SQL_MYSQL)
			strbuf_addstr(sql, "UPDATE SET ");
		if (any)
			strbuf_addstr(sql, ", ");
		sqltext_quote_ident(sql, c, d);
		if (d == SQL_MYSQL) {
			strbuf_addstr(sql, " = VALUES(");
			sqltext_quote_ident(sql, c, d);
			strbuf_addch(sql, ')');
		} else {
			strbuf_addstr(sql, " = excluded.");
			sqltext_quote_ident(sql, c, d);
		}
		any = true;
	}
	if (!any) {
		if (d == SQL_MYSQL) {
			sqltext_quote_ident(sql, t->key.v[0], d);
			strbuf_addstr(sql, " = ");
			sqltext_quote_ident(sql, t->key.v[0], d);
		} else
			strbuf_addstr(sql, "NOTHING");
	}
	return sql->failed ? -1 : 0;
}

static int tt_publish(struct transfer_target *base, struct weir_error *err)
{
	struct table_target *t = (struct table_target *)base;
	enum sql_dialect d = t->dc->ops->dialect;
	struct strbuf sql = STRBUF_INIT;
	int rc = -1;

	t->loading = false;
	if (t->dc->ops->load_end(t->dc, err) < 0)
		goto out;
	if (d == SQL_CLICKHOUSE) {
		struct strbuf old = STRBUF_INIT;
		quote_name(&old, t->table, "__weir_old", d);
		if (t->mode == MODE_REPLACE) {
			strbuf_addf(&sql, "DROP TABLE IF EXISTS %s", old.buf);
			rc = data_exec(t->dc, sql.buf, err);
			strbuf_reset(&sql);
			strbuf_addf(&sql, "RENAME TABLE %s TO %s, %s TO %s", t->q.buf, old.buf,
			            t->stage.buf, t->q.buf);
			if (rc == 0)
				rc = data_exec(t->dc, sql.buf, err);
			strbuf_reset(&sql);
			strbuf_addf(&sql, "DROP TABLE IF EXISTS %s", old.buf);
		} else {
			strbuf_addf(&sql, "INSERT INTO %s SELECT * FROM %s", t->q.buf,
			            t->stage.buf);
			rc = data_exec(t->dc, sql.buf, err);
			strbuf_reset(&sql);
			strbuf_addf(&sql, "DROP TABLE IF EXISTS %s", t->stage.buf);
		}
		strbuf_release(&old);
		if (rc == 0)
			rc = data_exec(t->dc, sql.buf, err);
		if (rc == 0)
			t->published = true;
		goto out;
	}
	if (t->mode == MODE_UPSERT) {
		if (upsert_sql(t, &sql) < 0) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			goto out;
		}
		if (data_exec(t->dc, sql.buf, err) < 0)
			goto out;
	}
	if (marker_write(t, err) < 0)
		goto out;
	if (data_commit(t->dc, err) < 0)
		goto out;
	t->published = true;
	rc = 0;
out:
	strbuf_release(&sql);
	return rc;
}

static void tt_destroy(struct transfer_target *base)
{
	struct table_target *t = (struct table_target *)base;

	if (t->dc && !t->published && t->dc->ops->dialect == SQL_CLICKHOUSE && t->stage.len) {
		struct strbuf sql = STRBUF_INIT;
		struct weir_error ignored = {0};
		strbuf_addf(&sql, "DROP TABLE IF EXISTS %s", t->stage.buf);
		data_exec(t->dc, sql.buf, &ignored);
		strbuf_release(&sql);
	}
	data_close(t->dc); /* rolls back what was not committed */
	free(t->marker);
	free(t->table);
	strbuf_release(&t->q);
	strbuf_release(&t->stage);
	strvec_release(&t->key);
	data_columns_release(&t->cols);
	free(t);
}

struct transfer_target *transfer_table_target(json_t *to, size_t batch, struct weir_error *err)
{
	static const char *const modes[] = {"append", "create", "replace", "upsert", NULL};
	const char *conn = json_string_value(json_object_get(to, "conn"));
	const char *table = json_string_value(json_object_get(to, "table"));
	const char *mode = json_string_value(json_object_get(to, "mode"));
	json_t *key = json_object_get(to, "key"), *k;
	struct table_target *t;
	size_t i;

	if (!conn || !table || !*table) {
		weir_error_set(err, WEIR_E_INVALID, "spec: to: expected conn and table");
		return NULL;
	}
	t = calloc(1, sizeof *t);
	if (!t) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	t->base = (struct transfer_target){tt_begin, tt_row, tt_publish, tt_destroy, tt_done};
	strbuf_init(&t->q);
	strbuf_init(&t->stage);
	t->table = strdup(table);
	t->mode = MODE_APPEND;
	for (i = 0; mode && modes[i] && strcmp(modes[i], mode); i++)
		;
	if (mode && !modes[i]) {
		weir_error_set(
		    err, WEIR_E_INVALID,
		    "spec: to.mode: expected append, create, replace or upsert, got \"%s\"", mode);
		goto fail;
	}
	if (mode)
		t->mode = (enum table_mode)i;
	if (json_is_string(key))
		strvec_push(&t->key, json_string_value(key));
	else
		json_array_foreach(key, i, k) if (json_is_string(k))
		    strvec_push(&t->key, json_string_value(k));
	if (t->mode == MODE_UPSERT && !t->key.n) {
		weir_error_set(err, WEIR_E_INVALID,
		               "spec: to.key: upsert needs a key (a column or a list)");
		goto fail;
	}
	t->dc = data_open_env(conn, err);
	if (!t->dc)
		goto fail;
	t->dc->batch = batch;
	quote_name(&t->q, table, NULL, t->dc->ops->dialect);
	/* append and create add rows: a retry after a try that committed would add
	 * them twice, so the commit carries a marker the retry finds (replace and
	 * upsert give the same table run twice; ClickHouse has no transaction to
	 * carry one: docs/internals/data.md) */
	if ((t->mode == MODE_APPEND || t->mode == MODE_CREATE) &&
	    t->dc->ops->dialect != SQL_CLICKHOUSE)
		t->marker = marker_key();
	return &t->base;
fail:
	tt_destroy(&t->base);
	return NULL;
}

/* ---- a file ---- */

struct file_target {
	struct transfer_target base;
	char *path;
	enum file_format fmt;
	struct file_writer *w;
};

static int ft_begin(struct transfer_target *base, const struct data_columns *cols,
                    struct weir_error *err)
{
	struct file_target *t = (struct file_target *)base;
	char *dir = fs_abs_dirname(t->path);
	int rc = dir ? fs_mkdir_p(dir, 0755, err) : 0;

	free(dir);
	if (rc < 0)
		return -1;
	t->w = file_writer_open(t->path, t->fmt, cols, err);
	return t->w ? 0 : -1;
}

static int ft_row(struct transfer_target *base, const struct data_row *row, struct weir_error *err)
{
	return file_writer_row(((struct file_target *)base)->w, row, err);
}

static int ft_publish(struct transfer_target *base, struct weir_error *err)
{
	struct file_target *t = (struct file_target *)base;
	int rc = file_writer_commit(t->w, err);

	t->w = NULL;
	return rc;
}

static void ft_destroy(struct transfer_target *base)
{
	struct file_target *t = (struct file_target *)base;

	file_writer_abort(t->w);
	free(t->path);
	free(t);
}

struct transfer_target *transfer_file_target(json_t *to, struct weir_error *err)
{
	const char *path = json_string_value(json_object_get(to, "file"));
	const char *fmt = json_string_value(json_object_get(to, "format"));
	struct file_target *t;
	enum file_format f;

	if (!path || !*path) {
		weir_error_set(err, WEIR_E_INVALID, "spec: to.file: expected a path");
		return NULL;
	}
	if (fmt ? file_format_from_name(fmt, &f) < 0 : file_format_of_path(path, &f) < 0) {
		weir_error_set(err, WEIR_E_INVALID, "spec: to.format: expected csv or jsonl");
		return NULL;
	}
	t = calloc(1, sizeof *t);
	if (!t || !(t->path = strdup(path))) {
		free(t);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	t->base = (struct transfer_target){ft_begin, ft_row, ft_publish, ft_destroy, NULL};
	t->fmt = f;
	return &t->base;
}
