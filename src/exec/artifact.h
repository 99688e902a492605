/* artifact.h: archives (zip, tar, tar.gz/bz2/xz, conda-pack) unpacked once
 * per content hash into the cache (layout in lib/artifact_cache.h), shared
 * read-only by every task and job that uses the same archive.
 *
 * Links libarchive and nettle; the lean launcher reaches these functions by
 * running `weir artifact-unpack` (see launch/workdir.h).
 * Errors: -1 with err naming the file and what was wrong.
 */
#ifndef WEIR_EXEC_ARTIFACT_H
#define WEIR_EXEC_ARTIFACT_H

#include <stdbool.h>

#include "lib/error.h"

/* The sha256 (64 hex digits + NUL into hex) of the file at `path`.  With a
 * cache_dir, the stat-keyed memo is read first and written after hashing,
 * so a large archive is hashed once.  *memo_hit (if not NULL) says whether
 * the memo answered. */
int artifact_hash(const char *path, const char *cache_dir, char hex[65], bool *memo_hit,
                  struct weir_error *err);

/* Unpacks `archive` into `dest` (which must not exist).  Refuses, and leaves
 * nothing behind, when an entry's path is absolute or has a ".." component,
 * or a hard link points outside. */
int artifact_unpack(const char *archive, const char *dest, struct weir_error *err);

/* Unpacks `archive` into CACHE/<sha256> unless it is already there; sets
 * *dir (caller frees) to the directory to link and *unpacked (if not NULL)
 * to whether this call did the unpacking.  Safe against concurrent callers
 * (processes): one unpacks under an flock, the others wait and reuse. */
int artifact_unpack_cached(const char *archive, const char *name, const char *cache_dir, char **dir,
                           bool *unpacked, struct weir_error *err);

/* Places `archive` in `dir` (a folder every node reads) under its content
 * hash, `<sha256>.<ext>` (ext: .zip, .tar.gz, ... as the archive's name
 * ends), once: a copy under a temporary name, then an atomic rename; an
 * existing one is kept.  `memo_cache` is where artifact_hash keeps its memo.
 * *shipped (caller frees) gets the path.  0, or -1 with err. */
int artifact_ship(const char *archive, const char *dir, const char *memo_cache, char **shipped,
                  struct weir_error *err);

#endif
