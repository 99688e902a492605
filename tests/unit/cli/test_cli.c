/* test_cli.c: the CLI's pure helpers: formatting for people, flag
 * splitting (weir's own flags beside TonY's), status-change detection, the
 * prefixed line writer and tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/cli_common.h"
#include "cli/cli_logs.h"
#include "cli/cli_submit.h"
#include "cli/cli_watch.h"

static void test_format_duration(void **state)
{
	char b[32];
	(void)state;
	assert_string_equal(cli_format_duration(-1, b, sizeof b), "-");
	assert_string_equal(cli_format_duration(0, b, sizeof b), "0ms");
	assert_string_equal(cli_format_duration(350, b, sizeof b), "350ms");
	assert_string_equal(cli_format_duration(1000, b, sizeof b), "1.0s");
	assert_string_equal(cli_format_duration(29150, b, sizeof b), "29.1s");
	assert_string_equal(cli_format_duration(59999, b, sizeof b), "59.9s");
	assert_string_equal(cli_format_duration(60000, b, sizeof b), "1m00s");
	assert_string_equal(cli_format_duration(184000, b, sizeof b), "3m04s");
	assert_string_equal(cli_format_duration(3599999, b, sizeof b), "59m59s");
	assert_string_equal(cli_format_duration(7380000, b, sizeof b), "2h03m");
	assert_string_equal(cli_format_duration(93600000, b, sizeof b), "1d02h");
}

static void test_format_bytes(void **state)
{
	char b[32];
	(void)state;
	assert_string_equal(cli_format_bytes(-1, b, sizeof b), "-");
	assert_string_equal(cli_format_bytes(0, b, sizeof b), "0 B");
	assert_string_equal(cli_format_bytes(1023, b, sizeof b), "1023 B");
	assert_string_equal(cli_format_bytes(1024, b, sizeof b), "1.0 KiB");
	assert_string_equal(cli_format_bytes(1536, b, sizeof b), "1.5 KiB");
	assert_string_equal(cli_format_bytes(12 * 1024 + 700, b, sizeof b), "13 KiB");
	assert_string_equal(cli_format_bytes(327155712, b, sizeof b), "312 MiB");
	/* just under a unit moves up instead of printing "1024 MiB" */
	assert_string_equal(cli_format_bytes(1024LL * 1024 * 1024 - 1, b, sizeof b), "1.0 GiB");
	assert_string_equal(cli_format_bytes(4LL << 30, b, sizeof b), "4.0 GiB");
	assert_string_equal(cli_format_bytes(3LL << 40, b, sizeof b), "3.0 TiB");
}

static void test_format_times(void **state)
{
	char b[32];
	json_t *task = json_pack("{s:s, s:s}", "started_at", "2026-11-30T12:00:00.000Z",
				 "ended_at", "2026-11-30T12:00:02.500Z");
	(void)state;
	assert_int_equal(cli_object_duration_ms(task, 0), 2500);
	json_object_del(task, "ended_at");
	assert_int_equal(cli_object_duration_ms(task, cli_json_time(task, "started_at") + 700),
			 700);
	json_object_set_new(task, "started_at", json_null());
	assert_int_equal(cli_object_duration_ms(task, 0), -1);
	json_decref(task);
	/* local time: only the shape is fixed */
	assert_int_equal(strlen(cli_format_clock(0, b, sizeof b)), 8);
	assert_int_equal(strlen(cli_format_datetime(0, b, sizeof b)), 19);
	assert_string_equal(cli_format_datetime(-1, b, sizeof b), "-");
}

static void test_flag_value(void **state)
{
	char *argv[] = {"jobs", "--limit=5", "--state", "running", "--limiter", "x", "--home"};
	int argc = 7, i;
	const char *v = NULL;
	struct weir_error err = {0};
	(void)state;

	i = 1;
	assert_int_equal(cli_flag_value(argc, argv, &i, "--limit", &v, &err), 1);
	assert_string_equal(v, "5");
	assert_int_equal(i, 1);
	i = 2;
	assert_int_equal(cli_flag_value(argc, argv, &i, "--limit", &v, &err), 0);
	assert_int_equal(cli_flag_value(argc, argv, &i, "--state", &v, &err), 1);
	assert_string_equal(v, "running");
	assert_int_equal(i, 3);
	i = 4; /* a longer flag sharing the prefix is not this one */
	assert_int_equal(cli_flag_value(argc, argv, &i, "--limit", &v, &err), 0);
	i = 6;
	struct cli_globals g = {0};
	assert_int_equal(cli_flag_global(argc, argv, &i, &g, &err), -1);
	assert_non_null(strstr(err.msg, "--home"));
	assert_true(cli_flag_is("-f", "--follow", "-f"));
	assert_false(cli_flag_is("--f", "--follow", "-f"));
	assert_true(cli_flag_is_help("-h"));
}

