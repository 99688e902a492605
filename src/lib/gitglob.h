/* gitglob.h: a gitignore-style glob (Airflow's .airflowignore glob syntax,
 * `dag_ignore_file_syntax: glob`) as a POSIX extended regular expression. */
#ifndef WEIR_LIB_GITGLOB_H
#define WEIR_LIB_GITGLOB_H

#include <stdbool.h>

/* One line of an ignore file (comments and surrounding blanks already
 * taken off) as an ERE matched against a path relative to the ignore
 * file's folder, a folder's path ending in '/' when *dir_only.  Git's
 * rules: a pattern without a '/' (but a trailing one) matches a name at
 * any depth, one with a '/' is anchored at the folder; `*` and `?` match
 * within a name, `[...]` a class (`[!...]` its complement), `**` any
 * depth (`**` / as a prefix, / `**` as a suffix: everything inside, /
 * `**` / zero or more folders); a pattern matches a folder's contents too;
 * `\` quotes the next character.  *negate: the line began with `!` (a
 * match keeps the path); *dir_only: it ended with `/` (it matches folders
 * only).  Newly allocated; NULL for an empty pattern or out of memory. */
char *gitglob_to_ere(const char *pattern, bool *negate, bool *dir_only);

#endif
