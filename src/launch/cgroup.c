/* cgroup.c: per-task memory and CPU limits on cgroup v1 or v2, peak memory
 * and OOM detection, killing a group, and the /proc RSS fallback. */
#include "launch/cgroup.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/proc.h"

#define CG_PATH_MAX 512
#define CG_FILES_MAX 12

struct cgroup {
	enum cgroup_version version;
	char mem_dir[CG_PATH_MAX]; /* v2: the one directory */
	char cpu_dir[CG_PATH_MAX]; /* v1 only; "" when no cpu group */
	int mem_procs_fd;          /* cgroup.procs, opened for cgroup_join_self */
	int cpu_procs_fd;
	uint64_t memory_limit;
	bool memsw;               /* v1: memory.memsw.limit_in_bytes exists */
	long cpu_period_us;       /* v1: the group's CFS period */
	uint64_t limit_in_force;  /* v1: memory.limit_in_bytes now; 0: not known */
	bool reused;              /* the group was there: limits not asked for are lifted */
	int oom_base;             /* OOM kills counted before this handle (a reused group) */
	long long quota_in_force; /* v1: cpu.cfs_quota_us as this handle set it; 0: not known */
	bool emptied; /* the last cgroup_kill_all found none but the caller (cgroup_take_emptied) */
	/* the process that made the handle, which alone uses it (a shim born
	 * in its group is in cgroup.procs too): no getpid a read of the list */
	pid_t self;
	/* memory.oom_control's (memory.events') count as read while the group
	 * held none but the caller, and nothing since: the reset in place
	 * takes it instead of reading the file again (no process, no kill) */
	bool oom_read_empty;
	int oom_read;
	/* the group's files this handle read or wrote, kept open: a shim of
	 * the pool reads and writes the same ones task after task, and a
	 * cgroup file read again from offset 0 says what it says now (not
	 * cgroup.procs: v1 keeps its list for the descriptor a while) */
	struct cg_file {
		const char *dir; /* mem_dir or cpu_dir; NULL: a free slot */
		const char *file;
		int flags;
		int fd;
	} files[CG_FILES_MAX];
};

/* v1's "no limit" of a new group (PAGE_COUNTER_MAX pages, page-rounded) is
 * above any limit we write. */
#define V1_NO_LIMIT UINT64_MAX

static int write_text(const char *dir, const char *file, const char *text)
{
	char path[CG_PATH_MAX + 64];
	int fd, rc = 0;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	if (write(fd, text, n) != (ssize_t)n)
		rc = -1;
	if (close(fd) < 0)
		rc = -1;
	return rc;
}

static int read_text(const char *dir, const char *file, char *buf, size_t size)
{
	char path[CG_PATH_MAX + 64];
	int fd;
	ssize_t got;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	got = read(fd, buf, size - 1);
	close(fd);
	if (got < 0)
		return -1;
	buf[got] = '\0';
	return 0;
}

/* The handle's descriptor for dir/file opened with `flags`, opened now if
 * none is kept (`file` a string constant); -1 (errno). */
static int cg_file_fd(struct cgroup *cg, const char *dir, const char *file, int flags)
{
	char path[CG_PATH_MAX + 64];
	struct cg_file *free_slot = NULL;

	for (int i = 0; i < CG_FILES_MAX; i++) {
		struct cg_file *f = &cg->files[i];
		if (f->dir == dir && f->flags == flags && !strcmp(f->file, file))
			return f->fd;
		if (!f->dir && !free_slot)
			free_slot = f;
	}
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, flags | O_CLOEXEC);
	if (fd >= 0 && free_slot)
		*free_slot = (struct cg_file){dir, file, flags, fd};
	return fd;
}

/* A kept descriptor that failed is closed (its group may be gone and made
 * again: the next use opens the file anew); one not kept, too. */
static void cg_file_drop(struct cgroup *cg, int fd)
{
	for (int i = 0; i < CG_FILES_MAX; i++)
		if (cg->files[i].dir && cg->files[i].fd == fd)
			cg->files[i].dir = NULL;
	close(fd);
}

