/* dataset_store.c: the datasets tables (dataset_store.h).  Statements are
 * prepared per call: every one of them runs on a dataset's event, a route
 * or the dataset pass, never once per task. */
#include "store/dataset_store.h"
#include "store/sql.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dataset_store {
	sqlite3 *db;
};

#define EVENT_COLS                                                                                 \
	"e.id, e.dataset_id, d.uri, e.extra, e.source_dag_id, e.source_task_id, e.source_run_id,"  \
	" e.source_map_index, e.timestamp"

struct dataset_store *dataset_store_create(struct store *s, struct weir_error *err)
{
	struct dataset_store *ds = calloc(1, sizeof *ds);

	if (!ds) {
		weir_error_oom(err);
		return NULL;
	}
	ds->db = store_db(s);
	return ds;
}

void dataset_store_destroy(struct dataset_store *ds)
{
	free(ds);
}

/* How a row of one kind is read, and what its list is called in an error
 * ("reading dataset events"). */
struct row_kind {
	struct sql_rows rows;
	const char *what;
};

/* sql_collect, then `st` finalized. */
static int collect(sqlite3_stmt *st, const struct row_kind *k, void *rows, size_t *n,
                   struct weir_error *err)
{
	int rc = sql_collect(st, &k->rows, NULL, k->what, rows, n, err);
	sqlite3_finalize(st);
	return rc;
}

/* The ORDER BY of `order_by` among `cols` (pairs: the API's name, the SQL
 * column), `def` when NULL.  -1 with err for a name not in the list. */
static int order_clause(const char *order_by, const char *const *cols, const char *def, char *out,
                        size_t size, struct weir_error *err)
{
	bool desc = order_by && order_by[0] == '-';
	const char *name = order_by ? order_by + desc : NULL;

	if (!name || !*name) {
		snprintf(out, size, " ORDER BY %s", def);
		return 0;
	}
	for (size_t i = 0; cols[i]; i += 2)
		if (!strcmp(cols[i], name)) {
			snprintf(out, size, " ORDER BY %s%s, %s", cols[i + 1], desc ? " DESC" : "",
			         def);
			return 0;
		}
	return weir_error_set(err, WEIR_E_INVALID,
	                      "order_by: \"%.60s\" is not a field this list can be ordered by",
	                      order_by);
}

/* A count then a page: `where` is shared, `select` names the columns. */
static int count_rows(struct dataset_store *ds, const char *from_where,
                      int (*bind)(sqlite3_stmt *, const void *), const void *q, int64_t *total,
                      struct weir_error *err)
{
	char sql[1024];
	sqlite3_stmt *st;

	snprintf(sql, sizeof sql, "SELECT COUNT(*) %s", from_where);
	st = sql_prepare(ds->db, sql, "preparing a statement", err);
	if (!st)
		return -1;
	bind(st, q);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sql_error(ds->db, "counting", err);
		sqlite3_finalize(st);
		return -1;
	}
	*total = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* ---- datasets ---- */

int dataset_store_ensure(struct dataset_store *ds, const char *uri, int64_t now, int64_t *id,
                         struct weir_error *err)
{
	sqlite3_stmt *st =
	    sql_prepare(ds->db,
	                "INSERT INTO datasets (uri, created_at, updated_at) VALUES (?1,?2,?2)"
	                " ON CONFLICT (uri) DO NOTHING",
	                "preparing a statement", err);
	struct dataset_row r = {0};

	if (!st)
		return -1;
	sql_bind_text(st, 1, uri);
	sqlite3_bind_int64(st, 2, now);
	if (sql_run(ds->db, st, "adding a dataset", NULL, err) < 0)
		return -1;
	if (!id)
		return 0;
	if (dataset_store_get(ds, uri, &r, err) < 0)
		return -1;
	*id = r.id;
	dataset_row_release(&r);
	return 0;
}

static int read_dataset(sqlite3_stmt *st, void *row)
{
	struct dataset_row *r = row;

	r->id = sqlite3_column_int64(st, 0);
	r->uri = sql_col_text(st, 1);
	r->extra = sql_col_text(st, 2);
	r->created_at = sql_col_i64(st, 3);
	r->updated_at = sql_col_i64(st, 4);
	return r->uri && r->extra ? 0 : -1;
}

