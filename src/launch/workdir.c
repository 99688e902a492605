/* workdir.c: the task's working directory, and the content-addressed cache
 * of unpacked archives (libarchive for every format, OpenSSL for sha256). */
#include "launch/workdir.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/log.h"

static int hash_file(const char *path, char hex[65], struct weir_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	EVP_MD_CTX *ctx = NULL;
	char *buf = NULL;
	int fd = -1, rc = -1;
	ssize_t got;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		weir_error_set(err, WEIR_E_INVALID, "artifact %s: cannot open: %s", path,
		               strerror(errno));
		goto out;
	}
	buf = malloc(1 << 20);
	ctx = EVP_MD_CTX_new();
	if (!buf || !ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		weir_error_set(err, WEIR_E_INTERNAL, "artifact %s: cannot start sha256", path);
		goto out;
	}
	while ((got = read(fd, buf, 1 << 20)) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			weir_error_set(err, WEIR_E_INVALID, "artifact %s: cannot read: %s", path,
			               strerror(errno));
			goto out;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)got);
	}
	EVP_DigestFinal_ex(ctx, md, &md_len);
	for (unsigned int i = 0; i < md_len && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[64] = '\0';
	rc = 0;
out:
	EVP_MD_CTX_free(ctx);
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}

static int is_hex64(const char *s)
{
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int artifact_hash(const char *path, const char *cache_dir, char hex[65], bool *memo_hit,
                  struct weir_error *err)
{
	char memo[4300], dir[4096];
	struct stat st;

	if (memo_hit)
		*memo_hit = false;
	if (stat(path, &st) < 0)
		return weir_error_set(err, WEIR_E_INVALID, "artifact %s: %s", path,
		                      strerror(errno));
	if (!cache_dir)
		return hash_file(path, hex, err);
	/* Keyed by identity and version of the file: a rewritten archive has a
	 * new mtime or size (or inode, when replaced by rename). */
	if ((size_t)snprintf(dir, sizeof dir, "%s/hashes", cache_dir) >= sizeof dir)
		return weir_error_set(err, WEIR_E_INVALID, "cache %s: path too long", cache_dir);
	snprintf(memo, sizeof memo, "%s/%llu-%llu-%lld-%lld%09ld", dir,
	         (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
	         (long long)st.st_size, (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	int fd = open(memo, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char buf[65];
		ssize_t got = read(fd, buf, 64);
		close(fd);
		if (got == 64 && is_hex64(buf)) {
			memcpy(hex, buf, 64);
			hex[64] = '\0';
			if (memo_hit)
				*memo_hit = true;
			return 0;
		}
	}
	if (hash_file(path, hex, err) < 0)
		return -1;
	/* The memo is an optimisation: failing to write it is not an error. */
	if (fs_mkdir_p(dir, 0755, NULL) == 0)
		fs_write_file_atomic(memo, hex, 64, 0644, NULL);
	return 0;
}

/* Absolute paths and ".." components would write outside the tree. */
static int path_is_safe(const char *p)
{
	if (!p || p[0] == '/')
		return p == NULL;
	for (const char *s = p; *s;) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return 0;
		if (!e)
			break;
		s = e + 1;
	}
	return 1;
}

static int copy_data(struct archive *in, struct archive *out)
{
	const void *buf;
	size_t size;
	la_int64_t offset;

	for (;;) {
		int r = archive_read_data_block(in, &buf, &size, &offset);
		if (r == ARCHIVE_EOF)
			return ARCHIVE_OK;
		if (r < ARCHIVE_WARN)
			return r;
		if (archive_write_data_block(out, buf, size, offset) < ARCHIVE_WARN)
			return ARCHIVE_FATAL;
	}
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

int workdir_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	nftw(path, open_dirs_writable, 32, FTW_PHYS);
	return nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS);
}

static int make_read_only(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_SL)
		return 0;
	return chmod(path, st->st_mode & 07555) < 0 ? -1 : 0;
}

int artifact_unpack(const char *archive, const char *dest, struct weir_error *err)
{
	struct archive *in = NULL, *out = NULL;
	struct archive_entry *e;
	int cwd = -1, rc = -1, made = 0, r;

	in = archive_read_new();
	out = archive_write_disk_new();
	if (!in || !out) {
		weir_error_set(err, WEIR_E_INTERNAL, "artifact %s: out of memory", archive);
		goto out;
	}
	archive_read_support_filter_all(in);
	archive_read_support_format_all(in);
	/* The SECURE flags are a second guard behind our own path checks. */
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
	                                        ARCHIVE_EXTRACT_SECURE_SYMLINKS |
	                                        ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
	if (archive_read_open_filename(in, archive, 1 << 16) != ARCHIVE_OK) {
		weir_error_set(err, WEIR_E_INVALID, "artifact %s: cannot read as an archive: %s",
		               archive, archive_error_string(in));
		goto out;
	}
	if (mkdir(dest, 0755) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "artifact %s: cannot create %s: %s", archive,
		               dest, strerror(errno));
		goto out;
	}
	made = 1;
	/* libarchive writes relative to the current directory, which is what
	 * lets SECURE_NOABSOLUTEPATHS stand; the launcher has one thread. */
	cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || chdir(dest) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "artifact %s: cannot enter %s: %s", archive,
		               dest, strerror(errno));
		goto out;
	}
	while ((r = archive_read_next_header(in, &e)) != ARCHIVE_EOF) {
		if (r < ARCHIVE_WARN) {
			weir_error_set(err, WEIR_E_INVALID, "artifact %s: %s", archive,
			               archive_error_string(in));
			goto out;
		}
		const char *name = archive_entry_pathname(e);
		const char *link = archive_entry_hardlink(e);
		if (!name || !path_is_safe(name) || !path_is_safe(link)) {
			weir_error_set(err, WEIR_E_INVALID,
			               "artifact %s: entry \"%s\" would be written outside the "
			               "unpacked tree (absolute path or \"..\"); refused",
			               archive,
			               name   ? name
			               : link ? link
			                      : "?");
			goto out;
		}
		if (archive_write_header(out, e) < ARCHIVE_WARN ||
		    (archive_entry_size(e) > 0 && copy_data(in, out) != ARCHIVE_OK) ||
		    archive_write_finish_entry(out) < ARCHIVE_WARN) {
			weir_error_set(err, WEIR_E_INVALID, "artifact %s: entry \"%s\": %s",
			               archive, name,
			               archive_error_string(out) ? archive_error_string(out)
			                                         : archive_error_string(in));
			goto out;
		}
	}
	if (archive_write_close(out) != ARCHIVE_OK) {
		weir_error_set(err, WEIR_E_INVALID, "artifact %s: %s", archive,
		               archive_error_string(out));
		goto out;
	}
	rc = 0;
