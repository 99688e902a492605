/* test_route_table.c: route templates (api/route_table.h): the most fixed
 * segments win, numbers only where the name says so, the ids read from a
 * path, the events of the state-changing methods, who answers each path,
 * and the table as the server's one dispatch: each row's operation per
 * method, and the least role of each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "api/airflow/airflow.h"
#include "api/airflow/airflow_admin.h"
#include "api/airflow/airflow_misc.h"
#include "api/airflow/airflow_notes.h"
#include "api/airflow/conn_routes.h"
#include "api/airflow/dataset_routes.h"
#include "api/db_clean_routes.h"
#include "api/jobs_routes.h"
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

static const char *const methods[] = {"GET", "POST", "PATCH", "PUT", "DELETE"};
#define N_METHODS (sizeof methods / sizeof methods[0])

/* Every row but "other" names who answers it and an operation for at least
 * one method: every template of Airflow's API the table lists is served
 * (the notes' setNote were the last). */
static void test_every_row_has_an_operation(void **state)
{
	(void)state;
	assert_null(route_table_row_entry(ROUTE_TABLE_OTHER));
	assert_false(route_table_served(ROUTE_TABLE_OTHER));
	for (size_t m = 0; m < N_METHODS; m++)
		assert_null(route_table_op(ROUTE_TABLE_OTHER, methods[m]));
	for (size_t i = 1; i < route_table_count(); i++) {
		const char *t = route_table_template((int)i);
		size_t ops = 0;
		if (!route_table_row_entry((int)i))
			fail_msg("row %zu (%s) names no entry", i, t);
		for (size_t m = 0; m < N_METHODS; m++)
			ops += route_table_op((int)i, methods[m]) != NULL;
		if (ops == 0)
			fail_msg("row %s: %zu operations", t, ops);
		if (route_table_served((int)i) != (ops > 0))
			fail_msg("row %s: route_table_served disagrees", t);
		/* HEAD and the methods outside the table are nobody's */
		assert_null(route_table_op((int)i, "HEAD"));
		assert_null(route_table_op((int)i, "OPTIONS"));
	}
}

/* Every method a row serves asks for a role, unless its entry takes no
 * API credentials (the UI's files and login, /health, the launchers); a
 * method it does not serve asks for none.  Reads are Viewer's, writes
 * never are; the secrets and the pools are Op's, whatever the method. */
static void test_every_operation_has_a_role(void **state)
{
	(void)state;
	assert_int_equal(route_table_role(ROUTE_TABLE_OTHER, "GET"), ROLE_NONE);
	for (size_t i = 1; i < route_table_count(); i++) {
		const char *t = route_table_template((int)i);
		bool open = route_table_row_entry((int)i)->flags & ROUTE_OPEN;
		bool secret = strstr(t, "/connections") || strstr(t, "/variables") ||
		              strstr(t, "/pools") || strstr(t, "/config");
		for (size_t m = 0; m < N_METHODS; m++) {
			enum weir_role r = route_table_role((int)i, methods[m]);
			bool op = route_table_op((int)i, methods[m]) != NULL;
			if (!op || open) {
				if (r != ROLE_NONE)
					fail_msg("%s %s: role %s where none is asked", methods[m],
					         t, role_name(r));
				continue;
			}
			if (r == ROLE_NONE)
				fail_msg("%s %s: no role", methods[m], t);
			if (secret && r < ROLE_OP)
				fail_msg("%s %s: %s, below Op", methods[m], t, role_name(r));
			if (m > 0 && r == ROLE_VIEWER && !strstr(t, "/list"))
				fail_msg("%s %s: a change open to a Viewer", methods[m], t);
		}
		assert_int_equal(route_table_role((int)i, "HEAD"), route_table_role((int)i, "GET"));
		assert_int_equal(route_table_role((int)i, "OPTIONS"), ROLE_NONE);
	}
	assert_int_equal(route_table_role(1 /* "/" */, "GET"), ROLE_NONE);
}

