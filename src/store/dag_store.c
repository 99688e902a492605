/* dag_store.c: the workflow tables (dag_store.h): DAGs, import errors, runs
 * and task instances (tries: dag_store_tries.c), with the SQL of every
 * statement, kept in the handle and prepared on the store's connection, and
 * the helpers that step and read them (dag_store_internal.h).
 *
 * The tables themselves are created by store.c's migration 3, so a file has
 * one schema version for everything.
 */
#include "store/dag_store.h"
#include "store/dag_store_internal.h"
#include "store/sql.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUN_COLS                                                                                   \
	"id, dag_id, run_id, state, run_type, logical_date, data_interval_start,"                  \
	" data_interval_end, conf, reason, queued_at, start_date, end_date"

#define TI_COLS                                                                                    \
	"t.dag_id, t.run_id, t.task_id, t.map_index, t.state, t.try_number, t.max_tries,"          \
	" t.job_id, t.pool, t.pool_slots, t.priority, t.queued_at, t.start_date, t.end_date,"      \
	" t.next_retry_at, t.rendered_command, t.outputs, t.reason, t.rowid"

/* A run's or a TI's note, after RUN_COLS or TI_COLS, where an answer may
 * show it (read_note): the reads the scheduler makes on every turn
 * (DS_RUNS_ACTIVE, DS_TIS_IN_STATE) leave it out. */
#define NOTE_COLS ", n.content, n.set_by, n.set_at"
#define RUN_NOTE " LEFT JOIN dag_run_notes n USING (dag_id, run_id)"
#define TI_NOTE                                                                                    \
	" LEFT JOIN task_instance_notes n ON n.dag_id = t.dag_id AND n.run_id = t.run_id"          \
	" AND n.task_id = t.task_id AND n.map_index = t.map_index"

#define TRY_COLS                                                                                   \
	"dag_id, run_id, task_id, map_index, try_number, job_id, state, start_date, end_date,"     \
	" reason"

#define DAG_COLS "dag_id, file, paused, active, last_parsed_at, import_error, spec_json"

#define RUN_FILTER " WHERE (?1 IS NULL OR dag_id = ?1) AND (?2 IS NULL OR state = ?2)"
#define DAG_RUN_FILTER " WHERE dag_id = ?1 AND (?2 IS NULL OR state = ?2)"

