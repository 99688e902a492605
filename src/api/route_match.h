/* route_match.h: a request path matched to a row of the route table
 * (api/route_table.h): the row, and the path's values of the template's
 * {names}, which the operations read (route_match_param()).
 */
#ifndef WEIR_API_ROUTE_MATCH_H
#define WEIR_API_ROUTE_MATCH_H

#define ROUTE_PARAMS_MAX 6
#define ROUTE_PATH_MAX 1024

struct route_match {
	int route; /* an index < route_table_count(); ROUTE_TABLE_OTHER when none */
	/* the path's values of the template's {names}, in path order; they point
	 * into buf and live as long as the struct */
	const char *name[ROUTE_PARAMS_MAX];
	const char *value[ROUTE_PARAMS_MAX];
	int n;
	char buf[ROUTE_PATH_MAX];
};

/* The value of {name} in a match, or NULL. */
const char *route_match_param(const struct route_match *m, const char *name);

#endif
