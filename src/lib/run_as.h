/* run_as.h: the user a task's program runs as, when not the launcher's own:
 * its uid, primary gid and supplementary groups, resolved once by the
 * server, carried to launchers as text (WEIR_TASK_USER=UID:GID[:G1,G2...])
 * and taken in the program's child just before exec
 * (docs/security.md, "Tasks and the server's user"). */
#ifndef WEIR_LIB_RUN_AS_H
#define WEIR_LIB_RUN_AS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/error.h"

/* The environment variable that carries a run_as to the launchers. */
#define RUN_AS_ENV "WEIR_TASK_USER"
/* The most supplementary groups kept (the rest are left out, with a warning
 * at resolution). */
#define RUN_AS_GROUPS_MAX 64
/* Room for run_as_format's text. */
#define RUN_AS_TEXT_MAX (24 * (RUN_AS_GROUPS_MAX + 2))

struct run_as {
	bool set; /* false: the program runs as the launcher does */
	uid_t uid;
	gid_t gid;
	size_t n_groups;
	gid_t groups[RUN_AS_GROUPS_MAX];
};

/* The user `name` (or a decimal uid) from the password and group databases:
 * its uid, its primary gid and the groups it belongs to (getgrouplist).
 * 0, or -1 with err naming the user when it does not exist. */
int run_as_resolve(const char *name, struct run_as *out, struct weir_error *err);

/* "UID:GID:G1,G2,..." (":" and no list when it has no groups) into buf.
 * 0, or -1 when it does not fit. */
int run_as_format(const struct run_as *ra, char *buf, size_t size);

/* The text of run_as_format back; NULL or "" is `set = false`.  0, or -1
 * when the text is malformed (out is then `set = false`). */
int run_as_parse(const char *text, struct run_as *out);

/* Becomes ra's user: setgroups, setresgid, setresuid as raw system calls
 * (the calling thread alone, async-signal-safe: the program's child, which
 * shares its launcher's memory until exec).  Nothing when !ra->set.  0, or
 * -1 with errno. */
int run_as_become(const struct run_as *ra);

#endif