static const char *const ds_sql[DS_COUNT] = {
    /* a re-parse keeps `paused`: only a new DAG takes it from the row */
    [DS_DAG_PUT] = "INSERT INTO dags (" DAG_COLS ") VALUES (?,?,?,?,?,?,?)"
                   " ON CONFLICT (dag_id) DO UPDATE SET file = excluded.file,"
                   " active = excluded.active, last_parsed_at = excluded.last_parsed_at,"
                   " import_error = excluded.import_error, spec_json = excluded.spec_json",
    [DS_DAG_GET] = "SELECT " DAG_COLS " FROM dags WHERE dag_id = ?",
    [DS_DAG_EXISTS] = "SELECT 1 FROM dags WHERE dag_id = ?",
    [DS_DAG_LIST] = "SELECT " DAG_COLS " FROM dags ORDER BY dag_id",
    [DS_DAG_LIST_ACTIVE] = "SELECT " DAG_COLS " FROM dags WHERE active = 1 ORDER BY dag_id",
    [DS_DAG_PAUSE] = "UPDATE dags SET paused = ? WHERE dag_id = ?",
    [DS_DAG_DEACTIVATE] = "UPDATE dags SET active = 0 WHERE dag_id = ?",
    [DS_IE_SET] = "INSERT INTO dag_import_errors (file, time, message) VALUES (?,?,?)"
                  " ON CONFLICT (file) DO UPDATE SET time = excluded.time,"
                  " message = excluded.message",
    [DS_IE_CLEAR] = "DELETE FROM dag_import_errors WHERE file = ?",
    [DS_IE_LIST] = "SELECT id, file, time, message FROM dag_import_errors ORDER BY id",
    [DS_RUN_INSERT] = "INSERT INTO dag_runs (dag_id, run_id, state, run_type, logical_date,"
                      " data_interval_start, data_interval_end, conf, reason, queued_at,"
                      " start_date, end_date) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    [DS_RUN_GET] =
        "SELECT " RUN_COLS NOTE_COLS " FROM dag_runs" RUN_NOTE " WHERE dag_id = ? AND run_id = ?",
    /* UNIQUE (dag_id, logical_date), searched backwards from the date */
    [DS_RUN_PREV_SUCCESS] = "SELECT " RUN_COLS NOTE_COLS " FROM dag_runs" RUN_NOTE
                            " WHERE dag_id = ?1 AND logical_date < ?2 AND state = 'success'"
                            " ORDER BY logical_date DESC, id DESC LIMIT 1",
    [DS_RUN_LIST_ASC] = "SELECT " RUN_COLS NOTE_COLS " FROM dag_runs" RUN_NOTE RUN_FILTER
                        " ORDER BY logical_date, id LIMIT ?3 OFFSET ?4",
    [DS_RUN_LIST_DESC] = "SELECT " RUN_COLS NOTE_COLS " FROM dag_runs" RUN_NOTE RUN_FILTER
                         " ORDER BY logical_date DESC, id DESC LIMIT ?3 OFFSET ?4",
    [DS_RUN_COUNT] = "SELECT count(*) FROM dag_runs" RUN_FILTER,
    /* the same for one DAG: `?1 IS NULL OR` keeps SQLite from the indexes, so a
     * DAG's listing would scan every DAG's runs and sort them; these search
     * UNIQUE (dag_id, logical_date) (its entries end with the rowid, the id:
     * the order needs no sort) */
    [DS_DAG_RUNS_ASC] = "SELECT " RUN_COLS NOTE_COLS " FROM dag_runs" RUN_NOTE DAG_RUN_FILTER
                        " ORDER BY logical_date, id LIMIT ?3 OFFSET ?4",
    [DS_DAG_RUNS_DESC] = "SELECT " RUN_COLS NOTE_COLS " FROM dag_runs" RUN_NOTE DAG_RUN_FILTER
                         " ORDER BY logical_date DESC, id DESC LIMIT ?3 OFFSET ?4",
    /* one DAG's counts: the rows the triggers keep (schema 13 -> 14) */
    [DS_DAG_RUN_COUNT] = "SELECT coalesce(sum(n), 0) FROM dag_run_counts"
                         " WHERE dag_id = ?1 AND ?2 IS NULL",
    [DS_DAG_RUN_COUNT_STATE] = "SELECT coalesce(sum(n), 0) FROM dag_run_counts"
                               " WHERE dag_id = ?1 AND state = ?2",
    [DS_RUNS_ACTIVE] = "SELECT " RUN_COLS " FROM dag_runs WHERE state IN (?,?)"
                       " ORDER BY dag_id, logical_date, id",
    [DS_RUN_QUEUED_ANY] = "SELECT 1 FROM dag_runs WHERE state = ? LIMIT 1",
    [DS_RUN_UPDATE] = "UPDATE dag_runs SET state = ?, reason = ?, queued_at = ?,"
                      " start_date = ?, end_date = ? WHERE dag_id = ? AND run_id = ?",
    [DS_RUN_DELETE] = "DELETE FROM dag_runs WHERE dag_id = ? AND run_id = ?",
    [DS_RUN_EXISTS] = "SELECT 1 FROM dag_runs WHERE dag_id = ? AND run_id = ?",
    [DS_RUN_SET_NOTE] = "INSERT INTO dag_run_notes (content, set_by, set_at, dag_id, run_id)"
                        " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (dag_id, run_id) DO UPDATE SET "
                        "content = excluded.content,"
                        " set_by = excluded.set_by, set_at = excluded.set_at",
    [DS_RUN_DEL_NOTE] = "DELETE FROM dag_run_notes WHERE dag_id = ?4 AND run_id = ?5",
    [DS_TI_INSERT] = "INSERT INTO task_instances (dag_id, run_id, task_id, map_index, state,"
                     " try_number, max_tries, job_id, pool, pool_slots, priority, queued_at,"
                     " start_date, end_date, next_retry_at, rendered_command, outputs, reason)"
                     " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [DS_TI_GET] = "SELECT " TI_COLS NOTE_COLS " FROM task_instances t" TI_NOTE " WHERE t.dag_id = ?"
                  " AND t.run_id = ? AND t.task_id = ? AND t.map_index = ?",
    [DS_TIS_OF_RUN] =
        "SELECT " TI_COLS NOTE_COLS " FROM task_instances t" TI_NOTE " WHERE t.dag_id = ?"
        " AND t.run_id = ? ORDER BY t.rowid",
    /* one read for a DAG's grid: the TIs of its newest ?2 runs, oldest run first */
    [DS_TIS_OF_LATEST_RUNS] = "SELECT " TI_COLS NOTE_COLS " FROM task_instances t JOIN dag_runs r"
                              " ON r.dag_id = t.dag_id AND r.run_id = t.run_id" TI_NOTE
                              " WHERE r.id IN (SELECT id FROM dag_runs WHERE dag_id = ?1"
                              " ORDER BY logical_date DESC, id DESC LIMIT ?2)"
                              " ORDER BY r.logical_date, r.id, t.rowid",
    /* a job's end: its TI's key and try, its start */
    [DS_TI_KEY_BY_JOB] = "SELECT t.dag_id, t.run_id, t.task_id, t.map_index, t.try_number,"
                         " j.started_at FROM task_instances t"
                         " LEFT JOIN jobs j ON j.id = t.job_id WHERE t.job_id = ?",
    [DS_TIS_IN_STATE] = "SELECT " TI_COLS " FROM task_instances t JOIN dag_runs r"
                        " ON r.dag_id = t.dag_id AND r.run_id = t.run_id WHERE t.state = ?"
                        " ORDER BY t.priority DESC, r.logical_date, r.id, t.rowid",
    /* the pool pass's: what the active TIs hold, and which runs run */
    /* two searches of the state index: an IN over it costs twice as much */
    [DS_POOL_USE] = "SELECT dag_id, pool, pool_slots, run_id, task_id FROM task_instances"
                    " WHERE state = ?"
                    " UNION ALL SELECT dag_id, pool, pool_slots, run_id, task_id"
                    " FROM task_instances WHERE state = ?",
    [DS_RUNS_RUNNING] = "SELECT dag_id, run_id FROM dag_runs WHERE state = ?"
                        " ORDER BY dag_id, logical_date, id",
    [DS_TI_UPDATE] = "UPDATE task_instances SET state = ?, try_number = ?, max_tries = ?,"
                     " job_id = ?, pool = ?, pool_slots = ?, priority = ?, queued_at = ?,"
                     " start_date = ?, end_date = ?, next_retry_at = ?, rendered_command = ?,"
                     " outputs = ?, reason = ?"
                     " WHERE dag_id = ? AND run_id = ? AND task_id = ? AND map_index = ?",
    [DS_TI_SET_STATE] = "UPDATE task_instances SET state = ?, max_tries = ?, queued_at = ?,"
                        " start_date = ?, end_date = ?, next_retry_at = ?, outputs = ?,"
                        " reason = ?"
                        " WHERE dag_id = ? AND run_id = ? AND task_id = ? AND map_index = ?",
    /* the same two found by the row's id (a look-up, not a search of the key's
     * text), the key checked on the row found */
    [DS_TI_UPDATE_AT] = "UPDATE task_instances SET state = ?, try_number = ?, max_tries = ?,"
                        " job_id = ?, pool = ?, pool_slots = ?, priority = ?, queued_at = ?,"
                        " start_date = ?, end_date = ?, next_retry_at = ?, rendered_command = ?,"
                        " outputs = ?, reason = ? WHERE rowid = ?19"
                        " AND dag_id = ?15 AND run_id = ?16 AND task_id = ?17 AND map_index = ?18",
    [DS_TI_SET_STATE_AT] =
        "UPDATE task_instances SET state = ?, max_tries = ?, queued_at = ?,"
        " start_date = ?, end_date = ?, next_retry_at = ?, outputs = ?,"
        " reason = ? WHERE rowid = ?13"
        " AND dag_id = ?9 AND run_id = ?10 AND task_id = ?11 AND map_index = ?12",
    [DS_TI_SET_NOTE] = "INSERT INTO task_instance_notes (content, set_by, set_at, dag_id, run_id,"
                       " task_id, map_index) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                       " ON CONFLICT (dag_id, run_id, task_id, map_index) DO UPDATE SET"
                       " content = excluded.content, set_by = excluded.set_by,"
                       " set_at = excluded.set_at",
    [DS_TI_DEL_NOTE] = "DELETE FROM task_instance_notes WHERE dag_id = ?4 AND run_id = ?5"
                       " AND task_id = ?6 AND map_index = ?7",
    [DS_TI_EXISTS] = "SELECT 1 FROM task_instances WHERE dag_id = ? AND run_id = ?"
                     " AND task_id = ? AND map_index = ?",
    [DS_TRY_PUT] = "INSERT INTO task_instance_tries (" TRY_COLS ") VALUES (?,?,?,?,?,?,?,?,?,?)"
                   " ON CONFLICT (dag_id, run_id, task_id, map_index, try_number) DO UPDATE"
                   " SET job_id = excluded.job_id, state = excluded.state,"
                   " start_date = excluded.start_date, end_date = excluded.end_date,"
                   " reason = excluded.reason",
    [DS_TRY_END] = "UPDATE task_instance_tries SET state = ?, reason = COALESCE(?, reason),"
                   " end_date = COALESCE(end_date, ?) WHERE dag_id = ? AND run_id = ?"
                   " AND task_id = ? AND map_index = ? AND try_number = ?",
    [DS_TRY_GET] = "SELECT " TRY_COLS " FROM task_instance_tries WHERE dag_id = ?"
                   " AND run_id = ? AND task_id = ? AND map_index = ? AND try_number = ?",
    [DS_TRIES_OF_TI] = "SELECT " TRY_COLS " FROM task_instance_tries WHERE dag_id = ?"
                       " AND run_id = ? AND task_id = ? AND map_index = ? ORDER BY try_number",
};

