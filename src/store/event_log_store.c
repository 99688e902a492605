/* event_log_store.c: the event_log table (event_log_store.h) and the
 * counts by state.
 *
 * A list's SQL is put together from fixed pieces only: a filter adds its
 * "AND column = ?" and binds the value; order_by picks a column from
 * event_log_order_fields' table.  No value from a request becomes SQL text.
 */
#include "store/event_log_store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"
#include "store/sql.h"

#define COLS                                                                                       \
	"id, dttm, dag_id, task_id, run_id, map_index, try_number, event, execution_date, owner,"  \
	" extra"

const char *const event_log_order_fields[] = {
    "event_log_id", "when",           "dag_id", "task_id", "run_id", "map_index",
    "try_number",   "execution_date", "event",  "owner",   "extra",  NULL};
/* the column of each field above, in the same order */
static const char *const order_columns[] = {"id",     "dttm",      "dag_id",     "task_id",
                                            "run_id", "map_index", "try_number", "execution_date",
                                            "event",  "owner",     "extra"};

/* what a failed prepare says */
static const char preparing[] = "event log: preparing a statement";

int event_log_insert(struct store *s, struct event_log_row *row, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;

	if (store_write_starts(s, err) < 0)
		return -1;
	/* the run's logical date is Airflow's execution_date: read from the
	 * run's row when the record names one */
	st = sql_prepare(
	    db,
	    "INSERT INTO event_log (dttm, dag_id, task_id, run_id, map_index, try_number,"
	    " event, execution_date, owner, extra) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
	    " (SELECT logical_date FROM dag_runs WHERE dag_id = ?2 AND run_id = ?4),"
	    " ?8, ?9)",
	    preparing, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, row->when_ms);
	sql_bind_text_or_null(st, 2, row->dag_id);
	sql_bind_text_or_null(st, 3, row->task_id);
	sql_bind_text_or_null(st, 4, row->run_id);
	if (row->has_map_index)
		sqlite3_bind_int(st, 5, row->map_index);
	if (row->has_try_number)
		sqlite3_bind_int(st, 6, row->try_number);
	sql_bind_text(st, 7, row->event);
	sql_bind_text_or_null(st, 8, row->owner);
	sql_bind_text_or_null(st, 9, row->extra);
	if (sql_run(db, st, "event log: inserting a record", NULL, err) < 0)
		return -1;
	row->id = sqlite3_last_insert_rowid(db);
	return 0;
}

static char *col_text_or_null(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NULL : sql_col_text(st, i);
}

static int read_row(sqlite3_stmt *st, void *row)
{
	struct event_log_row *r = row;
	memset(r, 0, sizeof *r);
	r->id = sqlite3_column_int64(st, 0);
	r->when_ms = sqlite3_column_int64(st, 1);
	r->dag_id = col_text_or_null(st, 2);
	r->task_id = col_text_or_null(st, 3);
	r->run_id = col_text_or_null(st, 4);
	r->has_map_index = sqlite3_column_type(st, 5) != SQLITE_NULL;
	r->map_index = sqlite3_column_int(st, 5);
	r->has_try_number = sqlite3_column_type(st, 6) != SQLITE_NULL;
	r->try_number = sqlite3_column_int(st, 6);
	r->event = sql_col_text(st, 7);
	r->has_execution_date = sqlite3_column_type(st, 8) != SQLITE_NULL;
	r->execution_date = sqlite3_column_int64(st, 8);
	r->owner = col_text_or_null(st, 9);
	r->extra = col_text_or_null(st, 10);
	return r->event ? 0 : -1;
}

static void release_row(void *row);

/* How sql_collect reads the log's records. */
static const struct sql_rows event_log_rows = {sizeof(struct event_log_row), read_row, release_row};

/* The WHERE clause of a query, and its values bound in the same order. */
static void in_list(struct strbuf *sql, const char *head, size_t n)
{
	strbuf_addstr(sql, head);
	for (size_t i = 0; i < n; i++)
		strbuf_addstr(sql, i ? ", ?" : "?");
	strbuf_addch(sql, ')');
}

