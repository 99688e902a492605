/* dag_rows.c: freeing the typed rows of the DAG ops (dag_rows.h). */
#include "api/dag_rows.h"

#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"

void dag_view_release(struct dag_view *d)
{
	dag_row_release(&d->row);
	memset(d, 0, sizeof *d);
}

void dag_list_free(struct dag_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		dag_view_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

void dag_run_list_free(struct dag_run_list *l)
{
	dag_run_rows_free(l->v, l->n);
	memset(l, 0, sizeof *l);
}

void dag_ti_view_release(struct dag_ti_view *t)
{
	dag_ti_row_release(&t->row);
	free(t->job_reason);
	json_decref(t->sla_miss);
	memset(t, 0, sizeof *t);
}

int dag_ti_view_set_job(struct dag_ti_view *t, const struct dag_job_view *j)
{
	free(t->job_reason);
	t->job_reason = NULL;
	t->job = *j;
	t->job.reason = NULL;
	if (!j->reason)
		return 0;
	if (!(t->job_reason = strdup(j->reason)))
		return -1;
	t->job.reason = t->job_reason;
	return 0;
}

void dag_ti_list_free(struct dag_ti_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		dag_ti_view_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

int dag_ti_refs_add(struct dag_ti_refs *refs, const struct dag_ti_row *r, int64_t logical_date)
{
	struct dag_ti_ref x = {.map_index = r->map_index, .logical_date = logical_date};

	if ((r->dag_id && !(x.dag_id = strdup(r->dag_id))) ||
	    (r->run_id && !(x.run_id = strdup(r->run_id))) ||
	    (r->task_id && !(x.task_id = strdup(r->task_id))) ||
	    ALLOC_GROW(refs->v, refs->n + 1, refs->alloc) < 0) {
		free(x.dag_id);
		free(x.run_id);
		free(x.task_id);
		return -1;
	}
	refs->v[refs->n++] = x;
	return 0;
}

void dag_ti_refs_free(struct dag_ti_refs *refs)
{
	for (size_t i = 0; i < refs->n; i++) {
		free(refs->v[i].dag_id);
		free(refs->v[i].run_id);
		free(refs->v[i].task_id);
	}
	free(refs->v);
	memset(refs, 0, sizeof *refs);
}

void dag_import_error_list_free(struct dag_import_error_list *l)
{
	dag_import_error_rows_free(l->v, l->n);
	memset(l, 0, sizeof *l);
}

void dag_ti_tries_release(struct dag_ti_tries *t)
{
	dag_ti_view_release(&t->ti);
	dag_run_row_release(&t->run);
	dag_try_rows_free(t->tries, t->n);
	free(t->jobs);
	memset(t, 0, sizeof *t);
}

void dag_ui_dags_free(struct dag_ui_dags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		dag_view_release(&d->v[i].dag);
		dag_run_rows_free(d->v[i].runs, d->v[i].n_runs);
	}
	free(d->v);
	dag_import_error_rows_free(d->errors, d->n_errors);
	memset(d, 0, sizeof *d);
}

void dag_grid_release(struct dag_grid *g)
{
	dag_run_rows_free(g->runs, g->n_runs);
	dag_ti_rows_free(g->tis, g->n_tis);
	free(g->jobs);
	memset(g, 0, sizeof *g);
}

void dag_run_stats_release(struct dag_run_stats *s)
{
	dag_run_rows_free(s->runs, s->n_runs);
	memset(s, 0, sizeof *s);
}
