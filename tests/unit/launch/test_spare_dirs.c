/* test_spare_dirs.c: a spare's folders made ahead are renamed into a new
 * job's place whole, or into an existing job's folder part by part; a log
 * or work folder elsewhere, or a name taken, is left to the caller;
 * clearing takes files and empty folders only; the sweep takes other
 * agents' folders, not this one's; .spares is marked a top of hierarchy
 * (ext4's FS_TOPDIR_FL) where the file system has inode flags. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/spare_dirs.h"
#include "lib/fs.h"

static char root[256], jobs[300];

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/weir-test-spare-dirs.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(jobs, sizeof jobs, "%s/jobs", root);
	return mkdir(jobs, 0755);
}

static int teardown(void **state)
{
	(void)state;
	return fs_remove_tree(root);
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool gone(const char *path)
{
	struct stat st;
	return lstat(path, &st) < 0 && errno == ENOENT;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static void p(char *out, const char *fmt, const char *a)
{
	snprintf(out, 512, fmt, jobs, a);
}

/* JOBS/.spares/SPARE/next (the folder the spare gives) holds the work
 * folder WORK and the log LOG. */
static void assert_parts(const char *spare, const char *work, const char *log)
{
	char path[1024];

	snprintf(path, sizeof path, "%s/.spares/%s/next/%s", jobs, spare, work);
	assert_true(is_dir(path));
	snprintf(path, sizeof path, "%s/.spares/%s/next/%s", jobs, spare, log);
	assert_true(is_file(path));
}

static void test_a_new_job_takes_the_whole_folder(void **state)
{
	struct spare_dir sd;
	char log[512], wd[512], dir[512], spare[512];

	(void)state;
	/* .spares is made when missing */
	assert_int_equal(spare_dir_make(&sd, jobs, 100, 200), 0);
	assert_true(sd.ready);
	snprintf(spare, sizeof spare, "%s", sd.path);
	p(dir, "%s/.spares/%s/next", "100-200");
	assert_string_equal(spare, dir);
	assert_parts("100-200", ".work", ".log");
	p(log, "%s/%s/worker-0.1.log", "7");
	p(wd, "%s/%s/worker-0.1", "7");
	assert_int_equal(spare_dir_place(&sd, log, wd), 0);
	assert_false(sd.ready);
	assert_true(is_file(log));
	assert_true(is_dir(wd));
	assert_true(gone(spare));
	/* the spare's own folder stays, for the next folder it gives */
	p(dir, "%s/.spares/%s", "100-200");
	assert_true(is_dir(dir));
	p(dir, "%s/%s/.work", "7");
	assert_true(gone(dir));
	/* nothing to clear after: the folder is the job's now */
	assert_int_equal(spare_dir_clear(sd.path), 0);
	assert_true(is_dir(wd));
	/* placed once: a second placement is the caller's */
	assert_int_equal(spare_dir_place(&sd, log, wd), -1);
}

static void test_an_existing_job_gets_the_parts(void **state)
{
	struct spare_dir sd;
	char log[512], wd[512], spare[512], other[512];

	(void)state;
	p(wd, "%s/%s", "8");
	assert_int_equal(mkdir(wd, 0755), 0);
	p(other, "%s/%s/worker-0.1.log", "8");
	touch(other);
	assert_int_equal(spare_dir_make(&sd, jobs, 100, 201), 0);
	snprintf(spare, sizeof spare, "%s", sd.path);
	p(log, "%s/%s/worker-0.2.log", "8");
	p(wd, "%s/%s/worker-0.2", "8");
	assert_int_equal(spare_dir_place(&sd, log, wd), 0);
	assert_true(is_file(log));
	assert_true(is_dir(wd));
	assert_true(is_file(other)); /* the earlier try's log untouched */
	/* the spare's folder is left, empty, for the task's end */
	assert_true(is_dir(spare));
	assert_int_equal(spare_dir_clear(sd.path), 0);
	assert_true(gone(spare));
	assert_true(is_dir(wd));
}

static void test_a_taken_name_is_left_to_the_caller(void **state)
{
	struct spare_dir sd;
	char log[512], wd[512], spare[512];
	int fd;

	(void)state;
	/* the log is there already, with something in it: kept as it is */
	p(wd, "%s/%s", "9");
	assert_int_equal(mkdir(wd, 0755), 0);
	p(log, "%s/%s/worker-0.1.log", "9");
	fd = open(log, O_WRONLY | O_CREAT, 0644);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_int_equal(spare_dir_make(&sd, jobs, 100, 202), 0);
	snprintf(spare, sizeof spare, "%s", sd.path);
	p(wd, "%s/%s/worker-0.1", "9");
	assert_int_equal(spare_dir_place(&sd, log, wd), -1);
	assert_true(is_dir(wd)); /* the work folder went in all the same */
	struct stat st;
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(st.st_size, 1);
	assert_int_equal(spare_dir_clear(spare), 0);
	assert_true(gone(spare));
}

