/* artifact_cache.h: the layout of the cache of unpacked archives, and the
 * lookups that need neither hashing nor libarchive.
 *
 * Cache layout (docs/internals/launch.md):
 *   CACHE/<sha256>/        the unpacked tree (read-only)
 *   CACHE/<sha256>.lock    flock()ed while one process unpacks
 *   CACHE/hashes/<dev>-<ino>-<size>-<mtime>   memo: that file's sha256
 *
 * These functions live apart from exec/artifact.c so that the lean launcher
 * (which links neither libarchive nor nettle, to start fast) can link an
 * archive that is already in the cache.
 */
#ifndef WEIR_LIB_ARTIFACT_CACHE_H
#define WEIR_LIB_ARTIFACT_CACHE_H

#include <stddef.h>

#include "lib/error.h"

/* The memo file of `archive` (keyed by the file's identity and version)
 * into out.  0, or -1 with err when the archive cannot be stat()ed. */
int artifact_memo_path(const char *archive, const char *cache_dir, char *out, size_t size,
                       struct weir_error *err);

/* The sha256 the memo file remembers: 0 and hex, or -1 when there is none. */
int artifact_memo_read(const char *memo_path, char hex[65]);

/* The directory a task links for the unpacked `tree`: the tree itself, or
 * its only top-level entry when that is a directory named `name` (an
 * archive of the folder itself, `zip -r venv.zip venv/`).  Caller frees. */
char *artifact_link_target(const char *tree, const char *name);

/* 1 with *dir (caller frees) when `archive` is known by its memo and already
 * unpacked in the cache; 0 when it is not (it must be hashed and unpacked);
 * -1 with err when the archive cannot be read. */
int artifact_cache_lookup(const char *archive, const char *name, const char *cache_dir, char **dir,
                          struct weir_error *err);

#endif
