/* dag_store.h: the workflow tables, on the store's SQLite file: DAGs and
 * import errors, DAG runs, task instances (TIs) and every try of each.
 *
 * Same contract as store.h: the store keeps and returns, it decides nothing
 * (sched/dag_run.h decides).  Rows carry states as enums (model/states.h);
 * the columns hold their names, turned from and into the enums here.  The
 * run type stays its name (manual|scheduled|backfill), checked against the
 * store's list.  The tables come with the store's schema (version 3, see
 * docs/internals/dags.md); this module prepares its statements on the
 * store's connection and keeps them until dag_store_destroy().
 *
 * Transactions: store_begin()/store_commit()/store_rollback() on the
 * underlying store cover these tables too (one connection).
 *
 * Sentinels as in store.h: a time of 0, a job_id of 0, an empty string are
 * SQL NULL / absent.  Times are epoch ms.  map_index is -1 for a task that
 * is not a foreach instance (Airflow's value).
 *
 * Errors: -1 with `err` filled: WEIR_E_NOT_FOUND for a missing row (or a
 * DAG, run, TI or job a new row refers to), WEIR_E_CONFLICT for a duplicate
 * key (a run_id or logical date the DAG already has), WEIR_E_INVALID for a
 * state out of range or a bad run type name, WEIR_E_INTERNAL for SQLite's
 * own failures (and a state name read back that no table knows).
 * A failed call changes nothing (inside a caller's transaction: the caller
 * rolls back).
 *
 * Row structs own their strings: *_row_release(), *_rows_free().
 */
#ifndef WEIR_STORE_DAG_STORE_H
#define WEIR_STORE_DAG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/states.h"
#include "store/store.h"

struct dag_store; /* opaque */

/* Borrows `s` (which must outlive it).  NULL with err when out of memory. */
struct dag_store *dag_store_create(struct store *s, struct weir_error *err);
/* Finalizes the statements; NULL is a no-op. */
void dag_store_destroy(struct dag_store *ds);

/* ---- DAGs ---- */

struct dag_row {
	char *dag_id;
	char *file; /* the DAG file it came from */
	bool paused;
	bool active; /* its file is present (false: removed, history kept) */
	int64_t last_parsed_at;
	char *import_error; /* its file's last error while the last good version
	                     * still runs; "" when none */
	char *spec_json;    /* the parsed DAG for listings; "{}" when unset */
};

/* Inserts or replaces every field but `paused`, which a new DAG takes from
 * `row` and an existing one keeps (a re-parse never unpauses). */
int dag_store_dag_put(struct dag_store *ds, const struct dag_row *row, struct weir_error *err);
int dag_store_dag_get(struct dag_store *ds, const char *dag_id, struct dag_row *out,
                      struct weir_error *err);
/* Whether a DAG row exists, without reading it (its spec is large). */
int dag_store_dag_exists(struct dag_store *ds, const char *dag_id, bool *exists,
                         struct weir_error *err);
/* Every DAG by dag_id; `active_only` leaves out the removed ones. */
int dag_store_dag_list(struct dag_store *ds, bool active_only, struct dag_row **rows, size_t *n,
                       struct weir_error *err);
int dag_store_dag_set_paused(struct dag_store *ds, const char *dag_id, bool paused,
                             struct weir_error *err);
/* Its file went away: active = false; the runs stay. */
int dag_store_dag_deactivate(struct dag_store *ds, const char *dag_id, struct weir_error *err);
void dag_row_release(struct dag_row *row);
void dag_rows_free(struct dag_row *rows, size_t n);

/* ---- import errors: files that gave no DAG ---- */

struct dag_import_error_row {
	int64_t id; /* stable while the file keeps failing */
	char *file;
	int64_t time;
	char *message; /* "file:line: field: what was expected" */
};

/* Records (or replaces) the error of `file`. */
int dag_store_import_error_set(struct dag_store *ds, const char *file, int64_t time,
                               const char *message, struct weir_error *err);
