/* test_journal.c: a task's journal: keys both ways, records appended and
 * read back, a torn last line ignored; the folder the journals live in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The journals' folder: in memory under XDG_RUNTIME_DIR (a tmpfs: one made
 * in /dev/shm stands for it), the same for the same home, 0700; not a
 * folder someone else could enter; HOME/agent/tasks while it holds an
 * earlier agent's journals, and when nothing in memory is usable. */
static void test_journal_dir(void **state)
{
	char home[] = "/tmp/weir-journal-home-XXXXXX", run[] = "/dev/shm/weir-test-run-XXXXXX";
	char *old_xdg = getenv("XDG_RUNTIME_DIR") ? strdup(getenv("XDG_RUNTIME_DIR")) : NULL;
	char *d1, *d2, *tasks;
	bool mem = false;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(home));
	if (!mkdtemp(run)) {
		/* no /dev/shm here: the home's folder is all there is */
		unsetenv("XDG_RUNTIME_DIR");
		d1 = journal_dir_for(home, &mem);
		assert_false(mem);
		free(d1);
		assert_int_equal(fs_remove_tree(home), 0);
		free(old_xdg);
		return;
	}
	setenv("XDG_RUNTIME_DIR", run, 1);
	d1 = journal_dir_for(home, &mem);
	assert_non_null(d1);
	assert_true(mem);
	assert_memory_equal(d1, run, strlen(run));
	assert_int_equal(stat(d1, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	d2 = journal_dir_for(home, &mem);
	assert_string_equal(d1, d2);
	free(d2);

	/* open to others: refused here, and /dev/shm's own folder taken instead */
	assert_int_equal(chmod(d1, 0755), 0);
	d2 = journal_dir_for(home, &mem);
	assert_non_null(d2);
	assert_true(strncmp(d2, run, strlen(run)) != 0);
	if (mem)
		rmdir(d2);
	free(d2);
	rmdir(d1);
	free(d1);

	/* an earlier agent's journals keep the home's folder */
	tasks = fs_join(home, "agent/tasks");
	assert_int_equal(fs_mkdir_p(tasks, 0700, NULL), 0);
	int fd = journal_open(tasks, "7.task.0.1");
	assert_true(fd >= 0);
	close(fd);
	d1 = journal_dir_for(home, &mem);
	assert_false(mem);
	assert_string_equal(d1, tasks);
	free(d1);
	free(tasks);

	/* a runtime folder that is not in memory is passed over */
	setenv("XDG_RUNTIME_DIR", home, 1);
	journal_remove(d1 = fs_join(home, "agent/tasks"), "7.task.0.1");
	free(d1);
	d1 = journal_dir_for(home, &mem);
	assert_non_null(d1);
	assert_true(strncmp(d1, home, strlen(home)) != 0 || !mem);
	if (mem)
		rmdir(d1);
	free(d1);

	if (old_xdg)
		setenv("XDG_RUNTIME_DIR", old_xdg, 1);
	else
		unsetenv("XDG_RUNTIME_DIR");
	free(old_xdg);
	assert_int_equal(fs_remove_tree(run), 0);
	assert_int_equal(fs_remove_tree(home), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_key_round_trip),
	    cmocka_unit_test(test_records_and_a_torn_line),
	    cmocka_unit_test(test_journal_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