int dataset_store_get(struct dataset_store *ds, const char *uri, struct dataset_row *out,
                      struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(
	    ds->db, "SELECT id, uri, extra, created_at, updated_at FROM datasets WHERE uri = ?",
	    "preparing a statement", err);
	int rc;

	memset(out, 0, sizeof *out);
	if (!st)
		return -1;
	sql_bind_text(st, 1, uri);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		sqlite3_finalize(st);
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no dataset %.200s", uri);
	}
	if (rc != SQLITE_ROW) {
		sql_error(ds->db, "reading a dataset", err);
		sqlite3_finalize(st);
		return -1;
	}
	rc = read_dataset(st, out);
	sqlite3_finalize(st);
	if (rc < 0) {
		dataset_row_release(out);
		return weir_error_oom(err);
	}
	return 0;
}

static void release_dataset_row(void *row)
{
	dataset_row_release(row);
}

static const struct row_kind dataset_kind = {
    {sizeof(struct dataset_row), read_dataset, release_dataset_row}, "listing datasets"};

#define DATASET_WHERE                                                                              \
	"FROM datasets WHERE (?1 IS NULL OR instr(uri, ?1) > 0)"                                   \
	" AND (?2 IS NULL OR uri IN (SELECT value FROM json_each(?2)))"

static int bind_dataset_query(sqlite3_stmt *st, const void *arg)
{
	const struct dataset_query *q = arg;

	sql_bind_text_or_null(st, 1, q->uri_pattern);
	sql_bind_text_or_null(st, 2, q->uris_json);
	return 0;
}

int dataset_store_list(struct dataset_store *ds, const struct dataset_query *q,
                       struct dataset_row **rows, size_t *n, int64_t *total, struct weir_error *err)
{
	static const char *const cols[] = {
	    "id", "id", "uri", "uri", "created_at", "created_at", "updated_at", "updated_at", NULL};
	char order[128], sql[1024];
	sqlite3_stmt *st;

	*rows = NULL;
	*n = 0;
	if (order_clause(q->order_by, cols, "id", order, sizeof order, err) < 0 ||
	    count_rows(ds, DATASET_WHERE, bind_dataset_query, q, total, err) < 0)
		return -1;
	snprintf(sql, sizeof sql,
	         "SELECT id, uri, extra, created_at, updated_at " DATASET_WHERE
	         "%s LIMIT ?3 OFFSET ?4",
	         order);
	st = sql_prepare(ds->db, sql, "preparing a statement", err);
	if (!st)
		return -1;
	bind_dataset_query(st, q);
	sqlite3_bind_int(st, 3, q->limit);
	sqlite3_bind_int(st, 4, q->offset);
	return collect(st, &dataset_kind, rows, n, err);
}

void dataset_row_release(struct dataset_row *r)
{
	free(r->uri);
	free(r->extra);
	memset(r, 0, sizeof *r);
}

void dataset_rows_free(struct dataset_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dataset_row_release(&rows[i]);
	free(rows);
}

/* ---- events ---- */

int dataset_store_event_add(struct dataset_store *ds, const struct dataset_event_row *ev,
                            int64_t *id, struct weir_error *err)
{
	sqlite3_stmt *st =
	    sql_prepare(ds->db,
	                "INSERT INTO dataset_events (dataset_id, extra, source_dag_id,"
	                " source_task_id, source_run_id, source_map_index, timestamp)"
	                " VALUES (?1,?2,?3,?4,?5,?6,?7)",
	                "preparing a statement", err);

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, ev->dataset_id);
	sql_bind_text(st, 2, ev->extra && *ev->extra ? ev->extra : "{}");
	sql_bind_text_or_null(st, 3, ev->has_source ? ev->source_dag_id : NULL);
	sql_bind_text_or_null(st, 4, ev->has_source ? ev->source_task_id : NULL);
	sql_bind_text_or_null(st, 5, ev->has_source ? ev->source_run_id : NULL);
	if (ev->has_source)
		sqlite3_bind_int(st, 6, ev->source_map_index);
	else
		sqlite3_bind_null(st, 6);
	sqlite3_bind_int64(st, 7, ev->timestamp);
	if (sql_run(ds->db, st, "recording a dataset event", NULL, err) < 0)
		return -1;
	if (id)
		*id = sqlite3_last_insert_rowid(ds->db);
	return 0;
}

