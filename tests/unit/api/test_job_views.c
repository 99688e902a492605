/* test_job_views.c: the JSON of jobs, tasks and events as weir's own routes
 * answer it, rendered from rows and a spec built here (api/job_views.h).
 * The texts are compared whole, key order included: clients and the web
 * UI read them as they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/job_views.h"
#include "model/states.h"

/* 2026-11-30T12:00:00.123Z */
#define T0 1796040000123LL

static void expect_text(json_t *j, const char *want)
{
	char *text;

	assert_non_null(j);
	text = json_dumps(j, JSON_COMPACT);
	assert_non_null(text);
	assert_string_equal(text, want);
	free(text);
	json_decref(j);
}

static struct task_row task(const char *role, int idx, const char *state)
{
	struct task_row t = {0};

	t.job_id = 7;
	t.attempt = 2;
	t.role = (char *)role;
	t.idx = idx;
	assert_int_equal(task_state_from_name(state, &t.state), 0);
	t.reason = "";
	t.host = "";
	t.gpus = "";
	t.exit_code = -1;
	return t;
}

static struct job_row job(void)
{
	struct job_row j = {0};

	j.id = 7;
	j.name = "train";
	j.spec_json = "{\"name\":\"train\",\"x\":[1,2]}";
	j.framework = "pytorch";
	j.state = JOB_RUNNING;
	j.reason = "";
	j.priority = 3;
	j.attempt = 2;
	j.max_restarts = 1;
	j.exit_code = -1;
	j.submitted_at = T0;
	j.started_at = T0 + 1000;
	return j;
}

static void test_task_not_started(void **state)
{
	struct task_row t = task("worker", 0, "pending");

	(void)state;
	expect_text(job_view_task(&t),
	            "{\"role\":\"worker\",\"index\":0,\"attempt\":2,\"state\":\"pending\","
	            "\"reason\":\"\",\"host\":\"\",\"port\":0,\"pid\":null,\"gpus\":\"\","
	            "\"exit_code\":null,\"signal\":null,\"oom_killed\":false,"
	            "\"peak_memory_bytes\":0,\"cpu_time_ms\":0,\"started_at\":null,"
	            "\"ended_at\":null}");
}

static void test_task_ended(void **state)
{
	struct task_row t = task("ps", 1, "failed");

	(void)state;
	t.reason = "OOMKilled";
	t.host = "node1";
	t.port = 2222;
	t.pid = 4242;
	t.gpus = "0,1";
	t.exit_code = 137;
	t.signal = 9;
	t.oom_killed = true;
	t.peak_memory_bytes = 1LL << 33;
	t.cpu_time_ms = 1500;
	t.started_at = T0;
	t.ended_at = T0 + 61877;
	expect_text(job_view_task(&t),
	            "{\"role\":\"ps\",\"index\":1,\"attempt\":2,\"state\":\"failed\","
	            "\"reason\":\"OOMKilled\",\"host\":\"node1\",\"port\":2222,\"pid\":4242,"
	            "\"gpus\":\"0,1\",\"exit_code\":137,\"signal\":9,\"oom_killed\":true,"
	            "\"peak_memory_bytes\":8589934592,\"cpu_time_ms\":1500,"
	            "\"started_at\":\"2026-11-30T12:00:00.123Z\","
	            "\"ended_at\":\"2026-11-30T12:01:02.000Z\"}");
}

static void test_task_null_strings(void **state)
{
	struct task_row t = task("worker", 0, "pending");
	json_t *j;

	(void)state;
	t.reason = NULL;
	t.host = NULL;
	t.gpus = NULL;
	t.exit_code = 0; /* 0 is an exit code; only -1 is none */
	j = job_view_task(&t);
	assert_string_equal(json_string_value(json_object_get(j, "reason")), "");
	assert_string_equal(json_string_value(json_object_get(j, "host")), "");
	assert_string_equal(json_string_value(json_object_get(j, "gpus")), "");
	assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 0);
	json_decref(j);
}