static bool cg_file_kept(const struct cgroup *cg, int fd)
{
	for (int i = 0; i < CG_FILES_MAX; i++)
		if (cg->files[i].dir && cg->files[i].fd == fd)
			return true;
	return false;
}

static void cg_files_close(struct cgroup *cg)
{
	for (int i = 0; i < CG_FILES_MAX; i++)
		if (cg->files[i].dir) {
			close(cg->files[i].fd);
			cg->files[i].dir = NULL;
		}
}

/* One pwrite (`write`) or pread at offset 0 of dir/file through the
 * handle's kept descriptor, once more on a fresh one when the kept one's
 * group is gone (ENODEV: removed and made again since).  The bytes, or -1. */
static ssize_t cg_io(struct cgroup *cg, const char *dir, const char *file, bool write, void *buf,
                     size_t n)
{
	for (int tries = 0; tries < 2; tries++) {
		int fd = cg_file_fd(cg, dir, file, write ? O_WRONLY : O_RDONLY);
		if (fd < 0)
			return -1;
		bool kept = cg_file_kept(cg, fd);
		ssize_t got = write ? pwrite(fd, buf, n, 0) : pread(fd, buf, n, 0);
		if (got >= 0) {
			if (!kept)
				close(fd);
			return got;
		}
		int e = errno;
		cg_file_drop(cg, fd);
		errno = e;
		if (!kept || e != ENODEV)
			return -1;
	}
	return -1;
}

/* write_text and read_text through the handle's kept descriptors: the
 * same result, without an open and a close each time. */
static int cg_write(struct cgroup *cg, const char *dir, const char *file, const char *text)
{
	size_t n = strlen(text);

	return cg_io(cg, dir, file, true, (void *)text, n) == (ssize_t)n ? 0 : -1;
}

static int cg_read(struct cgroup *cg, const char *dir, const char *file, char *buf, size_t size)
{
	ssize_t got = cg_io(cg, dir, file, false, buf, size - 1);

	if (got < 0)
		return -1;
	buf[got] = '\0';
	return 0;
}

static int has_file(const char *dir, const char *file)
{
	char path[CG_PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return access(path, F_OK) == 0;
}

/* Whether a comma-separated mount option list holds `word`. */
static int has_option(const char *opts, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = opts; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, word, n))
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/* Whether a space-separated list (cgroup.controllers) holds `word`. */
static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; *p;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		const char *s = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if ((size_t)(p - s) == n && !strncmp(s, word, n))
			return 1;
	}
	return 0;
}

static int make_parent(const char *root, const char *parent)
{
	char dir[CG_PATH_MAX];
	snprintf(dir, sizeof dir, "%s/%s", root, parent);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	return access(dir, W_OK) == 0 ? 0 : -1;
}

static int detect_v2(const char *mnt, struct cgroup_support *s)
{
	char ctl[512], dir[CG_PATH_MAX];

	if (read_text(mnt, "cgroup.controllers", ctl, sizeof ctl) < 0 || !has_word(ctl, "memory"))
		return -1;
	/* Enable the controllers for our parent and for the tasks below it. */
	write_text(mnt, "cgroup.subtree_control",
	           has_word(ctl, "cpu") ? "+memory +cpu" : "+memory");
	if (make_parent(mnt, "weir") < 0)
		return -1;
	snprintf(dir, sizeof dir, "%s/weir", mnt);
	write_text(dir, "cgroup.subtree_control",
	           has_word(ctl, "cpu") ? "+memory +cpu" : "+memory");
	if (read_text(dir, "cgroup.subtree_control", ctl, sizeof ctl) < 0 ||
	    !has_word(ctl, "memory"))
		return -1;
	s->version = CGROUP_V2;
	s->memory = true;
	s->cpu = has_word(ctl, "cpu");
	snprintf(s->memory_root, sizeof s->memory_root, "%s", mnt);
	snprintf(s->cpu_root, sizeof s->cpu_root, "%s", mnt);
	return 0;
}

enum cgroup_version cgroup_detect(struct cgroup_support *s)
{
	char v1_mem[256] = "", v1_cpu[256] = "", v2[256] = "";
	char line[1024];
	FILE *f;

