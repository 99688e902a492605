/* dag_answers.c: a DAG op's rows rendered into the route's answer
 * (dag_answers.h). */
#include "api/dag_answers.h"

#include <stdlib.h>

#include "api/dag_ui_views.h"
#include "api/dag_views.h"
#include "lib/strbuf.h"

/* The rendered answer, or NULL with an out-of-memory error. */
static json_t *rendered(json_t *o, struct weir_error *err)
{
	return o ? o : weir_error_oom_null(err);
}

/* sb's text for the caller, or NULL with an out-of-memory error (sb
 * released). */
static char *text_of(struct strbuf *sb, bool failed, size_t *len, struct weir_error *err)
{
	char *text = NULL;

	if (!failed && !sb->failed)
		text = strbuf_detach(sb, len);
	strbuf_release(sb);
	if (!text)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return text;
}

json_t *dag_answer_list_dags(const struct dag_api_ops *ops, void *ctx,
                             const struct dag_list_query *q, struct weir_error *err)
{
	struct dag_list l = {0};
	json_t *o;

	if (ops->list_dags(ctx, q, &l, err) < 0)
		return NULL;
	o = dag_view_dags(&l);
	dag_list_free(&l);
	return rendered(o, err);
}

/* A DAG an op filled in, rendered. */
static json_t *dag_answer(int rc, struct dag_view *d, struct weir_error *err)
{
	json_t *o;

	if (rc < 0)
		return NULL;
	o = dag_view_dag_of(d);
	dag_view_release(d);
	return rendered(o, err);
}

json_t *dag_answer_get_dag(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                           struct weir_error *err)
{
	struct dag_view d = {0};

	return dag_answer(ops->get_dag(ctx, dag_id, &d, err), &d, err);
}

json_t *dag_answer_patch_dag(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                             json_t *body, struct weir_error *err)
{
	struct dag_view d = {0};

	return dag_answer(ops->patch_dag(ctx, dag_id, body, &d, err), &d, err);
}

json_t *dag_answer_list_runs(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                             const struct dag_run_list_query *q, struct weir_error *err)
{
	struct dag_run_list l = {0};
	json_t *o;

	if (ops->list_runs(ctx, dag_id, q, &l, err) < 0)
		return NULL;
	o = dag_view_runs(&l);
	dag_run_list_free(&l);
	return rendered(o, err);
}

/* A run an op filled in, rendered. */
static json_t *run_answer(int rc, struct dag_run_row *r, struct weir_error *err)
{
	json_t *o;

	if (rc < 0)
		return NULL;
	o = dag_view_run(r);
	dag_run_row_release(r);
	return rendered(o, err);
}

json_t *dag_answer_trigger_run(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                               json_t *body, struct weir_error *err)
{
	struct dag_run_row r = {0};

	return run_answer(ops->trigger_run(ctx, dag_id, body, &r, err), &r, err);
}

json_t *dag_answer_get_run(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                           const char *run_id, struct weir_error *err)
{
	struct dag_run_row r = {0};

	return run_answer(ops->get_run(ctx, dag_id, run_id, &r, err), &r, err);
}

char *dag_answer_get_run_text(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                              const char *run_id, size_t *len, struct weir_error *err)
{
	struct dag_run_row r = {0};
	struct strbuf sb = STRBUF_INIT;
	bool failed;

	if (ops->get_run(ctx, dag_id, run_id, &r, err) < 0)
		return NULL;
	failed = dag_view_run_write(&sb, &r) < 0;
	dag_run_row_release(&r);
	return text_of(&sb, failed, len, err);
}

json_t *dag_answer_patch_run(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                             const char *run_id, json_t *body, struct weir_error *err)
{
	struct dag_run_row r = {0};

	return run_answer(ops->patch_run(ctx, dag_id, run_id, body, &r, err), &r, err);
}

json_t *dag_answer_set_run_note(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                                const char *run_id, const char *text, const char *user,
                                struct weir_error *err)
{
	struct dag_run_row r = {0};

	return run_answer(ops->set_run_note(ctx, dag_id, run_id, text, user, &r, err), &r, err);
}

json_t *dag_answer_set_ti_note(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                               const char *run_id, const char *task_id, int map_index,
                               const char *text, const char *user, struct weir_error *err)
{
	struct dag_ti_view t = {0};
	json_t *o;

	if (ops->set_ti_note(ctx, dag_id, run_id, task_id, map_index, text, user, &t, err) < 0)
		return NULL;
	o = dag_view_ti_of(&t);
	dag_ti_view_release(&t);
	return rendered(o, err);
}

char *dag_answer_list_tis_text(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                               const char *run_id, const struct dag_ti_list_query *q, size_t *len,
                               struct weir_error *err)
{
	struct dag_ti_list l = {0};
	struct strbuf sb = STRBUF_INIT;
	bool failed;

