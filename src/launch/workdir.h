/* workdir.h: a task's working directory and the shared artifact cache.
 *
 * workdir_prepare() makes the working directory, links every top-level entry
 * of the job's src_dir into it, and links each artifact as its name:
 * directories (archive=false) directly, archives (zip, tar, tar.gz/bz2/xz)
 * through the cache: unpacked once per content hash into
 * CACHE/<sha256>/, read-only, shared by every task and job.
 *
 * Cache layout (docs/internals/launch.md):
 *   CACHE/<sha256>/        the unpacked tree (read-only)
 *   CACHE/<sha256>.lock    flock()ed while one launcher unpacks
 *   CACHE/hashes/<dev>-<ino>-<size>-<mtime_ns>   memo: that file's sha256
 *
 * An archive whose only top-level entry is a directory with the artifact's
 * own name (zip -r venv.zip venv/) is linked at that directory, so
 * workdir/venv/bin/python works whether the user zipped the folder or its
 * contents (TonY's way).
 *
 * Errors: -1 with err naming the file and what was wrong.
 */
#ifndef WEIR_LAUNCH_WORKDIR_H
#define WEIR_LAUNCH_WORKDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"
#include "model/job_spec.h"

/* The sha256 (64 hex digits + NUL into hex) of the file at `path`.  With a
 * cache_dir, a memo keyed by the file's stat is read first and written
 * after hashing, so a large archive is hashed once.  *memo_hit (if not
 * NULL) says whether the memo answered. */
int artifact_hash(const char *path, const char *cache_dir, char hex[65], bool *memo_hit,
                  struct weir_error *err);

/* Unpacks `archive` into `dest` (which must not exist).  Refuses, and leaves
 * nothing behind, when an entry's path is absolute or has a ".." component,
 * or a hard link points outside. */
int artifact_unpack(const char *archive, const char *dest, struct weir_error *err);

/* Unpacks `archive` into CACHE/<sha256> unless it is already there; sets
 * *dir (caller frees) to the directory to link and *unpacked to whether this
 * call did the unpacking.  Safe against concurrent callers (processes). */
int artifact_unpack_cached(const char *archive, const char *name, const char *cache_dir, char **dir,
                           bool *unpacked, struct weir_error *err);

/* mkdir -p workdir; links src_dir's entries and the artifacts into it.
 * src_dir and cache_dir may be NULL (no archives then). */
int workdir_prepare(const char *workdir, const char *src_dir, const struct artifact *artifacts,
                    size_t n_artifacts, const char *cache_dir, struct weir_error *err);

/* rm -rf that first gives back the write permission the cache took away. */
int workdir_remove_tree(const char *path);

#endif