static int read_event(sqlite3_stmt *st, void *row)
{
	struct dataset_event_row *e = row;

	e->id = sqlite3_column_int64(st, 0);
	e->dataset_id = sqlite3_column_int64(st, 1);
	e->uri = sql_col_text(st, 2);
	e->extra = sql_col_text(st, 3);
	e->has_source = sqlite3_column_type(st, 4) != SQLITE_NULL;
	e->source_dag_id = sql_col_text(st, 4);
	e->source_task_id = sql_col_text(st, 5);
	e->source_run_id = sql_col_text(st, 6);
	e->source_map_index =
	    sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 7);
	e->timestamp = sql_col_i64(st, 8);
	return e->uri && e->extra && e->source_dag_id && e->source_task_id && e->source_run_id ? 0
	                                                                                       : -1;
}

/* Frees what one dataset_event_row holds (also one zeroed or already released). */
static void release_dataset_event_row(void *row)
{
	struct dataset_event_row *r = row;

	free(r->uri);
	free(r->extra);
	free(r->source_dag_id);
	free(r->source_task_id);
	free(r->source_run_id);
	memset(r, 0, sizeof *r);
}

static const struct row_kind event_kind = {
    {sizeof(struct dataset_event_row), read_event, release_dataset_event_row},
    "reading dataset events"};

#define EVENT_WHERE                                                                                \
	"FROM dataset_events e JOIN datasets d ON d.id = e.dataset_id"                             \
	" WHERE (?1 IS NULL OR e.dataset_id = ?1) AND (?2 IS NULL OR e.source_dag_id = ?2)"        \
	" AND (?3 IS NULL OR e.source_task_id = ?3) AND (?4 IS NULL OR e.source_run_id = ?4)"      \
	" AND (?5 IS NULL OR e.source_map_index = ?5)"                                             \
	" AND (?6 IS NULL OR e.id IN (SELECT event_id FROM dag_run_dataset_events"                 \
	"  WHERE run_row_id = ?6))"                                                                \
	" AND (?9 IS NULL OR e.id IN (SELECT event_id FROM dataset_alias_events WHERE alias = "    \
	"?9))"

static int bind_event_query(sqlite3_stmt *st, const void *arg)
{
	const struct dataset_event_query *q = arg;

	sql_bind_pos_or_null(st, 1, q->dataset_id);
	sql_bind_text_or_null(st, 2, q->source_dag_id);
	sql_bind_text_or_null(st, 3, q->source_task_id);
	sql_bind_text_or_null(st, 4, q->source_run_id);
	if (q->has_map_index)
		sqlite3_bind_int(st, 5, q->source_map_index);
	else
		sqlite3_bind_null(st, 5);
	sql_bind_pos_or_null(st, 6, q->run_row_id);
	sql_bind_text_or_null(st, 9, q->alias);
	return 0;
}

int dataset_store_events(struct dataset_store *ds, const struct dataset_event_query *q,
                         struct dataset_event_row **rows, size_t *n, int64_t *total,
                         struct weir_error *err)
{
	static const char *const cols[] = {"id",
	                                   "e.id",
	                                   "timestamp",
	                                   "e.timestamp",
	                                   "dataset_id",
	                                   "e.dataset_id",
	                                   "source_dag_id",
	                                   "e.source_dag_id",
	                                   "source_task_id",
	                                   "e.source_task_id",
	                                   "source_run_id",
	                                   "e.source_run_id",
	                                   "source_map_index",
	                                   "e.source_map_index",
	                                   NULL};
	char order[128], sql[1536];
	sqlite3_stmt *st;

	*rows = NULL;
	*n = 0;
	if (order_clause(q->order_by, cols, "e.timestamp, e.id", order, sizeof order, err) < 0 ||
	    count_rows(ds, EVENT_WHERE, bind_event_query, q, total, err) < 0)
		return -1;
	snprintf(sql, sizeof sql, "SELECT " EVENT_COLS " " EVENT_WHERE "%s LIMIT ?7 OFFSET ?8",
	         order);
	st = sql_prepare(ds->db, sql, "preparing a statement", err);
	if (!st)
		return -1;
	bind_event_query(st, q);
	sqlite3_bind_int(st, 7, q->limit);
	sqlite3_bind_int(st, 8, q->offset);
	return collect(st, &event_kind, rows, n, err);
}

