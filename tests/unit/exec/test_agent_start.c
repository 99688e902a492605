/* test_agent_start.c: the agent's start message as agent_link_start_line
 * writes it parses to the tree it was built as before (json_pack of the
 * same fields), strings that need escaping among them; and the link's
 * start: the reports an agent sends with its greeting wait until the
 * server opens the link (agent_link_open), while what it holds is known at
 * once; reports whose turn was not stored are told again, and the starts
 * of a turn rolled back, or not yet ended, never reach the agent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
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
	json_t *want = json_pack("{s:s,s:I,s:s,s:i,s:i,s:I,s:O?,s:s,s:b}", "t", "start", "job",
	                         (json_int_t)t->job_id, "role", t->role, "index", t->index,
	                         "attempt", t->attempt, "nonce", (json_int_t)t->nonce, "task",
	                         answer, "log", t->log_path, "log_to_server", log_to_server);
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
	                          .log_path = "/home/logs/42/worker-3.log",
	                          .nonce = 4503599627370497LL};
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
	"{\"t\":\"held\",\"version\":2,\"agent_pid\":1,\"tasks\":[{\"job\":7,\"role\":\"task\","   \
	"\"index\":0,"                                                                             \
	"\"attempt\":1,\"shim_pid\":0}]}\n"                                                        \
	"{\"t\":\"exited\",\"job\":7,\"role\":\"task\",\"index\":0,\"attempt\":1,"                 \
	"\"exit_code\":0,\"cause\":\"exited\"}\n"

static int n_reports;
static int n_refused; /* the next turn ends answer "not stored" */
static int n_durable; /* turn ends asked durable (an acknowledgement follows) */

static void on_reports(void *arg, json_t *batch)
{
	(void)arg;
	n_reports += (int)json_array_size(batch);
}

/* The server's turn end before the reports are acknowledged. */
static bool end_turn(void *arg, bool durable)
{
	(void)arg;
	n_durable += durable;
	if (n_refused > 0) {
		n_refused--;
		return false;
	}
	return true;
}

static void on_lost(void *arg, int64_t job_id, const char *role, int index, int attempt,
                    int launcher_pid, int64_t exit_status, int term_signal)
{
	(void)arg, (void)job_id, (void)role, (void)index, (void)attempt, (void)launcher_pid;
	(void)exit_status, (void)term_signal;
	fail_msg("lost called");
}

/* The agent's side: greets the first connection back with what it holds
 * and a result kept while no server listened (in one write, as the agent
 * does), then reads until the server says goodbye, keeping what it read
 * in DIR/got. */
