/* cli_routes.c: `weir routes --json` (cli_routes.h): the route table and
 * its role column, read by tests/system/test_roles.py. */
#include "cli/cli_routes.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "api/route_table.h"
#include "cli/cli_common.h"
#include "model/role.h"

int cli_routes_main(int argc, char **argv)
{
	static const char *const methods[] = {"GET", "POST", "PATCH", "PUT", "DELETE"};
	json_t *all;

	if (argc != 2 || strcmp(argv[1], "--json")) {
		fprintf(stderr, "usage: weir routes --json\n");
		return CLI_EXIT_USAGE;
	}
	all = json_array();
	for (size_t i = 1; all && i < route_table_count(); i++) {
		const struct route_entry *e = route_table_row_entry((int)i);
		json_t *row, *m = json_object();
		if (!route_table_served((int)i) || !m) {
			json_decref(m);
			continue;
		}
		for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++)
			if (route_table_op((int)i, methods[k]))
				json_object_set_new(
				    m, methods[k],
				    json_string(role_name(route_table_role((int)i, methods[k]))));
		row =
		    json_pack("{s:s, s:s, s:b, s:b, s:o}", "template", route_table_template((int)i),
		              "entry", e->name, "open", (e->flags & ROUTE_OPEN) != 0, "problems",
		              (e->flags & ROUTE_PROBLEMS) != 0, "methods", m);
		json_array_append_new(all, row);
	}
	if (!all || json_dumpf(all, stdout, JSON_INDENT(1)) < 0) {
		json_decref(all);
		fprintf(stderr, "weir routes: out of memory\n");
		return 1;
	}
	fputc('\n', stdout);
	json_decref(all);
	return CLI_EXIT_OK;
}