	memset(s, 0, sizeof *s);
	const char *force = getenv("WEIR_CGROUP");
	if (force && !strcmp(force, "none")) {
		snprintf(s->why, sizeof s->why, "disabled by WEIR_CGROUP=none");
		return CGROUP_NONE;
	}
	f = fopen("/proc/self/mounts", "re");
	if (!f) {
		snprintf(s->why, sizeof s->why, "/proc/self/mounts unreadable");
		return CGROUP_NONE;
	}
	while (fgets(line, sizeof line, f)) {
		char dev[256], mnt[256], type[64], opts[512];
		if (sscanf(line, "%255s %255s %63s %511s", dev, mnt, type, opts) != 4)
			continue;
		if (!strcmp(type, "cgroup2") && !v2[0])
			snprintf(v2, sizeof v2, "%s", mnt);
		else if (!strcmp(type, "cgroup") && has_option(opts, "memory") && !v1_mem[0])
			snprintf(v1_mem, sizeof v1_mem, "%s", mnt);
		else if (!strcmp(type, "cgroup") && has_option(opts, "cpu") && !v1_cpu[0])
			snprintf(v1_cpu, sizeof v1_cpu, "%s", mnt);
	}
	fclose(f);
	if (v2[0] && detect_v2(v2, s) == 0)
		return s->version;
	if (v1_mem[0] && make_parent(v1_mem, "weir") == 0) {
		s->version = CGROUP_V1;
		s->memory = true;
		snprintf(s->memory_root, sizeof s->memory_root, "%s", v1_mem);
		char wdir[CG_PATH_MAX];
		snprintf(wdir, sizeof wdir, "%s/weir", v1_mem);
		s->memsw = has_file(wdir, "memory.memsw.limit_in_bytes");
		if (v1_cpu[0] && make_parent(v1_cpu, "weir") == 0) {
			char dir[CG_PATH_MAX], period[64];
			s->cpu = true;
			snprintf(s->cpu_root, sizeof s->cpu_root, "%s", v1_cpu);
			/* a new group's period is the kernel's default, as the parent's */
			snprintf(dir, sizeof dir, "%s/weir", v1_cpu);
			s->cpu_period_us =
			    read_text(dir, "cpu.cfs_period_us", period, sizeof period) == 0
			        ? atol(period)
			        : 0;
		}
		if (s->cpu_period_us <= 0)
			s->cpu_period_us = 100000;
		return s->version;
	}
	snprintf(s->why, sizeof s->why, "%s",
	         v2[0] || v1_mem[0] ? "cgroup memory controller not writable by this user"
	                            : "no cgroup memory controller mounted");
	return CGROUP_NONE;
}

const char *cgroup_task_name(char *buf, size_t size, long long job, int attempt, const char *role,
                             int index, pid_t pid)
{
	snprintf(buf, size, "%lld-%d-%s-%d-%ld", job, attempt, role, index, (long)pid);
	return buf;
}

const char *cgroup_describe(const struct cgroup_support *s, char *buf, size_t size)
{
	if (s->version == CGROUP_NONE)
		snprintf(buf, size,
		         "no writable cgroup (%s): memory enforced by polling RSS every 100 ms, "
		         "no CPU quota",
		         s->why);
	else
		snprintf(buf, size, "cgroup v%d (memory at %s%s%s)", (int)s->version,
		         s->memory_root, s->cpu ? ", cpu quota at " : ", no cpu quota",
		         s->cpu ? s->cpu_root : "");
	return buf;
}

