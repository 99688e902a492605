/* fs.c: small file-system helpers. */
#include "lib/fs.h"

#include "lib/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_mkdir_p(const char *path, mode_t mode, struct weir_error *err)
{
	char buf[4096];
	size_t len = strlen(path), top;

	if (len == 0 || len >= sizeof buf)
		return weir_error_set(err, WEIR_E_INVALID, "%s: bad directory path", path);
	memcpy(buf, path, len + 1);
	/* up from the end to the deepest folder there (most often the parent:
	 * one call), then down, making each */
	for (top = len;;) {
		if (mkdir(buf, mode) == 0 || errno == EEXIST)
			break;
		char *slash = errno == ENOENT ? strrchr(buf, '/') : NULL;
		if (!slash || slash == buf)
			return weir_error_set(err, WEIR_E_INTERNAL,
			                      "%s: cannot create directory: %s", buf,
			                      strerror(errno));
		*slash = '\0';
		top = (size_t)(slash - buf);
	}
	while (top < len) {
		buf[top] = '/';
		top += strlen(buf + top);
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return weir_error_set(err, WEIR_E_INTERNAL,
			                      "%s: cannot create directory: %s", buf,
			                      strerror(errno));
	}
	return 0;
}

char *fs_read_file(const char *path, size_t *len, struct weir_error *err)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t cap = 0, used = 0;

	if (!f) {
		weir_error_set(err, errno == ENOENT ? WEIR_E_NOT_FOUND : WEIR_E_INVALID,
		               "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (ALLOC_GROW(data, used + 4097, cap) < 0) {
			free(data);
			fclose(f);
			weir_error_set(err, WEIR_E_INTERNAL, "%s: out of memory", path);
			return NULL;
		}
		size_t got = fread(data + used, 1, cap - used - 1, f);
		used += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(data);
		fclose(f);
		weir_error_set(err, WEIR_E_INVALID, "%s: cannot read", path);
		return NULL;
	}
	fclose(f);
	data[used] = '\0';
	if (len)
		*len = used;
	return data;
}

int fs_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode,
                         struct weir_error *err)
{
	char tmp[4096];
	int fd;

	snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot create: %s", tmp,
		                      strerror(errno));
	const char *p = data;
	size_t left = len;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			unlink(tmp);
			return weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot write: %s", tmp,
			                      strerror(errno));
		}
		p += w;
		left -= (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		unlink(tmp);
		return weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot sync", tmp);
	}
	if (rename(tmp, path) < 0) {
		unlink(tmp);
		return weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot rename: %s", path,
		                      strerror(errno));
	}
	return 0;
}

char *fs_abs_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *cwd, *dir, *out;

	if (path[0] == '/')
		return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	cwd = getcwd(NULL, 0);
	if (!cwd || !slash)
		return cwd;
	dir = strndup(path, (size_t)(slash - path));
	out = dir ? fs_join(cwd, dir) : NULL;
	free(dir);
	free(cwd);
	return out;
}

char *fs_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *out = malloc(la + lb + 2);
	if (!out)
		return NULL;
	memcpy(out, a, la);
	out[la] = '/';
	memcpy(out + la + 1, b, lb + 1);
	return out;
}

int fs_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	/* A read-only directory cannot lose its entries: give the bit back. */
	if (type == FTW_DP)
		chmod(path, (st->st_mode & 07777) | 0700);
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

static int open_dirs_writable(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_D)
		chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

int fs_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	nftw(path, open_dirs_writable, 32, FTW_PHYS);
	return nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS);
}