static const char *const run_types[] = {"manual", "scheduled", "backfill"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const char *ds_db_path(const struct dag_store *ds)
{
	const char *p = sqlite3_db_filename(ds->db, "main");
	return p && *p ? p : ":memory:";
}

static int db_error(struct dag_store *ds, struct weir_error *err, const char *what)
{
	return sql_error_in(ds->db, ds_db_path(ds), what, WEIR_E_INTERNAL, err);
}

static int check_name(struct dag_store *ds, const char *what, const char *name,
                      const char *const *names, size_t n, struct weir_error *err)
{
	if (sql_name_in(name, names, n))
		return 0;
	char list[256] = "";
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(list);
		snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", names[i]);
	}
	return weir_error_set(err, WEIR_E_INVALID, "store %s: %s \"%s\" is not one of %s",
	                      ds_db_path(ds), what, name ? name : "", list);
}

struct dag_store *dag_store_create(struct store *s, struct weir_error *err)
{
	struct dag_store *ds = calloc(1, sizeof(*ds));
	if (!ds) {
		weir_error_set(err, WEIR_E_INTERNAL, "dag store: out of memory");
		return NULL;
	}
	ds->s = s;
	ds->db = store_db(s);
	return ds;
}

void dag_store_destroy(struct dag_store *ds)
{
	if (!ds)
		return;
	for (int i = 0; i < DS_COUNT; i++)
		sqlite3_finalize(ds->stmt[i]);
	free(ds);
}

/* The kept statement `id`, reset and unbound; NULL with err. */
sqlite3_stmt *ds_stmt_get(struct dag_store *ds, enum ds_stmt id, struct weir_error *err)
{
	sqlite3_stmt *st = ds->stmt[id];
	if (!st) {
		if (sqlite3_prepare_v3(ds->db, ds_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st,
		                       NULL) != SQLITE_OK) {
			db_error(ds, err, "preparing a statement");
			return NULL;
		}
		ds->stmt[id] = st;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (!sqlite3_stmt_readonly(st) && store_write_starts(ds->s, err) < 0)
		return NULL;
	return st;
}

/* ---- binding and reading: the sentinels of dag_store.h ---- */

static void bind_text_or(sqlite3_stmt *st, int i, const char *v, const char *dflt)
{
	sqlite3_bind_text(st, i, v && *v ? v : dflt, -1, SQLITE_TRANSIENT);
}

/* A state column read back into its enum: false for a name no table knows. */
static bool col_run_state(sqlite3_stmt *st, int i, enum dag_run_state *out)
{
	return dag_run_state_from_name((const char *)sqlite3_column_text(st, i), out) == 0;
}

bool ds_col_ti_state(sqlite3_stmt *st, int i, enum dag_ti_state *out)
{
	return dag_ti_state_from_name((const char *)sqlite3_column_text(st, i), out) == 0;
}

static int check_run_state(struct dag_store *ds, enum dag_run_state s, struct weir_error *err)
{
	if ((unsigned)s >= DAG_RUN_STATE_COUNT)
		return weir_error_set(err, WEIR_E_INVALID, "store %s: run state %d is out of range",
		                      ds_db_path(ds), (int)s);
	return 0;
}

int ds_check_ti_state(struct dag_store *ds, enum dag_ti_state s, struct weir_error *err)
{
	if ((unsigned)s >= DAG_TI_STATE_COUNT)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "store %s: task instance state %d is out of range",
		                      ds_db_path(ds), (int)s);
	return 0;
}

static void col_name(sqlite3_stmt *st, int i, char *dst)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	snprintf(dst, STORE_STATE_MAX, "%s", t ? (const char *)t : "");
}

int ds_step(struct dag_store *ds, sqlite3_stmt *st)
{
	int r = sqlite3_step(st);
	sqlite3_reset(st);
	return r == SQLITE_DONE ? 0 : sqlite3_extended_errcode(ds->db);
}

static int step_done(struct dag_store *ds, sqlite3_stmt *st, const char *what,
                     struct weir_error *err)
{
	return ds_step(ds, st) ? db_error(ds, err, what) : 0;
}

int ds_write_failed(struct dag_store *ds, int code, const char *what, const char *dup,
                    const char *missing, struct weir_error *err)
{
	if ((code == SQLITE_CONSTRAINT_PRIMARYKEY || code == SQLITE_CONSTRAINT_UNIQUE) && dup)
		return weir_error_set(err, WEIR_E_CONFLICT, "%s", dup);
	if (code == SQLITE_CONSTRAINT_FOREIGNKEY && missing)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "%s", missing);
	return db_error(ds, err, what);
}

int ds_step_write(struct dag_store *ds, sqlite3_stmt *st, const char *what, const char *dup,
                  const char *missing, struct weir_error *err)
{
	int code = ds_step(ds, st);
	return code ? ds_write_failed(ds, code, what, dup, missing, err) : 0;
}

/* sql_collect, naming the store's file. */
int ds_collect(struct dag_store *ds, sqlite3_stmt *st, const char *what, size_t size,
               read_row_fn rd, release_row_fn rel, void *rows_out, size_t *n,
               struct weir_error *err)
{
	const struct sql_rows k = {size, rd, rel};
	return sql_collect(st, &k, ds_db_path(ds), what, rows_out, n, err);
}

/* Collects at most one row into `out`; WEIR_E_NOT_FOUND with `missing`.
 * One step, read straight into `out` (no array of rows for a key's read);
 * rows after the first are not read. */
int ds_collect_one(struct dag_store *ds, sqlite3_stmt *st, const char *what, size_t size,
                   read_row_fn rd, release_row_fn rel, void *out, const char *missing,
                   struct weir_error *err)
{
	int r = sqlite3_step(st), rr;