int dataset_store_events_pending(struct dataset_store *ds, const char *dag_id,
                                 const char *uris_json, const char *aliases_json,
                                 struct dataset_event_row **rows, size_t *n, struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(
	    ds->db,
	    "SELECT " EVENT_COLS " FROM dataset_events e JOIN datasets d ON d.id = e.dataset_id"
	    " WHERE (d.uri IN (SELECT value FROM json_each(?2))"
	    "  OR e.id >= (SELECT MIN(a.event_id) FROM dataset_alias_events a"
	    "   JOIN dataset_events f ON f.id = a.event_id WHERE f.dataset_id = e.dataset_id"
	    "   AND a.alias IN (SELECT value FROM json_each(?3))))"
	    " AND e.id > COALESCE((SELECT MAX(x.event_id) FROM dag_run_dataset_events x"
	    "  JOIN dag_runs r ON r.id = x.run_row_id WHERE r.dag_id = ?1), 0)"
	    " ORDER BY e.id",
	    "preparing a statement", err);

	*rows = NULL;
	*n = 0;
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	sql_bind_text(st, 2, uris_json);
	sql_bind_text(st, 3, aliases_json ? aliases_json : "[]");
	return collect(st, &event_kind, rows, n, err);
}

/* ---- aliases ---- */

int dataset_store_alias_event_add(struct dataset_store *ds, const char *alias, int64_t event_id,
                                  struct weir_error *err)
{
	sqlite3_stmt *st =
	    sql_prepare(ds->db,
	                "INSERT OR IGNORE INTO dataset_alias_events (alias, event_id)"
	                " VALUES (?1,?2)",
	                "preparing a statement", err);

	if (!st)
		return -1;
	sql_bind_text(st, 1, alias);
	sqlite3_bind_int64(st, 2, event_id);
	return sql_run(ds->db, st, "linking a dataset event to its alias", NULL, err);
}

static int read_alias_link(sqlite3_stmt *st, void *row)
{
	struct dataset_alias_link_row *r = row;

	r->alias = sql_col_text(st, 0);
	r->uri = sql_col_text(st, 1);
	return r->alias && r->uri ? 0 : -1;
}

/* Frees what one dataset_alias_link_row holds (also one zeroed or already released). */
static void release_alias_link(void *row)
{
	struct dataset_alias_link_row *r = row;

	free(r->alias);
	free(r->uri);
	memset(r, 0, sizeof *r);
}

static const struct row_kind alias_link_kind = {
    {sizeof(struct dataset_alias_link_row), read_alias_link, release_alias_link},
    "reading the dataset aliases"};

int dataset_store_alias_links(struct dataset_store *ds, const char *uri,
                              struct dataset_alias_link_row **rows, size_t *n,
                              struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(
	    ds->db,
	    "SELECT DISTINCT a.alias, d.uri FROM dataset_alias_events a"
	    " JOIN dataset_events e ON e.id = a.event_id JOIN datasets d ON d.id = e.dataset_id"
	    " WHERE ?1 IS NULL OR d.uri = ?1 ORDER BY a.alias, d.uri",
	    "preparing a statement", err);

	*rows = NULL;
	*n = 0;
	if (!st)
		return -1;
	sql_bind_text_or_null(st, 1, uri);
	return collect(st, &alias_link_kind, rows, n, err);
}

void dataset_alias_link_rows_free(struct dataset_alias_link_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		release_alias_link(&rows[i]);
	free(rows);
}

int dataset_store_consume(struct dataset_store *ds, int64_t run_row_id, int64_t event_id,
                          struct weir_error *err)
{
	sqlite3_stmt *st =
	    sql_prepare(ds->db,
	                "INSERT OR IGNORE INTO dag_run_dataset_events (run_row_id, event_id)"
	                " VALUES (?1,?2)",
	                "preparing a statement", err);

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, run_row_id);
	sqlite3_bind_int64(st, 2, event_id);
	return sql_run(ds->db, st, "linking a run to a dataset event", NULL, err);
}

void dataset_event_rows_free(struct dataset_event_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		release_dataset_event_row(&rows[i]);
	free(rows);
}

static int read_run_ref(sqlite3_stmt *st, void *row)
{
	struct dataset_run_ref *r = row;

	r->dag_id = sql_col_text(st, 0);
	r->run_id = sql_col_text(st, 1);
	if (dag_run_state_from_name((const char *)sqlite3_column_text(st, 2), &r->state) < 0)
		r->state = DAG_RUN_QUEUED;
	r->logical_date = sql_col_i64(st, 3);
	r->start_date = sql_col_i64(st, 4);
	r->end_date = sql_col_i64(st, 5);
	r->data_interval_start = sql_col_i64(st, 6);
	r->data_interval_end = sql_col_i64(st, 7);
	return r->dag_id && r->run_id ? 0 : -1;
}

