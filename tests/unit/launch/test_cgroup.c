/* test_cgroup.c: real processes in a real cgroup: the memory limit kills a
 * process that allocates past it and the OOM is seen, the CPU quota is
 * written, the memory limit goes down and up (v1: memsw with it), a group
 * reset in place does not keep limits its task wrote, kill_all
 * empties a group, the RSS fallback counts a group.
 * Skipped (with a message) where no cgroup is writable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch/cgroup.h"

static struct cgroup_support support;

static char *name_for(const char *what)
{
	static char name[64];
	snprintf(name, sizeof name, "%s-%ld", what, (long)getpid());
	return name;
}

/* Touches `mb` MiB, one page at a time, then exits 0. */
static void allocate(int mb)
{
	for (int i = 0; i < mb; i++) {
		char *p = malloc(1 << 20);
		if (!p)
			_exit(3);
		for (int j = 0; j < (1 << 20); j += 4096)
			p[j] = (char)j;
	}
	_exit(0);
}

static pid_t spawn_in(struct cgroup *cg, int mb)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (cgroup_join_self(cg) < 0)
			_exit(4);
		allocate(mb);
	}
	return pid;
}

static void test_oom_killed(void **state)
{
	(void)state;
	struct weir_error err = {0};
	int status;

	if (support.version == CGROUP_NONE)
		skip();
	struct cgroup *cg = cgroup_create(&support, "weir-test", name_for("oom"), 64, 1, &err);
	if (!cg)
		fail_msg("%s", err.msg);
	assert_int_equal(cgroup_memory_limit(cg), 64ull << 20);
	pid_t pid = spawn_in(cg, 256);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_true(cgroup_oom_kills(cg) >= 1);
	uint64_t peak = cgroup_peak_memory(cg);
	assert_true(peak >= (48ull << 20));
	assert_true(peak <= (64ull << 20));
	cgroup_destroy(cg);
}

static void test_under_limit(void **state)
{
	(void)state;
	struct weir_error err = {0};
	int status;

	if (support.version == CGROUP_NONE)
		skip();
	struct cgroup *cg = cgroup_create(&support, "weir-test", name_for("fits"), 256, 2, &err);
	if (!cg)
		fail_msg("%s", err.msg);
	pid_t pid = spawn_in(cg, 32);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(cgroup_oom_kills(cg), 0);
	assert_true(cgroup_peak_memory(cg) >= (32ull << 20));
	if (support.cpu && support.version == CGROUP_V1) {
		char path[600], buf[64] = "", period[64] = "";
		snprintf(path, sizeof path, "%s/weir-test/%s/cpu.cfs_quota_us", support.cpu_root,
		         name_for("fits"));
		FILE *f = fopen(path, "r");
		assert_non_null(f);
		assert_non_null(fgets(buf, sizeof buf, f));
		fclose(f);
		snprintf(path, sizeof path, "%s/weir-test/%s/cpu.cfs_period_us", support.cpu_root,
		         name_for("fits"));
		f = fopen(path, "r");
		assert_non_null(f);
		assert_non_null(fgets(period, sizeof period, f));
		fclose(f);
		assert_int_equal(atoll(buf), 2 * atoll(period));
	}
	cgroup_destroy(cg);
}

/* A v1 file of the group under `root`, as a number (0: unreadable). */
static long long group_value(const char *root, const char *name, const char *file)
{
	char path[600], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof path, "%s/weir-test/%s/%s", root, name, file);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof buf, f))
		buf[0] = '\0';
	fclose(f);
	return strtoll(buf, NULL, 10);
}

/* A v1 memory file of the group, as a number (0: unreadable). */
static unsigned long long v1_value(const char *name, const char *file)
{
	return (unsigned long long)group_value(support.memory_root, name, file);
}

/* The v1 CFS quota of the group (-1: none; 0: unreadable). */
static long long cpu_quota(const char *name)
{
	return group_value(support.cpu_root, name, "cpu.cfs_quota_us");
}

static void assert_v1_limits(const char *name, unsigned long long mb)
{
	if (support.version != CGROUP_V1)
		return;
	assert_int_equal(v1_value(name, "memory.limit_in_bytes"), mb << 20);
	if (support.memsw)
		assert_int_equal(v1_value(name, "memory.memsw.limit_in_bytes"), mb << 20);
}

/* The memory limit goes down and up again, on a new group and on one left
 * with a limit (memsw >= limit must hold at each write, or the kernel
 * refuses it). */
