/* list_ops.c: the DAG manager's list ops (api/dag_api.h): DAGs, runs
 * and task instances with Airflow's filters, ordering and pages.  Reads
 * only: rows from the store, specs from the manager's entries, handed over
 * as typed rows (api/dag_rows.h) that the API renders; the filters apply to
 * what an item shows (api/dag_views.h says what that is).
 */
#include "server/dag_manager/ops.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dag_views.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "sched/dag_states.h"
#include "server/notifier.h"

/* ---- what the filters compare ---- */

static bool str_in(const char *s, const struct dag_str_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (s && !strcmp(s, l->v[i]))
			return true;
	return false;
}

/* An inclusive range of times read from NAME_gte / NAME_lte. */
struct bounds {
	bool has_lo, has_hi;
	int64_t lo, hi;
};

static int bounds_read(const struct dag_date_range *r, const char *name, struct bounds *b,
                       struct weir_error *err)
{
	char key[48];

	memset(b, 0, sizeof *b);
	if (r->gte) {
		snprintf(key, sizeof key, "%s_gte", name);
		if (dm_parse_date(r->gte, key, &b->lo, err) < 0)
			return -1;
		b->has_lo = true;
	}
	if (r->lte) {
		snprintf(key, sizeof key, "%s_lte", name);
		if (dm_parse_date(r->lte, key, &b->hi, err) < 0)
			return -1;
		b->has_hi = true;
	}
	return 0;
}

static bool has_bounds(const struct bounds *b)
{
	return b->has_lo || b->has_hi;
}

/* `ms` 0 (no such date yet) matches no bound. */
static bool bounds_match(const struct bounds *b, int64_t ms)
{
	if (has_bounds(b) && ms <= 0)
		return false;
	return (!b->has_lo || ms >= b->lo) && (!b->has_hi || ms <= b->hi);
}

static int64_t latest(int64_t a, int64_t b, int64_t c)
{
	int64_t m = a > b ? a : b;
	return m > c ? m : c;
}

/* The four date filters of runs and task instances. */
struct date_filters {
	struct bounds execution, start, end, updated;
};

static int date_filters_read(const struct dag_date_range *execution,
                             const struct dag_date_range *start, const struct dag_date_range *end,
                             const struct dag_date_range *updated, struct date_filters *f,
                             struct weir_error *err)
{
	if (bounds_read(execution, "execution_date", &f->execution, err) < 0 ||
	    bounds_read(start, "start_date", &f->start, err) < 0 ||
	    bounds_read(end, "end_date", &f->end, err) < 0 ||
	    bounds_read(updated, "updated_at", &f->updated, err) < 0) {
		err->kind = WEIR_E_INVALID;
		return -1;
	}
	return 0;
}

/* Whether `p` (SQL LIKE: '%' any run of characters, '_' any one; any
 * case) matches the start of `s`: all of it unless `open_end`. */
static bool like(const char *s, const char *p, bool open_end)
{
	for (; *p; p++, s++) {
		if (*p == '%') {
			for (const char *t = s;; t++) {
				if (like(t, p + 1, open_end))
					return true;
				if (!*t)
					return false;
			}
		}
		if (!*s || (*p != '_' && tolower((unsigned char)*p) != tolower((unsigned char)*s)))
			return false;
	}
	return open_end || *s == '\0';
}

/* Airflow's dag_id.ilike("%pattern%"). */
static bool dag_id_matches(const char *dag_id, const char *pattern)
{
	for (const char *s = dag_id;; s++) {
		if (like(s, pattern, true))
			return true;
		if (!*s)
			return false;
	}
}

/* ---- DAGs ---- */

static bool dag_matches(struct dag_manager *dm, const struct dag_row *row,
                        const struct dag_list_query *q)
{
	const struct dag_spec *s;
	bool tagged;

	if (q->only_active && !row->active)
		return false;
	if (!dm_dag_allows(dm, row->dag_id, q->reader))
		return false;
	if (q->paused >= 0 && row->paused != (q->paused == 1))
		return false;
	if (q->dag_id_pattern && !dag_id_matches(row->dag_id, q->dag_id_pattern))
		return false;
	if (q->tags.n == 0)
		return true;
	dm_next_dagrun(dm, row, &s);
	tagged = false;
	for (size_t i = 0; s && i < s->tags.n && !tagged; i++)
		tagged = str_in(s->tags.v[i], &q->tags);
	return tagged;
}

