/* access.c: a role against the role a route asks for, and a principal
 * against a DAG's access list (sched/access.h). */
#include "sched/access.h"

#include <stdio.h>
#include <string.h>

bool access_allowed(enum weir_role have, enum weir_role need)
{
	if (need == ROLE_NONE)
		return true;
	if ((unsigned)have >= ROLE_COUNT || (unsigned)need >= ROLE_COUNT)
		return false;
	return have >= need;
}

bool access_names_role(const char *who)
{
	enum weir_role r;

	return who && role_from_name(who, &r) == 0;
}

bool access_dag_allowed(const struct dag_access *a, const char *user, enum weir_role role,
                        enum access_need need)
{
	unsigned perms = 0;

	if (!a || !a->set || role == ROLE_ADMIN)
		return true;
	for (size_t i = 0; i < a->n; i++) {
		const char *who = a->v[i].who;
		enum weir_role r;
		if (role_from_name(who, &r) == 0 ? access_allowed(role, r)
		                                 : (user && *user && !strcmp(who, user)))
			perms |= a->v[i].perms;
	}
	return (perms & (need == ACCESS_EDIT ? DAG_ACCESS_EDIT : DAG_ACCESS_READ)) != 0;
}

void access_denied_text(char *buf, size_t size, const char *dag_id, const char *user,
                        enum weir_role role, enum access_need need)
{
	snprintf(buf, size, "DAG %.100s: its access list does not let %.64s (role %s) %s it",
	         dag_id, user && *user ? user : "this request", role_name(role),
	         need == ACCESS_READ ? "read" : "act on");
}
