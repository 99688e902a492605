/* dag_store_internal.h: what the files of the workflow store share (not
 * part of dag_store.h's contract): the statements the handle keeps, the
 * handle itself, and the helpers that step and read them.  dag_store.c
 * holds the SQL of every statement and the tables but tries;
 * dag_store_tries.c the tries.
 */
#ifndef WEIR_STORE_DAG_STORE_INTERNAL_H
#define WEIR_STORE_DAG_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

#include "store/dag_store.h"

enum ds_stmt {
	DS_DAG_PUT,
	DS_DAG_GET,
	DS_DAG_EXISTS,
	DS_DAG_LIST,
	DS_DAG_LIST_ACTIVE,
	DS_DAG_PAUSE,
	DS_DAG_DEACTIVATE,
	DS_IE_SET,
	DS_IE_CLEAR,
	DS_IE_LIST,
	DS_RUN_INSERT,
	DS_RUN_GET,
	DS_RUN_PREV_SUCCESS,
	DS_RUN_LIST_ASC,
	DS_RUN_LIST_DESC,
	DS_RUN_COUNT,
	DS_DAG_RUNS_ASC,
	DS_DAG_RUNS_DESC,
	DS_DAG_RUN_COUNT,
	DS_DAG_RUN_COUNT_STATE,
	DS_RUNS_ACTIVE,
	DS_RUN_QUEUED_ANY,
	DS_RUN_UPDATE,
	DS_RUN_DELETE,
	DS_RUN_EXISTS,
	DS_RUN_SET_NOTE,
	DS_RUN_DEL_NOTE,
	DS_TI_INSERT,
	DS_TI_GET,
	DS_TIS_OF_RUN,
	DS_TIS_OF_LATEST_RUNS,
	DS_TI_KEY_BY_JOB,
	DS_TIS_IN_STATE,
	DS_POOL_USE,
	DS_RUNS_RUNNING,
	DS_TI_UPDATE,
	DS_TI_UPDATE_AT,
	DS_TI_SET_STATE,
	DS_TI_SET_STATE_AT,
	DS_TI_SET_NOTE,
	DS_TI_DEL_NOTE,
	DS_TI_EXISTS,
	DS_TRY_PUT,
	DS_TRY_END,
	DS_TRY_GET,
	DS_TRIES_OF_TI,
	DS_COUNT,
};

struct dag_store {
	struct store *s;
	sqlite3 *db;
	sqlite3_stmt *stmt[DS_COUNT];
};

/* The file's path, for errors. */
const char *ds_db_path(const struct dag_store *ds);

/* Statement `id`, prepared on first use; NULL with err. */
sqlite3_stmt *ds_stmt_get(struct dag_store *ds, enum ds_stmt id, struct weir_error *err);

/* A TI state read from column i; false when this weir does not know it. */
bool ds_col_ti_state(sqlite3_stmt *st, int i, enum dag_ti_state *out);

/* 0, or -1 with WEIR_E_INVALID when s is no TI state. */
int ds_check_ti_state(struct dag_store *ds, enum dag_ti_state s, struct weir_error *err);

/* "WHAT task T[I] of run R of DAG D" into buf, for errors. */
void ds_ti_name(char *buf, size_t size, const char *what, const char *dag_id, const char *run_id,
                const char *task_id, int map_index);

/* Steps a write and resets it: 0 when done, else SQLite's extended code,
 * for ds_write_failed() (a caller names what failed only when it did). */
int ds_step(struct dag_store *ds, sqlite3_stmt *st);
/* The error of a write that failed with `code`: a duplicate key is `dup`
 * (WEIR_E_CONFLICT), a missing parent `missing` (WEIR_E_NOT_FOUND), each
 * when not NULL; else the database's.  -1. */
int ds_write_failed(struct dag_store *ds, int code, const char *what, const char *dup,
                    const char *missing, struct weir_error *err);

/* Steps a write whose constraint failures mean something: a duplicate key
 * is `dup` (WEIR_E_CONFLICT), a missing parent `missing` (WEIR_E_NOT_FOUND). */
int ds_step_write(struct dag_store *ds, sqlite3_stmt *st, const char *what, const char *dup,
                  const char *missing, struct weir_error *err);

typedef int (*read_row_fn)(sqlite3_stmt *st, void *row);
typedef void (*release_row_fn)(void *row);

/* Steps a SELECT into a new array of rows of `size` bytes (sql_collect,
 * naming the store's file); `rows_out` is the caller's `struct x **`. */
int ds_collect(struct dag_store *ds, sqlite3_stmt *st, const char *what, size_t size,
               read_row_fn rd, release_row_fn rel, void *rows_out, size_t *n,
               struct weir_error *err);

/* Collects at most one row into `out`; WEIR_E_NOT_FOUND with `missing`. */
int ds_collect_one(struct dag_store *ds, sqlite3_stmt *st, const char *what, size_t size,
                   read_row_fn rd, release_row_fn rel, void *out, const char *missing,
                   struct weir_error *err);

#endif
