/* job_events.c: a job's journal in the store (store.h's events): events
 * added one at a time or a loop turn's together (one INSERT of up to
 * STORE_EVENTS_MAX rows, a statement for each count kept in the store's
 * handle), and read back in order.
 */
#include "store/store.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"
#include "store/store_internal.h"

/* an INSERT of events, its VALUES once a row: slot n of the store's keeps
 * the one of n rows, slot 0 the SELECT of a job's events */
#define EVENTS_INSERT "INSERT INTO events (job_id, time, kind, message) VALUES "
#define EVENT_VALUES "(?,?,?,?)"
#define EVENTS_MAX STORE_EVENTS_MAX
_Static_assert(STORE_EVENT_SLOTS == EVENTS_MAX + 1, "a slot for each count and the SELECT");
#define EVENTS_OF_JOB                                                                              \
	"SELECT id, job_id, time, kind, message FROM events WHERE job_id = ? ORDER BY id"

/* The kept INSERT of n (1..EVENTS_MAX) events, made on first use, reset
 * and unbound, the transaction begun; NULL with err. */
static sqlite3_stmt *events_stmt(struct store *s, size_t n, struct weir_error *err)
{
	char sql[sizeof EVENTS_INSERT + EVENTS_MAX * sizeof EVENT_VALUES];
	size_t len = strlen(EVENTS_INSERT);

	if (store_event_slots(s)[n]) /* kept: no text to make */
		return store_stmt_in(s, &store_event_slots(s)[n], NULL, err);
	memcpy(sql, EVENTS_INSERT, len);
	for (size_t i = 0; i < n; i++) {
		if (i)
			sql[len++] = ',';
		memcpy(sql + len, EVENT_VALUES, strlen(EVENT_VALUES));
		len += strlen(EVENT_VALUES);
	}
	sql[len] = '\0';
	return store_stmt_in(s, &store_event_slots(s)[n], sql, err);
}

int store_event_add(struct store *s, int64_t job_id, int64_t time_ms, const char *kind,
                    const char *message, int64_t *id, struct weir_error *err)
{
	sqlite3_stmt *st = events_stmt(s, 1, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, time_ms);
	sql_bind_text(st, 3, kind);
	sql_bind_text(st, 4, message);
	int r = sqlite3_step(st);
	sqlite3_reset(st);
	if (r != SQLITE_DONE) {
		if (sqlite3_extended_errcode(sqlite3_db_handle(st)) == SQLITE_CONSTRAINT_FOREIGNKEY)
			return weir_error_set(err, WEIR_E_NOT_FOUND, "no job %" PRId64, job_id);
		return store_db_error(s, err, "adding an event");
	}
	if (id)
		*id = sqlite3_last_insert_rowid(sqlite3_db_handle(st));
	return 0;
}

int store_events_add(struct store *s, const struct event_row *rows, size_t n,
                     struct weir_error *err)
{
	/* up to EVENTS_MAX rows a statement: an INSERT's fixed cost (its start
	 * and end, the autoincrement counter) paid once for a turn's events */
	for (size_t done = 0; done < n;) {
		size_t m = n - done < EVENTS_MAX ? n - done : EVENTS_MAX;
		sqlite3_stmt *st = events_stmt(s, m, err);
		int r;
		if (!st)
			return -1;
		for (size_t i = 0; i < m; i++) {
			const struct event_row *e = &rows[done + i];
			int at = (int)(4 * i);
			sqlite3_bind_int64(st, at + 1, e->job_id);
			sqlite3_bind_int64(st, at + 2, e->time);
			sql_bind_text(st, at + 3, e->kind);
			sql_bind_text(st, at + 4, e->message);
		}
		r = sqlite3_step(st);
		sqlite3_reset(st);
		if (r != SQLITE_DONE) {
			if (sqlite3_extended_errcode(sqlite3_db_handle(st)) ==
			    SQLITE_CONSTRAINT_FOREIGNKEY)
				return weir_error_set(err, WEIR_E_NOT_FOUND,
				                      "an event of a job that does not exist");
			return store_db_error(s, err, "adding events");
		}
		done += m;
	}
	return 0;
}

void event_row_release(struct event_row *row)
{
	if (!row)
		return;
	free(row->kind);
	free(row->message);
	row->kind = row->message = NULL;
}

void event_rows_free(struct event_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		event_row_release(&rows[i]);
	free(rows);
}

/* -1 when out of memory. */
static int read_event(sqlite3_stmt *st, void *row)
{
	struct event_row *e = row;
	e->id = sqlite3_column_int64(st, 0);
	e->job_id = sqlite3_column_int64(st, 1);
	e->time = sqlite3_column_int64(st, 2);
	e->kind = sql_col_text(st, 3);
	e->message = sql_col_text(st, 4);
	return e->kind && e->message ? 0 : -1;
}

static void release_event(void *row)
{
	event_row_release(row);
}

int store_events_of_job(struct store *s, int64_t job_id, struct event_row **rows, size_t *n,
                        struct weir_error *err)
{
	static const struct sql_rows event_rows = {sizeof(struct event_row), read_event,
	                                           release_event};
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = store_stmt_in(s, &store_event_slots(s)[0], EVENTS_OF_JOB, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	return sql_collect(st, &event_rows, store_path(s), "listing events", rows, n, err);
}
