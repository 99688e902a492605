/* route_match.c: the values of a matched path (route_match.h); the match
 * itself is the route table's (route_table_match()). */
#include "api/route_match.h"

#include <string.h>

const char *route_match_param(const struct route_match *m, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < m->n; i++) {
		const char *t = m->name[i];
		if (!strncmp(t + 1, name, len) && t[len + 1] == '}' && !t[len + 2])
			return m->value[i];
	}
	return NULL;
}
