/* log_append.h: the server's side of a shipped log chunk (POST
 * /api/v1/launch/log): bytes at an offset are appended to the task's log
 * file only where they continue it.
 *
 * The file's size is the truth: a chunk at offset N with the file at size
 * S is written from byte S-N of the chunk when N <= S (a chunk sent again,
 * whole or in part, adds nothing twice), and refused when N > S (a gap: the
 * sender must go on from S).
 */
#ifndef WEIR_API_LOG_APPEND_H
#define WEIR_API_LOG_APPEND_H

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

/* Appends data[0..len) placed at `offset` to the file at `path` (created
 * with its folder when absent).  *size gets the file's size afterwards (or
 * now, on a gap).  0 written (or nothing to write); 1 a gap (offset beyond
 * the size; nothing written); -1 with err on an I/O error. */
int log_append_at(const char *path, uint64_t offset, const char *data, size_t len, uint64_t *size,
                  struct weir_error *err);

#endif