static void test_elsewhere_is_refused(void **state)
{
	struct spare_dir sd;
	char log[512], wd[512], elsewhere[512];

	(void)state;
	snprintf(elsewhere, sizeof elsewhere, "%s/logs/x.log", root);
	p(wd, "%s/%s/worker-0.1", "10");
	p(log, "%s/%s/worker-0.1.log", "11");
	const char *cases[][2] = {
	    {elsewhere, wd},                    /* a log outside HOME/jobs */
	    {log, wd},                          /* not one job's folder */
	    {"relative/worker-0.1.log", wd},    /* not absolute */
	    {NULL, wd},                         /* no log */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(spare_dir_make(&sd, jobs, 100, 203), 0);
		assert_int_equal(spare_dir_place(&sd, cases[i][0], cases[i][1]), -1);
		assert_false(sd.ready);
	}
	/* a job folder named like a spare's parts, or hidden */
	char hidden_log[512], hidden_wd[512];
	p(hidden_log, "%s/%s/worker-0.1.log", ".spares");
	p(hidden_wd, "%s/%s/worker-0.1", ".spares");
	assert_int_equal(spare_dir_make(&sd, jobs, 100, 203), 0);
	assert_int_equal(spare_dir_place(&sd, hidden_log, hidden_wd), -1);
	p(hidden_log, "%s/%s/.log", "12");
	p(hidden_wd, "%s/%s/.work", "12");
	assert_int_equal(spare_dir_make(&sd, jobs, 100, 203), 0);
	assert_int_equal(spare_dir_place(&sd, hidden_log, hidden_wd), -1);
	p(hidden_wd, "%s/%s", "10");
	p(log, "%s/%s/worker-0.1.log", "12");
	assert_true(gone(hidden_wd));
	assert_true(gone(log));
	/* nothing to do without a jobs folder */
	assert_int_equal(spare_dir_make(&sd, NULL, 100, 204), -1);
	assert_false(sd.ready);
	assert_int_equal(spare_dir_place(&sd, log, wd), -1);
	assert_int_equal(spare_dir_clear(sd.path), 0);
	spare_dirs_remove_of(jobs, 100, 203);
	p(wd, "%s/.spares/%s", "100-203");
	assert_true(gone(wd));
}

/* A spare back from a task makes the next folders under its task's names:
 * a task with the same names takes them as they are, one with others
 * gets them renamed; names that could not be a task's are not taken. */
static void test_the_last_tasks_names_are_made_ahead(void **state)
{
	struct spare_dir sd;
	char log[512], wd[512], dir[512];

	(void)state;
	assert_int_equal(spare_dir_make(&sd, jobs, 100, 205), 0);
	p(log, "%s/%s/task-0.1.log", "20");
	p(wd, "%s/%s/task-0.1", "20");
	assert_int_equal(spare_dir_place(&sd, log, wd), 0);
	assert_string_equal(sd.placed_work, "task-0.1");
	assert_string_equal(sd.placed_log, "task-0.1.log");
	/* the next folders under those names */
	assert_int_equal(spare_dir_make_named(&sd, jobs, 100, 205, sd.placed_work, sd.placed_log), 0);
	assert_parts("100-205", "task-0.1", "task-0.1.log");
	p(dir, "%s/.spares/100-205/next/%s", ".work");
	assert_true(gone(dir));
	p(log, "%s/%s/task-0.1.log", "21");
	p(wd, "%s/%s/task-0.1", "21");
	assert_int_equal(spare_dir_place(&sd, log, wd), 0);
	assert_true(is_file(log));
	assert_true(is_dir(wd));
	/* others: renamed into place all the same */
	assert_int_equal(spare_dir_make_named(&sd, jobs, 100, 205, sd.placed_work, sd.placed_log), 0);
	p(log, "%s/%s/worker-1.2.log", "22");
	p(wd, "%s/%s/worker-1.2", "22");
	assert_int_equal(spare_dir_place(&sd, log, wd), 0);
	assert_true(is_file(log));
	assert_true(is_dir(wd));
	p(dir, "%s/%s/task-0.1", "22");
	assert_true(gone(dir));
	/* the log's name for the work folder and the other way round */
	assert_int_equal(spare_dir_make_named(&sd, jobs, 100, 205, "a", "b"), 0);
	p(log, "%s/%s/a", "23");
	p(wd, "%s/%s/b", "23");
	assert_int_equal(spare_dir_place(&sd, log, wd), -1); /* left to the caller */
	assert_int_equal(spare_dir_clear(sd.path), 0);
	/* not a task's names: .work and .log */
	const char *bad[][2] = {{"x", "x"}, {"..", "l"}, {"w", "a/b"}, {".log", "l"}, {NULL, "l"}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(spare_dir_make_named(&sd, jobs, 100, 206, bad[i][0], bad[i][1]), 0);
		assert_string_equal(sd.work, ".work");
		assert_string_equal(sd.log, ".log");
		assert_int_equal(spare_dir_clear(sd.path), 0);
	}
}