static void test_limits_down_and_up(void **state)
{
	(void)state;
	struct weir_error err = {0};
	char name[64];

	if (support.version == CGROUP_NONE)
		skip();
	snprintf(name, sizeof name, "%s", name_for("updown"));
	struct cgroup *cg = cgroup_create_empty(&support, "weir-test", name, &err);
	if (!cg)
		fail_msg("%s", err.msg);
	assert_int_equal(cgroup_set_limits(cg, 64, 1, &err), 0);
	assert_v1_limits(name, 64);
	assert_int_equal(cgroup_set_limits(cg, 256, 1, &err), 0);
	assert_v1_limits(name, 256);
	assert_int_equal(cgroup_set_limits(cg, 32, 1, &err), 0);
	assert_v1_limits(name, 32);
	cgroup_forget(cg);
	/* the same group again, its limit of before unknown to the new handle */
	cg = cgroup_create(&support, "weir-test", name, 512, 0, &err);
	if (!cg)
		fail_msg("%s", err.msg);
	assert_v1_limits(name, 512);
	assert_int_equal(cgroup_set_limits(cg, 16, 0, &err), 0);
	assert_v1_limits(name, 16);
	cgroup_destroy(cg);
}

/* A new v1 group WHAT-PID (into name) limited to 64 MiB and a core; the
 * test skipped without cgroup v1. */
static struct cgroup *v1_group_64mb(const char *what, char *name, size_t size)
{
	struct weir_error err = {0};

	if (support.version != CGROUP_V1)
		skip();
	snprintf(name, size, "%s", name_for(what));
	struct cgroup *cg = cgroup_create(&support, "weir-test", name, 64, 1, &err);
	if (!cg)
		fail_msg("%s", err.msg);
	return cg;
}

/* A group taken again (the agent's pool keeps them): what the task before
 * left, its OOM kill, its peak, its limit, does not carry over. */
static void test_reused_group_starts_clean(void **state)
{
	(void)state;
	struct weir_error err = {0};
	char name[64];
	int status;
	struct cgroup *cg = v1_group_64mb("again", name, sizeof name);
	pid_t pid = spawn_in(cg, 256);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_true(cgroup_oom_kills(cg) >= 1);
	assert_true(cgroup_peak_memory(cg) >= (48ull << 20));
	cgroup_forget(cg);

	/* the next task asks for no memory limit, only CPU */
	cg = cgroup_create_empty(&support, "weir-test", name, &err);
	if (!cg)
		fail_msg("%s", err.msg);
	assert_int_equal(cgroup_set_limits(cg, 0, 1, &err), 0);
	assert_int_equal(cgroup_oom_kills(cg), 0);
	assert_true(cgroup_peak_memory(cg) < (8ull << 20));
	assert_true(v1_value(name, "memory.limit_in_bytes") > (1ull << 40));
	pid = spawn_in(cg, 128); /* over the earlier limit: fits now */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(cgroup_oom_kills(cg), 0);
	assert_true(cgroup_peak_memory(cg) >= (100ull << 20));
	if (support.cpu) {
		/* the quota asked for again is kept; none asked for: lifted */
		assert_int_equal(cpu_quota(name), support.cpu_period_us);
		assert_int_equal(cgroup_set_limits(cg, 0, 2, &err), 0);
		assert_int_equal(cpu_quota(name), 2 * support.cpu_period_us);
		assert_int_equal(cgroup_set_limits(cg, 0, 0, &err), 0);
		assert_int_equal(cpu_quota(name), -1);
	}
	cgroup_destroy(cg);
}

/* A v1 file of the group under `root` written as a task in it could. */
static void group_write(const char *root, const char *name, const char *file, long long v)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof path, "%s/weir-test/%s/%s", root, name, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%lld", v);
	assert_int_equal(fclose(f), 0);
}

/* What a task may do to its own group: its limits raised (memsw first, so
 * memsw >= limit holds), its CPU quota too. */
static void raise_own_limits(const char *name)
{
	if (support.memsw)
		group_write(support.memory_root, name, "memory.memsw.limit_in_bytes", 512ll << 20);
	group_write(support.memory_root, name, "memory.limit_in_bytes", 512ll << 20);
	if (support.cpu)
		group_write(support.cpu_root, name, "cpu.cfs_quota_us", 4 * support.cpu_period_us);
}

/* A shim's group reset in place for its next task (cgroup_reset_own):
 * limits its task wrote itself do not stay for the next one. */
