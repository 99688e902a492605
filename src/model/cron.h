/* cron.h: DAG schedules: 5-field cron expressions and presets, next and
 * previous fire times, Airflow's data intervals, and which runs are due.
 *
 * Times are instants in milliseconds since the epoch (UTC).  A schedule may
 * carry a time zone (`zone`, NULL: UTC): its expression is then read on
 * that zone's wall clock with Airflow 2.x's rules (CronDataIntervalTimetable):
 * a fixed schedule (one minute and one hour, "0 6 * * *") fires at that wall
 * time, the second one when it occurs twice and moved forward by the gap when
 * it does not occur (02:30 -> 03:30 on the spring-forward day); any other
 * ("0 * * * *", "0 6,18 * * *") steps by the wall-clock difference on the time
 * line, so that an hourly schedule fires every hour through both changes.
 * Nothing here
 * reads a clock: the caller passes "now" in, so the scheduler stays pure
 * and the tests are exact.
 *
 * Expressions: "minute hour day-of-month month day-of-week" with `*`, lists
 * (1,15), ranges (1-5), steps (*\/5, 1-10/2, 5/15 meaning 5-max/15), month
 * names (jan-dec) and weekday names (sun-sat), 7 also meaning Sunday.  As in
 * Vixie cron, when both day fields are restricted (neither starts with `*`)
 * a day matches if either matches; otherwise both must.  Presets: @hourly,
 * @daily (@midnight), @weekly, @monthly, @yearly, @annually, @once,
 * @continuous; "none" (or an empty text) means no schedule.  Two schedules
 * without an expression are set by their own calls: a delta of months and
 * milliseconds (a relativedelta) and a list of event times.
 *
 * A struct cron is a plain value (no heap): copy it freely.
 */
#ifndef WEIR_MODEL_CRON_H
#define WEIR_MODEL_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/tz.h"

/* Returned where there is no such time (no next fire, no end date...). */
#define CRON_NEVER INT64_MIN

#define CRON_TEXT_MAX 128

enum cron_kind {
	CRON_NONE = 0,   /* no schedule: runs only when triggered */
	CRON_ONCE,       /* one run, at the start date */
	CRON_EXPR,       /* a cron expression (presets included) */
	CRON_CONTINUOUS, /* @continuous: a run as soon as the previous ends
	                  * (sched/continuous_due.h; no grid) */
	CRON_DELTA,      /* a step of months and milliseconds from start_date
	                  * (Airflow's DeltaDataIntervalTimetable of a
	                  * relativedelta): cron_delta_add */
	CRON_EVENTS,     /* a list of times (Airflow's EventsTimetable) */
	CRON_RUNS,       /* a list of runs, each with its data interval and
	                  * the time it is due: what a custom Timetable's
	                  * next_dagrun_info gave (the DAG processor calls it) */
};

/* One run of a CRON_RUNS schedule: its data interval [start_ms, end_ms]
 * (its logical date is start_ms, as Airflow's DagRunInfo) and when it is
 * made (run_after). */
struct schedule_run {
	int64_t start_ms;
	int64_t end_ms;
	int64_t after_ms;
};

/* The most months a delta schedule may step (100 years). */
#define CRON_DELTA_MONTHS_MAX 1200

struct cron {
	enum cron_kind kind;
	char text[CRON_TEXT_MAX]; /* as written ("@daily", "*\/5 * * * *", "none") */
	uint64_t minutes;         /* bit m: minute m matches (0-59) */
	uint32_t hours;           /* bits 0-23 */
	uint32_t mdays;           /* bits 1-31 */
	uint16_t months;          /* bits 1-12 */
	uint8_t wdays;            /* bits 0-6, 0 = Sunday */
	bool mday_star;           /* the field started with '*' (Vixie's rule) */
	bool wday_star;
	bool fixed; /* one minute and one hour: placed, not stepped */
	/* Airflow's CronTriggerTimetable: a run at each fire time F, its logical
	 * date F - trigger_interval_ms and its data interval [F - interval, F]
	 * (see schedule_data_interval, schedule_due_runs) */
	bool trigger;
	int64_t trigger_interval_ms;
	const struct tz_zone *zone; /* the wall clock it reads (lib/tz.h); NULL: UTC */
	/* CRON_DELTA: months first (the day clamped to the month's length, as
	 * dateutil's relativedelta), then milliseconds; in UTC */
	int32_t delta_months;
	int64_t delta_ms;
	/* CRON_EVENTS: the times, sorted, each once (borrowed: the DAG spec
	 * that set them owns them; a copy of the struct shares them) */
	const int64_t *events;
	size_t n_events;
	bool restrict_to_events; /* a manual run's data interval: the latest
	                          * event at or before it (the first if none) */
	/* CRON_RUNS: the runs, by start, each after the one before (borrowed,
	 * as events) */
	const struct schedule_run *runs;
	size_t n_runs;
};