static void test_clear_keeps_what_is_not_empty(void **state)
{
	char dir[512], f[600];

	(void)state;
	p(dir, "%s/.spares/%s", "100-205");
	assert_int_equal(fs_mkdir_p(dir, 0755, NULL), 0);
	snprintf(f, sizeof f, "%s/a", dir);
	touch(f);
	snprintf(f, sizeof f, "%s/empty", dir);
	assert_int_equal(mkdir(f, 0755), 0);
	snprintf(f, sizeof f, "%s/full", dir);
	assert_int_equal(mkdir(f, 0755), 0);
	snprintf(f, sizeof f, "%s/full/data", dir);
	touch(f);
	assert_int_equal(spare_dir_clear(dir), -1);
	assert_true(is_file(f));
	snprintf(f, sizeof f, "%s/a", dir);
	assert_true(gone(f));
	snprintf(f, sizeof f, "%s/empty", dir);
	assert_true(gone(f));
	assert_true(is_dir(dir));
	assert_int_equal(spare_dir_clear("/nonexistent/weir-spare"), 0);
}

static void test_the_sweep_takes_other_agents_folders(void **state)
{
	struct spare_dir mine, theirs;
	char path[512];

	(void)state;
	assert_int_equal(spare_dir_make(&mine, jobs, 300, 301), 0);
	assert_int_equal(spare_dir_make(&theirs, jobs, 299, 302), 0);
	assert_int_equal(spare_dirs_sweep(jobs, 300), 0);
	assert_true(is_dir(mine.path));
	assert_true(gone(theirs.path));
	assert_true(gone(theirs.own));
	/* this agent's own, once its spare is reaped */
	snprintf(path, sizeof path, "%s", mine.own);
	spare_dirs_remove_of(jobs, 300, 301);
	assert_true(gone(path));
	/* a spare's own removal: what it gives with it */
	assert_int_equal(spare_dir_make(&mine, jobs, 300, 303), 0);
	assert_int_equal(spare_dir_remove(&mine), 0);
	assert_true(gone(mine.own));
	assert_int_equal(spare_dirs_sweep(NULL, 300), -1);
}

/* The inode flags of `path`, or -1 where the file system has none. */
static int dir_flags(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), flags = 0;

	if (fd < 0)
		return -1;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		flags = -1;
	close(fd);
	return flags;
}

static void test_the_spares_folder_is_a_top_of_hierarchy(void **state)
{
	struct spare_dir sd;
	char spares[512];
	int flags;

	(void)state;
	snprintf(spares, sizeof spares, "%s/.spares", jobs);
	assert_int_equal(spare_dir_make(&sd, jobs, 400, 401), 0);
	flags = dir_flags(spares);
	if (flags < 0)
		skip(); /* no inode flags here (tmpfs): nothing to mark */
	assert_true(flags & FS_TOPDIR_FL);
	/* one an earlier agent made unmarked: the sweep marks it */
	int fd = open(spares, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	flags &= ~FS_TOPDIR_FL;
	assert_int_equal(ioctl(fd, FS_IOC_SETFLAGS, &flags), 0);
	close(fd);
	assert_false(dir_flags(spares) & FS_TOPDIR_FL);
	assert_int_equal(spare_dirs_sweep(jobs, 400), 0);
	assert_true(dir_flags(spares) & FS_TOPDIR_FL);
	spare_dirs_remove_of(jobs, 400, 401);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_new_job_takes_the_whole_folder),
	    cmocka_unit_test(test_an_existing_job_gets_the_parts),
	    cmocka_unit_test(test_a_taken_name_is_left_to_the_caller),
	    cmocka_unit_test(test_elsewhere_is_refused),
	    cmocka_unit_test(test_the_last_tasks_names_are_made_ahead),
	    cmocka_unit_test(test_clear_keeps_what_is_not_empty),
	    cmocka_unit_test(test_the_sweep_takes_other_agents_folders),
	    cmocka_unit_test(test_the_spares_folder_is_a_top_of_hierarchy),
	};
	return cmocka_run_group_tests_name("launch/spare_dirs", tests, setup, teardown);
}
