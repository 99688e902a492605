/* test_journal.c: a task's journal: keys both ways, records appended and
 * read back, a torn last line ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch/journal.h"
#include "lib/fs.h"

static void test_key_round_trip(void **state)
{
	char key[JOURNAL_KEY_MAX], role[64];
	long long job;
	int index, attempt;

	(void)state;
	assert_int_equal(journal_key(key, sizeof key, 42, "worker-a_b", 3, 7), 0);
	assert_string_equal(key, "42.worker-a_b.3.7");
	assert_int_equal(journal_key_parse(key, &job, role, sizeof role, &index, &attempt), 0);
	assert_int_equal(job, 42);
	assert_string_equal(role, "worker-a_b");
	assert_int_equal(index, 3);
	assert_int_equal(attempt, 7);
	assert_int_equal(journal_key(key, sizeof key, 1, "a.b", 0, 1), -1);
	assert_int_equal(journal_key(key, sizeof key, 1, "../x", 0, 1), -1);
	assert_int_equal(journal_key_parse("x.worker.0.1", &job, role, sizeof role, &index,
	                                   &attempt), -1);
	assert_int_equal(journal_key_parse("1.worker.0", &job, role, sizeof role, &index,
	                                   &attempt), -1);
	assert_int_equal(journal_key_parse("1..0.1", &job, role, sizeof role, &index, &attempt),
	                 -1);
	assert_int_equal(journal_key_parse("1.w.0.0", &job, role, sizeof role, &index, &attempt),
	                 -1);
}

static void test_records_and_a_torn_line(void **state)
{
	char dir[] = "/tmp/weir-journal-XXXXXX";
	struct journal_state st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fd = journal_open(dir, "5.worker.0.1");
	assert_true(fd >= 0);
	json_t *r = json_pack("{s:s,s:i,s:I,s:s}", "t", "shim", "pid", 100, "start", (json_int_t)77,
	                      "group", "pool-1-2");
	assert_int_equal(journal_append(fd, r), 0);
	json_decref(r);
	assert_int_equal(journal_read(dir, "5.worker.0.1", &st), 0);
	assert_int_equal(st.shim_pid, 100);
	assert_int_equal(st.shim_start, 77);
	assert_string_equal(st.group, "pool-1-2");
	assert_false(st.started);
	assert_null(st.exited);
	journal_state_release(&st);

	r = json_pack("{s:s,s:i,s:i}", "t", "started", "pid", 101, "port", 4000);
	assert_int_equal(journal_append(fd, r), 0);
	json_decref(r);
	r = json_pack("{s:s,s:i,s:s}", "t", "exited", "exit_code", 3, "cause", "exited");
	assert_int_equal(journal_append(fd, r), 0);
	json_decref(r);
	/* a writer killed mid-line */
	assert_int_equal(write(fd, "{\"t\":\"exi", 9), 9);
	close(fd);
	assert_int_equal(journal_read(dir, "5.worker.0.1", &st), 0);
	assert_true(st.started);
	assert_int_equal(st.pid, 101);
	assert_int_equal(st.port, 4000);
	assert_non_null(st.exited);
	assert_int_equal(json_integer_value(json_object_get(st.exited, "exit_code")), 3);
	assert_null(json_object_get(st.exited, "t"));
	assert_false(st.reported);
	journal_state_release(&st);

	journal_remove(dir, "5.worker.0.1");
	assert_int_equal(journal_read(dir, "5.worker.0.1", &st), -1);
	assert_int_equal(fs_remove_tree(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_key_round_trip),
	    cmocka_unit_test(test_records_and_a_torn_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