static void where_sql(struct strbuf *sql, const struct event_log_query *q)
{
	strbuf_addstr(sql, " WHERE 1");
	if (q->dag_id)
		strbuf_addstr(sql, " AND dag_id = ?");
	if (q->task_id)
		strbuf_addstr(sql, " AND task_id = ?");
	if (q->run_id)
		strbuf_addstr(sql, " AND run_id = ?");
	if (q->event)
		strbuf_addstr(sql, " AND event = ?");
	if (q->owner)
		strbuf_addstr(sql, " AND owner = ?");
	if (q->has_map_index)
		strbuf_addstr(sql, " AND map_index = ?");
	if (q->has_try_number)
		strbuf_addstr(sql, " AND try_number = ?");
	if (q->before_ms)
		strbuf_addstr(sql, " AND dttm < ?");
	if (q->after_ms)
		strbuf_addstr(sql, " AND dttm > ?");
	if (q->n_included)
		in_list(sql, " AND event IN (", q->n_included);
	if (q->n_excluded)
		in_list(sql, " AND event NOT IN (", q->n_excluded);
	if (q->n_hidden_dags)
		in_list(sql, " AND coalesce(dag_id, '') NOT IN (", q->n_hidden_dags);
}

static int where_bind(sqlite3_stmt *st, const struct event_log_query *q)
{
	int i = 1;

	if (q->dag_id)
		sql_bind_text(st, i++, q->dag_id);
	if (q->task_id)
		sql_bind_text(st, i++, q->task_id);
	if (q->run_id)
		sql_bind_text(st, i++, q->run_id);
	if (q->event)
		sql_bind_text(st, i++, q->event);
	if (q->owner)
		sql_bind_text(st, i++, q->owner);
	if (q->has_map_index)
		sqlite3_bind_int(st, i++, q->map_index);
	if (q->has_try_number)
		sqlite3_bind_int(st, i++, q->try_number);
	if (q->before_ms)
		sqlite3_bind_int64(st, i++, q->before_ms);
	if (q->after_ms)
		sqlite3_bind_int64(st, i++, q->after_ms);
	for (size_t k = 0; k < q->n_included; k++)
		sql_bind_text(st, i++, q->included[k]);
	for (size_t k = 0; k < q->n_excluded; k++)
		sql_bind_text(st, i++, q->excluded[k]);
	for (size_t k = 0; k < q->n_hidden_dags; k++)
		sql_bind_text(st, i++, q->hidden_dags[k]);
	return i;
}

/* The ORDER BY clause of order_by, or -1 with err. */
static int order_sql(struct strbuf *sql, const char *order_by, struct weir_error *err)
{
	const char *f = order_by && *order_by ? order_by : "event_log_id";
	bool desc = *f == '-';

	if (desc)
		f++;
	for (size_t i = 0; event_log_order_fields[i]; i++)
		if (!strcmp(f, event_log_order_fields[i])) {
			strbuf_addf(sql, " ORDER BY %s %s, id %s", order_columns[i],
			            desc ? "DESC" : "ASC", desc ? "DESC" : "ASC");
			return 0;
		}
	return weir_error_set(err, WEIR_E_INVALID,
	                      "order_by \"%.60s\": expected one of event_log_id, when, dag_id, "
	                      "task_id, run_id, map_index, try_number, execution_date, event, "
	                      "owner, extra (a '-' before it for descending)",
	                      order_by);
}

static int count_rows(sqlite3 *db, const struct event_log_query *q, int64_t *total,
                      struct weir_error *err)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int rc = -1;

	strbuf_addstr(&sql, "SELECT count(*) FROM event_log");
	where_sql(&sql, q);
	if (sql.failed) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (!(st = sql_prepare(db, sql.buf, preparing, err)))
		goto out;
	where_bind(st, q);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sql_error(db, "event log: counting records", err);
		goto out;
	}
	*total = sqlite3_column_int64(st, 0);
	rc = 0;
out:
	sqlite3_finalize(st);
	strbuf_release(&sql);
	return rc;
}

