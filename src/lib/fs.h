/* fs.h: small file-system helpers shared by every layer. */
#ifndef WEIR_LIB_FS_H
#define WEIR_LIB_FS_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/error.h"

/* mkdir -p with `mode` for the directories it creates. 0 or -1 with err. */
int fs_mkdir_p(const char *path, mode_t mode, struct weir_error *err);
/* Reads a whole file; NUL-terminates; *len (if not NULL) excludes the NUL.
 * Caller frees.  NULL with err. */
char *fs_read_file(const char *path, size_t *len, struct weir_error *err);
/* Writes through a temporary file and rename(): readers never see half a file. */
int fs_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode,
                         struct weir_error *err);
/* The absolute path of the folder holding `path` (relative paths against
 * the current directory), newly allocated; NULL when out of memory or the
 * current directory cannot be read. */
char *fs_abs_dirname(const char *path);
/* "a" + "/" + "b", newly allocated. */
char *fs_join(const char *a, const char *b);
/* rm -rf that first gives back write permission taken away from read-only
 * directories (the artifact cache).  0, or -1 with errno set. */
int fs_remove_tree(const char *path);
/* 1 if `path` exists (any type), 0 if not. */
int fs_exists(const char *path);

#endif
