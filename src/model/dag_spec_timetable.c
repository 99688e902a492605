/* dag_spec_timetable.c: the schedules that are no cron expression
 * (dag_spec_internal.h): `schedule: {delta: {years, months, weeks, days,
 * hours, minutes, seconds}}` (Airflow's relativedelta schedule: a step from
 * start_date) and `schedule: {events: [TIME, ...], restrict_to_events: B}`
 * (Airflow's EventsTimetable), into dag->schedule (model/cron.h); and their
 * JSON form.  `@continuous` is a preset of cron_parse; its one rule, that
 * at most one run is active, is checked here too. */
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

int dag_read_timetable(struct field_reader *r, struct dag_spec *dag, json_t *val)
{
	json_t *delta = json_object_get(val, "delta"), *events = json_object_get(val, "events");
	json_t *only = json_object_get(val, "restrict_to_events");
	const char *key;
	json_t *x;

	json_object_foreach(val, key, x)
	{
		if (!strcmp(key, delta ? "delta" : "events") ||
		    (events && !strcmp(key, "restrict_to_events")))
			continue;
		field_at(r, "schedule", key, 0);
		return field_fail(r, "%s",
		                  delta ? "delta: stands alone in a schedule"
		                        : "events: goes with restrict_to_events: alone");
	}
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
	return json_object_get(val, "delta") || json_object_get(val, "events");
}

json_t *dag_timetable_json(const struct dag_spec *dag)
{
	const struct cron *c = &dag->schedule;
	char ts[48];

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
