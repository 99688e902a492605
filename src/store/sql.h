/* sql.h: the small SQLite helpers every table module of the store shares:
 * one error ("store: WHAT: sqlite's message"), preparing and running a
 * statement with it, binding a task instance's key, and binding the
 * store's sentinels (0, "", -1) as NULL and reading NULL back as them, so
 * store.h and dag_store.h keep one convention; and the one loop that
 * steps a SELECT into a growing array of rows. */
#ifndef WEIR_STORE_SQL_H
#define WEIR_STORE_SQL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

/* Sets err to "store: WHAT: sqlite's message" for db's last error and
 * returns -1.  The kind follows that error: WEIR_E_CONFLICT for a
 * constraint, WEIR_E_UNAVAILABLE for busy or locked, WEIR_E_INTERNAL for
 * the rest.  `what` says what failed ("adding a dataset"); a module may
 * start it with its own name ("event log: listing records"). */
int sql_error(sqlite3 *db, const char *what, struct weir_error *err);

/* sql_error with the store's file `path` named (NULL: db's own file) and
 * `kind` for an error that is neither busy, locked nor a full disk.  A
 * full disk (SQLITE_FULL: nothing was written, a later try may succeed) is
 * WEIR_E_UNAVAILABLE, "store PATH: WHAT: the disk is full (...): nothing
 * was stored; try again once space is freed", and noted:
 * sql_space_lost(). */
int sql_error_in(sqlite3 *db, const char *path, const char *what, enum weir_error_kind kind,
                 struct weir_error *err);

/* ---- a full disk: one state for the process (the server's loop owns the
 * store; docs/internals/recovery.md, "A full disk") ---- */

/* A write found the disk of `path` full: counted, and logged once (an
 * error) until sql_space_back() says space returned. */
void sql_space_lost(const char *path);
/* Whether the last write that failed for a full disk has not been followed
 * by sql_space_back() saying space returned. */
bool sql_space_short(void);
/* How many writes found the disk full, ever: a transaction compares it
 * before and after to know whether one of its writes did. */
uint64_t sql_space_losses(void);
/* A transaction with writes was committed in `path`: when the disk was
 * short and its file system has room again (at least 1 MiB free: a commit
 * that fitted in the WAL's old pages says nothing), logged once ("space
 * returned"). */
void sql_space_back(const char *path);

/* `sql` prepared on db (one statement, kept by the caller, who finalizes
 * it); NULL with sql_error(db, what) when it does not prepare. */
sqlite3_stmt *sql_prepare(sqlite3 *db, const char *sql, const char *what, struct weir_error *err);

/* Steps st, a statement that returns no row, to its end and finalizes it
 * (also on failure).  0, with *changes (NULL: not wanted) the rows it
 * changed; -1 with sql_error(db, what) when it did not run to the end. */
int sql_run(sqlite3 *db, sqlite3_stmt *st, const char *what, int *changes, struct weir_error *err);

/* sql_run for a kept statement: st is reset, not finalized. */
int sql_run_kept(sqlite3 *db, sqlite3_stmt *st, const char *what, int *changes,
                 struct weir_error *err);

/* A task instance's key bound as parameters at, at+1, at+2 and at+3:
 * dag_id, run_id, task_id (NULL as "") and map_index. */
void sql_bind_ti_key(sqlite3_stmt *st, int at, const char *dag_id, const char *run_id,
                     const char *task_id, int map_index);

/* How sql_collect reads one kind of row. */
struct sql_rows {
	size_t size; /* one row's bytes */
	/* Reads st's current row into `row` (zeroed): 0; -1 when out of
	 * memory; -2 for a name (a state, a cause) this weir does not know.
	 * After a failure `row` is handed to `release`. */
	int (*read)(sqlite3_stmt *st, void *row);
	/* Frees what one row holds (not the row): a row zeroed, partly read
	 * or already released included. */
	void (*release)(void *row);
};

/* Steps st to its end, each row read by k into a new array: *rows_out
 * (the caller's `T **`, written with memcpy, since a void ** may not alias
 * it) of *n rows, NULL when none; st reset (a statement prepared for this
 * one use is the caller's to finalize).  0; or -1 with every row read
 * released, *rows_out NULL, *n 0, and err "store PATH: WHAT: ..." ("store:
 * WHAT: ..." when `path` is NULL): the database's error (as sql_error
 * gives it), out of memory, or "a state or cause this weir does not know"
 * (WEIR_E_INTERNAL both). */
int sql_collect(sqlite3_stmt *st, const struct sql_rows *k, const char *path, const char *what,
                void *rows_out, size_t *n, struct weir_error *err);

/* Whether `name` (NULL: no) is one of `names`. */
bool sql_name_in(const char *name, const char *const *names, size_t n);

/* Text binders bind v in place (SQLITE_STATIC), not a copy: v must stay
 * as it is until the statement was stepped for the last time with it.  The
 * store's functions bind, step and reset within one call, with values of
 * the caller's rows or the model's name tables, so copying each one (a
 * malloc and a free a value) bought nothing. */

/* Text, NULL as "". */
void sql_bind_text(sqlite3_stmt *st, int i, const char *v);
/* Text, or NULL for NULL and "". */
void sql_bind_text_or_null(sqlite3_stmt *st, int i, const char *v);
/* An integer, or NULL for 0 and below (times and ids). */
void sql_bind_pos_or_null(sqlite3_stmt *st, int i, int64_t v);

/* A newly allocated copy of a text column; NULL reads as "".  NULL only when
 * out of memory. */
char *sql_col_text(sqlite3_stmt *st, int i);
/* An integer column; NULL reads as 0. */
int64_t sql_col_i64(sqlite3_stmt *st, int i);

#endif
