/* sql_task.c: a `sql:` task (task.h): the statement or script split into
 * statements (sqltext.h), each run with the task's parameters bound, all
 * in one transaction that commits at the end (ClickHouse has none: each
 * statement stands alone), and the outputs: the last statement's
 * row_count, and the columns, first max_rows rows and first value of the
 * last statement that returned rows; with `return_rows` (an Airflow SQL
 * operator's task) also return_value, the last statement's rows as
 * Airflow's fetch_all_handler pushes them, and weir_return. */
#include "data/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fs.h"

#define SQL_DEFAULT_MAX_ROWS 100
#define SQL_MAX_ROWS 10000
/* The rows kept stay under this many bytes of JSON (outputs are read up
 * to 64 KiB); past it, rows_truncated says so. */
#define SQL_ROWS_BYTES (48 * 1024)

struct sql_rows {
	long long max_rows;
	json_t *columns;
	enum data_type *types;
	size_t n_types;
	json_t *rows;
	size_t bytes;
	bool truncated, returned;
	bool last; /* the statement running now returned rows */
};

static int on_columns(void *arg, const struct data_columns *cols, struct weir_error *err)
{
	struct sql_rows *s = arg;

	json_decref(s->columns);
	json_decref(s->rows);
	free(s->types);
	s->columns = json_array();
	s->rows = json_array();
	s->types = calloc(cols->n + 1, sizeof *s->types);
	s->n_types = cols->n;
	s->bytes = 0;
	s->truncated = false;
	s->returned = true;
	s->last = true;
	if (!s->columns || !s->rows || !s->types)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	for (size_t i = 0; i < cols->n; i++) {
		json_array_append_new(s->columns, json_string(cols->names[i]));
		s->types[i] = cols->types[i];
	}
	return 0;
}

static int on_row(void *arg, const struct data_row *row, struct weir_error *err)
{
	struct sql_rows *s = arg;
	json_t *r;

	if ((long long)json_array_size(s->rows) >= s->max_rows || s->truncated)
		return 0;
	r = json_array();
	if (!r)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	for (size_t i = 0; i < row->n; i++) {
		size_t len = row->v[i] ? row->len[i] : 4;
		json_array_append_new(r, data_cell_json(row->v[i], row->len[i],
		                                        i < s->n_types ? s->types[i] : DATA_TEXT));
		s->bytes += len + 4;
	}
	if (s->bytes > SQL_ROWS_BYTES) {
		s->truncated = true;
		json_decref(r);
		return 0;
	}
	json_array_append_new(s->rows, r);
	return 0;
}

/* The spec's statements: `statement` (inline) or `file` (read now). */
static char *read_script(json_t *spec, struct weir_error *err)
{
	const char *st = json_string_value(json_object_get(spec, "statement"));
	const char *file = json_string_value(json_object_get(spec, "file"));
	char *text;

	if (!st == !file) {
		weir_error_set(err, WEIR_E_INVALID,
		               "spec: expected exactly one of statement and file");
		return NULL;
	}
	if (st)
		return strdup(st);
	text = fs_read_file(file, NULL, err);
	if (!text)
		weir_error_prefix(err, "file %s", file);
	return text;
}

/* return_value (the rows, when the last statement returned any) and
 * weir_return ([rows] or [null]), as run_task writes an Airflow task's. */
static int set_return_rows(json_t *outputs, json_t *rows)
{
	json_t *ret = json_array();

	if (!ret || json_array_append(ret, rows ? rows : json_null()) < 0 ||
	    json_object_set_new(outputs, "weir_return", ret) < 0)
		return -1;
	return rows ? json_object_set(outputs, "return_value", rows) : 0;
}

int data_sql_run(json_t *spec, json_t **outputs, struct weir_error *err)
{
	const char *conn = json_string_value(json_object_get(spec, "conn"));
	bool return_rows = json_is_true(json_object_get(spec, "return_rows"));
	json_t *mr = json_object_get(spec, "max_rows");
	struct sql_rows s = {.max_rows = SQL_DEFAULT_MAX_ROWS};
	struct data_rows_cb cb = {on_columns, on_row, &s};
	struct data_params params = {0};
	struct strvec stmts = STRVEC_INIT;
	struct data_conn *dc = NULL;
	int64_t count = -1;
	char *script = NULL;
	int rc = -1;

	*outputs = NULL;
	if (!conn)
		return weir_error_set(err, WEIR_E_INVALID, "spec: expected conn, a connection id");
	if (mr) {
		if (!json_is_integer(mr) || json_integer_value(mr) < 0 ||
		    json_integer_value(mr) > SQL_MAX_ROWS)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "spec: max_rows: expected a number from 0 to %d",
			                      SQL_MAX_ROWS);
		s.max_rows = json_integer_value(mr);
	}
	if (data_params_from_json(json_object_get(spec, "parameters"), &params, err) < 0)
		return -1;
	if (!(script = read_script(spec, err)))
		goto out;
	if (!(dc = data_open_env(conn, err)))
		goto out;
	if (sqltext_split(script, dc->ops->dialect, &stmts, err) < 0)
		goto out;
	if (stmts.n == 0) {
		weir_error_set(err, WEIR_E_INVALID, "the script holds no statement");
		goto out;
	}
	if (stmts.n > 1 && data_begin(dc, err) < 0)
		goto out;
	for (size_t i = 0; i < stmts.n; i++) {
		fprintf(stderr, "sql: statement %zu of %zu on %s\n", i + 1, stmts.n, conn);
		s.last = false;
		if (data_run(dc, stmts.v[i], &params, &cb, &count, err) < 0) {
			weir_error_prefix(err, "statement %zu", i + 1);
			goto out;
		}
	}
	if (return_rows && s.last && s.truncated) {
		weir_error_set(err, WEIR_E_INVALID,
		               "the rows passed %d KiB, more than weir keeps as a task's XCom: "
		               "select fewer rows, or set do_xcom_push=False",
		               SQL_ROWS_BYTES / 1024);
		goto out;
	}
	if (data_commit(dc, err) < 0)
		goto out;
	fprintf(stderr, "sql: done, row_count %lld\n", (long long)count);
	*outputs = json_object();
	if (!*outputs) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	json_object_set_new(*outputs, "row_count", json_integer(count));
	json_object_set_new(*outputs, "statements", json_integer((json_int_t)stmts.n));
	if (s.returned) {
		json_t *first = json_array_get(s.rows, 0);
		json_object_set(*outputs, "columns", s.columns);
		json_object_set(*outputs, "rows", s.rows);
		json_object_set(*outputs, "value", first ? json_array_get(first, 0) : json_null());
		if (s.truncated)
			json_object_set_new(*outputs, "rows_truncated", json_true());
	}
	if (return_rows && set_return_rows(*outputs, s.last ? s.rows : NULL) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	rc = 0;
out:
	data_close(dc);
	data_params_release(&params);
	strvec_release(&stmts);
	free(script);
	json_decref(s.columns);
	json_decref(s.rows);
	free(s.types);
	return rc;
}
