/* proc.c: /proc/PID/stat, parsed once for every caller. */
#include "lib/proc.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int proc_read_stat(int pid, struct proc_stat *out)
{
	static long page;
	char path[64], buf[1024];
	long long rss = 0, start = 0;

	if (!page)
		page = sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	/* The command name (field 2) may hold spaces and ')': fields resume
	 * after the last ')'. */
	char *p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2, "%c %d %d %d", &out->state, &out->ppid, &out->pgrp, &out->session) != 4)
		return -1;
	/* starttime is field 22, rss field 24; p + 2 is field 3 */
	int field = 3;
	for (char *q = p + 2; *q && field < 24; q++) {
		if (*q != ' ')
			continue;
		if (++field == 22)
			start = atoll(q + 1);
		else if (field == 24)
			rss = atoll(q + 1);
	}
	out->pid = pid;
	out->rss_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)page : 0;
	out->start_ticks = start > 0 ? (uint64_t)start : 0;
	return 0;
}

void proc_each(proc_visit_fn fn, void *arg)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	struct proc_stat ps;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (proc_read_stat(atoi(de->d_name), &ps) == 0 && fn(&ps, arg) != 0)
			break;
	}
	closedir(d);
}

struct session_kill {
	int sid;
	int self;
	int killed;
};

static int kill_if_in_session(const struct proc_stat *p, void *arg)
{
	struct session_kill *k = arg;
	if (p->session == k->sid && p->pid != k->self && p->pid > 1 && kill(p->pid, SIGKILL) == 0)
		k->killed++;
	return 0;
}

int proc_kill_session(int sid)
{
	struct session_kill k = {sid, (int)getpid(), 0};

	if (sid <= 1)
		return 0;
	proc_each(kill_if_in_session, &k);
	return k.killed;
}

int proc_self_path(char *buf, size_t size)
{
	if (size < 2)
		return -1;
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	if (n <= 0 || (size_t)n >= size - 1)
		return -1;
	buf[n] = '\0';
	return 0;
}

int proc_self_sibling(const char *name, char *buf, size_t size)
{
	if (proc_self_path(buf, size) < 0)
		return -1;
	char *slash = strrchr(buf, '/');
	size_t dir = slash ? (size_t)(slash - buf) + 1 : 0;
	int n = snprintf(buf + dir, size - dir, "%s", name);
	return n < 0 || (size_t)n >= size - dir ? -1 : 0;
}