static void test_parse_int(void **state)
{
	long long v;
	struct weir_error err = {0};
	(void)state;
	assert_int_equal(cli_parse_int("42", "--limit", 1, 100, &v, &err), 0);
	assert_int_equal(v, 42);
	assert_int_equal(cli_parse_int("-3", "--priority", -10, 10, &v, &err), 0);
	assert_int_equal(v, -3);
	assert_int_equal(cli_parse_int("0", "--limit", 1, 100, &v, &err), -1);
	assert_non_null(strstr(err.msg, "--limit"));
	assert_int_equal(cli_parse_int("4x", "--limit", 1, 100, &v, &err), -1);
	assert_int_equal(cli_parse_int("", "--limit", 1, 100, &v, &err), -1);
	assert_int_equal(cli_parse_int(" 4", "--limit", 1, 100, &v, &err), -1);
	assert_int_equal(cli_parse_int("99999999999999999999", "id", 1, 100, &v, &err), -1);
}

static int split(int argc, char **argv, struct cli_submit_args *a, struct weir_error *err)
{
	static char *slots[64];
	memset(a, 0, sizeof *a);
	a->tony_argv = slots;
	return cli_submit_split(argc, argv, a, err);
}

static void test_submit_split_native(void **state)
{
	char *argv[] = {"submit", "--detach", "--name", "n1", "job.yaml", "--priority=3",
			"--server", "http://h:1"};
	struct cli_submit_args a;
	struct weir_error err = {0};
	(void)state;
	assert_int_equal(split(8, argv, &a, &err), 0);
	assert_true(a.detach);
	assert_string_equal(a.name, "n1");
	assert_string_equal(a.priority, "3");
	assert_string_equal(a.spec_file, "job.yaml");
	assert_string_equal(a.globals.server, "http://h:1");
	assert_int_equal(a.tony_argc, 0);
}

static void test_submit_split_tony(void **state)
{
	/* weir's flags mixed in; a TonY value that starts with dashes stays a value */
	char *argv[] = {"submit",        "--conf_file=tony.xml", "--detach",
			"--task_params", "--epochs 2",           "--name",
			"x",             "--conf",               "tony.worker.instances=3",
			"--executes",    "train.py"};
	struct cli_submit_args a;
	struct weir_error err = {0};
	(void)state;
	assert_int_equal(split(11, argv, &a, &err), 0);
	assert_true(a.detach);
	assert_string_equal(a.name, "x");
	assert_null(a.spec_file);
	assert_int_equal(a.tony_argc, 7);
	assert_string_equal(a.tony_argv[0], "--conf_file=tony.xml");
	assert_string_equal(a.tony_argv[1], "--task_params");
	assert_string_equal(a.tony_argv[2], "--epochs 2");
	assert_string_equal(a.tony_argv[3], "--conf");
	assert_string_equal(a.tony_argv[4], "tony.worker.instances=3");
	assert_string_equal(a.tony_argv[6], "train.py");
	assert_null(a.tony_argv[7]);
}

static void test_submit_split_errors(void **state)
{
	char *both[] = {"submit", "job.yaml", "--conf_file", "tony.xml"};
	char *two[] = {"submit", "a.yaml", "b.yaml"};
	char *none[] = {"submit", "--detach"};
	char *unknown[] = {"submit", "--conf_file", "t.xml", "--no_such_flag", "x"};
	char *novalue[] = {"submit", "job.yaml", "--name"};
	char *help[] = {"submit", "--help"};
	struct cli_submit_args a;
	struct weir_error err = {0};
	(void)state;
	assert_int_equal(split(4, both, &a, &err), -1);
	assert_non_null(strstr(err.msg, "not both"));
	assert_int_equal(split(3, two, &a, &err), -1);
	assert_non_null(strstr(err.msg, "b.yaml"));
	assert_int_equal(split(2, none, &a, &err), -1);
	assert_int_equal(split(5, unknown, &a, &err), -1);
	assert_non_null(strstr(err.msg, "--no_such_flag"));
	assert_int_equal(split(3, novalue, &a, &err), -1);
	assert_non_null(strstr(err.msg, "--name"));
	assert_int_equal(split(2, help, &a, &err), 0);
	assert_true(a.help);
}

