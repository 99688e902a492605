/* Tests of a DAG task's `sensor:` mapping (model/dag_spec_sensor.c): each
 * kind read with its defaults, the checked form read back as
 * `weir task-sensor` reads it, and each kind of bad mapping named by its
 * field; its templates: the fields an Airflow file templates rendered from
 * a try's variables, a sql sensor's query left as written, a rendered
 * value checked as a DAG file's is (a path that leaves the folder, a URL
 * that is not http://, a value that would break the request line), and
 * the file's templates checked when it is read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "model/dag_spec.h"
#include "model/template.h"

static struct dag_spec *parse_task(const char *task, struct weir_error *err)
{
	char text[2048];

	snprintf(text, sizeof text,
	         "dag_id: d\nparams: {p: x, q: ok}\ntasks:\n  - task_id: s\n%s", task);
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

static void want_msg(const char *task, const char *got, const char *want)
{
	if (!strstr(got, want))
		fail_msg("%s: got \"%s\", wanted \"%s\"", task, got, want);
}

static void expect_error(const char *task, const char *want)
{
	struct weir_error err = {0};
	struct dag_spec *d = parse_task(task, &err);

	assert_null(d);
	want_msg(task, err.msg, want);
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
	expect_error("    sensor: {external_task: {dag_id: up, task_id: a, task_ids: [b]}}\n",
	             "give one of task_id, task_ids and task_group_id");
	expect_error("    sensor: {external_task: {dag_id: up, task_ids: []}}\n",
	             "tasks[0].sensor.external_task.task_ids");
	expect_error("    sensor: {external_task: {dag_id: up, task_ids: [a, \"b c\"]}}\n",
	             "tasks[0].sensor.external_task.task_ids[1]");
	expect_error("    sensor: {external_task: {dag_id: up, task_group_id: \"{{ ds }}\"}}\n",
	             "expected a task group id");
	expect_error("    sensor: {external_task: {dag_id: up, check_existence: maybe}}\n",
	             "tasks[0].sensor.external_task.check_existence");
	expect_error("    command: \"true\"\n    sensor: {delta: 1}\n", "holds options only");
	expect_error("    command: \"true\"\n    sensor: {mode: soon}\n", "poke or reschedule");
	expect_error("    command: \"true\"\n    sensor: 5\n", "tasks[0].sensor");
	expect_error("    sql: {conn: c, query: x}\n    sensor: {timeout: 1}\n", "got more");
	/* the marker is the reader's, not the file's */
	expect_error("    sensor: {command: true}\n", "command: and its sensor: options");
}

/* A command task with sensor: options: a sensor whose poke is its command,
 * its options read, the task still a command task (with its env), and the
 * whole read back from its JSON form as the server's reader does. */
static void test_command_sensor(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_spec *d = parse_task("    command: ./ready.sh\n    env: {K: v}\n"
	                                "    sensor: {poke_interval: 2s, timeout: 1h, "
	                                "mode: reschedule, exponential_backoff: true}\n",
	                                &err);
	struct dag_spec *back;
	const struct dag_sensor *s;
	json_t *json;

	assert_non_null(d);
	assert_int_equal(d->tasks[0].kind, DAG_TASK_COMMAND);
	assert_string_equal(d->tasks[0].command, "./ready.sh");
	assert_int_equal(d->tasks[0].n_env, 1);
	s = d->tasks[0].sensor;
	assert_non_null(s);
	assert_int_equal(s->kind, DAG_SENSOR_COMMAND);
	assert_string_equal(dag_sensor_kind_name(s->kind), "command");
	assert_int_equal(s->poke_interval_ms, 2000);
	assert_int_equal(s->timeout_ms, 3600000);
	assert_true(s->exponential_backoff);
	json = dag_spec_to_json(d);
	assert_non_null(json);
	back = dag_spec_from_json(json, "d.json", "/dags", &err);
	json_decref(json);
	if (!back)
		fail_msg("read back: %s", err.msg);
	assert_int_equal(back->tasks[0].kind, DAG_TASK_COMMAND);
	assert_non_null(back->tasks[0].sensor);
	assert_int_equal(back->tasks[0].sensor->kind, DAG_SENSOR_COMMAND);
	assert_int_equal(back->tasks[0].sensor->timeout_ms, 3600000);
	dag_spec_destroy(back);
	dag_spec_destroy(d);
}

/* ---- templates ---- */

