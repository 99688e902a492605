/* yaml.h: YAML (and so JSON) text into a jansson value, remembering lines.
 *
 * Scalars become JSON strings, except unquoted ones that read as integers,
 * reals, true/false or null (YAML 1.1 core forms); mappings become objects
 * (keys in document order; a duplicate key is an error), sequences arrays.
 * Anchors and aliases are refused (no billion laughs).
 *
 * Each node's line is kept by its path ("roles.worker.memory",
 * "tasks[2].depends_on[0]"), so a validator that names a field can name the
 * line too: yaml_lines_find().
 */
#ifndef WEIR_LIB_YAML_H
#define WEIR_LIB_YAML_H

#include <jansson.h>
#include <stddef.h>

#include "lib/error.h"

struct yaml_lines; /* opaque: path -> line */

/* Parses one document.  `origin` (a file name) starts every error message.
 * On success returns a new reference and, if `lines` is not NULL, a map the
 * caller frees with yaml_lines_destroy().  NULL with err ("FILE:LINE: ...")
 * on error.  An empty document is an error. */
json_t *yaml_parse(const char *text, size_t len, const char *origin, struct yaml_lines **lines,
                   struct weir_error *err);

/* The 1-based line where `path` starts, or 0 if unknown.  For a path that
 * is not present, the line of its nearest present ancestor. */
int yaml_lines_find(const struct yaml_lines *lines, const char *path);

void yaml_lines_destroy(struct yaml_lines *lines);

#endif
