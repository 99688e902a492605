/* clean_store.c: removing old history (clean_store.h).
 *
 * A batch picks its rows into temporary tables first (temp.clean_runs,
 * temp.clean_jobs; the connection's own, never in the file), counts what
 * hangs from them, then deletes: the runs (their task instances, tries and
 * sensor pokes follow by the schema's cascades) with the rows that name a
 * run without a foreign key (notifications, SLA misses, waits of a
 * trigger), then the jobs (tasks, events and sealed specs cascade).  A
 * count is the same pick without a limit and no delete.  Every value is
 * bound: the DAG list is a bound JSON array read by json_each.
 */
#include "store/clean_store.h"

#include <sqlite3.h>
#include <stdlib.h>

#include "model/states.h"
#include "store/sql.h"

static const char what[] = "db clean";

/* a batch reads at most this many times its limit of jobs when it looks
 * for jobs of no DAG */
#define CLEAN_EXAMINE 10

void store_clean_ids_release(struct store_clean_ids *ids)
{
	free(ids->jobs);
	free(ids->runs);
	*ids = (struct store_clean_ids){0};
}

void store_clean_counts_add(struct store_clean_counts *a, const struct store_clean_counts *b)
{
	a->dag_runs += b->dag_runs;
	a->task_instances += b->task_instances;
	a->jobs += b->jobs;
	a->tasks += b->tasks;
	a->events += b->events;
	a->event_log += b->event_log;
}

/* Binds the query's values: ?1 the date, ?2 the DAGs, ?3 the limit (-1:
 * none), ?4..?5 the finished run states, ?6..?8 the ended job states, ?9
 * the jobs' cursor, ?10 how many jobs a batch reads past it (a statement
 * names those it uses; SQLite takes a value for a number it does not name
 * below its highest). */
static void bind_q(sqlite3_stmt *st, const struct store_clean_query *q, int limit)
{
	int n = sqlite3_bind_parameter_count(st);

	if (n >= 1)
		sqlite3_bind_int64(st, 1, q->before_ms);
	if (n >= 2)
		sql_bind_text_or_null(st, 2, q->dags_json);
	if (n >= 3)
		sqlite3_bind_int(st, 3, limit);
	if (n >= 5) {
		sql_bind_text(st, 4, dag_run_state_name(DAG_RUN_SUCCESS));
		sql_bind_text(st, 5, dag_run_state_name(DAG_RUN_FAILED));
	}
	if (n >= 8) {
		sql_bind_text(st, 6, job_state_name(JOB_SUCCEEDED));
		sql_bind_text(st, 7, job_state_name(JOB_FAILED));
		sql_bind_text(st, 8, job_state_name(JOB_KILLED));
	}
	if (n >= 10) {
		sqlite3_bind_int64(st, 9, q->after_job_id);
		sqlite3_bind_int64(st, 10, limit < 0 ? -1 : (int64_t)limit * CLEAN_EXAMINE);
	}
}

/* Runs `sql` (no row) with the query's values bound (bind_q); *changes
 * (NULL: not wanted) the rows it changed. */
static int run_q(sqlite3 *db, const char *sql, const struct store_clean_query *q, int limit,
                 int *changes, struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(db, sql, what, err);

	if (!st)
		return -1;
	bind_q(st, q, limit);
	return sql_run(db, st, what, changes, err);
}

/* The count one SELECT answers (its values bound: bind_q), into *n. */
static int count_of(sqlite3 *db, const char *sql, const struct store_clean_query *q, int limit,
                    int64_t *n, struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(db, sql, what, err);
	int rc;

	if (!st)
		return -1;
	bind_q(st, q, limit);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return sql_error(db, what, err);
	return 0;
}

#define DAGS_OK(col) "(?2 IS NULL OR " col " IN (SELECT value FROM json_each(?2)))"
#define JOB_ENDED "state IN (?6, ?7, ?8)"

/* Picks the batch's runs and jobs into the temporary tables; *more when
 * a limit was reached. */
