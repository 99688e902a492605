/* observe.c: the loop's watch, the gauges and the event log's ops
 * (observe.h).
 *
 * A loop turn's work is the time from its check phase (right after the
 * wait for events) to the next prepare phase (right before the next wait):
 * every callback of the turn runs between the two.  The heartbeat is a
 * one-shot timer started again at each firing; how late it fires is the
 * lag every timer of that turn saw.
 */
#include "server/observe.h"

#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "model/states.h"
#include "server/observe_series.h"
#include "store/event_log_store.h"

struct observe {
	uv_loop_t *loop;
	struct store *store;
	uv_prepare_t prepare;
	uv_check_t check;
	uv_timer_t heartbeat;
	uv_timer_t prune;
	uint64_t turn_start_ns; /* 0: no turn under way */
	uint64_t due_ns;        /* when the heartbeat should fire */
	int open_handles;
};

static void on_check(uv_check_t *h)
{
	struct observe *o = h->data;

	o->turn_start_ns = uv_hrtime();
}

static void on_prepare(uv_prepare_t *h)
{
	struct observe *o = h->data;

	if (o->turn_start_ns)
		observe_series_time(OBSERVE_LOOP_TURN,
		                    (double)(uv_hrtime() - o->turn_start_ns) / 1e9);
	o->turn_start_ns = 0;
}

static void on_heartbeat(uv_timer_t *t)
{
	struct observe *o = t->data;
	uint64_t now = uv_hrtime();

	observe_series_time(OBSERVE_LOOP_LAG,
	                    now > o->due_ns ? (double)(now - o->due_ns) / 1e9 : 0);
	o->due_ns = now + (uint64_t)OBSERVE_HEARTBEAT_MS * 1000000u;
	uv_timer_start(&o->heartbeat, on_heartbeat, OBSERVE_HEARTBEAT_MS, 0);
}

static void prune(struct observe *o)
{
	struct weir_error err = {0};
	int64_t removed = 0;
	int64_t before = clock_now_ms() - (int64_t)OBSERVE_EVENT_LOG_MAX_AGE_DAYS * 86400 * 1000;

	if (event_log_prune(o->store, before, OBSERVE_EVENT_LOG_MAX_ROWS, &removed, &err) < 0) {
		log_warn("event log: pruning: %s", err.msg);
		return;
	}
	observe_series_count(OBSERVE_EVENT_LOG_PRUNED, (uint64_t)removed);
	if (removed)
		log_info("event log: %lld old records pruned", (long long)removed);
}

static void on_prune(uv_timer_t *t)
{
	prune(t->data);
}

struct observe *observe_create(uv_loop_t *loop, struct store *store, struct weir_error *err)
{
	struct observe *o = calloc(1, sizeof *o);

	if (!o) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	o->loop = loop;
	o->store = store;
	observe_series_add();
	uv_prepare_init(loop, &o->prepare);
	uv_check_init(loop, &o->check);
	uv_timer_init(loop, &o->heartbeat);
	uv_timer_init(loop, &o->prune);
	o->prepare.data = o->check.data = o->heartbeat.data = o->prune.data = o;
	o->open_handles = 4;
	uv_prepare_start(&o->prepare, on_prepare);
	uv_check_start(&o->check, on_check);
	o->due_ns = uv_hrtime() + (uint64_t)OBSERVE_HEARTBEAT_MS * 1000000u;
	uv_timer_start(&o->heartbeat, on_heartbeat, OBSERVE_HEARTBEAT_MS, 0);
	uv_timer_start(&o->prune, on_prune, OBSERVE_PRUNE_EVERY_MS, OBSERVE_PRUNE_EVERY_MS);
	/* watching the loop is no reason for it to keep running */
	uv_unref((uv_handle_t *)&o->prepare);
	uv_unref((uv_handle_t *)&o->check);
	uv_unref((uv_handle_t *)&o->heartbeat);
	uv_unref((uv_handle_t *)&o->prune);
	prune(o);
	return o;
}