static int open_procs(const char *dir)
{
	char path[CG_PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	return open(path, O_WRONLY | O_CLOEXEC);
}

/* 0 with *made true when the group is new, false when it was there. */
static int make_group(const char *root, const char *parent, const char *name, char *out,
                      size_t size, bool *made)
{
	if ((size_t)snprintf(out, size, "%s/%s/%s", root, parent, name) >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	char pdir[CG_PATH_MAX];
	snprintf(pdir, sizeof pdir, "%s/%s", root, parent);
	*made = mkdir(out, 0755) == 0;
	if (!*made && errno == ENOENT) {
		/* the parent first (gone since cgroup_detect made it) */
		if (mkdir(pdir, 0755) < 0 && errno != EEXIST)
			return -1;
		*made = mkdir(out, 0755) == 0;
	}
	return *made || errno == EEXIST ? 0 : -1;
}

/* A group that was there (the pool's, taken again; a dead launcher's):
 * emptied, and what its earlier tasks left is not counted for the next:
 * the peak watermarks reset (v1: the kernel starts them again at the usage
 * now, which is why the pool keeps only groups that hold little,
 * cgroup_usage_named), and the OOM kills so far kept as the baseline (v1
 * and v2 count them for the group's life; v2's memory.peak cannot be
 * reset, so a reused v2 group's peak is its life's).  No force_empty: on
 * pages it cannot reclaim (tmpfs without swap) it retries for 0.4 ms. */
static void reset_reused(struct cgroup *cg)
{
	cg->reused = true;
	cgroup_kill_all(cg);
	if (cg->version == CGROUP_V1) {
		cg_write(cg, cg->mem_dir, "memory.max_usage_in_bytes", "0");
		if (cg->memsw)
			cg_write(cg, cg->mem_dir, "memory.memsw.max_usage_in_bytes", "0");
	}
	int kills = cgroup_oom_kills(cg);
	cg->oom_base = kills > 0 ? kills : 0;
}

/* The memory limit and the CPU quota of a made group (cg->cpu_dir "": no
 * CPU quota can be set).  0 or -1 with err. */
static int set_limits(struct cgroup *cg, uint64_t memory_mb, int vcores, struct weir_error *err)
{
	char num[64];

	cg->memory_limit = memory_mb * 1024 * 1024;
	if (memory_mb > 0 || cg->reused) {
		/* none asked for, on a reused group: the earlier task's lifted */
		if (memory_mb > 0)
			snprintf(num, sizeof num, "%llu", (unsigned long long)cg->memory_limit);
		else
			snprintf(num, sizeof num, "%s", cg->version == CGROUP_V1 ? "-1" : "max");
		uint64_t want = memory_mb > 0 ? cg->memory_limit : V1_NO_LIMIT;
		int rc;
		if (cg->version == CGROUP_V1 && cg->limit_in_force == want) {
			/* set so by this handle (a shim's group reset in place,
			 * cgroup_reset_own): nothing to write */
			rc = 0;
		} else if (cg->version == CGROUP_V1 && cg->memsw) {
			/* memsw >= limit at every moment: down, the limit first; up,
			 * memsw.  Not known (a reused group): not read either, the
			 * limit first, which holds when a fan-out's tasks ask for
			 * the same, and the other order on EINVAL */
			uint64_t now = cg->limit_in_force ? cg->limit_in_force : V1_NO_LIMIT;
			const char *first =
			    want <= now ? "memory.limit_in_bytes" : "memory.memsw.limit_in_bytes";
			const char *second =
			    want <= now ? "memory.memsw.limit_in_bytes" : "memory.limit_in_bytes";
			rc = cg_write(cg, cg->mem_dir, first, num);
			if (rc < 0 && errno == EINVAL) {
				/* the limit in force was not what we thought: the
				 * other order */
				const char *t = first;
				first = second;
				second = t;
				rc = cg_write(cg, cg->mem_dir, first, num);
			}
			if (rc == 0)
				rc = cg_write(cg, cg->mem_dir, second, num);
		} else if (cg->version == CGROUP_V1) {
			rc = cg_write(cg, cg->mem_dir, "memory.limit_in_bytes", num);
		} else {
			rc = cg_write(cg, cg->mem_dir, "memory.max", num);
			cg_write(cg, cg->mem_dir, "memory.swap.max", "0");
		}
		if (rc == 0)
			cg->limit_in_force = want;
		if (rc < 0)
			return weir_error_set(err, WEIR_E_INTERNAL,
			                      "cgroup %s: cannot set memory limit %s: %s",
			                      cg->mem_dir, num, strerror(errno));
	}
	if ((vcores > 0 || cg->reused) && cg->version == CGROUP_V1 && cg->cpu_dir[0]) {
		char cur[64];
		if (vcores > 0)
			snprintf(num, sizeof num, "%lld", (long long)cg->cpu_period_us * vcores);
		else
			snprintf(num, sizeof num, "-1");
		/* a reused group's quota is most often the one asked for again:
		 * a read is cheaper than the kernel's bandwidth update (its
		 * locks are shared by every group being set at once) */
		bool same = cg->quota_in_force ? cg->quota_in_force == atoll(num)
		                               : cg->reused &&
		                                     cg_read(cg, cg->cpu_dir, "cpu.cfs_quota_us",
		                                             cur, sizeof cur) == 0 &&
		                                     atoll(cur) == atoll(num);
		if (!same && cg_write(cg, cg->cpu_dir, "cpu.cfs_quota_us", num) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL,
			                      "cgroup %s: cannot set cpu quota: %s", cg->cpu_dir,
			                      strerror(errno));
		cg->quota_in_force = atoll(num);
	} else if ((vcores > 0 || cg->reused) && cg->version == CGROUP_V2 && cg->cpu_dir[0]) {
		if (vcores > 0)
			snprintf(num, sizeof num, "%lld 100000", 100000LL * vcores);
		else
			snprintf(num, sizeof num, "max 100000");
		if (cg_write(cg, cg->mem_dir, "cpu.max", num) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL,
			                      "cgroup %s: cannot set cpu.max: %s", cg->mem_dir,
			                      strerror(errno));
	}
	return 0;
}

/* PARENT/NAME under the memory controller, and the cpu one when `cpu`
 * (v2: the same directory; cpu_dir then only says a quota can be set). */
static struct cgroup *make_groups(const struct cgroup_support *s, const char *parent,
                                  const char *name, bool cpu, struct weir_error *err)
{
	struct cgroup *cg;
	bool made;

	if (s->version == CGROUP_NONE) {
		weir_error_set(err, WEIR_E_UNAVAILABLE, "cgroup: none writable (%s)", s->why);
		return NULL;
	}
	if (!name[0] || strchr(name, '/') || !strcmp(name, "..")) {
		weir_error_set(err, WEIR_E_INVALID,
		               "cgroup name \"%s\": expected one path component", name);
		return NULL;
	}
	cg = calloc(1, sizeof *cg);
	if (!cg) {
		weir_error_set(err, WEIR_E_INTERNAL, "cgroup: out of memory");
		return NULL;
	}
	cg->version = s->version;
	cg->self = getpid();
	cg->mem_procs_fd = cg->cpu_procs_fd = -1;
	cg->memsw = s->memsw;
	cg->cpu_period_us = s->cpu_period_us > 0 ? s->cpu_period_us : 100000;
	if (make_group(s->memory_root, parent, name, cg->mem_dir, sizeof cg->mem_dir, &made) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "cgroup %s/%s/%s: cannot create: %s",
		               s->memory_root, parent, name, strerror(errno));
		goto fail;
	}
	/* A group left by a launcher that died is reused, emptied first; a
	 * new one has no process and no limit yet. */
	if (made)
		cg->limit_in_force = V1_NO_LIMIT;
	else
		reset_reused(cg);
	if (cpu && s->cpu && s->version == CGROUP_V1 &&
	    make_group(s->cpu_root, parent, name, cg->cpu_dir, sizeof cg->cpu_dir, &made) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "cgroup %s/%s/%s: cannot create: %s",
		               s->cpu_root, parent, name, strerror(errno));
		goto fail;
	}
	if (cpu && s->cpu && s->version == CGROUP_V2)
		snprintf(cg->cpu_dir, sizeof cg->cpu_dir, "%s", cg->mem_dir);
	cg->mem_procs_fd = open_procs(cg->mem_dir);
	if (cg->mem_procs_fd < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "cgroup %s: cannot open cgroup.procs: %s",
		               cg->mem_dir, strerror(errno));
		goto fail;
	}
	if (cg->version == CGROUP_V1 && cg->cpu_dir[0])
		cg->cpu_procs_fd = open_procs(cg->cpu_dir);
	return cg;
