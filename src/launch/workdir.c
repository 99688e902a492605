/* workdir.c: the task's working directory: src_dir's entries and the job's
 * artifacts linked into it.  Archives come from the shared cache; one that
 * is not there yet is unpacked by the registered unpacker. */
#include "launch/workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/artifact_cache.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/strbuf.h"

extern char **environ;

static workdir_unpack_fn unpacker = workdir_unpack_with_helper;

void workdir_set_unpacker(workdir_unpack_fn fn)
{
	unpacker = fn ? fn : workdir_unpack_with_helper;
}

/* Reads all of fd into a NUL-terminated buffer (caller frees). */
static char *read_all(int fd)
{
	struct strbuf sb = STRBUF_INIT;
	char chunk[4096];

	for (;;) {
		ssize_t r = read(fd, chunk, sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || strbuf_add(&sb, chunk, (size_t)r) < 0)
			break;
	}
	return strbuf_detach(&sb, NULL); /* NULL when out of memory */
}

int workdir_unpack_with_helper(const char *archive, const char *name, const char *cache_dir,
                               char **dir, bool *unpacked, struct weir_error *err)
{
	char helper[4096];
	int out[2] = {-1, -1};
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status = 0, rc = -1;
	char *text = NULL;

	*dir = NULL;
	if (unpacked)
		*unpacked = false;
	if (proc_self_sibling("weir", helper, sizeof helper) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "cannot find this program's path");
	if (pipe2(out, O_CLOEXEC) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "pipe: %s", strerror(errno));
	/* The helper's stdout and stderr both come back here: its last line is
	 * the directory on success, its error message on failure. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, out[1], 2);
	char *argv[] = {helper,       "artifact-unpack", (char *)archive,
	                (char *)name, (char *)cache_dir, NULL};
	int e = posix_spawn(&pid, helper, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	if (e != 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "cannot run %s to unpack %s: %s", helper,
		               archive, strerror(e));
		goto out;
	}
	text = read_all(out[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	size_t len = text ? strlen(text) : 0;
	while (len > 0 && text[len - 1] == '\n')
		text[--len] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || len == 0) {
		weir_error_set(err, WEIR_E_INVALID, "%s", len ? text : "unpacking failed");
		goto out;
	}
	char *last = strrchr(text, '\n');
	*dir = strdup(last ? last + 1 : text);
	if (unpacked)
		*unpacked = last != NULL; /* the helper logged that it unpacked */
	rc = *dir ? 0 : weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
out:
	free(text);
	close(out[0]);
	return rc;
}

/* workdir/name -> target, replacing a link left by an earlier launch. */
static int link_into(const char *workdir, const char *name, const char *target,
                     struct weir_error *err)
{
	char *path = fs_join(workdir, name);
	struct stat st;
	int rc = -1;

	if (!path)
		return weir_error_set(err, WEIR_E_INTERNAL, "workdir: out of memory");
	if (lstat(path, &st) == 0) {
		if (!S_ISLNK(st.st_mode)) {
			weir_error_set(
			    err, WEIR_E_CONFLICT,
			    "workdir %s: %s exists and is not a link; cannot place %s there",
			    workdir, name, target);
			goto out;
		}
		unlink(path);
	}
	if (symlink(target, path) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "workdir %s: cannot link %s -> %s: %s",
		               workdir, name, target, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(path);
	return rc;
}

static int link_src_dir(const char *workdir, const char *src_dir, struct weir_error *err)
{
	DIR *d = opendir(src_dir);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return weir_error_set(err, WEIR_E_INVALID, "src_dir %s: cannot open: %s", src_dir,
		                      strerror(errno));
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *target = fs_join(src_dir, de->d_name);
		if (!target) {
			rc = weir_error_set(err, WEIR_E_INTERNAL, "workdir: out of memory");
			break;
		}
		rc = link_into(workdir, de->d_name, target, err);
		free(target);
	}
	closedir(d);
	return rc;
}

int workdir_prepare(const char *workdir, const char *src_dir, const struct artifact *artifacts,
                    size_t n_artifacts, const char *cache_dir, struct weir_error *err)
{
	if (fs_mkdir_p(workdir, 0755, err) < 0)
		return -1;
	if (src_dir && *src_dir && link_src_dir(workdir, src_dir, err) < 0)
		return -1;
	for (size_t i = 0; i < n_artifacts; i++) {
		const struct artifact *a = &artifacts[i];
		if (!a->name || !*a->name || strchr(a->name, '/') || !strcmp(a->name, ".") ||
		    !strcmp(a->name, ".."))
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "artifacts[%zu].name: expected one path component, got "
			    "\"%s\"",
			    i, a->name ? a->name : "");
		if (!a->archive) {
			if (!fs_exists(a->path))
				return weir_error_set(err, WEIR_E_INVALID,
				                      "artifact %s: no such file", a->path);
			if (link_into(workdir, a->name, a->path, err) < 0)
				return -1;
			continue;
		}
		if (!cache_dir)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "artifact %s: an archive needs a cache_dir", a->path);
		char *dir = NULL;
		bool unpacked = false;
		int64_t rc = artifact_cache_lookup(a->path, a->name, cache_dir, &dir, err);
		if (rc < 0)
			return -1;
		if (rc == 0 && unpacker(a->path, a->name, cache_dir, &dir, &unpacked, err) < 0)
			return -1;
		if (unpacked)
			log_info("unpacked %s into the cache (%s)", a->path, dir);
		rc = link_into(workdir, a->name, dir, err);
		free(dir);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int workdir_give(const char *workdir, const struct run_as *ra, struct weir_error *err)
{
	if (!ra || !ra->set)
		return 0;
	/* the folder is ours (made by this launcher or its spare, in a job's
	 * folder only root writes): chown and chmod by name follow no link */
	if (chown(workdir, ra->uid, ra->gid) < 0 || chmod(workdir, 0700) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL,
		                      "workdir %s: cannot give it to the task's user (uid %lu): %s",
		                      workdir, (unsigned long)ra->uid, strerror(errno));
	return 0;
}
