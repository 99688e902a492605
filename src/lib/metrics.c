/* metrics.c: the registry (metrics.h): histogram cells of relaxed atomics,
 * the text format, the list of sources.
 *
 * Buckets are Prometheus's cumulative "le" buckets, kept here per bucket
 * and summed when rendered, so an observation is one bucket's add plus the
 * count and the sum.
 */
#include "lib/metrics.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const double metrics_bounds_long[METRICS_BOUNDS_LONG_N] = {
    0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600, 10800, 43200, 86400};
const double metrics_bounds_wait[METRICS_BOUNDS_WAIT_N] = {0.01, 0.05, 0.1, 0.5, 1,   5,
                                                           10,   30,   60,  300, 900, 3600};
const double metrics_bounds_short[METRICS_BOUNDS_SHORT_N] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};

_Static_assert(METRICS_BOUNDS_LONG_N <= METRICS_MAX_BOUNDS, "too many buckets");
_Static_assert(METRICS_BOUNDS_WAIT_N <= METRICS_MAX_BOUNDS, "too many buckets");
_Static_assert(METRICS_BOUNDS_SHORT_N <= METRICS_MAX_BOUNDS, "too many buckets");

static struct metrics_source *sources, **sources_tail = &sources;

void metrics_cells_observe(struct metrics_hist_cells *c, const double *bounds, int n_bounds,
                           double seconds)
{
	int i = 0;

	if (!(seconds > 0)) /* NaN too */
		seconds = 0;
	while (i < n_bounds && seconds > bounds[i])
		i++;
	atomic_fetch_add_explicit(&c->bucket[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->count, 1, memory_order_relaxed);
	if (seconds < 1.8e10) /* past that, nanoseconds overflow 64 bits */
		atomic_fetch_add_explicit(&c->sum_ns, (uint_fast64_t)llround(seconds * 1e9),
		                          memory_order_relaxed);
}

void metrics_hist_observe(struct metrics_hist *h, double seconds)
{
	metrics_cells_observe(&h->cells, h->bounds, h->n_bounds, seconds);
}

void metrics_hist_observe_ms(struct metrics_hist *h, int64_t start_ms, int64_t end_ms)
{
	if (start_ms <= 0 || end_ms <= 0)
		return;
	metrics_hist_observe(h, end_ms > start_ms ? (double)(end_ms - start_ms) / 1000.0 : 0);
}

void metrics_counter_add(atomic_uint_fast64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

uint64_t metrics_counter_load(atomic_uint_fast64_t *c)
{
	return (uint64_t)atomic_load_explicit(c, memory_order_relaxed);
}

/* ---- the text format ---- */

int metrics_render_header(struct strbuf *out, const char *name, const char *type, const char *help)
{
	return strbuf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int metrics_render_label_value(struct strbuf *out, const char *value)
{
	for (const char *p = value ? value : ""; *p; p++) {
		if (*p == '\\' || *p == '"')
			strbuf_addch(out, '\\');
		if (*p == '\n')
			strbuf_addstr(out, "\\n");
		else
			strbuf_addch(out, *p);
	}
	return out->failed ? -1 : 0;
}

void metrics_render_cells(struct strbuf *out, const char *name, const char *labels,
                          struct metrics_hist_cells *c, const double *bounds, int n_bounds)
{
	uint64_t cum = 0;

	for (int i = 0; i < n_bounds; i++) {
		cum += metrics_counter_load(&c->bucket[i]);
		strbuf_addf(out, "%s_bucket{%sle=\"%g\"} %llu\n", name, labels, bounds[i],
		            (unsigned long long)cum);
	}
	cum += metrics_counter_load(&c->bucket[n_bounds]);
	strbuf_addf(out, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels, (unsigned long long)cum);
	/* the labels' trailing comma is dropped for the two label-less samples */
	if (*labels)
		strbuf_addf(out, "%s_sum{%.*s} %.9f\n%s_count{%.*s} %llu\n", name,
		            (int)strlen(labels) - 1, labels,
		            (double)metrics_counter_load(&c->sum_ns) / 1e9, name,
		            (int)strlen(labels) - 1, labels, (unsigned long long)cum);
	else
		strbuf_addf(out, "%s_sum %.9f\n%s_count %llu\n", name,
		            (double)metrics_counter_load(&c->sum_ns) / 1e9, name,
		            (unsigned long long)cum);
}

void metrics_render_hist(struct strbuf *out, struct metrics_hist *h)
{
	metrics_render_header(out, h->name, "histogram", h->help);
	metrics_render_cells(out, h->name, "", &h->cells, h->bounds, h->n_bounds);
}

/* ---- the sources ---- */

void metrics_add_source(struct metrics_source *s)
{
	for (struct metrics_source *p = sources; p; p = p->next)
		if (p == s)
			return;
	s->next = NULL;
	*sources_tail = s;
	sources_tail = &s->next;
}

int metrics_render(struct strbuf *out)
{
	for (struct metrics_source *s = sources; s; s = s->next)
		s->render(out);
	return out->failed ? -1 : 0;
}

void metrics_reset(void)
{
	for (struct metrics_source *s = sources; s; s = s->next)
		if (s->reset)
			s->reset();
}
