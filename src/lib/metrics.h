/* metrics.h: the process's metrics registry, in Prometheus's text
 * exposition format (docs/metrics.md lists every series).
 *
 * The registry is a set of fixed arrays made at start: counting an event is
 * one or a few relaxed atomic additions, never an allocation or a lock, so
 * any layer may count on its hot path and any thread may count (a libuv work
 * item's thread too).  Histograms keep their sum in integer nanoseconds.
 *
 * The series here are the ones whose events happen below the API layer (the
 * store's commits, the loop, jobs, task instances, DAG runs, notifications);
 * the API adds its HTTP series and the gauges it asks the server for when it
 * renders the page (api/metrics_route.h).
 */
#ifndef WEIR_LIB_METRICS_H
#define WEIR_LIB_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"

/* The histograms, each with its own fixed buckets (metrics.c). */
enum metrics_hist {
	METRICS_JOB_QUEUE_WAIT, /* weir_job_queue_wait_seconds: queued -> allocated */
	METRICS_JOB_RUN,        /* weir_job_run_seconds: running -> ended (last attempt) */
	METRICS_TI_QUEUE_WAIT,  /* weir_task_instance_queue_wait_seconds: queued -> started */
	METRICS_TI_RUN,         /* weir_task_instance_run_seconds: a try, started -> ended */
	METRICS_STORE_COMMIT,   /* weir_store_commit_seconds: one COMMIT */
	METRICS_LOOP_LAG,       /* weir_loop_timer_lag_seconds: how late a timer fired */
	METRICS_LOOP_TURN,      /* weir_loop_turn_seconds: a loop turn's work */
	METRICS_HIST_COUNT
};

/* The plain counters. */
enum metrics_counter {
	METRICS_NOTIFICATIONS_SENT,   /* weir_notifications_total{result="sent"} */
	METRICS_NOTIFICATIONS_FAILED, /* weir_notifications_total{result="failed"} */
	METRICS_EVENT_LOG_WRITTEN,    /* weir_event_log_records_total */
	METRICS_EVENT_LOG_PRUNED,     /* weir_event_log_pruned_total */
	METRICS_COUNTER_COUNT
};

/* How many DAGs have their own dag_id label; the runs of DAGs past that
 * count under dag_id="_other" (the page stays bounded). */
#define METRICS_DAG_MAX 512

/* Records one observation of `seconds` (negative counts as 0). */
void metrics_observe(enum metrics_hist h, double seconds);
/* The same from two millisecond times (end before start counts as 0;
 * either one 0 or below: nothing is recorded, the time is unknown). */
void metrics_observe_ms(enum metrics_hist h, int64_t start_ms, int64_t end_ms);
/* Adds one, or n, to a counter. */
void metrics_count(enum metrics_counter c);
void metrics_count_add(enum metrics_counter c, uint64_t n);
/* A notification's delivery ended: sent (true) or failed for good (false).
 * A retried delivery counts once, at its end. */
void metrics_count_notification(bool sent);
/* A DAG run reached a final state after `seconds` (its start to its end).
 * From the loop's thread only: the first run of a DAG takes its slot. */
void metrics_dag_run_end(const char *dag_id, bool success, double seconds);

/* Appends the text of every series above (HELP, TYPE, samples) to `out`.
 * 0, or -1 when out of memory.  From the loop's thread. */
int metrics_render(struct strbuf *out);

/* Helpers for whoever renders more series in the same format. */
/* "# HELP name help\n# TYPE name type\n" */
int metrics_render_header(struct strbuf *out, const char *name, const char *type, const char *help);
/* A label value with Prometheus's escapes (\\, \", \n). */
int metrics_render_label_value(struct strbuf *out, const char *value);

/* Sets every series back to zero and forgets the DAGs (unit tests). */
void metrics_reset(void);

#endif
