/* artifact.c: hashing (nettle's sha256: the library libmicrohttpd's TLS
 * already maps, so the server carries no second crypto library) and
 * unpacking (libarchive, every format) of archives into the cache. */
#include "exec/artifact.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <nettle/sha2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/artifact_cache.h"
#include "lib/dynlib.h"
#include "lib/fs.h"
#include "lib/log.h"

/* libarchive, loaded at its first use (lib/dynlib.h), not at every start of weir;
 * the Makefile names it as the system's library does */
#ifndef WEIR_SONAME_ARCHIVE
#define WEIR_SONAME_ARCHIVE "libarchive.so.13"
#endif
/* clang-format off */
#define AR_FUNCS(X, t)                        \
	X(t, archive_entry_hardlink)          \
	X(t, archive_entry_pathname)          \
	X(t, archive_entry_size)              \
	X(t, archive_error_string)            \
	X(t, archive_read_data_block)         \
	X(t, archive_read_free)               \
	X(t, archive_read_new)                \
	X(t, archive_read_next_header)        \
	X(t, archive_read_open_filename)      \
	X(t, archive_read_support_filter_all) \
	X(t, archive_read_support_format_all) \
	X(t, archive_write_close)             \
	X(t, archive_write_data_block)        \
	X(t, archive_write_disk_new)          \
	X(t, archive_write_disk_set_options)  \
	X(t, archive_write_finish_entry)      \
	X(t, archive_write_free)              \
	X(t, archive_write_header)
/* clang-format on */
DYNLIB_TABLE(ar, AR_FUNCS, WEIR_SONAME_ARCHIVE, "Artifact archives");
#define archive_entry_hardlink (ar.archive_entry_hardlink)
#define archive_entry_pathname (ar.archive_entry_pathname)
#define archive_entry_size (ar.archive_entry_size)
#define archive_error_string (ar.archive_error_string)
#define archive_read_data_block (ar.archive_read_data_block)
#define archive_read_free (ar.archive_read_free)
#define archive_read_new (ar.archive_read_new)
#define archive_read_next_header (ar.archive_read_next_header)
#define archive_read_open_filename (ar.archive_read_open_filename)
#define archive_read_support_filter_all (ar.archive_read_support_filter_all)
#define archive_read_support_format_all (ar.archive_read_support_format_all)
#define archive_write_close (ar.archive_write_close)
#define archive_write_data_block (ar.archive_write_data_block)
#define archive_write_disk_new (ar.archive_write_disk_new)
#define archive_write_disk_set_options (ar.archive_write_disk_set_options)
#define archive_write_finish_entry (ar.archive_write_finish_entry)
#define archive_write_free (ar.archive_write_free)
#define archive_write_header (ar.archive_write_header)