static void test_job_full(void **state)
{
	struct job_row j = job();
	struct job_place place = {.gang = true};
	struct task_row t[2] = {task("worker", 0, "running"), task("worker", 1, "pending")};
	json_t *o;

	(void)state;
	snprintf(place.queue, sizeof place.queue, "gpu");
	o = job_view_job(&j, &place, t, 2);
	assert_non_null(o);
	assert_int_equal(json_array_size(json_object_get(o, "tasks")), 2);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(o, "tasks"), 1), "state")),
	                    "pending");
	json_object_del(o, "tasks");
	expect_text(o, "{\"id\":7,\"name\":\"train\",\"state\":\"running\",\"reason\":\"\","
	               "\"framework\":\"pytorch\",\"priority\":3,\"attempt\":2,"
	               "\"max_restarts\":1,\"exit_code\":null,"
	               "\"submitted_at\":\"2026-11-30T12:00:00.123Z\","
	               "\"started_at\":\"2026-11-30T12:00:01.123Z\",\"ended_at\":null,"
	               "\"executor\":\"slurm\",\"queue\":\"gpu\","
	               "\"spec\":{\"name\":\"train\",\"x\":[1,2]}}");
}

static void test_job_full_local_bad_spec(void **state)
{
	struct job_row j = job();
	struct job_place place = {0};

	(void)state;
	j.spec_json = "not json";
	j.framework = NULL;
	j.reason = NULL;
	j.state = JOB_FAILED;
	j.exit_code = 2;
	j.ended_at = T0 + 2000;
	expect_text(job_view_job(&j, &place, NULL, 0),
	            "{\"id\":7,\"name\":\"train\",\"state\":\"failed\",\"reason\":\"\","
	            "\"framework\":\"none\",\"priority\":3,\"attempt\":2,\"max_restarts\":1,"
	            "\"exit_code\":2,\"submitted_at\":\"2026-11-30T12:00:00.123Z\","
	            "\"started_at\":\"2026-11-30T12:00:01.123Z\","
	            "\"ended_at\":\"2026-11-30T12:00:02.123Z\",\"executor\":\"local\","
	            "\"queue\":null,\"spec\":{},\"tasks\":[]}");
}

static void test_job_brief(void **state)
{
	static const char spec_text[] =
	    "{\"name\":\"train\",\"roles\":{\"ps\":{\"instances\":1,\"memory\":\"1g\","
	    "\"vcores\":1,\"command\":\"true\"},\"worker\":{\"instances\":3,\"memory\":\"2g\","
	    "\"vcores\":2,\"gpus\":1,\"command\":\"true\"}}}";
	struct weir_error err = {0};
	json_t *sj = json_loads(spec_text, 0, NULL);
	struct job_spec *spec = job_spec_from_json(sj, &err);
	struct job_row j = job();
	struct job_place place = {0};
	struct task_row t[4] = {task("ps", 0, "running"), task("worker", 0, "running"),
	                        task("worker", 1, "pending"), task("worker", 2, "running")};
	json_t *o, *roles;

	(void)state;
	if (!spec)
		fail_msg("%s", err.msg);
	o = job_view_job_brief(&j, &place, spec, t, 4);
	assert_non_null(o);
	assert_null(json_object_get(o, "spec"));
	assert_null(json_object_get(o, "tasks"));
	expect_text(json_incref(json_object_get(o, "tasks_by_state")),
	            "{\"running\":3,\"pending\":1}");
	roles = json_object_get(o, "roles");
	assert_int_equal(json_array_size(roles), 2);
	for (size_t i = 0; i < json_array_size(roles); i++) {
		json_t *r = json_array_get(roles, i);
		const char *name = json_string_value(json_object_get(r, "name"));
		if (!strcmp(name, "worker"))
			expect_text(json_incref(r), "{\"name\":\"worker\",\"instances\":3,"
			                            "\"vcores\":2,\"memory_mb\":2048,\"gpus\":1}");
		else
			expect_text(json_incref(r), "{\"name\":\"ps\",\"instances\":1,\"vcores\":1,"
			                            "\"memory_mb\":1024,\"gpus\":0}");
	}
	json_decref(o);
	job_spec_destroy(spec);
	json_decref(sj);
}

