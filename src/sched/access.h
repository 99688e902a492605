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

#include "model/role.h"

/* Whether `have` (the request's role; ROLE_NONE: none was given) may do
 * what asks for `need`: true when `need` is ROLE_NONE, else when `have` is
 * `need` or above.  A role out of range may do nothing that asks for one. */
bool access_allowed(enum weir_role have, enum weir_role need);

#endif