static int hash_file(const char *path, char hex[65], struct weir_error *err)
{
	uint8_t md[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;
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
	if (!buf) {
		weir_error_set(err, WEIR_E_INTERNAL, "artifact %s: out of memory", path);
		goto out;
	}
	sha256_init(&ctx);
	while ((got = read(fd, buf, 1 << 20)) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			weir_error_set(err, WEIR_E_INVALID, "artifact %s: cannot read: %s", path,
			               strerror(errno));
			goto out;
		}
		sha256_update(&ctx, (size_t)got, (const uint8_t *)buf);
	}
	sha256_digest(&ctx, sizeof md, md);
	for (unsigned int i = 0; i < sizeof md; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[64] = '\0';
	rc = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}

int artifact_hash(const char *path, const char *cache_dir, char hex[65], bool *memo_hit,
                  struct weir_error *err)
{
	char memo[4300];

	if (memo_hit)
		*memo_hit = false;
	if (!cache_dir) {
		struct stat st;
		if (stat(path, &st) < 0)
			return weir_error_set(err, WEIR_E_INVALID, "artifact %s: %s", path,
			                      strerror(errno));
		return hash_file(path, hex, err);
	}
	if (artifact_memo_path(path, cache_dir, memo, sizeof memo, err) < 0)
		return -1;
	if (artifact_memo_read(memo, hex) == 0) {
		if (memo_hit)
			*memo_hit = true;
		return 0;
	}
	if (hash_file(path, hex, err) < 0)
		return -1;
	/* The memo is an optimisation: failing to write it is not an error. */
	char *dir = fs_join(cache_dir, "hashes");
	if (dir && fs_mkdir_p(dir, 0755, NULL) == 0)
		fs_write_file_atomic(memo, hex, 64, 0644, NULL);
	free(dir);
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

	if (dynlib_load(&ar_lib, ar_syms, DYNLIB_COUNT(ar_syms), err) < 0)
		return -1;
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
		fs_remove_tree(dest);
	return rc;
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
		fs_remove_tree(tmp);
		/* readable by the tasks whatever our umask (the server's is 066:
		 * its files are its own; a tree here is the task's code) */
		mode_t mask = umask(022);
		int ur = artifact_unpack(archive, tmp, err);
		umask(mask);
		if (ur < 0)
			goto out;
		nftw(tmp, make_read_only, 32, FTW_PHYS | FTW_DEPTH);
		/* rename() makes the tree appear whole or not at all. */
		if (rename(tmp, tree) < 0) {
			weir_error_set(err, WEIR_E_INTERNAL,
			               "cache %s: cannot rename into place: %s", tree,
			               strerror(errno));
			fs_remove_tree(tmp);
			goto out;
		}
		if (unpacked)
			*unpacked = true;
	}
	close(fd);
	fd = -1;
found:
	*dir = artifact_link_target(tree, name);
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

static const char *archive_ext(const char *path)
{
	static const char *const exts[] = {".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tgz",
	                                   ".tbz2",   ".txz",     ".tar",    ".zip",     NULL};
	size_t n = strlen(path);

	for (size_t i = 0; exts[i]; i++) {
		size_t e = strlen(exts[i]);
		if (n > e && !strcasecmp(path + n - e, exts[i]))
			return exts[i];
	}
	return "";
}

static int copy_file(const char *from, const char *to, struct weir_error *err)
{
	char buf[1 << 16];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	ssize_t got;

	if (in < 0)
		return weir_error_set(err, WEIR_E_INVALID, "artifact %s: %s", from,
		                      strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s: %s", to, strerror(errno));
		goto out;
	}
	while ((got = read(in, buf, sizeof buf)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 || write(out, buf, (size_t)got) != got) {
			weir_error_set(err, WEIR_E_INTERNAL, "copying %s to %s: %s", from, to,
			               strerror(errno));
			goto out;
		}
	}
	if (fsync(out) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s: %s", to, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

int artifact_ship(const char *archive, const char *dir, const char *memo_cache, char **shipped,
                  struct weir_error *err)
{
	char hex[65];
	char *dest = NULL, *tmp = NULL;

	*shipped = NULL;
	if (artifact_hash(archive, memo_cache, hex, NULL, err) < 0)
		return -1;
	if (asprintf(&dest, "%s/%s%s", dir, hex, archive_ext(archive)) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (fs_exists(dest)) {
		*shipped = dest;
		return 0;
	}
	if (fs_mkdir_p(dir, 0755, err) < 0) {
		free(dest);
		return -1;
	}
	if (asprintf(&tmp, "%s/.%s.%ld.tmp", dir, hex, (long)getpid()) < 0) {
		free(dest);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	unlink(tmp);
	/* a reader sees the whole archive or none: the copy is renamed in */
	if (copy_file(archive, tmp, err) < 0 ||
	    (rename(tmp, dest) < 0 && weir_error_set(err, WEIR_E_INTERNAL, "shipping %s to %s: %s",
	                                             archive, dest, strerror(errno)) < 0)) {
		unlink(tmp);
		free(tmp);
		free(dest);
		return -1;
	}
	free(tmp);
	*shipped = dest;
	return 0;
}