/* The file parsed, or went away; no error when it had none. */
int dag_store_import_error_clear(struct dag_store *ds, const char *file, struct weir_error *err);
/* By id. */
int dag_store_import_error_list(struct dag_store *ds, struct dag_import_error_row **rows, size_t *n,
                                struct weir_error *err);
void dag_import_error_row_release(struct dag_import_error_row *row);
void dag_import_error_rows_free(struct dag_import_error_row *rows, size_t n);

/* ---- notes: a person's words on a run or a task instance (Airflow's
 * setNote), kept through clears and marks ---- */

/* At most this many characters (UTF-8 sequences) of text, as Airflow's
 * column holds. */
#define DAG_NOTE_MAX 1000

/* A note: its text (NULL: the row has none), who set it ("" when unknown)
 * and when (ms; 0 when unknown). */
struct dag_note {
	char *text;
	char *user;
	int64_t at;
};
/* Frees the texts and zeroes n. */
void dag_note_release(struct dag_note *n);

/* ---- runs ---- */

struct dag_run_row {
	int64_t id; /* assigned by dag_store_run_insert() */
	char *dag_id;
	char *run_id;
	enum dag_run_state state;
	char run_type[STORE_STATE_MAX]; /* manual|scheduled|backfill */
	int64_t logical_date;           /* required (0 is 1970-01-01, a real date) */
	int64_t data_interval_start;
	int64_t data_interval_end;
	char *conf;   /* a JSON object's text; "" is stored as "{}" */
	char *reason; /* why it failed ("task load failed"); "" when none */
	int64_t queued_at;
	int64_t start_date;
	int64_t end_date;
	struct dag_note note; /* read, never written by the run's writes */
};

/* WEIR_E_CONFLICT when the DAG has that run_id or logical date;
 * WEIR_E_NOT_FOUND when there is no such DAG.  *id (may be NULL) gets the
 * new id. */
int dag_store_run_insert(struct dag_store *ds, const struct dag_run_row *row, int64_t *id,
                         struct weir_error *err);
int dag_store_run_get(struct dag_store *ds, const char *dag_id, const char *run_id,
                      struct dag_run_row *out, struct weir_error *err);

/* The DAG's latest successful run whose logical date is before `before`
 * (Airflow's prev_*_success): *found false when there is none.  0, or -1
 * with err. */
int dag_store_run_prev_success(struct dag_store *ds, const char *dag_id, int64_t before,
                               struct dag_run_row *out, bool *found, struct weir_error *err);

struct dag_run_query {
	const char *dag_id;       /* NULL: every DAG */
	bool by_state;            /* false: every state */
	enum dag_run_state state; /* with by_state */
	bool newest_first;        /* by logical date (then id) */
	int limit;                /* <= 0: no limit */
	int offset;
};

/* The runs the query matches, in its order.  One DAG's (a non-empty dag_id)
 * are read by its (dag_id, logical_date) index: a page costs what it holds
 * (and its offset), whatever the history; every DAG's are scanned and sorted. */
int dag_store_run_list(struct dag_store *ds, const struct dag_run_query *q,
                       struct dag_run_row **rows, size_t *n, struct weir_error *err);
/* How many runs the query matches, limit and offset aside (the API's
 * total_entries); one DAG's read from the counts a DAG and state that
 * triggers on dag_runs keep (schema 14): a lookup, whatever the history. */
int dag_store_run_count(struct dag_store *ds, const struct dag_run_query *q, int64_t *count,
                        struct weir_error *err);
/* Queued and running runs of every DAG, by dag_id then logical date: what
 * the scheduler and recovery walk. */
int dag_store_runs_active(struct dag_store *ds, struct dag_run_row **rows, size_t *n,
                          struct weir_error *err);
/* Whether any run of any DAG is queued (*any), by the state's index. */
int dag_store_run_queued_any(struct dag_store *ds, bool *any, struct weir_error *err);
/* Writes state, reason, queued_at, start_date and end_date of the run
 * (dag_id, run_id).  WEIR_E_NOT_FOUND if absent. */
