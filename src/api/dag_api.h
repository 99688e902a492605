/* dag_api.h: what the workflow routes (Airflow's stable REST API v1 paths,
 * docs/api.md) ask of the server.
 *
 * The API layer (src/api/airflow/) owns routing, auth (Bearer token or
 * Basic), query parsing (limit, offset, order_by, state), content
 * negotiation for logs, problem+json errors and the rendering of answers in
 * Airflow's shape and field names (api/dag_views.h).  The server's DAG
 * manager (src/server/dag_manager/) owns everything else and fills this
 * table.  The ops hand over typed rows (api/dag_rows.h), as the job ops
 * do: each returns 0 with *out filled (the caller's: its release or free
 * function), or -1 with err and *out left zeroed (WEIR_E_NOT_FOUND -> 404,
 * WEIR_E_INVALID -> 400, WEIR_E_CONFLICT -> 409); api/dag_answers.h calls
 * them and renders the answers.  Strings passed in are borrowed for the
 * call.  (The admin ops, api/dag_admin_api.h, and the dataset ops still
 * answer JSON.)
 */
#ifndef WEIR_API_DAG_API_H
#define WEIR_API_DAG_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/dag_rows.h"
#include "lib/error.h"
#include "lib/strvec.h"
#include "sched/access.h"

struct dag_admin_ops;

/* The values a list filter takes, any of which matches (Airflow's repeated
 * parameter: an OR); n == 0: no filter. */
struct dag_str_list {
	const char *const *v;
	size_t n;
};

/* NAME_gte and NAME_lte of a list query as the client wrote them (a date
 * and time, RFC 3339); NULL: no bound.  Both bounds are inclusive; an item
 * without that date (a run not started yet) matches no bound.  The op reads
 * them and answers WEIR_E_INVALID naming the parameter. */
struct dag_date_range {
	const char *gte, *lte;
};

/* Who asks for a list: the DAGs whose access list (`access:`,
 * sched/access.h) does not let them `need` a DAG are left out, as if they
 * were not there (total too).  A query's NULL reader: every DAG. */
struct dag_reader {
	const char *user; /* who the request authenticated as ("" none) */
	enum weir_role role;
	enum access_need need; /* ACCESS_READ for a listing; ACCESS_EDIT for PATCH /dags */
};

/* GET /dags. */
struct dag_list_query {
	int limit;                  /* default 100 */
	int offset;                 /* default 0 */
	bool desc;                  /* order_by=-dag_id (the only order: by dag_id) */
	bool only_active;           /* leave out DAGs whose file went away (Airflow: true) */
	int paused;                 /* 1: paused only, 0: unpaused only, -1: both */
	const char *dag_id_pattern; /* SQL LIKE of Airflow's ilike("%p%"): '%' any run, '_' any
	                             * one character, case-insensitive; NULL: every DAG */
	struct dag_str_list tags;   /* DAGs with any of these tags */
	const struct dag_reader *reader;
};

/* GET .../dagRuns and POST /dags/~/dagRuns/list; strings may be NULL (not
 * given).  updated_at is the run's last change of state: the latest of
 * queued_at, start_date and end_date. */
struct dag_run_list_query {
	int limit;                   /* default 100 */
	int offset;                  /* default 0 */
	const char *order_by;        /* e.g. "-execution_date", "start_date" */
	struct dag_str_list states;  /* any of these states */
	struct dag_str_list dag_ids; /* with dag_id "~": these DAGs only (n == 0: every DAG) */
	struct dag_date_range execution_date, start_date, end_date, updated_at;
	const struct dag_reader *reader; /* with dag_id "~" */
};

/* GET .../dagRuns/{run_id}/taskInstances and POST /dags/~/dagRuns/~/taskInstances/list.
 * A TI's state and dates are the ones its TaskInstance shows; its queue is
 * the task's `queue:` in the DAG file (default_args included), so a task
 * that names none matches no queue; updated_at as for runs (queued_when,
 * start_date, end_date); duration in seconds. */
struct dag_ti_list_query {
	int limit;  /* default 100 */
	int offset; /* default 0 */
	struct dag_str_list states, pools, queues;
	struct dag_str_list dag_ids, run_ids, task_ids; /* the batch body's; n == 0: any */
	struct dag_date_range execution_date, start_date, end_date, updated_at;
	bool has_duration_gte, has_duration_lte;
	double duration_gte, duration_lte;
	const struct dag_reader *reader; /* with dag_id "~" */
};

/* What GET /health reports as Airflow's "metadatabase" and "scheduler": whether
 * the store answered a query just now, and when the scheduler (the DAG
 * manager's pass over its folder, runs and pools) last went round, in ms since
 * the epoch (0: not yet).  Filled by the server at each request. */
struct api_health {
	bool db_ok;
	int64_t last_pass_ms;
};
typedef void (*api_health_fn)(void *ctx, struct api_health *out);

