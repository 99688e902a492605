/* dag_store_tries.c: a task instance's tries (dag_store.h): one row a
 * try, written at its start and its end, listed for the API's tries and
 * logs.  The statements are dag_store.c's (dag_store_internal.h).
 */
#include "store/dag_store_internal.h"
#include "store/sql.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dag_try_row_release(struct dag_try_row *row)
{
	if (!row)
		return;
	free(row->dag_id);
	free(row->run_id);
	free(row->task_id);
	free(row->reason);
	row->dag_id = row->run_id = row->task_id = row->reason = NULL;
}

void dag_try_rows_free(struct dag_try_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		dag_try_row_release(&rows[i]);
	free(rows);
}

static int read_try(sqlite3_stmt *st, void *p)
{
	struct dag_try_row *r = p;
	memset(r, 0, sizeof(*r));
	r->dag_id = sql_col_text(st, 0);
	r->run_id = sql_col_text(st, 1);
	r->task_id = sql_col_text(st, 2);
	r->map_index = sqlite3_column_int(st, 3);
	r->try_number = sqlite3_column_int(st, 4);
	r->job_id = sql_col_i64(st, 5);
	bool known = ds_col_ti_state(st, 6, &r->state);
	r->start_date = sql_col_i64(st, 7);
	r->end_date = sql_col_i64(st, 8);
	r->reason = sql_col_text(st, 9);
	if (!r->dag_id || !r->run_id || !r->task_id || !r->reason || !known) {
		dag_try_row_release(r);
		return known ? -1 : -2;
	}
	return 0;
}

static void release_try(void *p)
{
	dag_try_row_release(p);
}

int dag_store_try_put(struct dag_store *ds, const struct dag_try_row *row, struct weir_error *err)
{
	if (ds_check_ti_state(ds, row->state, err) < 0)
		return -1;
	if (row->try_number < 1)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "store %s: try number %d; expected 1 or more", ds_db_path(ds),
		                      row->try_number);
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TRY_PUT, err);
	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, row->dag_id, row->run_id, row->task_id, row->map_index);
	sqlite3_bind_int(st, 5, row->try_number);
	sql_bind_pos_or_null(st, 6, row->job_id);
	sql_bind_text(st, 7, dag_ti_state_name(row->state));
	sql_bind_pos_or_null(st, 8, row->start_date);
	sql_bind_pos_or_null(st, 9, row->end_date);
	sql_bind_text(st, 10, row->reason);
	int code = ds_step(ds, st);
	if (!code)
		return 0;
	char missing[500], ti[400];
	ds_ti_name(ti, sizeof(ti), "no", row->dag_id, row->run_id, row->task_id, row->map_index);
	if (row->job_id > 0)
		snprintf(missing, sizeof(missing), "%s, or no job %" PRId64, ti, row->job_id);
	else
		snprintf(missing, sizeof(missing), "%s", ti);
	return ds_write_failed(ds, code, "writing a try", NULL, missing, err);
}

int dag_store_try_end(struct dag_store *ds, const struct dag_try_row *key, enum dag_ti_state state,
                      const char *reason, int64_t end_date, bool *found, struct weir_error *err)
{
	*found = false;
	if (ds_check_ti_state(ds, state, err) < 0)
		return -1;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TRY_END, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_ti_state_name(state));
	if (reason)
		sql_bind_text(st, 2, reason);
	else
		sqlite3_bind_null(st, 2);
	sql_bind_pos_or_null(st, 3, end_date);
	sql_bind_ti_key(st, 4, key->dag_id, key->run_id, key->task_id, key->map_index);
	sqlite3_bind_int(st, 8, key->try_number);
	if (ds_step_write(ds, st, "ending a try", NULL, NULL, err) < 0)
		return -1;
	*found = sqlite3_changes(ds->db) > 0;
	return 0;
}

int dag_store_try_get(struct dag_store *ds, const char *dag_id, const char *run_id,
                      const char *task_id, int map_index, int try_number, struct dag_try_row *out,
                      struct weir_error *err)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TRY_GET, err);
	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, dag_id, run_id, task_id, map_index);
	sqlite3_bind_int(st, 5, try_number);
	char missing[500], ti[400];
	ds_ti_name(ti, sizeof(ti), "of", dag_id, run_id, task_id, map_index);
	snprintf(missing, sizeof(missing), "no try %d %s", try_number, ti);
	return ds_collect_one(ds, st, "reading a try", sizeof(*out), read_try, release_try, out,
	                      missing, err);
}

int dag_store_tries_of_ti(struct dag_store *ds, const char *dag_id, const char *run_id,
                          const char *task_id, int map_index, struct dag_try_row **rows, size_t *n,
                          struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TRIES_OF_TI, err);
	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, dag_id, run_id, task_id, map_index);
	return ds_collect(ds, st, "listing tries", sizeof(**rows), read_try, release_try, rows, n,
	                  err);
}
