/* metrics.c: the registry (metrics.h): fixed arrays of relaxed atomics,
 * the DAG table an open-addressed array of fixed slots, the text format.
 *
 * Buckets are Prometheus's cumulative "le" buckets, kept here per bucket
 * and summed when rendered, so an observation is one bucket's add plus the
 * count and the sum.
 */
#include "lib/metrics.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define MAX_BOUNDS 16
#define DAG_ID_MAX 250
#define DAG_TABLE 1024 /* a power of two, twice METRICS_DAG_MAX: probes stay short */

struct hist_def {
	const char *name;
	const char *help;
	const double *bounds;
	int n;
};

struct hist_cells {
	atomic_uint_fast64_t bucket[MAX_BOUNDS + 1]; /* the last one: +Inf only */
	atomic_uint_fast64_t count;
	atomic_uint_fast64_t sum_ns;
};

/* Seconds a job, a task or a run takes: from a tenth of a second to a day. */
static const double long_bounds[] = {0.1, 0.5, 1,    5,    10,    30,    60,
                                     300, 900, 1800, 3600, 10800, 43200, 86400};
/* How long something waits for a slot: 10 ms to an hour. */
static const double wait_bounds[] = {0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600};
/* Work inside the server: 100 us to 2.5 s. */
static const double short_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                      0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};

#define BOUNDS(b) b, (int)(sizeof(b) / sizeof(b[0]))

static const struct hist_def hist_defs[METRICS_HIST_COUNT] = {
    [METRICS_JOB_QUEUE_WAIT] = {"weir_job_queue_wait_seconds",
                                "Time a job attempt waited in the queue before its resources "
                                "were allocated.",
                                BOUNDS(wait_bounds)},
    [METRICS_JOB_RUN] = {"weir_job_run_seconds",
                         "Time a job ran, from every task registered to its end (its last "
                         "attempt).",
                         BOUNDS(long_bounds)},
    [METRICS_TI_QUEUE_WAIT] = {"weir_task_instance_queue_wait_seconds",
                               "Time a DAG task instance's try waited from queued to started.",
                               BOUNDS(wait_bounds)},
    [METRICS_TI_RUN] = {"weir_task_instance_run_seconds",
                        "Time a DAG task instance's try ran, from its start to its end.",
                        BOUNDS(long_bounds)},
    [METRICS_STORE_COMMIT] = {"weir_store_commit_seconds",
                              "Time one commit of the store's SQLite transaction took.",
                              BOUNDS(short_bounds)},
    [METRICS_LOOP_LAG] = {"weir_loop_timer_lag_seconds",
                          "How late the event loop's heartbeat timer fired.", BOUNDS(short_bounds)},
    [METRICS_LOOP_TURN] = {"weir_loop_turn_seconds",
                           "Time one turn of the event loop spent working (between two waits "
                           "for events).",
                           BOUNDS(short_bounds)},
};

_Static_assert(sizeof long_bounds / sizeof long_bounds[0] <= MAX_BOUNDS, "too many buckets");
_Static_assert(sizeof wait_bounds / sizeof wait_bounds[0] <= MAX_BOUNDS, "too many buckets");
_Static_assert(sizeof short_bounds / sizeof short_bounds[0] <= MAX_BOUNDS, "too many buckets");

struct dag_slot {
	char dag_id[DAG_ID_MAX + 1];
	struct hist_cells duration;
	atomic_uint_fast64_t success, failed;
};

static struct hist_cells hists[METRICS_HIST_COUNT];
static atomic_uint_fast64_t counters[METRICS_COUNTER_COUNT];
/* slot 0 is "_other"; slots 1..METRICS_DAG_MAX are DAGs in the order seen */
static struct dag_slot dags[METRICS_DAG_MAX + 1];
static int n_dags;
static short dag_index[DAG_TABLE]; /* 0: empty, else a slot */

