/* command.h: whether a task's command needs a shell, and its words when
 * it does not.
 *
 * As make does: a command with none of the shell's special characters
 * (; & | < > ( ) $ ` \ " ' * ? [ # ~ = % and newline), whose first word is
 * no keyword or builtin of the shell (if, for, {, !, cd, exit, export, ...),
 * means the same run directly as words split at blanks (spaces and tabs)
 * as it means to /bin/sh -c; the launcher then saves the shell's start and
 * the program is its own child.  Pure; no I/O.
 */
#ifndef WEIR_LAUNCH_COMMAND_H
#define WEIR_LAUNCH_COMMAND_H

#include <stdbool.h>

#include "lib/strvec.h"

/* True when `cmd` must go through /bin/sh -c (an empty command too). */
bool command_needs_shell(const char *cmd);

/* The command's words, when it needs no shell: 0 with `out` filled (a
 * NULL-terminated argv in out->v); 1 when it needs the shell (out left
 * empty); -1 when out of memory. */
int command_words(const char *cmd, struct strvec *out);

#endif
