/* dag_rows.h: the typed rows the DAG ops (api/dag_api.h) hand to the
 * workflow routes, which render them (api/dag_views.h, through
 * api/dag_answers.h): a DAG with what its view needs beside its row, a task
 * instance with what its job says, the short references of a clear, and
 * the lists of DAGs, runs, task instances and import errors with the count
 * of what their filters keep.  A run is the store's row as it is (struct
 * dag_run_row, dag_run_row_release).
 *
 * Ownership: a row owns what it holds, except a DAG's spec (see struct
 * dag_view, struct dag_grid); its release or free function frees that and
 * leaves the row zeroed, so a zeroed row (what a failed op leaves) may be
 * released too.  The web UI's views and a TI's tries come as rows too
 * (struct dag_ui_dags, dag_grid, dag_run_stats, dag_ti_tries).
 */
#ifndef WEIR_API_DAG_ROWS_H
#define WEIR_API_DAG_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "model/dag_spec.h"
#include "model/states.h"
#include "store/dag_store.h"

/* What a task instance's (or try's) job says: the store keeps a TI
 * "queued" until its job runs (every task registered and the user's
 * program started); meanwhile the job says why it waits.  And the class
 * of its task, which the DAG's spec knows and its row does not. */
struct dag_job_view {
	bool known;             /* the TI has a job and the store has it */
	bool running;           /* the job runs */
	int64_t started_at;     /* 0: not yet */
	const char *reason;     /* why the job waits; NULL or "" when it says nothing */
	const char *task_class; /* the TI's `operator` (dag_task_class's name); NULL: "weir",
	                         * the DAG gone; borrowed from the DAG manager's spec, valid
	                         * until it next reads its folder, as dag_view's spec */
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
/* Frees the row (not the spec) and zeroes d. */
void dag_view_release(struct dag_view *d);

/* A page of DAGs (GET /dags); total: how many the filters keep. */
struct dag_list {
	struct dag_view *v;
	size_t n, total;
};
/* Releases each DAG, frees the array and zeroes l. */
void dag_list_free(struct dag_list *l);

/* A page of runs; total as for DAGs. */
struct dag_run_list {
	struct dag_run_row *v;
	size_t n, total;
};
/* Frees the rows and zeroes l. */
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
/* Frees the row, the job's reason and the SLA miss, and zeroes t. */
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
/* Releases each TI, frees the array and zeroes l. */
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
/* Frees every reference and zeroes refs. */
void dag_ti_refs_free(struct dag_ti_refs *refs);

/* A page of import errors; total: all of them. */
struct dag_import_error_list {
	struct dag_import_error_row *v;
	size_t n, total;
};
/* Frees the rows and zeroes l. */
void dag_import_error_list_free(struct dag_import_error_list *l);

/* Every try of a task instance (GET .../tries): the TI as it is now, its
 * run, and each try with what its job says (jobs[i]: try i's; its reason
 * unset). */
struct dag_ti_tries {
	struct dag_ti_view ti;
	struct dag_run_row run;
	struct dag_try_row *tries;
	struct dag_job_view *jobs;
	size_t n;
};
/* Frees the TI, the run, the tries and their jobs' views, and zeroes t. */
void dag_ti_tries_release(struct dag_ti_tries *t);

/* A DAG of the web UI's list: the DAG and its latest runs, oldest first,
 * and whether the reader may act on it. */
struct dag_ui_dag {
	struct dag_view dag;
	struct dag_run_row *runs;
	size_t n_runs;
	bool may_act; /* its access list lets the reader act on it (sched/access.h) */
};
/* The web UI's DAG list (GET /ui/dags): a page of DAGs (total: all of
 * them) and every import error. */
struct dag_ui_dags {
	struct dag_ui_dag *v;
	size_t n, total;
	struct dag_import_error_row *errors;
	size_t n_errors;
};
/* Frees each DAG and its runs, the import errors, and zeroes d. */
void dag_ui_dags_free(struct dag_ui_dags *d);

/* The web UI's grid of one DAG (GET /ui/dags/{dag_id}/grid): its spec
 * (borrowed as in struct dag_view; NULL when it never parsed), its latest
 * runs, oldest first, every TI of those runs and what each TI's job says
 * (jobs[i]: TI i's, reason unset; NULL: nothing). */
struct dag_grid {
	const struct dag_spec *spec;
	struct dag_run_row *runs;
	size_t n_runs;
	struct dag_ti_row *tis;
	size_t n_tis;
	struct dag_job_view *jobs;
};
/* Frees the runs, TIs and jobs' views (not the spec) and zeroes g. */
void dag_grid_release(struct dag_grid *g);

/* The web UI's stats of one DAG (GET /ui/dags/{dag_id}/stats): its latest
 * runs, oldest first, and how many runs it has in each state. */
struct dag_run_stats {
	struct dag_run_row *runs;
	size_t n_runs;
	int64_t counts[DAG_RUN_STATE_COUNT];
};
/* Frees the runs and zeroes s. */
void dag_run_stats_release(struct dag_run_stats *s);

#endif
