/* test_route_table.c: route templates (api/route_table.h): the most fixed
 * segments win, numbers only where the name says so, the ids read from a
 * path, the events of the state-changing methods. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "api/route_table.h"

static const char *tpl(const char *path)
{
	static struct route_match m;

	route_table_match(path, &m);
	return route_table_template(m.route);
}

static void test_templates(void **state)
{
	(void)state;
	assert_string_equal(tpl("/api/v1/dags/etl/dagRuns"), "/api/v1/dags/{dag_id}/dagRuns");
	assert_string_equal(tpl("/api/v1/connections/test"), "/api/v1/connections/test");
	assert_string_equal(tpl("/api/v1/connections/pg"), "/api/v1/connections/{connection_id}");
	assert_string_equal(tpl("/api/v1/dags/~/dagRuns/list"), "/api/v1/dags/~/dagRuns/list");
	assert_string_equal(tpl("/api/v1/dags/etl/dagRuns/list"),
	                    "/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}");
	assert_string_equal(
	    tpl("/api/v1/dags/d/dagRuns/r/taskInstances/t/3"),
	    "/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}");
	assert_string_equal(
	    tpl("/api/v1/dags/d/dagRuns/r/taskInstances/t/tries"),
	    "/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/tries");
	/* a map index is a number: anything else there is no route */
	assert_string_equal(tpl("/api/v1/dags/d/dagRuns/r/taskInstances/t/x"), "other");
	assert_string_equal(tpl("/api/v1/jobs/12"), "/api/v1/jobs/{job_id}");
	assert_string_equal(tpl("/api/v1/jobs/abc"), "other");
	assert_string_equal(tpl("/api/v1/jobs/12/tasks/worker/0/logs"),
	                    "/api/v1/jobs/{job_id}/tasks/{role}/{index}/logs");
	assert_string_equal(tpl("/ui/js/core.js"), "/ui/{path*}");
	assert_string_equal(tpl("/ui/login"), "/ui/login");
	assert_string_equal(tpl("/"), "/");
	assert_string_equal(tpl("/metrics"), "/metrics");
	assert_string_equal(tpl("/nothing/here"), "other");
	assert_string_equal(tpl("//api//v1/jobs"), "/api/v1/jobs");
	assert_string_equal(tpl("/a/b/c/d/e/f/g/h/i/j/k/l/m/n"), "other");
	assert_true(route_table_count() > 60);
}

static void test_params(void **state)
{
	struct route_match m;

	(void)state;
	route_table_match("/api/v1/dags/etl/dagRuns/manual_1/taskInstances/load/2/tries/3", &m);
	assert_string_equal(route_match_param(&m, "dag_id"), "etl");
	assert_string_equal(route_match_param(&m, "dag_run_id"), "manual_1");
	assert_string_equal(route_match_param(&m, "task_id"), "load");
	assert_string_equal(route_match_param(&m, "map_index"), "2");
	assert_string_equal(route_match_param(&m, "task_try_number"), "3");
	assert_null(route_match_param(&m, "job_id"));
	assert_null(route_match_param(&m, "dag"));
	route_table_match("/ui/js/core.js", &m);
	assert_int_equal(m.n, 0);
}

static void test_events(void **state)
{
	struct route_match m;

	(void)state;
	route_table_match("/api/v1/dags/etl/dagRuns", &m);
	assert_string_equal(route_table_event(m.route, "POST"), "api.post_dag_run");
	assert_null(route_table_event(m.route, "GET"));
	route_table_match("/api/v1/jobs/3", &m);
	assert_string_equal(route_table_event(m.route, "DELETE"), "api.delete_job");
	route_table_match("/api/v1/launch/exited", &m);
	assert_string_equal(route_table_event(m.route, "POST"), "");
	route_table_match("/api/v1/dags/~/dagRuns/~/taskInstances/list", &m);
	assert_string_equal(route_table_event(m.route, "POST"), "");
	assert_null(route_table_event(ROUTE_TABLE_OTHER, "POST"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_templates),
	    cmocka_unit_test(test_params),
	    cmocka_unit_test(test_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