/* Parses `text` (NULL: no schedule) into `out`.  0, or -1 with err naming
 * the field and what was expected: `minute field "61": expected 0-59`.
 * The caller adds where (the file, line and key).  An expression that can
 * never fire ("0 0 30 2 *") is an error too. */
int cron_parse(const char *text, struct cron *out, struct weir_error *err);

/* The schedule's kind as a word, for the API and the CLI: "none", "once",
 * "cron", "continuous", "delta", "events" or "timetable" (CRON_RUNS: a
 * custom timetable's runs).  A static string. */
const char *cron_kind_name(enum cron_kind kind);

/* Sets the schedule's time zone by name ("Europe/Amsterdam"; NULL or "UTC":
 * UTC).  0, or -1 with err naming the zone (lib/tz.h's tz_zone_get). */
int cron_set_zone(struct cron *c, const char *name, struct weir_error *err);

/* A delta schedule of `months` and `ms` (at least one positive, neither
 * negative; months at most CRON_DELTA_MONTHS_MAX) into `out`, its text
 * `text` as the API shows it.  0, or -1 with err. */
int cron_set_delta(struct cron *out, int32_t months, int64_t ms, const char *text,
                   struct weir_error *err);

/* An events schedule over `events` (n of them, sorted and distinct,
 * borrowed) into `out`.  0, or -1 with err (none, or out of order). */
int cron_set_events(struct cron *out, const int64_t *events, size_t n, bool restrict_to_events,
                    struct weir_error *err);

/* A runs schedule over `runs` (n of them, at most 0 allowed: a timetable
 * that has no run left; each one's start after the one before, its end
 * not before its start; borrowed) into `out`, `text` its summary.  0, or
 * -1 with err naming the run out of order. */
int cron_set_runs(struct cron *out, const struct schedule_run *runs, size_t n, const char *text,
                  struct weir_error *err);

/* `t_ms` plus the delta schedule's step `times` times (negative: minus),
 * each step months first then milliseconds, as dateutil adds a
 * relativedelta. */
int64_t cron_delta_add(const struct cron *c, int64_t t_ms, int times);

/* The first fire time strictly after `after_ms`, or CRON_NEVER (CRON_NONE,
 * CRON_ONCE: those have no grid; see schedule_due_runs). */
int64_t cron_next(const struct cron *c, int64_t after_ms);

/* The last fire time strictly before `before_ms`, or CRON_NEVER. */
int64_t cron_prev(const struct cron *c, int64_t before_ms);

/* Whether `t_ms` is a fire time (whole minute, every field matching). */
bool cron_matches(const struct cron *c, int64_t t_ms);

/* A run's data interval [start_ms, end_ms).  CRON_RUNS: the listed run's
 * whose start is logical_ms (none listed: [D, D]).  Airflow's rule: the run whose
 * logical date is D covers [D, next fire after D) and is due once that
 * interval has ended.  A trigger schedule's run covers [D, D + interval]
 * and is due at D + interval, its fire time.  For CRON_ONCE and CRON_NONE (and a manual run of
 * any DAG at a time off the grid, which keeps [D, next fire)) the interval
 * of a run without a grid is [D, D]. */
struct schedule_interval {
	int64_t start_ms;
	int64_t end_ms;
};
struct schedule_interval schedule_data_interval(const struct cron *c, int64_t logical_ms);

/* When the scheduled run of `logical_ms` is due: its data interval's end,
 * or a listed run's run_after (CRON_RUNS). */