struct lines {
	char text[16][256];
	int n;
};

static void collect(const char *line, void *arg)
{
	struct lines *l = arg;
	if (l->n < 16)
		snprintf(l->text[l->n++], sizeof l->text[0], "%s", line);
}

static int update(struct cli_watch *w, const char *json, struct lines *l)
{
	json_error_t jerr;
	json_t *job = json_loads(json, 0, &jerr);
	assert_non_null(job);
	l->n = 0;
	int n = cli_watch_update(w, job, collect, l);
	json_decref(job);
	return n;
}

static void test_watch_changes_only(void **state)
{
	struct cli_watch w;
	struct lines l;
	(void)state;

	cli_watch_init(&w, 12);
	assert_int_equal(update(&w, "{\"state\":\"queued\",\"reason\":\"waiting: 4g memory\","
				    "\"attempt\":1,\"tasks\":[]}",
				&l),
			 1);
	assert_string_equal(l.text[0], "job 12 waiting: 4g memory");
	/* the same snapshot again: nothing (no flood) */
	assert_int_equal(update(&w, "{\"state\":\"queued\",\"reason\":\"waiting: 4g memory\","
				    "\"attempt\":1,\"tasks\":[]}",
				&l),
			 0);
	assert_int_equal(update(&w, "{\"state\":\"starting\",\"reason\":\"\",\"attempt\":1,"
				    "\"tasks\":[{\"role\":\"worker\",\"index\":0,\"state\":"
				    "\"pending\"},{\"role\":\"worker\",\"index\":1,\"state\":"
				    "\"pending\"}]}",
				&l),
			 2);
	assert_string_equal(l.text[0], "worker:0 pending");
	assert_string_equal(l.text[1], "worker:1 pending");
	assert_int_equal(update(&w, "{\"state\":\"running\",\"attempt\":1,\"tasks\":["
				    "{\"role\":\"worker\",\"index\":0,\"state\":\"running\"},"
				    "{\"role\":\"worker\",\"index\":1,\"state\":\"pending\"}]}",
				&l),
			 1);
	assert_string_equal(l.text[0], "worker:0 running");
	assert_int_equal(update(&w, "{\"state\":\"failed\",\"reason\":\"worker:1 exited 1\","
				    "\"attempt\":1,\"tasks\":["
				    "{\"role\":\"worker\",\"index\":0,\"state\":\"killed\","
				    "\"exit_code\":null,\"signal\":15},"
				    "{\"role\":\"worker\",\"index\":1,\"state\":\"failed\","
				    "\"exit_code\":1}]}",
				&l),
			 2);
	/* the final job state is the summary's business, not a change line */
	assert_string_equal(l.text[0], "worker:0 killed (signal 15)");
	assert_string_equal(l.text[1], "worker:1 failed (exit 1)");
	cli_watch_release(&w);
}

