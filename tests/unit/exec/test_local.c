/* test_local.c: the local executor against real processes.  The "launcher"
 * is a shell script the test writes, so the arguments, environment and log
 * redirection the executor sets up can be read back; stopping is tested
 * with a process that obeys SIGTERM and one that ignores it (the last
 * resort SIGKILLs its session). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/launch_secret.h"
#include "exec/local.h"
#include "lib/clock.h"
#include "lib/fs.h"

static char dir[] = "/tmp/weir-local-XXXXXX";
static char script[128];

struct ended {
	int count;
	int pid;
	int64_t status;
	int signal;
	char role[32];
};

static void on_exit_cb(void *arg, int64_t job_id, const char *role, int index, int attempt,
                       int launcher_pid, int64_t exit_status, int term_signal)
{
	struct ended *e = arg;
	(void)job_id;
	(void)index;
	(void)attempt;
	e->count++;
	e->pid = launcher_pid;
	e->status = exit_status;
	e->signal = term_signal;
	snprintf(e->role, sizeof e->role, "%s", role);
}

static int setup(void **state)
{
	FILE *f;

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(script, sizeof script, "%s/fake-launcher", dir);
	f = fopen(script, "w");
	if (!f)
		return -1;
	/* $5 is the role */
	fputs("#!/bin/sh\n"
	      "echo \"args: $*\"\n"
	      "echo \"env: $WEIR_SERVER [$WEIR_TOKEN] $WEIR_LAUNCH_SECRET\"\n"
	      "case \"$5\" in\n"
	      "sleepy) exec sleep 30 ;;\n"
	      "stubborn) trap '' TERM; echo trap-set; sleep 30; exit 0 ;;\n"
	      "esac\n"
	      "exit 3\n",
	      f);
	fclose(f);
	chmod(script, 0755);
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];
	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void run_until(uv_loop_t *loop, struct ended *e, int count, int64_t max_ms)
{
	int64_t deadline = clock_mono_ms() + max_ms;
	while (e->count < count && clock_mono_ms() < deadline)
		uv_run(loop, UV_RUN_NOWAIT), usleep(10000);
}

/* Waits until the task's log holds `line` (the fake launcher writes it to
 * its stdout, the log); fails the test after max_ms. */
static void wait_log_line(const char *log, const char *line, int64_t max_ms)
{
	int64_t deadline = clock_mono_ms() + max_ms;
	for (;;) {
		struct weir_error err = {0};
		char *text = fs_read_file(log, NULL, &err);
		bool found = text && strstr(text, line);
		free(text);
		if (found)
			return;
		if (clock_mono_ms() >= deadline)
			fail_msg("no \"%s\" in %s after %lld ms", line, log, (long long)max_ms);
		usleep(10000);
	}
}

static struct executor *make(uv_loop_t *loop, struct ended *e, int grace)
{
	struct weir_error err = {0};
	struct executor *ex = local_executor_create(loop, script, "http://127.0.0.1:1", "tok",
	                                            grace, on_exit_cb, e, &err);
	if (!ex)
		fail_msg("%s", err.msg);
	return ex;
}

static void finish(uv_loop_t *loop, struct executor *ex)
{
	ex->ops->destroy(ex);
	uv_run(loop, UV_RUN_NOWAIT);
	uv_run(loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(loop), 0);
}