int dag_store_run_update(struct dag_store *ds, const struct dag_run_row *row,
                         struct weir_error *err);
/* Sets the note of the run (dag_id, run_id) to `text` (NULL or "": none),
 * set by `user` at `at`; the run's other fields are left alone.
 * WEIR_E_NOT_FOUND if absent; WEIR_E_INVALID ("note: at most ...") for a
 * text over DAG_NOTE_MAX characters. */
int dag_store_run_set_note(struct dag_store *ds, const char *dag_id, const char *run_id,
                           const char *text, const char *user, int64_t at, struct weir_error *err);
/* With its TIs and tries. */
int dag_store_run_delete(struct dag_store *ds, const char *dag_id, const char *run_id,
                         struct weir_error *err);
void dag_run_row_release(struct dag_run_row *row);
void dag_run_rows_free(struct dag_run_row *rows, size_t n);

/* ---- task instances ---- */

struct dag_ti_row {
	char *dag_id;
	char *run_id;
	char *task_id;
	int map_index; /* -1: not a foreach instance */
	enum dag_ti_state state;
	int try_number; /* tries started; 0 before the first */
	int max_tries;  /* the last try number allowed */
	int64_t job_id; /* the job of the current try; 0: none */
	char *pool;     /* "" is stored as "default_pool" */
	int pool_slots; /* <= 0 is stored as 1 */
	int priority;
	int64_t queued_at;
	int64_t start_date;
	int64_t end_date;
	int64_t next_retry_at;
	char *rendered_command; /* "" until rendered */
	char *outputs;          /* a JSON object's text; "" when none */
	char *reason;           /* "waiting: pool gpu_pool full (1/1)", "exit 1"; "" */
	int64_t rowid;          /* the store's id of the row, as read (0: not known); an
	                           update finds the row by it, its key checked, else by the key */
	struct dag_note note;   /* read, never written by the TI's writes */
};

/* WEIR_E_CONFLICT if the key exists; WEIR_E_NOT_FOUND if the run (or a
 * job_id's job) does not. */
int dag_store_ti_insert(struct dag_store *ds, const struct dag_ti_row *row, struct weir_error *err);
int dag_store_ti_get(struct dag_store *ds, const char *dag_id, const char *run_id,
                     const char *task_id, int map_index, struct dag_ti_row *out,
                     struct weir_error *err);
/* A run's TIs in insertion order (the order the caller created them: the
 * graph's, dag_run.h). */
int dag_store_tis_of_run(struct dag_store *ds, const char *dag_id, const char *run_id,
                         struct dag_ti_row **rows, size_t *n, struct weir_error *err);
/* The TIs of the DAG's newest `n_runs` runs (<= 0: every run) in one read,
 * by the run's logical date (oldest first), then insertion order: a grid of
 * runs and tasks without a query per run. */
int dag_store_tis_of_latest_runs(struct dag_store *ds, const char *dag_id, int n_runs,
                                 struct dag_ti_row **rows, size_t *n, struct weir_error *err);
/* The TI whose current try runs as job `job_id` (a job's end finds its TI)
 * and when that job started (*job_started_at: the job's started_at, 0 when
 * it has none), in one read, not the job's whole row.  Only the TI's key
 * (dag_id, run_id, task_id, map_index) and try_number are read; the other
 * fields are 0 or NULL (a job's end needs no more: the run's copy holds the
 * rest; dag_store_ti_get reads the whole row by that key). */
int dag_store_ti_key_by_job(struct dag_store *ds, int64_t job_id, struct dag_ti_row *out,
                            int64_t *job_started_at, struct weir_error *err);
/* A row of a narrow read: two texts (never NULL; borrowed for the call)
 * and an int. */
typedef void (*dag_store_row3_fn)(void *arg, const char *a, const char *b, int c);
/* A queued or running TI as the pool pass counts it (borrowed for the
 * call; never NULL). */