/* Two changes between two looks: the events say what the snapshots miss. */
static void test_watch_states_from_events(void **state)
{
	struct cli_watch w;
	struct lines l;
	(void)state;
	json_t *ev = json_loads(
	    "[{\"kind\":\"submitted\",\"message\":\"job: 1 tasks\"},"
	    "{\"kind\":\"state\",\"message\":\"starting: attempt 1, 1 tasks\"},"
	    "{\"kind\":\"task\",\"message\":\"worker:0 registered at h:1\"},"
	    "{\"kind\":\"task\",\"message\":\"worker:10 running (pid 8)\"},"
	    "{\"kind\":\"task\",\"message\":\"worker:0 running (pid 9)\"},"
	    "{\"kind\":\"task\",\"message\":\"worker:0 succeeded\"},"
	    "{\"kind\":\"state\",\"message\":\"queued (attempt 2)\"},"
	    "{\"kind\":\"state\",\"message\":\"starting: attempt 2, 1 tasks\"}]",
	    0, NULL);
	assert_non_null(ev);

	cli_watch_init(&w, 3);
	cli_watch_set_events(&w, ev);
	assert_int_equal(update(&w, "{\"state\":\"running\",\"attempt\":1,\"tasks\":[{\"role\":"
				    "\"worker\",\"index\":0,\"state\":\"starting\"}]}",
				&l),
			 2);
	assert_string_equal(l.text[0], "worker:0 pending");
	assert_string_equal(l.text[1], "worker:0 starting");
	/* starting, then succeeded at the next look: running is said between */
	assert_int_equal(update(&w, "{\"state\":\"succeeded\",\"attempt\":1,\"tasks\":[{\"role\":"
				    "\"worker\",\"index\":0,\"state\":\"succeeded\","
				    "\"exit_code\":0}]}",
				&l),
			 2);
	assert_string_equal(l.text[0], "worker:0 running");
	assert_string_equal(l.text[1], "worker:0 succeeded");
	/* once each: the same look again says nothing */
	assert_int_equal(update(&w, "{\"state\":\"succeeded\",\"attempt\":1,\"tasks\":[{\"role\":"
				    "\"worker\",\"index\":0,\"state\":\"succeeded\"}]}",
				&l),
			 0);
	/* attempt 2's events show nothing of worker:0 yet: no state is made up
	 * from attempt 1's, only pending (the attempt has started) */
	assert_int_equal(update(&w, "{\"state\":\"running\",\"attempt\":2,\"tasks\":[{\"role\":"
				    "\"worker\",\"index\":0,\"state\":\"failed\","
				    "\"exit_code\":1}]}",
				&l),
			 3);
	assert_string_equal(l.text[0], "job 3 restarted: attempt 2");
	assert_string_equal(l.text[1], "worker:0 pending");
	assert_string_equal(l.text[2], "worker:0 failed (exit 1)");
	cli_watch_release(&w);
	json_decref(ev);
}

static void test_watch_restart_and_oom(void **state)
{
	struct cli_watch w, w2;
	struct lines l;
	(void)state;

	cli_watch_init(&w, 7);
	update(&w, "{\"state\":\"running\",\"attempt\":1,\"tasks\":[{\"role\":\"chief\","
		   "\"index\":0,\"state\":\"running\"}]}",
	       &l);
	assert_int_equal(update(&w, "{\"state\":\"running\",\"attempt\":1,\"tasks\":[{\"role\":"
				    "\"chief\",\"index\":0,\"state\":\"failed\",\"exit_code\":"
				    "137,\"reason\":\"OOMKilled\"}]}",
				&l),
			 1);
	assert_string_equal(l.text[0], "chief:0 failed (exit 137, OOMKilled)");
	/* a new attempt: said once, and its tasks start over */
	assert_int_equal(update(&w, "{\"state\":\"starting\",\"reason\":\"chief:0 OOMKilled\","
				    "\"attempt\":2,\"tasks\":[{\"role\":\"chief\",\"index\":0,"
				    "\"state\":\"running\"}]}",
				&l),
			 2);
	assert_string_equal(l.text[0], "job 7 restarted: attempt 2: chief:0 OOMKilled");
	assert_string_equal(l.text[1], "chief:0 running");
	/* how the previous attempt ended, reported late, is said once */
	json_t *prev = json_loads("[{\"role\":\"chief\",\"index\":0,\"state\":\"failed\","
				  "\"exit_code\":137}]",
				  0, NULL);
	l.n = 0;
	cli_watch_init(&w2, 7);
	assert_int_equal(cli_watch_tasks(&w2, prev, collect, &l), 1);
	assert_string_equal(l.text[0], "chief:0 failed (exit 137)");
	assert_int_equal(cli_watch_tasks(&w2, prev, collect, &l), 0);
	cli_watch_release(&w2);
	json_decref(prev);
	/* the reason was said with the restart: not again */
	assert_int_equal(update(&w, "{\"state\":\"running\",\"reason\":\"chief:0 OOMKilled\","
				    "\"attempt\":2,\"tasks\":[{\"role\":\"chief\",\"index\":0,"
				    "\"state\":\"running\"}]}",
				&l),
			 0);
	cli_watch_release(&w);
}

