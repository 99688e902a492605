/* spare_dirs.h: a task's folders and log file made ahead by the spare
 * shim that will run it (launch/agent_pool.h).
 *
 * Each new inode costs an ext4 home 0.2-0.5 ms of kernel time (the inode
 * allocator), and a task's start made three: the job's folder
 * HOME/jobs/ID, the try's work folder HOME/jobs/ID/ROLE-I.A and its log
 * HOME/jobs/ID/ROLE-I.A.log.  A spare makes them while it waits for its
 * start, under a name of its own:
 *
 *   HOME/jobs/.spares/AGENTPID-PID/            the spare's own folder, kept
 *   HOME/jobs/.spares/AGENTPID-PID/next/       the folder it gives (0755)
 *   HOME/jobs/.spares/AGENTPID-PID/next/.work  an empty work folder (0755)
 *   HOME/jobs/.spares/AGENTPID-PID/next/.log   an empty log file (0644)
 *
 * and at its start renames them into place: .work and .log to the try's
 * names inside its folder (a spare back from a task makes them under its
 * task's names, most often the next task's too: no rename then), then the
 * folder to HOME/jobs/ID when there is
 * none (RENAME_NOREPLACE); when there is one (a retry, a gang's second
 * task), the two into it, the spare's folder left empty.  A rename makes
 * no inode.  Nothing is ever replaced: any failure (a name taken, another
 * file system, a kernel without RENAME_NOREPLACE, a log or work folder
 * elsewhere than HOME/jobs/ID/NAME) leaves the caller to make what is
 * missing as it always did, which finds in place what was placed.
 *
 * Removal (spare_dir_clear) takes only files and empty folders: whatever
 * a task wrote is never in a spare's folder, and never removed from it.
 * Nothing lists HOME/jobs (the server and the API name a job's files by
 * its id), so `.spares` is seen by no reader.
 */
#ifndef WEIR_LAUNCH_SPARE_DIRS_H
#define WEIR_LAUNCH_SPARE_DIRS_H

#include <stdbool.h>
#include <sys/types.h>

#define SPARE_DIRS_PATH_MAX 4096

#define SPARE_DIRS_NAME_MAX 256

/* `dir` (JOBS/.spares, made or found) marked a top of a hierarchy
 * (FS_TOPDIR_FL, what `chattr +T` sets), once.  ext4 then places each
 * folder made in it (a spare's, which becomes a job's folder) as it places
 * top-level folders: spread over the block groups with room (Orlov),
 * instead of in the group of .spares, and the work folder and the log in
 * it follow their parent.  Without a journal, ext4's inode allocator
 * passes over every inode freed in the last minutes in the group it
 * searches, one buffer lookup each, from the group's start: after a large
 * removal (an earlier home's, jobs cleaned up) three inodes made in that
 * one group measured 0.56-0.84 ms, against 0.05-0.12 ms spread.  A file
 * system without the flag refuses it, and nothing changes. */
void spare_dirs_spread(const char *dir);

/* One spare's folder. */
struct spare_dir {
	char own[SPARE_DIRS_PATH_MAX];  /* JOBS/.spares/AGENTPID-PID, kept; "" when none */
	char path[SPARE_DIRS_PATH_MAX]; /* own/next, the folder it gives; "" when none */
	size_t jobs_len;                /* JOBS's length in path */
	bool ready;                     /* the work folder and the log are in it */
	/* the names they have there: .work and .log, or the names of the
	 * task before (spare_dir_make_named) */
	char work[SPARE_DIRS_NAME_MAX], log[SPARE_DIRS_NAME_MAX];
	/* spare_dir_place's, when it placed both: the names they took */
	char placed_work[SPARE_DIRS_NAME_MAX], placed_log[SPARE_DIRS_NAME_MAX];
};

/* The folder of spare `pid` of agent `agent_pid` under `jobs` (the real
 * path of HOME/jobs) into `out`.  0, or -1 when it does not fit. */
int spare_dir_path(char *out, size_t size, const char *jobs, pid_t agent_pid, pid_t pid);

/* In the spare, while it waits: its folder with .work and .log made
 * (JOBS/.spares too, the first time; what is there already is kept).  0 with sd->ready, or -1
 * (errno) with nothing ready; `jobs` NULL or "": -1 at once. */
int spare_dir_make(struct spare_dir *sd, const char *jobs, pid_t agent_pid, pid_t pid);
/* The same with the work folder and the log named `work_name` and
 * `log_name` in the spare's folder (a spare back from a task: its task's
 * names, most often the next one's too, which then go into place without
 * a rename of their own); NULL or not placeable (".", "..", ".work", ".log",
 * a slash, too long, both the same): .work and .log. */
int spare_dir_make_named(struct spare_dir *sd, const char *jobs, pid_t agent_pid, pid_t pid,
                         const char *work_name, const char *log_name);

/* At the task's start: the work folder placed at `workdir` and the log at
 * `log`, both JOBS/ID/NAME with the same ID (JOBS: the folder's parent's
 * parent, ID not starting with a dot).  0 when both are in place (the
 * job's folder too), -1 when not all are: the caller makes what is
 * missing.  Either way sd->ready is false after; sd->placed_work and
 * sd->placed_log are the names placed, or "". */
int spare_dir_place(struct spare_dir *sd, const char *log, const char *workdir);

/* The folder at `path` removed with what it holds, files and empty
 * folders only (a folder that is not empty stays, and so does `path`
 * then).  A missing `path` is not an error.  0, or -1. */
int spare_dir_clear(const char *path);

/* The spare's own folder removed, with the folder it gives and its parts
 * (the same care: files and empty folders only). */
int spare_dir_remove(const struct spare_dir *sd);

/* The agent's: spare `pid`'s folder removed (it was reaped, or let go). */
void spare_dirs_remove_of(const char *jobs, pid_t agent_pid, pid_t pid);

/* The agent's, at its start: every spare folder of an agent other than
 * `self` removed (one agent per home: the others are gone; a spare of
 * one still alive removes its own as it goes).  0, or -1 when JOBS/.spares
 * cannot be read (none is not an error). */
int spare_dirs_sweep(const char *jobs, pid_t self);

#endif