static int pick(struct store *s, struct store_clean_query *q, int limit, bool *more,
                struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	int runs = 0, jobs = 0;

	*more = false;
	if (run_q(db,
	          "CREATE TEMP TABLE IF NOT EXISTS clean_runs (dag_id TEXT NOT NULL,"
	          " run_id TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (dag_id, run_id))"
	          " WITHOUT ROWID",
	          q, limit, NULL, err) < 0 ||
	    run_q(db, "CREATE TEMP TABLE IF NOT EXISTS clean_jobs (id INTEGER PRIMARY KEY)", q,
	          limit, NULL, err) < 0 ||
	    run_q(db, "DELETE FROM temp.clean_runs", q, limit, NULL, err) < 0 ||
	    run_q(db, "DELETE FROM temp.clean_jobs", q, limit, NULL, err) < 0)
		return -1;
	/* at most `limit` runs, and no more task instances than `limit` in all
	 * (but always the first run, however many it has): a batch's work is
	 * bounded by its TIs and their jobs, not by its runs */
	if (run_q(db,
	          "INSERT INTO temp.clean_runs SELECT dag_id, run_id, id FROM"
	          " (SELECT dag_id, run_id, id, n, sum(n) OVER (ORDER BY id) AS upto FROM"
	          "  (SELECT r.dag_id, r.run_id, r.id, (SELECT count(*) FROM task_instances ti"
	          "    WHERE ti.dag_id = r.dag_id AND ti.run_id = r.run_id) AS n FROM dag_runs r"
	          "   WHERE r.state IN (?4, ?5) AND r.end_date IS NOT NULL AND r.end_date < ?1"
	          "   AND " DAGS_OK("r.dag_id") " ORDER BY r.id LIMIT ?3))"
	                                        " WHERE ?3 < 0 OR upto - n = 0 OR upto <= ?3",
	          q, limit, &runs, err) < 0)
		return -1;
	/* the ended jobs of those runs' task instances and tries */
	if (run_q(db,
	          "INSERT OR IGNORE INTO temp.clean_jobs SELECT j.id FROM jobs j WHERE j." JOB_ENDED
	          " AND j.id IN (SELECT ti.job_id FROM task_instances ti JOIN temp.clean_runs r"
	          " ON ti.dag_id = r.dag_id AND ti.run_id = r.run_id WHERE ti.job_id IS NOT NULL"
	          " UNION SELECT t.job_id FROM task_instance_tries t JOIN temp.clean_runs r"
	          " ON t.dag_id = r.dag_id AND t.run_id = r.run_id WHERE t.job_id IS NOT NULL)",
	          q, limit, NULL, err) < 0)
		return -1;
	/* the jobs of no DAG (with no DAG named only): among the next
	 * CLEAN_EXAMINE * limit jobs above the cursor, those ended before the
	 * date that no TI or try names (both indexed by job); the cursor moves
	 * past them, so a batch never reads the same jobs again */
	if (!q->dags_json) {
		int64_t seen = 0, last = 0;
		if (run_q(
		        db,
		        "INSERT OR IGNORE INTO temp.clean_jobs SELECT j.id FROM (SELECT id, state,"
		        " ended_at FROM jobs WHERE id > ?9 ORDER BY id LIMIT ?10) j WHERE "
		        "j." JOB_ENDED " AND j.ended_at IS NOT NULL AND j.ended_at < ?1"
		        " AND NOT EXISTS (SELECT 1 FROM task_instances ti WHERE ti.job_id = j.id)"
		        " AND NOT EXISTS (SELECT 1 FROM task_instance_tries t WHERE t.job_id = "
		        "j.id)",
		        q, limit, &jobs, err) < 0 ||
		    count_of(db,
		             "SELECT count(*) FROM (SELECT id FROM jobs WHERE id > ?9 ORDER BY id"
		             " LIMIT ?10)",
		             q, limit, &seen, err) < 0 ||
		    count_of(db,
		             "SELECT coalesce(max(id), ?9) FROM (SELECT id FROM jobs WHERE id > ?9"
		             " ORDER BY id LIMIT ?10)",
		             q, limit, &last, err) < 0)
			return -1;
		if (limit > 0) {
			*more = seen >= (int64_t)limit * CLEAN_EXAMINE;
			q->after_job_id = last;
		}
	}
	if (limit > 0 && runs > 0 && runs < limit) {
		/* fewer runs than the limit: the TIs' cap, or the last ones */
		int64_t left = 0;
		if (count_of(
		        db,
		        "SELECT count(*) FROM dag_runs WHERE state IN (?4, ?5) AND end_date IS NOT"
		        " NULL AND end_date < ?1 AND " DAGS_OK("dag_id"),
		        q, -1, &left, err) < 0)
			return -1;
		*more = left > runs;
	}
	*more = *more || (limit > 0 && runs >= limit);
	return 0;
}

