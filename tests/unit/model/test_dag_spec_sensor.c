/* Tests of a DAG task's `sensor:` mapping (model/dag_spec_sensor.c): each
 * kind read with its defaults, the checked form read back as
 * `weir task-sensor` reads it, and each kind of bad mapping named by its
 * field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "model/dag_spec.h"

static struct dag_spec *parse_task(const char *task, struct weir_error *err)
{
	char text[2048];

	snprintf(text, sizeof text, "dag_id: d\ntasks:\n  - task_id: s\n%s", task);
	return dag_spec_parse_string(text, strlen(text), "d.yaml", "/dags", err);
}

static void test_file_defaults_and_round_trip(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_spec *d = parse_task("    sensor: {file: {path: \"in/*.csv\"}, poke_interval: 0.5,"
	                                " timeout: 10m, mode: reschedule, soft_fail: true}\n",
	                                &err);
	const struct dag_sensor *s;
	struct dag_sensor *back;

	assert_non_null(d);
	assert_int_equal(d->tasks[0].kind, DAG_TASK_SENSOR);
	s = d->tasks[0].sensor;
	assert_int_equal(s->kind, DAG_SENSOR_FILE);
	assert_int_equal(s->mode, DAG_SENSOR_RESCHEDULE);
	assert_int_equal(s->poke_interval_ms, 500);
	assert_int_equal(s->timeout_ms, 600000);
	assert_true(s->soft_fail);
	/* the DAG file's folder is the default one, made absolute */
	assert_string_equal(json_string_value(json_object_get(s->what, "folder")), "/dags");
	back = dag_sensor_from_spec(s->spec, &err);
	assert_non_null(back);
	assert_int_equal(back->poke_interval_ms, 500);
	assert_int_equal(back->timeout_ms, 600000);
	assert_int_equal(back->mode, DAG_SENSOR_RESCHEDULE);
	dag_sensor_free(back);
	dag_spec_destroy(d);
}

static void test_kinds(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_spec *d;

	d = parse_task("    sensor: {external_task: {dag_id: up, execution_delta: 1h}}\n", &err);
	assert_non_null(d);
	assert_int_equal(d->tasks[0].sensor->kind, DAG_SENSOR_EXTERNAL_TASK);
	assert_int_equal(d->tasks[0].sensor->mode, DAG_SENSOR_POKE);
	assert_int_equal(json_integer_value(json_object_get(d->tasks[0].sensor->what,
	                                                    "execution_delta")), 3600);
	assert_string_equal(json_string_value(json_array_get(
	                        json_object_get(d->tasks[0].sensor->what, "states"), 0)),
	                    "success");
	dag_spec_destroy(d);
	d = parse_task("    sensor: {sql: {conn: dw, query: \"SELECT 1\"}}\n", &err);
	assert_non_null(d);
	assert_int_equal(d->tasks[0].connections.n, 1);
	assert_string_equal(d->tasks[0].connections.v[0], "dw");
	dag_spec_destroy(d);
	d = parse_task("    sensor: {time: \"06:30\"}\n", &err);
	assert_non_null(d);
	dag_spec_destroy(d);
	d = parse_task("    sensor: {http: {url: \"http://h:1/x\", match: \"ok|ready\"}}\n", &err);
	assert_non_null(d);
	assert_int_equal(json_integer_value(json_object_get(d->tasks[0].sensor->what, "status")),
	                 200);
	dag_spec_destroy(d);
	d = parse_task("    sensor: {http: {url: \"https://h/x\", ca_file: \"/etc/ca.pem\"}}\n",
	               &err);
	assert_non_null(d);
	assert_string_equal(
	    json_string_value(json_object_get(d->tasks[0].sensor->what, "ca_file")), "/etc/ca.pem");
	dag_spec_destroy(d);
}

static void expect_error(const char *task, const char *want)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse_task(task, &err);

	assert_null(d);
	if (!strstr(err.msg, want))
		fail_msg("%s: got \"%s\", wanted \"%s\"", task, err.msg, want);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("    sensor: {file: {path: \"../x\"}}\n", "tasks[0].sensor.file.path");
	expect_error("    sensor: {file: {path: /etc/passwd}}\n", "absolute");
	expect_error("    sensor: {time: \"25:00\"}\n", "tasks[0].sensor.time");
	expect_error("    sensor: {http: {url: \"ftp://x\"}}\n", "http:// or https://");
	expect_error("    sensor: {http: {url: \"https://\"}}\n", "http[s]://HOST");
	expect_error("    sensor: {http: {url: \"https://x\", ca_file: \"ca.pem\"}}\n",
	             "absolute path");
	expect_error("    sensor: {http: {url: \"http://x\", match: \"(\"}}\n", "regular expression");
	expect_error("    sensor: {delta: 10m, time: \"01:00\"}\n", "got more");
	expect_error("    sensor: {poke_interval: 5}\n", "what it waits for");
	expect_error("    sensor: {delta: 10m, mode: sometimes}\n", "poke or reschedule");
	expect_error("    sensor: {external_task: {dag_id: up, states: [done]}}\n",
	             "tasks[0].sensor.external_task.states[0]");
	expect_error("    sensor: {sql: {query: \"SELECT 1\"}}\n", "tasks[0].sensor.sql.conn");
	expect_error("    command: \"true\"\n    sensor: {delta: 1}\n", "got more");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_file_defaults_and_round_trip),
	    cmocka_unit_test(test_kinds),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
