/* pools.h: the pool pass (pools.c): scheduled TIs of every running run
 * become jobs as their pools and the DAG's max_active_tasks allow
 * (sched/dag_pool.h decides).
 */
#ifndef WEIR_SERVER_DAG_MANAGER_POOLS_H
#define WEIR_SERVER_DAG_MANAGER_POOLS_H

#include "server/dag_internal.h"

/* Nothing to do unless something moved since the last pass
 * (dm->pool_dirty): the rounds of dm_work_pass() that follow a start need
 * no second look.  A TI left waiting gets the pool's reason. */
void dm_pool_pass(struct dag_manager *dm);

#endif
