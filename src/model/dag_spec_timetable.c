/* dag_spec_timetable.c: the schedules that are no cron expression
 * (dag_spec_internal.h): `schedule: {delta: {years, months, weeks, days,
 * hours, minutes, seconds}}` (Airflow's relativedelta schedule: a step from
 * start_date) and `schedule: {events: [TIME, ...], restrict_to_events: B}`
 * (Airflow's EventsTimetable), and `schedule: {runs: [{start, end, after},
 * ...], summary, description, after, more}` (the runs a custom Timetable
 * gave the DAG processor: docs/internals/airflow.md, "Custom timetables"),
 * into dag->schedule (model/cron.h); and their JSON form.  Also the DAG's
 * `manual_interval:` (an Airflow DAG's manual runs' data interval).  `@continuous` is a preset of
 * cron_parse; its one rule, that at most one run is active, is checked here too. */
#include "model/dag_spec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS_DAY 86400000LL

/* The units of `delta:`, as relativedelta names them, and their size:
 * months (0: milliseconds) or milliseconds. */
static const struct {
	const char *name;
	int32_t months;
	int64_t ms;
} units[] = {
    {"years", 12, 0},        {"months", 1, 0},        {"weeks", 0, 7 * MS_DAY}, {"days", 0, MS_DAY},
    {"hours", 0, 3600000LL}, {"minutes", 0, 60000LL}, {"seconds", 0, 1000LL},   {NULL, 0, 0},
};

/* relativedelta's repr of months and milliseconds, normalized as it
 * normalizes: relativedelta(years=+1, months=+2, days=+3, hours=+4). */
static void delta_text(int32_t months, int64_t ms, char *out, size_t size)
{
	int64_t v[] = {months / 12,           months % 12,          ms / MS_DAY,
	               ms % MS_DAY / 3600000, ms % 3600000 / 60000, ms % 60000 / 1000};
	static const char *const names[] = {"years", "months",  "days",
	                                    "hours", "minutes", "seconds"};
	size_t n = (size_t)snprintf(out, size, "relativedelta(");

	for (size_t i = 0; i < 6 && n < size; i++)
		if (v[i])
			n += (size_t)snprintf(out + n, size - n, "%s%s=+%lld",
			                      out[n - 1] == '(' ? "" : ", ", names[i],
			                      (long long)v[i]);
	if (n < size)
		snprintf(out + n, size - n, ")");
}

static int read_delta(struct field_reader *r, struct dag_spec *dag, json_t *v)
{
	int32_t months = 0;
	int64_t ms = 0;
	const char *key;
	json_t *x;
	char text[CRON_TEXT_MAX];
	struct weir_error e = {0};

	if (field_need_type(r, v,
	                    "a mapping of years, months, weeks, days, hours, minutes, "
	                    "seconds to whole numbers",
	                    json_is_object(v)) < 0)
		return -1;
	json_object_foreach(v, key, x)
	{
		size_t u = 0;
		long long n;
		field_at(r, "schedule.delta", key, 0);
		while (units[u].name && strcmp(units[u].name, key))
			u++;
		if (!units[u].name)
			return field_fail(r, "%s",
			                  "expected years, months, weeks, days, hours, minutes or "
			                  "seconds");
		if (field_get_int(r, x, 0, 100000000, &n) < 0)
			return -1;
		if (units[u].months) {
			if (n > CRON_DELTA_MONTHS_MAX)
				return field_fail(r, "%s", "expected a step of at most 100 years");
			months += (int32_t)n * units[u].months;
		} else {
			ms += n * units[u].ms;
		}
	}
	field_at(r, "schedule", "delta", 0);
	delta_text(months, ms, text, sizeof text);
	if (cron_set_delta(&dag->schedule, months, ms, text, &e) < 0)
		return field_fail(r, "%s", e.msg);
	return 0;
}

