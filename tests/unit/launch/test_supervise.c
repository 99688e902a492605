/* test_supervise.c: the user program run and watched to its end: exit codes,
 * signals, the execution timeout, the "started" retries, the log pipe, and
 * nothing it started outliving it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/supervise.h"
#include "lib/clock.h"

extern char **environ;

struct calls {
	int started;
	pid_t pid;
	int retries; /* how many tries answer "again in 20 ms" */
	char log[256];
	size_t log_len;
	int log_r;
};

static int64_t on_started(pid_t pid, void *arg)
{
	struct calls *c = arg;

	if (c->started++ == 0)
		c->pid = pid;
	else
		assert_int_equal(pid, c->pid);
	return c->started <= c->retries ? 20 : 0;
}

static bool on_log(void *arg)
{
	struct calls *c = arg;

	for (;;) {
		ssize_t n = read(c->log_r, c->log + c->log_len, sizeof c->log - 1 - c->log_len);
		if (n > 0) {
			c->log_len += (size_t)n;
			c->log[c->log_len] = '\0';
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			close(c->log_r);
			c->log_r = -1;
			return false;
		}
		return true;
	}
}

static void run(const char *command, int64_t timeout_s, struct calls *c, int *log_w,
                struct supervise_outcome *o)
{
	struct supervise_spec spec = {
	    .command = command,
	    .workdir = ".",
	    .envp = environ,
	    .execution_timeout_s = timeout_s,
	    .kill_grace_ms = 200,
	    .log_w = log_w,
	    .log_r = log_w ? c->log_r : -1,
	    .drain_log = on_log,
	    .report_started = on_started,
	    .arg = c,
	};
	memset(o, 0, sizeof *o);
	assert_int_equal(supervise_run(&spec, o), 0);
}

static void exit_code_and_reason(void **state)
{
	struct calls c = {0};
	struct supervise_outcome o;
	(void)state;

	run("exit 3", 0, &c, NULL, &o);
	assert_int_equal(o.exit_code, 3);
	assert_int_equal(o.signal, 0);
	assert_false(o.oom_killed);
	assert_string_equal(o.reason, "exited 3");
	assert_int_equal(c.started, 1);
	assert_true(c.pid > 0);

	memset(&c, 0, sizeof c);
	run("true", 0, &c, NULL, &o);
	assert_int_equal(o.exit_code, 0);
	assert_string_equal(o.reason, "");
}

static void killed_by_a_signal(void **state)
{
	struct calls c = {0};
	struct supervise_outcome o;
	(void)state;

	run("kill -KILL $$", 0, &c, NULL, &o);
	assert_int_equal(o.signal, 9);
	assert_int_equal(o.exit_code, 137);
	assert_string_equal(o.reason, "killed by SIGKILL");
}

static void execution_timeout(void **state)
{
	struct calls c = {0};
	struct supervise_outcome o;
	int64_t t0 = clock_mono_ms();
	(void)state;

	run("sleep 30", 1, &c, NULL, &o);
	assert_true(clock_mono_ms() - t0 < 10000);
	assert_int_equal(o.exit_code, 124);
	assert_int_equal(o.signal, 0);
	assert_string_equal(o.reason, "execution timeout after 1s");
}

/* A program that ignores SIGTERM gets SIGKILL after the grace. */
static void timeout_then_kill(void **state)
{
	struct calls c = {0};
	struct supervise_outcome o;
	(void)state;

	run("trap '' TERM; while :; do sleep 0.05; done", 1, &c, NULL, &o);
	assert_int_equal(o.exit_code, 124);
	assert_string_equal(o.reason, "execution timeout after 1s");
}

static void started_retried_until_settled(void **state)
{
	struct calls c = {.retries = 3};
	struct supervise_outcome o;
	(void)state;

	run("sleep 1", 0, &c, NULL, &o);
	assert_int_equal(o.exit_code, 0);
	assert_int_equal(c.started, 4);
}

static void output_through_the_log_pipe(void **state)
{
	struct calls c = {0};
	struct supervise_outcome o;
	int p[2];
	(void)state;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	c.log_r = p[0];
	int log_w = p[1];
	run("echo out; echo err >&2", 0, &c, &log_w, &o);
	assert_int_equal(log_w, -1); /* closed once the program held it */
	assert_int_equal(c.log_r, -1); /* drained to its end */
	assert_string_equal(c.log, "out\nerr\n");
}

/* A signal the launcher ignores (the one disposition exec keeps) is the
 * default again in the program: its SigIgn mask is empty of it. */
static void ignored_signals_come_back_to_default(void **state)
{
	struct calls c = {0};
	struct supervise_outcome o;
	int p[2];
	(void)state;

	signal(SIGUSR1, SIG_IGN);
	supervise_note_ignored();
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	c.log_r = p[0];
	int log_w = p[1];
	run("grep SigIgn /proc/self/status", 0, &c, &log_w, &o);
	signal(SIGUSR1, SIG_DFL);
	supervise_note_ignored();
	assert_int_equal(o.exit_code, 0);
	const char *mask = strstr(c.log, "SigIgn:");
	assert_non_null(mask);
	unsigned long long bits = strtoull(mask + strlen("SigIgn:"), NULL, 16);
	assert_int_equal(bits & (1ULL << (SIGUSR1 - 1)), 0);
}

/* Nothing the program started outlives it: a child in its group, and one
 * that left the group with setsid (caught as an orphan of the subreaper). */
static void nothing_outlives_the_program(void **state)
{
	struct calls c = {0};
	struct supervise_outcome o;
	int64_t t0 = clock_mono_ms();
	(void)state;

	run("sleep 30 & setsid sleep 30 & exit 0", 0, &c, NULL, &o);
	assert_int_equal(o.exit_code, 0);
	assert_true(clock_mono_ms() - t0 < 10000);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* no child left */
	assert_int_equal(errno, ECHILD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(exit_code_and_reason),
	    cmocka_unit_test(killed_by_a_signal),
	    cmocka_unit_test(execution_timeout),
	    cmocka_unit_test(timeout_then_kill),
	    cmocka_unit_test(started_retried_until_settled),
	    cmocka_unit_test(output_through_the_log_pipe),
	    cmocka_unit_test(ignored_signals_come_back_to_default),
	    cmocka_unit_test(nothing_outlives_the_program),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