fail:
	cgroup_destroy(cg);
	return NULL;
}

struct cgroup *cgroup_create(const struct cgroup_support *s, const char *parent, const char *name,
                             uint64_t memory_mb, int vcores, struct weir_error *err)
{
	struct cgroup *cg = make_groups(s, parent, name, vcores > 0, err);

	if (cg && set_limits(cg, memory_mb, vcores, err) < 0) {
		cgroup_destroy(cg);
		return NULL;
	}
	return cg;
}

struct cgroup *cgroup_create_empty(const struct cgroup_support *s, const char *parent,
                                   const char *name, struct weir_error *err)
{
	return make_groups(s, parent, name, true, err);
}

int cgroup_set_limits(struct cgroup *cg, uint64_t memory_mb, int vcores, struct weir_error *err)
{
	cg->emptied = false;
	cg->oom_read_empty = false;
	return set_limits(cg, memory_mb, vcores, err);
}

/* A v1 limit file as a number: V1_NO_LIMIT for the kernel's "none"
 * (PAGE_COUNTER_MAX pages), 0 when it cannot be read. */
static uint64_t v1_limit(struct cgroup *cg, const char *file)
{
	char buf[64];

	if (cg_read(cg, cg->mem_dir, file, buf, sizeof buf) < 0)
		return 0;
	unsigned long long v = strtoull(buf, NULL, 10);
	return v >= (1ull << 62) ? V1_NO_LIMIT : (uint64_t)v;
}

