/* metrics.h: the process's metrics registry, in Prometheus's text
 * exposition format (docs/metrics.md lists every series).
 *
 * The registry knows no series of its own: it gives the types a series is
 * made of (histograms with fixed buckets, counters), the text format, and
 * the list of sources a page renders.  The layer that measures a thing
 * defines its series (the store its commits, store/store.c; the server its
 * jobs, task instances, DAG runs, loop and notifications,
 * server/observe_series.c; the API its HTTP counters, api/metrics_route.c)
 * and adds its source once.
 *
 * Counting is one or a few relaxed atomic additions, never an allocation
 * or a lock, so any layer may count on its hot path and any thread may
 * count (a libuv work item's thread too).  Histograms keep their sum in
 * integer nanoseconds.
 */
#ifndef WEIR_LIB_METRICS_H
#define WEIR_LIB_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"

#define METRICS_MAX_BOUNDS 16

/* The buckets every series shares (cumulative "le" bounds, in seconds). */
/* Seconds a job, a task or a run takes: from a tenth of a second to a day. */
#define METRICS_BOUNDS_LONG_N 14
extern const double metrics_bounds_long[METRICS_BOUNDS_LONG_N];
/* How long something waits for a slot: 10 ms to an hour. */
#define METRICS_BOUNDS_WAIT_N 12
extern const double metrics_bounds_wait[METRICS_BOUNDS_WAIT_N];
/* Work inside the server: 100 us to 2.5 s. */
#define METRICS_BOUNDS_SHORT_N 14
extern const double metrics_bounds_short[METRICS_BOUNDS_SHORT_N];

/* A histogram's counts: one per bucket (the last one: +Inf only, summed
 * when rendered), the count and the sum in nanoseconds.  Zero is empty. */
struct metrics_hist_cells {
	atomic_uint_fast64_t bucket[METRICS_MAX_BOUNDS + 1];
	atomic_uint_fast64_t count;
	atomic_uint_fast64_t sum_ns;
};

/* A histogram without labels: its name, help, buckets and counts. */
struct metrics_hist {
	const char *name;
	const char *help;
	const double *bounds;
	int n_bounds;
	struct metrics_hist_cells cells;
};

/* A static initializer: METRICS_HIST("weir_x_seconds", "help", long). */
#define METRICS_HIST(name_, help_, kind)                                                           \
	{                                                                                          \
		.name = (name_), .help = (help_), .bounds = metrics_bounds_##kind,                 \
		.n_bounds = (int)(sizeof metrics_bounds_##kind / sizeof metrics_bounds_##kind[0])  \
	}

/* Records one observation of `seconds` into cells with those bounds
 * (negative or NaN counts as 0). */
void metrics_cells_observe(struct metrics_hist_cells *c, const double *bounds, int n_bounds,
                           double seconds);
/* The same into a histogram. */
void metrics_hist_observe(struct metrics_hist *h, double seconds);
/* The same from two millisecond times (end before start counts as 0;
 * either one 0 or below: nothing is recorded, the time is unknown). */
void metrics_hist_observe_ms(struct metrics_hist *h, int64_t start_ms, int64_t end_ms);

/* Adds n to a counter; reads one. */
void metrics_counter_add(atomic_uint_fast64_t *c, uint64_t n);
uint64_t metrics_counter_load(atomic_uint_fast64_t *c);

/* ---- the text format ---- */

/* "# HELP name help\n# TYPE name type\n" */
int metrics_render_header(struct strbuf *out, const char *name, const char *type, const char *help);
/* A label value with Prometheus's escapes (\\, \", \n). */
int metrics_render_label_value(struct strbuf *out, const char *value);
/* The samples of one histogram's cells (no header); `labels` ("dag_id=\"x\","
 * with its trailing comma, or "") go first in every sample's label set. */
void metrics_render_cells(struct strbuf *out, const char *name, const char *labels,
                          struct metrics_hist_cells *c, const double *bounds, int n_bounds);
/* A histogram without labels: header and samples. */
void metrics_render_hist(struct strbuf *out, struct metrics_hist *h);

/* ---- the sources a page renders ---- */

/* A layer's series: render appends them (header and samples) to out, from
 * the loop's thread; reset sets them to zero (unit tests).  Statically
 * allocated by its owner; `next` is the registry's. */
struct metrics_source {
	void (*render)(struct strbuf *out);
	void (*reset)(void);
	struct metrics_source *next;
};

/* Adds a source to the page, once (adding it again does nothing); the page
 * renders sources in the order they were first added.  From the loop's
 * thread, before the page is asked for. */
void metrics_add_source(struct metrics_source *s);

/* Appends every source's series to `out`.  0, or -1 when out of memory. */
int metrics_render(struct strbuf *out);

/* Sets every source's series back to zero (unit tests). */
void metrics_reset(void);

#endif
