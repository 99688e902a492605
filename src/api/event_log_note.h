/* event_log_note.h: the event log: who changed what, from where, when.
 *
 * Recording (event_log_note): every request that may change state (POST,
 * PUT, PATCH, DELETE) under /api/v1, and the web UI's login and logout, is
 * written once its answer is known, whatever the answer (a refused or
 * failed attempt is recorded with its status too).  The launchers' protocol
 * (/api/v1/launch/...) and the POSTs that only read (the batch list routes)
 * are not: route_table.c marks them.  A record holds Airflow's EventLog
 * fields: `event` (the route table's name, "api.post_dag_run"; for a route
 * without one "api.METHOD TEMPLATE"), `owner` (the user the request
 * authenticated as: a configured user, the UI's login user, or "token";
 * null when it did not authenticate), dag_id, run_id, task_id, map_index,
 * try_number from the path (a run id also from the body's dag_run_id or
 * the answer's), and `extra`: a JSON object's text with method, path,
 * route, status, peer (address:port), `fields` (the names of the body's
 * top-level fields: never their values), and the ids an answer or body
 * names where the path does not (job_id, connection_id, variable_key).
 * No value of the body but those identifiers is ever recorded.
 */
#ifndef WEIR_API_EVENT_LOG_NOTE_H
#define WEIR_API_EVENT_LOG_NOTE_H

#include "api/http.h"
#include "api/observe_api.h"
#include "api/route_table.h"

/* Records the request if it is one the log keeps (see above); `m` is its
 * path's match.  A record that cannot be written is logged as a warning;
 * the answer is unchanged. */
void event_log_note(const struct observe_api_ops *ops, void *ctx, struct http_request *req,
                    const struct route_match *m, int status);

#endif
