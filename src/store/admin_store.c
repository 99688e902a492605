/* admin_store.c: the pools table and a DAG's removal (admin_store.h). */
#include "store/admin_store.h"
#include "store/sql.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"

int admin_pool_seed(struct store *s, const struct pool_row *p, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;

	st = sql_prepare(db,
	                 "INSERT INTO pools (name, slots, description, queue, deleted, updated_at)"
	                 " VALUES (?1, ?2, NULL, ?3, 0, ?4) ON CONFLICT (name) DO UPDATE SET"
	                 " queue = excluded.queue",
	                 "preparing a statement", err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, p->name);
	sqlite3_bind_int(st, 2, p->slots);
	sql_bind_text_or_null(st, 3, p->queue);
	sqlite3_bind_int64(st, 4, clock_now_ms());
	return sql_run(db, st, "seeding a pool", NULL, err);
}

/* -1 when out of memory. */
static int read_pool(sqlite3_stmt *st, void *row)
{
	struct pool_row *p = row;
	p->name = sql_col_text(st, 0);
	p->slots = (int)sqlite3_column_int64(st, 1);
	if (sqlite3_column_type(st, 2) != SQLITE_NULL && !(p->description = sql_col_text(st, 2)))
		return -1;
	if (sqlite3_column_type(st, 3) != SQLITE_NULL && !(p->queue = sql_col_text(st, 3)))
		return -1;
	return p->name ? 0 : -1;
}

static void release_pool(void *row)
{
	pool_row_release(row);
}

/* How sql_collect reads pools. */
static const struct sql_rows pool_rows = {sizeof(struct pool_row), read_pool, release_pool};

int admin_pool_list(struct store *s, struct pool_row **rows, size_t *n, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st = sql_prepare(
	    db, "SELECT name, slots, description, queue FROM pools WHERE deleted = 0 ORDER BY name",
	    "preparing a statement", err);
	int rc;

	*rows = NULL;
	*n = 0;
	if (!st)
		return -1;
	rc = sql_collect(st, &pool_rows, NULL, "listing pools", rows, n, err);
	sqlite3_finalize(st);
	return rc;
}

int admin_pool_put(struct store *s, const char *old_name, const struct pool_row *p, bool replace,
                   struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;
	int changes = 0;

	if (!replace || strcmp(old_name, p->name)) {
		/* the new name must be free (a deleted row of that name gives way) */
		st = sql_prepare(db, "SELECT deleted FROM pools WHERE name = ?",
		                 "preparing a statement", err);
		if (!st)
			return -1;
		sql_bind_text(st, 1, p->name);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0) {
			sqlite3_finalize(st);
			return weir_error_set(err, WEIR_E_CONFLICT, "Pool: %s already exists",
			                      p->name);
		}
		sqlite3_finalize(st);
		st = sql_prepare(db, "DELETE FROM pools WHERE name = ? AND deleted = 1",
		                 "preparing a statement", err);
		if (!st)
			return -1;
		sql_bind_text(st, 1, p->name);
		if (sql_run(db, st, "writing a pool", NULL, err) < 0)
			return -1;
	}
	if (!replace) {
		st = sql_prepare(
		    db,
		    "INSERT INTO pools (name, slots, description, queue, deleted, updated_at)"
		    " VALUES (?1, ?2, ?3, NULL, 0, ?4)",
		    "preparing a statement", err);
		if (!st)
			return -1;
		sql_bind_text(st, 1, p->name);
	} else {
		st = sql_prepare(db,
		                 "UPDATE pools SET name = ?1, slots = ?2, description = ?3,"
		                 " updated_at = ?4 WHERE name = ?5 AND deleted = 0",
		                 "preparing a statement", err);
		if (!st)
			return -1;
		sql_bind_text(st, 1, p->name);
		sql_bind_text(st, 5, old_name);
	}
	sqlite3_bind_int(st, 2, p->slots);
	if (p->description)
		sql_bind_text(st, 3, p->description);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_int64(st, 4, clock_now_ms());
	if (sql_run(db, st, "writing a pool", &changes, err) < 0)
		return -1;
	if (changes == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "Pool with name:'%s' not found",
		                      old_name);
	return 0;
}

int admin_pool_delete(struct store *s, const char *name, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st = sql_prepare(
	    db, "UPDATE pools SET deleted = 1, updated_at = ?2 WHERE name = ?1 AND deleted = 0",
	    "preparing a statement", err);
	int changes = 0;

	if (!st)
		return -1;
	sql_bind_text(st, 1, name);
	sqlite3_bind_int64(st, 2, clock_now_ms());
	if (sql_run(db, st, "deleting a pool", &changes, err) < 0)
		return -1;
	if (changes == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "Pool with name:'%s' not found", name);
	return 0;
}

void pool_row_release(struct pool_row *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->description);
	free(p->queue);
	p->name = p->description = p->queue = NULL;
}

void pool_rows_free(struct pool_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		pool_row_release(&rows[i]);
	free(rows);
}

int admin_dag_delete(struct store *s, const char *dag_id, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st =
	    sql_prepare(db, "DELETE FROM dags WHERE dag_id = ?", "preparing a statement", err);
	int changes = 0;

	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	if (sql_run(db, st, "deleting a DAG", &changes, err) < 0)
		return -1;
	if (changes == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: no such DAG", dag_id);
	return 0;
}