static void fake_agent(int lfd, const char *dir)
{
	char buf[4096], path[256];
	int fd = -1, out;
	ssize_t n;

	snprintf(path, sizeof path, "%s/got", dir);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	while (fd < 0)
		fd = accept(lfd, NULL, NULL);
	if (out < 0 || read(fd, buf, sizeof buf) <= 0 ||
	    write(fd, HELD_AND_EXITED, strlen(HELD_AND_EXITED)) < 0)
		_exit(1);
	while ((n = read(fd, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			_exit(1);
	_exit(0);
}

/* A link to a fake agent in a new folder (dir: "/tmp/weir-test-link-XXXXXX"). */
struct fake {
	char dir[32];
	uv_loop_t loop;
	struct agent_link *l;
	pid_t pid;
};

static void fake_start(struct fake *f)
{
	struct weir_error err = {0};
	char *args[] = {"/bin/false", NULL}, *env[] = {NULL};
	int lfd;

	snprintf(f->dir, sizeof f->dir, "/tmp/weir-test-link-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	lfd = usock_listen(f->dir, "agent.sock", &err);
	assert_true(lfd >= 0);
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0)
		fake_agent(lfd, f->dir);
	close(lfd);
	assert_int_equal(uv_loop_init(&f->loop), 0);
	n_reports = 0;
	f->l = agent_link_create(&f->loop, f->dir, "/bin/false", args, env, NULL, 2, on_reports,
	                         on_lost, NULL, &err);
	assert_non_null(f->l);
	agent_link_set_end_turn(f->l, end_turn, NULL);
}

/* Says goodbye; what the fake agent read, to be freed. */
static char *fake_stop(struct fake *f)
{
	char path[64], *got;
	FILE *fp;
	long size;
	int st;

	agent_link_destroy(f->l);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	assert_int_equal(waitpid(f->pid, &st, 0), f->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(path, sizeof path, "%s/got", f->dir);
	fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	size = ftell(fp);
	rewind(fp);
	got = calloc(1, (size_t)size + 1);
	assert_non_null(got);
	assert_int_equal(fread(got, 1, (size_t)size, fp), (size_t)size);
	fclose(fp);
	unlink(path);
	snprintf(path, sizeof path, "%s/agent.sock", f->dir);
	unlink(path);
	rmdir(f->dir);
	return got;
}

static void test_reports_wait_for_open(void **state)
{
	struct executor_task t = {.job_id = 7, .role = "task", .index = 0, .attempt = 1};
	struct fake f;

	(void)state;
	fake_start(&f);
	/* what it holds is known at once; the result that came with it is not
	 * told to a server still starting, however long the loop runs */
	assert_true(agent_link_holds(f.l, &t));
	for (int i = 0; i < 5; i++)
		uv_run(&f.loop, UV_RUN_NOWAIT);
	assert_int_equal(n_reports, 0);
	agent_link_open(f.l);
	for (int i = 0; i < 5 && n_reports == 0; i++)
		uv_run(&f.loop, UV_RUN_NOWAIT);
	assert_int_equal(n_reports, 1);
	assert_false(agent_link_holds(f.l, &t)); /* recorded */
	/* acknowledged once a durable turn end holds it */
	for (int i = 0; i < 50 && n_durable == 0; i++)
		uv_run(&f.loop, UV_RUN_ONCE);
	assert_int_equal(n_durable, 1);
	free(fake_stop(&f));
}

/* A full disk: reports whose turn was rolled back are not acknowledged and
 * are told again; the starts of a rolled-back turn never reach the agent,
 * nor those of a turn that never ended, however long the loop runs. */
static void test_what_a_rolled_back_turn_asked_is_not_lost_nor_sent(void **state)
{
	struct executor_task t = {.job_id = 7, .role = "task", .index = 0, .attempt = 1},
	                     dropped = {.job_id = 8, .role = "task", .index = 0, .attempt = 1},
	                     sent = {.job_id = 9, .role = "task", .index = 0, .attempt = 1},
	                     unended = {.job_id = 10, .role = "task", .index = 0, .attempt = 1};
	struct weir_error err = {0};
	struct fake f;
	char *got;

	(void)state;
	fake_start(&f);
	n_refused = 1;
	agent_link_open(f.l);
	for (int i = 0; i < 5 && n_reports == 0; i++)
		uv_run(&f.loop, UV_RUN_NOWAIT);
	assert_int_equal(n_reports, 1);
	assert_true(agent_link_holds(f.l, &t));      /* not stored: not acknowledged */
	for (int i = 0; i < 5 && n_reports < 2; i++) /* told again a second later */
		uv_run(&f.loop, UV_RUN_ONCE);
	assert_int_equal(n_reports, 2);
	assert_false(agent_link_holds(f.l, &t));
	for (int i = 0; i < 50 && n_durable < 2; i++) /* its acknowledgement */
		uv_run(&f.loop, UV_RUN_ONCE);
	assert_int_equal(n_durable, 2);

	assert_int_equal(agent_link_start(f.l, &dropped, false, NULL, &err), 0);
	agent_link_turn_end(f.l, false);
	assert_false(agent_link_holds(f.l, &dropped));
	assert_int_equal(agent_link_start(f.l, &sent, false, NULL, &err), 0);
	for (int i = 0; i < 5; i++)
		uv_run(&f.loop, UV_RUN_NOWAIT); /* it waits for its turn's end */
	agent_link_turn_end(f.l, true);
	assert_true(agent_link_holds(f.l, &sent));
	assert_int_equal(agent_link_start(f.l, &unended, false, NULL, &err), 0);
	for (int i = 0; i < 5; i++)
		uv_run(&f.loop, UV_RUN_NOWAIT);
	got = fake_stop(&f);
	assert_non_null(strstr(got, "\"job\":9"));
	assert_null(strstr(got, "\"job\":8"));
	assert_null(strstr(got, "\"job\":10"));
	assert_non_null(strstr(got, "\"t\":\"ack\""));
	free(got);
}

/* Whether the store knows the job: none of the fake agent's (job 7) */
static bool knows_none(void *arg, int64_t job, int64_t nonce)
{
	(void)arg, (void)job, (void)nonce;
	return false;
}

/* A task the agent holds of a job the store does not know under its nonce
 * (a power cut lost the turns that made it, docs/internals/recovery.md):
 * killed once the server has started, and its result never told to the
 * job manager (the job's id may be another job's now), only acknowledged
 * with its nonce so that the agent forgets it. */
static void test_a_lost_jobs_task_is_killed_and_never_told(void **state)
{
	struct executor_task t = {.job_id = 7, .role = "task", .index = 0, .attempt = 1};
	struct fake f;
	char *got;

	(void)state;
	fake_start(&f);
	n_durable = 0;
	agent_link_set_known(f.l, knows_none, NULL);
	assert_true(agent_link_holds(f.l, &t)); /* before the store is read: held */
	agent_link_open(f.l);
	assert_false(agent_link_holds(f.l, &t));
	for (int i = 0; i < 50 && n_durable == 0; i++) /* the acknowledgement */
		uv_run(&f.loop, UV_RUN_ONCE);
	assert_int_equal(n_reports, 0);
	got = fake_stop(&f);
	assert_non_null(strstr(got, "\"t\":\"kill\",\"job\":7"));
	assert_non_null(strstr(got, "\"sig\":9"));
	assert_non_null(strstr(got, "\"keys\":[\"7.task.0.1\"],\"nonces\":[0]"));
	free(got);
}

/* An agent of protocol 1 (its held answer says no version: an older
 * binary still running across an upgrade) is stopped (SIGTERM) and a new
 * one started; here none can be (/bin/false), which the error says. */
static void test_an_older_agent_is_stopped(void **state)
{
	struct weir_error err = {0};
	char dir[32] = "/tmp/weir-test-link-XXXXXX", path[64];
	char *args[] = {"/bin/false", NULL}, *env[] = {NULL};
	uv_loop_t loop;
	int lfd, st;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	lfd = usock_listen(dir, "agent.sock", &err);
	assert_true(lfd >= 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[4096], held[128];
		int fd = -1;
		while (fd < 0)
			fd = accept(lfd, NULL, NULL);
		int n = snprintf(held, sizeof held,
		                 "{\"t\":\"held\",\"agent_pid\":%d,\"tasks\":[]}\n", (int)getpid());
		if (read(fd, buf, sizeof buf) <= 0 || write(fd, held, (size_t)n) != n)
			_exit(1);
		alarm(30); /* never outlives a failed test */
		for (;;)
			pause(); /* until the server's SIGTERM */
	}
	close(lfd);
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_null(agent_link_create(&loop, dir, "/bin/false", args, env, NULL, 2, on_reports,
	                              on_lost, NULL, &err));
	assert_non_null(strstr(err.msg, "did not answer"));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&loop), 0);
	snprintf(path, sizeof path, "%s/agent.sock", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/agent.log", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_start_line),
	    cmocka_unit_test(test_reports_wait_for_open),
	    cmocka_unit_test(test_what_a_rolled_back_turn_asked_is_not_lost_nor_sent),
	    cmocka_unit_test(test_a_lost_jobs_task_is_killed_and_never_told),
	    cmocka_unit_test(test_an_older_agent_is_stopped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
