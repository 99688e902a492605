/* store.h: weir's metadata in one SQLite file (WAL): jobs, tasks of every
 * attempt, the event journal, and a key/value table for the server.  The
 * schema also holds the DAG tables, whose functions are in store/dag_store.h.
 *
 * The store keeps and returns; it decides nothing.  Rows carry states and
 * causes as enums (model/states.h, model/end_cause.h); the columns hold
 * their names, turned from and into the enums here and nowhere else in the
 * store (a name the tables do not know reads as an error: WEIR_E_INTERNAL).
 * The schema and its migrations are in store/schema.c and described in
 * docs/internals/store.md.
 *
 * Threading: one handle per thread (the server has one thread).  A handle
 * keeps its prepared statements.
 *
 * Nullable columns map to sentinels in the C structs: a time of 0, an
 * exit_code of -1, a signal / pid / port of 0, a NULL string read back as ""
 * (reason, host, gpus) are SQL NULL / absent.
 *
 * Errors: every function that can fail returns -1 (or NULL) and fills `err`
 * (may be NULL): WEIR_E_NOT_FOUND for a missing row, WEIR_E_CONFLICT for a
 * duplicate task, WEIR_E_INVALID for a state or cause out of range, WEIR_E_INTERNAL for
 * SQLite's own failures (the message names the statement's purpose and
 * SQLite's text).  A failed call changes nothing, except inside a
 * transaction the caller opened, which the caller then rolls back.
 *
 * Row structs own their strings; release them with *_row_release() (or
 * *_rows_free() for the arrays the list functions return).
 */
#ifndef WEIR_STORE_STORE_H
#define WEIR_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/end_cause.h"
#include "model/states.h"
#include "store/schema.h"

struct store; /* opaque */

/* STORE_SCHEMA_VERSION (store/schema.h): the version this build writes;
 * store_open() migrates older files forward and refuses newer ones. */

#define STORE_STATE_MAX 16
#define STORE_REASON_MAX 512

/* One job.  Fields marked (insert) are written by store_job_insert(); all
 * but id, name, spec_json, framework, max_restarts and submitted_at are
 * written by store_job_update(). */
struct job_row {
	int64_t id;           /* assigned by store_job_insert() */
	char *name;           /* (insert) */
	char *spec_json;      /* (insert) job_spec_to_json()'s text */
	char *framework;      /* (insert) for listings without parsing the spec */
	enum job_state state; /* (insert) */
	enum end_cause cause; /* (insert) why it ended; END_CAUSE_NONE until then */
	char *reason;         /* (insert) "" when none */
	int priority;         /* (insert) */
	int attempt;          /* (insert) current attempt, from 1 */
	int max_restarts;     /* (insert) copied from the spec, for listings */
	int exit_code;        /* -1: none */
	bool restart_pending; /* a gang restart was decided; tasks still stopping */
	int64_t submitted_at; /* (insert) epoch ms */
	int64_t queued_at;    /* (insert) when the current attempt was queued */
	int64_t allocated_at; /* the current attempt got its gang; 0: not yet */
	int64_t running_at;   /* the current attempt's gang completed; 0: not yet */
	int64_t started_at;   /* first time any attempt ran; 0: never */
	int64_t ended_at;     /* 0: not ended */
	/* (insert) random, never 0 for a job inserted by this weir
	 * (store_job_nonce_new); 0: inserted before the store had it.  What
	 * tells this job from one a lost turn gave the same id (a power cut:
	 * docs/internals/recovery.md); the node's agent keys its tasks by it
	 * too */
	int64_t nonce;
};

/* One task: (job_id, attempt, role, idx) is the key.  Every attempt's rows
 * are kept. */
struct task_row {
	int64_t job_id;
	int attempt;
	char *role;
	int idx;
	enum task_state state;
	enum end_cause cause; /* why it ended; END_CAUSE_NONE until then */
	char *reason;         /* "" when none; "OOMKilled" ... */
	char *host;           /* "" until registered */
	int port;             /* 0: none */
	int launcher_pid;     /* 0: none */
	int pid;              /* the user program's; 0: none */
	char *gpus;           /* "0,1"; "" when none */
	int exit_code;        /* -1: none */
	int signal;           /* 0: none */
	bool oom_killed;
	int64_t peak_memory_bytes; /* 0: unknown */
	int64_t cpu_time_ms;       /* 0: unknown */
	int64_t registered_at;     /* epoch ms; 0: not yet */
	int64_t started_at;
	int64_t ended_at;
};

/* One journal entry. */
struct event_row {
	int64_t id;
	int64_t job_id;
	int64_t time; /* epoch ms */
	char *kind;   /* short word: "submitted", "state", "task", "restart", ... */
	char *message;
};

/* Adds the store's series (weir_store_commit_seconds) to the metrics page;
 * store_open() does it.  Once; again does nothing. */
void store_series_add(void);