int dm_op_list_dags(void *ctx, const struct dag_list_query *q, struct dag_list *out,
                    struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_row *rows = NULL;
	size_t n = 0, skipped = 0, alloc = 0;
	int limit = q->limit > 0 ? q->limit : 100, rc = 0;

	if (dag_store_dag_list(dm->ds, false, &rows, &n, err) < 0)
		return -1;
	for (size_t k = 0; k < n; k++) {
		struct dag_row *row = &rows[q->desc ? n - 1 - k : k];
		if (!dag_matches(dm, row, q))
			continue;
		out->total++;
		if (skipped < (size_t)(q->offset > 0 ? q->offset : 0)) {
			skipped++;
		} else if (out->n < (size_t)limit) {
			if (ALLOC_GROW(out->v, out->n + 1, alloc) < 0) {
				rc = weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
				break;
			}
			/* the row moves to the page */
			out->v[out->n] = (struct dag_view){.row = *row};
			memset(row, 0, sizeof *row);
			dm_dag_view_fill(dm, &out->v[out->n++]);
		}
	}
	dag_rows_free(rows, n);
	if (rc < 0)
		dag_list_free(out);
	return rc;
}

/* ---- runs ---- */

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static const char *g_order; /* qsort has no context argument */

static int cmp_run(const void *pa, const void *pb)
{
	const struct dag_run_row *a = pa, *b = pb;
	const char *k = g_order;
	int desc = 0, c = 0;

	if (*k == '-') {
		desc = 1;
		k++;
	}
#define CMP_I(x, y) ((x) < (y) ? -1 : (x) > (y) ? 1 : 0)
	if (!strcmp(k, "start_date"))
		c = CMP_I(a->start_date, b->start_date);
	else if (!strcmp(k, "end_date"))
		c = CMP_I(a->end_date, b->end_date);
	else if (!strcmp(k, "state"))
		c = cmp_str(dag_run_state_name(a->state), dag_run_state_name(b->state));
	else if (!strcmp(k, "dag_run_id") || !strcmp(k, "run_id"))
		c = cmp_str(a->run_id, b->run_id);
	else if (!strcmp(k, "dag_id"))
		c = cmp_str(a->dag_id, b->dag_id);
	else if (!strcmp(k, "id"))
		c = CMP_I(a->id, b->id);
	else
		c = CMP_I(a->logical_date, b->logical_date);
	if (c == 0)
		c = CMP_I(a->id, b->id);
#undef CMP_I
	return desc ? -c : c;
}

/* `states`: a bit per enum dag_run_state asked for; 0: any. */
static bool run_matches(const struct dag_run_row *r, const struct dag_run_list_query *q,
                        unsigned states, const struct date_filters *f)
{
	return (states == 0 || (states & (1u << r->state))) &&
	       (q->dag_ids.n == 0 || str_in(r->dag_id, &q->dag_ids)) &&
	       bounds_match(&f->execution, r->logical_date ? r->logical_date : 1) &&
	       bounds_match(&f->start, r->start_date) && bounds_match(&f->end, r->end_date) &&
	       bounds_match(&f->updated, latest(r->queued_at, r->start_date, r->end_date));
}

/* A page of one DAG's runs by logical date (newest first when `desc`; in at
 * most one state: `states`, a bit per enum dag_run_state, 0 for any) and
 * their count, from the store's index and its counts: the listing the
 * Airflow client and the UI ask for, whose cost does not grow with the
 * DAG's history.  0, or -1 with err. */
static int list_dag_runs_page(struct dag_manager *dm, const char *dag_id, unsigned states,
                              bool desc, int limit, int offset, struct dag_run_list *out,
                              struct weir_error *err)
{
	enum dag_run_state state = DAG_RUN_QUEUED;
	struct dag_run_row *rows = NULL;
	size_t n = 0;
	int64_t total = 0;