static int oom_count(struct cgroup *cg);

int cgroup_reset_own(struct cgroup *cg)
{
	cg->emptied = false;
	if (cg->version != CGROUP_V1)
		return -1;
	cg->reused = true;
	/* the limits in force from the kernel, not from what this handle set:
	 * the task may have written its group's files (the agent's user owns
	 * them), and the next task must get what it asks for */
	uint64_t limit = v1_limit(cg, "memory.limit_in_bytes");
	if (cg->memsw && v1_limit(cg, "memory.memsw.limit_in_bytes") != limit)
		limit = 0; /* not known: set_limits finds the order that holds */
	cg->limit_in_force = limit;
	cg->quota_in_force = 0; /* read again by set_limits (a reused group) */
	if (cg_write(cg, cg->mem_dir, "memory.max_usage_in_bytes", "0") < 0)
		return -1;
	if (cg->memsw)
		cg_write(cg, cg->mem_dir, "memory.memsw.max_usage_in_bytes", "0");
	/* the count read after its task, the group empty since (no process:
	 * no kill), else read now */
	int count = cg->oom_read_empty ? cg->oom_read : oom_count(cg);
	cg->oom_read_empty = false;
	int kills = count < 0 ? -1 : count - cg->oom_base; /* less the old baseline */
	if (kills > 0)
		cg->oom_base += kills;
	return 0;
}

void cgroup_forget(struct cgroup *cg)
{
	if (!cg)
		return;
	cg_files_close(cg);
	if (cg->mem_procs_fd >= 0)
		close(cg->mem_procs_fd);
	if (cg->cpu_procs_fd >= 0)
		close(cg->cpu_procs_fd);
	free(cg);
}

int cgroup_move_self_to(const struct cgroup_support *s, const char *parent)
{
	char dir[CG_PATH_MAX];
	int rc = 0;

	snprintf(dir, sizeof dir, "%s/%s", s->memory_root, parent);
	rc |= write_text(dir, "cgroup.procs", "0");
	if (s->version == CGROUP_V1 && s->cpu) {
		snprintf(dir, sizeof dir, "%s/%s", s->cpu_root, parent);
		rc |= write_text(dir, "cgroup.procs", "0");
	}
	return rc ? -1 : 0;
}

