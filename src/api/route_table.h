/* route_table.h: every path the server answers, as a template
 * ("/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}"), the operation that
 * answers each method on it, and the event name of each state-changing
 * method.
 *
 * The templates are what the metrics label HTTP requests with (a fixed
 * set, so the label stays bounded whatever clients send) and what the event
 * log reads ids from (the dag_id, run_id, task_id of the path).  They list
 * weir's routes and every path of Airflow's stable REST API v1 (served or
 * not: a request to one that is not served is still labelled by its
 * template, and answered 404).  As a command table maps a name to its
 * handler and flags, each row names its entry (the route group: its flags,
 * its checks, its voice) and, per method, the operation that answers it:
 * the table is the server's one dispatch (api_handle, api.c, then
 * route_dispatch()).  A route added to the server gets its row here, with
 * its operations (route_table.c); a path no row matches is
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

#include <stdbool.h>
#include <stddef.h>

#include "api/route_match.h"
#include "model/role.h"

/* The index of the row that is no route. */
#define ROUTE_TABLE_OTHER 0
/* At most this many rows (the metrics keep a fixed array per row). */
#define ROUTE_TABLE_MAX 128

struct route_ctx;    /* api/route_ctx.h: the ops tables the operations answer through */
struct http_request; /* api/http.h */

/* An operation: answers one method of one row, the path's values in `m`
 * (route_match_param()).  The row's entry has admitted the request
 * (route_entry.admit) and the method is the operation's. */
typedef void (*route_op_fn)(const struct route_ctx *rc, struct http_request *req,
                            const struct route_match *m);

/* An entry's answer to a path of its own that no row with operations
 * matches: a 404, or a 400 where the path holds a bad id, in the group's
 * voice; for the entries that read raw paths (ROUTE_WHOLE_PATH, the UI's
 * files), their reading of it.  `seg` and `n` are the path's segments
 * after "/api/v1" (NULL and 0 outside it and for ROUTE_WHOLE_PATH). */
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
	/* errors are answered as problem details (api/reply.h): Airflow's
	 * routes; else weir's own {"error"} */
	ROUTE_PROBLEMS = 1u << 3,
	/* HEAD is answered by the row's GET operation */
	ROUTE_HEAD_AS_GET = 1u << 4,
};

struct route_entry {
	const char *name; /* for tests and reading: "jobs", "airflow", ... */
	/* NULL: such a path is answered 404 in the entry's voice */
	route_handler_fn unmatched;
	unsigned flags; /* enum route_flags */
	/* NULL: the entry answers every path under /api/v1/ its rows match.
	 * Else the raw paths it answers (the entry's own reading of the path,
	 * which a row's segment match cannot replace): a row naming the entry
	 * answers only where this holds, and a path no row matches is the
	 * entry's where it does (route_table_entry()). */
	bool (*claims)(const char *path);
	/* NULL, or what every row of the entry checks before the method: false
	 * when it has answered (a 503 where the entry's ops are not set, the
	 * launchers' refusal of a malformed secret) */
	bool (*admit)(const struct route_ctx *rc, struct http_request *req);
	/* NULL, or the entry's own 405 (the UI's, with an Allow header) */
	void (*no_method)(struct http_request *req);
};

/* The entries, and the operations of the rows outside the route groups (the
 * UI's login and files, /metrics, /health): defined in routes.c. */
extern const struct route_entry route_ui_login;     /* /ui/login, /ui/session, /ui/logout */
extern const struct route_entry route_ui_files;     /* /, /index.html, /ui/... */
extern const struct route_entry route_metrics;      /* /metrics */
extern const struct route_entry route_health;       /* /api/v1/health */
extern const struct route_entry route_ui_me;        /* /api/v1/ui/me */
extern const struct route_entry route_jobs;         /* /api/v1/jobs... */
extern const struct route_entry route_launch;       /* /api/v1/launch/... */
extern const struct route_entry route_airflow;      /* /dags..., /importErrors */
extern const struct route_entry route_airflow_misc; /* /pools, /config, /version, ... */
extern const struct route_entry route_connections;  /* /connections, /variables */
extern const struct route_entry route_event_log;    /* /eventLogs */
extern const struct route_entry route_ui_data;      /* /api/v1/ui/... */
extern const struct route_entry route_notify;       /* /notifications, /slaMisses */
extern const struct route_entry route_db_clean;     /* /weir/dbClean */
extern const struct route_entry route_users;        /* /weir/users..., /weir/tokens... */
extern const struct route_entry route_datasets;     /* /datasets..., a DAG's queued events */
void route_ui_login_post(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m);
void route_ui_logout_post(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m);
void route_ui_session_get(const struct route_ctx *rc, struct http_request *req,
                          const struct route_match *m);
void route_ui_file_get(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m);
void route_metrics_get(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m);
void route_health_get(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m);
/* GET /api/v1/ui/me: who the request is, its role, and which of the web UI's
 * actions (route_ui_actions) its role may do: {"user", "role", "may":
 * {ACTION: bool}}, each decided as route_dispatch() would decide the
 * action's route. */
void route_ui_me_get(const struct route_ctx *rc, struct http_request *req,
                     const struct route_match *m);

/* One of the web UI's actions: its name in GET /api/v1/ui/me's "may" and
 * the route the UI calls for it (a row's template and method). */
struct route_ui_action {
	const char *name, *method, *tpl;
};
/* The UI's actions (routes.c), `*n` of them. */
const struct route_ui_action *route_ui_actions(size_t *n);

/* Matches a request's path (without its query). */
void route_table_match(const char *path, struct route_match *m);

/* The row whose template is `tpl` as written ("/api/v1/dags/{dag_id}");
 * ROUTE_TABLE_OTHER when none is. */
int route_table_find(const char *tpl);
/* How many rows (ROUTE_TABLE_OTHER included). */
size_t route_table_count(void);
/* A row's template ("other" for ROUTE_TABLE_OTHER). */
const char *route_table_template(int route);
/* The event name of `method` on the row (Airflow's "api." + operationId
 * for Airflow's routes); "" when the method changes nothing there (the
 * launchers' protocol, the batch list routes); NULL when the row names
 * none (GET, HEAD, or a method the route does not have). */
const char *route_table_event(int route, const char *method);

/* The operation of `method` on the row; NULL when the row has none for
 * it (or `route` is ROUTE_TABLE_OTHER). */
route_op_fn route_table_op(int route, const char *method);
/* The least role `method` on the row asks of the request's credentials
 * (model/role.h; HEAD is GET's): ROLE_NONE where the row has no operation
 * for it, for the rows whose entry takes no API credentials (ROUTE_OPEN:
 * the UI's files and login, /health, the launchers' own secret), and for
 * ROUTE_TABLE_OTHER.  route_dispatch() checks it (sched/access.h). */
enum weir_role route_table_role(int route, const char *method);
/* Whether the row has an operation for some method (a path of Airflow's
 * API that weir does not serve has none). */
bool route_table_served(int route);

/* Answers a request whose entry `e` route_table_entry() found: where the
 * path's row is e's and served, the role check, e's admit, then the row's
 * operation of the method, or a 405 in e's voice; else e's unmatched (a 404
 * in its voice without one).  The role check: where the row has an
 * operation for the method, the request's role (http_request_role()) must
 * reach the method's least role (route_table_role(), sched/access.h), else
 * a 403 in e's voice naming the role needed.  `seg`, `n` as route_handler_fn's.  Defined in
 * routes.c. */
void route_dispatch(const struct route_ctx *rc, const struct route_entry *e,
                    const struct route_match *m, struct http_request *req, char **seg, int n);

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