static void test_reset_own_after_its_task_changed_limits(void **state)
{
	(void)state;
	struct weir_error err = {0};
	char name[64];

	if (support.version != CGROUP_V1)
		skip();
	snprintf(name, sizeof name, "%s", name_for("own"));
	struct cgroup *cg = cgroup_create(&support, "weir-test", name, 64, 1, &err);
	if (!cg)
		fail_msg("%s", err.msg);
	assert_v1_limits(name, 64);
	/* the task raises its own limits */
	raise_own_limits(name);
	assert_int_equal(cgroup_reset_own(cg), 0);
	/* the next task asks for what the one before was given */
	assert_int_equal(cgroup_set_limits(cg, 64, 1, &err), 0);
	assert_v1_limits(name, 64);
	if (support.cpu)
		assert_int_equal(cpu_quota(name), support.cpu_period_us);
	/* and again with nothing changed: still right */
	assert_int_equal(cgroup_reset_own(cg), 0);
	assert_int_equal(cgroup_set_limits(cg, 32, 2, &err), 0);
	assert_v1_limits(name, 32);
	if (support.cpu)
		assert_int_equal(cpu_quota(name), 2 * support.cpu_period_us);
	/* the files the handle keeps open read what is there now: a task
	 * that raised its limits again, read through the same descriptors */
	raise_own_limits(name);
	assert_int_equal(cgroup_reset_own(cg), 0);
	assert_int_equal(cgroup_set_limits(cg, 32, 2, &err), 0);
	assert_v1_limits(name, 32);
	if (support.cpu)
		assert_int_equal(cpu_quota(name), 2 * support.cpu_period_us);
	cgroup_destroy(cg);
}

/* A shim's task OOM-killed, then its group reset in place: the count read
 * after the task (the group empty) is the next task's baseline, and a
 * kill in the next task is counted for it, read again through the same
 * descriptor. */
static void test_reset_own_after_an_oom_kill(void **state)
{
	(void)state;
	struct weir_error err = {0};
	char name[64];
	int status;
	struct cgroup *cg = v1_group_64mb("ownoom", name, sizeof name);
	for (int task = 0; task < 2; task++) {
		pid_t pid = spawn_in(cg, 256);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(cgroup_kill_all(cg), 0); /* as the supervisor does at the end */
		assert_true(cgroup_oom_kills(cg) >= 1);
		assert_int_equal(cgroup_reset_own(cg), 0);
		assert_int_equal(cgroup_set_limits(cg, 64, 1, &err), 0);
		assert_int_equal(cgroup_oom_kills(cg), 0);
	}
	/* a task that fits: none */
	pid_t pid = spawn_in(cg, 8);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(cgroup_oom_kills(cg), 0);
	cgroup_destroy(cg);
}

static void test_kill_all(void **state)
{
	(void)state;
	struct weir_error err = {0};

	if (support.version == CGROUP_NONE)
		skip();
	struct cgroup *cg = cgroup_create(&support, "weir-test", name_for("kill"), 128, 0, &err);
	if (!cg)
		fail_msg("%s", err.msg);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cgroup_join_self(cg);
		/* a grandchild in a new session, out of reach of a process group kill */
		execl("/bin/sh", "sh", "-c", "setsid sleep 60 & sleep 60", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && cgroup_count_procs(cg) < 2; i++)
		usleep(10000);
	assert_true(cgroup_count_procs(cg) >= 2);
	assert_false(cgroup_take_emptied(cg)); /* no kill yet */
	assert_int_equal(cgroup_kill_all(cg), 0);
	assert_int_equal(cgroup_count_procs(cg), 0);
	/* the kill's last look found it empty; the note is used once */
	assert_true(cgroup_take_emptied(cg));
	assert_false(cgroup_take_emptied(cg));
	assert_int_equal(cgroup_kill_all(cg), 0);
	assert_int_equal(cgroup_set_limits(cg, 128, 0, &err), 0);
	assert_false(cgroup_take_emptied(cg)); /* a start came since */
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	cgroup_destroy(cg);
}

static void test_pgroup_rss(void **state)
{
	(void)state;
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		char *p = malloc(64 << 20);
		for (int j = 0; p && j < (64 << 20); j += 4096)
			p[j] = 1;
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c;
	setpgid(pid, pid);
	assert_int_equal(read(fds[0], &c, 1), 1);
	assert_true(cgroup_pgroup_rss(pid) >= (64ull << 20));
	assert_int_equal(cgroup_pgroup_rss(999999999), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	char line[512];
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_oom_killed),
	    cmocka_unit_test(test_reset_own_after_an_oom_kill),
	    cmocka_unit_test(test_under_limit),
	    cmocka_unit_test(test_limits_down_and_up),
	    cmocka_unit_test(test_reused_group_starts_clean),
	    cmocka_unit_test(test_reset_own_after_its_task_changed_limits),
	    cmocka_unit_test(test_kill_all),
	    cmocka_unit_test(test_pgroup_rss),
	};
	cgroup_detect(&support);
	fprintf(stderr, "test_cgroup: %s\n", cgroup_describe(&support, line, sizeof line));
	if (support.version == CGROUP_NONE)
		fprintf(stderr,
		        "test_cgroup: no writable cgroup here; the cgroup tests are skipped\n");
	int rc = cmocka_run_group_tests_name("launch/cgroup", tests, NULL, NULL);
	if (support.version != CGROUP_NONE) {
		snprintf(line, sizeof line, "%s/weir-test", support.memory_root);
		rmdir(line);
		snprintf(line, sizeof line, "%s/weir-test", support.cpu_root);
		rmdir(line);
	}
	return rc;
}
