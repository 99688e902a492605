/* test_dag_spec_schedule.c: a DAG file's schedule keys: `timezone:` (the
 * schedule's wall clock; naive dates read in it), the mapping form of
 * `schedule:` (a trigger cron with its interval, a cron with datasets),
 * what is refused and how it is named, and the JSON form read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "model/dag_spec.h"

#define T(y, mo, d, h, mi) schedule_make_time(y, mo, d, h, mi, 0)
#define TASKS "tasks:\n  - task_id: t\n    command: 'true'\n"

static struct dag_spec *parse(const char *text, struct weir_error *err)
{
	return dag_spec_parse_string(text, strlen(text), "d.yaml", "/dags", err);
}

static struct dag_spec *parse_ok(const char *text)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse(text, &err);
	if (!d)
		fail_msg("%s", err.msg);
	return d;
}

static void expect_error(const char *text, const char *want)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse(text, &err);
	if (d || !strstr(err.msg, want))
		fail_msg("expected an error with \"%s\", got \"%s\"", want,
		         d ? "(parsed)" : err.msg);
}

/* The spec written as JSON and read back. */
static struct dag_spec *round_trip(const struct dag_spec *d)
{
	struct weir_error err = {0};
	json_t *j = dag_spec_to_json(d);
	struct dag_spec *back = dag_spec_from_json(j, "j", NULL, &err);
	if (!back)
		fail_msg("%s", err.msg);
	json_decref(j);
	return back;
}

static void test_a_timezone_sets_the_wall_clock(void **state)
{
	(void)state;
	/* the dates come before the zone in the file: the zone is read first */
	struct dag_spec *d = parse_ok("dag_id: z\nschedule: '0 6 * * *'\nstart_date: 2024-03-29\n"
	                              "end_date: '2024-04-02T00:00:00Z'\n"
	                              "timezone: Europe/Amsterdam\n" TASKS);
	assert_string_equal(tz_zone_name(d->schedule.zone), "Europe/Amsterdam");
	assert_true(d->start_date_ms == T(2024, 3, 28, 23, 0)); /* midnight in Amsterdam */
	assert_true(d->end_date_ms == T(2024, 4, 2, 0, 0));     /* Z is UTC */
	assert_true(cron_next(&d->schedule, d->start_date_ms) == T(2024, 3, 29, 5, 0));
	struct dag_spec *back = round_trip(d);
	assert_ptr_equal(back->schedule.zone, d->schedule.zone);
	assert_true(back->start_date_ms == d->start_date_ms);
	dag_spec_destroy(back);
	dag_spec_destroy(d);
	/* UTC is no zone */
	d = parse_ok(
	    "dag_id: z\nschedule: '@daily'\nstart_date: 2024-01-01\ntimezone: UTC\n" TASKS);
	assert_null(d->schedule.zone);
	dag_spec_destroy(d);
	expect_error("dag_id: z\ntimezone: Mars/Olympus\n" TASKS,
	             "d.yaml:2: timezone: time zone \"Mars/Olympus\": unknown");
	expect_error("dag_id: z\ntimezone: ../../etc/passwd\n" TASKS,
	             "timezone: time zone \"../../etc/passwd\": expected a tz database name");
}

static void test_a_trigger_schedule_and_a_cron_with_datasets(void **state)
{
	(void)state;
	struct dag_spec *d = parse_ok("dag_id: tr\nschedule: {trigger: '0 6 * * *', interval: 1h}\n"
	                              "start_date: 2024-01-01\n" TASKS);
	assert_true(d->schedule.trigger);
	assert_true(d->schedule.trigger_interval_ms == 3600000);
	assert_int_equal(d->dataset_schedule.n, 0);
	struct dag_spec *back = round_trip(d);
	assert_true(back->schedule.trigger && back->schedule.trigger_interval_ms == 3600000);
	assert_string_equal(back->schedule.text, "0 6 * * *");
	dag_spec_destroy(back);
	dag_spec_destroy(d);

	d = parse_ok("dag_id: both\nschedule: {cron: '@daily', datasets: ['s3://b/a']}\n"
	             "start_date: 2024-01-01\n" TASKS);
	assert_false(d->schedule.trigger);
	assert_int_equal(d->schedule.kind, CRON_EXPR);
	assert_int_equal(d->dataset_schedule.n, 1);
	back = round_trip(d);
	assert_int_equal(back->schedule.kind, CRON_EXPR);
	assert_int_equal(back->dataset_schedule.n, 1);
	assert_string_equal(back->dataset_schedule.v[0], "s3://b/a");
	dag_spec_destroy(back);
	dag_spec_destroy(d);

	expect_error("dag_id: p\nschedule: {interval: 1h}\n" TASKS,
	             "schedule: expected one of cron: or trigger:");
	expect_error("dag_id: p\nschedule: {cron: '@daily', trigger: '@daily'}\n" TASKS,
	             "expected one of cron: or trigger:");
	expect_error(
	    "dag_id: p\nschedule: {cron: '@daily', interval: 1h}\nstart_date: 2024-01-01\n" TASKS,
	    "schedule.interval: an interval goes with trigger:");
	expect_error("dag_id: p\nschedule: {trigger: '@once'}\n" TASKS,
	             "schedule.trigger: \"@once\": expected a cron expression");
	expect_error("dag_id: p\nschedule: {trigger: '@daily', when: x}\n" TASKS, "when");
	expect_error(
	    "dag_id: p\nschedule: {cron: '@daily', datasets: []}\nstart_date: 2024-01-01\n" TASKS,
	    "schedule.datasets: expected at least one dataset URI");
}

