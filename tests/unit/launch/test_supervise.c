/* test_supervise.c: the user program run and watched to its end: exit codes,
 * signals, the execution timeout, the "started" retries, the log pipe,
 * nothing it started outliving it, and the program found on PATH as a fresh
 * search would find it. */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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

static void run_env(const char *command, int64_t timeout_s, struct calls *c, int *log_w,
                    struct supervise_outcome *o, char **envp)
{
	struct supervise_spec spec = {
	    .command = command,
	    .workdir = ".",
	    .envp = envp,
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

static void run(const char *command, int64_t timeout_s, struct calls *c, int *log_w,
                struct supervise_outcome *o)
{
	run_env(command, timeout_s, c, log_w, o, environ);
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

/* An executable script DIR/NAME that prints WORD. */
static void put_prog(const char *dir, const char *name, const char *word)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\necho %s\n", word);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

/* `name` run directly on PATH=a:b, its output. */
static void run_on_path(const char *name, char **envp, struct calls *c, struct supervise_outcome *o)
{
	int p[2];

	memset(c, 0, sizeof *c);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	c->log_r = p[0];
	int log_w = p[1];
	run_env(name, 0, c, &log_w, o, envp);
	if (c->log_r >= 0)
		close(c->log_r);
}

/* What the last search found is remembered a short while, never blindly:
 * the program gone, a fresh search finds the other at once; a program put
 * earlier on PATH is found once the window (100 ms) is over; a name found
 * nowhere is the OS's words each time. */
static void program_found_as_a_fresh_search_would(void **state)
{
	char tmp[] = "/tmp/weir-test-path.XXXXXX", a[64], b[64], path[200], prog[96];
	struct calls c;
	struct supervise_outcome o;
	(void)state;

	assert_non_null(mkdtemp(tmp));
	snprintf(a, sizeof a, "%s/a", tmp);
	snprintf(b, sizeof b, "%s/b", tmp);
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	snprintf(path, sizeof path, "PATH=%s:%s:/usr/bin:/bin", a, b);
	char *envp[] = {path, NULL};

	put_prog(b, "weirprog", "from-b");
	run_on_path("weirprog", envp, &c, &o);
	assert_int_equal(o.exit_code, 0);
	assert_string_equal(c.log, "from-b\n");
	run_on_path("weirprog", envp, &c, &o); /* remembered */
	assert_string_equal(c.log, "from-b\n");
	/* gone from b, in a now: found at once */
	snprintf(prog, sizeof prog, "%s/weirprog", b);
	assert_int_equal(unlink(prog), 0);
	put_prog(a, "weirprog", "from-a");
	run_on_path("weirprog", envp, &c, &o);
	assert_int_equal(o.exit_code, 0);
	assert_string_equal(c.log, "from-a\n");
	/* b's again: a's, earlier on PATH, still */
	put_prog(b, "weirprog", "from-b");
	run_on_path("weirprog", envp, &c, &o);
	assert_string_equal(c.log, "from-a\n");
	/* a's not executable: b's at once */
	snprintf(prog, sizeof prog, "%s/weirprog", a);
	assert_int_equal(chmod(prog, 0644), 0);
	run_on_path("weirprog", envp, &c, &o);
	assert_string_equal(c.log, "from-b\n");
	/* a's executable again, after the window: a fresh search finds it */
	assert_int_equal(chmod(prog, 0755), 0);
	struct timespec ts = {0, 150 * 1000 * 1000};
	nanosleep(&ts, NULL);
	run_on_path("weirprog", envp, &c, &o);
	assert_string_equal(c.log, "from-a\n");
	/* nowhere */
	for (int i = 0; i < 2; i++) {
		run_on_path("weir-no-such-prog", envp, &c, &o);
		assert_int_equal(o.exit_code, 127);
		assert_string_equal(o.reason, "launch failed: cannot run weir-no-such-prog: No such "
		                              "file or directory");
	}
	unlink(prog);
	snprintf(prog, sizeof prog, "%s/weirprog", b);
	unlink(prog);
	rmdir(a);
	rmdir(b);
	rmdir(tmp);
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
	    cmocka_unit_test(program_found_as_a_fresh_search_would),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
