/* test_sensor_poke.c: what a poke reads (data/sensor_poke.h): a time
 * sensor's moment, a SQL cell's truth, a file sensor's glob in a real
 * folder (a link out of it does not count), and a SQL poke's error with
 * the connection's password masked (a real SQLite file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/sensor_poke.h"
#include "model/connection.h"

static void test_times(void **state)
{
	(void)state;
	/* 2024-01-02T10:00:00Z; 06:30 that day; a negative epoch day rounds down */
	assert_int_equal(sensor_time_target(1704189600000LL, 6 * 3600 + 1800), 1704177000000LL);
	assert_int_equal(sensor_time_target(-1, 0), -86400000LL);
	assert_int_equal(sensor_delta_target(1000, 600), 601000);
}

static void test_truthy(void **state)
{
	(void)state;
	assert_false(sensor_cell_truthy(NULL));
	assert_false(sensor_cell_truthy(""));
	assert_false(sensor_cell_truthy("0"));
	assert_false(sensor_cell_truthy("0.0"));
	assert_false(sensor_cell_truthy("f"));
	assert_false(sensor_cell_truthy("FALSE"));
	assert_true(sensor_cell_truthy("t"));
	assert_true(sensor_cell_truthy("1"));
	assert_true(sensor_cell_truthy("42"));
	assert_true(sensor_cell_truthy("ready"));
}

static void test_file_glob_stays_inside(void **state)
{
	(void)state;
	char dir[] = "/tmp/weir-sensor-XXXXXX", path[256], spec[512];
	struct weir_error err = {0};
	struct dag_sensor *s;
	char msg[SENSOR_MSG_MAX];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(spec, sizeof spec, "{\"file\": {\"path\": \"*.csv\", \"folder\": \"%s\"}}", dir);
	json_t *j = json_loads(spec, 0, NULL);
	s = dag_sensor_from_spec(j, &err);
	assert_non_null(s);
	assert_int_equal(sensor_poke(s, 0, NULL, 0, msg, sizeof msg), SENSOR_NOT_YET);
	/* a link to a file outside the folder matches the glob but does not count */
	snprintf(path, sizeof path, "%s/out.csv", dir);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	assert_int_equal(sensor_poke(s, 0, NULL, 0, msg, sizeof msg), SENSOR_NOT_YET);
	snprintf(path, sizeof path, "%s/in.csv", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(sensor_poke(s, 0, NULL, 0, msg, sizeof msg), SENSOR_MET);
	assert_non_null(strstr(msg, "in.csv"));
	unlink(path);
	snprintf(path, sizeof path, "%s/out.csv", dir);
	unlink(path);
	rmdir(dir);
	dag_sensor_free(s);
	json_decref(j);
}

static void test_sql_error_is_masked(void **state)
{
	(void)state;
	char dir[] = "/tmp/weir-sensor-sql-XXXXXX", uri[128], db[128];
	struct weir_error err = {0};
	struct connection c;
	struct dag_sensor *s;
	char msg[SENSOR_MSG_MAX];

	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof db, "%s/x.db", dir);
	snprintf(uri, sizeof uri, "sqlite://%s", db);
	assert_int_equal(connection_from_uri("lite", uri, &c, &err), 0);
	free(c.password);
	c.password = strdup("hunter2zz");
	/* SQLite answers "no such column: hunter2zz": the password, in the server's words */
	json_t *j = json_loads("{\"sql\": {\"conn\": \"lite\", \"query\": \"SELECT hunter2zz\"}}", 0,
	                       NULL);
	s = dag_sensor_from_spec(j, &err);
	assert_non_null(s);
	assert_int_equal(sensor_poke(s, 0, &c, 0, msg, sizeof msg), SENSOR_ERROR);
	assert_null(strstr(msg, "hunter2zz"));
	assert_non_null(strstr(msg, "no such column: ***"));
	dag_sensor_free(s);
	json_decref(j);
	connection_release(&c);
	unlink(db);
	rmdir(dir);
}

static struct dag_sensor *sensor_of(const char *text)
{
	struct weir_error err = {0};
	json_t *j = json_loads(text, 0, NULL);
	struct dag_sensor *s = dag_sensor_from_spec(j, &err);

	json_decref(j);
	assert_non_null(s);
	return s;
}

/* Airflow's ExternalTaskSensor on several tasks and on a task group: a
 * failed one fails, a skipped one skips, all allowed is met, a missing one
 * waits. */
static void test_external_many(void **state)
{
	(void)state;
	struct dag_sensor *s =
	    sensor_of("{\"external_task\": {\"dag_id\": \"up\", \"task_ids\": [\"a\", \"b\"],"
	              " \"failed_states\": \"failed\", \"skipped_states\": [\"skipped\"]}}");
	struct sensor_ext_ti tis[] = {
	    {"a", "success"}, {"b", "running"}, {"g.x", "success"}, {"g.y", "failed"}};
	char msg[SENSOR_MSG_MAX];

	assert_true(sensor_external_is_many(s));
	assert_int_equal(sensor_external_many(s, tis, 4, false, msg, sizeof msg), SENSOR_NOT_YET);
	assert_string_equal(msg, "no run of up at that logical date");
	assert_int_equal(sensor_external_many(s, tis, 4, true, msg, sizeof msg), SENSOR_NOT_YET);
	assert_string_equal(msg, "b is running");
	assert_int_equal(sensor_external_many(s, tis, 1, true, msg, sizeof msg), SENSOR_NOT_YET);
	assert_string_equal(msg, "no task b in up's run");
	tis[1].state = "success";
	assert_int_equal(sensor_external_many(s, tis, 4, true, msg, sizeof msg), SENSOR_MET);
	tis[1].state = "skipped";
	assert_int_equal(sensor_external_many(s, tis, 4, true, msg, sizeof msg), SENSOR_SKIP_STATE);
	tis[0].state = "failed"; /* failed before skipped, as Airflow's */
	assert_int_equal(sensor_external_many(s, tis, 4, true, msg, sizeof msg),
	                 SENSOR_FAILED_STATE);
	assert_string_equal(msg, "a is failed");
	dag_sensor_free(s);

	s = sensor_of("{\"external_task\": {\"dag_id\": \"up\", \"task_group_id\": \"g\","
	              " \"failed_states\": [\"failed\"]}}");
	assert_int_equal(sensor_external_many(s, tis, 4, true, msg, sizeof msg),
	                 SENSOR_FAILED_STATE);
	assert_string_equal(msg, "g.y is failed");
	tis[3].state = "success";
	assert_int_equal(sensor_external_many(s, tis, 4, true, msg, sizeof msg), SENSOR_MET);
	assert_int_equal(sensor_external_many(s, tis, 2, true, msg, sizeof msg), SENSOR_NOT_YET);
	assert_string_equal(msg, "no task of group g in up's run");
	dag_sensor_free(s);
	/* one task: skipped_states too */
	s = sensor_of("{\"external_task\": {\"dag_id\": \"up\", \"task_id\": \"a\","
	              " \"skipped_states\": [\"skipped\"]}}");
	assert_false(sensor_external_is_many(s));
	assert_int_equal(sensor_external_outcome(s, "skipped", msg, sizeof msg), SENSOR_SKIP_STATE);
	dag_sensor_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_times),
	    cmocka_unit_test(test_truthy),
	    cmocka_unit_test(test_file_glob_stays_inside),
	    cmocka_unit_test(test_sql_error_is_masked),
	    cmocka_unit_test(test_external_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