/* The variables of a try of run 2026-03-01 with params.p = p. */
static void fill(struct template_ctx *ctx, const char *p)
{
	struct weir_error err = {0};
	json_t *params = json_pack("{ssss}", "p", p, "q", "ok");
	struct template_run run = {
	    .dag_id = "d",
	    .run_id = "manual__1",
	    .task_id = "s",
	    .logical_ms = 1772323200000LL, /* 2026-03-01T00:00:00Z */
	    .interval_start_ms = 1772323200000LL,
	    .interval_end_ms = 1772409600000LL,
	    .try_number = 1,
	    .params = params,
	};

	assert_int_equal(template_ctx_fill(ctx, &run, &err), 0);
	json_decref(params);
}

/* The task's sensor rendered with params.p = p; NULL with err. */
static struct dag_sensor *rendered(const char *task, const char *p, struct weir_error *err)
{
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct dag_spec *d = parse_task(task, err);
	struct dag_sensor *s;

	if (!d)
		fail_msg("%s: %s", task, err->msg);
	fill(&ctx, p);
	s = dag_sensor_render(d->tasks[0].sensor, &ctx, err);
	template_ctx_release(&ctx);
	dag_spec_destroy(d);
	return s;
}

static const char *field(const struct dag_sensor *s, const char *key)
{
	return json_string_value(json_object_get(s->what, key));
}

static void test_file_path(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_sensor *s = rendered("    sensor: {file: {path: \"data/{{ ds }}/_SUCCESS\"},"
	                                " mode: reschedule, poke_interval: 2}\n",
	                                "x", &err);

	assert_non_null(s);
	assert_string_equal(field(s, "path"), "data/2026-03-01/_SUCCESS");
	assert_string_equal(field(s, "folder"), "/dags");
	assert_int_equal(s->mode, DAG_SENSOR_RESCHEDULE);
	assert_int_equal(s->poke_interval_ms, 2000);
	dag_sensor_free(s);
}

static void expect_render_error(const char *task, const char *p, const char *want)
{
	struct weir_error err = {0};
	struct dag_sensor *s = rendered(task, p, &err);

	assert_null(s);
	want_msg(task, err.msg, want);
}

static void test_rendered_path_that_escapes(void **state)
{
	(void)state;
	const char *task = "    sensor: {file: {path: \"{{ params.p }}/_SUCCESS\"}}\n";

	expect_render_error(task, "../x", "sensor.file.path: expected a path inside the folder");
	expect_render_error(task, "../x", "\"../x/_SUCCESS\"");
	expect_render_error(task, "a/../../x", "no \"..\"");
	expect_render_error(task, "/etc", "sensor.file.path: expected a path relative");
	/* a value that stays inside renders */
	struct weir_error err = {0};
	struct dag_sensor *s = rendered(task, "in..side", &err);
	assert_non_null(s);
	assert_string_equal(field(s, "path"), "in..side/_SUCCESS");
	dag_sensor_free(s);
}

static void test_http(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_sensor *s =
	    rendered("    sensor: {http: {url: \"http://h:1\", path: \"/status/{{ ds_nodash }}\","
	             " match: \"{{ params.q }}|ready\"}}\n",
	             "x", &err);

	assert_non_null(s);
	assert_string_equal(field(s, "path"), "/status/20260301");
	assert_string_equal(field(s, "match"), "ok|ready");
	dag_sensor_free(s);
	s = rendered("    sensor: {http: {url: \"{{ params.p }}/health\"}}\n", "http://h:8080", &err);
	assert_non_null(s);
	assert_string_equal(field(s, "url"), "http://h:8080/health");
	dag_sensor_free(s);
	expect_render_error("    sensor: {http: {url: \"{{ params.p }}/health\"}}\n", "file:///etc",
	                    "sensor.http.url: expected a URL starting with http://");
	/* an outside value cannot add a header or break the request line */
	expect_render_error("    sensor: {http: {url: \"http://h\", path: \"/s/{{ params.p }}\"}}\n",
	                    "a\r\nX-Evil: 1", "sensor.http.path: expected a path without spaces");
	expect_render_error("    sensor: {http: {url: \"http://h\", path: \"{{ params.p }}\"}}\n",
	                    "no-slash", "sensor.http.path: expected a path starting with '/'");
	expect_render_error("    sensor: {http: {url: \"http://h\", match: \"{{ params.p }}\"}}\n",
	                    "(", "sensor.http.match: expected a regular expression");
}

static void test_sql_parameters_not_the_query(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_sensor *s =
	    rendered("    sensor: {sql: {conn: dw, query: \"SELECT count(*) > 0 FROM loads WHERE ds = "
	             ":ds\", parameters: {ds: \"{{ ds }}\", n: 3, p: \"{{ params.p }}\"}}}\n",
	             "it's", &err);
	json_t *params;

	assert_non_null(s);
	params = json_object_get(s->what, "parameters");
	assert_string_equal(json_string_value(json_object_get(params, "ds")), "2026-03-01");
	/* an outside value is bound as it is, never SQL text */
	assert_string_equal(json_string_value(json_object_get(params, "p")), "it's");
	assert_int_equal(json_integer_value(json_object_get(params, "n")), 3);
	assert_string_equal(field(s, "query"), "SELECT count(*) > 0 FROM loads WHERE ds = :ds");
	dag_sensor_free(s);
}