/* Frees what one dataset_run_ref holds (also one zeroed or already released). */
static void release_dataset_run_ref(void *row)
{
	struct dataset_run_ref *r = row;

	free(r->dag_id);
	free(r->run_id);
	memset(r, 0, sizeof *r);
}

static const struct row_kind run_ref_kind = {
    {sizeof(struct dataset_run_ref), read_run_ref, release_dataset_run_ref},
    "reading an event's runs"};

int dataset_store_event_runs(struct dataset_store *ds, int64_t event_id,
                             struct dataset_run_ref **rows, size_t *n, struct weir_error *err)
{
	sqlite3_stmt *st =
	    sql_prepare(ds->db,
	                "SELECT r.dag_id, r.run_id, r.state, r.logical_date, r.start_date,"
	                " r.end_date, r.data_interval_start, r.data_interval_end"
	                " FROM dag_run_dataset_events x JOIN dag_runs r ON r.id = x.run_row_id"
	                " WHERE x.event_id = ? ORDER BY r.id",
	                "preparing a statement", err);

	*rows = NULL;
	*n = 0;
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, event_id);
	return collect(st, &run_ref_kind, rows, n, err);
}

void dataset_run_refs_free(struct dataset_run_ref *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		release_dataset_run_ref(&rows[i]);
	free(rows);
}

/* ---- the queue ---- */

int dataset_store_queue_add(struct dataset_store *ds, int64_t dataset_id, const char *dag_id,
                            int64_t now, struct weir_error *err)
{
	sqlite3_stmt *st =
	    sql_prepare(ds->db,
	                "INSERT INTO dataset_queue (dataset_id, target_dag_id, created_at)"
	                " VALUES (?1,?2,?3) ON CONFLICT DO NOTHING",
	                "preparing a statement", err);

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, dataset_id);
	sql_bind_text(st, 2, dag_id);
	sqlite3_bind_int64(st, 3, now);
	return sql_run(ds->db, st, "queueing a dataset event", NULL, err);
}

#define QUEUE_WHERE                                                                                \
	" WHERE (?1 IS NULL OR q.target_dag_id = ?1) AND (?2 IS NULL OR d.uri = ?2)"               \
	" AND (?3 IS NULL OR q.created_at < ?3)"

static void bind_queue(sqlite3_stmt *st, const char *dag_id, const char *uri, int64_t before)
{
	sql_bind_text_or_null(st, 1, dag_id);
	sql_bind_text_or_null(st, 2, uri);
	sql_bind_pos_or_null(st, 3, before);
}

static int read_queue_row(sqlite3_stmt *st, void *row)
{
	struct dataset_queue_row *r = row;

	r->uri = sql_col_text(st, 0);
	r->dag_id = sql_col_text(st, 1);
	r->created_at = sql_col_i64(st, 2);
	return r->uri && r->dag_id ? 0 : -1;
}

/* Frees what one dataset_queue_row holds (also one zeroed or already released). */
static void release_dataset_queue_row(void *row)
{
	struct dataset_queue_row *r = row;

	free(r->uri);
	free(r->dag_id);
	memset(r, 0, sizeof *r);
}

static const struct row_kind queue_kind = {
    {sizeof(struct dataset_queue_row), read_queue_row, release_dataset_queue_row},
    "reading the dataset queue"};

int dataset_store_queue_list(struct dataset_store *ds, const char *dag_id, const char *uri,
                             int64_t before, struct dataset_queue_row **rows, size_t *n,
                             struct weir_error *err)
{
	sqlite3_stmt *st =
	    sql_prepare(ds->db,
	                "SELECT d.uri, q.target_dag_id, q.created_at FROM dataset_queue q"
	                " JOIN datasets d ON d.id = q.dataset_id" QUEUE_WHERE
	                " ORDER BY q.target_dag_id, d.uri",
	                "preparing a statement", err);

	*rows = NULL;
	*n = 0;
	if (!st)
		return -1;
	bind_queue(st, dag_id, uri, before);
	return collect(st, &queue_kind, rows, n, err);
}

