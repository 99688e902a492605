/* sensor_store.c: the table sensor_pokes and an external_task sensor's
 * read (sensor_store.h). */
#include "store/sensor_store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"

int sensor_store_put(struct store *s, const struct sensor_poke_row *r, struct weir_error *err)
{
	static const char sql[] =
	    "INSERT OR REPLACE INTO sensor_pokes (dag_id, run_id, task_id, map_index, try_number,"
	    " first_poke_at, last_poke_at, next_poke_at, pokes, last_result)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	sqlite3_stmt *st = sql_prepare(store_db(s), sql, "recording a poke", err);

	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, r->dag_id, r->run_id, r->task_id, r->map_index);
	sqlite3_bind_int(st, 5, r->try_number);
	sqlite3_bind_int64(st, 6, r->first_poke_at);
	sqlite3_bind_int64(st, 7, r->last_poke_at);
	sql_bind_pos_or_null(st, 8, r->next_poke_at);
	sqlite3_bind_int(st, 9, r->pokes);
	sql_bind_text(st, 10, r->last_result);
	return sql_run(store_db(s), st, "recording a poke", NULL, err);
}

#define COLS                                                                                       \
	"p.dag_id, p.run_id, p.task_id, p.map_index, p.try_number, p.first_poke_at,"               \
	" p.last_poke_at, p.next_poke_at, p.pokes, p.last_result"

static int read_row(sqlite3_stmt *st, void *row)
{
	struct sensor_poke_row *r = row;
	const unsigned char *t = sqlite3_column_text(st, 9);

	memset(r, 0, sizeof *r);
	r->dag_id = sql_col_text(st, 0);
	r->run_id = sql_col_text(st, 1);
	r->task_id = sql_col_text(st, 2);
	r->map_index = sqlite3_column_int(st, 3);
	r->try_number = sqlite3_column_int(st, 4);
	r->first_poke_at = sql_col_i64(st, 5);
	r->last_poke_at = sql_col_i64(st, 6);
	r->next_poke_at = sql_col_i64(st, 7);
	r->pokes = sqlite3_column_int(st, 8);
	snprintf(r->last_result, sizeof r->last_result, "%s", t ? (const char *)t : "");
	return r->dag_id && r->run_id && r->task_id ? 0 : -1;
}

int sensor_store_get(struct store *s, const char *dag_id, const char *run_id, const char *task_id,
                     int map_index, struct sensor_poke_row *out, struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(store_db(s),
	                               "SELECT " COLS " FROM sensor_pokes p WHERE p.dag_id = ? AND"
	                               " p.run_id = ? AND p.task_id = ? AND p.map_index = ?",
	                               "reading a sensor's pokes", err);
	int rc, ret;

	memset(out, 0, sizeof *out);
	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, dag_id, run_id, task_id, map_index);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		ret = read_row(st, out) < 0 ? weir_error_set(err, WEIR_E_INTERNAL, "out of memory")
		                            : 0;
	else if (rc == SQLITE_DONE)
		ret = weir_error_set(err, WEIR_E_NOT_FOUND, "task %s has not poked", task_id);
	else
		ret = sql_error(store_db(s), "reading a sensor's pokes", err);
	sqlite3_finalize(st);
	return ret;
}

static void release_row(void *row)
{
	sensor_poke_row_release(row);
}

/* How sql_collect reads sensors' pokes. */
static const struct sql_rows poke_rows = {sizeof(struct sensor_poke_row), read_row, release_row};

int sensor_store_waiting(struct store *s, struct sensor_poke_row **rows, size_t *n,
                         struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(store_db(s),
	                               "SELECT " COLS " FROM sensor_pokes p JOIN task_instances t"
	                               " USING (dag_id, run_id, task_id, map_index)"
	                               " WHERE t.state = 'up_for_reschedule'"
	                               " AND t.try_number = p.try_number",
	                               "reading the waiting sensors", err);
	int rc;

	*rows = NULL;
	*n = 0;
	if (!st)
		return -1;
	rc = sql_collect(st, &poke_rows, NULL, "reading the waiting sensors", rows, n, err);
	sqlite3_finalize(st);
	return rc;
}

