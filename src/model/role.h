/* role.h: a person's role on the server, as Airflow names them (Viewer,
 * User, Op, Admin), and the role a route asks for; its names (one table,
 * role.c).
 *
 * The roles are ordered: each may do all that the one below it may
 * (docs/security.md, "Roles").  What a role may do is decided by
 * sched/access.h; which role each route asks for is the route table's
 * (api/route_table.h).
 *
 * Pure functions; no allocation.
 */
#ifndef WEIR_MODEL_ROLE_H
#define WEIR_MODEL_ROLE_H

enum weir_role {
	ROLE_NONE = 0, /* no role: a route that asks for none (open, or its own secret) */
	ROLE_VIEWER,   /* reads DAGs, runs, task instances, logs, jobs: not the secrets */
	ROLE_USER,     /* also triggers, clears, marks, pauses DAGs; runs jobs */
	ROLE_OP,       /* also pools, connections, variables, the configuration */
	ROLE_ADMIN,    /* everything (later users and tokens) */
};

#define ROLE_COUNT (ROLE_ADMIN + 1)

/* "Viewer", "User", "Op", "Admin" ("none" for ROLE_NONE); never NULL ("?"
 * out of range). */
const char *role_name(enum weir_role r);
/* A role by its name, case-insensitive ("viewer", "Op"); ROLE_NONE is not
 * one.  0, or -1 when `name` names no role (NULL included); *out unchanged
 * then. */
int role_from_name(const char *name, enum weir_role *out);

#endif
