/* cgroup_cost.c: what a memory cgroup adds to starting a task, measured
 * without weir: N times fork + exec of /bin/true, plain, then with a fresh
 * cgroup v1 memory group per task (mkdir, a limit, the child joining it
 * before exec, rmdir), optionally with a pause between tasks (a DAG chain
 * starts one task at a time).  Needs root and a writable cgroup v1 memory
 * hierarchy at /sys/fs/cgroup/memory; prints "skipped" otherwise.
 *
 *   cc -O2 -o cgroup_cost bench/cgroup_cost.c && ./cgroup_cost [N] [PAUSE_MS]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/* Milliseconds per task, the pauses left out; -1 when cgroups are not writable. */
static double run(int n, int pause_ms, int with_cgroup)
{
	struct timespec pause = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
	double spent = 0;

	for (int i = 0; i < n; i++) {
		char dir[128], file[192];
		int procs = -1;
		double t0 = now_ms();
		snprintf(dir, sizeof dir, "/sys/fs/cgroup/memory/weir-bench-%d-%d", (int)getpid(), i);
		if (with_cgroup) {
			snprintf(file, sizeof file, "%s/memory.limit_in_bytes", dir);
			if (mkdir(dir, 0755) < 0 || write_file(file, "67108864") < 0)
				return -1;
			snprintf(file, sizeof file, "%s/cgroup.procs", dir);
			procs = open(file, O_WRONLY | O_CLOEXEC);
		}
		pid_t pid = fork();
		if (pid == 0) {
			if (procs >= 0 && write(procs, "0", 1) != 1)
				_exit(125);
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (procs >= 0)
			close(procs);
		waitpid(pid, NULL, 0);
		if (with_cgroup)
			rmdir(dir);
		spent += now_ms() - t0;
		if (pause_ms > 0)
			nanosleep(&pause, NULL);
	}
	return spent / n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	int pause_ms = argc > 2 ? atoi(argv[2]) : 0;
	double plain = run(n, pause_ms, 0);
	double cg = run(n, pause_ms, 1);

	printf("fork + exec of true, %d tasks, %d ms apart\n", n, pause_ms);
	printf("  plain                              %.3f ms per task\n", plain);
	if (cg < 0)
		printf("  with a memory cgroup per task      skipped: no writable cgroup v1 memory\n");
	else
		printf("  with a memory cgroup per task      %.3f ms per task (+%.3f ms)\n", cg,
		       cg - plain);
	return 0;
}
