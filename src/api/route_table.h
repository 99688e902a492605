/* route_table.h: every path the server answers, as a template
 * ("/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}"), and the event name of
 * each state-changing method on it.
 *
 * The templates are what the metrics label HTTP requests with (a fixed
 * set, so the label stays bounded whatever clients send) and what the event
 * log reads ids from (the dag_id, run_id, task_id of the path).  They list
 * weir's routes and every path of Airflow's stable REST API v1 (served or
 * not: a request to one that is not served is still labelled by its
 * template, and answered 404 by the routes).  Each row names the entry
 * that answers it (api/routes.h): the table is the server's one dispatch
 * (api_handle, api.c).  A route added to the server gets its row here
 * (route_table.c); a path no row matches is ROUTE_TABLE_OTHER.
 *
 * A template segment "{name}" matches any one segment; one whose name says
 * it is a number (map_index, try numbers, job and event log ids, a task's
 * index) matches digits only; "{path*}" as the last segment matches one or
 * more segments.  Where several templates match, the one with the most
 * fixed segments wins ("/connections/test" before "/connections/{id}").
 */
#ifndef WEIR_API_ROUTE_TABLE_H
#define WEIR_API_ROUTE_TABLE_H

#include <stdbool.h>
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

struct route_ctx;    /* api/routes.h: the ops tables the handlers answer through */
struct http_request; /* api/http.h */

/* A handler: answers `req`.  `seg` and `n` are the path's segments after
 * "/api/v1" (NULL and 0 for the entries outside it and for
 * ROUTE_WHOLE_PATH, which read http_request_path()). */
typedef void (*route_handler_fn)(const struct route_ctx *rc, struct http_request *req, char **seg,
                                 int n);

enum route_flags {
	/* answered without the API's credentials: the UI's files and login,
	 * /health, and the launchers (who bring their own secret) */
	ROUTE_OPEN = 1u << 0,
	/* reads the whole path (a dataset URI holds slashes): taken before the
	 * path is split, whatever its depth */
	ROUTE_WHOLE_PATH = 1u << 1,
	/* outside /api/v1 */
	ROUTE_ROOT = 1u << 2,
};

struct route_entry {
	const char *name; /* for tests and reading: "jobs", "airflow", ... */
	route_handler_fn handle;
	unsigned flags; /* enum route_flags */
	/* NULL: the entry answers every path under /api/v1/ its rows match.
	 * Else the raw paths it answers (the entry's own reading of the path,
	 * which a row's segment match cannot replace): a row naming the entry
	 * answers only where this holds, and a path no row matches is the
	 * entry's where it does (route_table_entry()). */
	bool (*claims)(const char *path);
};

/* The entries (defined in routes.c, which includes this header). */
extern const struct route_entry route_ui_login;     /* /ui/login, /ui/session, /ui/logout */
extern const struct route_entry route_ui_files;     /* /, /index.html, /ui/... */
extern const struct route_entry route_metrics;      /* /metrics */
extern const struct route_entry route_health;       /* /api/v1/health */
extern const struct route_entry route_jobs;         /* /api/v1/jobs... */
extern const struct route_entry route_launch;       /* /api/v1/launch/... */
extern const struct route_entry route_airflow;      /* /dags..., /importErrors */
extern const struct route_entry route_airflow_misc; /* /pools, /config, /version, ... */
extern const struct route_entry route_connections;  /* /connections, /variables */
extern const struct route_entry route_event_log;    /* /eventLogs */
extern const struct route_entry route_ui_data;      /* /api/v1/ui/... */
extern const struct route_entry route_notify;       /* /notifications, /slaMisses */
extern const struct route_entry route_datasets;     /* /datasets..., a DAG's queued events */

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

/* The entry of a row: who answers it; NULL for
 * ROUTE_TABLE_OTHER.  Every other row has one. */
const struct route_entry *route_table_row_entry(int route);
/* Who answers `path` (the raw path, `m` its match): the entry of its row,
 * where that entry's claim holds (or, without a claim, the path is under
 * "/api/v1/" as written); else the first entry whose claim holds; else,
 * under "/api/v1/", the group of its first segment (route_table_group()).
 * NULL: nobody (a 404). */
const struct route_entry *route_table_entry(const struct route_match *m, const char *path);
/* The route group of the paths "/api/v1/{first}/...": its entry, NULL if
 * none (or if its paths are all rows or claims); *problems (may be NULL):
 * whether errors there are answered as problem details (api/reply.h). */
const struct route_entry *route_table_group(const char *first, bool *problems);

#endif