/* No template twice: a second row could never be matched. */
static void test_templates_are_unique(void **state)
{
	(void)state;
	for (size_t i = 1; i < route_table_count(); i++)
		for (size_t k = i + 1; k < route_table_count(); k++)
			if (!strcmp(route_table_template((int)i), route_table_template((int)k)))
				fail_msg("%s is rows %zu and %zu", route_table_template((int)i), i,
				         k);
}

/* Where a served row names the event of a method, it answers the method:
 * an event named for an operation no row has would never be recorded ("":
 * the method is not recorded there, named or not). */
static void test_events_name_operations(void **state)
{
	(void)state;
	for (size_t i = 1; i < route_table_count(); i++) {
		if (!route_table_served((int)i))
			continue;
		for (size_t m = 1; m < N_METHODS; m++) /* GET names none */
			if (route_table_event((int)i, methods[m]) &&
			    *route_table_event((int)i, methods[m]) &&
			    !route_table_op((int)i, methods[m]))
				fail_msg("%s %s: an event and no operation", methods[m],
				         route_table_template((int)i));
	}
}

/* Each served template of Airflow's API names its operation by Airflow's
 * operationId; a method the row lacks is no operation (the dispatch's 405). */
static void test_airflow_rows_name_their_operations(void **state)
{
#define AF "/api/v1"
#define TI AF "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances"
	static const struct {
		const char *tpl, *method;
		route_op_fn op;
	} cases[] = {
	    {AF "/dags", "GET", airflow_get_dags},
	    {AF "/dags", "PATCH", airflow_patch_dags},
	    {AF "/dags", "POST", NULL},
	    {AF "/dags/{dag_id}", "GET", airflow_get_dag},
	    {AF "/dags/{dag_id}", "PATCH", airflow_patch_dag},
	    {AF "/dags/{dag_id}", "DELETE", airflow_delete_dag},
	    {AF "/dags/{dag_id}", "PUT", NULL},
	    {AF "/dags/{dag_id}/details", "GET", airflow_get_dag_details},
	    {AF "/dags/{dag_id}/tasks", "GET", airflow_get_tasks},
	    {AF "/dags/{dag_id}/tasks/{task_id}", "GET", airflow_get_task},
	    {AF "/dags/{dag_id}/clearTaskInstances", "POST", airflow_post_clear_task_instances},
	    {AF "/dags/{dag_id}/updateTaskInstancesState", "POST",
	     airflow_post_set_task_instances_state},
	    {AF "/dags/{dag_id}/dagRuns", "GET", airflow_get_dag_runs},
	    {AF "/dags/{dag_id}/dagRuns", "POST", airflow_post_dag_run},
	    {AF "/dags/~/dagRuns/list", "POST", airflow_get_dag_runs_batch},
	    {AF "/dags/~/dagRuns/list", "GET", NULL},
	    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}", "GET", airflow_get_dag_run},
	    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}", "PATCH", airflow_update_dag_run_state},
	    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}", "DELETE", airflow_delete_dag_run},
	    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/clear", "POST", airflow_clear_dag_run},
	    {TI, "GET", airflow_get_task_instances},
	    {AF "/dags/~/dagRuns/~/taskInstances/list", "POST", airflow_get_task_instances_batch},
	    {TI "/{task_id}", "GET", airflow_get_task_instance},
	    {TI "/{task_id}", "PATCH", airflow_patch_task_instance},
	    {TI "/{task_id}/{map_index}", "GET", airflow_get_mapped_task_instance},
	    {TI "/{task_id}/{map_index}", "PATCH", airflow_patch_mapped_task_instance},
	    {TI "/{task_id}/listMapped", "GET", airflow_get_mapped_task_instances},
	    {TI "/{task_id}/dependencies", "GET", airflow_get_task_instance_dependencies},
	    {TI "/{task_id}/{map_index}/dependencies", "GET",
	     airflow_get_mapped_task_instance_dependencies},
	    {TI "/{task_id}/tries", "GET", airflow_get_task_instance_tries},
	    {TI "/{task_id}/tries/{task_try_number}", "GET", airflow_get_task_instance_try_details},
	    {TI "/{task_id}/{map_index}/tries", "GET", airflow_get_mapped_task_instance_tries},
	    {TI "/{task_id}/{map_index}/tries/{task_try_number}", "GET",
	     airflow_get_mapped_task_instance_try_details},
	    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/setNote", "PATCH", airflow_set_dag_run_note},
	    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/setNote", "GET", NULL},
	    {TI "/{task_id}/setNote", "PATCH", airflow_set_task_instance_note},
	    {TI "/{task_id}/{map_index}/setNote", "PATCH", airflow_set_mapped_task_instance_note},
	    {TI "/{task_id}/links", "GET", airflow_get_extra_links},
	    {TI "/{task_id}/logs/{task_try_number}", "GET", airflow_get_log},
	    {TI "/{task_id}/xcomEntries", "GET", airflow_get_xcom_entries},
	    {TI "/{task_id}/xcomEntries/{xcom_key}", "GET", airflow_get_xcom_entry},
	    {AF "/importErrors", "GET", airflow_get_import_errors},
	    {AF "/importErrors/{import_error_id}", "GET", airflow_get_import_error},
	    {AF "/pools", "GET", airflow_get_pools},
	    {AF "/pools", "POST", airflow_post_pool},
	    {AF "/pools/{pool_name}", "GET", airflow_get_pool},
	    {AF "/pools/{pool_name}", "PATCH", airflow_patch_pool},
	    {AF "/pools/{pool_name}", "DELETE", airflow_delete_pool},
	    {AF "/dagStats", "GET", airflow_get_dag_stats},
	    {AF "/dagWarnings", "GET", airflow_get_dag_warnings},
	    {AF "/dagSources/{file_token}", "GET", airflow_get_dag_source},
	    {AF "/parseDagFile/{file_token}", "PUT", airflow_reparse_dag_file},
	    {AF "/parseDagFile/{file_token}", "GET", NULL},
	    {AF "/providers", "GET", airflow_get_providers},
	    {AF "/plugins", "GET", airflow_get_plugins},
	    {AF "/config", "GET", airflow_get_config},
	    {AF "/config/section/{section}/option/{option}", "GET", airflow_get_value},
	    {AF "/version", "GET", airflow_get_version},
	    {AF "/connections", "GET", airflow_get_connections},
	    {AF "/connections", "POST", airflow_post_connection},
	    {AF "/connections/test", "POST", airflow_test_connection},
	    /* a connection named "test" is still read, changed, deleted */
	    {AF "/connections/test", "GET", airflow_get_connection},
	    {AF "/connections/test", "DELETE", airflow_delete_connection},
	    {AF "/connections/{connection_id}", "GET", airflow_get_connection},
	    {AF "/connections/{connection_id}", "PATCH", airflow_patch_connection},
	    {AF "/connections/{connection_id}", "DELETE", airflow_delete_connection},
	    {AF "/variables", "GET", airflow_get_variables},
	    {AF "/variables", "POST", airflow_post_variables},
	    {AF "/variables/{variable_key}", "GET", airflow_get_variable},
	    {AF "/variables/{variable_key}", "PATCH", airflow_patch_variable},
	    {AF "/variables/{variable_key}", "DELETE", airflow_delete_variable},
	    {AF "/datasets", "GET", airflow_get_datasets},
	    {AF "/datasets/{uri*}", "GET", airflow_get_dataset},
	    {AF "/datasets/events", "GET", airflow_get_dataset_events},
	    {AF "/datasets/events", "POST", airflow_create_dataset_event},
	    {AF "/datasets/queuedEvent/{uri*}", "GET", airflow_get_dataset_queued_events},
	    {AF "/datasets/queuedEvent/{uri*}", "DELETE", airflow_delete_dataset_queued_events},
	    {AF "/dags/{dag_id}/datasets/queuedEvent", "GET",
	     airflow_get_dag_dataset_queued_events},
	    {AF "/dags/{dag_id}/datasets/queuedEvent", "DELETE",
	     airflow_delete_dag_dataset_queued_events},
	    {AF "/dags/{dag_id}/datasets/queuedEvent/{uri*}", "GET",
	     airflow_get_dag_dataset_queued_event},
	    {AF "/dags/{dag_id}/datasets/queuedEvent/{uri*}", "DELETE",
	     airflow_delete_dag_dataset_queued_event},
	    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/upstreamDatasetEvents", "GET",
	     airflow_get_upstream_dataset_events},
	    /* and weir's own */
	    {AF "/jobs", "POST", jobs_submit},
	    {AF "/jobs/{job_id}", "DELETE", jobs_kill},
	    {AF "/jobs/{job_id}", "PATCH", NULL},
	    {AF "/weir/dbClean", "POST", db_clean_post},
	    {AF "/weir/dbClean", "GET", db_clean_get},
	    {AF "/weir/dbClean", "DELETE", NULL},
	};
	size_t seen = 0;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t r;
		for (r = 1; r < route_table_count(); r++)
			if (!strcmp(route_table_template((int)r), cases[i].tpl))
				break;
		if (r == route_table_count())
			fail_msg("no row %s", cases[i].tpl);
		if (route_table_op((int)r, cases[i].method) != cases[i].op)
			fail_msg("%s %s: not the operation expected", cases[i].method,
			         cases[i].tpl);
	}
	/* every served row of Airflow's API is above (the event log's and the
	 * notifications' answer only GET) */
	for (size_t r = 1; r < route_table_count(); r++) {
		const char *t = route_table_template((int)r);
		bool listed = false;
		if (!route_table_served((int)r) || strncmp(t, AF "/", 8) ||
		    !strncmp(t, AF "/jobs", 12) || !strncmp(t, AF "/launch", 14) ||
		    !strncmp(t, AF "/weir/", 12) || !strncmp(t, AF "/ui/", 11) ||
		    !strcmp(t, AF "/health") || strstr(t, "atasets") || strstr(t, "otifications") ||
		    strstr(t, "slaMisses") || strstr(t, "eventLogs"))
			continue;
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
			listed = listed || !strcmp(cases[i].tpl, t);
		if (!listed)
			fail_msg("%s: Airflow's, served, and its operations not checked here", t);
		seen++;
	}
	assert_true(seen > 40);