	for (int k = 0; k < DAG_RUN_STATE_COUNT; k++)
		if (states & (1u << k))
			state = (enum dag_run_state)k;
	struct dag_run_query sq = {.dag_id = dag_id,
	                           .by_state = states != 0,
	                           .state = state,
	                           .newest_first = desc,
	                           .limit = limit,
	                           .offset = offset};
	if (dag_store_run_count(dm->ds, &sq, &total, err) < 0 ||
	    dag_store_run_list(dm->ds, &sq, &rows, &n, err) < 0)
		return -1;
	out->v = rows;
	out->n = n;
	out->total = (size_t)total;
	return 0;
}

int dm_op_list_runs(void *ctx, const char *dag_id, const struct dag_run_list_query *q,
                    struct dag_run_list *out, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_query sq = {0};
	struct dag_run_row *rows = NULL;
	struct date_filters f;
	size_t n = 0, total = 0, skipped = 0, kept = 0;
	int limit = q->limit > 0 ? q->limit : 100, offset = q->offset > 0 ? q->offset : 0;
	const char *order = q->order_by && *q->order_by ? q->order_by : "execution_date";
	const char *k = order[0] == '-' ? order + 1 : order;
	enum dag_run_state rs;
	unsigned states = 0;

	if (strcmp(k, "execution_date") && strcmp(k, "logical_date") && strcmp(k, "start_date") &&
	    strcmp(k, "end_date") && strcmp(k, "state") && strcmp(k, "dag_run_id") &&
	    strcmp(k, "run_id") && strcmp(k, "dag_id") && strcmp(k, "id")) {
		return weir_error_set(err, WEIR_E_INVALID,
		                      "order_by: expected [-]execution_date, start_date, end_date, "
		                      "state, dag_run_id or id, got \"%s\"",
		                      order);
	}
	for (size_t i = 0; i < q->states.n; i++)
		if (dag_run_state_from_name(q->states.v[i], &rs) < 0) {
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "state: expected queued, running, success or failed, got "
			    "\"%s\"",
			    q->states.v[i]);
		} else {
			states |= 1u << rs;
		}
	if (date_filters_read(&q->execution_date, &q->start_date, &q->end_date, &q->updated_at, &f,
	                      err) < 0)
		return -1;
	if (strcmp(dag_id, "~")) {
		if (dm_dag_check_exists(dm, dag_id, err) < 0)
			return -1;
		sq.dag_id = dag_id;
	}
	if (sq.dag_id && q->dag_ids.n == 0 && (states & (states - 1)) == 0 &&
	    (!strcmp(k, "execution_date") || !strcmp(k, "logical_date")) &&
	    !has_bounds(&f.execution) && !has_bounds(&f.start) && !has_bounds(&f.end) &&
	    !has_bounds(&f.updated))
		return list_dag_runs_page(dm, dag_id, states, order[0] == '-', limit, offset, out,
		                          err);
	if (dag_store_run_list(dm->ds, &sq, &rows, &n, err) < 0)
		return -1;
	g_order = order;
	if (n > 1)
		qsort(rows, n, sizeof *rows, cmp_run);
	/* the page moves to the front of rows; the rest is released */
	for (size_t i = 0; i < n; i++) {
		bool keep = false;
		if (run_matches(&rows[i], q, states, &f) &&
		    (sq.dag_id || dm_dag_allows(dm, rows[i].dag_id, q->reader))) {
			total++;
			if (skipped < (size_t)offset)
				skipped++;
			else
				keep = kept < (size_t)limit;
		}
		if (keep)
			rows[kept++] = rows[i];
		else
			dag_run_row_release(&rows[i]);
	}
	out->v = rows;
	out->n = kept;
	out->total = total;
	return 0;
}

/* ---- task instances ---- */

struct ti_filters {
	const struct dag_ti_list_query *q;
	unsigned states; /* a bit per enum dag_ti_state asked for; 0: any */
	struct date_filters dates;
};

