/* recovery.c: a restarted server picks its runs up again
 * (dag_manager_recover() of server/dag_manager.h).
 *
 * Owns dm->recovery (a run that waits for its DAG file); otherwise
 * recovery is the live path run once more.  The jobs that
 * ended while the server was down end their TIs now, from the jobs'
 * stored results (the job manager's recovery ran first), and every active
 * run is evaluated as it would have been; a TI whose job still runs is
 * left to it.  A run whose DAG file is missing waits; the scan that loads
 * the DAG again settles it the same way (a job that ended meanwhile could
 * not reach its TI: its end is applied then, once).
 */
#include "server/dag_manager.h"
#include "server/dag_manager/dm_internal.h"

#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "store/dag_store.h"

int dm_settle_runs(struct dag_manager *dm, struct weir_error *err)
{
	struct dag_run_row *runs = NULL;
	size_t n = 0;

	if (dag_store_runs_active(dm->ds, &runs, &n, err) < 0)
		return -1;
	dm->recovery.wait_dag = false;
	for (size_t i = 0; i < n; i++) {
		struct dag_ti_row *tis = NULL;
		size_t nt = 0;
		struct dag_event ev = {.kind = DAG_EV_EVALUATE};
		struct weir_error e2 = {0};

		if (!dm_entry_by_id(dm, runs[i].dag_id)) {
			log_warn("DAG %s run %s: the DAG's file is gone; the run waits for it",
			         runs[i].dag_id, runs[i].run_id);
			dm->recovery.wait_dag = true;
			continue;
		}
		/* jobs that ended while their end could not be applied settle
		 * their TIs */
		if (dag_store_tis_of_run(dm->ds, runs[i].dag_id, runs[i].run_id, &tis, &nt, &e2) ==
		    0) {
			for (size_t k = 0; k < nt; k++) {
				struct job_row job = {0};
				if (!dag_ti_state_is_active(tis[k].state) || tis[k].job_id <= 0)
					continue;
				if (store_job_get(dm->store, tis[k].job_id, &job, NULL) == 0 &&
				    job_state_is_final(job.state))
					dm_on_job_end(dm, job.id, job.state, job.cause,
					              job.exit_code, job.reason, job.started_at);
				job_row_release(&job);
			}
			dag_ti_rows_free(tis, nt);
		}
		if (dm_run_event(dm, runs[i].dag_id, runs[i].run_id, &ev, &e2) < 0)
			log_error("recovery: DAG %s run %s: %s", runs[i].dag_id, runs[i].run_id,
			          e2.msg);
	}
	dag_run_rows_free(runs, n);
	return 0;
}

int dag_manager_recover(struct dag_manager *dm, struct weir_error *err)
{
	dm_touch(dm);
	if (dm_settle_runs(dm, err) < 0)
		return -1;
	dm->turn.last_pass_ms = clock_now_ms();
	return 0;
}