/* Opens (creating if absent) the database at `path`, turns on WAL and
 * foreign keys, and migrates the schema to STORE_SCHEMA_VERSION.  NULL on
 * error (an unreadable file, a newer schema, a failed migration). */
struct store *store_open(const char *path, struct weir_error *err);
/* Finalizes the statements and closes; NULL is a no-op. */
void store_close(struct store *s);

/* The schema version of the open file (== STORE_SCHEMA_VERSION after open). */
int store_schema_version(struct store *s);

/* The open SQLite connection, for the other tables' modules on the same
 * file (store/dag_store.h): they prepare their own statements on it and use
 * store_begin()/store_commit() for transactions.  Borrowed: valid until
 * store_close(). */
struct sqlite3 *store_db(struct store *s);

/* One transaction at a time (no nesting).  store_begin() opens it and
 * store_commit() ends it; SQLite's BEGIN IMMEDIATE runs only at the first
 * write in between (store_write_starts(), called by every statement that
 * writes, here and in dag_store.c), so a turn that only reads costs no
 * transaction.  What a commit returned 0 for survives kill -9 of the
 * process (WAL); a commit that fails leaves the transaction open for the
 * caller's rollback, and so does a commit after a write of the same
 * transaction found the disk full (WEIR_E_UNAVAILABLE: nothing half
 * stored).  store_rollback() on a handle with no open transaction is a
 * no-op returning 0. */
int store_begin(struct store *s, struct weir_error *err);
int store_commit(struct store *s, struct weir_error *err);
int store_rollback(struct store *s, struct weir_error *err);
/* store_commit() of the open transaction (none open: nothing to commit),
 * then the WAL synced to the disk: what this returned 0 for, and every
 * commit before it, survives a power cut (or a kernel crash) too, as with
 * synchronous=FULL where the disk promises power-safe overwrites (SQLite's
 * default for unix, which weir keeps).  A plain store_commit() survives a
 * kill -9 only, until the WAL's next sync (a checkpoint, or this).  No
 * commit wrote since the last sync here: nothing to sync, 0 at once.  For
 * what leaves the process telling its receiver it may forget (the agent's
 * acknowledgements); -1 with err when the commit failed (still open: the
 * caller rolls back) or the sync did (WEIR_E_UNAVAILABLE: committed, not
 * known durable). */
int store_commit_durable(struct store *s, struct weir_error *err);
bool store_in_transaction(struct store *s);
/* Whether the open transaction has written (its BEGIN ran). */
bool store_tx_wrote(const struct store *s);
/* A statement that writes is about to run: BEGIN IMMEDIATE when a
 * transaction is open and has not begun yet.  0, or -1 with err. */
int store_write_starts(struct store *s, struct weir_error *err);
/* How many transactions with writes were rolled back so far: what memory
 * kept of those writes (the DAG manager's run cache) is ahead of the file
 * when this moved. */
uint64_t store_rollbacks(const struct store *s);
/* Whether a write found the disk full and no commit since said space
 * returned (store/sql.h: logged once each way, so a caller logs nothing
 * more of an error while this holds).  A full disk's error is
 * WEIR_E_UNAVAILABLE: the API answers 503, "... the disk is full ...". */
bool store_disk_full(const struct store *s);

/* ---- jobs ---- */

/* Inserts the (insert) fields of `row`; *id gets the new id. */
int store_job_insert(struct store *s, const struct job_row *row, int64_t *id,
                     struct weir_error *err);
/* Fills `out` (released by the caller) or WEIR_E_NOT_FOUND. */
int store_job_get(struct store *s, int64_t id, struct job_row *out, struct weir_error *err);
/* As store_job_get, but only id, state, reason and started_at are read (the
 * rest of `out` zero, its text NULL): what a TI's view shows of its job,
 * without the spec's text.  Released with job_row_release. */
int store_job_glance(struct store *s, int64_t id, struct job_row *out, struct weir_error *err);
/* Jobs newest first (id DESC).  `state` NULL: all states; `limit` <= 0: no
 * limit.  *rows is an array of *n rows (NULL when 0), freed with
 * job_rows_free(). */
int store_job_list(struct store *s, const enum job_state *state, int limit, struct job_row **rows,
                   size_t *n, struct weir_error *err);
/* Queued, starting and running jobs by priority DESC, id ASC: the queue's
 * order and what recovery walks. */
int store_jobs_active(struct store *s, struct job_row **rows, size_t *n, struct weir_error *err);
/* The queued ones only, in the same order (the queue pass's read: it runs on
 * every job's end and needs only what waits). */
int store_jobs_queued(struct store *s, struct job_row **rows, size_t *n, struct weir_error *err);
/* Writes every field but id, name, spec_json, framework, max_restarts and
 * submitted_at of the job `row->id`.  WEIR_E_NOT_FOUND if it is absent. */
int store_job_update(struct store *s, const struct job_row *row, struct weir_error *err);
void job_row_release(struct job_row *row);
void job_rows_free(struct job_row *rows, size_t n);

/* ---- tasks ---- */