struct dag_api_ops {
	/* GET /dags: a page of DAGs, total counting what the filters keep */
	int (*list_dags)(void *ctx, const struct dag_list_query *q, struct dag_list *out,
	                 struct weir_error *err);
	/* GET /dags/{dag_id} */
	int (*get_dag)(void *ctx, const char *dag_id, struct dag_view *out, struct weir_error *err);
	/* PATCH /dags/{dag_id} {"is_paused":bool}: the DAG after */
	int (*patch_dag)(void *ctx, const char *dag_id, json_t *body, struct dag_view *out,
	                 struct weir_error *err);
	/* GET /dags/{dag_id}/dagRuns: a page of runs; dag_id "~": every DAG's */
	int (*list_runs)(void *ctx, const char *dag_id, const struct dag_run_list_query *q,
	                 struct dag_run_list *out, struct weir_error *err);
	/* POST /dags/{dag_id}/dagRuns {"conf","dag_run_id","logical_date"}: the new run */
	int (*trigger_run)(void *ctx, const char *dag_id, json_t *body, struct dag_run_row *out,
	                   struct weir_error *err);
	/* GET /dags/{dag_id}/dagRuns/{run_id} (what a client polls: the route writes it as
	 * text, dag_answer_get_run_text) */
	int (*get_run)(void *ctx, const char *dag_id, const char *run_id, struct dag_run_row *out,
	               struct weir_error *err);
	/* PATCH /dags/{dag_id}/dagRuns/{run_id} {"state":"success|failed|queued"}: the run
	 * after */
	int (*patch_run)(void *ctx, const char *dag_id, const char *run_id, json_t *body,
	                 struct dag_run_row *out, struct weir_error *err);
	/* PATCH .../dagRuns/{run_id}/setNote: the run's note set to `text` ("": none) by
	 * `user` (who the request authenticated as); the run after.  WEIR_E_INVALID for a
	 * text past DAG_NOTE_MAX characters (store/dag_store.h) */
	int (*set_run_note)(void *ctx, const char *dag_id, const char *run_id, const char *text,
	                    const char *user, struct dag_run_row *out, struct weir_error *err);
	/* GET .../dagRuns/{run_id}/taskInstances: a page of TIs; dag_id and run_id "~": every
	 * DAG's, every run's (by DAG, then the run's logical date, then the graph's order).
	 * total counts the TIs that pass the filters and have a view (dag_view_ti_showable);
	 * the routes write the page as text, without a tree per TI */
	int (*list_tis)(void *ctx, const char *dag_id, const char *run_id,
	                const struct dag_ti_list_query *q, struct dag_ti_list *out,
	                struct weir_error *err);
	/* GET .../taskInstances/{task_id}[?map_index=N] (map_index -1: not a foreach
	 * instance) */
	int (*get_ti)(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
	              int map_index, struct dag_ti_view *out, struct weir_error *err);
	/* PATCH .../taskInstances/{task_id}[/{map_index}]/setNote: as set_run_note, the TI
	 * after */
	int (*set_ti_note)(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
	                   int map_index, const char *text, const char *user,
	                   struct dag_ti_view *out, struct weir_error *err);
	/* Where try `try_number` of a TI logs (*path newly allocated) and whether that try has
	 * ended; 404 when there is no such try. */
	int (*ti_log_locate)(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
	                     int map_index, int try_number, char **path, bool *ended,
	                     struct weir_error *err);
	/* POST /dags/{dag_id}/clearTaskInstances {"dag_run_id","task_ids","include_downstream",
	 * "only_failed","dry_run"}: the TIs cleared (or, dry_run, that would be) */
	int (*clear_tis)(void *ctx, const char *dag_id, json_t *body, struct dag_ti_refs *out,
	                 struct weir_error *err);
	/* GET /importErrors: a page of the import errors `rd` may see (NULL: all),
	 * total: all of those; an error of a file that holds a DAG whose access
	 * list refuses `rd` is left out */
	int (*import_errors)(void *ctx, const struct dag_reader *rd, int limit, int offset,
	                     struct dag_import_error_list *out, struct weir_error *err);
	/* The ids of the DAGs whose access lists refuse `rd`, pushed onto out */
	int (*denied_dags)(void *ctx, const struct dag_reader *rd, struct strvec *out,
	                   struct weir_error *err);

	/* The DAG's structure and what the web UI reads (docs/api.md).  An op left NULL
	 * makes its route a 404. */
	/* GET /dags/{dag_id}/tasks: the DAG (its spec never NULL: a DAG whose file never
	 * parsed is a 404) */
	int (*dag_tasks)(void *ctx, const char *dag_id, struct dag_view *out,
	                 struct weir_error *err);
	/* GET /dags/{dag_id}/details: the same */
	int (*dag_details)(void *ctx, const char *dag_id, struct dag_view *out,
	                   struct weir_error *err);
	/* GET .../taskInstances/{task_id}/tries: every try of the TI */
	int (*ti_tries)(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
	                int map_index, struct dag_ti_tries *out, struct weir_error *err);
	/* GET /ui/dags: a page of DAGs `reader` may read (NULL: every DAG), each with its
	 * last runs, and the import errors */
	int (*ui_dags)(void *ctx, const struct dag_reader *reader, int limit, int offset,
	               struct dag_ui_dags *out, struct weir_error *err);
	/* GET /ui/dags/{dag_id}/grid: the newest `limit` runs (oldest first) and their TIs */
	int (*ui_grid)(void *ctx, const char *dag_id, int limit, struct dag_grid *out,
	               struct weir_error *err);
	/* GET /ui/dags/{dag_id}/stats: the newest `limit` runs and the count of runs by
	 * state */
	int (*ui_stats)(void *ctx, const char *dag_id, int limit, struct dag_run_stats *out,
	                struct weir_error *err);

	/* The access list of DAG `dag_id` (borrowed: read it before the event loop runs
	 * again); NULL when the DAG has none or is not known (the roles alone decide).
	 * route_dispatch() checks a path naming one DAG against it (sched/access.h) */
	const struct dag_access *(*dag_access)(void *ctx, const char *dag_id);

	/* The rest of Airflow's operations (api/dag_admin_api.h); NULL: none */
	const struct dag_admin_ops *admin;
};

#endif