int cgroup_remove_named(const struct cgroup_support *s, const char *parent, const char *name)
{
	char dir[CG_PATH_MAX];
	int rc = 0;

	snprintf(dir, sizeof dir, "%s/%s/%s", s->memory_root, parent, name);
	if (rmdir(dir) < 0 && errno != ENOENT)
		rc = -1;
	if (s->version == CGROUP_V1 && s->cpu) {
		snprintf(dir, sizeof dir, "%s/%s/%s", s->cpu_root, parent, name);
		if (rmdir(dir) < 0 && errno != ENOENT)
			rc = -1;
	}
	return rc;
}

static uint64_t usage_of(const char *text)
{
	return text ? strtoull(text, NULL, 10) : UINT64_MAX;
}

#define USAGE_FILE(v) ((v) == CGROUP_V1 ? "memory.usage_in_bytes" : "memory.current")

uint64_t cgroup_usage_named(const struct cgroup_support *s, const char *parent, const char *name)
{
	char dir[CG_PATH_MAX], buf[64];

	snprintf(dir, sizeof dir, "%s/%s/%s", s->memory_root, parent, name);
	return usage_of(read_text(dir, USAGE_FILE(s->version), buf, sizeof buf) < 0 ? NULL : buf);
}

uint64_t cgroup_usage(struct cgroup *cg)
{
	char buf[64];

	return usage_of(
	    cg_read(cg, cg->mem_dir, USAGE_FILE(cg->version), buf, sizeof buf) < 0 ? NULL : buf);
}

int cgroup_join_self(const struct cgroup *cg)
{
	/* "0" is the writer itself, in both v1 and v2. */
	if (write(cg->mem_procs_fd, "0", 1) != 1)
		return -1;
	if (cg->cpu_procs_fd >= 0 && write(cg->cpu_procs_fd, "0", 1) != 1)
		return -1;
	return 0;
}

int cgroup_add_pid(const struct cgroup *cg, pid_t pid, struct weir_error *err)
{
	char num[32];
	snprintf(num, sizeof num, "%ld", (long)pid);
	if (write_text(cg->mem_dir, "cgroup.procs", num) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "cgroup %s: cannot add pid %s: %s",
		                      cg->mem_dir, num, strerror(errno));
	if (cg->cpu_dir[0] && write_text(cg->cpu_dir, "cgroup.procs", num) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "cgroup %s: cannot add pid %s: %s",
		                      cg->cpu_dir, num, strerror(errno));
	return 0;
}

uint64_t cgroup_peak_memory(struct cgroup *cg)
{
	char buf[64];
	const char *file = cg->version == CGROUP_V1 ? "memory.max_usage_in_bytes" : "memory.peak";
	if (cg_read(cg, cg->mem_dir, file, buf, sizeof buf) < 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

/* The number after "key " in a "key value" per line file. */
static long long keyed_value(const char *text, const char *key)
{
	size_t n = strlen(key);
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, key, n) && p[n] == ' ')
			return atoll(p + n + 1);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* The group's OOM kills in its life (memory.oom_control, memory.events),
 * or -1; noted for the reset in place when the group held none but the
 * caller. */
static int oom_count(struct cgroup *cg)
{
	char buf[1024];
	const char *file = cg->version == CGROUP_V1 ? "memory.oom_control" : "memory.events";
	if (cg_read(cg, cg->mem_dir, file, buf, sizeof buf) < 0)
		return -1;
	long long v = keyed_value(buf, "oom_kill");
	if (v >= 0 && cg->emptied) {
		cg->oom_read_empty = true;
		cg->oom_read = (int)v;
	}
	return v < 0 ? -1 : (int)v;
}

int cgroup_oom_kills(struct cgroup *cg)
{
	int v = oom_count(cg);
	return v < 0 ? -1 : v - cg->oom_base;
}

uint64_t cgroup_memory_limit(const struct cgroup *cg)
{
	return cg->memory_limit;
}

/* Sends `sig` to every pid in the group's cgroup.procs but the caller's;
 * the number found.  Read with open and read (no stdio: no fstat, no
 * buffer allocated), a pid split between two reads carried over. */
static int signal_procs(const struct cgroup *cg, int sig)
{
	char path[CG_PATH_MAX + 64], buf[4096];
	size_t have = 0;
	int n = 0, fd;

	snprintf(path, sizeof path, "%s/cgroup.procs", cg->mem_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof buf - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		size_t start = 0;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] != '\n')
				continue;
			pid_t pid = (pid_t)strtol(buf + start, NULL, 10);
			start = i + 1;
			/* a shim born in its task's group (the agent's pool) is in it too */
			if (pid > 0 && pid != cg->self) {
				n++;
				if (sig)
					kill(pid, sig);
			}
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have == sizeof buf)
			have = 0; /* no pid is that long */
	}
	close(fd);
	return n;
}

