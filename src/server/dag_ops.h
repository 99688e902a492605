/* dag_ops.h: what the two halves of the DAG manager's API ops share
 * (dag_ops.c: DAGs, runs, task instances, import errors; dag_ui_ops.c: a
 * DAG's structure, tries and the web UI's views).  Not for use outside
 * src/server/dag_*.c.
 */
#ifndef WEIR_SERVER_DAG_OPS_H
#define WEIR_SERVER_DAG_OPS_H

#include <stdint.h>

#include "model/dag_spec.h"
#include "server/dag_internal.h"
#include "store/dag_store.h"

/* The logical date of the DAG's next scheduled run (the one after its
 * latest), CRON_NEVER when none is due (paused, removed, unscheduled, past
 * its end); *spec gets the DAG's last good parse (NULL: none). */
int64_t dm_next_dagrun(struct dag_manager *dm, const struct dag_row *row,
                       const struct dag_spec **spec);

#endif
