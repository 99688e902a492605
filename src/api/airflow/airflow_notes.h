/* airflow_notes.h: Airflow's setNote operations (docs/api.md, "Notes"): a
 * person's note on a DAG run or a task instance, set by
 * PATCH .../setNote {"note": text}, answered with the run or the TI after
 * (their `note` field).  Who set it is the request's user; the DAG manager
 * keeps it (api/dag_api.h's set_run_note and set_ti_note).
 */
#ifndef WEIR_API_AIRFLOW_NOTES_H
#define WEIR_API_AIRFLOW_NOTES_H

#include "api/http.h"

struct route_ctx;
struct route_match;

/* The route table's operations, as Airflow's operationIds name them: a
 * body that is not {"note": a string} is a 400 naming the field; an unknown
 * DAG, run or TI a 404; a note past DAG_NOTE_MAX characters a 400. */
void airflow_set_dag_run_note(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m);
void airflow_set_task_instance_note(const struct route_ctx *rc, struct http_request *req,
                                    const struct route_match *m);
void airflow_set_mapped_task_instance_note(const struct route_ctx *rc, struct http_request *req,
                                           const struct route_match *m);

#endif
