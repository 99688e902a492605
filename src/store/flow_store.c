/* flow_store.c: a run's previous run and a task's instances replaced
 * (flow_store.h), as statements of their own on the store's connection. */
#include "store/flow_store.h"
#include "store/sql.h"

#include <sqlite3.h>
#include <stdlib.h>

int flow_store_previous_run(struct store *s, const char *dag_id, int64_t logical_date,
                            char **run_id, struct weir_error *err)
{
	sqlite3_stmt *st;
	int rc;

	*run_id = NULL;
	st = sql_prepare(store_db(s),
	                 "SELECT run_id FROM dag_runs WHERE dag_id = ? AND logical_date < ?"
	                 " ORDER BY logical_date DESC, id DESC LIMIT 1",
	                 "preparing a statement", err);
	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	sqlite3_bind_int64(st, 2, logical_date);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*run_id = sql_col_text(st, 0);
		rc = *run_id ? SQLITE_DONE : SQLITE_NOMEM;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return weir_error_set(err, WEIR_E_INTERNAL,
		                      "store: reading the previous run of DAG %s", dag_id);
	return 0;
}

int flow_store_task_tis_delete(struct store *s, const char *dag_id, const char *run_id,
                               const char *task_id, struct weir_error *err)
{
	static const char *const sql[] = {
	    "DELETE FROM task_instance_tries WHERE dag_id = ? AND run_id = ? AND task_id = ?",
	    "DELETE FROM task_instances WHERE dag_id = ? AND run_id = ? AND task_id = ?",
	};

	for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
		sqlite3_stmt *st;
		int rc;
		if (!(st = sql_prepare(store_db(s), sql[i], "preparing a statement", err)))
			return -1;
		sql_bind_text(st, 1, dag_id);
		sql_bind_text(st, 2, run_id);
		sql_bind_text(st, 3, task_id);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return weir_error_set(err, WEIR_E_INTERNAL,
			                      "store: deleting the instances of task %s of run %s",
			                      task_id, run_id);
	}
	return 0;
}