/* A date the TaskInstance shows (null: 0). */
/* A time as a filter reads it back from the TI's text (0: null, or text
 * that does not read as a date). */
static int64_t shown_date(int64_t ms)
{
	char buf[48];
	int64_t out = 0;

	if (ms <= 0 ||
	    dm_parse_date(clock_format_airflow(ms, buf, sizeof buf), "date", &out, NULL) < 0)
		return 0;
	return out;
}

/* The task's queue as its DAG file gives it (NULL: none). */
static const char *task_queue(const struct dag_spec *spec, const char *task_id)
{
	long k = spec ? dag_spec_task_index(spec, task_id) : -1;

	return k >= 0 ? spec->tasks[k].queue : NULL;
}

/* Whether TI row r of DAG `spec` (of `run`), showing `sh`, passes the
 * filters: what the TI's view shows of it (dag_view_ti).  What no filter asks
 * for is not looked up: its task's queue (a search of the DAG's tasks, so a
 * listing was quadratic in them) and the dates. */
static bool ti_matches(const struct dag_ti_row *r, const struct dag_run_row *run,
                       const struct dag_ti_shown *sh, const struct dag_spec *spec,
                       const struct ti_filters *f)
{
	const struct dag_ti_list_query *q = f->q;
	const struct date_filters *fd = &f->dates;
	int64_t start, end;

	if (f->states && !(f->states & (1u << r->state)))
		return false;
	if (q->pools.n && !str_in(r->pool, &q->pools))
		return false;
	if (q->queues.n && !str_in(task_queue(spec, r->task_id), &q->queues))
		return false;
	if (q->task_ids.n && !str_in(r->task_id, &q->task_ids))
		return false;
	if (q->has_duration_gte || q->has_duration_lte) {
		double d = (double)(sh->end_date - sh->start_date) / 1000.0;
		if (!sh->start_date || !sh->end_date ||
		    (q->has_duration_gte && d < q->duration_gte) ||
		    (q->has_duration_lte && d > q->duration_lte))
			return false;
	}
	if (!has_bounds(&fd->execution) && !has_bounds(&fd->start) && !has_bounds(&fd->end) &&
	    !has_bounds(&fd->updated))
		return true;
	start = shown_date(sh->start_date);
	end = shown_date(sh->end_date);
	return bounds_match(&fd->execution, shown_date(run ? run->logical_date : 0)) &&
	       bounds_match(&fd->start, start) && bounds_match(&fd->end, end) &&
	       bounds_match(&fd->updated, latest(shown_date(r->queued_at), start, end));
}

/* A page of TIs being gathered. */
struct ti_page {
	struct dag_ti_list *out;
	size_t alloc, skipped, offset, limit;
};

/* The TIs of one run that pass the filters, into the page.  One without a
 * view (dag_view_ti_showable) is none, and counts for nothing. */
static int list_run_tis(struct dag_manager *dm, const struct dag_run_row *run,
                        const struct ti_filters *f, struct ti_page *page, struct weir_error *err)
{
	const struct dag_spec *spec = dm_spec_of(dm, run->dag_id, NULL);
	struct dag_ti_list *out = page->out;
	struct dag_ti_row *rows = NULL;
	size_t n = 0;
	bool no_sla, shown_filter;
	int rc = 0;

	if (dag_store_tis_of_run(dm->ds, run->dag_id, run->run_id, &rows, &n, err) < 0)
		return -1;
	no_sla = !notifier_run_has_sla_miss(dm->notifier, run->dag_id, run->run_id);
	shown_filter = f->q->has_duration_gte || f->q->has_duration_lte ||
	               has_bounds(&f->dates.start) || has_bounds(&f->dates.end) ||
	               has_bounds(&f->dates.updated);
	for (size_t i = 0; i < n && rc == 0; i++) {
		/* rows[i] borrowed until it moves to the page */
		struct dag_ti_view t = {.row = rows[i], .logical_date = run->logical_date};
		struct job_row job = {0};
		struct dag_job_view v = {0};
		struct dag_ti_shown sh = {0};

		/* the filters that read what the TI shows read its job first */
		if (shown_filter) {
			dm_ti_job_view(dm, &rows[i], &job, &v);
			dag_view_ti_shown(&rows[i], &v, &sh);
		}
		if (!ti_matches(&rows[i], run, &sh, spec, f)) {
			job_row_release(&job);
			continue;
		}
		if (!shown_filter)
			dm_ti_job_view(dm, &rows[i], &job, &v);
		t.job = v;
		if (!dag_view_ti_showable(&t)) {
			job_row_release(&job);
			continue;
		}
		out->total++;
		if (page->skipped < page->offset) {
			page->skipped++;
		} else if (out->n < page->limit) {
			t.job = (struct dag_job_view){0};
			if (ALLOC_GROW(out->v, out->n + 1, page->alloc) < 0) {
				rc = weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			} else {
				memset(&rows[i], 0, sizeof rows[i]); /* moved */
				out->v[out->n++] = t;
				rc = dm_ti_view_fill(dm, &out->v[out->n - 1], &v, no_sla, err);
			}
		}
		job_row_release(&job);
	}
	dag_ti_rows_free(rows, n);
	return rc;
}