int64_t schedule_due_at(const struct cron *c, int64_t logical_ms);

/* The logical dates of the scheduled runs due at `now_ms` that come after
 * `last_ms` (the logical date of the latest scheduled run so far, or
 * CRON_NEVER when none), in order.
 *   start_ms: the DAG's start_date (the first interval starts at the first
 *     fire time at or after it); end_ms: its end_date or CRON_NEVER (no run
 *     whose logical date is after it).
 *   catchup: every interval that ended by now; without catchup, only the
 *     latest one that ended (Airflow's catchup=False).  A trigger schedule:
 *     every fire time from start_ms to now, or without catchup the latest
 *     fire time that has come (newer Airflow's first run of a
 *     CronTriggerTimetable; Airflow 2.x before 2.10 waits for the next one);
 *     end_ms bounds the fire times.
 *   CRON_RUNS: the listed runs whose start is after last_ms, each due at
 *     its run_after (start_ms, end_ms and catchup were the timetable's to
 *     apply when it made the list).
 * Writes at most `max` dates to `out` and returns how many it wrote; when
 * that is `max`, ask again with last_ms set to the last one for more. */
size_t schedule_due_runs(const struct cron *c, int64_t start_ms, int64_t end_ms, bool catchup,
                         int64_t last_ms, int64_t now_ms, int64_t *out, size_t max);

/* When the next scheduled run becomes due (the end of its interval), given
 * the same inputs; CRON_NEVER when no run will ever be due again.  A time
 * at or before now means a run is due already.  The server sets its timer
 * to this. */
int64_t schedule_next_due(const struct cron *c, int64_t start_ms, int64_t end_ms, bool catchup,
                          int64_t last_ms, int64_t now_ms);

/* A manual run's data interval at `logical_ms`: schedule_data_interval's,
 * except for an events schedule that restricts to its events: [E, E] of
 * the latest event E at or before it (the first event when all are
 * after), and a runs schedule: [D, D] (the server calls no timetable's
 * infer_manual_data_interval; docs/airflow.md). */
struct schedule_interval schedule_manual_interval(const struct cron *c, int64_t logical_ms);

/* A manual run's data interval as Airflow's infer_manual_data_interval
 * gives it (an Airflow DAG's `manual_interval:`, model/dag_spec.h): with
 * before_ms > 0 (a timedelta schedule) [D - before_ms, D]; a cron
 * expression's period that ends at the latest fire time at or before D
 * (CronDataIntervalTimetable: @daily triggered at 2024-05-06T00:00 covers
 * 05-05 to 05-06, and at 10:30 the same); a delta schedule's step that ends
 * at D; any other schedule (a trigger cron, events, @once, runs, none):
 * schedule_manual_interval's. */
struct schedule_interval schedule_manual_interval_ending(const struct cron *c, int64_t logical_ms,
                                                         int64_t before_ms);

/* Calendar helpers (UTC, proleptic Gregorian). */

/* Parses "2024-01-31", "2024-01-31T06:00", "2024-01-31 06:00:00",
 * "...Z", "...+02:00" (offsets are converted to UTC) or an integer of
 * seconds since the epoch.  0, or -1 with err (`field` names it). */
int schedule_parse_time(const char *text, const char *field, int64_t *out_ms,
                        struct weir_error *err);

/* As schedule_parse_time, a time without Z or an offset read on the wall
 * clock of `zone` (tz_local_to_utc's rules; NULL: UTC), as Airflow reads a
 * naive start_date in the DAG's default time zone. */
int schedule_parse_time_in(const char *text, const char *field, const struct tz_zone *zone,
                           int64_t *out_ms, struct weir_error *err);

/* "2024-01-31T06:00:00+00:00" (Airflow's ts).  Writes into buf (at least
 * 32 bytes); returns buf. */
char *schedule_format_ts(int64_t ms, char *buf, size_t size);

/* "2024-01-31" (nodash: "20240131").  buf of at least 16 bytes. */
char *schedule_format_ds(int64_t ms, bool nodash, char *buf, size_t size);

/* ms since the epoch of a UTC calendar time (no range checks). */
int64_t schedule_make_time(int year, int month, int day, int hour, int minute, int second);

#endif