int event_log_list(struct store *s, const struct event_log_query *q, struct event_log_row **rows,
                   size_t *n, int64_t *total, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int rc = -1, i;

	*rows = NULL;
	*n = 0;
	strbuf_addstr(&sql, "SELECT " COLS " FROM event_log");
	where_sql(&sql, q);
	if (order_sql(&sql, q->order_by, err) < 0)
		goto out;
	strbuf_addstr(&sql, " LIMIT ? OFFSET ?");
	if (sql.failed) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (count_rows(db, q, total, err) < 0 || !(st = sql_prepare(db, sql.buf, preparing, err)))
		goto out;
	i = where_bind(st, q);
	sqlite3_bind_int(st, i++, q->limit > 0 ? q->limit : 100);
	sqlite3_bind_int(st, i, q->offset > 0 ? q->offset : 0);
	rc = sql_collect(st, &event_log_rows, NULL, "event log: listing records", rows, n, err);
out:
	sqlite3_finalize(st);
	strbuf_release(&sql);
	return rc;
}

int event_log_get(struct store *s, int64_t id, struct event_log_row *out, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;
	int r, rc = -1;

	if (!(st = sql_prepare(db, "SELECT " COLS " FROM event_log WHERE id = ?", preparing, err)))
		return -1;
	sqlite3_bind_int64(st, 1, id);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		if (read_row(st, out) == 0)
			rc = 0;
		else {
			event_log_row_release(out);
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		}
	} else if (r == SQLITE_DONE) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "event log record %lld: no such record",
		               (long long)id);
	} else {
		sql_error(db, "event log: reading a record", err);
	}
	sqlite3_finalize(st);
	return rc;
}

static int exec_bound(struct store *s, const char *sql, int64_t v, int64_t *changed,
                      struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;
	int changes;

	if (store_write_starts(s, err) < 0 || !(st = sql_prepare(db, sql, preparing, err)))
		return -1;
	sqlite3_bind_int64(st, 1, v);
	if (sql_run(db, st, "event log: pruning", &changes, err) < 0)
		return -1;
	*changed += changes;
	return 0;
}

int event_log_prune(struct store *s, int64_t before_ms, int64_t keep, int64_t *removed,
                    struct weir_error *err)
{
	*removed = 0;
	if (before_ms > 0 &&
	    exec_bound(s, "DELETE FROM event_log WHERE dttm < ?", before_ms, removed, err) < 0)
		return -1;
	if (keep > 0 &&
	    exec_bound(s,
	               "DELETE FROM event_log WHERE id <= (SELECT id FROM event_log ORDER BY id"
	               " DESC LIMIT 1 OFFSET ?)",
	               keep, removed, err) < 0)
		return -1;
	return 0;
}

void event_log_row_release(struct event_log_row *r)
{
	if (!r)
		return;
	free(r->dag_id);
	free(r->task_id);
	free(r->run_id);
	free(r->event);
	free(r->owner);
	free(r->extra);
	memset(r, 0, sizeof *r);
}

static void release_row(void *row)
{
	event_log_row_release(row);
}

void event_log_rows_free(struct event_log_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		event_log_row_release(&rows[i]);
	free(rows);
}

/* ---- counts by state ---- */

int store_count_by_state(struct store *s, enum state_count_table t,
                         void (*fn)(void *arg, const char *state, int64_t n), void *arg,
                         struct weir_error *err)
{
	static const char *const sql[] = {
	    [STATE_COUNT_JOBS] = "SELECT state, count(*) FROM jobs GROUP BY state",
	    [STATE_COUNT_TASKS] = "SELECT t.state, count(*) FROM tasks t JOIN jobs j"
	                          " ON t.job_id = j.id AND t.attempt = j.attempt GROUP BY t.state",
	    [STATE_COUNT_DAG_RUNS] = "SELECT state, count(*) FROM dag_runs GROUP BY state",
	    [STATE_COUNT_TASK_INSTANCES] = "SELECT state, count(*) FROM task_instances GROUP BY "
	                                   "state",
	};
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;
	int r;

	if ((unsigned)t >= sizeof sql / sizeof sql[0])
		return weir_error_set(err, WEIR_E_INTERNAL, "store: no such count");
	if (!(st = sql_prepare(db, sql[t], preparing, err)))
		return -1;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(st, 0);
		fn(arg, name ? (const char *)name : "", sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return sql_error(db, "event log: counting by state", err);
	return 0;
}