static void test_external_ids(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_sensor *s = rendered(
	    "    sensor: {external_task: {dag_id: \"up_{{ params.p }}\", task_id: \"{{ params.q }}\"}}\n",
	    "eu", &err);

	assert_non_null(s);
	assert_string_equal(field(s, "dag_id"), "up_eu");
	assert_string_equal(field(s, "task_id"), "ok");
	dag_sensor_free(s);
	expect_render_error("    sensor: {external_task: {dag_id: \"{{ params.p }}\"}}\n", "a b",
	                    "sensor.external_task.dag_id: expected a DAG id");
}

static void test_missing_variable_at_run_time(void **state)
{
	(void)state;
	struct weir_error err = {0};
	/* a server variable: any key passes the file's check; unset, it is named */
	struct dag_sensor *s =
	    rendered("    sensor: {file: {path: \"{{ var.value.landing }}/x\"}}\n", "x", &err);

	assert_null(s);
	assert_true(strstr(err.msg, "sensor.file.path") != NULL);
	assert_true(strstr(err.msg, "landing") != NULL);
}

static void test_bad_templates_are_import_errors(void **state)
{
	(void)state;
	expect_error("    sensor: {file: {path: \"data/{{ dss }}/_SUCCESS\"}}\n",
	                   "tasks[0].sensor.file.path: ");
	expect_error("    sensor: {file: {path: \"data/{{ params.nope }}\"}}\n",
	                   "params.nope");
	expect_error("    sensor: {http: {url: \"http://h\", path: \"/{{ ds\"}}\n",
	                   "tasks[0].sensor.http.path");
	expect_error("    sensor: {sql: {conn: dw, query: \"SELECT 1\","
	                   " parameters: {d: \"{{ nope }}\"}}}\n",
	                   "tasks[0].sensor.sql.parameters.d");
	expect_error("    sensor: {external_task: {dag_id: \"{{ nope }}\"}}\n",
	                   "tasks[0].sensor.external_task.dag_id");
	/* the query is no template: its values are bound parameters */
	expect_error("    sensor: {sql: {conn: dw, query: \"SELECT 1 WHERE '{{ ds }}' > ''\"}}\n",
	                   "expected a fixed query");
	/* a literal path is still checked when the file is read */
	expect_error("    sensor: {file: {path: \"../{{ ds }}\"}}\n", "tasks[0].sensor.file.path");
}

/* An ExternalTaskMarker's `marker:` (a command task's key): its default
 * depth, the round trip through JSON, and its errors. */
static void test_marker(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_spec *d = parse_task(
	    "    command: \"true\"\n    marker: {dag_id: down, task_id: g.wait}\n", &err);
	json_t *back;

	assert_non_null(d);
	assert_string_equal(json_string_value(json_object_get(d->tasks[0].marker, "task_id")),
	                    "g.wait");
	assert_int_equal(json_integer_value(json_object_get(d->tasks[0].marker, "recursion_depth")),
	                 10);
	back = dag_spec_to_json(d);
	assert_true(json_equal(json_object_get(json_array_get(json_object_get(back, "tasks"), 0),
	                                       "marker"),
	                       d->tasks[0].marker));
	json_decref(back);
	dag_spec_destroy(d);
	expect_error("    command: \"true\"\n    marker: {dag_id: down}\n",
	             "tasks[0].marker.task_id: expected a task id");
	expect_error("    command: \"true\"\n    marker: {dag_id: down, task_id: w, depth: 1}\n",
	             "tasks[0].marker");
	expect_error("    command: \"true\"\n"
	             "    marker: {dag_id: d, task_id: w, recursion_depth: 0}\n",
	             "tasks[0].marker.recursion_depth");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_file_defaults_and_round_trip),
	    cmocka_unit_test(test_kinds),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_command_sensor),
	    cmocka_unit_test(test_file_path),
	    cmocka_unit_test(test_rendered_path_that_escapes),
	    cmocka_unit_test(test_http),
	    cmocka_unit_test(test_sql_parameters_not_the_query),
	    cmocka_unit_test(test_external_ids),
	    cmocka_unit_test(test_marker),
	    cmocka_unit_test(test_missing_variable_at_run_time),
	    cmocka_unit_test(test_bad_templates_are_import_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