static int cmp_ms(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int read_events(struct field_reader *r, struct dag_spec *dag, json_t *v, json_t *restrict_)
{
	size_t i, n = 0;
	json_t *x;
	bool only = false;
	struct weir_error e = {0};

	if (field_need_type(r, v, "a list of times (2024-03-01T10:00:00Z)",
	                    json_is_array(v) && json_array_size(v) > 0) < 0)
		return -1;
	if (json_array_size(v) > DAG_MAX_EVENTS)
		return field_fail(r, "expected at most %s event times", "10000");
	free(dag->schedule_events);
	dag->schedule_events = calloc(json_array_size(v), sizeof *dag->schedule_events);
	if (!dag->schedule_events)
		return field_oom(r);
	json_array_foreach(v, i, x)
	{
		const char *s;
		field_at(r, "schedule.events", NULL, i);
		if (field_get_string(r, x, &s) < 0)
			return -1;
		if (schedule_parse_time_in(s, r->path, dag->schedule.zone, &dag->schedule_events[i],
		                           &e) < 0)
			return field_fail(r, "%s", e.msg);
	}
	/* sorted, each once, as Airflow's EventsTimetable (duplicates ignored) */
	qsort(dag->schedule_events, json_array_size(v), sizeof *dag->schedule_events, cmp_ms);
	for (i = 0; i < json_array_size(v); i++)
		if (n == 0 || dag->schedule_events[i] != dag->schedule_events[n - 1])
			dag->schedule_events[n++] = dag->schedule_events[i];
	if (restrict_) {
		field_at(r, "schedule", "restrict_to_events", 0);
		if (field_get_bool(r, restrict_, &only) < 0)
			return -1;
	}
	field_at(r, "schedule", "events", 0);
	const struct tz_zone *zone = dag->schedule.zone;
	if (cron_set_events(&dag->schedule, dag->schedule_events, n, only, &e) < 0)
		return field_fail(r, "%s", e.msg);
	dag->schedule.zone = zone;
	return 0;
}

/* One time of a run's mapping: r's path is schedule.runs[i]. */
static int read_run_time(struct field_reader *r, json_t *run, const char *key, size_t i,
                         int64_t *out)
{
	const char *s;
	struct weir_error e = {0};

	char at[40];

	snprintf(at, sizeof at, "schedule.runs[%zu]", i);
	field_at(r, at, key, 0);
	if (!json_object_get(run, key))
		return field_fail(r, "%s", "expected a time (2024-03-01T10:00:00Z)");
	if (field_get_string(r, json_object_get(run, key), &s) < 0)
		return -1;
	if (schedule_parse_time(s, r->path, out, &e) < 0)
		return field_fail(r, "%s", e.msg);
	return 0;
}

static int read_runs(struct field_reader *r, struct dag_spec *dag, json_t *val)
{
	json_t *v = json_object_get(val, "runs"), *x;
	const char *key, *summary = "Custom timetable";
	size_t i;
	struct weir_error e = {0};
	const struct tz_zone *zone = dag->schedule.zone;

	if (field_need_type(r, v, "a list of runs ({start, end, after})", json_is_array(v)) < 0)
		return -1;
	if (json_array_size(v) > DAG_MAX_EVENTS)
		return field_fail(r, "expected at most %s runs", "10000");
	json_object_foreach(val, key, x)
	{
		field_at(r, "schedule", key, 0);
		if (!strcmp(key, "summary") && field_get_string(r, x, &summary) < 0)
			return -1;
		if (!strcmp(key, "description") &&
		    field_dup_string(r, x, &dag->timetable_description) < 0)
			return -1;
		if (!strcmp(key, "more") && field_get_bool(r, x, &dag->runs_more) < 0)
			return -1;
		if (!strcmp(key, "after") && !json_is_null(x)) {
			const char *s;
			if (field_get_string(r, x, &s) < 0)
				return -1;
			if (schedule_parse_time(s, r->path, &dag->runs_after_ms, &e) < 0)
				return field_fail(r, "%s", e.msg);
		}
	}
	free(dag->schedule_runs);
	dag->schedule_runs = calloc(json_array_size(v) + 1, sizeof *dag->schedule_runs);
	if (!dag->schedule_runs)
		return field_oom(r);
	json_array_foreach(v, i, x)
	{
		struct schedule_run *run = &dag->schedule_runs[i];
		static const char *const keys[] = {"start", "end", "after", NULL};
		char at[40];
		snprintf(at, sizeof at, "schedule.runs[%zu]", i);
		field_at(r, "schedule.runs", NULL, i);
		if (field_need_type(r, x, "a mapping of start, end and after", json_is_object(x)) <
		        0 ||
		    field_check_keys(r, x, at, keys) < 0 ||
		    read_run_time(r, x, "start", i, &run->start_ms) < 0 ||
		    read_run_time(r, x, "end", i, &run->end_ms) < 0 ||
		    read_run_time(r, x, "after", i, &run->after_ms) < 0)
			return -1;
	}
	field_at(r, "schedule", "runs", 0);
	if (cron_set_runs(&dag->schedule, dag->schedule_runs, json_array_size(v), summary, &e) < 0)
		return field_fail(r, "%s", e.msg);
	dag->schedule.zone = zone;
	return 0;
}

/* The keys each timetable's mapping may hold beside its own. */
static bool timetable_key(json_t *val, const char *key)
{
	static const char *const run_keys[] = {"runs",  "summary", "description",
	                                       "after", "more",    NULL};
	if (json_object_get(val, "delta"))
		return !strcmp(key, "delta");
	if (json_object_get(val, "events"))
		return !strcmp(key, "events") || !strcmp(key, "restrict_to_events");
	for (size_t i = 0; run_keys[i]; i++)
		if (!strcmp(key, run_keys[i]))
			return true;
	return false;
}

int dag_read_timetable(struct field_reader *r, struct dag_spec *dag, json_t *val)
{
	json_t *delta = json_object_get(val, "delta"), *events = json_object_get(val, "events");
	json_t *only = json_object_get(val, "restrict_to_events");
	const char *key;
	json_t *x;

	json_object_foreach(val, key, x)
	{
		if (timetable_key(val, key))
			continue;
		field_at(r, "schedule", key, 0);
		return field_fail(r, "%s",
		                  delta    ? "delta: stands alone in a schedule"
		                  : events ? "events: goes with restrict_to_events: alone"
		                           : "runs: goes with summary, description, after and more "
		                             "alone");
	}
	if (!delta && !events)
		return read_runs(r, dag, val);
	field_at(r, "schedule", delta ? "delta" : "events", 0);
	if (delta) {
		const struct tz_zone *zone = dag->schedule.zone;
		if (read_delta(r, dag, delta) < 0)
			return -1;
		dag->schedule.zone = zone;
		return 0;
	}
	return read_events(r, dag, events, only);
}

bool dag_is_timetable(json_t *val)
{
	return json_object_get(val, "delta") || json_object_get(val, "events") ||
	       json_object_get(val, "runs");
}

/* A runs schedule's JSON form, as read_runs reads it. */
static json_t *runs_json(const struct dag_spec *dag)
{
	const struct cron *c = &dag->schedule;
	json_t *list = json_array(), *o;
	char a[48], b[48], t[48];

	for (size_t i = 0; list && i < c->n_runs; i++)
		json_array_append_new(
		    list, json_pack("{s:s, s:s, s:s}", "start",
		                    schedule_format_ts(c->runs[i].start_ms, a, sizeof a), "end",
		                    schedule_format_ts(c->runs[i].end_ms, b, sizeof b), "after",
		                    schedule_format_ts(c->runs[i].after_ms, t, sizeof t)));
	o = list ? json_pack("{s:o, s:s, s:b}", "runs", list, "summary", c->text, "more",
	                     dag->runs_more)
	         : NULL;
	if (o && dag->timetable_description)
		json_object_set_new(o, "description", json_string(dag->timetable_description));
	if (o && dag->runs_after_ms != CRON_NEVER)
		json_object_set_new(
		    o, "after", json_string(schedule_format_ts(dag->runs_after_ms, t, sizeof t)));
	return o;
}

json_t *dag_timetable_json(const struct dag_spec *dag)
{
	const struct cron *c = &dag->schedule;
	char ts[48];

	if (c->kind == CRON_RUNS)
		return runs_json(dag);
	if (c->kind == CRON_DELTA) {
		json_t *d = json_object();
		if (d && c->delta_months)
			json_object_set_new(d, "months", json_integer(c->delta_months));
		if (d && c->delta_ms)
			json_object_set_new(d, "seconds", json_integer(c->delta_ms / 1000));
		return d ? json_pack("{s:o}", "delta", d) : NULL;
	}
	json_t *list = json_array();
	for (size_t i = 0; list && i < c->n_events; i++)
		json_array_append_new(list,
		                      json_string(schedule_format_ts(c->events[i], ts, sizeof ts)));
	return list ? json_pack("{s:o, s:b}", "events", list, "restrict_to_events",
	                        c->restrict_to_events)
	            : NULL;
}

int dag_check_timetable(struct field_reader *r, const struct dag_spec *dag)
{
	if (dag->schedule.kind == CRON_CONTINUOUS && dag->max_active_runs != 1) {
		snprintf(r->path, sizeof r->path, "%s", "schedule");
		return field_fail(r, "%s",
		                  "@continuous runs one run at a time: expected max_active_runs: 1 "
		                  "beside it (as Airflow's ContinuousTimetable requires)");
	}
	return 0;
}

int dag_read_manual_interval(struct field_reader *r, struct dag_spec *dag, json_t *val)
{
	static const char *const keys[] = {"before", NULL};
	json_t *before = json_object_get(val, "before");
	long long n;

	if (json_is_string(val) && !strcmp(json_string_value(val), "ending")) {
		dag->manual_ending = true;
		dag->manual_before_ms = 0;
		return 0;
	}
	if (field_need_type(r, val, "ending or {before: SECONDS}", json_is_object(val) && before) <
	        0 ||
	    field_check_keys(r, val, "manual_interval", keys) < 0)
		return -1;
	field_at(r, "manual_interval", "before", 0);
	if (field_get_int(r, before, 1, 100LL * 366 * 86400, &n) < 0)
		return -1;
	dag->manual_ending = true;
	dag->manual_before_ms = n * 1000;
	return 0;
}

json_t *dag_manual_interval_json(const struct dag_spec *dag)
{
	if (dag->manual_before_ms > 0)
		return json_pack("{s:I}", "before", (json_int_t)(dag->manual_before_ms / 1000));
	return json_string("ending");
}