static void test_watch_task_text(void **state)
{
	char b[128];
	json_t *t = json_pack("{s:s, s:i}", "state", "succeeded", "exit_code", 0);
	(void)state;
	assert_string_equal(cli_watch_task_text(t, b, sizeof b), "succeeded");
	json_object_set_new(t, "state", json_string("lost"));
	json_object_set_new(t, "exit_code", json_null());
	json_object_set_new(t, "reason", json_string("launcher vanished"));
	assert_string_equal(cli_watch_task_text(t, b, sizeof b), "lost (launcher vanished)");
	/* reasons that repeat the state or the exit code are trimmed */
	json_object_set_new(t, "state", json_string("failed"));
	json_object_set_new(t, "exit_code", json_integer(3));
	json_object_set_new(t, "reason", json_string("exited 3"));
	assert_string_equal(cli_watch_task_text(t, b, sizeof b), "failed (exit 3)");
	assert_string_equal(cli_watch_task_reason(t, b, sizeof b), "");
	json_object_set_new(t, "state", json_string("killed"));
	json_object_set_new(t, "exit_code", json_integer(143));
	json_object_set_new(t, "reason", json_string("killed (launcher got SIGTERM)"));
	assert_string_equal(cli_watch_task_text(t, b, sizeof b),
			    "killed (exit 143, launcher got SIGTERM)");
	json_decref(t);
}

static void test_line_writer(void **state)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	struct cli_line_writer w;
	(void)state;

	assert_non_null(out);
	cli_line_writer_init(&w, "worker:1| ", out);
	cli_line_writer_add(&w, "ab", 2);
	cli_line_writer_add(&w, "c\nde", 4);
	cli_line_writer_add(&w, "f\n\ng", 4);
	cli_line_writer_finish(&w);
	cli_line_writer_release(&w);
	cli_line_writer_init(&w, NULL, out);
	cli_line_writer_add(&w, "raw", 3);
	cli_line_writer_finish(&w);
	cli_line_writer_release(&w);
	fclose(out);
	assert_string_equal(buf, "worker:1| abc\nworker:1| def\nworker:1| \nworker:1| g\nraw");
	free(buf);
}

static void test_table(void **state)
{
	static const char *const header[] = {"ID", "NAME", "REASON"};
	const char *r1[] = {"1", "a-long-name", ""};
	const char *r2[] = {"12", NULL, "waiting: 4g memory"};
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	struct cli_table t;
	(void)state;

	assert_int_equal(cli_table_init(&t, 3, header), 0);
	assert_int_equal(cli_table_add(&t, r1), 0);
	assert_int_equal(cli_table_add(&t, r2), 0);
	cli_table_print(&t, out);
	cli_table_release(&t);
	fclose(out);
	assert_string_equal(buf, "ID  NAME         REASON\n"
				 "1   a-long-name\n"
				 "12  -            waiting: 4g memory\n");
	free(buf);
}

static void test_ctx_resolution(void **state)
{
	struct cli_ctx ctx;
	struct cli_globals g = {.server = "127.0.0.1:9", .home = NULL};
	char dir[] = "/tmp/weir-cli-test-XXXXXX";
	char path[128];
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/token", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("s3cret\n", f);
	fclose(f);
	unsetenv("WEIR_TOKEN");
	setenv("WEIR_HOME", dir, 1);
	assert_int_equal(cli_ctx_init(&ctx, &g, NULL), 0);
	assert_string_equal(ctx.server_url, "http://127.0.0.1:9");
	assert_string_equal(ctx.home, dir);
	assert_string_equal(ctx.token, "s3cret");
	cli_ctx_release(&ctx);
	setenv("WEIR_TOKEN", "from-env", 1);
	setenv("WEIR_SERVER", "http://h:2", 1);
	g.server = NULL;
	assert_int_equal(cli_ctx_init(&ctx, &g, NULL), 0);
	assert_string_equal(ctx.server_url, "http://h:2");
	assert_string_equal(ctx.token, "from-env");
	cli_ctx_release(&ctx);
	unsetenv("WEIR_TOKEN");
	unsetenv("WEIR_SERVER");
	unsetenv("WEIR_HOME");
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_format_bytes),
		cmocka_unit_test(test_format_times),
		cmocka_unit_test(test_flag_value),
		cmocka_unit_test(test_parse_int),
		cmocka_unit_test(test_submit_split_native),
		cmocka_unit_test(test_submit_split_tony),
		cmocka_unit_test(test_submit_split_errors),
		cmocka_unit_test(test_watch_changes_only),
		cmocka_unit_test(test_watch_restart_and_oom),
	    cmocka_unit_test(test_watch_states_from_events),
		cmocka_unit_test(test_watch_task_text),
		cmocka_unit_test(test_line_writer),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_ctx_resolution),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