struct dag_ti_use {
	const char *dag_id, *run_id, *task_id;
	const char *pool; /* "" for the default one */
	int pool_slots;
};
typedef void (*dag_store_use_fn)(void *arg, const struct dag_ti_use *u);
/* What every queued and running TI holds: fn(arg, use) for each (its
 * pool, and its task's place in a max_active_tis_per_dag(run)).  0, or -1
 * with err. */
int dag_store_pool_use(struct dag_store *ds, dag_store_use_fn fn, void *arg,
                       struct weir_error *err);
/* The running runs, by DAG then logical date: fn(arg, dag_id, run_id, 0).
 * 0, or -1 with err. */
int dag_store_runs_running(struct dag_store *ds, dag_store_row3_fn fn, void *arg,
                           struct weir_error *err);
/* TIs in `state` across every run, by priority DESC then the run's logical
 * date (the pool decision's candidates when state is scheduled; the active
 * count when queued/running). */
int dag_store_tis_in_state(struct dag_store *ds, enum dag_ti_state state, struct dag_ti_row **rows,
                           size_t *n, struct weir_error *err);
/* Writes every field but the key.  WEIR_E_NOT_FOUND if absent. */
int dag_store_ti_update(struct dag_store *ds, const struct dag_ti_row *row, struct weir_error *err);
/* Writes what a TI's state change moves: state, max_tries, queued_at,
 * start_date, end_date, next_retry_at, outputs and reason.  For a row
 * whose try_number, job_id, pool, pool_slots, priority and rendered_command
 * are as stored: the job's index and its key's check are left alone (a
 * sixth cheaper than dag_store_ti_update()).  WEIR_E_NOT_FOUND if absent. */
int dag_store_ti_set_state(struct dag_store *ds, const struct dag_ti_row *row,
                           struct weir_error *err);
/* Sets the note of the TI (its key) as dag_store_run_set_note() does a
 * run's. */
int dag_store_ti_set_note(struct dag_store *ds, const char *dag_id, const char *run_id,
                          const char *task_id, int map_index, const char *text, const char *user,
                          int64_t at, struct weir_error *err);
void dag_ti_row_release(struct dag_ti_row *row);
void dag_ti_rows_free(struct dag_ti_row *rows, size_t n);

/* ---- tries: every try of a TI, so each try's log (its job's) stays
 * reachable ---- */

struct dag_try_row {
	char *dag_id;
	char *run_id;
	char *task_id;
	int map_index;
	int try_number; /* from 1 */
	int64_t job_id; /* 0: none (yet) */
	enum dag_ti_state state;
	int64_t start_date;
	int64_t end_date;
	char *reason;
};

/* Inserts or replaces the try (key: the TI's and try_number).
 * WEIR_E_NOT_FOUND if the TI does not exist. */
int dag_store_try_put(struct dag_store *ds, const struct dag_try_row *row, struct weir_error *err);
/* The try of `key` (its TI's fields and try_number; the rest unread) is
 * now `state`, with `reason` (NULL: the one it has) and `end_date` unless
 * it has one (<= 0: none), written without reading it first.  *found:
 * the try row existed (nothing is written when it does not). */
int dag_store_try_end(struct dag_store *ds, const struct dag_try_row *key, enum dag_ti_state state,
                      const char *reason, int64_t end_date, bool *found, struct weir_error *err);
int dag_store_try_get(struct dag_store *ds, const char *dag_id, const char *run_id,
                      const char *task_id, int map_index, int try_number, struct dag_try_row *out,
                      struct weir_error *err);
/* Tries of one TI by try_number. */
int dag_store_tries_of_ti(struct dag_store *ds, const char *dag_id, const char *run_id,
                          const char *task_id, int map_index, struct dag_try_row **rows, size_t *n,
                          struct weir_error *err);
void dag_try_row_release(struct dag_try_row *row);
void dag_try_rows_free(struct dag_try_row *rows, size_t n);

#endif
