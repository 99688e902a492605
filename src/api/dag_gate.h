/* dag_gate.h: a request checked against one DAG's access list.
 *
 * The one place that answers a request refused by a DAG's access list
 * (sched/access.h decides; the DAG ops' dag_access gives the list):
 * route_dispatch() asks it for a path naming a DAG, a route whose answer
 * names a DAG (an event log record) asks it for that DAG.
 */
#ifndef WEIR_API_DAG_GATE_H
#define WEIR_API_DAG_GATE_H

#include <stdbool.h>

#include "api/http.h"
#include "api/route_ctx.h"
#include "sched/access.h"

/* The access list of DAG dag_id (borrowed); NULL for none, for a NULL or
 * "~" dag_id (every DAG: the lists leave out what the request may not
 * read) or a server without DAG access lists. */
const struct dag_access *dag_gate_access(const struct route_ctx *rc, const char *dag_id);
/* Whether the request may `need` DAG dag_id, answering nothing. */
bool dag_gate_lets(const struct route_ctx *rc, const struct http_request *req, const char *dag_id,
                   enum access_need need);
/* Whether DAG dag_id's access list lets the request `need` it (no list, a
 * NULL or "~" dag_id, a server without DAGs: true); else answers 403
 * naming the DAG, the user and the role, as a problem (`problems`) or in
 * weir's own voice. */
bool dag_gate_allows(const struct route_ctx *rc, struct http_request *req, const char *dag_id,
                     enum access_need need, bool problems);

#endif