	(void)size;
	(void)rel;
	if (r == SQLITE_DONE) {
		sqlite3_reset(st);
		return weir_error_set(err, WEIR_E_NOT_FOUND, "%s", missing);
	}
	if (r != SQLITE_ROW) {
		db_error(ds, err, what);
		sqlite3_reset(st);
		return -1;
	}
	rr = rd(st, out);
	sqlite3_reset(st);
	if (rr == -2)
		return weir_error_set(err, WEIR_E_INTERNAL,
		                      "store %s: %s: a state this weir does not know",
		                      ds_db_path(ds), what);
	if (rr < 0) {
		weir_error_oom(err);
		weir_error_prefix(err, "store %s: %s", ds_db_path(ds), what);
		return -1;
	}
	return 0;
}

/* ---- DAGs ---- */

void dag_row_release(struct dag_row *row)
{
	if (!row)
		return;
	free(row->dag_id);
	free(row->file);
	free(row->import_error);
	free(row->spec_json);
	row->dag_id = row->file = row->import_error = row->spec_json = NULL;
}

void dag_rows_free(struct dag_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		dag_row_release(&rows[i]);
	free(rows);
}

static int read_dag(sqlite3_stmt *st, void *p)
{
	struct dag_row *r = p;
	memset(r, 0, sizeof(*r));
	r->dag_id = sql_col_text(st, 0);
	r->file = sql_col_text(st, 1);
	r->paused = sqlite3_column_int(st, 2) != 0;
	r->active = sqlite3_column_int(st, 3) != 0;
	r->last_parsed_at = sql_col_i64(st, 4);
	r->import_error = sql_col_text(st, 5);
	r->spec_json = sql_col_text(st, 6);
	if (!r->dag_id || !r->file || !r->import_error || !r->spec_json) {
		dag_row_release(r);
		return -1;
	}
	return 0;
}

static void release_dag(void *p)
{
	dag_row_release(p);
}

int dag_store_dag_put(struct dag_store *ds, const struct dag_row *row, struct weir_error *err)
{
	if (!row->dag_id || !*row->dag_id)
		return weir_error_set(err, WEIR_E_INVALID, "store %s: a DAG needs a dag_id",
		                      ds_db_path(ds));
	sqlite3_stmt *st = ds_stmt_get(ds, DS_DAG_PUT, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, row->dag_id);
	sql_bind_text(st, 2, row->file);
	sqlite3_bind_int(st, 3, row->paused);
	sqlite3_bind_int(st, 4, row->active);
	sql_bind_pos_or_null(st, 5, row->last_parsed_at);
	sql_bind_text(st, 6, row->import_error);
	bind_text_or(st, 7, row->spec_json, "{}");
	return step_done(ds, st, "writing a DAG", err);
}

int dag_store_dag_exists(struct dag_store *ds, const char *dag_id, bool *exists,
                         struct weir_error *err)
{
	sqlite3_stmt *st = ds_stmt_get(ds, DS_DAG_EXISTS, err);
	int r;

	*exists = false;
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	r = sqlite3_step(st);
	sqlite3_reset(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return db_error(ds, err, "reading a DAG");
	*exists = r == SQLITE_ROW;
	return 0;
}

int dag_store_dag_get(struct dag_store *ds, const char *dag_id, struct dag_row *out,
                      struct weir_error *err)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = ds_stmt_get(ds, DS_DAG_GET, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	char missing[300];
	snprintf(missing, sizeof(missing), "no DAG %s", dag_id ? dag_id : "");
	return ds_collect_one(ds, st, "reading a DAG", sizeof(*out), read_dag, release_dag, out,
	                      missing, err);
}

int dag_store_dag_list(struct dag_store *ds, bool active_only, struct dag_row **rows, size_t *n,
                       struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = ds_stmt_get(ds, active_only ? DS_DAG_LIST_ACTIVE : DS_DAG_LIST, err);
	if (!st)
		return -1;
	return ds_collect(ds, st, "listing DAGs", sizeof(**rows), read_dag, release_dag, rows, n,
	                  err);
}

static int dag_touch(struct dag_store *ds, enum ds_stmt id, const char *dag_id, int flag,
                     struct weir_error *err)
{
	sqlite3_stmt *st = ds_stmt_get(ds, id, err);
	if (!st)
		return -1;
	if (id == DS_DAG_PAUSE) {
		sqlite3_bind_int(st, 1, flag);
		sql_bind_text(st, 2, dag_id);
	} else {
		sql_bind_text(st, 1, dag_id);
	}
	if (step_done(ds, st, "updating a DAG", err) < 0)
		return -1;
	if (sqlite3_changes(ds->db) == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no DAG %s", dag_id ? dag_id : "");
	return 0;
}

int dag_store_dag_set_paused(struct dag_store *ds, const char *dag_id, bool paused,
                             struct weir_error *err)
{
	return dag_touch(ds, DS_DAG_PAUSE, dag_id, paused, err);
}

int dag_store_dag_deactivate(struct dag_store *ds, const char *dag_id, struct weir_error *err)
{
	return dag_touch(ds, DS_DAG_DEACTIVATE, dag_id, 0, err);
}

/* ---- import errors ---- */

void dag_import_error_row_release(struct dag_import_error_row *row)
{
	if (!row)
		return;
	free(row->file);
	free(row->message);
	row->file = row->message = NULL;
}

void dag_import_error_rows_free(struct dag_import_error_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		dag_import_error_row_release(&rows[i]);
	free(rows);
}

static int read_ie(sqlite3_stmt *st, void *p)
{
	struct dag_import_error_row *r = p;
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	r->file = sql_col_text(st, 1);
	r->time = sql_col_i64(st, 2);
	r->message = sql_col_text(st, 3);
	if (!r->file || !r->message) {
		dag_import_error_row_release(r);
		return -1;
	}
	return 0;
}

static void release_ie(void *p)
{
	dag_import_error_row_release(p);
}

int dag_store_import_error_set(struct dag_store *ds, const char *file, int64_t time,
                               const char *message, struct weir_error *err)
{
	sqlite3_stmt *st = ds_stmt_get(ds, DS_IE_SET, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, file);
	sqlite3_bind_int64(st, 2, time);
	sql_bind_text(st, 3, message);
	return step_done(ds, st, "recording an import error", err);
}

int dag_store_import_error_clear(struct dag_store *ds, const char *file, struct weir_error *err)
{
	sqlite3_stmt *st = ds_stmt_get(ds, DS_IE_CLEAR, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, file);
	return step_done(ds, st, "clearing an import error", err);
}

int dag_store_import_error_list(struct dag_store *ds, struct dag_import_error_row **rows, size_t *n,
                                struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_IE_LIST, err);
	if (!st)
		return -1;
	return ds_collect(ds, st, "listing import errors", sizeof(**rows), read_ie, release_ie,
	                  rows, n, err);
}

/* ---- runs ---- */

void dag_note_release(struct dag_note *n)
{
	if (!n)
		return;
	free(n->text);
	free(n->user);
	memset(n, 0, sizeof(*n));
}

/* The note of a row read with NOTE_COLS from column `i` (none where the
 * statement has no such column, or the row no note: nothing allocated).
 * -1 out of memory. */
static int read_note(sqlite3_stmt *st, int i, struct dag_note *n)
{
	memset(n, 0, sizeof(*n));
	if (sqlite3_column_count(st) <= i || sqlite3_column_type(st, i) == SQLITE_NULL)
		return 0;
	n->text = sql_col_text(st, i);
	n->user = sql_col_text(st, i + 1);
	n->at = sql_col_i64(st, i + 2);
	if (!n->text || !n->user) {
		dag_note_release(n);
		return -1;
	}
	return 0;
}

/* The characters of a UTF-8 text: its bytes that begin one. */
static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* Sets or removes (`text` NULL or "") the note of the row that `exists`
 * finds (its key bound at 1..), by `set` or `del`, the key bound at 4..
 * (DS_*_SET_NOTE's and DS_*_DEL_NOTE's layout: content, set_by, set_at,
 * then the key).  `missing` names the row for the 404. */
static int put_note(struct dag_store *ds, enum ds_stmt exists, enum ds_stmt set, enum ds_stmt del,
                    const char *const key[3], int map_index, const char *text, const char *user,
                    int64_t at, const char *missing, struct weir_error *err)
{
	bool ti = exists == DS_TI_EXISTS, found;
	size_t chars = text ? utf8_chars(text) : 0;
	sqlite3_stmt *st;
	int code;

	if (chars > DAG_NOTE_MAX)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "note: at most %d characters (this one has %zu)",
		                      DAG_NOTE_MAX, chars);
	if (!(st = ds_stmt_get(ds, exists, err)))
		return -1;
	for (int k = 0; k < (ti ? 3 : 2); k++)
		sql_bind_text(st, k + 1, key[k]);
	if (ti)
		sqlite3_bind_int(st, 4, map_index);
	code = sqlite3_step(st);
	found = code == SQLITE_ROW;
	sqlite3_reset(st);
	if (code != SQLITE_ROW && code != SQLITE_DONE)
		return db_error(ds, err, "looking for a note's row");
	if (!found)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "%s", missing);
	if (!(st = ds_stmt_get(ds, text && *text ? set : del, err)))
		return -1;
	if (text && *text) {
		sql_bind_text(st, 1, text);
		sql_bind_text(st, 2, user);
		sql_bind_pos_or_null(st, 3, at);
	}
	for (int k = 0; k < (ti ? 3 : 2); k++)
		sql_bind_text(st, k + 4, key[k]);
	if (ti)
		sqlite3_bind_int(st, 7, map_index);
	return ds_step_write(ds, st, "writing a note", NULL, missing, err);
}