static void test_job_brief_no_spec_no_tasks(void **state)
{
	struct job_row j = job();
	struct job_place place = {0};
	json_t *o;

	(void)state;
	o = job_view_job_brief(&j, &place, NULL, NULL, 0);
	expect_text(json_incref(json_object_get(o, "roles")), "[]");
	expect_text(json_incref(json_object_get(o, "tasks_by_state")), "{}");
	assert_string_equal(json_string_value(json_object_get(o, "executor")), "local");
	json_decref(o);
}

static void test_events(void **state)
{
	struct event_row e[2] = {
	    {.id = 1, .job_id = 7, .time = T0, .kind = "submitted", .message = "train: 2 tasks"},
	    {.id = 2, .job_id = 7, .time = 0, .kind = "kill", .message = "kill requested"},
	};

	(void)state;
	expect_text(job_view_collection("events", job_view_events(e, 2)),
	            "{\"events\":[{\"time\":\"2026-11-30T12:00:00.123Z\",\"kind\":\"submitted\","
	            "\"message\":\"train: 2 tasks\"},{\"time\":null,\"kind\":\"kill\","
	            "\"message\":\"kill requested\"}]}");
	expect_text(job_view_collection("tasks", job_view_tasks(NULL, 0)), "{\"tasks\":[]}");
	assert_null(job_view_collection("jobs", NULL));
}

/* job_view_job_write() writes what json_dumps() makes of job_view_job(),
 * byte for byte: the long poll's version is a hash of that text. */
static void expect_written_as_tree(const struct job_row *j, const struct job_place *place,
                                   const struct task_row *t, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *tree = job_view_job(j, place, t, n);
	char *text = tree ? json_dumps(tree, JSON_COMPACT) : NULL;

	assert_non_null(text);
	assert_int_equal(job_view_job_write(&sb, j, place, t, n), 0);
	assert_string_equal(sb.buf, text);
	free(text);
	json_decref(tree);
	strbuf_release(&sb);
}

static void test_job_written_as_the_tree_dumps(void **state)
{
	struct job_row j = job();
	struct job_place place = {.gang = true};
	struct task_row t[3] = {task("worker", 0, "running"), task("worker", 1, "failed"),
	                        task("ps", 0, "killed")};

	(void)state;
	expect_written_as_tree(&j, &place, NULL, 0);
	snprintf(place.queue, sizeof place.queue, "gpu \"a\"");
	j.reason = "stopping: worker:1 failed\n\ttab \x01 \"q\" \\ caf\xc3\xa9 /";
	j.name = "\xe2\x82\xac job";
	j.exit_code = 0;
	j.ended_at = T0 + 5;
	j.spec_json = "{\"name\":\"x\u00e9\",\"roles\":{\"w\":{\"n\":1,\"e\":[true,null]}}}";
	t[0].pid = 12;
	t[0].host = "127.0.0.1";
	t[0].port = 40000;
	t[0].started_at = T0;
	t[1].exit_code = 1;
	t[1].reason = "exited 1";
	t[1].peak_memory_bytes = 1LL << 40;
	t[1].cpu_time_ms = 7;
	t[1].ended_at = T0 + 999;
	t[2].signal = 15;
	t[2].oom_killed = true;
	t[2].gpus = "0,1";
	expect_written_as_tree(&j, &place, t, 3);
	j.spec_json = "not json";
	j.framework = NULL;
	j.reason = NULL;
	place.queue[0] = '\0';
	expect_written_as_tree(&j, &place, t, 1);
	j.spec_json = NULL;
	expect_written_as_tree(&j, &place, t, 1);
	/* a task whose reason is not UTF-8 is left out of both */
	t[1].reason = "\xc3(";
	expect_written_as_tree(&j, &place, t, 3);
	t[0].reason = "\xff";
	t[2].host = "\xe2\x82";
	expect_written_as_tree(&j, &place, t, 3);
}

