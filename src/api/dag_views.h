/* dag_views.h: the Airflow-shaped JSON of the workflow routes (Airflow's
 * stable REST API v1 objects and field names: DAG, DAGRun, TaskInstance,
 * ImportError and their collections), rendered from typed rows: the DAG
 * ops' (api/dag_rows.h), the store's (store/dag_store.h) and DAG specs
 * (model/dag_spec.h).
 *
 * Pure: nothing here reads the store or the DAG manager.  What a row alone
 * does not say comes in as plain values: a DAG's next scheduled logical
 * date, and what a task instance's job says about it (struct dag_job_view).
 * Every function returns a new reference, or NULL out of memory; inputs are
 * borrowed.  What clients poll (a run, a run's task instances) is written
 * as text instead (the _write functions), never built as a tree.
 */
#ifndef WEIR_API_DAG_VIEWS_H
#define WEIR_API_DAG_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/dag_rows.h"
#include "lib/strbuf.h"
#include "model/dag_spec.h"
#include "model/states.h"
#include "store/dag_store.h"

/* A DAG.  spec: its last good parse (NULL when it never parsed);
 * next_ms: the logical date of its next scheduled run, CRON_NEVER for
 * none (paused, removed, unscheduled or past its end). */
json_t *dag_view_dag(const struct dag_row *row, const struct dag_spec *spec, int64_t next_ms);
/* A DAGRun. */
json_t *dag_view_run(const struct dag_run_row *r);
/* The same DAGRun as the text json_dumps(JSON_COMPACT) writes of it, at the
 * end of sb.  0; -1 when the run has no view (dag_view_run's NULL; sb left
 * as it was) or sb ran out of memory (sb->failed). */
int dag_view_run_write(struct strbuf *sb, const struct dag_run_row *r);
/* A TI's state as Airflow writes it: its name, null for none. */
json_t *dag_view_ti_state(enum dag_ti_state s);
/* A TaskInstance of `run` (which may be NULL: no dates); job NULL when the
 * TI has none. */
json_t *dag_view_ti(const struct dag_ti_row *r, const struct dag_run_row *run,
                    const struct dag_job_view *job);
/* What a TI shows once its job is heard (dag_view_ti's fields): the state
 * (queued reads running once its job runs), the reason (the waiting job's
 * when the TI has none), the start (the job's when the row has none) and
 * the end (none while running). */
struct dag_ti_shown {
	enum dag_ti_state state;
	const char *reason; /* borrowed from the row or the job view */
	int64_t start_date, end_date;
};
void dag_view_ti_shown(const struct dag_ti_row *r, const struct dag_job_view *job,
                       struct dag_ti_shown *out);
/* Whether the TI's view needs more of its job than that the job exists:
 * false when the TI has no job, or is not queued and has its start (the
 * store keeps every job a TI names, so a view may then take it as known). */
bool dag_view_ti_needs_job(const struct dag_ti_row *r);
/* dag_view_ti with "sla_miss" set to `sla_miss` (borrowed; NULL: null),
 * written as the text json_dumps(JSON_COMPACT) writes of that tree, at the
 * end of sb.  0; -1 when the TI has no view (dag_view_ti's NULL: a text
 * missing or not UTF-8; sb left as it was), or sb ran out of memory
 * (sb->failed). */
int dag_view_ti_write(struct strbuf *sb, const struct dag_ti_row *r, const struct dag_run_row *run,
                      const struct dag_job_view *job, json_t *sla_miss);
/* The short reference a clear answers with: {dag_id, dag_run_id, task_id,
 * map_index, execution_date}. */
json_t *dag_view_ti_ref(const struct dag_ti_row *r, const struct dag_run_row *run);
/* An ImportError. */
json_t *dag_view_import_error(const struct dag_import_error_row *r);
/* {key: items, "total_entries": total}; items is stolen. */
json_t *dag_view_collection(const char *key, json_t *items, size_t total);

/* ---- the DAG ops' rows (api/dag_rows.h) ---- */

/* A DAG (dag_view_dag). */
json_t *dag_view_dag_of(const struct dag_view *d);
/* DAGCollection {"dags":[DAG...],"total_entries":total}; a DAG without a
 * view is left out. */
json_t *dag_view_dags(const struct dag_list *l);
/* DAGRunCollection {"dag_runs":[DAGRun...],"total_entries":total}; a run
 * without a view is left out. */
json_t *dag_view_runs(const struct dag_run_list *l);
/* A TaskInstance (dag_view_ti, with its SLA miss). */
json_t *dag_view_ti_of(const struct dag_ti_view *t);
/* The same as the text json_dumps(JSON_COMPACT) writes of it, at the end of
 * sb (dag_view_ti_write). */
int dag_view_ti_of_write(struct strbuf *sb, const struct dag_ti_view *t);
/* Whether t has a view: every text it shows is there and is UTF-8 (what
 * dag_view_ti_of_write needs, out of memory aside).  What a listing counts. */
bool dag_view_ti_showable(const struct dag_ti_view *t);
/* TaskInstanceCollection {"task_instances":[...],"total_entries":total} as
 * the text json_dumps(JSON_COMPACT) writes of it, at the end of sb; a TI
 * without a view is left out.  0, -1 out of memory (sb->failed). */
int dag_view_tis_write(struct strbuf *sb, const struct dag_ti_list *l);
/* The same collection as a tree: that text, read back (so the two never
 * differ). */
json_t *dag_view_tis(const struct dag_ti_list *l);
/* [the short reference of each (dag_view_ti_ref's fields)]. */
json_t *dag_view_ti_refs(const struct dag_ti_refs *refs);
/* ImportErrorCollection {"import_errors":[...],"total_entries":total}. */
json_t *dag_view_import_errors(const struct dag_import_error_list *l);

#endif