void dag_run_row_release(struct dag_run_row *row)
{
	if (!row)
		return;
	dag_note_release(&row->note);
	free(row->dag_id);
	free(row->run_id);
	free(row->conf);
	free(row->reason);
	row->dag_id = row->run_id = row->conf = row->reason = NULL;
}

void dag_run_rows_free(struct dag_run_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		dag_run_row_release(&rows[i]);
	free(rows);
}

static int read_run(sqlite3_stmt *st, void *p)
{
	struct dag_run_row *r = p;
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	r->dag_id = sql_col_text(st, 1);
	r->run_id = sql_col_text(st, 2);
	bool known = col_run_state(st, 3, &r->state);
	col_name(st, 4, r->run_type);
	r->logical_date = sqlite3_column_int64(st, 5);
	r->data_interval_start = sql_col_i64(st, 6);
	r->data_interval_end = sql_col_i64(st, 7);
	r->conf = sql_col_text(st, 8);
	r->reason = sql_col_text(st, 9);
	r->queued_at = sql_col_i64(st, 10);
	r->start_date = sql_col_i64(st, 11);
	r->end_date = sql_col_i64(st, 12);
	if (read_note(st, 13, &r->note) < 0 || !r->dag_id || !r->run_id || !r->conf || !r->reason ||
	    !known) {
		dag_run_row_release(r);
		return known ? -1 : -2;
	}
	return 0;
}

static void release_run(void *p)
{
	dag_run_row_release(p);
}

int dag_store_run_insert(struct dag_store *ds, const struct dag_run_row *row, int64_t *id,
                         struct weir_error *err)
{
	if (check_run_state(ds, row->state, err) < 0 ||
	    check_name(ds, "run type", row->run_type, run_types, COUNT(run_types), err) < 0)
		return -1;
	if (!row->dag_id || !*row->dag_id || !row->run_id || !*row->run_id)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "store %s: a DAG run needs a dag_id and a run_id",
		                      ds_db_path(ds));
	sqlite3_stmt *st = ds_stmt_get(ds, DS_RUN_INSERT, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, row->dag_id);
	sql_bind_text(st, 2, row->run_id);
	sql_bind_text(st, 3, dag_run_state_name(row->state));
	sql_bind_text(st, 4, row->run_type);
	sqlite3_bind_int64(st, 5, row->logical_date);
	sql_bind_pos_or_null(st, 6, row->data_interval_start);
	sql_bind_pos_or_null(st, 7, row->data_interval_end);
	bind_text_or(st, 8, row->conf, "{}");
	sql_bind_text(st, 9, row->reason);
	sql_bind_pos_or_null(st, 10, row->queued_at);
	sql_bind_pos_or_null(st, 11, row->start_date);
	sql_bind_pos_or_null(st, 12, row->end_date);
	char dup[400], missing[300];
	snprintf(dup, sizeof(dup),
	         "DAG %s already has a run with run_id %s or logical date %" PRId64, row->dag_id,
	         row->run_id, row->logical_date);
	snprintf(missing, sizeof(missing), "no DAG %s", row->dag_id);
	if (ds_step_write(ds, st, "inserting a DAG run", dup, missing, err) < 0)
		return -1;
	if (id)
		*id = sqlite3_last_insert_rowid(ds->db);
	return 0;
}

int dag_store_run_get(struct dag_store *ds, const char *dag_id, const char *run_id,
                      struct dag_run_row *out, struct weir_error *err)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = ds_stmt_get(ds, DS_RUN_GET, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	sql_bind_text(st, 2, run_id);
	char missing[400];
	snprintf(missing, sizeof(missing), "no run %s of DAG %s", run_id ? run_id : "",
	         dag_id ? dag_id : "");
	return ds_collect_one(ds, st, "reading a DAG run", sizeof(*out), read_run, release_run, out,
	                      missing, err);
}

int dag_store_run_prev_success(struct dag_store *ds, const char *dag_id, int64_t before,
                               struct dag_run_row *out, bool *found, struct weir_error *err)
{
	memset(out, 0, sizeof(*out));
	*found = false;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_RUN_PREV_SUCCESS, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	sqlite3_bind_int64(st, 2, before);
	struct weir_error e = {0};
	if (ds_collect_one(ds, st, "reading a DAG run", sizeof(*out), read_run, release_run, out,
	                   "none", &e) == 0) {
		*found = true;
		return 0;
	}
	if (e.kind == WEIR_E_NOT_FOUND)
		return 0;
	if (err)
		*err = e;
	return -1;
}

