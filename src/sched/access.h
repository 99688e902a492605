/* access.h: whether a principal's role may do what a route asks for (the
 * route table's least role of a method, api/route_table.h).
 *
 * Airflow's roles are ordered (model/role.h): a role may do what it asks
 * for and all that the roles below it may.  A route asking for ROLE_NONE
 * is open to anyone the route's entry admits.
 *
 * Pure functions; no allocation.
 */
#ifndef WEIR_SCHED_ACCESS_H
#define WEIR_SCHED_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "model/dag_access.h"
#include "model/role.h"

/* Whether `have` (the request's role; ROLE_NONE: none was given) may do
 * what asks for `need`: true when `need` is ROLE_NONE, else when `have` is
 * `need` or above.  A role out of range may do nothing that asks for one. */
bool access_allowed(enum weir_role have, enum weir_role need);

/* What a request asks of one DAG: to read it (GET, HEAD) or to act on it
 * (any other method). */
enum access_need {
	ACCESS_READ,
	ACCESS_EDIT,
};

/* Whether `user` (who the request authenticated as; NULL or "" for none),
 * of role `role`, may `need` on a DAG whose access list is `a` (NULL, or
 * not set: true, the roles alone decide).  Where the DAG has a list: an
 * Admin may all; anyone else only what the list's entries for them give:
 * the entries naming their user (exactly) and those naming their role or a
 * role below it (a role's name in any case), together.  This narrows,
 * never widens: the route's least role (access_allowed()) is checked
 * besides, so an entry that gives a Viewer `edit` lets it trigger nothing. */
bool access_dag_allowed(const struct dag_access *a, const char *user, enum weir_role role,
                        enum access_need need);
/* The text of a refusal by a DAG's access list, into buf (at most size
 * bytes, NUL-terminated): "DAG d: its access list does not let ann (role
 * User) read it" ("act on" for ACCESS_EDIT; "this request" for no user). */
void access_denied_text(char *buf, size_t size, const char *dag_id, const char *user,
                        enum weir_role role, enum access_need need);
/* Whether the entry's name `who` is a role's (case-insensitive); else it
 * names a user. */
bool access_names_role(const char *who);

#endif