	if (ops->list_tis(ctx, dag_id, run_id, q, &l, err) < 0)
		return NULL;
	failed = dag_view_tis_write(&sb, &l) < 0;
	dag_ti_list_free(&l);
	return text_of(&sb, failed, len, err);
}

json_t *dag_answer_list_tis(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                            const char *run_id, const struct dag_ti_list_query *q,
                            struct weir_error *err)
{
	struct dag_ti_list l = {0};
	json_t *o;

	if (ops->list_tis(ctx, dag_id, run_id, q, &l, err) < 0)
		return NULL;
	o = dag_view_tis(&l);
	dag_ti_list_free(&l);
	return rendered(o, err);
}

json_t *dag_answer_get_ti(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                          const char *run_id, const char *task_id, int map_index,
                          struct weir_error *err)
{
	struct dag_ti_view t = {0};
	json_t *o;

	if (ops->get_ti(ctx, dag_id, run_id, task_id, map_index, &t, err) < 0)
		return NULL;
	o = dag_view_ti_of(&t);
	dag_ti_view_release(&t);
	return rendered(o, err);
}

json_t *dag_answer_clear_tis(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                             json_t *body, struct weir_error *err)
{
	struct dag_ti_refs refs = {0};
	json_t *a, *o;

	if (ops->clear_tis(ctx, dag_id, body, &refs, err) < 0)
		return NULL;
	a = dag_view_ti_refs(&refs);
	dag_ti_refs_free(&refs);
	o = a ? json_pack("{s:o}", "task_instances", a) : NULL;
	return rendered(o, err);
}

json_t *dag_answer_import_errors(const struct dag_api_ops *ops, void *ctx,
                                 const struct dag_reader *rd, int limit, int offset,
                                 struct weir_error *err)
{
	struct dag_import_error_list l = {0};
	json_t *o;

	if (ops->import_errors(ctx, rd, limit, offset, &l, err) < 0)
		return NULL;
	o = dag_view_import_errors(&l);
	dag_import_error_list_free(&l);
	return rendered(o, err);
}

json_t *dag_answer_dag_tasks(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                             struct weir_error *err)
{
	struct dag_view d = {0};
	json_t *o;

	if (ops->dag_tasks(ctx, dag_id, &d, err) < 0)
		return NULL;
	o = dag_view_tasks(d.spec);
	dag_view_release(&d);
	return rendered(o, err);
}

json_t *dag_answer_dag_details(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                               struct weir_error *err)
{
	struct dag_view d = {0};
	json_t *o;

	if (ops->dag_details(ctx, dag_id, &d, err) < 0)
		return NULL;
	o = dag_view_details(&d.row, d.spec, d.next_ms);
	dag_view_release(&d);
	return rendered(o, err);
}

json_t *dag_answer_ti_tries(const struct dag_api_ops *ops, void *ctx, const char *dag_id,
                            const char *run_id, const char *task_id, int map_index,
                            struct weir_error *err)
{
	struct dag_ti_tries t = {0};
	json_t *o;

	if (ops->ti_tries(ctx, dag_id, run_id, task_id, map_index, &t, err) < 0)
		return NULL;
	o = dag_view_ti_tries(&t);
	dag_ti_tries_release(&t);
	return rendered(o, err);
}

json_t *dag_answer_ui_dags(const struct dag_api_ops *ops, void *ctx,
                           const struct dag_reader *reader, int limit, int offset,
                           struct weir_error *err)
{
	struct dag_ui_dags d = {0};
	json_t *o;

	if (ops->ui_dags(ctx, reader, limit, offset, &d, err) < 0)
		return NULL;
	o = dag_view_ui_dags(&d);
	dag_ui_dags_free(&d);
	return rendered(o, err);
}

json_t *dag_answer_ui_grid(const struct dag_api_ops *ops, void *ctx, const char *dag_id, int limit,
                           struct weir_error *err)
{
	struct dag_grid g = {0};
	json_t *o;

	if (ops->ui_grid(ctx, dag_id, limit, &g, err) < 0)
		return NULL;
	o = dag_view_grid(dag_id, g.spec, g.runs, g.n_runs, g.tis, g.n_tis, g.jobs);
	dag_grid_release(&g);
	return rendered(o, err);
}

json_t *dag_answer_ui_stats(const struct dag_api_ops *ops, void *ctx, const char *dag_id, int limit,
                            struct weir_error *err)
{
	struct dag_run_stats st = {0};
	json_t *o;

	if (ops->ui_stats(ctx, dag_id, limit, &st, err) < 0)
		return NULL;
	o = dag_view_stats(dag_id, st.runs, st.n_runs, st.counts);
	dag_run_stats_release(&st);
	return rendered(o, err);
}
