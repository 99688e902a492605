/* dataset_due.h: runs that start runs, decided: which DAGs scheduled on
 * datasets are due, and how a trigger_dag task that waited ends.
 *
 * A DAG with `schedule: [URI, ...]` is due when every one of its URIs has
 * an event queued for it (Airflow's DatasetDagRunQueue: one row per DAG and
 * URI, made by an event since the DAG's last dataset-triggered run and
 * consumed by the next).  A DAG with a condition (Airflow 2.9's `a | b`,
 * `(a | b) & c`) is due when the condition is true with each URI queued
 * for it read as true, the others as false.  A condition may name a
 * DatasetAlias ({"alias": NAME}, Airflow 2.10): it stands for the datasets
 * that had an event added through it (the links), true when one of them
 * is queued for the DAG, false while the alias has none.  A paused DAG is
 * not due; its queue waits.
 *
 * Pure: everything in, a decision out; nothing read or written elsewhere.
 */
#ifndef WEIR_SCHED_DATASET_DUE_H
#define WEIR_SCHED_DATASET_DUE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "model/states.h"

/* An alias and a dataset an event was added through it for (borrowed). */
struct dataset_alias_link {
	const char *alias;
	const char *uri;
};

/* A DAG scheduled on datasets (borrowed strings). */
struct dataset_dag {
	const char *dag_id;
	const char *const *uris;
	size_t n_uris;
	bool paused;
	/* NULL: every URI; else a condition as model/dag_spec.h's
	 * dataset_condition: a URI string, {"all": [COND, ...]} or
	 * {"any": [COND, ...]}, or {"alias": NAME} */
	const json_t *cond;
	/* the alias links known (all of them, or those of the URIs at hand) */
	const struct dataset_alias_link *links;
	size_t n_links;
};

/* One queued event: the DAG it waits for and the URI it came from. */
struct dataset_queued {
	const char *dag_id;
	const char *uri;
};

/* The indices into `dags` of the DAGs due now, in their order, into
 * due[] (room for n_dags); returns how many. */
size_t dataset_due(const struct dataset_dag *dags, size_t n_dags, const struct dataset_queued *q,
                   size_t n_queued, size_t *due);

/* Whether `cond` (as struct dataset_dag's; NULL: false) is true for
 * `dag_id` with the URIs queued for it true: "all" of none is true, "any"
 * of none false, as Airflow's DatasetAll and DatasetAny; anything else in
 * the tree is false. */
bool dataset_cond_true(const json_t *cond, const char *dag_id, const struct dataset_queued *q,
                       size_t n_queued);

/* dataset_cond_true() with the alias links: an {"alias": NAME} node is
 * true when a URI linked to NAME is queued for `dag_id`. */
bool dataset_cond_true_linked(const json_t *cond, const char *dag_id,
                              const struct dataset_queued *q, size_t n_queued,
                              const struct dataset_alias_link *links, size_t n_links);

/* Whether an event of `uri` is queued for the DAG: the DAG lists the URI,
 * or its condition names an alias that `dag->links` links to the URI. */
bool dataset_event_queues(const struct dataset_dag *dag, const char *uri);

/* How many of the DAG's URIs have an event queued (for the views:
 * "1 of 2 datasets updated"). */
size_t dataset_due_count(const struct dataset_dag *dag, const struct dataset_queued *q,
                         size_t n_queued);

/* A trigger_dag task's end once the run it started ended in `state`:
 * `allowed` and `failed` are bits (1u << enum dag_run_state).  true:
 * success; false: failure (its state in `failed`, or in neither). */
bool dataset_trigger_outcome(unsigned allowed, unsigned failed, enum dag_run_state state);

#endif
