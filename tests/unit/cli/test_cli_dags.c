/* test_cli_dags.c: the pure parts of `weir dags` / `weir tasks`: --conf checking, the
 * schedule of a DAG object in Airflow's shapes, the backfill dates, route paths with their
 * ids encoded, and task-instance names and states. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/cli_dags.h"
#include "cli/cli_ti.h"
#include "model/cron.h"

static void test_parse_conf(void **state)
{
	struct weir_error err = {0};
	json_t *c;
	(void)state;

	c = cli_dags_parse_conf("{\"table\": \"events\", \"n\": 3}", &err);
	assert_non_null(c);
	assert_string_equal(json_string_value(json_object_get(c, "table")), "events");
	json_decref(c);

	assert_null(cli_dags_parse_conf("{\"a\": ", &err));
	assert_non_null(strstr(err.msg, "--conf: not valid JSON"));
	assert_non_null(strstr(err.msg, "column"));
	assert_null(cli_dags_parse_conf("[1, 2]", &err));
	assert_non_null(strstr(err.msg, "an array"));
	assert_null(cli_dags_parse_conf("\"x\"", &err));
	assert_non_null(strstr(err.msg, "JSON object"));
	/* A key given twice would silently lose one value. */
	assert_null(cli_dags_parse_conf("{\"a\": 1, \"a\": 2}", &err));
}

static void test_schedule_text(void **state)
{
	json_t *d;
	(void)state;

	d = json_pack("{s{ssss}}", "schedule_interval", "__type", "CronExpression", "value",
	              "0 0 * * *");
	assert_string_equal(cli_dag_schedule_text(d), "0 0 * * *");
	json_decref(d);
	d = json_pack("{ss}", "schedule_interval", "@daily");
	assert_string_equal(cli_dag_schedule_text(d), "@daily");
	json_decref(d);
	d = json_pack("{sn}", "schedule_interval");
	assert_string_equal(cli_dag_schedule_text(d), "none");
	json_decref(d);
	d = json_object();
	assert_string_equal(cli_dag_schedule_text(d), "none");
	json_decref(d);
}

static void test_backfill_dates(void **state)
{
	struct weir_error err = {0};
	int64_t out[8];
	size_t n;
	int64_t d1 = schedule_make_time(2024, 2, 27, 0, 0, 0);
	int64_t d4 = schedule_make_time(2024, 3, 1, 0, 0, 0);
	(void)state;

	/* Both ends included; a leap year's 29 February is a day. */
	assert_int_equal(cli_dags_backfill_dates("@daily", NULL, d1, d4, out, 8, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_true(out[0] == d1);
	assert_true(out[2] == schedule_make_time(2024, 2, 29, 0, 0, 0));
	assert_true(out[3] == d4);

	/* A range starting off the grid begins at the next fire time. */
	assert_int_equal(
	    cli_dags_backfill_dates("30 6 * * *", NULL, d1 + 3600000, d4, out, 8, &n, &err), 0);
	assert_int_equal(n, 3); /* 27, 28 and 29 February at 06:30; 1 March's is after --to */
	assert_true(out[0] == schedule_make_time(2024, 2, 27, 6, 30, 0));

	/* Errors: too many, no grid, reversed or empty range, bad expression. */
	assert_int_equal(cli_dags_backfill_dates("@hourly", NULL, d1, d4, out, 8, &n, &err), -1);
	assert_non_null(strstr(err.msg, "more than 8"));
	assert_int_equal(cli_dags_backfill_dates("@once", NULL, d1, d4, out, 8, &n, &err), -1);
	assert_non_null(strstr(err.msg, "needs a cron schedule"));
	assert_int_equal(cli_dags_backfill_dates("none", NULL, d1, d4, out, 8, &n, &err), -1);
	assert_int_equal(cli_dags_backfill_dates("@daily", NULL, d4, d1, out, 8, &n, &err), -1);
	assert_non_null(strstr(err.msg, "--to is before --from"));
	assert_int_equal(
	    cli_dags_backfill_dates("@monthly", NULL, d1, d1 + 86400000, out, 8, &n, &err), -1);
	assert_non_null(strstr(err.msg, "no schedule interval"));
	assert_int_equal(cli_dags_backfill_dates("61 * * * *", NULL, d1, d4, out, 8, &n, &err), -1);
	assert_non_null(strstr(err.msg, "minute"));
}

/* A custom timetable whose summary parses as cron, and an events schedule, are refused:
 * their runs are the timetable's, not a cron grid's. */
static void test_backfill_refuses_timetables(void **state)
{
	struct weir_error err = {0};
	json_t *d;
	(void)state;

	d = json_pack("{s:{s:s, s:s}, s:s}", "schedule_interval", "__type", "CronExpression",
	              "value", "0 6 * * *", "schedule_kind", "timetable");
	assert_int_equal(cli_dags_backfill_refusal(d, &err), -1);
	assert_non_null(strstr(err.msg, "a custom timetable (\"0 6 * * *\")"));
	assert_non_null(strstr(err.msg, "--logical-date"));
	json_object_set_new(d, "schedule_kind", json_string("events"));
	assert_int_equal(cli_dags_backfill_refusal(d, &err), -1);
	assert_non_null(strstr(err.msg, "EventsTimetable"));
	json_object_set_new(d, "schedule_kind", json_string("cron"));
	assert_int_equal(cli_dags_backfill_refusal(d, &err), 0);
	json_object_del(d, "schedule_kind"); /* an older server's details */
	assert_int_equal(cli_dags_backfill_refusal(d, &err), 0);
	json_decref(d);
}

static void test_backfill_steps_of_a_relativedelta(void **state)
{
	struct weir_error err = {0};
	int64_t out[8];
	size_t n = 99;
	json_t *month =
	    json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i}", "__type", "RelativeDelta", "years", 0,
	              "months", 1, "days", 0, "hours", 0, "minutes", 0, "seconds", 0);
	json_t *cron = json_pack("{s:s, s:s}", "__type", "CronExpression", "value", "@daily");
	(void)state;

	/* from --from, a month a step, the day clamped to the month's end */
	assert_int_equal(cli_dags_backfill_steps(month, schedule_make_time(2024, 1, 31, 0, 0, 0),
	                                         schedule_make_time(2024, 4, 1, 0, 0, 0), out, 8,
	                                         &n, &err),
	                 1);
	assert_int_equal(n, 3);
	assert_true(out[1] == schedule_make_time(2024, 2, 29, 0, 0, 0));
	assert_true(out[2] == schedule_make_time(2024, 3, 29, 0, 0, 0));
	/* not a RelativeDelta: the cron path's */
	n = 99;
	assert_int_equal(cli_dags_backfill_steps(cron, 0, 1, out, 8, &n, &err), 0);
	assert_int_equal(n, 99);
	assert_int_equal(cli_dags_backfill_steps(month, 0, 400LL * 86400000, out, 8, &n, &err), -1);
	assert_non_null(strstr(err.msg, "more than 8"));
	json_decref(month);
	json_decref(cron);
}