static void on_closed(uv_handle_t *h)
{
	struct observe *o = h->data;

	if (--o->open_handles == 0)
		free(o);
}

void observe_destroy(struct observe *o)
{
	if (!o)
		return;
	uv_close((uv_handle_t *)&o->prepare, on_closed);
	uv_close((uv_handle_t *)&o->check, on_closed);
	uv_close((uv_handle_t *)&o->heartbeat, on_closed);
	uv_close((uv_handle_t *)&o->prune, on_closed);
}

/* ---- the gauges ---- */

static const char *job_name(int s)
{
	return job_state_name((enum job_state)s);
}
static const char *task_name(int s)
{
	return task_state_name((enum task_state)s);
}
static const char *run_name(int s)
{
	return dag_run_state_name((enum dag_run_state)s);
}
static const char *ti_name(int s)
{
	return dag_ti_state_name((enum dag_ti_state)s);
}

struct gauge {
	enum state_count_table table;
	const char *name;
	const char *help;
	int n_states;
	const char *(*state_name)(int s);
};

static const struct gauge gauges[] = {
    {STATE_COUNT_JOBS, "weir_jobs", "Jobs in each state.", JOB_STATE_COUNT, job_name},
    {STATE_COUNT_TASKS, "weir_job_tasks", "Tasks of each job's current attempt, by state.",
     TASK_STATE_COUNT, task_name},
    {STATE_COUNT_DAG_RUNS, "weir_dag_runs", "DAG runs in each state.", DAG_RUN_STATE_COUNT,
     run_name},
    {STATE_COUNT_TASK_INSTANCES, "weir_task_instances", "DAG task instances in each state.",
     DAG_TI_STATE_COUNT, ti_name},
};

#define STATES_MAX 32

struct counts {
	const struct gauge *g;
	int64_t n[STATES_MAX];
};

static void count_one(void *arg, const char *state, int64_t n)
{
	struct counts *c = arg;

	for (int s = 0; s < c->g->n_states && s < STATES_MAX; s++)
		if (!strcmp(c->g->state_name(s), state)) {
			c->n[s] += n;
			return;
		}
}

static int op_gauges(void *ctx, struct strbuf *out, struct weir_error *err)
{
	struct observe *o = ctx;

	for (size_t i = 0; i < sizeof gauges / sizeof gauges[0]; i++) {
		struct counts c = {.g = &gauges[i]};
		if (store_count_by_state(o->store, gauges[i].table, count_one, &c, err) < 0)
			return -1;
		metrics_render_header(out, gauges[i].name, "gauge", gauges[i].help);
		for (int s = 0; s < gauges[i].n_states && s < STATES_MAX; s++)
			strbuf_addf(out, "%s{state=\"%s\"} %lld\n", gauges[i].name,
			            gauges[i].state_name(s), (long long)c.n[s]);
	}
	return 0;
}

/* ---- the event log ---- */

static int op_record(void *ctx, struct event_log_row *row, struct weir_error *err)
{
	struct observe *o = ctx;

	if (event_log_insert(o->store, row, err) < 0)
		return -1;
	observe_series_count(OBSERVE_EVENT_LOG_WRITTEN, 1);
	return 0;
}

static int op_list(void *ctx, const struct event_log_query *q, struct event_log_row **rows,
                   size_t *n, int64_t *total, struct weir_error *err)
{
	struct observe *o = ctx;

	return event_log_list(o->store, q, rows, n, total, err);
}

static int op_get(void *ctx, int64_t id, struct event_log_row *out, struct weir_error *err)
{
	struct observe *o = ctx;

	return event_log_get(o->store, id, out, err);
}

static const struct observe_api_ops ops = {
    .gauges = op_gauges,
    .event_record = op_record,
    .event_list = op_list,
    .event_get = op_get,
};

const struct observe_api_ops *observe_api_ops(void)
{
	return &ops;
}
