/* workdir.h: a task's working directory.
 *
 * workdir_prepare() makes the working directory, links every top-level entry
 * of the job's src_dir into it, and links each artifact as its name:
 * directories (archive=false) directly, archives through the shared cache
 * (lib/artifact_cache.h): one already unpacked is linked at once; one that
 * is not is unpacked by the registered unpacker first.
 *
 * Why an unpacker hook: the launcher is started once per task, so its start
 * costs count.  The lean launcher binary (weir-launch) links neither
 * libarchive nor nettle; it unpacks a new archive by running
 * `weir artifact-unpack`, once per archive.  The full binary registers
 * exec/artifact.c's artifact_unpack_cached and unpacks in process.
 *
 * Errors: -1 with err naming the file and what was wrong.
 */
#ifndef WEIR_LAUNCH_WORKDIR_H
#define WEIR_LAUNCH_WORKDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"
#include "lib/run_as.h"
#include "model/job_spec.h"

/* Same contract as artifact_unpack_cached() in exec/artifact.h. */
typedef int (*workdir_unpack_fn)(const char *archive, const char *name, const char *cache_dir,
                                 char **dir, bool *unpacked, struct weir_error *err);

/* Sets how archives missing from the cache are unpacked; NULL restores the
 * default, workdir_unpack_with_helper. */
void workdir_set_unpacker(workdir_unpack_fn fn);

/* Runs `DIR/weir artifact-unpack ARCHIVE NAME CACHE`, DIR being this
 * program's directory, and reads the directory to link from its output. */
int workdir_unpack_with_helper(const char *archive, const char *name, const char *cache_dir,
                               char **dir, bool *unpacked, struct weir_error *err);

/* mkdir -p workdir; links src_dir's entries and the artifacts into it.
 * src_dir and cache_dir may be NULL (no archives then). */
int workdir_prepare(const char *workdir, const char *src_dir, const struct artifact *artifacts,
                    size_t n_artifacts, const char *cache_dir, struct weir_error *err);

/* The working directory given to the task's user: owned by ra's uid and
 * primary gid, mode 0700 (the links in it stay the launcher's).  Nothing
 * when ra is NULL or not set.  0, or -1 with err. */
int workdir_give(const char *workdir, const struct run_as *ra, struct weir_error *err);

#endif
