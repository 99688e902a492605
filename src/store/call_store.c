/* call_store.c: the calls table (call_store.h): a batch's records upserted
 * with one prepared statement, the rule of moves in its WHERE; a job's
 * calls read back in order, and counted by state.
 */
#include "store/call_store.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"
#include "store/store_internal.h"

/* an end never changes (call_state_may_move()): the update applies only
 * to a running row */
#define CALL_UPSERT                                                                                \
	"INSERT INTO calls (job_id, call_id, name, state, tries, started_at, ended_at, error)"     \
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (job_id, call_id) DO UPDATE SET"     \
	" name = excluded.name, state = excluded.state, tries = excluded.tries,"                   \
	" started_at = excluded.started_at, ended_at = excluded.ended_at, error = excluded.error"  \
	" WHERE calls.state = 'running'"

_Static_assert(CALL_RUNNING == 0, "the upsert's WHERE names the one state that moves");

int store_calls_record(struct store *s, int64_t job_id, const struct call_row *rows, size_t n,
                       size_t *changed, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;
	size_t done = 0;

	if (changed)
		*changed = 0;
	if (!n)
		return 0;
	if (store_write_starts(s, err) < 0)
		return -1;
	if (!(st = sql_prepare(db, CALL_UPSERT, "calls: preparing the upsert", err)))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct call_row *r = &rows[i];
		int rc;

		sqlite3_bind_int64(st, 1, job_id);
		sqlite3_bind_int64(st, 2, r->call_id);
		sql_bind_text(st, 3, r->name);
		sql_bind_text(st, 4, call_state_name(r->state));
		sqlite3_bind_int(st, 5, r->tries);
		sql_bind_pos_or_null(st, 6, r->started_ms);
		sql_bind_pos_or_null(st, 7, r->ended_ms);
		sql_bind_text_or_null(st, 8, r->error);
		rc = sqlite3_step(st);
		if (rc != SQLITE_DONE) {
			if (sqlite3_extended_errcode(db) == SQLITE_CONSTRAINT_FOREIGNKEY)
				weir_error_set(err, WEIR_E_NOT_FOUND,
				               "job %" PRId64 ": no such job", job_id);
			else
				store_db_error(s, err, "calls: recording a call");
			sqlite3_finalize(st);
			return -1;
		}
		done += (size_t)sqlite3_changes(db);
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
	sqlite3_finalize(st);
	if (changed)
		*changed = done;
	return 0;
}

void call_row_release(struct call_row *row)
{
	if (!row)
		return;
	free(row->name);
	free(row->error);
	row->name = row->error = NULL;
}

void call_rows_free(struct call_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		call_row_release(&rows[i]);
	free(rows);
}

/* -1 when out of memory, -2 for a state this weir does not know. */
static int read_call(sqlite3_stmt *st, void *row)
{
	struct call_row *c = row;
	const char *state = (const char *)sqlite3_column_text(st, 3);

	c->job_id = sqlite3_column_int64(st, 0);
	c->call_id = sqlite3_column_int64(st, 1);
	if (call_state_from_name(state, &c->state) < 0)
		return -2;
	c->tries = sqlite3_column_int(st, 4);
	c->started_ms = sql_col_i64(st, 5);
	c->ended_ms = sql_col_i64(st, 6);
	if (!(c->name = sql_col_text(st, 2)))
		return -1;
	if (sqlite3_column_type(st, 7) != SQLITE_NULL && !(c->error = sql_col_text(st, 7)))
		return -1;
	return 0;
}

static void release_call(void *row)
{
	call_row_release(row);
}

int store_calls_of_job(struct store *s, int64_t job_id, int64_t after, int limit,
                       struct call_row **rows, size_t *n, struct weir_error *err)
{
	static const struct sql_rows call_rows = {sizeof(struct call_row), read_call, release_call};
	sqlite3_stmt *st;
	int rc;

	*rows = NULL;
	*n = 0;
	st = sql_prepare(store_db(s),
	                 "SELECT job_id, call_id, name, state, tries, started_at, ended_at, error"
	                 " FROM calls WHERE job_id = ?1 AND call_id > ?2 ORDER BY call_id LIMIT ?3",
	                 "calls: listing", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, after);
	sqlite3_bind_int(st, 3, limit);
	rc = sql_collect(st, &call_rows, store_path(s), "listing calls", rows, n, err);
	sqlite3_finalize(st);
	return rc;
}

int store_call_counts(struct store *s, int64_t job_id, int64_t counts[CALL_STATE_COUNT],
                      struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	sqlite3_stmt *st;
	int rc;

	memset(counts, 0, sizeof(int64_t) * CALL_STATE_COUNT);
	st = sql_prepare(db, "SELECT state, count(*) FROM calls WHERE job_id = ?1 GROUP BY state",
	                 "calls: counting", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		enum call_state cs;

		if (call_state_from_name((const char *)sqlite3_column_text(st, 0), &cs) == 0)
			counts[cs] = sqlite3_column_int64(st, 1);
	}
	if (rc != SQLITE_DONE)
		store_db_error(s, err, "calls: counting");
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}
