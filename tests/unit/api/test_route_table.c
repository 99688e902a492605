/* test_route_table.c: route templates (api/route_table.h): the most fixed
 * segments win, numbers only where the name says so, the ids read from a
 * path, the events of the state-changing methods, and who answers each
 * path: the handler column that is the server's one dispatch. */
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

/* Every row but "other" names who answers it, with a handler. */
static void test_every_row_has_a_handler(void **state)
{
	(void)state;
	assert_null(route_table_row_entry(ROUTE_TABLE_OTHER));
	for (size_t i = 1; i < route_table_count(); i++) {
		const struct route_entry *e = route_table_row_entry((int)i);
		if (!e || !e->handle)
			fail_msg("row %zu (%s) has no handler", i, route_table_template((int)i));
	}
}

static const char *who(const char *path)
{
	static struct route_match m;
	const struct route_entry *e;

	route_table_match(path, &m);
	e = route_table_entry(&m, path);
	return e ? e->name : "none";
}

/* Who answers each path, as the hand dispatch before the table did: each
 * group's rows, the paths no row matches that a group still answers in its
 * own voice (a bad id, a 404), and the raw paths read whole. */
static void test_who_answers(void **state)
{
	static const struct {
		const char *path, *who;
	} cases[] = {
	    /* outside /api/v1, by the raw path */
	    {"/", "ui_files"},
	    {"/index.html", "ui_files"},
	    {"/ui/", "ui_files"},
	    {"/ui/js/core.js", "ui_files"},
	    {"/ui/login", "ui_login"},
	    {"/ui/session", "ui_login"},
	    {"/ui/logout", "ui_login"},
	    {"/ui/login/", "ui_files"},
	    {"/ui//login", "ui_files"},
	    {"/metrics", "metrics"},
	    {"/metrics/", "none"},
	    {"//metrics", "none"},
	    {"/uix", "none"},
	    {"//api//v1/jobs", "none"},
	    {"/api/v1", "none"},
	    {"/api/v1/", "none"},
	    /* weir's own */
	    {"/api/v1/health", "health"},
	    {"/api/v1/health/x", "none"},
	    {"/api/v1/jobs", "jobs"},
	    {"/api/v1/jobs/", "jobs"},
	    {"/api/v1/jobs/7", "jobs"},
	    {"/api/v1/jobs/abc", "jobs"},
	    {"/api/v1/jobs/7/tasks/worker/0/logs", "jobs"},
	    {"/api/v1/jobs/7/nothing", "jobs"},
	    {"/api/v1/launch/register", "launch"},
	    {"/api/v1/launch/log", "launch"},
	    {"/api/v1/launch", "launch"},
	    {"/api/v1/launch/nothing/here", "launch"},
	    {"/api/v1/ui/dags", "ui_data"},
	    {"/api/v1/ui/dags/etl/grid", "ui_data"},
	    {"/api/v1/ui/nothing", "ui_data"},
	    {"/api/v1/notifications", "notify"},
	    {"/api/v1/slaMisses", "notify"},
	    {"/api/v1/dags/etl/dagRuns/r1/notifications", "notify"},
	    {"/api/v1/dags/etl/dagRuns/r1/slaMisses", "notify"},
	    {"/api/v1/notifications/x", "none"},
	    /* Airflow's */
	    {"/api/v1/dags", "airflow"},
	    {"/api/v1/dags/etl", "airflow"},
	    {"/api/v1/dags/~/dagRuns", "airflow"},
	    {"/api/v1/dags/~/dagRuns/list", "airflow"},
	    {"/api/v1/dags/d/dagRuns/r/taskInstances/t/x", "airflow"},
	    {"/api/v1/dags/etl/nothing", "airflow"},
	    {"/api/v1/importErrors", "airflow"},
	    {"/api/v1/importErrors/3", "airflow"},
	    {"/api/v1/pools/p", "airflow_misc"},
	    {"/api/v1/config", "airflow_misc"},
	    {"/api/v1/config/section/core/option/x", "airflow_misc"},
	    {"/api/v1/version", "airflow_misc"},
	    {"/api/v1/dagSources/abc/def", "airflow_misc"},
	    {"/api/v1/connections", "connections"},
	    {"/api/v1/connections/test", "connections"},
	    {"/api/v1/variables/k", "connections"},
	    {"/api/v1/variables/k/x", "connections"},
	    {"/api/v1/eventLogs", "event_log"},
	    {"/api/v1/eventLogs/abc", "event_log"},
	    /* datasets, by the raw path: a URI holds slashes */
	    {"/api/v1/datasets", "datasets"},
	    {"/api/v1/datasets/", "datasets"},
	    {"/api/v1/datasets/events", "datasets"},
	    {"/api/v1/datasets/s3://b/k", "datasets"},
	    {"/api/v1/datasets/a/b/c/d/e/f/g/h/i/j/k/l/m", "datasets"},
	    {"/api/v1/datasets/queuedEvent/s3://b/k", "datasets"},
	    {"/api/v1/dags/etl/datasets/queuedEvent", "datasets"},
	    {"/api/v1/dags/etl/datasets/queuedEvent/a/b/c/d/e/f/g/h/i/j/k", "datasets"},
	    {"/api/v1/dags/etl/dagRuns/r1/upstreamDatasetEvents", "datasets"},
	    {"/api/v1/dags/etl/datasets/queuedEvent/", "airflow"},
	    {"/api/v1/dags/etl//datasets/queuedEvent/u", "airflow"},
	    {"/api/v1//datasets/x", "none"},
	    {"/api/v1/datasetsx", "none"},
	    {"/api/v1/nothing", "none"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (strcmp(who(cases[i].path), cases[i].who))
			fail_msg("%s: answered by %s, expected %s", cases[i].path,
			         who(cases[i].path), cases[i].who);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_templates),   cmocka_unit_test(test_params),
	    cmocka_unit_test(test_events),      cmocka_unit_test(test_every_row_has_a_handler),
	    cmocka_unit_test(test_who_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