static void test_start_args_env_log(void **state)
{
	uv_loop_t loop;
	struct ended e = {0};
	struct weir_error err = {0};
	char log[256];
	struct executor_task t = {.job_id = 7, .role = "quick", .index = 2, .attempt = 3};
	int pid = 0;
	char *text;
	char secret[LAUNCH_SECRET_HEX + 1], want[128];

	(void)state;
	snprintf(log, sizeof log, "%s/jobs/7/logs/quick-2.3.log", dir);
	t.log_path = log;
	uv_loop_init(&loop);
	struct executor *ex = make(&loop, &e, 5);
	assert_string_equal(ex->ops->name, "local");
	assert_int_equal(ex->ops->start_task(ex, &t, &pid, &err), 0);
	assert_true(pid > 1);
	run_until(&loop, &e, 1, 5000);
	assert_int_equal(e.count, 1);
	assert_int_equal(e.pid, pid);
	assert_int_equal(e.status, 3);
	assert_int_equal(e.signal, 0);
	assert_string_equal(e.role, "quick");
	text = fs_read_file(log, NULL, &err);
	assert_non_null(text);
	assert_non_null(strstr(
	    text, "args: launch --job 7 --role quick --index 2 --attempt 3 --host 127.0.0.1"));
	/* no token: the task's launch secret (exec/launch_secret.h) */
	launch_secret_task("tok", 7, "quick", 2, 3, secret);
	snprintf(want, sizeof want, "env: http://127.0.0.1:1 [] %s\n", secret);
	assert_non_null(strstr(text, want));
	free(text);
	t.launcher_pid = pid;
	assert_false(ex->ops->is_alive(ex, &t));
	finish(&loop, ex);
}

static void test_stop_with_sigterm(void **state)
{
	uv_loop_t loop;
	struct ended e = {0};
	struct weir_error err = {0};
	char log[256];
	struct executor_task t = {.job_id = 8, .role = "sleepy", .index = 0, .attempt = 1};
	int pid = 0;

	(void)state;
	snprintf(log, sizeof log, "%s/sleepy.log", dir);
	t.log_path = log;
	uv_loop_init(&loop);
	struct executor *ex = make(&loop, &e, 5);
	assert_int_equal(ex->ops->start_task(ex, &t, &pid, &err), 0);
	t.launcher_pid = pid;
	assert_true(ex->ops->is_alive(ex, &t));
	/* detached: a session of its own, set before the script runs (its
	 * first line in the log says it does) */
	wait_log_line(log, "args: ", 5000);
	assert_int_equal(getsid(pid), pid);
	assert_int_equal(ex->ops->stop_task(ex, &t, SIGTERM, &err), 0);
	run_until(&loop, &e, 1, 5000);
	assert_int_equal(e.count, 1);
	assert_int_equal(e.signal, SIGTERM);
	assert_false(ex->ops->is_alive(ex, &t));
	finish(&loop, ex);
}

static void test_last_resort_kill(void **state)
{
	uv_loop_t loop;
	struct ended e = {0};
	struct weir_error err = {0};
	char log[256];
	struct executor_task t = {.job_id = 9, .role = "stubborn", .index = 0, .attempt = 1};
	int pid = 0;
	int64_t t0;

	(void)state;
	snprintf(log, sizeof log, "%s/stubborn.log", dir);
	t.log_path = log;
	uv_loop_init(&loop);
	/* grace 0: the SIGKILL comes 2 s after the SIGTERM */
	struct executor *ex = make(&loop, &e, 0);
	assert_int_equal(ex->ops->start_task(ex, &t, &pid, &err), 0);
	t.launcher_pid = pid;
	wait_log_line(log, "trap-set", 5000); /* the script says so once its trap is set */
	t0 = clock_mono_ms();
	assert_int_equal(ex->ops->stop_task(ex, &t, SIGTERM, &err), 0);
	run_until(&loop, &e, 1, 10000);
	assert_int_equal(e.count, 1);
	assert_int_equal(e.signal, SIGKILL);
	assert_true(clock_mono_ms() - t0 >= 1500);
	finish(&loop, ex);
}

static void test_start_failure(void **state)
{
	uv_loop_t loop;
	struct ended e = {0};
	struct weir_error err = {0};
	struct executor_task t = {.job_id = 1,
	                          .role = "quick",
	                          .index = 0,
	                          .attempt = 1,
	                          .log_path = "/proc/no/such/dir/x.log"};
	int pid = 0;

	(void)state;
	uv_loop_init(&loop);
	struct executor *ex = make(&loop, &e, 5);
	assert_int_equal(ex->ops->start_task(ex, &t, &pid, &err), -1);
	assert_true(strlen(err.msg) > 0);
	assert_int_equal(pid, 0);
	finish(&loop, ex);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_start_args_env_log),
	    cmocka_unit_test(test_stop_with_sigterm),
	    cmocka_unit_test(test_last_resort_kill),
	    cmocka_unit_test(test_start_failure),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
