/* dag_rows.h: the typed rows the DAG ops (api/dag_api.h) hand to the
 * workflow routes, which render them (api/dag_views.h, through
 * api/dag_answers.h): a DAG with what its view needs beside its row, a task
 * instance with what its job says, the short references of a clear, and
 * the lists of DAGs, runs, task instances and import errors with the count
 * of what their filters keep.  A run is the store's row as it is (struct
 * dag_run_row, dag_run_row_release).
 *
 * Ownership: a row owns what it holds, except a DAG's spec (see struct
 * dag_view); its release or free function frees that and leaves the row
 * zeroed, so a zeroed row (what a failed op leaves) may be released too.
 */
#ifndef WEIR_API_DAG_ROWS_H
#define WEIR_API_DAG_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "model/dag_spec.h"
#include "store/dag_store.h"

/* What a task instance's (or try's) job says: the store keeps a TI
 * "queued" until its job runs (every task registered and the user's
 * program started); meanwhile the job says why it waits. */
struct dag_job_view {
	bool known;         /* the TI has a job and the store has it */
	bool running;       /* the job runs */
	int64_t started_at; /* 0: not yet */
	const char *reason; /* why the job waits; NULL or "" when it says nothing */
};

/* A DAG: its row, its last good parse and the logical date of its next
 * scheduled run.  spec is borrowed from the DAG manager, valid until the
 * manager next reads its folder: render it before the event loop runs
 * again (the routes render at once). */
struct dag_view {
	struct dag_row row;
	const struct dag_spec *spec; /* NULL when it never parsed */
	int64_t next_ms; /* CRON_NEVER: none (paused, removed, unscheduled, past its end) */
};
void dag_view_release(struct dag_view *d);

/* A page of DAGs (GET /dags); total: how many the filters keep. */
struct dag_list {
	struct dag_view *v;
	size_t n, total;
};
void dag_list_free(struct dag_list *l);

/* A page of runs; total as for DAGs. */
struct dag_run_list {
	struct dag_run_row *v;
	size_t n, total;
};
void dag_run_list_free(struct dag_run_list *l);

/* A task instance as its TaskInstance shows it: its row, its run's logical
 * date (0: none), what its job says (job.reason points into job_reason,
 * owned) and its SLA miss (a new reference; NULL: none). */
struct dag_ti_view {
	struct dag_ti_row row;
	int64_t logical_date;
	struct dag_job_view job;
	char *job_reason;
	json_t *sla_miss;
};
void dag_ti_view_release(struct dag_ti_view *t);
/* Sets t->job from j, its reason copied into t->job_reason: 0, -1 out of
 * memory (t->job then says nothing of a reason). */
int dag_ti_view_set_job(struct dag_ti_view *t, const struct dag_job_view *j);

/* A page of task instances; total counts those the filters keep and that
 * have a view (dag_view_ti_showable). */
struct dag_ti_list {
	struct dag_ti_view *v;
	size_t n, total;
};
void dag_ti_list_free(struct dag_ti_list *l);

/* A task instance a clear touches (or would touch), in short. */
struct dag_ti_ref {
	char *dag_id, *run_id, *task_id;
	int map_index;
	int64_t logical_date; /* its run's */
};
struct dag_ti_refs {
	struct dag_ti_ref *v;
	size_t n, alloc;
};
/* Appends r's reference (its texts copied) with its run's logical date: 0;
 * -1 out of memory (refs as they were). */
int dag_ti_refs_add(struct dag_ti_refs *refs, const struct dag_ti_row *r, int64_t logical_date);
void dag_ti_refs_free(struct dag_ti_refs *refs);

/* A page of import errors; total: all of them. */
struct dag_import_error_list {
	struct dag_import_error_row *v;
	size_t n, total;
};
void dag_import_error_list_free(struct dag_import_error_list *l);

#endif
