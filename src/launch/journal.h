/* journal.h: a task's journal, written by its shim, read by the agent.
 *
 * One file per task attempt, DIR/KEY.journal (DIR: journal_dir_for(), below;
 * KEY: "JOB.ROLE.INDEX.ATTEMPT";
 * role names hold no dot), one JSON object a line, appended in this order:
 *
 *   {"t":"shim","pid":P,"start":TICKS,   the shim, first thing (its pid and
 *    "group":NAME,"nonce":N}              start time: one process, not a
 *                                         reused pid; the agent's pool group
 *                                         it runs in, if any; its job's
 *                                         nonce, the start's)
 *   {"t":"started","pid":P,"port":N}     the program runs
 *   {"t":"exited", the exited report's fields (launch/report.h),
 *    "reported": true when the shim told the server itself (HTTP)}
 *
 * No record is fsync'd.  The journal must survive the death of any process
 * (kill -9 of the shim, the agent, the server), which the page cache gives:
 * a line written is there for the next reader.  A power loss can lose the
 * store's last commits too (it runs WAL with synchronous=NORMAL), so the
 * journal is kept to the same level rather than paying 0.3-0.7 ms a task.
 *
 * A journal without "exited" whose shim is gone is a lost task; one with it
 * holds a result the agent keeps until the server has acknowledged it (then
 * the file is removed).  A torn last line (the shim killed mid-write) is
 * ignored.  See docs/internals/launch.md, "The agent".
 */
#ifndef WEIR_LAUNCH_JOURNAL_H
#define WEIR_LAUNCH_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* A task attempt's key; the buffer for it. */
#define JOURNAL_KEY_MAX 128
/* "JOB.ROLE.INDEX.ATTEMPT" into buf; 0, or -1 when it does not fit. */
int journal_key(char *buf, size_t size, long long job, const char *role, int index, int attempt);
/* The key's parts (role into role_buf).  0, or -1 when `key` is not one. */
int journal_key_parse(const char *key, long long *job, char *role_buf, size_t role_size, int *index,
                      int *attempt);

/* Opens (creating, mode 0600) DIR/KEY.journal for appending.  The
 * descriptor, or -1 with errno. */
int journal_open(const char *dir, const char *key);

/* Appends `rec` as one line (one write, no fsync: see the top).  0 or -1. */
int journal_append(int fd, json_t *rec);
/* The same in two steps: `rec` as a line ending in a newline (allocated,
 * *len its length; NULL when out of memory), then appended.  The shim
 * sends the same line to the agent on its pipe (journal_state_add). */
char *journal_line(json_t *rec, size_t *len);
int journal_append_line(int fd, const char *line, size_t len);

/* What a journal says. */
struct journal_state {
	int shim_pid;        /* 0: no shim record */
	uint64_t shim_start; /* its start time (lib/proc.h start_ticks) */
	char group[48];      /* its pool group; "" when none */
	long long nonce;     /* its job's nonce (the start's); 0: none */
	bool started;
	int pid, port;  /* from "started" */
	json_t *exited; /* the "exited" record (owned); NULL: none yet */
	bool reported;  /* the shim reported it over HTTP itself */
};

/* Reads DIR/KEY.journal.  0, or -1 when it cannot be read (errno). */
int journal_read(const char *dir, const char *key, struct journal_state *out);
void journal_state_release(struct journal_state *st);
/* One record (a line, without its newline) added to `st`, as journal_read
 * reads each; a line that is no record is ignored. */
void journal_state_add(struct journal_state *st, const char *line);

/* Whether DIR/KEY.journal holds nothing at all: 1 when it is not there or
 * empty (its shim never wrote its first line, the "shim" record, which
 * comes before anything of the task runs: its program never started), 0
 * when it holds anything, -1 when that cannot be told (errno). */
int journal_is_blank(const char *dir, const char *key);

/* Removes DIR/KEY.journal. */
void journal_remove(const char *dir, const char *key);

/* The folder of the journals of the agent of `home` (allocated; NULL when
 * out of memory), made (mode 0700) if missing.  A journal must outlive any
 * process, not the machine (a reboot ends its task too), so it lives in
 * memory when it can: under $XDG_RUNTIME_DIR, else /dev/shm, as
 * "weir-UID-HASH" (HASH: of the home's real path), accepted only as a
 * directory of this user's that no one else may enter; else (and while
 * HOME/agent/tasks holds journals of an earlier agent) HOME/agent/tasks.
 * The same home always gets the same folder, so a restarted agent finds
 * its predecessor's journals.  *in_memory says which it is. */
char *journal_dir_for(const char *home, bool *in_memory);

#endif