/* The spec the job manager stores, job_spec_write_json()'s, is copied as
 * it is, and that is what the tree shows of it. */
static void test_job_written_with_its_stored_spec(void **state)
{
	static const char spec_text[] =
	    "{\"name\":\"train\",\"roles\":{\"worker\":{\"instances\":3,\"memory\":\"2g\","
	    "\"vcores\":2,\"command\":\"echo \\\"hi\\\"\"}}}";
	struct weir_error err = {0};
	json_t *sj = json_loads(spec_text, 0, NULL);
	struct job_spec *spec = job_spec_from_json(sj, &err);
	struct strbuf stored = STRBUF_INIT;
	struct job_row j = job();
	struct job_place place = {0};

	(void)state;
	if (!spec)
		fail_msg("%s", err.msg);
	assert_int_equal(job_spec_write_json(&stored, spec), 0);
	j.spec_json = stored.buf;
	expect_written_as_tree(&j, &place, NULL, 0);
	job_spec_destroy(spec);
	json_decref(sj);
	strbuf_release(&stored);
}

/* The first n of e written as text: what jansson's dump of their tree is. */
static void expect_events_as_tree(struct strbuf *sb, const struct event_row *e, size_t n)
{
	json_t *tree = job_view_events(e, n);
	char *text = json_dumps(tree, JSON_COMPACT);

	strbuf_reset(sb);
	assert_int_equal(job_view_events_write(sb, e, n), 0);
	assert_string_equal(sb->buf, text);
	free(text);
	json_decref(tree);
}

static void test_events_written_as_the_tree_dumps(void **state)
{
	struct event_row e[3] = {
	    {.id = 1, .job_id = 7, .time = T0, .kind = "submitted", .message = "train: 2 tasks"},
	    {.id = 2, .job_id = 7, .time = 0, .kind = "kill", .message = "a \"b\"\n\xc3\xa9"},
	    {.id = 3, .job_id = 7, .time = T0 + 1, .kind = "state", .message = ""},
	};
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	for (size_t n = 0; n <= 3; n++)
		expect_events_as_tree(&sb, e, n);
	/* not UTF-8: left out, as the tree leaves out what jansson refuses */
	e[0].message = "\xff";
	for (size_t n = 1; n <= 3; n++)
		expect_events_as_tree(&sb, e, n);
	strbuf_release(&sb);
}

static void test_release(void **state)
{
	struct job_view *v = calloc(2, sizeof *v);

	(void)state;
	assert_non_null(v);
	v[0].row.name = strdup("a");
	v[0].row.spec_json = strdup("{}");
	v[0].tasks = calloc(1, sizeof *v[0].tasks);
	v[0].tasks[0].role = strdup("worker");
	v[0].n_tasks = 1;
	v[1].row.reason = strdup("x");
	job_view_release(&v[1]);
	assert_null(v[1].row.reason);
	job_views_free(v, 2); /* frees v[0]'s strings and tasks (the sanitizers see) */
	job_views_free(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_task_not_started),
	    cmocka_unit_test(test_task_ended),
	    cmocka_unit_test(test_task_null_strings),
	    cmocka_unit_test(test_job_full),
	    cmocka_unit_test(test_job_full_local_bad_spec),
	    cmocka_unit_test(test_job_brief),
	    cmocka_unit_test(test_job_brief_no_spec_no_tasks),
	    cmocka_unit_test(test_events),
	    cmocka_unit_test(test_job_written_as_the_tree_dumps),
	    cmocka_unit_test(test_job_written_with_its_stored_spec),
	    cmocka_unit_test(test_events_written_as_the_tree_dumps),
	    cmocka_unit_test(test_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
