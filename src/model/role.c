/* role.c: the roles' names (model/role.h). */
#include "model/role.h"

#include <stddef.h>
#include <strings.h>

static const char *const names[ROLE_COUNT] = {
    [ROLE_NONE] = "none", [ROLE_VIEWER] = "Viewer", [ROLE_USER] = "User",
    [ROLE_OP] = "Op",     [ROLE_ADMIN] = "Admin",
};

const char *role_name(enum weir_role r)
{
	if ((unsigned)r >= ROLE_COUNT)
		return "?";
	return names[r];
}

int role_from_name(const char *name, enum weir_role *out)
{
	if (!name)
		return -1;
	for (int r = ROLE_VIEWER; r < ROLE_COUNT; r++) {
		if (!strcasecmp(name, names[r])) {
			*out = (enum weir_role)r;
			return 0;
		}
	}
	return -1;
}