static int bind_run_query(struct dag_store *ds, sqlite3_stmt *st, const struct dag_run_query *q,
                          struct weir_error *err)
{
	if (q->by_state && check_run_state(ds, q->state, err) < 0)
		return -1;
	sql_bind_text_or_null(st, 1, q->dag_id);
	sql_bind_text_or_null(st, 2, q->by_state ? dag_run_state_name(q->state) : NULL);
	return 0;
}

int dag_store_run_list(struct dag_store *ds, const struct dag_run_query *q,
                       struct dag_run_row **rows, size_t *n, struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	bool one = q->dag_id && *q->dag_id; /* "" binds NULL: every DAG */
	enum ds_stmt id = one ? (q->newest_first ? DS_DAG_RUNS_DESC : DS_DAG_RUNS_ASC)
	                      : (q->newest_first ? DS_RUN_LIST_DESC : DS_RUN_LIST_ASC);
	sqlite3_stmt *st = ds_stmt_get(ds, id, err);
	if (!st || bind_run_query(ds, st, q, err) < 0)
		return -1;
	sqlite3_bind_int(st, 3, q->limit > 0 ? q->limit : -1);
	sqlite3_bind_int(st, 4, q->offset > 0 ? q->offset : 0);
	return ds_collect(ds, st, "listing DAG runs", sizeof(**rows), read_run, release_run, rows,
	                  n, err);
}

int dag_store_run_count(struct dag_store *ds, const struct dag_run_query *q, int64_t *count,
                        struct weir_error *err)
{
	*count = 0;
	enum ds_stmt id = !(q->dag_id && *q->dag_id) ? DS_RUN_COUNT
	                  : q->by_state              ? DS_DAG_RUN_COUNT_STATE
	                                             : DS_DAG_RUN_COUNT;
	sqlite3_stmt *st = ds_stmt_get(ds, id, err);
	if (!st || bind_run_query(ds, st, q, err) < 0)
		return -1;
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		*count = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (r != SQLITE_ROW)
		return db_error(ds, err, "counting DAG runs");
	return 0;
}

int dag_store_runs_active(struct dag_store *ds, struct dag_run_row **rows, size_t *n,
                          struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_RUNS_ACTIVE, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_run_state_name(DAG_RUN_QUEUED));
	sql_bind_text(st, 2, dag_run_state_name(DAG_RUN_RUNNING));
	return ds_collect(ds, st, "listing active DAG runs", sizeof(**rows), read_run, release_run,
	                  rows, n, err);
}

int dag_store_run_queued_any(struct dag_store *ds, bool *any, struct weir_error *err)
{
	*any = false;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_RUN_QUEUED_ANY, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_run_state_name(DAG_RUN_QUEUED));
	int r = sqlite3_step(st);
	*any = r == SQLITE_ROW;
	sqlite3_reset(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return db_error(ds, err, "looking for queued DAG runs");
	return 0;
}

int dag_store_run_update(struct dag_store *ds, const struct dag_run_row *row,
                         struct weir_error *err)
{
	if (check_run_state(ds, row->state, err) < 0)
		return -1;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_RUN_UPDATE, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_run_state_name(row->state));
	sql_bind_text(st, 2, row->reason);
	sql_bind_pos_or_null(st, 3, row->queued_at);
	sql_bind_pos_or_null(st, 4, row->start_date);
	sql_bind_pos_or_null(st, 5, row->end_date);
	sql_bind_text(st, 6, row->dag_id);
	sql_bind_text(st, 7, row->run_id);
	if (step_done(ds, st, "updating a DAG run", err) < 0)
		return -1;
	if (sqlite3_changes(ds->db) == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no run %s of DAG %s",
		                      row->run_id ? row->run_id : "",
		                      row->dag_id ? row->dag_id : "");
	return 0;
}

int dag_store_run_set_note(struct dag_store *ds, const char *dag_id, const char *run_id,
                           const char *text, const char *user, int64_t at, struct weir_error *err)
{
	const char *key[3] = {dag_id, run_id, NULL};
	char missing[400];

	snprintf(missing, sizeof(missing), "no run %s of DAG %s", run_id ? run_id : "",
	         dag_id ? dag_id : "");
	return put_note(ds, DS_RUN_EXISTS, DS_RUN_SET_NOTE, DS_RUN_DEL_NOTE, key, 0, text, user, at,
	                missing, err);
}

int dag_store_ti_set_note(struct dag_store *ds, const char *dag_id, const char *run_id,
                          const char *task_id, int map_index, const char *text, const char *user,
                          int64_t at, struct weir_error *err)
{
	const char *key[3] = {dag_id, run_id, task_id};
	char missing[500];

	snprintf(missing, sizeof(missing), "no task instance %s (map_index %d) in run %s of DAG %s",
	         task_id ? task_id : "", map_index, run_id ? run_id : "", dag_id ? dag_id : "");
	return put_note(ds, DS_TI_EXISTS, DS_TI_SET_NOTE, DS_TI_DEL_NOTE, key, map_index, text,
	                user, at, missing, err);
}