out:
	if (cwd >= 0) {
		if (fchdir(cwd) < 0)
			log_warn("cannot return to the working directory: %s", strerror(errno));
		close(cwd);
	}
	if (in)
		archive_read_free(in);
	if (out)
		archive_write_free(out);
	if (rc < 0 && made)
		workdir_remove_tree(dest);
	return rc;
}

/* The directory a task links: the tree, or its only top-level directory
 * when that has the artifact's name (an archive of the folder itself). */
static char *link_target(const char *tree, const char *name)
{
	DIR *d = opendir(tree);
	struct dirent *de;
	int count = 0, match = 0;

	if (!d)
		return strdup(tree);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		count++;
		if (name && !strcmp(de->d_name, name))
			match = 1;
	}
	closedir(d);
	if (count == 1 && match) {
		char *inner = fs_join(tree, name);
		struct stat st;
		if (inner && stat(inner, &st) == 0 && S_ISDIR(st.st_mode))
			return inner;
		free(inner);
	}
	return strdup(tree);
}

int artifact_unpack_cached(const char *archive, const char *name, const char *cache_dir, char **dir,
                           bool *unpacked, struct weir_error *err)
{
	char hex[65], tree[4096], lock[4096], tmp[4096];
	struct stat st;
	int fd = -1, rc = -1;

	*dir = NULL;
	if (unpacked)
		*unpacked = false;
	if (artifact_hash(archive, cache_dir, hex, NULL, err) < 0)
		return -1;
	snprintf(tree, sizeof tree, "%s/%s", cache_dir, hex);
	/* The common case: already there, no lock taken. */
	if (stat(tree, &st) == 0 && S_ISDIR(st.st_mode))
		goto found;
	if (fs_mkdir_p(cache_dir, 0755, err) < 0)
		return -1;
	snprintf(lock, sizeof lock, "%s/%s.lock", cache_dir, hex);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "cache %s: cannot open lock: %s", lock,
		                      strerror(errno));
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			weir_error_set(err, WEIR_E_INTERNAL, "cache %s: cannot lock: %s", lock,
			               strerror(errno));
			goto out;
		}
	}
	/* Another launcher may have finished while we waited for the lock. */
	if (!(stat(tree, &st) == 0 && S_ISDIR(st.st_mode))) {
		snprintf(tmp, sizeof tmp, "%s/%s.tmp.%ld", cache_dir, hex, (long)getpid());
		workdir_remove_tree(tmp);
		if (artifact_unpack(archive, tmp, err) < 0)
			goto out;
		nftw(tmp, make_read_only, 32, FTW_PHYS | FTW_DEPTH);
		/* rename() makes the tree appear whole or not at all. */
		if (rename(tmp, tree) < 0) {
			weir_error_set(err, WEIR_E_INTERNAL,
			               "cache %s: cannot rename into place: %s", tree,
			               strerror(errno));
			workdir_remove_tree(tmp);
			goto out;
		}
		if (unpacked)
			*unpacked = true;
	}
	close(fd);
	fd = -1;
found:
	*dir = link_target(tree, name);
	if (!*dir) {
		weir_error_set(err, WEIR_E_INTERNAL, "cache: out of memory");
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
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
		int64_t rc =
		    artifact_unpack_cached(a->path, a->name, cache_dir, &dir, &unpacked, err);
		if (rc < 0)
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
