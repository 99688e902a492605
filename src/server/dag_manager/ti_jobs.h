/* ti_jobs.h: task instances as jobs (ti_jobs.c): a scheduled TI's try
 * handed to the job manager, and a job's end back to its run.
 */
#ifndef WEIR_SERVER_DAG_MANAGER_TI_JOBS_H
#define WEIR_SERVER_DAG_MANAGER_TI_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "server/dag_internal.h"

/* Starts try + 1 of scheduled TI `ti` of a run read in this turn as a job.
 * A TI that cannot become a job fails that try at once, with no retry (the
 * same input would fail again).  A stale copy or a TI no longer scheduled
 * is left alone. */
void dm_start_ti(struct dag_manager *dm, struct run_ctx *rc, size_t ti);

/* The job manager's end callback (job_manager_set_end_callback(); `arg`
 * is the manager): a DAG task's job ended; its try is recorded and the run
 * decides, in a turn of its own.  Jobs of no DAG task are ignored. */
void dm_on_job_end(void *arg, int64_t job_id, const char *state, int exit_code, const char *reason);

#endif
