/* test_agent_start.c: the agent's start message as agent_link_start_line
 * writes it parses to the tree it was built as before (json_pack of the
 * same fields), strings that need escaping among them; and the link's
 * start: the reports an agent sends with its greeting wait until the
 * server opens the link (agent_link_open), while what it holds is known at
 * once; a start leaves on the loop, after the before-send hook. */
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/agent_link.h"
#include "lib/usock.h"

static void check(const struct executor_task *t, bool log_to_server)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *answer = t->answer ? json_loads(t->answer, 0, NULL) : NULL;
	json_t *want = json_pack("{s:s,s:I,s:s,s:i,s:i,s:O?,s:s,s:b}", "t", "start", "job",
	                         (json_int_t)t->job_id, "role", t->role, "index", t->index,
	                         "attempt", t->attempt, "task", answer, "log", t->log_path,
	                         "log_to_server", log_to_server);
	json_t *got;

	assert_non_null(want);
	assert_int_equal(agent_link_start_line(&sb, t, log_to_server, NULL), 0);
	assert_true(sb.len > 0 && sb.buf[sb.len - 1] == '\n');
	assert_null(memchr(sb.buf, '\n', sb.len - 1)); /* one line */
	got = json_loadb(sb.buf, sb.len, JSON_REJECT_DUPLICATES, NULL);
	assert_non_null(got);
	assert_true(json_equal(got, want));
	json_decref(got);
	json_decref(want);
	json_decref(answer);
	strbuf_release(&sb);
}

static void test_start_line(void **state)
{
	(void)state;
	struct executor_task t = {.job_id = 42,
	                          .role = "worker",
	                          .index = 3,
	                          .attempt = 2,
	                          .log_path = "/home/logs/42/worker-3.log"};
	check(&t, true);
	t.answer = "{\"job\":42,\"command\":\"echo \\\"a\\nb\\\"\",\"env\":{\"X\":\"\\u0001\"},"
	           "\"gpus\":null,\"roles\":[{\"name\":\"worker\",\"instances\":4}]}";
	check(&t, false);
	t.log_path = "/home/l\"o\\g\ns\t/caf\xc3\xa9 \x01.log";
	t.job_id = 9007199254740993LL;
	check(&t, true);
}

/* ---- the link's start, against a fake agent ---- */

#define HELD_AND_EXITED                                                                            \
	"{\"t\":\"held\",\"agent_pid\":1,\"tasks\":[{\"job\":7,\"role\":\"task\",\"index\":0,"     \
	"\"attempt\":1,\"shim_pid\":0}]}\n"                                                        \
	"{\"t\":\"exited\",\"job\":7,\"role\":\"task\",\"index\":0,\"attempt\":1,"                 \
	"\"exit_code\":0,\"cause\":\"exited\"}\n"

static int n_reports;

static void on_reports(void *arg, json_t *batch)
{
	(void)arg;
	n_reports += (int)json_array_size(batch);
}

static void on_lost(void *arg, int64_t job_id, const char *role, int index, int attempt,
                    int launcher_pid, int64_t exit_status, int term_signal)
{
	(void)arg, (void)job_id, (void)role, (void)index, (void)attempt, (void)launcher_pid;
	(void)exit_status, (void)term_signal;
	fail_msg("lost called");
}

static int n_before_send;

static void on_before_send(void *arg)
{
	(void)arg;
	n_before_send++;
}

/* The agent's side: greets the first connection back with what it holds
 * and a result kept while no server listened (in one write, as the agent
 * does), then reads until the server says goodbye; exits 0 when a start
 * message came meanwhile. */
static void fake_agent(int lfd)
{
	char buf[4096];
	ssize_t n;
	int fd = -1;
	bool started = false;

	while (fd < 0)
		fd = accept(lfd, NULL, NULL);
	if (read(fd, buf, sizeof buf) <= 0 ||
	    write(fd, HELD_AND_EXITED, strlen(HELD_AND_EXITED)) < 0)
		_exit(1);
	while ((n = read(fd, buf, sizeof buf - 1)) > 0) {
		buf[n] = '\0';
		started |= strstr(buf, "\"t\":\"start\"") != NULL;
	}
	_exit(started ? 0 : 2);
}

static void test_reports_wait_for_open(void **state)
{
	char dir[] = "/tmp/weir-test-link-XXXXXX";
	struct weir_error err = {0};
	struct executor_task t = {.job_id = 7, .role = "task", .index = 0, .attempt = 1};
	char *args[] = {"/bin/false", NULL}, *env[] = {NULL};
	uv_loop_t loop;
	struct agent_link *l;
	int lfd, st;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	lfd = usock_listen(dir, "agent.sock", &err);
	assert_true(lfd >= 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		fake_agent(lfd);
	close(lfd);
	assert_int_equal(uv_loop_init(&loop), 0);
	n_reports = 0;
	l = agent_link_create(&loop, dir, "/bin/false", args, env, NULL, 2, on_reports, on_lost,
	                      NULL, &err);
	assert_non_null(l);
	/* what it holds is known at once; the result that came with it is not
	 * told to a server still starting, however long the loop runs */
	assert_true(agent_link_holds(l, &t));
	for (int i = 0; i < 5; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	assert_int_equal(n_reports, 0);
	agent_link_open(l);
	for (int i = 0; i < 5 && n_reports == 0; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	assert_int_equal(n_reports, 1);
	assert_false(agent_link_holds(l, &t)); /* recorded and acknowledged */
	/* a start waits for the loop, and the server's turn ends before it
	 * leaves (agent_link_set_before_send) */
	n_before_send = 0;
	agent_link_set_before_send(l, on_before_send, NULL);
	t.job_id = 8;
	assert_int_equal(agent_link_start(l, &t, false, NULL, &err), 0);
	assert_int_equal(n_before_send, 0);
	for (int i = 0; i < 5 && n_before_send == 0; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	assert_int_equal(n_before_send, 1);
	agent_link_destroy(l);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	{
		char path[sizeof dir + 16];
		snprintf(path, sizeof path, "%s/agent.sock", dir);
		unlink(path);
		rmdir(dir);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_start_line),
	    cmocka_unit_test(test_reports_wait_for_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
