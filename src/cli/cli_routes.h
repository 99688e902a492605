/* cli_routes.h: `weir routes --json` (hidden, for the tests): the server's
 * route table (api/route_table.h) as JSON, each served method with the
 * least role it asks for, so that a test can walk every route. */
#ifndef WEIR_CLI_ROUTES_H
#define WEIR_CLI_ROUTES_H

/* argv[0] is "routes", argv[1] must be "--json".  Prints a JSON array of
 * {"template", "entry", "open", "problems", "methods": {METHOD: role}}, one
 * per served row ("none" where the method asks for no role).  0, or 2 on a
 * usage error. */
int cli_routes_main(int argc, char **argv);

#endif
