/* spare_dirs.c: a task's folders and log made ahead by its spare, renamed
 * into place at its start, and the removal of what is left
 * (spare_dirs.h). */
#include "launch/spare_dirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPARES "/.spares"
/* the folder a spare gives, inside its own (spare_dir_path) */
#define NEXT_NAME "next"
#define WORK_NAME ".work"
#define LOG_NAME ".log"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int spare_dir_path(char *out, size_t size, const char *jobs, pid_t agent_pid, pid_t pid)
{
	int n = snprintf(out, size, "%s" SPARES "/%d-%d", jobs, (int)agent_pid, (int)pid);

	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* DIR/NAME into out (SPARE_DIRS_PATH_MAX).  0, or -1 when it does not fit. */
static int join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, SPARE_DIRS_PATH_MAX, "%s/%s", dir, name);

	return n > 0 && n < SPARE_DIRS_PATH_MAX ? 0 : -1;
}

/* Whether `name` may name a spare's work folder or log: one component, not
 * "." or "..", not the names a spare starts with. */
static bool name_ok(const char *name)
{
	return name && *name && !strchr(name, '/') && strlen(name) < SPARE_DIRS_NAME_MAX &&
	       strcmp(name, ".") && strcmp(name, "..") && strcmp(name, WORK_NAME) &&
	       strcmp(name, LOG_NAME);
}

void spare_dirs_spread(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int flags = 0;

	if (fd < 0)
		return;
	/* the kernel reads and writes an int, whatever the macro says */
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && !(flags & FS_TOPDIR_FL)) {
		flags |= FS_TOPDIR_FL;
		(void)ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	close(fd);
}

