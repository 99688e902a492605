/* resources.c: detecting the local node's vcores, memory and GPUs. */
#include "server/resources.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_small(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t got;

	if (!f)
		return -1;
	got = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[got] = '\0';
	return 0;
}

int resources_parse_cpu_max(const char *text)
{
	long long quota, period;

	if (!text || !strncmp(text, "max", 3))
		return 0;
	if (sscanf(text, "%lld %lld", &quota, &period) != 2 || quota <= 0 || period <= 0)
		return 0;
	return (int)((quota + period - 1) / period);
}

uint64_t resources_parse_meminfo(const char *text)
{
	const char *p = text ? strstr(text, "MemTotal:") : NULL;
	unsigned long long kb;

	if (!p || sscanf(p + 9, " %llu", &kb) != 1)
		return 0;
	return kb / 1024;
}

uint64_t resources_parse_memory_limit(const char *text)
{
	unsigned long long bytes;

	if (!text || !strncmp(text, "max", 3))
		return 0;
	if (sscanf(text, "%llu", &bytes) != 1)
		return 0;
	/* cgroup v1 says "no limit" with a huge page-rounded number */
	if (bytes >= (1ULL << 60))
		return 0;
	return bytes / (1024 * 1024);
}

/* The cgroup v2 directory of this process, or "" when on v1 / unknown. */
static void own_cgroup2_dir(char *out, size_t size)
{
	char buf[4096];
	char *line, *save;

	out[0] = '\0';
	if (read_small("/proc/self/cgroup", buf, sizeof buf) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "0::", 3)) {
			snprintf(out, size, "/sys/fs/cgroup%s", line + 3);
			return;
		}
}

int resources_detect_vcores(void)
{
	cpu_set_t set;
	int n = 0, q = 0;
	char dir[4200], path[4300], buf[256];

	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c > 0 ? (int)c : 1;
	}
	own_cgroup2_dir(dir, sizeof dir);
	if (dir[0]) {
		snprintf(path, sizeof path, "%s/cpu.max", dir);
		if (read_small(path, buf, sizeof buf) == 0)
			q = resources_parse_cpu_max(buf);
	} else {
		char b2[64];
		if (read_small("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", buf, sizeof buf) == 0 &&
		    read_small("/sys/fs/cgroup/cpu/cpu.cfs_period_us", b2, sizeof b2) == 0) {
			char both[200];
			snprintf(both, sizeof both, "%lld %lld", atoll(buf), atoll(b2));
			q = resources_parse_cpu_max(both);
		}
	}
	if (q > 0 && q < n)
		n = q;
	return n > 0 ? n : 1;
}

uint64_t resources_detect_memory_mb(void)
{
	char buf[8192], dir[4200], path[4300];
	uint64_t total = 0, lim = 0;

	if (read_small("/proc/meminfo", buf, sizeof buf) == 0)
		total = resources_parse_meminfo(buf);
	own_cgroup2_dir(dir, sizeof dir);
	if (dir[0]) {
		snprintf(path, sizeof path, "%s/memory.max", dir);
		if (read_small(path, buf, sizeof buf) == 0)
			lim = resources_parse_memory_limit(buf);
	} else if (read_small("/sys/fs/cgroup/memory/memory.limit_in_bytes", buf, sizeof buf) ==
	           0) {
		lim = resources_parse_memory_limit(buf);
	}
	if (lim > 0 && (total == 0 || lim < total))
		total = lim;
	return total;
}

static int cmp_ids(const void *a, const void *b)
{
	return atoi(*(char *const *)a) - atoi(*(char *const *)b);
}

void resources_free_ids(char **ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

int resources_detect_gpus(char ***ids, size_t *n)
{
	DIR *d;
	struct dirent *de;
	size_t count = 0;
	char **v = NULL;

	*ids = NULL;
	*n = 0;
	/* the driver lists one entry per GPU (named by PCI address) */
	d = opendir("/proc/driver/nvidia/gpus");
	if (d) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				count++;
		closedir(d);
	}
	if (count == 0) {
		d = opendir("/dev");
		if (d) {
			while ((de = readdir(d))) {
				const char *s = de->d_name;
				if (strncmp(s, "nvidia", 6) || !s[6])
					continue;
				if (strspn(s + 6, "0123456789") == strlen(s + 6))
					count++;
			}
			closedir(d);
		}
	}
	if (count == 0)
		return 0;
	v = calloc(count, sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < count; i++) {
		char b[24];
		snprintf(b, sizeof b, "%zu", i);
		v[i] = strdup(b);
		if (!v[i]) {
			resources_free_ids(v, i);
			return -1;
		}
	}
	qsort(v, count, sizeof *v, cmp_ids);
	*ids = v;
	*n = count;
	return 0;
}