int cgroup_procs_paths(const struct cgroup *cg, char *buf, size_t size)
{
	int n = cg->cpu_dir[0] ? snprintf(buf, size, "%s/cgroup.procs\n%s/cgroup.procs",
	                                  cg->mem_dir, cg->cpu_dir)
	                       : snprintf(buf, size, "%s/cgroup.procs", cg->mem_dir);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

int cgroup_give_procs(const struct cgroup *cg, uid_t uid, gid_t gid)
{
	char path[CG_PATH_MAX + 16];
	int rc = 0;

	snprintf(path, sizeof path, "%s/cgroup.procs", cg->mem_dir);
	if (lchown(path, uid, gid) < 0)
		rc = -1;
	if (cg->cpu_dir[0]) {
		snprintf(path, sizeof path, "%s/cgroup.procs", cg->cpu_dir);
		if (lchown(path, uid, gid) < 0)
			rc = -1;
	}
	return rc;
}

int cgroup_count_procs(const struct cgroup *cg)
{
	return signal_procs(cg, 0);
}

bool cgroup_take_emptied(struct cgroup *cg)
{
	bool e = cg->emptied;
	cg->emptied = false;
	return e;
}

static bool cgroup_holds_self(const struct cgroup *cg)
{
	char path[CG_PATH_MAX + 64], line[64];
	FILE *f;
	bool found = false;

	snprintf(path, sizeof path, "%s/cgroup.procs", cg->mem_dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof line, f))
		found = (pid_t)atol(line) == cg->self;
	fclose(f);
	return found;
}

int cgroup_kill_all(struct cgroup *cg)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	cg->emptied = false;
	cg->oom_read_empty = false;
	/* cgroup.kill would take a shim in the group with it */
	if (cg->version == CGROUP_V2 && has_file(cg->mem_dir, "cgroup.kill") &&
	    !cgroup_holds_self(cg))
		write_text(cg->mem_dir, "cgroup.kill", "1");
	/* A process may fork while we kill: repeat until the group is empty. */
	for (int i = 0; i < 200; i++) {
		int n = signal_procs(cg, SIGKILL);
		if (n <= 0) {
			cg->emptied = n == 0;
			return n < 0 ? -1 : 0;
		}
		nanosleep(&ts, NULL);
	}
	return -1;
}

void cgroup_destroy(struct cgroup *cg)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	if (!cg)
		return;
	cg_files_close(cg);
	if (cg->mem_dir[0]) {
		cgroup_kill_all(cg);
		/* rmdir is EBUSY until the last killed process has fully exited. */
		for (int i = 0; i < 100 && rmdir(cg->mem_dir) < 0 && errno == EBUSY; i++)
			nanosleep(&ts, NULL);
	}
	if (cg->cpu_dir[0])
		for (int i = 0; i < 100 && rmdir(cg->cpu_dir) < 0 && errno == EBUSY; i++)
			nanosleep(&ts, NULL);
	if (cg->mem_procs_fd >= 0)
		close(cg->mem_procs_fd);
	if (cg->cpu_procs_fd >= 0)
		close(cg->cpu_procs_fd);
	free(cg);
}

struct rss_sum {
	pid_t pgid;
	uint64_t total;
};

static int add_rss(const struct proc_stat *p, void *arg)
{
	struct rss_sum *sum = arg;
	if (p->pgrp == sum->pgid)
		sum->total += p->rss_bytes;
	return 0;
}

uint64_t cgroup_pgroup_rss(pid_t pgid)
{
	struct rss_sum sum = {pgid, 0};
	proc_each(add_rss, &sum);
	return sum.total;
}
