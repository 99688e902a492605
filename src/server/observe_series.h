/* observe_series.h: the server's series on the metrics page (lib/metrics.h
 * is the registry; docs/metrics.md lists every series): jobs, DAG task
 * instances, DAG runs per DAG, the loop, notifications, the event log.
 *
 * Counting is relaxed atomic additions, from any thread.  The series are
 * on the page once observe_series_add() has run (observe_create() calls
 * it); counting before that is kept.
 */
#ifndef WEIR_SERVER_OBSERVE_SERIES_H
#define WEIR_SERVER_OBSERVE_SERIES_H

#include <stdbool.h>
#include <stdint.h>

/* The histograms without labels. */
enum observe_hist {
	OBSERVE_JOB_QUEUE_WAIT, /* weir_job_queue_wait_seconds: queued -> allocated */
	OBSERVE_JOB_RUN,        /* weir_job_run_seconds: running -> ended (last attempt) */
	OBSERVE_TI_QUEUE_WAIT,  /* weir_task_instance_queue_wait_seconds: queued -> started */
	OBSERVE_TI_RUN,         /* weir_task_instance_run_seconds: a try, started -> ended */
	OBSERVE_LOOP_LAG,       /* weir_loop_timer_lag_seconds: how late a timer fired */
	OBSERVE_LOOP_TURN,      /* weir_loop_turn_seconds: a loop turn's work */
	OBSERVE_HIST_COUNT
};

/* The plain counters. */
enum observe_counter {
	OBSERVE_NOTIFICATIONS_SENT,   /* weir_notifications_total{result="sent"} */
	OBSERVE_NOTIFICATIONS_FAILED, /* weir_notifications_total{result="failed"} */
	OBSERVE_EVENT_LOG_WRITTEN,    /* weir_event_log_records_total */
	OBSERVE_EVENT_LOG_PRUNED,     /* weir_event_log_pruned_total */
	OBSERVE_COUNTER_COUNT
};

/* How many DAGs have their own dag_id label; the runs of DAGs past that
 * count under dag_id="_other" (the page stays bounded). */
#define OBSERVE_DAG_MAX 512

/* Adds the series to the metrics page (once; again does nothing). */
void observe_series_add(void);

/* Records one observation of `seconds` (negative counts as 0). */
void observe_series_time(enum observe_hist h, double seconds);
/* The same from two millisecond times (end before start counts as 0;
 * either one 0 or below: nothing is recorded, the time is unknown). */
void observe_series_time_ms(enum observe_hist h, int64_t start_ms, int64_t end_ms);
/* Adds n to a counter. */
void observe_series_count(enum observe_counter c, uint64_t n);
/* A notification's delivery ended: sent (true) or failed for good (false).
 * A retried delivery counts once, at its end. */
void observe_series_notification(bool sent);
/* A DAG run reached a final state after `seconds` (its start to its end).
 * From the loop's thread only: the first run of a DAG takes its slot. */
void observe_series_dag_run_end(const char *dag_id, bool success, double seconds);

#endif
