/* observe_series.c: the server's series (observe_series.h) over the
 * registry's types (lib/metrics.h); the DAG table is an open-addressed
 * array of fixed slots, so that a run's end never allocates.
 */
#include "server/observe_series.h"

#include <stdio.h>
#include <string.h>

#include "lib/metrics.h"

#define DAG_ID_MAX 250
#define DAG_TABLE 1024 /* a power of two, twice OBSERVE_DAG_MAX: probes stay short */

static struct metrics_hist hists[OBSERVE_HIST_COUNT] = {
    [OBSERVE_JOB_QUEUE_WAIT] = METRICS_HIST("weir_job_queue_wait_seconds",
                                            "Time a job attempt waited in the queue before its "
                                            "resources were allocated.",
                                            wait),
    [OBSERVE_JOB_RUN] = METRICS_HIST("weir_job_run_seconds",
                                     "Time a job ran, from every task registered to its end "
                                     "(its last attempt).",
                                     long),
    [OBSERVE_TI_QUEUE_WAIT] =
        METRICS_HIST("weir_task_instance_queue_wait_seconds",
                     "Time a DAG task instance's try waited from queued to started.", wait),
    [OBSERVE_TI_RUN] = METRICS_HIST("weir_task_instance_run_seconds",
                                    "Time a DAG task instance's try ran, from its start to its "
                                    "end.",
                                    long),
    [OBSERVE_LOOP_LAG] = METRICS_HIST("weir_loop_timer_lag_seconds",
                                      "How late the event loop's heartbeat timer fired.", short),
    [OBSERVE_LOOP_TURN] = METRICS_HIST("weir_loop_turn_seconds",
                                       "Time one turn of the event loop spent working (between "
                                       "two waits for events).",
                                       short),
};

struct dag_slot {
	char dag_id[DAG_ID_MAX + 1];
	struct metrics_hist_cells duration;
	atomic_uint_fast64_t success, failed;
};

static atomic_uint_fast64_t counters[OBSERVE_COUNTER_COUNT];
/* slot 0 is "_other"; slots 1..OBSERVE_DAG_MAX are DAGs in the order seen */
static struct dag_slot dags[OBSERVE_DAG_MAX + 1];
static int n_dags;
static short dag_index[DAG_TABLE]; /* 0: empty, else a slot */

void observe_series_time(enum observe_hist h, double seconds)
{
	if ((unsigned)h < OBSERVE_HIST_COUNT)
		metrics_hist_observe(&hists[h], seconds);
}

void observe_series_time_ms(enum observe_hist h, int64_t start_ms, int64_t end_ms)
{
	if ((unsigned)h < OBSERVE_HIST_COUNT)
		metrics_hist_observe_ms(&hists[h], start_ms, end_ms);
}

void observe_series_count(enum observe_counter c, uint64_t n)
{
	if ((unsigned)c < OBSERVE_COUNTER_COUNT)
		metrics_counter_add(&counters[c], n);
}

void observe_series_notification(bool sent)
{
	observe_series_count(sent ? OBSERVE_NOTIFICATIONS_SENT : OBSERVE_NOTIFICATIONS_FAILED, 1);
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
	if (n_dags >= OBSERVE_DAG_MAX)
		return &dags[0];
	n_dags++;
	snprintf(dags[n_dags].dag_id, sizeof dags[n_dags].dag_id, "%s", dag_id);
	dag_index[i] = (short)n_dags;
	return &dags[n_dags];
}

void observe_series_dag_run_end(const char *dag_id, bool success, double seconds)
{
	struct dag_slot *d = dag_slot(dag_id);

	metrics_cells_observe(&d->duration, metrics_bounds_long, METRICS_BOUNDS_LONG_N, seconds);
	metrics_counter_add(success ? &d->success : &d->failed, 1);
}

/* ---- the page ---- */

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

	metrics_render_header(out, "weir_dag_run_duration_seconds", "histogram",
	                      "Time a DAG run took from its start to its final state, per DAG.");
	for (int k = 0; k <= n_dags; k++) {
		if (!metrics_counter_load(&dags[k].duration.count))
			continue;
		dag_label(&lb, k);
		metrics_render_cells(out, "weir_dag_run_duration_seconds", lb.buf,
		                     &dags[k].duration, metrics_bounds_long, METRICS_BOUNDS_LONG_N);
	}
	metrics_render_header(out, "weir_dag_runs_total", "counter",
	                      "DAG runs that reached a final state, per DAG and state.");
	for (int k = 0; k <= n_dags; k++) {
		if (!metrics_counter_load(&dags[k].duration.count))
			continue;
		dag_label(&lb, k);
		strbuf_addf(out, "weir_dag_runs_total{%sstate=\"success\"} %llu\n", lb.buf,
		            (unsigned long long)metrics_counter_load(&dags[k].success));
		strbuf_addf(out, "weir_dag_runs_total{%sstate=\"failed\"} %llu\n", lb.buf,
		            (unsigned long long)metrics_counter_load(&dags[k].failed));
	}
	if (lb.failed)
		out->failed = true;
	strbuf_release(&lb);
}

static unsigned long long count_of(enum observe_counter c)
{
	return (unsigned long long)metrics_counter_load(&counters[c]);
}

static void render(struct strbuf *out)
{
	for (int h = 0; h < OBSERVE_HIST_COUNT; h++)
		metrics_render_hist(out, &hists[h]);
	render_dags(out);
	metrics_render_header(out, "weir_notifications_total", "counter",
	                      "Notification deliveries that ended, by result (sent, or failed "
	                      "after every retry).");
	strbuf_addf(out, "weir_notifications_total{result=\"sent\"} %llu\n",
	            count_of(OBSERVE_NOTIFICATIONS_SENT));
	strbuf_addf(out, "weir_notifications_total{result=\"failed\"} %llu\n",
	            count_of(OBSERVE_NOTIFICATIONS_FAILED));
	metrics_render_header(out, "weir_event_log_records_total", "counter",
	                      "Records written to the event log (state-changing requests).");
	strbuf_addf(out, "weir_event_log_records_total %llu\n",
	            count_of(OBSERVE_EVENT_LOG_WRITTEN));
	metrics_render_header(out, "weir_event_log_pruned_total", "counter",
	                      "Event log records removed by the pruning policy.");
	strbuf_addf(out, "weir_event_log_pruned_total %llu\n", count_of(OBSERVE_EVENT_LOG_PRUNED));
}

static void reset(void)
{
	for (int h = 0; h < OBSERVE_HIST_COUNT; h++)
		memset(&hists[h].cells, 0, sizeof hists[h].cells);
	memset(counters, 0, sizeof counters);
	memset(dags, 0, sizeof dags);
	memset(dag_index, 0, sizeof dag_index);
	n_dags = 0;
}

static struct metrics_source source = {render, reset, NULL};

void observe_series_add(void)
{
	metrics_add_source(&source);
}
