/* test_agent_start.c: the agent's start message as agent_link_start_line
 * writes it parses to the tree it was built as before (json_pack of the
 * same fields), strings that need escaping among them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "exec/agent_link.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_start_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