/* WEIR_E_CONFLICT if the key exists; WEIR_E_NOT_FOUND if the job does not. */
int store_task_insert(struct store *s, const struct task_row *row, struct weir_error *err);
int store_task_get(struct store *s, int64_t job_id, int attempt, const char *role, int idx,
                   struct task_row *out, struct weir_error *err);
/* Tasks of a job: of one attempt (attempt >= 1) or of all (attempt 0), by
 * attempt, then in insertion order (the order of the spec's roles). */
int store_tasks_of_job(struct store *s, int64_t job_id, int attempt, struct task_row **rows,
                       size_t *n, struct weir_error *err);
/* Writes every field but the key.  WEIR_E_NOT_FOUND if absent. */
int store_task_update(struct store *s, const struct task_row *row, struct weir_error *err);
void task_row_release(struct task_row *row);
void task_rows_free(struct task_row *rows, size_t n);

/* ---- what the job manager keeps of a job beside its row ----
 *
 * Columns of the job's row that store_job_update() leaves alone: each is
 * written when its fact is learnt, by the piece that learns it. */

/* A result decided for the job that waits for its gang's last task. */
struct job_outcome {
	enum job_state state;
	int exit_code; /* -1: none */
	enum end_cause cause;
	char reason[STORE_REASON_MAX];
};

/* 0 with *out, 1 when none waits, -1 with err (WEIR_E_NOT_FOUND: no job). */
int store_job_outcome_get(struct store *s, int64_t job_id, struct job_outcome *out,
                          struct weir_error *err);
/* `o` NULL: none waits any more. */
int store_job_outcome_set(struct store *s, int64_t job_id, const struct job_outcome *o,
                          struct weir_error *err);

/* Where a job runs, fixed at its submission. */
enum job_route {
	JOB_ROUTE_UNSET = 0, /* stored before routes were */
	JOB_ROUTE_LOCAL,     /* "local" */
	JOB_ROUTE_GANG,      /* "slurm": the gang backend */
};

/* `queue` NULL or "": none. */
int store_job_route_set(struct store *s, int64_t job_id, enum job_route route, const char *queue,
                        struct weir_error *err);
/* store_job_insert() with its route in the same row (one write instead of
 * two): `route` LOCAL or GANG. */
int store_job_insert_routed(struct store *s, const struct job_row *row, enum job_route route,
                            const char *queue, int64_t *id, struct weir_error *err);
/* *route and the queue ("" when none) into `queue` (`size` bytes). */
int store_job_route_get(struct store *s, int64_t job_id, enum job_route *route, char *queue,
                        size_t size, struct weir_error *err);

/* The job's nonce (struct job_row's): 0 with *nonce, 1 when there is no
 * such job, -1 with err. */
int store_job_nonce_get(struct store *s, int64_t job_id, int64_t *nonce, struct weir_error *err);
/* The highest job id given out (0: none; a deleted job's counts, as its
 * id is never given again): the next job gets the one after it.  0, or -1
 * with err. */
int store_job_max_id(struct store *s, int64_t *id, struct weir_error *err);
/* A new job's nonce: random, in [1, 2^53) (exact as a JSON number in any
 * reader). */
int64_t store_job_nonce_new(void);

/* The gang backend's id of the job's attempt `attempt` (a Slurm job id). */
int store_job_backend_set(struct store *s, int64_t job_id, int attempt, const char *backend_id,
                          struct weir_error *err);
/* 0 with *attempt and the id in `id` (`size` bytes), 1 when none was
 * stored, -1 with err. */
int store_job_backend_get(struct store *s, int64_t job_id, int *attempt, char *id, size_t size,
                          struct weir_error *err);

/* ---- events (store/job_events.c) ---- */

/* *id (may be NULL) gets the event's id. */
int store_event_add(struct store *s, int64_t job_id, int64_t time_ms, const char *kind,
                    const char *message, int64_t *id, struct weir_error *err);
/* rows[0..n) (their id ignored), up to STORE_EVENTS_MAX in one INSERT,
 * their ids ascending in the array's order.  On error none of that
 * statement's rows is stored (WEIR_E_NOT_FOUND: a job is absent); those of
 * the statements before it are (n <= STORE_EVENTS_MAX: all or none). */
#define STORE_EVENTS_MAX 16
int store_events_add(struct store *s, const struct event_row *rows, size_t n,
                     struct weir_error *err);
/* A job's events in order (id ASC). */
int store_events_of_job(struct store *s, int64_t job_id, struct event_row **rows, size_t *n,
                        struct weir_error *err);
void event_row_release(struct event_row *row);
void event_rows_free(struct event_row *rows, size_t n);

/* ---- meta ---- */

/* *value gets a newly allocated copy (free()).  Returns 0 when found, 1
 * when the key is absent (*value NULL), -1 on error. */
int store_meta_get(struct store *s, const char *key, char **value, struct weir_error *err);
int store_meta_set(struct store *s, const char *key, const char *value, struct weir_error *err);

#endif