#undef TI
#undef AF
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

/* Each of the web UI's actions names a row and a method it serves, so GET
 * /ui/me decides it by the role the server checks; route_table_find finds
 * rows by their template as written. */
static void test_ui_actions_are_routes(void **state)
{
	size_t n;
	const struct route_ui_action *a = route_ui_actions(&n);

	(void)state;
	assert_true(n >= 5);
	for (size_t i = 0; i < n; i++) {
		int r = route_table_find(a[i].tpl);
		if (r == ROUTE_TABLE_OTHER || !route_table_op(r, a[i].method))
			fail_msg("UI action %s: %s %s is no route", a[i].name, a[i].method, a[i].tpl);
		if (route_table_role(r, a[i].method) == ROLE_NONE)
			fail_msg("UI action %s asks for no role", a[i].name);
	}
	assert_int_equal(route_table_find("/api/v1/nope"), ROUTE_TABLE_OTHER);
	assert_int_equal(route_table_find(NULL), ROUTE_TABLE_OTHER);
	assert_string_equal(route_table_template(route_table_find("/api/v1/dags/{dag_id}")),
	                    "/api/v1/dags/{dag_id}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_templates),
	    cmocka_unit_test(test_params),
	    cmocka_unit_test(test_events),
	    cmocka_unit_test(test_every_row_has_an_operation),
	    cmocka_unit_test(test_templates_are_unique),
	    cmocka_unit_test(test_every_operation_has_a_role),
	    cmocka_unit_test(test_events_name_operations),
	    cmocka_unit_test(test_airflow_rows_name_their_operations),
	    cmocka_unit_test(test_who_answers),
	    cmocka_unit_test(test_ui_actions_are_routes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