static void test_paths(void **state)
{
	char *p;
	(void)state;

	p = cli_dag_path("nightly", NULL, NULL);
	assert_string_equal(p, "/api/v1/dags/nightly");
	free(p);
	/* Run ids hold ':' and '+'; a hostile id cannot climb out of its segment. */
	p = cli_dag_path("d", "manual__2024-03-01T00:00:00+00:00", "/taskInstances");
	assert_string_equal(p, "/api/v1/dags/d/dagRuns/manual__2024-03-01T00%3A00%3A00%2B00%3A00/"
	                       "taskInstances");
	free(p);
	p = cli_dag_path("../x", "a/b?c", NULL);
	assert_string_equal(p, "/api/v1/dags/..%2Fx/dagRuns/a%2Fb%3Fc");
	free(p);
}

static void test_ti_helpers(void **state)
{
	char b[64];
	json_t *ti;
	(void)state;

	ti = json_pack("{sssnsi}", "task_id", "train", "state", "map_index", 2);
	assert_string_equal(cli_ti_state(ti), "none");
	assert_string_equal(cli_ti_name(ti, b, sizeof b), "train[2]");
	json_decref(ti);
	ti = json_pack("{sssssi}", "task_id", "a", "state", "up_for_retry", "map_index", -1);
	assert_string_equal(cli_ti_name(ti, b, sizeof b), "a");
	assert_false(cli_ti_state_is_final(cli_ti_state(ti)));
	json_decref(ti);
	assert_true(cli_ti_state_is_final("upstream_failed"));
	assert_true(cli_ti_state_is_final("success"));
	assert_false(cli_ti_state_is_final("running"));
}

/* One look that saw a task end and its downstream start prints the end first, whatever
 * the order of the listing. */
static void test_changes_print_ends_first(void **state)
{
	char path[] = "/tmp/weir-test-changes-XXXXXX", text[512] = "";
	int fd = mkstemp(path), saved;
	json_t *seen = json_object(), *tis;
	FILE *f;
	(void)state;

	assert_true(fd >= 0);
	tis = json_pack("[{sssssi}, {sssssi}]", "task_id", "up", "state", "running", "map_index",
	                -1, "task_id", "down", "state", "none", "map_index", -1);
	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	cli_ti_print_changes(seen, tis, NULL);
	json_decref(tis);
	tis = json_pack("[{sssssi}, {sssssi}]", "task_id", "down", "state", "running", "map_index",
	                -1, "task_id", "up", "state", "success", "map_index", -1);
	cli_ti_print_changes(seen, tis, NULL);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	json_decref(tis);
	json_decref(seen);
	f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	close(fd);
	unlink(path);
	const char *up_ends = strstr(text, " up success\n"),
	           *down = strstr(text, " down running\n");
	assert_non_null(strstr(text, " up running\n"));
	assert_non_null(up_ends);
	assert_non_null(down);
	assert_true(up_ends < down);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_conf),
	    cmocka_unit_test(test_schedule_text),
	    cmocka_unit_test(test_backfill_dates),
	    cmocka_unit_test(test_backfill_refuses_timetables),
	    cmocka_unit_test(test_backfill_steps_of_a_relativedelta),
	    cmocka_unit_test(test_paths),
	    cmocka_unit_test(test_ti_helpers),
	    cmocka_unit_test(test_changes_print_ends_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