/* What hangs from the picked rows, and the event log's records. */
static int count_picked(struct store *s, const struct store_clean_query *q, int limit,
                        struct store_clean_counts *c, struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	int64_t ev = 0;

	if (count_of(db, "SELECT count(*) FROM temp.clean_runs", q, -1, &c->dag_runs, err) < 0 ||
	    count_of(db,
	             "SELECT count(*) FROM task_instances ti JOIN temp.clean_runs r"
	             " ON ti.dag_id = r.dag_id AND ti.run_id = r.run_id",
	             q, -1, &c->task_instances, err) < 0 ||
	    count_of(db, "SELECT count(*) FROM temp.clean_jobs", q, -1, &c->jobs, err) < 0 ||
	    count_of(db,
	             "SELECT count(*) FROM tasks WHERE job_id IN (SELECT id FROM temp.clean_jobs)",
	             q, -1, &c->tasks, err) < 0 ||
	    count_of(db,
	             "SELECT count(*) FROM events WHERE job_id IN (SELECT id FROM temp.clean_jobs)",
	             q, -1, &c->events, err) < 0 ||
	    count_of(db, "SELECT count(*) FROM event_log WHERE dttm < ?1 AND " DAGS_OK("dag_id"), q,
	             -1, &ev, err) < 0)
		return -1;
	c->event_log = limit > 0 && ev > limit ? limit : ev;
	return 0;
}

int store_clean_count(struct store *s, const struct store_clean_query *q,
                      struct store_clean_counts *would, struct weir_error *err)
{
	struct store_clean_query all = *q;
	bool more = false;

	*would = (struct store_clean_counts){0};
	all.after_job_id = 0;
	return pick(s, &all, -1, &more, err) < 0 ? -1 : count_picked(s, &all, -1, would, err);
}

/* The ids one SELECT answers, appended to *v / *n. */
static int collect_ids(sqlite3 *db, const char *sql, int64_t **v, size_t *n, struct weir_error *err)
{
	sqlite3_stmt *st = sql_prepare(db, sql, what, err);
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t *grown = realloc(*v, (*n + 1) * sizeof **v);
		if (!grown) {
			sqlite3_finalize(st);
			return weir_error_set(err, WEIR_E_INTERNAL, "db clean: out of memory");
		}
		*v = grown;
		(*v)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_error(db, what, err);
}

int store_clean_batch(struct store *s, struct store_clean_query *q, int limit,
                      struct store_clean_counts *removed, struct store_clean_ids *ids, bool *more,
                      struct weir_error *err)
{
	sqlite3 *db = store_db(s);
	struct store_clean_counts c = {0};
	int ev = 0;

	*more = false;
	if (limit <= 0)
		return weir_error_set(err, WEIR_E_INVALID, "db clean: a batch of %d rows", limit);
	if (store_write_starts(s, err) < 0 || pick(s, q, limit, more, err) < 0 ||
	    count_picked(s, q, limit, &c, err) < 0 ||
	    collect_ids(db, "SELECT id FROM temp.clean_jobs", &ids->jobs, &ids->n_jobs, err) < 0 ||
	    collect_ids(db, "SELECT id FROM temp.clean_runs", &ids->runs, &ids->n_runs, err) < 0)
		return -1;
	if (run_q(db,
	          "DELETE FROM notifications WHERE (dag_id, run_id) IN"
	          " (SELECT dag_id, run_id FROM temp.clean_runs)",
	          q, limit, NULL, err) < 0 ||
	    run_q(db,
	          "DELETE FROM sla_misses WHERE (dag_id, run_id) IN"
	          " (SELECT dag_id, run_id FROM temp.clean_runs)",
	          q, limit, NULL, err) < 0 ||
	    run_q(db,
	          "DELETE FROM dag_run_triggers WHERE (dag_id, run_id) IN"
	          " (SELECT dag_id, run_id FROM temp.clean_runs)",
	          q, limit, NULL, err) < 0 ||
	    run_q(db,
	          "DELETE FROM dag_runs WHERE (dag_id, run_id) IN"
	          " (SELECT dag_id, run_id FROM temp.clean_runs)",
	          q, limit, NULL, err) < 0 ||
	    run_q(db, "DELETE FROM jobs WHERE id IN (SELECT id FROM temp.clean_jobs)", q, limit,
	          NULL, err) < 0 ||
	    run_q(db,
	          "DELETE FROM event_log WHERE id IN (SELECT id FROM event_log WHERE dttm < ?1"
	          " AND " DAGS_OK("dag_id") " ORDER BY id LIMIT ?3)",
	          q, limit, &ev, err) < 0)
		return -1;
	c.event_log = ev;
	if (ev >= limit)
		*more = true;
	store_clean_counts_add(removed, &c);
	return 0;
}
