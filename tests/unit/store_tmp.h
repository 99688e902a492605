/* store_tmp.h: a store file in a fresh temporary folder, and its removal,
 * for the unit tests that open a store.  Header only: each test file is a
 * binary of its own. */
#ifndef WEIR_TESTS_STORE_TMP_H
#define WEIR_TESTS_STORE_TMP_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Makes the folder $TMPDIR/NAME-XXXXXX (/tmp without TMPDIR) into `dir` and
 * names dir/weir.db in `path`.  0, or -1 when the folder cannot be made. */
static inline int store_tmp_make(char *dir, size_t dir_size, char *path, size_t path_size,
                                 const char *name)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, dir_size, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, path_size, "%s/weir.db", dir);
	return 0;
}

/* Removes the store file `path` with its -wal and -shm files, then `dir`. */
static inline void store_tmp_remove(const char *dir, const char *path)
{
	static const char *const suffix[] = {"", "-wal", "-shm"};
	char p[512];

	for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		snprintf(p, sizeof p, "%s%s", path, suffix[i]);
		unlink(p);
	}
	rmdir(dir);
}

#endif
