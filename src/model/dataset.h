/* dataset.h: datasets, as Airflow has them: a URI that a task's success
 * updates (the task's `outlets`) and that a DAG may be scheduled on
 * (`schedule: [URI, ...]`), and the settings of a `trigger_dag:` task,
 * which starts a run of another DAG (docs/dags.md).
 *
 * A URI is text: 1 to DATASET_URI_MAX printable ASCII characters, no
 * spaces, not of the scheme `airflow` (Airflow keeps that one to itself).
 * Two URIs are one dataset when their text is the same.
 *
 * Ownership: a dag_trigger owns its strings and its conf reference;
 * dag_trigger_destroy() frees it.
 */
#ifndef WEIR_MODEL_DATASET_H
#define WEIR_MODEL_DATASET_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/error.h"
#include "model/states.h"

#define DATASET_URI_MAX 3000
#define DAG_TRIGGER_DEFAULT_POKE_S 60

/* 0, or -1 with err (WEIR_E_INVALID) "expected ..., got ..."; the caller
 * adds the field. */
int dataset_uri_check(const char *uri, struct weir_error *err);

/* A trigger_dag: task. */
struct dag_trigger {
	char *dag_id;            /* the DAG it starts a run of */
	json_t *conf;            /* a mapping; its strings (nested too) are templates */
	char *run_id;            /* a template; NULL: manual__TIME, as the API's trigger */
	bool wait;               /* wait_for_completion: the task ends with the run */
	int64_t poke_interval_s; /* accepted for Airflow's files; the server is told the
	                          * run's end, it does not poll */
	unsigned allowed;        /* bits (1u << enum dag_run_state): success of the task */
	unsigned failed;         /* bits: failure of the task */
};

void dag_trigger_destroy(struct dag_trigger *t);

/* The same keys as the file's (trigger_dag: {...}), read back by the DAG
 * reader.  New reference; NULL when out of memory. */
json_t *dag_trigger_to_json(const struct dag_trigger *t);

#endif