static void test_delta_events_continuous_and_conditions(void **state)
{
	(void)state;
	/* a step: years and months, weeks to seconds; the JSON form reads back */
	struct dag_spec *d =
	    parse_ok("dag_id: m\nschedule: {delta: {years: 1, months: 2, weeks: 1, "
	             "hours: 3}}\nstart_date: 2024-01-31\n" TASKS);
	assert_int_equal(d->schedule.kind, CRON_DELTA);
	assert_int_equal(d->schedule.delta_months, 14);
	assert_true(d->schedule.delta_ms == 7 * 86400000LL + 3 * 3600000LL);
	assert_string_equal(d->schedule.text,
	                    "relativedelta(years=+1, months=+2, days=+7, hours=+3)");
	struct dag_spec *b = round_trip(d);
	assert_int_equal(b->schedule.delta_months, 14);
	assert_string_equal(b->schedule.text, d->schedule.text);
	dag_spec_destroy(b);
	dag_spec_destroy(d);

	/* events: sorted, each once, naive ones in the DAG's zone */
	d = parse_ok(
	    "dag_id: e\ntimezone: Europe/Amsterdam\nschedule: {events: ['2024-03-01T10:00:00Z', "
	    "'2024-02-01', '2024-03-01T10:00:00Z'], restrict_to_events: true}\n"
	    "start_date: 2024-01-01\n" TASKS);
	assert_int_equal(d->schedule.kind, CRON_EVENTS);
	assert_int_equal(d->schedule.n_events, 2);
	assert_true(d->schedule.events[0] == T(2024, 1, 31, 23, 0));
	assert_true(d->schedule.events[1] == T(2024, 3, 1, 10, 0));
	assert_true(d->schedule.restrict_to_events);
	assert_non_null(d->schedule.zone);
	b = round_trip(d);
	assert_int_equal(b->schedule.n_events, 2);
	assert_true(b->schedule.events[0] == d->schedule.events[0]);
	assert_true(b->schedule.restrict_to_events);
	dag_spec_destroy(b);
	dag_spec_destroy(d);

	/* a custom timetable's runs, as the DAG processor lists them */
	d = parse_ok("dag_id: r\nschedule: {runs: [{start: '2024-01-01T00:00:00+00:00', end: "
	             "'2024-01-01T12:00:00Z', after: '2024-01-01T13:00:00Z'}], summary: halves, "
	             "description: 'Twice a day', after: '2023-12-31T12:00:00Z', more: true}\n"
	             "start_date: 2024-01-01\n" TASKS);
	assert_int_equal(d->schedule.kind, CRON_RUNS);
	assert_int_equal(d->schedule.n_runs, 1);
	assert_true(d->schedule.runs[0].after_ms == T(2024, 1, 1, 13, 0));
	assert_string_equal(d->schedule.text, "halves");
	assert_string_equal(d->timetable_description, "Twice a day");
	assert_true(d->runs_after_ms == T(2023, 12, 31, 12, 0) && d->runs_more);
	b = round_trip(d);
	assert_int_equal(b->schedule.kind, CRON_RUNS);
	assert_true(b->schedule.runs[0].end_ms == T(2024, 1, 1, 12, 0));
	assert_true(b->runs_after_ms == d->runs_after_ms && b->runs_more);
	assert_string_equal(b->timetable_description, "Twice a day");
	dag_spec_destroy(b);
	dag_spec_destroy(d);
	d = parse_ok("dag_id: r\nschedule: {runs: []}\nstart_date: 2024-01-01\n" TASKS);
	assert_int_equal(d->schedule.n_runs, 0);
	assert_true(d->runs_after_ms == CRON_NEVER && !d->runs_more);
	dag_spec_destroy(d);

	/* an Airflow DAG's manual runs: the period that ends at the date */
	d = parse_ok("dag_id: m\nschedule: '@daily'\nmanual_interval: ending\n"
	             "start_date: 2024-01-01\n" TASKS);
	assert_true(d->manual_ending && d->manual_before_ms == 0);
	b = round_trip(d);
	assert_true(b->manual_ending && b->manual_before_ms == 0);
	dag_spec_destroy(b);
	dag_spec_destroy(d);
	d = parse_ok("dag_id: m\nschedule: '0 * * * *'\nmanual_interval: {before: 3600}\n"
	             "start_date: 2024-01-01\n" TASKS);
	assert_true(d->manual_ending && d->manual_before_ms == 3600000);
	b = round_trip(d);
	assert_true(b->manual_before_ms == 3600000);
	dag_spec_destroy(b);
	dag_spec_destroy(d);
	d = parse_ok("dag_id: m\nschedule: '@daily'\nstart_date: 2024-01-01\n" TASKS);
	assert_false(d->manual_ending);
	dag_spec_destroy(d);

	/* @continuous with max_active_runs 1; a condition of datasets alone */
	d = parse_ok("dag_id: c\nschedule: '@continuous'\nmax_active_runs: 1\n"
	             "start_date: 2024-01-01\n" TASKS);
	assert_int_equal(d->schedule.kind, CRON_CONTINUOUS);
	dag_spec_destroy(d);
	d = parse_ok("dag_id: a\nschedule: {datasets: {any: ['s3://a', {all: ['s3://b', "
	             "'s3://a']}]}}\n" TASKS);
	assert_int_equal(d->dataset_schedule.n, 2); /* each URI once */
	assert_non_null(d->dataset_condition);
	b = round_trip(d);
	assert_true(json_equal(b->dataset_condition, d->dataset_condition));
	dag_spec_destroy(b);
	dag_spec_destroy(d);

	/* refused, each naming where */
	expect_error("dag_id: c\nschedule: '@continuous'\nstart_date: 2024-01-01\n" TASKS,
	             "d.yaml:2: schedule: @continuous runs one run at a time");
	expect_error("dag_id: m\nschedule: {delta: {months: 0}}\nstart_date: 2024-01-01\n" TASKS,
	             "schedule.delta: expected a step forward");
	expect_error("dag_id: m\nschedule: {delta: {days: -1}}\nstart_date: 2024-01-01\n" TASKS,
	             "schedule.delta.days");
	expect_error("dag_id: m\nschedule: {delta: {months: 1}, cron: '@daily'}\n"
	             "start_date: 2024-01-01\n" TASKS,
	             "schedule.cron: delta: stands alone in a schedule");
	expect_error("dag_id: e\nschedule: {events: []}\nstart_date: 2024-01-01\n" TASKS,
	             "schedule.events: expected a list of times");
	expect_error("dag_id: e\nschedule: {events: ['soon']}\nstart_date: 2024-01-01\n" TASKS,
	             "schedule.events[0]");
	expect_error("dag_id: r\nschedule: {runs: [{start: '2024-01-01', end: '2024-01-02'}]}\n"
	             "start_date: 2024-01-01\n" TASKS,
	             "schedule.runs[0].after: expected");
	expect_error("dag_id: r\nschedule: {runs: [{start: '2024-01-02', end: '2024-01-01', "
	             "after: '2024-01-02'}]}\nstart_date: 2024-01-01\n" TASKS,
	             "schedule.runs: run 0: its data interval ends before it starts");
	expect_error("dag_id: r\nschedule: {runs: [], cron: '@daily'}\n" TASKS,
	             "schedule.cron: runs: goes with summary, description, after and more alone");
	expect_error("dag_id: m\nmanual_interval: starting\n" TASKS,
	             "manual_interval: expected ending or {before: SECONDS}");
	expect_error("dag_id: m\nmanual_interval: {before: 0}\n" TASKS, "manual_interval.before");
	expect_error("dag_id: a\nschedule: {datasets: {any: []}}\n" TASKS,
	             "schedule.datasets.any: expected a list of dataset URIs and conditions");
	expect_error(
	    "dag_id: a\nschedule: {datasets: {any: ['s3://a'], all: ['s3://b']}}\n" TASKS,
	    "schedule.datasets: expected a dataset URI, {alias: NAME} or a mapping of one key");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_timezone_sets_the_wall_clock),
	    cmocka_unit_test(test_a_trigger_schedule_and_a_cron_with_datasets),
	    cmocka_unit_test(test_delta_events_continuous_and_conditions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