/* The first column of the first row of `sql` (dag_id, logical_ms and, when
 * given, task_id bound in that order) into out (size bytes); "" when there
 * is no row. */
static int first_text(struct store *s, const char *sql, const char *what, const char *dag_id,
                      int64_t logical_ms, const char *task_id, char *out, size_t size,
                      struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(store_db(s), sql, what, err);
	int rc;

	out[0] = '\0';
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	sqlite3_bind_int64(st, 2, logical_ms);
	if (task_id)
		sql_bind_text(st, 3, task_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		snprintf(out, size, "%s", t ? (const char *)t : "");
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sql_error(store_db(s), what, err);
}

int sensor_store_external_state(struct store *s, const char *dag_id, const char *task_id,
                                int64_t logical_ms, char *state, size_t size,
                                struct weir_error *err)
{
	if (task_id)
		return first_text(s,
		                  "SELECT t.state FROM dag_runs r JOIN task_instances t"
		                  " ON t.dag_id = r.dag_id AND t.run_id = r.run_id"
		                  " WHERE r.dag_id = ? AND r.logical_date = ? AND t.task_id = ?"
		                  " ORDER BY t.map_index LIMIT 1",
		                  "reading another DAG's task", dag_id, logical_ms, task_id, state,
		                  size, err);
	return first_text(s, "SELECT state FROM dag_runs WHERE dag_id = ? AND logical_date = ?",
	                  "reading another DAG's run", dag_id, logical_ms, NULL, state, size, err);
}

void sensor_poke_row_release(struct sensor_poke_row *r)
{
	if (!r)
		return;
	free(r->dag_id);
	free(r->run_id);
	free(r->task_id);
	memset(r, 0, sizeof *r);
}

void sensor_poke_rows_free(struct sensor_poke_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sensor_poke_row_release(&rows[i]);
	free(rows);
}

static int read_ext_row(sqlite3_stmt *st, void *row)
{
	struct sensor_ext_row *r = row;

	r->task_id = sql_col_text(st, 0);
	r->state = sql_col_text(st, 1);
	return r->task_id && r->state ? 0 : -1;
}

static void release_ext_row(void *row)
{
	struct sensor_ext_row *r = row;

	free(r->task_id);
	free(r->state);
}

/* How sql_collect reads another run's task instances. */
static const struct sql_rows ext_rows = {sizeof(struct sensor_ext_row), read_ext_row,
                                         release_ext_row};

int sensor_store_external_tis(struct store *s, const char *dag_id, int64_t logical_ms,
                              bool *run_found, struct sensor_ext_row **rows, size_t *n,
                              struct weir_error *err)
{
	char state[STORE_STATE_MAX];
	sqlite3_stmt *st;
	int rc;

	*rows = NULL;
	*n = 0;
	*run_found = false;
	if (sensor_store_external_state(s, dag_id, NULL, logical_ms, state, sizeof state, err) < 0)
		return -1;
	if (!state[0])
		return 0;
	*run_found = true;
	st = sql_prepare(
	    store_db(s),
	    "SELECT t.task_id, t.state FROM dag_runs r JOIN task_instances t"
	    " ON t.dag_id = r.dag_id AND t.run_id = r.run_id"
	    " WHERE r.dag_id = ? AND r.logical_date = ? ORDER BY t.task_id, t.map_index",
	    "reading another DAG's tasks", err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	sqlite3_bind_int64(st, 2, logical_ms);
	rc = sql_collect(st, &ext_rows, NULL, "reading another DAG's tasks", rows, n, err);
	sqlite3_finalize(st);
	return rc;
}

void sensor_ext_rows_free(struct sensor_ext_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		release_ext_row(&rows[i]);
	free(rows);
}

int sensor_store_external_run(struct store *s, const char *dag_id, int64_t logical_ms, char *run_id,
                              size_t size, struct weir_error *err)
{
	return first_text(s, "SELECT run_id FROM dag_runs WHERE dag_id = ? AND logical_date = ?",
	                  "reading another DAG's run", dag_id, logical_ms, NULL, run_id, size, err);
}