static void observe_cells(struct hist_cells *c, const double *bounds, int n, double seconds)
{
	int i = 0;

	if (!(seconds > 0)) /* NaN too */
		seconds = 0;
	while (i < n && seconds > bounds[i])
		i++;
	atomic_fetch_add_explicit(&c->bucket[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->count, 1, memory_order_relaxed);
	if (seconds < 1.8e10) /* past that, nanoseconds overflow 64 bits */
		atomic_fetch_add_explicit(&c->sum_ns, (uint_fast64_t)llround(seconds * 1e9),
		                          memory_order_relaxed);
}

void metrics_observe(enum metrics_hist h, double seconds)
{
	if ((unsigned)h >= METRICS_HIST_COUNT)
		return;
	observe_cells(&hists[h], hist_defs[h].bounds, hist_defs[h].n, seconds);
}

void metrics_observe_ms(enum metrics_hist h, int64_t start_ms, int64_t end_ms)
{
	if (start_ms <= 0 || end_ms <= 0)
		return;
	metrics_observe(h, end_ms > start_ms ? (double)(end_ms - start_ms) / 1000.0 : 0);
}

void metrics_count_add(enum metrics_counter c, uint64_t n)
{
	if ((unsigned)c < METRICS_COUNTER_COUNT)
		atomic_fetch_add_explicit(&counters[c], n, memory_order_relaxed);
}

void metrics_count(enum metrics_counter c)
{
	metrics_count_add(c, 1);
}

void metrics_count_notification(bool sent)
{
	metrics_count(sent ? METRICS_NOTIFICATIONS_SENT : METRICS_NOTIFICATIONS_FAILED);
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The DAG's slot, taken at its first run's end; "_other" when the table is
 * full or the id too long. */
static struct dag_slot *dag_slot(const char *dag_id)
{
	uint32_t i;

	if (!dag_id || strlen(dag_id) > DAG_ID_MAX)
		return &dags[0];
	for (i = hash_str(dag_id) & (DAG_TABLE - 1);; i = (i + 1) & (DAG_TABLE - 1)) {
		short k = dag_index[i];
		if (!k)
			break;
		if (!strcmp(dags[k].dag_id, dag_id))
			return &dags[k];
	}
	if (n_dags >= METRICS_DAG_MAX)
		return &dags[0];
	n_dags++;
	snprintf(dags[n_dags].dag_id, sizeof dags[n_dags].dag_id, "%s", dag_id);
	dag_index[i] = (short)n_dags;
	return &dags[n_dags];
}

void metrics_dag_run_end(const char *dag_id, bool success, double seconds)
{
	struct dag_slot *d = dag_slot(dag_id);

	observe_cells(&d->duration, long_bounds, (int)(sizeof long_bounds / sizeof long_bounds[0]),
	              seconds);
	atomic_fetch_add_explicit(success ? &d->success : &d->failed, 1, memory_order_relaxed);
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

static uint64_t load(atomic_uint_fast64_t *a)
{
	return (uint64_t)atomic_load_explicit(a, memory_order_relaxed);
}

/* The samples of one histogram; `labels` ("dag_id=\"x\"," or "") go first
 * in every sample's label set. */
static void render_cells(struct strbuf *out, const char *name, const char *labels,
                         struct hist_cells *c, const double *bounds, int n)
{
	uint64_t cum = 0;

	for (int i = 0; i < n; i++) {
		cum += load(&c->bucket[i]);
		strbuf_addf(out, "%s_bucket{%sle=\"%g\"} %llu\n", name, labels, bounds[i],
		            (unsigned long long)cum);
	}
	cum += load(&c->bucket[n]);
	strbuf_addf(out, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels, (unsigned long long)cum);
	/* the labels' trailing comma is dropped for the two label-less samples */
	if (*labels)
		strbuf_addf(out, "%s_sum{%.*s} %.9f\n%s_count{%.*s} %llu\n", name,
		            (int)strlen(labels) - 1, labels, (double)load(&c->sum_ns) / 1e9, name,
		            (int)strlen(labels) - 1, labels, (unsigned long long)cum);
	else
		strbuf_addf(out, "%s_sum %.9f\n%s_count %llu\n", name,
		            (double)load(&c->sum_ns) / 1e9, name, (unsigned long long)cum);
}

/* The dag_id label of slot k, "dag_id=\"...\"," into `lb`. */
static void dag_label(struct strbuf *lb, int k)
{
	strbuf_reset(lb);
	strbuf_addstr(lb, "dag_id=\"");
	metrics_render_label_value(lb, k ? dags[k].dag_id : "_other");
	strbuf_addstr(lb, "\",");
}

static void render_dags(struct strbuf *out)
{
	struct strbuf lb = STRBUF_INIT;
	int n = (int)(sizeof long_bounds / sizeof long_bounds[0]);

	metrics_render_header(out, "weir_dag_run_duration_seconds", "histogram",
	                      "Time a DAG run took from its start to its final state, per DAG.");
	for (int k = 0; k <= n_dags; k++) {
		if (!load(&dags[k].duration.count))
			continue;
		dag_label(&lb, k);
		render_cells(out, "weir_dag_run_duration_seconds", lb.buf, &dags[k].duration,
		             long_bounds, n);
	}
	metrics_render_header(out, "weir_dag_runs_total", "counter",
	                      "DAG runs that reached a final state, per DAG and state.");
	for (int k = 0; k <= n_dags; k++) {
		if (!load(&dags[k].duration.count))
			continue;
		dag_label(&lb, k);
		strbuf_addf(out, "weir_dag_runs_total{%sstate=\"success\"} %llu\n", lb.buf,
		            (unsigned long long)load(&dags[k].success));
		strbuf_addf(out, "weir_dag_runs_total{%sstate=\"failed\"} %llu\n", lb.buf,
		            (unsigned long long)load(&dags[k].failed));
	}
	if (lb.failed)
		out->failed = true;
	strbuf_release(&lb);
}

int metrics_render(struct strbuf *out)
{
	for (int h = 0; h < METRICS_HIST_COUNT; h++) {
		metrics_render_header(out, hist_defs[h].name, "histogram", hist_defs[h].help);
		render_cells(out, hist_defs[h].name, "", &hists[h], hist_defs[h].bounds,
		             hist_defs[h].n);
	}
	render_dags(out);
	metrics_render_header(out, "weir_notifications_total", "counter",
	                      "Notification deliveries that ended, by result (sent, or failed "
	                      "after every retry).");
	strbuf_addf(out, "weir_notifications_total{result=\"sent\"} %llu\n",
	            (unsigned long long)load(&counters[METRICS_NOTIFICATIONS_SENT]));
	strbuf_addf(out, "weir_notifications_total{result=\"failed\"} %llu\n",
	            (unsigned long long)load(&counters[METRICS_NOTIFICATIONS_FAILED]));
	metrics_render_header(out, "weir_event_log_records_total", "counter",
	                      "Records written to the event log (state-changing requests).");
	strbuf_addf(out, "weir_event_log_records_total %llu\n",
	            (unsigned long long)load(&counters[METRICS_EVENT_LOG_WRITTEN]));
	metrics_render_header(out, "weir_event_log_pruned_total", "counter",
	                      "Event log records removed by the pruning policy.");
	strbuf_addf(out, "weir_event_log_pruned_total %llu\n",
	            (unsigned long long)load(&counters[METRICS_EVENT_LOG_PRUNED]));
	return out->failed ? -1 : 0;
}

void metrics_reset(void)
{
	memset(hists, 0, sizeof hists);
	memset(counters, 0, sizeof counters);
	memset(dags, 0, sizeof dags);
	memset(dag_index, 0, sizeof dag_index);
	n_dags = 0;
}
