/* continuous_due.h: whether a DAG on @continuous is due for its next run
 * (Airflow's ContinuousTimetable), and that run's data interval.
 *
 * A decision, so it lives here rather than beside the cron arithmetic of
 * model/cron.h: the server's continuous pass (server/dag_manager/runs.c)
 * reads whether a run is active and the latest scheduled run's end, and
 * this says what follows.  The grid-based schedules' due runs stay in
 * model/cron.h (schedule_due_runs), which computes dates and decides
 * nothing about runs in flight.
 *
 * Pure: everything in, a decision out.
 */
#ifndef WEIR_SCHED_CONTINUOUS_DUE_H
#define WEIR_SCHED_CONTINUOUS_DUE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/cron.h"

/* Whether a run is due now and its data interval (*iv: its start the
 * logical date).  None while a run of the DAG is `active` (queued or
 * running); the first covers [start, max(start, now)], due once start has
 * come; each next one [the latest scheduled run's interval end
 * (`last_end_ms`), now]; none whose end would pass end_ms.  CRON_NEVER for
 * start_ms (no start date), end_ms (none) and last_end_ms (no scheduled
 * run yet).  *iv is written only where a run may follow (read it only when
 * this returns true). */
bool schedule_continuous_due(int64_t start_ms, int64_t end_ms, int64_t last_end_ms, bool active,
                             int64_t now_ms, struct schedule_interval *iv);

#endif
