/* dag_gate.c: a request checked against one DAG's access list (dag_gate.h). */
#include "api/dag_gate.h"

#include <string.h>

#include "api/reply.h"
#include "api/request.h"

const struct dag_access *dag_gate_access(const struct route_ctx *rc, const char *dag_id)
{
	if (!dag_id || !strcmp(dag_id, "~") || !rc->dag_ops || !rc->dag_ops->dag_access)
		return NULL;
	return rc->dag_ops->dag_access(rc->dag_ctx, dag_id);
}

bool dag_gate_lets(const struct route_ctx *rc, const struct http_request *req, const char *dag_id,
                   enum access_need need)
{
	return access_dag_allowed(dag_gate_access(rc, dag_id), http_request_user(req),
	                          http_request_role(req), need);
}

bool dag_gate_allows(const struct route_ctx *rc, struct http_request *req, const char *dag_id,
                     enum access_need need, bool problems)
{
	const char *user = http_request_user(req);
	char msg[300];

	if (dag_gate_lets(rc, req, dag_id, need))
		return true;
	access_denied_text(msg, sizeof msg, dag_id, user, http_request_role(req), need);
	if (problems)
		reply_problem(req, 403, msg);
	else
		reply_status(req, 403, msg);
	return false;
}
