/* dag_dataset_ops.h: the dataset routes' ops (api/dataset_api.h), filled
 * by the DAG manager: datasets, their events, the queues of the DAGs
 * scheduled on them, the events a run consumed.  ctx: the DAG manager. */
#ifndef WEIR_SERVER_DAG_DATASET_OPS_H
#define WEIR_SERVER_DAG_DATASET_OPS_H

#include "api/dataset_api.h"

const struct dataset_api_ops *dag_manager_dataset_ops(void);

#endif
