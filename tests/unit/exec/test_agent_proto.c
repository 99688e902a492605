/* test_agent_proto.c: the agent protocol defined once (exec/agent_proto.h):
 * every kind framed by one end reads back, whole and in order, with the
 * reader both ends use; the server's start line is such a line; a task's
 * key is the same text on both ends (the server's acks, the agent's
 * journals). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/agent_link.h"
#include "exec/agent_proto.h"
#include "launch/journal.h"
#include "lib/json_line.h"

static const char *const kinds[] = {
    AGENT_MSG_HELLO, AGENT_MSG_START,   AGENT_MSG_KILL,   AGENT_MSG_ACK,
    AGENT_MSG_BYE,   AGENT_MSG_STATUS,  AGENT_MSG_HELD,   AGENT_MSG_SPAWNED,
    AGENT_MSG_DONE,  AGENT_MSG_STARTED, AGENT_MSG_EXITED, AGENT_MSG_LOST,
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static void test_every_kind_reads_back(void **state)
{
	struct strbuf wire = STRBUF_INIT;
	size_t start = 0, len, i;
	char *line;

	(void)state;
	for (i = 0; i < N_KINDS; i++) {
		json_t *m =
		    json_pack("{s:s,s:I,s:s,s:i,s:i,s:s}", AGENT_KEY_KIND, kinds[i], AGENT_KEY_JOB,
		              (json_int_t)7, AGENT_KEY_ROLE, "wörker \"a\"\n", AGENT_KEY_INDEX, 2,
		              AGENT_KEY_ATTEMPT, (int)i, AGENT_KEY_WHY, "line\nbreak");
		char *text = json_dumps(m, JSON_COMPACT);
		size_t at = wire.len;

		assert_int_equal(agent_proto_frame(&wire, m), 0);
		/* the bytes are json_dumps's compact text and a newline: no wire change */
		assert_int_equal(wire.len - at, strlen(text) + 1);
		assert_memory_equal(wire.buf + at, text, strlen(text));
		assert_int_equal(wire.buf[wire.len - 1], '\n');
		free(text);
		json_decref(m);
	}
	strbuf_addstr(&wire, "{\"t\":\"sta"); /* a line still arriving */
	for (i = 0; (line = agent_proto_next_line(&wire, &start, &len)); i++) {
		json_t *m = json_line_loads(line);
		char key[JOURNAL_KEY_MAX];

		assert_true(i < N_KINDS);
		assert_int_equal(len, strlen(line));
		assert_non_null(m);
		assert_string_equal(agent_proto_kind(m), kinds[i]);
		assert_string_equal(json_string_value(json_object_get(m, AGENT_KEY_WHY)),
		                    "line\nbreak");
		assert_int_equal(agent_proto_msg_key(m, key, sizeof key), 0);
		snprintf(key + 64, sizeof key - 64, "7.wörker \"a\"\n.2.%d", (int)i);
		assert_string_equal(key, key + 64);
		json_decref(m);
	}
	assert_int_equal(i, N_KINDS);
	assert_string_equal(wire.buf + start, "{\"t\":\"sta"); /* left for the next read */
	strbuf_release(&wire);
}

/* The server writes its start line by hand; the agent reads it as any line. */
static void test_start_line_reads_back(void **state)
{
	struct executor_task t = {
	    .job_id = 12, .role = "ps", .index = 1, .attempt = 3, .log_path = "/tmp/l.log"};
	struct strbuf wire = STRBUF_INIT;
	size_t start = 0, len;
	char key[JOURNAL_KEY_MAX], jkey[JOURNAL_KEY_MAX];
	char *line;
	json_t *m;

	(void)state;
	assert_int_equal(agent_link_start_line(&wire, &t, true, "s3cret"), 0);
	line = agent_proto_next_line(&wire, &start, &len);
	assert_non_null(line);
	assert_int_equal(start, wire.len);
	m = json_line_loads(line);
	assert_non_null(m);
	assert_string_equal(agent_proto_kind(m), AGENT_MSG_START);
	assert_true(json_is_true(json_object_get(m, AGENT_KEY_LOG_TO_SERVER)));
	assert_string_equal(json_string_value(json_object_get(m, AGENT_KEY_SECRET)), "s3cret");
	assert_string_equal(json_string_value(json_object_get(m, AGENT_KEY_LOG)), "/tmp/l.log");
	assert_true(json_is_null(json_object_get(m, AGENT_KEY_TASK)));
	/* the key the server acks is the agent's journal's name */
	assert_int_equal(agent_proto_msg_key(m, key, sizeof key), 0);
	assert_int_equal(journal_key(jkey, sizeof jkey, 12, "ps", 1, 3), 0);
	assert_string_equal(key, jkey);
	assert_string_equal(key, "12.ps.1.3");
	json_decref(m);
	strbuf_release(&wire);
}

static void test_task_key(void **state)
{
	char buf[64], small[8];

	(void)state;
	assert_int_equal(agent_proto_task_key(buf, sizeof buf, -5, "w", 0, 2147483647), 0);
	assert_string_equal(buf, "-5.w.0.2147483647");
	assert_int_equal(
	    agent_proto_task_key(buf, sizeof buf, 9223372036854775807LL, "chief", 3, 1), 0);
	assert_string_equal(buf, "9223372036854775807.chief.3.1");
	/* too long: what fits, and -1 (journal_key refuses it) */
	assert_int_equal(agent_proto_task_key(small, sizeof small, 123, "worker", 1, 1), -1);
	assert_string_equal(small, "123.wor");
	assert_int_equal(journal_key(small, sizeof small, 123, "worker", 1, 1), -1);
	/* a role the journal cannot name a file after */
	assert_int_equal(journal_key(buf, sizeof buf, 1, "a.b", 0, 1), -1);
	/* a message naming no task */
	json_t *m = json_pack("{s:s}", AGENT_KEY_KIND, AGENT_MSG_BYE);
	assert_int_equal(agent_proto_msg_key(m, buf, sizeof buf), -1);
	json_decref(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_kind_reads_back),
	    cmocka_unit_test(test_start_line_reads_back),
	    cmocka_unit_test(test_task_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
