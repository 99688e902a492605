/* route_table.h: every path the server answers, as a template
 * ("/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}"), and the event name of
 * each state-changing method on it.
 *
 * The templates are what the metrics label HTTP requests with (a fixed
 * set, so the label stays bounded whatever clients send) and what the event
 * log reads ids from (the dag_id, run_id, task_id of the path).  They list
 * weir's routes and every path of Airflow's stable REST API v1 (served or
 * not: a request to one that is not served is still labelled by its
 * template, and answered 404 by the routes).  A route added to the server
 * gets its row here (route_table.c); a path no row matches is
 * ROUTE_TABLE_OTHER.
 *
 * A template segment "{name}" matches any one segment; one whose name says
 * it is a number (map_index, try numbers, job and event log ids, a task's
 * index) matches digits only; "{path*}" as the last segment matches one or
 * more segments.  Where several templates match, the one with the most
 * fixed segments wins ("/connections/test" before "/connections/{id}").
 */
#ifndef WEIR_API_ROUTE_TABLE_H
#define WEIR_API_ROUTE_TABLE_H

#include <stddef.h>

/* The index of the row that is no route. */
#define ROUTE_TABLE_OTHER 0
/* At most this many rows (the metrics keep a fixed array per row). */
#define ROUTE_TABLE_MAX 128
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

/* Matches a request's path (without its query). */
void route_table_match(const char *path, struct route_match *m);
/* The value of {name} in a match, or NULL. */
const char *route_match_param(const struct route_match *m, const char *name);

/* How many rows (ROUTE_TABLE_OTHER included). */
size_t route_table_count(void);
/* A row's template ("other" for ROUTE_TABLE_OTHER). */
const char *route_table_template(int route);
/* The event name of `method` on the row (Airflow's "api." + operationId
 * for Airflow's routes); "" when the method changes nothing there (the
 * launchers' protocol, the batch list routes); NULL when the row names
 * none (GET, HEAD, or a method the route does not have). */
const char *route_table_event(int route, const char *method);

#endif