int dag_store_run_delete(struct dag_store *ds, const char *dag_id, const char *run_id,
                         struct weir_error *err)
{
	sqlite3_stmt *st = ds_stmt_get(ds, DS_RUN_DELETE, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	sql_bind_text(st, 2, run_id);
	if (step_done(ds, st, "deleting a DAG run", err) < 0)
		return -1;
	if (sqlite3_changes(ds->db) == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no run %s of DAG %s",
		                      run_id ? run_id : "", dag_id ? dag_id : "");
	return 0;
}

/* ---- task instances ---- */

void dag_ti_row_release(struct dag_ti_row *row)
{
	if (!row)
		return;
	free(row->dag_id);
	free(row->run_id);
	free(row->task_id);
	free(row->pool);
	free(row->rendered_command);
	free(row->outputs);
	free(row->reason);
	dag_note_release(&row->note);
	row->dag_id = row->run_id = row->task_id = row->pool = NULL;
	row->rendered_command = row->outputs = row->reason = NULL;
}

void dag_ti_rows_free(struct dag_ti_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		dag_ti_row_release(&rows[i]);
	free(rows);
}

static int read_ti(sqlite3_stmt *st, void *p)
{
	struct dag_ti_row *r = p;
	memset(r, 0, sizeof(*r));
	r->dag_id = sql_col_text(st, 0);
	r->run_id = sql_col_text(st, 1);
	r->task_id = sql_col_text(st, 2);
	r->map_index = sqlite3_column_int(st, 3);
	bool known = ds_col_ti_state(st, 4, &r->state);
	r->try_number = sqlite3_column_int(st, 5);
	r->max_tries = sqlite3_column_int(st, 6);
	r->job_id = sql_col_i64(st, 7);
	r->pool = sql_col_text(st, 8);
	r->pool_slots = sqlite3_column_int(st, 9);
	r->priority = sqlite3_column_int(st, 10);
	r->queued_at = sql_col_i64(st, 11);
	r->start_date = sql_col_i64(st, 12);
	r->end_date = sql_col_i64(st, 13);
	r->next_retry_at = sql_col_i64(st, 14);
	r->rendered_command = sql_col_text(st, 15);
	r->outputs = sql_col_text(st, 16);
	r->reason = sql_col_text(st, 17);
	r->rowid = sqlite3_column_int64(st, 18);
	if (read_note(st, 19, &r->note) < 0 || !r->dag_id || !r->run_id || !r->task_id ||
	    !r->pool || !r->rendered_command || !r->outputs || !r->reason || !known) {
		dag_ti_row_release(r);
		return known ? -1 : -2;
	}
	return 0;
}

static void release_ti(void *p)
{
	dag_ti_row_release(p);
}

/* Binds the fields every TI write carries, from index `at`. */
static void bind_ti_fields(sqlite3_stmt *st, int at, const struct dag_ti_row *row)
{
	sql_bind_text(st, at, dag_ti_state_name(row->state));
	sqlite3_bind_int(st, at + 1, row->try_number);
	sqlite3_bind_int(st, at + 2, row->max_tries);
	sql_bind_pos_or_null(st, at + 3, row->job_id);
	bind_text_or(st, at + 4, row->pool, "default_pool");
	sqlite3_bind_int(st, at + 5, row->pool_slots > 0 ? row->pool_slots : 1);
	sqlite3_bind_int(st, at + 6, row->priority);
	sql_bind_pos_or_null(st, at + 7, row->queued_at);
	sql_bind_pos_or_null(st, at + 8, row->start_date);
	sql_bind_pos_or_null(st, at + 9, row->end_date);
	sql_bind_pos_or_null(st, at + 10, row->next_retry_at);
	sql_bind_text(st, at + 11, row->rendered_command);
	sql_bind_text_or_null(st, at + 12, row->outputs);
	sql_bind_text(st, at + 13, row->reason);
}

void ds_ti_name(char *buf, size_t size, const char *what, const char *dag_id, const char *run_id,
                const char *task_id, int map_index)
{
	if (map_index >= 0)
		snprintf(buf, size, "%s task %s[%d] of run %s of DAG %s", what,
		         task_id ? task_id : "", map_index, run_id ? run_id : "",
		         dag_id ? dag_id : "");
	else
		snprintf(buf, size, "%s task %s of run %s of DAG %s", what, task_id ? task_id : "",
		         run_id ? run_id : "", dag_id ? dag_id : "");
}

int dag_store_ti_insert(struct dag_store *ds, const struct dag_ti_row *row, struct weir_error *err)
{
	if (ds_check_ti_state(ds, row->state, err) < 0)
		return -1;
	if (!row->task_id || !*row->task_id)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "store %s: a task instance needs a task_id", ds_db_path(ds));
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TI_INSERT, err);
	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, row->dag_id, row->run_id, row->task_id, row->map_index);
	bind_ti_fields(st, 5, row);
	int code = ds_step(ds, st);
	if (!code)
		return 0;
	char dup[400], missing[500];
	ds_ti_name(dup, sizeof(dup), "already have", row->dag_id, row->run_id, row->task_id,
	           row->map_index);
	if (row->job_id > 0)
		snprintf(missing, sizeof(missing), "no run %s of DAG %s, or no job %" PRId64,
		         row->run_id ? row->run_id : "", row->dag_id ? row->dag_id : "",
		         row->job_id);
	else
		snprintf(missing, sizeof(missing), "no run %s of DAG %s",
		         row->run_id ? row->run_id : "", row->dag_id ? row->dag_id : "");
	return ds_write_failed(ds, code, "inserting a task instance", dup, missing, err);
}

int dag_store_ti_get(struct dag_store *ds, const char *dag_id, const char *run_id,
                     const char *task_id, int map_index, struct dag_ti_row *out,
                     struct weir_error *err)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TI_GET, err);
	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, dag_id, run_id, task_id, map_index);
	char missing[400];
	ds_ti_name(missing, sizeof(missing), "no", dag_id, run_id, task_id, map_index);
	return ds_collect_one(ds, st, "reading a task instance", sizeof(*out), read_ti, release_ti,
	                      out, missing, err);
}

int dag_store_tis_of_run(struct dag_store *ds, const char *dag_id, const char *run_id,
                         struct dag_ti_row **rows, size_t *n, struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TIS_OF_RUN, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	sql_bind_text(st, 2, run_id);
	return ds_collect(ds, st, "listing task instances", sizeof(**rows), read_ti, release_ti,
	                  rows, n, err);
}

int dag_store_tis_of_latest_runs(struct dag_store *ds, const char *dag_id, int n_runs,
                                 struct dag_ti_row **rows, size_t *n, struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TIS_OF_LATEST_RUNS, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	sqlite3_bind_int(st, 2, n_runs > 0 ? n_runs : -1);
	return ds_collect(ds, st, "listing the task instances of a DAG's runs", sizeof(**rows),
	                  read_ti, release_ti, rows, n, err);
}

/* A TI's key and try with its job's start. */
struct ti_of_job {
	struct dag_ti_row ti;
	int64_t started_at;
};

static int read_ti_key_of_job(sqlite3_stmt *st, void *p)
{
	struct ti_of_job *r = p;

	memset(r, 0, sizeof *r);
	r->ti.dag_id = sql_col_text(st, 0);
	r->ti.run_id = sql_col_text(st, 1);
	r->ti.task_id = sql_col_text(st, 2);
	r->ti.map_index = sqlite3_column_int(st, 3);
	r->ti.try_number = sqlite3_column_int(st, 4);
	r->started_at = sql_col_i64(st, 5);
	if (!r->ti.dag_id || !r->ti.run_id || !r->ti.task_id) {
		dag_ti_row_release(&r->ti);
		return -1;
	}
	return 0;
}

int dag_store_ti_key_by_job(struct dag_store *ds, int64_t job_id, struct dag_ti_row *out,
                            int64_t *job_started_at, struct weir_error *err)
{
	struct ti_of_job r = {0};
	char missing[100];
	int rc;

	memset(out, 0, sizeof(*out));
	*job_started_at = 0;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TI_KEY_BY_JOB, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	snprintf(missing, sizeof(missing), "no task instance runs as job %" PRId64, job_id);
	rc = ds_collect_one(ds, st, "finding a job's task instance", sizeof(r), read_ti_key_of_job,
	                    release_ti, &r, missing, err);
	if (rc == 0) {
		*out = r.ti;
		*job_started_at = r.started_at;
	}
	return rc;
}