int dataset_store_queue_delete(struct dataset_store *ds, const char *dag_id, const char *uri,
                               int64_t before, size_t *n, struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(
	    ds->db,
	    "DELETE FROM dataset_queue WHERE rowid IN (SELECT q.rowid"
	    " FROM dataset_queue q JOIN datasets d ON d.id = q.dataset_id" QUEUE_WHERE ")",
	    "preparing a statement", err);
	int changes;

	if (!st)
		return -1;
	bind_queue(st, dag_id, uri, before);
	if (sql_run(ds->db, st, "deleting queued dataset events", &changes, err) < 0)
		return -1;
	if (n)
		*n = (size_t)changes;
	return 0;
}

void dataset_queue_rows_free(struct dataset_queue_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		release_dataset_queue_row(&rows[i]);
	free(rows);
}

/* ---- waits ---- */

int dataset_store_wait_add(struct dataset_store *ds, const struct dag_trigger_wait_row *w,
                           int64_t now, struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(
	    ds->db,
	    "INSERT OR REPLACE INTO dag_run_triggers (dag_id, run_id, task_id, map_index,"
	    " try_number, target_dag_id, target_run_id, created_at) VALUES "
	    "(?1,?2,?3,?4,?5,?6,?7,?8)",
	    "preparing a statement", err);

	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, w->dag_id, w->run_id, w->task_id, w->map_index);
	sqlite3_bind_int(st, 5, w->try_number);
	sql_bind_text(st, 6, w->target_dag_id);
	sql_bind_text(st, 7, w->target_run_id);
	sqlite3_bind_int64(st, 8, now);
	return sql_run(ds->db, st, "recording a trigger_dag wait", NULL, err);
}

static int read_wait(sqlite3_stmt *st, void *row)
{
	struct dag_trigger_wait_row *w = row;

	w->dag_id = sql_col_text(st, 0);
	w->run_id = sql_col_text(st, 1);
	w->task_id = sql_col_text(st, 2);
	w->map_index = sqlite3_column_int(st, 3);
	w->try_number = sqlite3_column_int(st, 4);
	w->target_dag_id = sql_col_text(st, 5);
	w->target_run_id = sql_col_text(st, 6);
	if (dag_run_state_from_name((const char *)sqlite3_column_text(st, 7), &w->target_state) < 0)
		w->target_state = DAG_RUN_FAILED;
	return w->dag_id && w->run_id && w->task_id && w->target_dag_id && w->target_run_id ? 0
	                                                                                    : -1;
}

/* Frees what one dag_trigger_wait_row holds (also one zeroed or already released). */
static void release_dag_trigger_wait_row(void *row)
{
	struct dag_trigger_wait_row *r = row;

	free(r->dag_id);
	free(r->run_id);
	free(r->task_id);
	free(r->target_dag_id);
	free(r->target_run_id);
	memset(r, 0, sizeof *r);
}

static const struct row_kind wait_kind = {
    {sizeof(struct dag_trigger_wait_row), read_wait, release_dag_trigger_wait_row},
    "reading trigger_dag waits"};

int dataset_store_waits_ended(struct dataset_store *ds, struct dag_trigger_wait_row **rows,
                              size_t *n, struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(
	    ds->db,
	    "SELECT t.dag_id, t.run_id, t.task_id, t.map_index, t.try_number, t.target_dag_id,"
	    " t.target_run_id, COALESCE(r.state, 'failed') FROM dag_run_triggers t"
	    " LEFT JOIN dag_runs r ON r.dag_id = t.target_dag_id AND r.run_id = t.target_run_id"
	    " WHERE r.state IS NULL OR r.state IN ('success', 'failed')",
	    "preparing a statement", err);

	*rows = NULL;
	*n = 0;
	if (!st)
		return -1;
	return collect(st, &wait_kind, rows, n, err);
}

int dataset_store_wait_delete(struct dataset_store *ds, const struct dag_trigger_wait_row *w,
                              struct weir_error *err)
{
	sqlite3_stmt *st =
	    sql_prepare(ds->db,
	                "DELETE FROM dag_run_triggers WHERE dag_id = ?1 AND run_id = ?2"
	                " AND task_id = ?3 AND map_index = ?4",
	                "preparing a statement", err);

	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, w->dag_id, w->run_id, w->task_id, w->map_index);
	return sql_run(ds->db, st, "deleting a trigger_dag wait", NULL, err);
}

void dag_trigger_wait_rows_free(struct dag_trigger_wait_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		release_dag_trigger_wait_row(&rows[i]);
	free(rows);
}