/* The runs of one DAG (run_id "~": all of them, by logical date). */
static int list_dag_tis(struct dag_manager *dm, const char *dag_id, const char *run_id,
                        const struct ti_filters *f, struct ti_page *page, struct weir_error *err)
{
	struct dag_run_query sq = {.dag_id = dag_id};
	struct dag_run_row *runs = NULL;
	size_t n = 0;
	int rc = 0;

	if (dag_store_run_list(dm->ds, &sq, &runs, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (strcmp(run_id, "~")
		        ? strcmp(runs[i].run_id, run_id) != 0
		        : (f->q->run_ids.n && !str_in(runs[i].run_id, &f->q->run_ids)))
			continue;
		if (!bounds_match(&f->dates.execution,
		                  runs[i].logical_date ? runs[i].logical_date : 1))
			continue;
		rc = list_run_tis(dm, &runs[i], f, page, err);
	}
	dag_run_rows_free(runs, n);
	return rc;
}

int dm_op_list_tis(void *ctx, const char *dag_id, const char *run_id,
                   const struct dag_ti_list_query *q, struct dag_ti_list *out,
                   struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct ti_filters f = {.q = q};
	struct ti_page page = {.out = out,
	                       .offset = q->offset > 0 ? (size_t)q->offset : 0,
	                       .limit = q->limit > 0 ? (size_t)q->limit : 100};
	int rc = 0;

	for (size_t i = 0; i < q->states.n; i++) {
		enum dag_ti_state ts;
		if (dag_ti_state_from_name(q->states.v[i], &ts) < 0)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "state: not a task instance state: \"%s\"",
			                      q->states.v[i]);
		f.states |= 1u << ts;
	}
	if (date_filters_read(&q->execution_date, &q->start_date, &q->end_date, &q->updated_at,
	                      &f.dates, err) < 0)
		return -1;
	if (strcmp(dag_id, "~")) {
		struct dag_run_row run = {0};
		if (dm_dag_check_exists(dm, dag_id, err) < 0)
			return -1;
		if (strcmp(run_id, "~")) {
			if (dm_run_row(dm, dag_id, run_id, &run, err) < 0)
				return -1;
			dag_run_row_release(&run);
		}
	}
	if (strcmp(dag_id, "~")) {
		rc = list_dag_tis(dm, dag_id, run_id, &f, &page, err);
	} else {
		struct dag_row *dags = NULL;
		size_t n = 0;
		if (dag_store_dag_list(dm->ds, false, &dags, &n, err) < 0)
			return -1;
		for (size_t i = 0; i < n && rc == 0; i++)
			if ((q->dag_ids.n == 0 || str_in(dags[i].dag_id, &q->dag_ids)) &&
			    dm_dag_allows(dm, dags[i].dag_id, q->reader))
				rc = list_dag_tis(dm, dags[i].dag_id, run_id, &f, &page, err);
		dag_rows_free(dags, n);
	}
	if (rc < 0)
		dag_ti_list_free(out);
	return rc;
}
