/* task_user.h: who local tasks run as, decided once at start from
 * `task_user` and the server's own uid (docs/security.md, "Tasks and the
 * server's user"), and the modes of the home that follow from it.
 *
 * The rule: `task_user` set: its user; not set and the server is root:
 * `nobody`; not set otherwise: the server's own user.  A task_user that
 * names the server's own user means the same as the last case ("shared").
 * Only root can start a program as another user: a task_user other than
 * the server's, the server not root, is refused. */
#ifndef WEIR_SERVER_TASK_USER_H
#define WEIR_SERVER_TASK_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/error.h"
#include "lib/run_as.h"

struct task_user {
	struct run_as run_as; /* set: tasks run as another uid than the server */
	char name[64];        /* the tasks' user's name (or its uid) */
	uid_t server_uid;
	char server_name[64];
};

/* Decides who tasks run as from `configured` (cfg->task_user, or NULL) and
 * the server's uid.  0, or -1 with err naming task_user and what is wrong
 * (no such user; another user while the server is not root; root without
 * task_user and no `nobody`). */
int task_user_decide(const char *configured, uid_t server_uid, struct task_user *out,
                     struct weir_error *err);

/* The start-up line (no newline): which user tasks run as, and when it is
 * the server's own, loudly that a task can read the home. */
void task_user_describe(const struct task_user *tu, char *buf, size_t size);

/* The decision made at start, for the parts that make files a task writes
 * (the DAG manager's $WEIR_OUTPUT); none was made: tasks run as the server. */
void task_user_set_current(const struct task_user *tu);
const struct run_as *task_user_current(void);

/* A file the task will write, made empty (0600) and given to the task's
 * user, in a folder only the server writes: O_EXCL and no link followed.
 * Nothing when tasks run as the server.  0, or -1 with errno. */
int task_user_make_file(const char *path);

/* The home's modes, set at every start (an existing home is tightened):
 * the home 0711 when tasks run as another uid (they pass through it to
 * their folders, and list nothing), else 0700; every plain file at its
 * top (token, secret.key, weir.db and its -wal and -shm, weir.yaml, logs)
 * 0600; jobs/, cache/ and dag_runs/ 0711; agent/ 0700.  A jobs/ or
 * dag_runs/ still open to others (an older home) is walked one level
 * down once: each job's (run's) folder 0711, its plain files (the logs)
 * 0600; tasks' working folders are not entered.  When tasks run as
 * another user, a folder above the home they cannot pass through is
 * warned of.  0, or -1 with err. */
int task_user_tighten_home(const char *home, const struct task_user *tu, struct weir_error *err);

#endif
