/* artifact_cache.c: cache layout and lookups without hashing or unpacking. */
#include "lib/artifact_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fs.h"

static int is_hex64(const char *s)
{
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

int artifact_memo_path(const char *archive, const char *cache_dir, char *out, size_t size,
                       struct weir_error *err)
{
	struct stat st;

	if (stat(archive, &st) < 0)
		return weir_error_set(err, WEIR_E_INVALID, "artifact %s: %s", archive,
		                      strerror(errno));
	/* Keyed by identity and version of the file: a rewritten archive has a
	 * new mtime or size (or inode, when replaced by rename). */
	if ((size_t)snprintf(out, size, "%s/hashes/%llu-%llu-%lld-%lld%09ld", cache_dir,
	                     (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
	                     (long long)st.st_size, (long long)st.st_mtim.tv_sec,
	                     (long)st.st_mtim.tv_nsec) >= size)
		return weir_error_set(err, WEIR_E_INVALID, "cache %s: path too long", cache_dir);
	return 0;
}

int artifact_memo_read(const char *memo_path, char hex[65])
{
	char buf[65];
	int fd = open(memo_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, buf, 64);
	close(fd);
	if (got != 64 || !is_hex64(buf))
		return -1;
	memcpy(hex, buf, 64);
	hex[64] = '\0';
	return 0;
}

char *artifact_link_target(const char *tree, const char *name)
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

int artifact_cache_lookup(const char *archive, const char *name, const char *cache_dir, char **dir,
                          struct weir_error *err)
{
	char memo[4300], hex[65], tree[4200];
	struct stat st;

	*dir = NULL;
	if (artifact_memo_path(archive, cache_dir, memo, sizeof memo, err) < 0)
		return -1;
	if (artifact_memo_read(memo, hex) < 0)
		return 0;
	snprintf(tree, sizeof tree, "%s/%s", cache_dir, hex);
	if (!(stat(tree, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	*dir = artifact_link_target(tree, name);
	if (!*dir)
		return weir_error_set(err, WEIR_E_INTERNAL, "cache: out of memory");
	return 1;
}