/* mkdir, made when there (EEXIST) too.  0 or -1. */
static int mkdir_there(const char *path)
{
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* The spare's own folder JOBS/.spares/AGENTPID-PID (and .spares, marked,
 * the first time), then the one it gives inside it.  The spare's folder is
 * made in .spares, a top of hierarchy: ext4 picks its block group as for a
 * top-level folder (Orlov), which scans every group's counts, about 0.15
 * ms of kernel time a folder measured here against 0.02 ms for a folder
 * in its parent's group.  So it is made once per spare, and each folder it
 * gives (`next`, which becomes a job's) is made inside it, in its group. */
static int make_next(const struct spare_dir *sd, const char *jobs)
{
	char p[SPARE_DIRS_PATH_MAX];

	if (mkdir_there(sd->path) == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	if (mkdir_there(sd->own) < 0) {
		if (errno != ENOENT)
			return -1;
		/* JOBS/.spares first (the first spare of this home); spread
		 * only when made here, so not mkdir_there */
		snprintf(p, sizeof p, "%s" SPARES, jobs);
		if (mkdir(p, 0755) == 0)
			spare_dirs_spread(p);
		else if (errno != EEXIST)
			return -1;
		if (mkdir_there(sd->own) < 0)
			return -1;
	}
	return mkdir_there(sd->path);
}

int spare_dir_make_named(struct spare_dir *sd, const char *jobs, pid_t agent_pid, pid_t pid,
                         const char *work_name, const char *log_name)
{
	char p[SPARE_DIRS_PATH_MAX], work[SPARE_DIRS_NAME_MAX], log[SPARE_DIRS_NAME_MAX];
	int fd;

	/* the names first: they may be sd's own (placed_*), cleared below */
	bool named = name_ok(work_name) && name_ok(log_name) && strcmp(work_name, log_name);
	snprintf(work, sizeof work, "%s", named ? work_name : WORK_NAME);
	snprintf(log, sizeof log, "%s", named ? log_name : LOG_NAME);
	memset(sd, 0, sizeof *sd);
	if (!jobs || !*jobs || spare_dir_path(sd->own, sizeof sd->own, jobs, agent_pid, pid) < 0 ||
	    join(sd->path, sd->own, NEXT_NAME) < 0) {
		sd->path[0] = sd->own[0] = '\0';
		errno = EINVAL;
		return -1;
	}
	sd->jobs_len = strlen(jobs);
	memcpy(sd->work, work, sizeof work);
	memcpy(sd->log, log, sizeof log);
	if (make_next(sd, jobs) < 0)
		return -1;
	if (join(p, sd->path, sd->work) < 0 || mkdir_there(p) < 0 || join(p, sd->path, sd->log) < 0)
		return -1;
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	sd->ready = true;
	return 0;
}

int spare_dir_make(struct spare_dir *sd, const char *jobs, pid_t agent_pid, pid_t pid)
{
	return spare_dir_make_named(sd, jobs, agent_pid, pid, NULL, NULL);
}

/* The last component of `path`, or NULL when it has none (or ends in /). */
static const char *base_of(const char *path, size_t *dir_len)
{
	const char *slash = strrchr(path, '/');

	if (!slash || !slash[1])
		return NULL;
	*dir_len = (size_t)(slash - path);
	return slash + 1;
}

/* Whether `log` and `workdir` are JOBS/ID/NAME with one ID, JOBS the
 * parent of the spare's .spares: the job's folder into job_dir. */
static bool placeable(const struct spare_dir *sd, const char *log, const char *workdir,
                      char *job_dir, const char **log_name, const char **work_name)
{
	size_t ld = 0, wd = 0, jd = 0;
	const char *id;

	if (!log || !workdir || log[0] != '/' || workdir[0] != '/' || !sd->jobs_len)
		return false;
	*log_name = base_of(log, &ld);
	*work_name = base_of(workdir, &wd);
	if (!*log_name || !*work_name || ld != wd || strncmp(log, workdir, ld) ||
	    !strcmp(*log_name, *work_name) || !strcmp(*log_name, ".") || !strcmp(*log_name, "..") ||
	    !strcmp(*work_name, ".") || !strcmp(*work_name, "..") ||
	    !strcmp(*work_name, WORK_NAME) || !strcmp(*work_name, LOG_NAME) ||
	    !strcmp(*log_name, WORK_NAME) || !strcmp(*log_name, LOG_NAME) ||
	    ld >= SPARE_DIRS_PATH_MAX)
		return false;
	memcpy(job_dir, log, ld);
	job_dir[ld] = '\0';
	id = base_of(job_dir, &jd);
	return id && id[0] != '.' && jd == sd->jobs_len && !strncmp(job_dir, sd->path, jd);
}

static void spare_dir_note_placed(struct spare_dir *sd, const char *work, const char *log)
{
	snprintf(sd->placed_work, sizeof sd->placed_work, "%s", work);
	snprintf(sd->placed_log, sizeof sd->placed_log, "%s", log);
}

static int rename_new(const char *from, const char *to)
{
	return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

int spare_dir_place(struct spare_dir *sd, const char *log, const char *workdir)
{
	char job_dir[SPARE_DIRS_PATH_MAX], a[SPARE_DIRS_PATH_MAX], b[SPARE_DIRS_PATH_MAX];
	const char *log_name, *work_name;
	bool ready = sd->ready;

	sd->ready = false;
	sd->placed_work[0] = sd->placed_log[0] = '\0';
	if (!ready || !placeable(sd, log, workdir, job_dir, &log_name, &work_name))
		return -1;
	/* the try's names first, inside the spare's own folder (none to give
	 * when they have them already) */
	if (strcmp(sd->work, work_name) &&
	    (join(a, sd->path, sd->work) < 0 || join(b, sd->path, work_name) < 0 ||
	     rename_new(a, b) < 0))
		return -1;
	if (strcmp(sd->log, log_name) && (join(a, sd->path, sd->log) < 0 ||
	                                  join(b, sd->path, log_name) < 0 || rename_new(a, b) < 0))
		return -1;
	/* the whole folder becomes the job's, when it has none yet */
	if (rename_new(sd->path, job_dir) == 0) {
		sd->path[0] = '\0';
		spare_dir_note_placed(sd, work_name, log_name);
		return 0;
	}
	if (errno != EEXIST && errno != ENOTEMPTY)
		return -1;
	/* a job's folder there (a retry, another task of its gang): the two
	 * into it, the spare's folder left empty (removed at the task's end) */
	int rc = 0;
	const char *names[2] = {work_name, log_name};
	for (int i = 0; i < 2; i++)
		if (join(a, sd->path, names[i]) < 0 || join(b, job_dir, names[i]) < 0 ||
		    rename_new(a, b) < 0)
			rc = -1;
	if (rc == 0)
		spare_dir_note_placed(sd, work_name, log_name);
	return rc;
}

/* `path` and what it holds, files and empty folders, and at `depth` 1
 * (a spare's own folder) the folder it gives (NEXT_NAME) the same way. */
static int clear_at(const char *path, int depth)
{
	char sub[SPARE_DIRS_PATH_MAX];
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (!path || !*path)
		return 0;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (depth == 1 && !strcmp(de->d_name, NEXT_NAME) &&
		    join(sub, path, NEXT_NAME) == 0) {
			if (clear_at(sub, 0) < 0)
				rc = -1;
			continue;
		}
		/* a file (or a link: never followed), else an empty folder */
		if (unlinkat(dirfd(d), de->d_name, 0) < 0 &&
		    unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0)
			rc = -1;
	}
	closedir(d);
	if (rmdir(path) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int spare_dir_clear(const char *path)
{
	return clear_at(path, 0);
}

int spare_dir_remove(const struct spare_dir *sd)
{
	return clear_at(sd->own, 1);
}

void spare_dirs_remove_of(const char *jobs, pid_t agent_pid, pid_t pid)
{
	char p[SPARE_DIRS_PATH_MAX];

	if (jobs && *jobs && spare_dir_path(p, sizeof p, jobs, agent_pid, pid) == 0)
		clear_at(p, 1);
}

int spare_dirs_sweep(const char *jobs, pid_t self)
{
	char dir[SPARE_DIRS_PATH_MAX], p[SPARE_DIRS_PATH_MAX];
	DIR *d;
	struct dirent *de;

	if (!jobs || !*jobs || snprintf(dir, sizeof dir, "%s" SPARES, jobs) >= (int)sizeof dir)
		return -1;
	if (!(d = opendir(dir)))
		return errno == ENOENT ? 0 : -1;
	/* a .spares an agent made before it was marked */
	spare_dirs_spread(dir);
	while ((de = readdir(d))) {
		int agent, pid;
		if (sscanf(de->d_name, "%d-%d", &agent, &pid) == 2 && agent != (int)self &&
		    join(p, dir, de->d_name) == 0)
			clear_at(p, 1);
	}
	closedir(d);
	return 0;
}