int dag_store_tis_in_state(struct dag_store *ds, enum dag_ti_state state, struct dag_ti_row **rows,
                           size_t *n, struct weir_error *err)
{
	*rows = NULL;
	*n = 0;
	if (ds_check_ti_state(ds, state, err) < 0)
		return -1;
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TIS_IN_STATE, err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_ti_state_name(state));
	return ds_collect(ds, st, "listing task instances by state", sizeof(**rows), read_ti,
	                  release_ti, rows, n, err);
}

/* Steps st, handing each row's first two columns to fn (texts; the int
 * 0); st reset. */
static int each_row(struct dag_store *ds, sqlite3_stmt *st, const char *what, dag_store_row3_fn fn,
                    void *arg, struct weir_error *err)
{
	int r;

	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *a = (const char *)sqlite3_column_text(st, 0);
		const char *b = (const char *)sqlite3_column_text(st, 1);
		fn(arg, a ? a : "", b ? b : "", 0);
	}
	sqlite3_reset(st);
	return r == SQLITE_DONE ? 0 : db_error(ds, err, what);
}

/* A column's text, borrowed until the next step; "" for NULL. */
static const char *borrowed_text(sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);
	return s ? s : "";
}

int dag_store_pool_use(struct dag_store *ds, dag_store_use_fn fn, void *arg, struct weir_error *err)
{
	sqlite3_stmt *st = ds_stmt_get(ds, DS_POOL_USE, err);
	int r;

	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_ti_state_name(DAG_TI_QUEUED));
	sql_bind_text(st, 2, dag_ti_state_name(DAG_TI_RUNNING));
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct dag_ti_use u = {.dag_id = borrowed_text(st, 0),
		                       .pool = borrowed_text(st, 1),
		                       .pool_slots = sqlite3_column_int(st, 2),
		                       .run_id = borrowed_text(st, 3),
		                       .task_id = borrowed_text(st, 4)};
		fn(arg, &u);
	}
	sqlite3_reset(st);
	return r == SQLITE_DONE ? 0 : db_error(ds, err, "counting the pools' use");
}

int dag_store_runs_running(struct dag_store *ds, dag_store_row3_fn fn, void *arg,
                           struct weir_error *err)
{
	sqlite3_stmt *st = ds_stmt_get(ds, DS_RUNS_RUNNING, err);

	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_run_state_name(DAG_RUN_RUNNING));
	return each_row(ds, st, "listing running DAG runs", fn, arg, err);
}

/* Steps a TI's UPDATE (its key bound); WEIR_E_NOT_FOUND when no row
 * changed. */
static int ti_write(struct dag_store *ds, sqlite3_stmt *st, const struct dag_ti_row *row,
                    struct weir_error *err)
{
	char missing[500];
	int code = ds_step(ds, st);

	if (code) {
		snprintf(missing, sizeof(missing), "no job %" PRId64, row->job_id);
		return ds_write_failed(ds, code, "updating a task instance", NULL, missing, err);
	}
	if (sqlite3_changes(ds->db) == 0) {
		ds_ti_name(missing, sizeof(missing), "no", row->dag_id, row->run_id, row->task_id,
		           row->map_index);
		return weir_error_set(err, WEIR_E_NOT_FOUND, "%s", missing);
	}
	return 0;
}

/* Steps a TI's UPDATE by its row id (bound at `at`, the key before it):
 * 1 when it wrote the row; 0 when no row has that id and key (the caller
 * writes by the key then); -1 with err. */
static int ti_write_at(struct dag_store *ds, sqlite3_stmt *st, int at, const struct dag_ti_row *row,
                       struct weir_error *err)
{
	char missing[500];
	int code;

	sqlite3_bind_int64(st, at, row->rowid);
	if ((code = ds_step(ds, st))) {
		snprintf(missing, sizeof(missing), "no job %" PRId64, row->job_id);
		return ds_write_failed(ds, code, "updating a task instance", NULL, missing, err);
	}
	return sqlite3_changes(ds->db) > 0;
}

int dag_store_ti_update(struct dag_store *ds, const struct dag_ti_row *row, struct weir_error *err)
{
	if (ds_check_ti_state(ds, row->state, err) < 0)
		return -1;
	if (row->rowid > 0) {
		sqlite3_stmt *st = ds_stmt_get(ds, DS_TI_UPDATE_AT, err);
		int rc;
		if (!st)
			return -1;
		bind_ti_fields(st, 1, row);
		sql_bind_ti_key(st, 15, row->dag_id, row->run_id, row->task_id, row->map_index);
		if ((rc = ti_write_at(ds, st, 19, row, err)) != 0)
			return rc < 0 ? -1 : 0;
	}
	sqlite3_stmt *st = ds_stmt_get(ds, DS_TI_UPDATE, err);
	if (!st)
		return -1;
	bind_ti_fields(st, 1, row);
	sql_bind_ti_key(st, 15, row->dag_id, row->run_id, row->task_id, row->map_index);
	return ti_write(ds, st, row, err);
}

/* dag_store_ti_set_state's values and key, from 1 */
static void bind_ti_state(sqlite3_stmt *st, const struct dag_ti_row *row)
{
	sql_bind_text(st, 1, dag_ti_state_name(row->state));
	sqlite3_bind_int(st, 2, row->max_tries);
	sql_bind_pos_or_null(st, 3, row->queued_at);
	sql_bind_pos_or_null(st, 4, row->start_date);
	sql_bind_pos_or_null(st, 5, row->end_date);
	sql_bind_pos_or_null(st, 6, row->next_retry_at);
	sql_bind_text_or_null(st, 7, row->outputs);
	sql_bind_text(st, 8, row->reason);
	sql_bind_ti_key(st, 9, row->dag_id, row->run_id, row->task_id, row->map_index);
}

int dag_store_ti_set_state(struct dag_store *ds, const struct dag_ti_row *row,
                           struct weir_error *err)
{
	if (ds_check_ti_state(ds, row->state, err) < 0)
		return -1;
	for (int by_id = row->rowid > 0; by_id >= 0; by_id--) {
		sqlite3_stmt *st =
		    ds_stmt_get(ds, by_id ? DS_TI_SET_STATE_AT : DS_TI_SET_STATE, err);
		int rc;
		if (!st)
			return -1;
		bind_ti_state(st, row);
		if (!by_id)
			return ti_write(ds, st, row, err);
		if ((rc = ti_write_at(ds, st, 13, row, err)) != 0)
			return rc < 0 ? -1 : 0;
	}
	return 0;
}
