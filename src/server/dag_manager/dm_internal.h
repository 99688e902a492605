/* dm_internal.h: the DAG manager's insides, for the files of its folder
 * (server/dag_manager/) alone; its public face is server/dag_manager.h.
 *
 * First what every file shares: the manager's struct (one context per
 * concern, each owned by the file of that concern), the run copy, the
 * turn's mark (dm_touch()), dm_run_get(), dm_run_step(),
 * dm_create_run() and the time helpers; then what each file offers the
 * others, one section per file.  The API's ops (ops.c, list_ops.c,
 * ui_ops.c, read_ops.c, admin_ops.c, dataset_ops.c) sit on top: they share
 * ops.h and admin_ops.h, and nothing here calls them.
 *
 * Threading: everything runs on the server's loop.  The turn, always open,
 * is the job manager's (job_manager/turn.c: one SQLite transaction, ended
 * in one place); an entry point of this manager just does its work and
 * marks the turn (dm_touch()), whose end runs this manager's part of it
 * (manager.c: the work pass before the commit, the wake-up timer after).  The run copies of
 * dm_run_get() are the run cache: kept across turns while their run is active, dropped when the run
 * ends, when a rescan changes a DAG's parse, when a write through them failed, and when the store
 * rolled a transaction back (docs/internals/server.md).
 */
#ifndef WEIR_SERVER_DAG_MANAGER_DM_INTERNAL_H
#define WEIR_SERVER_DAG_MANAGER_DM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "lib/error.h"
#include "lib/hashmap.h"
#include "lib/strvec.h"
#include "model/dag_spec.h"
#include "model/end_cause.h"
#include "model/states.h"
#include "model/template.h"
#include "sched/dag_book.h"
#include "sched/dag_pool.h"
#include "sched/dag_run.h"
#include "server/job_manager.h"
#include "store/dag_store.h"
#include "store/store.h"

/* One DAG file. */
struct py_parse;  /* pyfiles.c */
struct dm_pywarm; /* pywarm.c */

struct dag_entry {
	char *file;
	int64_t mtime_ns;
	int64_t size;
	bool present;          /* seen in the latest scan */
	bool seen;             /* during a scan */
	struct dag_spec *spec; /* the last good parse; NULL when it never parsed */
	int64_t last_sched_ms; /* logical date of its latest scheduled run; CRON_NEVER */
	bool last_sched_known;
	/* a symbolic link refused by dag_folder_symlinks (dm_dag_file_path());
	 * mtime_ns and size are the link's own then */
	bool refused;
	/* Python files (pyfiles.c): a file's entry has `py` and no spec of its
	 * own; each DAG it defines is an entry with `owner` pointing at it
	 * (same `file`), never matched by file and never seen by the scan */
	bool py;
	bool py_wanted;          /* changed since its processor last started */
	struct py_parse *parse;  /* its processor while it runs */
	struct dag_entry *owner; /* a Python file's DAG: the file's entry */
	/* a DAG on a custom timetable (timetable.c): the latest scheduled run's
	 * logical date for which the file's parse was last asked (CRON_NEVER
	 * included), so that a parse that fails is not asked again for it */
	int64_t runs_asked_ms;
	bool runs_asked;
	/* a Python file whose top level reads variables (pyfiles.c): the keys
	 * its file names, given to its next parse (learned when a parse asks for
	 * them: variables_wanted), and the keys its latest parse read (a change
	 * to one parses the file again: dag_manager_variable_changed()) */
	struct strvec var_names;
	struct strvec var_read;
	int var_asks; /* parses in a row that asked for variables (PY_VAR_ASKS_MAX) */
	struct dag_entry *next;
};

/* The manager holds a context per concern, each written by the file named
 * on it (others read it, and raise its dirty flag when they move what its
 * pass looks at).  A pass with a dirty flag does nothing while the flag is
 * down and lowers it when it runs. */

/* manager.c: the turns, the work pass, the wake-up timer. */
struct dm_turn {
	bool touched;    /* an entry point marked the turn (dm_touch()) */
	bool no_pass;    /* the turn skips the work pass (dm_touch_no_pass()) */
	bool in_pass;    /* inside dm_work_pass() */
	bool in_job_end; /* dm_on_job_end(): its TIs' writes may wait for the turn's end */
	bool pass_again; /* a pass moved something that another pass may follow */
	uv_timer_t wake_timer;
	uint64_t arms;        /* dm_arm_wake() calls (dag_manager_wake_arms()) */
	int64_t wake_at_ms;   /* the earliest due time noted since the timer was armed; 0: none */
	int64_t last_pass_ms; /* the end of the latest periodic pass (recovery, rescans) */
};

/* folder.c: the DAG folder, its entries, its watch. */
struct dm_folder {
	char *dir;
	bool symlinks_never;     /* dag_folder_symlinks: never */
	bool paused_at_creation; /* dags_are_paused_at_creation */
	struct strvec users;     /* the server's users: an access list's names are checked
	                          * against them (dag_manager_set_users()) */
	char *paths_root;        /* the folder a DAG's files must be in; NULL: dir */
	struct dag_entry *entries;
	uv_fs_event_t fsev;
	bool fsev_on;
	uv_timer_t scan_timer;
	/* pyfiles.c: the DAG processor for Python files */
	int64_t import_timeout_ms; /* dagbag_import_timeout */
	bool ignore_glob;          /* dag_ignore_file_syntax: glob (folder.c) */
	int py_running;            /* processors running now */
	char *python;              /* the interpreter; NULL until first needed */
	char *python_path;         /* weir's `airflow` folder (PYTHONPATH); NULL: not found */
	struct dm_pywarm *warm;    /* pywarm.c: the warm processor; NULL when not running */
	int64_t warm_retry_ms;     /* pywarm.c: parses run cold until then (it failed) */
};

/* run_ctx.c: the run cache: active runs as read once (dm_run_get()). */
struct dm_run_cache {
	struct run_ctx **runs;
	size_t n, cap;
	uint64_t rollbacks; /* store_rollbacks() when the cache was last checked */
};

/* pool_admin.c (the pools, from the table) and pools.c (the pool pass). */
struct dm_pools {
	struct dag_pool *list; /* names owned */
	char **queues;         /* per pool: the queue of its tasks that name none; NULL: none */
	size_t n;
	bool dirty; /* something changed since the last pool pass */
};

/* runs.c: due retries (the wake-up timer's look, dm_arm_wake(), learns
 * it too). */
struct dm_retries {
	/* the store holds no up_for_retry TI: the last look found none, and no
	 * TI was written so since, nor a turn rolled back */
	bool none;
};

/* runs.c: dagrun_timeout (dm_timeout_pass()). */
struct dm_timeouts {
	int64_t next_ms; /* the nearest deadline of a running run the last pass saw; 0: none */
	bool dirty;      /* a run started, a DAG file changed, a turn rolled back or the
	                  * server started since: the pass reads the active runs again */
};

/* flow.c: depends_on_past. */
struct dm_past {
	bool dirty; /* a run of a DAG with depends_on_past moved (dm_past_pass()) */
};

/* notify_hooks.c: SLAs. */
struct dm_slas {
	int64_t next_ms; /* the earliest SLA due time the last SLA pass saw; 0: none */
	bool dirty;      /* a run started since: the SLA pass looks again */
};

/* datasets.c: datasets, their events and queue (the store is shared with
 * trigger.c's waits and dataset_ops.c). */
struct dm_datasets {
	struct dataset_store *store;
	bool dirty; /* the dataset pass has something to look at */
	bool known; /* the DAG files' URIs are registered */
};

/* trigger.c: trigger_dag tries that wait for the run they started. */
struct dm_triggers {
	bool dirty; /* a run ended: a trigger_dag task may wait for it */
};

/* recovery.c: settling the runs at start. */
struct dm_recovery {
	/* an active run's DAG file was missing at the last settle: its TIs'
	 * job ends could not be applied; a scan that loads DAGs settles the
	 * runs again */
	bool wait_dag;
};

struct dag_manager {
	uv_loop_t *loop;
	struct store *store;
	struct dag_store *ds;
	struct job_manager *jm;
	char *home;
	struct secrets *secrets;   /* var.* and conn.* of templates, a task's connections;
	                            * NULL: none */
	struct notifier *notifier; /* on_failure, ... and SLA misses; NULL: none */
	int open_handles;          /* handles to close at destroy (manager.c) */
	/* ops.c: the logical date the last trigger without one was given; the
	 * next is later (dates are in milliseconds, and two triggers within one
	 * would collide on the (DAG, logical date) key) */
	int64_t last_trigger_now_ms;
	struct dm_turn turn;
	struct dm_folder folder;
	struct dm_run_cache cache;
	struct dm_pools pools;
	struct dm_retries retries;
	struct dm_timeouts timeouts;
	struct dm_past past;
	struct dm_slas sla;
	struct dm_datasets datasets;
	struct dm_triggers triggers;
	struct dm_recovery recovery;
	struct dm_sensors *sensors; /* the sensors the server pokes (sensors.c) */
};

/* A run in memory (dm_run_get()): kept from one turn to the next while the
 * run is active, the store written through it at every change. */
struct run_ctx {
	const struct dag_spec *spec;
	struct dag_run_row run;
	struct dag_ti_row *rows;
	size_t n_rows;
	struct dag_task_node *nodes;
	struct dag_graph g;
	struct dag_book book;    /* the TIs' states, counts, ready set (sched/dag_book.h) */
	struct hashmap *task_ix; /* task id -> task index + 1 */
	size_t *ti_row;          /* TI index -> index into rows */
	size_t n_tis;
	size_t *ti_task; /* TI index -> task index */
	/* job id -> row index + 1, for a job's end (dm_run_by_job()); an entry
	 * whose row runs another job since is left, and not believed */
	struct hashmap *by_job;
	json_t *params;   /* the run's params (the DAG's, conf over them) */
	bool has_outputs; /* a TI wrote outputs since the run was read (dm_run_outputs()) */
	bool has_past;    /* a task of its DAG depends_on_past (read with the spec) */
	bool dir_made;    /* its tries' folder was made since the run was read (a start's) */
	bool stale;       /* a write failed: memory and store may differ; read again */
	/* rows whose write waits for the turn's end (dm_ti_defer()): a TI that
	 * became scheduled is written once, with the reason the pool pass gives
	 * it or as queued by its start, not once per step */
	bool *pending;        /* per row; NULL until one waits */
	size_t *pending_rows; /* the rows that waited, in order (some since written) */
	size_t n_pending, cap_pending;
	/* the pool pass's order (pools.c): every TI that was scheduled since
	 * the copy was read, by priority (highest first) then row; those no
	 * longer scheduled are skipped, and one scheduled again is in place */
	struct dm_pool_ent *pool_order;
	size_t n_pool_order, pool_order_head; /* pool_order[0..pool_order_head): none scheduled */
	bool *in_pool_order;                  /* per TI: in pool_order */
	bool pool_order_unreasoned;           /* a scheduled TI may show no reason yet */
};

/* A TI in a run's pool order. */
struct dm_pool_ent {
	int priority;
	size_t row, ti;
};

/* A copy of s, "" for NULL; NULL when out of memory (unlike git's xstrdup
 * it does not die then). */
char *dm_strdup_or_empty(const char *s);

/* Entry points mark the turn with dm_touch() (it owes a work pass and a
 * pool pass) and do their work.  The turn's end, whoever's entry point it
 * was, runs what follows from the changes (dm_work_pass()) and writes the
 * TIs written behind, commits, then arms the wake-up timer (dm_arm_wake(),
 * there alone: once a turn).  An op whose answer shows what the pass
 * moves runs dm_work_pass() itself first. */
void dm_touch(struct dag_manager *dm);
void dm_work_pass(struct dag_manager *dm);
void dm_arm_wake(struct dag_manager *dm);

/* An RFC 3339 date in `field`, -1 with err naming it (Airflow's times are
 * written by lib/clock.h's clock_format_airflow). */
int dm_parse_date(const char *text, const char *field, int64_t *ms, struct weir_error *err);

/* The entry of a DAG (NULL when no file holds it); its last good parse
 * (NULL with a WEIR_E_NOT_FOUND err); its latest scheduled logical date. */
struct dag_entry *dm_entry_by_id(struct dag_manager *dm, const char *dag_id);
/* Whether `rd` (NULL: anyone) may have DAG `dag_id` in a list: its access
 * list (its last good parse's) against the reader (sched/access.h). */
bool dm_dag_allows(struct dag_manager *dm, const char *dag_id, const struct dag_reader *rd);
/* Whether `rd` (NULL: anyone) may see what DAG file `file` says about
 * itself (its import error): none of the DAGs the manager holds from it
 * has an access list that refuses `rd`; *denied (when not NULL) gets the
 * first refusing DAG's id (borrowed) when one does. */
bool dm_file_allows(struct dag_manager *dm, const char *file, const struct dag_reader *rd,
                    const char **denied);
/* The import errors `rd` may see (dm_file_allows()), from the store; -1
 * with err. */
int dm_import_error_list(struct dag_manager *dm, const struct dag_reader *rd,
                         struct dag_import_error_row **rows, size_t *n, struct weir_error *err);
const struct dag_spec *dm_spec_of(struct dag_manager *dm, const char *dag_id,
                                  struct weir_error *err);
int64_t dm_last_scheduled(struct dag_manager *dm, struct dag_entry *e);

/* ---- timetable.c: DAGs on a custom Timetable (the runs the DAG
 * processor listed) ---- */

/* The latest scheduled run of e: its logical date and data interval (a
 * deleted run's: its logical date); -1 when there is none. */
int dm_last_scheduled_interval(struct dag_manager *dm, struct dag_entry *e, int64_t *logical,
                               struct schedule_interval *iv);
/* What a parse of Python file entry `file` tells the processor: {dag_id:
 * {logical, start, end}} of the latest scheduled run of each of its
 * scheduled DAGs (ms), or NULL when none has one. */
json_t *dm_timetable_last_runs(struct dag_manager *dm, struct dag_entry *file);
/* Whether the runs listed in e's CRON_RUNS spec continue its latest
 * scheduled run (the schedule pass makes them only then); when they do
 * not, or are used up while the timetable has more, e's file is parsed
 * again (once for each latest run, so that a file whose parse fails is not
 * parsed over and over). */
bool dm_timetable_list_current(struct dag_manager *dm, struct dag_entry *e);

/* The run from the run cache, read now when it is not there (borrowed until
 * the turn's commit); a decision on `ev` written through it; both at
 * once.  -1 / NULL with err. */
struct run_ctx *dm_run_get(struct dag_manager *dm, const char *dag_id, const char *run_id,
                           struct weir_error *err);
int dm_run_step(struct dag_manager *dm, struct run_ctx *rc, const struct dag_event *ev,
                struct weir_error *err);
int dm_run_event(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const struct dag_event *ev, struct weir_error *err);

/* Runs: a run id users may give ([A-Za-z0-9_.:+-], bounded); a new run
 * with its TIs (WEIR_E_CONFLICT for a run id or logical date taken), its
 * data interval the schedule's for its logical date, a manual run's by
 * schedule_manual_interval() or, for a DAG with `manual_interval:`,
 * schedule_manual_interval_ending() (a backfill__ run: the schedule's). */
int dm_check_run_id(const char *run_id, struct weir_error *err);
int dm_create_run(struct dag_manager *dm, struct dag_entry *e, const char *run_id,
                  const char *run_type, int64_t logical, json_t *conf, struct dag_run_row *out,
                  struct weir_error *err);

/* datasets.c, for dataset_ops.c: an event of `uri` recorded
 * (ev: its extra and source; its id, dataset id and timestamp are filled)
 * and queued for every DAG scheduled on the URI (0, or -1 with err); a
 * row as Airflow's DatasetEvent without created_dagruns (a new reference). */
struct dataset_event_row;
int dm_dataset_event(struct dag_manager *dm, const char *uri, struct dataset_event_row *ev,
                     struct weir_error *err);
json_t *dm_dataset_event_json(const struct dataset_event_row *e);
/* The DatasetAlias links (of `uri`; NULL: all) as sched/dataset_due.h
 * reads them, into *out (borrowing from *rows: free both, *n of them);
 * -1 with err. */
struct dataset_alias_link_row;
struct dataset_alias_link;
int dm_dataset_alias_links(struct dag_manager *dm, const char *uri,
                           struct dataset_alias_link_row **rows, struct dataset_alias_link **out,
                           size_t *n, struct weir_error *err);
/* Whether the DAG of `s` consumes `uri`: it schedules on the URI, or on an
 * alias `links` links to it (its events are queued for the DAG). */
bool dm_dataset_consumes(const struct dag_spec *s, const char *uri,
                         const struct dataset_alias_link *links, size_t n_links);

/* ---- manager.c: the small string setters of the rows, the wake-up note ---- */

/* *dst = a copy of v ("" for NULL), the old value freed (lib/str.h); left as it was
 * when out of memory. */
void dm_set_str(char **dst, const char *v);

/* A name (a run type) into a row's fixed field (STORE_STATE_MAX). */
void dm_set_name(char *dst, const char *name);

/* Something is due at `at` (epoch ms; <= 0: nothing): the wake-up timer,
 * armed at the end of the turn, fires no later. */
void dm_wake_note(struct dag_manager *dm, int64_t at);

/* ---- folder.c: the DAG folder: one entry per DAG file, kept in step
 * with the folder by a watch and a rescan timer ---- */

/* Reads the folder: new and changed files are parsed (a broken one is an
 * import error), missing ones deactivate their DAG.  Inside a turn; when a
 * file changed or went away, drops the run cache (a new parse replaces the
 * spec the copies point at, and tasks added to a file get their TIs when
 * their run is read again). */
void dm_scan(struct dag_manager *dm);
/* The path DAG file `path` is read through: a copy of it, or, for a
 * symbolic link that dag_folder_symlinks lets be read (its target inside
 * the DAG folder), the target's real path.  NULL with msg (an import error
 * naming the link, never the target) when it may not be read; NULL with
 * msg "" when the file is gone. */
char *dm_dag_file_path(struct dag_manager *dm, const char *path, char *msg, size_t size);
/* The real path of a file a DAG names that the server itself reads (a
 * `job:` spec file, a TonY conf_file), when it lies inside the DAG folder
 * (dag_manager_set_paths_root()'s folder when set); NULL with err
 * (WEIR_E_NOT_FOUND: no such file; WEIR_E_INVALID: outside), `what`
 * naming the field. */
char *dm_dag_named_file(struct dag_manager *dm, const char *path, const char *what,
                        struct weir_error *err);

/* Starts watching the folder: the scan timer (every RESCAN_MS) and, where
 * the platform has one, a change event.  Each handle started counts in
 * dm->open_handles (scan timer, then the event). */
void dm_folder_watch(struct dag_manager *dm);

/* Frees every entry (their parsed DAGs too). */
void dm_entries_free(struct dag_manager *dm);

/* The end of a load: the new `spec` (owned, consumed) becomes entry `e`'s
 * when no other present file holds its dag_id, and is stored.  -1 with msg
 * (an import error's text) otherwise; 0 also when only the store failed
 * (logged). */
int dm_take_spec(struct dag_manager *dm, struct dag_entry *e, struct dag_spec *spec, char *msg,
                 size_t size);
/* An import error for `e`'s file (and, on the DAGs it holds, the reason
 * their last good version is stale). */
void dm_import_error(struct dag_manager *dm, struct dag_entry *e, const char *msg);
/* Entry `e`'s file, or its DAG, is gone: its DAG is deactivated unless
 * another file holds it now. */
void dm_file_gone(struct dag_manager *dm, struct dag_entry *e);
/* After specs were replaced outside a scan: runs that waited for their DAG
 * are settled, datasets registered again. */
void dm_specs_changed(struct dag_manager *dm);

/* ---- pyfiles.c: Python DAG files, parsed by the DAG processor
 * (python -m _weir_airflow.processor) in a child process with a time
 * limit and a cap on its answer; never on the loop ---- */

/* Whether `name` is a Python file's. */
bool dm_py_file_name(const char *name);
/* File entry `e` is new or changed: its processor starts now or once one
 * of the PY_PARALLEL slots frees. */
void dm_py_want(struct dag_manager *dm, struct dag_entry *e);
/* File entry `e` is gone: so are its DAGs. */
void dm_py_gone(struct dag_manager *dm, struct dag_entry *e);
/* At destroy: every processor killed, its handles closed (they free
 * themselves), detached from the entries. */
void dm_py_stop_all(struct dag_manager *dm);

/* ---- recovery.c ---- */

/* Every active run whose DAG is loaded is settled: its TIs whose job is
 * final (ended while the server was down, or while the run's DAG file was
 * missing, so that its end could not be applied then) end from the job's
 * stored result, and the run is evaluated.  A run whose DAG is not loaded
 * waits (dm->recovery.wait_dag), and is settled by the scan that loads it.
 * Inside a turn.  0, or -1 with err when the runs cannot be read. */
int dm_settle_runs(struct dag_manager *dm, struct weir_error *err);

/* ---- run_ctx.c: a run in memory for one turn: its rows read once, the
 * graph and TIs that sched/dag_run.h decides on, and every decision written
 * through it to the store (dm_run_get(), dm_run_step() and dm_run_event()
 * are in server/dm_internal.h) ---- */

/* The run cache: every copy dropped; every copy dropped when the store
 * rolled a transaction back since the last look (memory would be ahead of
 * the file); the copies of runs that ended or went stale dropped (at the
 * outermost turn's end, when no caller holds one). */
void dm_run_cache_drop(struct dag_manager *dm);
void dm_run_cache_check(struct dag_manager *dm);
void dm_run_cache_trim(struct dag_manager *dm);

/* The run copy whose row `*row` runs job `job_id` now (the store agrees:
 * every write goes through the copy), or NULL when no copy knows it (the
 * store then says).  dm_run_note_job() notes row `row`'s job_id in its
 * copy's index, wherever a row gets a job. */
struct run_ctx *dm_run_by_job(struct dag_manager *dm, int64_t job_id, size_t *row);
void dm_run_note_job(struct run_ctx *rc, size_t row);

/* dm_touch() for a turn whose end skips the work pass and the wake-up
 * timer (start-up, before the job manager's recovery; manager.c). */
void dm_touch_no_pass(struct dag_manager *dm);

/* Inserts the TIs of task `t` for a run: one, or one per foreach item of
 * the run's `params`.  0, or -1 with err. */
int dm_insert_task_tis(struct dag_manager *dm, const struct dag_spec *spec, const char *run_id,
                       const struct dag_task *t, const json_t *params, struct weir_error *err);

/* A new TI row of task `t` (state none, the task's tries, pool and
 * priority); its strings borrowed from spec, run_id and t. */
void dm_fill_ti_row(struct dag_ti_row *r, const struct dag_spec *spec, const char *run_id,
                    const struct dag_task *t, int map_index);

/* The TI index of (task_id, map_index) in the run, or -1. */
long dm_run_find_ti(const struct run_ctx *rc, const char *task_id, int map_index);

/* Records the TI's current try as `state` (its reason when not NULL; its
 * end time when `ended`), creating the try row when it has none.  Errors
 * are logged. */
void dm_try_update(struct dag_manager *dm, const struct dag_ti_row *r, enum dag_ti_state state,
                   const char *reason, bool ended);

/* Writes row `r` of the run (one of rc->rows) now, and no more at the
 * turn's end.  0, or -1 with err (the copy is then stale). */
int dm_ti_save(struct dag_manager *dm, struct run_ctx *rc, struct dag_ti_row *r,
               struct weir_error *err);
/* The same for a change of state alone: a row whose try_number, job_id,
 * pool, pool_slots, priority and rendered_command are as last written
 * (dag_store_ti_set_state()). */
int dm_ti_save_state(struct dag_manager *dm, struct run_ctx *rc, struct dag_ti_row *r,
                     struct weir_error *err);

/* Row `r`'s write (a change of state alone, as dm_ti_save_state()'s) may
 * wait for the end of the turn: inside the work pass or
 * a job's end (where nothing reads the TIs' rows from the store before the
 * pass's end), a TI's changes of one turn are then written once; elsewhere
 * it is written now.  A write that fails is logged, the copy made stale. */
void dm_ti_defer(struct dag_manager *dm, struct run_ctx *rc, struct dag_ti_row *r);

/* The rows that wait, written (every copy's): at each turn's end, before a
 * run is read from the store and before the run cache is dropped. */
void dm_ti_flush(struct dag_manager *dm);

/* ---- runs.c: where runs come from and when they start: schedules
 * (with catchup), the queue of runs under max_active_runs, due retries.
 * dm_check_run_id() and dm_create_run() are in server/dm_internal.h.
 * Each pass runs inside a turn and sets dm->turn.pass_again when it moved
 * something that another pass may follow ---- */

/* Scheduled runs that are due now are created (paused DAGs make none). */
void dm_schedule_pass(struct dag_manager *dm);

/* Runs with a due retry are told so (DAG_EV_TIMER); later ones are noted
 * for the wake-up timer. */
void dm_retry_pass(struct dag_manager *dm);
/* The running runs whose DAG's dagrun_timeout has passed since their start
 * get DAG_EV_TIMED_OUT (failed, their unfinished TIs skipped, jobs
 * stopped); the nearest deadline goes to the wake-up timer.  The active
 * runs are read only when dm->timeouts is dirty or that deadline came. */
void dm_timeout_pass(struct dag_manager *dm);

/* Queued runs start as max_active_runs allows (paused DAGs wait). */
void dm_start_runs(struct dag_manager *dm);

/* ---- pools.c: the pool pass: scheduled TIs of every running run
 * become jobs as their pools and the DAG's max_active_tasks allow
 * (sched/dag_pool.h decides) ---- */

/* Nothing to do unless something moved since the last pass
 * (dm->pools.dirty): the rounds of dm_work_pass() that follow a start need
 * no second look.  A TI left waiting gets the pool's reason. */
void dm_pool_pass(struct dag_manager *dm);

/* ---- pool_admin.c: the pools' table (store/admin_store.h) ---- */

/* Seeds the table with the pools the manager was created with (the
 * configuration's and default_pool), then takes the table's as its pools.
 * At creation; 0 or -1 with err. */
int dm_pools_load(struct dag_manager *dm, struct weir_error *err);

/* The ops of Airflow's /pools routes (api/dag_admin_api.h; ctx: the
 * manager), listed in admin_ops.c's table. */
json_t *dm_op_list_pools(void *ctx, int limit, int offset, const char *order_by,
                         struct weir_error *err);
json_t *dm_op_get_pool(void *ctx, const char *name, struct weir_error *err);
json_t *dm_op_add_pool(void *ctx, json_t *body, struct weir_error *err);
json_t *dm_op_patch_pool(void *ctx, const char *name, json_t *body, struct weir_error *err);
int dm_op_delete_pool(void *ctx, const char *name, struct weir_error *err);

/* ---- ti_jobs.c: task instances as jobs: a scheduled TI's try
 * handed to the job manager, and a job's end back to its run ---- */

/* Starts try + 1 of scheduled TI `ti` of a run read in this turn as a job.
 * A TI that cannot become a job fails that try at once, with no retry (the
 * same input would fail again).  A stale copy or a TI no longer scheduled
 * is left alone. */
void dm_start_ti(struct dag_manager *dm, struct run_ctx *rc, size_t ti);

/* The job manager's end callback (job_manager_set_end_callback(); `arg`
 * is the manager): a DAG task's job ended; its try is recorded and the run
 * decides, in a turn of its own.  Jobs of no DAG task are ignored. */
void dm_on_job_end(void *arg, int64_t job_id, enum job_state state, enum end_cause cause,
                   int exit_code, const char *reason, int64_t started_at);

/* Try `try_number` of a TI ended (success, else failed, or skipped with
 * `skipped`): recorded, and the run decides.  A TI no longer queued,
 * running or up_for_reschedule, or of another try, is left alone. */
void dm_ti_ended(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const char *task_id, int map_index, int try_number, bool success, bool no_retry,
                 bool skipped, const char *reason, int64_t job_started_at);

/* ---- sensors.c: sensors the server pokes (mode reschedule, and every
 * external_task sensor): the TI waits up_for_reschedule between pokes,
 * holding no slot and no process; cheap pokes on the loop, HTTP and SQL
 * ones on libuv's worker pool (docs/internals/sensors.md) ---- */

/* A scheduled TI admitted by the pools: when its task is a sensor the
 * server pokes, its try starts here (up_for_reschedule, its first poke due
 * now) and true is returned; false for any other task. */
bool dm_sensor_start(struct dag_manager *dm, struct run_ctx *rc, size_t ti);

/* The pokes that are due (the waiting sensors are read from the store once,
 * after a start); the next due time is noted for the wake-up timer. */
void dm_sensor_pass(struct dag_manager *dm);

/* When the next poke is due (epoch ms); CRON_NEVER when none is (the
 * wake-up timer's). */
int64_t dm_sensor_next_due(struct dag_manager *dm);

/* A task's job ended with exit_code: true when the task's
 * skip_on_exit_code names it (*skip) or its no_retry_on_exit_code
 * (*no_retry), with why rewritten (flow.c). */
bool dm_flow_exit(struct dag_manager *dm, const char *dag_id, const char *task_id, int exit_code,
                  bool *skip, bool *no_retry, char *why, size_t why_size);

/* A sensor's job (mode poke, or a command sensor's poke) ended with
 * exit_code: true when that says the sensor timed out (*skip: soft_fail),
 * with why rewritten.  An Airflow DAG file's other tasks say so by their
 * skip_on_exit_code and no_retry_on_exit_code (dm_flow_exit()). */
bool dm_sensor_exit(struct dag_manager *dm, const char *dag_id, const char *task_id, int exit_code,
                    bool *skip, char *why, size_t why_size);

/* A job of TI (dag_id, run_id, task_id, map_index, try_number) ended with
 * exit_code: true when it was a command sensor's poke that said "not yet"
 * (SENSOR_EXIT_NOT_YET, data/sensor_poke.h), recorded, the TI waiting again
 * (or ended by its timeout).  False: the end is the try's, as any job's
 * (the sensor's slot, if any, is dropped). */
bool dm_sensor_job_end(struct dag_manager *dm, const char *dag_id, const char *run_id,
                       const char *task_id, int map_index, int try_number, int exit_code);

/* Starts a command sensor's poke: the job of TI `ti`'s current try again,
 * the TI left up_for_reschedule (ti_jobs.c).  0 started; 1 the server
 * cannot now (try later); -1 it cannot be started (msg says why). */
int dm_poke_job_start(struct dag_manager *dm, struct run_ctx *rc, size_t ti, char *msg,
                      size_t size);

/* Frees the sensors' state (pokes under way finish and are dropped). */
void dm_sensors_free(struct dag_manager *dm);

/* ---- outputs.c: a try's files: the folder of a run's tries
 * (HOME/dag_runs/RUN_ROW_ID), the $WEIR_OUTPUT file a try may write, and
 * the outputs of a run's tasks as templates read them ---- */

/* The folder of the run's try files.  Newly allocated; NULL when out of
 * memory. */
char *dm_try_dir(struct dag_manager *dm, int64_t run_row_id);

/* The $WEIR_OUTPUT of one try: named by the run's row id and the task id
 * (checked to be [A-Za-z0-9_-]), never by the user's run id.  Newly
 * allocated; NULL when out of memory. */
/* The log of a try that could not start (no job: a template that did not
 * render, a connection not defined): the reason, for the log route. */
char *dm_start_log_path(struct dag_manager *dm, int64_t run_row_id, const char *task_id,
                        int map_index, int try_number);
char *dm_output_path(struct dag_manager *dm, int64_t run_row_id, const char *task_id, int map_index,
                     int try_number);
/* A JSON file of a try beside its $WEIR_OUTPUT (TASK.MAP_INDEX.TRY.suffix),
 * written whole and readable by the task's user; the path into *path. */
int dm_write_try_json(struct dag_manager *dm, const struct run_ctx *rc, const char *task_id,
                      int map_index, int try_number, const char *suffix, const json_t *v,
                      char **path, struct weir_error *err);
/* A run_outputs task's try: every output of the run so far, as
 * {"TASK": {"MAP_INDEX": {KEY: value}}}, written beside its $WEIR_OUTPUT
 * (readable by the task's user); the path into *path. */
int dm_write_run_outputs(struct dag_manager *dm, const struct run_ctx *rc, const char *task_id,
                         int map_index, int try_number, char **path, struct weir_error *err);

/* The try's $WEIR_OUTPUT as compact JSON into *out: "" when the task wrote
 * none.  -1 with `why` when it is not a small JSON object (the try fails). */
int dm_read_outputs(const char *path, char **out, char *why, size_t why_size);

/* The variables a succeeded try of task `t` sets (Airflow's Variable.set,
 * .delete): its output's `weir_set_variables` ({KEY: text, or null to
 * delete}), each KEY one of the task's `variables` (the keys its DAG file
 * names), written to the store; the key then taken out of *outputs and of
 * the file at `path`, so the values are kept nowhere else.  0 when there
 * are none; -1 with `why` (the try fails) for a key the task does not list
 * or a value that is not text. */
int dm_take_variable_writes(struct dag_manager *dm, const struct dag_task *t, const char *path,
                            char **outputs, char *why, size_t why_size);

/* {"TASK": {...}} of the run's tasks that wrote outputs (foreach instances
 * aside: there are several of them).  New reference. */
json_t *dm_run_outputs(const struct run_ctx *rc);

/* ---- notify_hooks.c: notifications and SLAs (server/notifier.h) ---- */

/* The notifications a decision written through `rc` calls for: a try's
 * end (on_failure, on_retry, on_success of its task), a run's (the DAG's
 * on_failure, on_success); a run that starts makes the SLA pass look
 * again.  Nothing when no notifier is set. */
void dm_notify_step(struct dag_manager *dm, const struct run_ctx *rc,
                    const struct dag_run_decision *d);

/* The SLA pass (in the work pass): when due, the active runs' TIs past
 * their SLA are recorded once and notified (on_sla_miss); the next due
 * time goes to the wake-up timer. */
void dm_sla_pass(struct dag_manager *dm);
/* ---- flow.c: branches, short circuits, the past, foreach over an
 * upstream's output (sched/dag_branch.h decides) ---- */

struct dag_skip;

/* Try of TI *ti (a run read in this turn) succeeded with `outputs` (its
 * $WEIR_OUTPUT's text; "" or NULL: none): a branch's or a short circuit's
 * skips into *skip (for dag_event.skip; the caller releases it), and the
 * tasks mapped over its output expanded.  An expansion re-reads the run:
 * *rcp and *ti name the new copy (*rcp NULL when it cannot be read; logged).
 * -1 with `why` when the success fails the try (a bad branch choice, an
 * output a mapped task cannot fan out over). */
int dm_flow_success(struct dag_manager *dm, struct run_ctx **rcp, long *ti, const char *outputs,
                    struct dag_skip *skip, char *why, size_t why_size);

/* The items foreach task `t` fans out over in the run: a list, a param, or
 * an upstream's output.  New reference; NULL with err. */
json_t *dm_foreach_items(const struct run_ctx *rc, const struct dag_task *t,
                         struct weir_error *err);

/* Whether a task of spec depends_on_past (a run's copy keeps the answer:
 * rc->has_past). */
bool dm_spec_has_past(const struct dag_spec *spec);
/* depends_on_past: each such task's hold (rc->nodes[t].held) from the
 * previous run; *changed (may be NULL) when one moved (the books are then
 * unsettled).  -1 when the store could not be read (the tasks are held). */
int dm_flow_holds(struct dag_manager *dm, struct run_ctx *rc, bool *changed);

/* After a decision of a run: a DAG with depends_on_past tasks whose TI or
 * run finished marks the past dirty; the past pass then re-reads the holds
 * of the running runs of such DAGs and re-decides those that moved. */
void dm_flow_note(struct dag_manager *dm, const struct run_ctx *rc,
                  const struct dag_run_decision *d);
void dm_past_pass(struct dag_manager *dm);
/* ---- ti_jobs.c, for the ops and the pools' table ---- */

/* A task instance the store keeps "queued" shows "running" once its job does:
 * every task registered and the user's program started (a job still being
 * placed, locally or in Slurm's queue, leaves it queued). */
bool dm_job_runs(const struct job_row *job);

/* ---- ti_jobs.c, for the tries without a job (trigger.c) ---- */

/* The template variables of try `try_number` of TI `ti` into *tr (which
 * borrows the run and the three below): *outputs the run's outputs (a new
 * reference), *items the list its foreach fans out over (a new reference;
 * NULL when it is no foreach instance; tr->item_value is its item), *item
 * that item's text (newly allocated).  -1 with err when its item is not
 * there (then all are NULL). */
int dm_try_template_run(const struct run_ctx *rc, size_t ti, int try_number,
                        struct template_run *tr, json_t **outputs, json_t **items, char **item,
                        struct weir_error *err);
/* The same variables set in *ctx (TEMPLATE_CTX_INIT; the caller releases
 * it), var.* and conn.* read from the server's secrets through *src, which
 * this fills and which must outlive ctx.  0 or -1 with err. */
int dm_try_template_ctx(struct dag_manager *dm, const struct run_ctx *rc, size_t ti, int try_number,
                        struct template_source *src, struct template_ctx *ctx,
                        struct weir_error *err);

/* ---- datasets.c: outlets, dataset events, the queue, the dataset pass ---- */

/* After a scan of the folder (`changed`: a file was parsed or went): the
 * files' URIs registered as datasets, and the dataset pass owed. */
void dm_datasets_scanned(struct dag_manager *dm, bool changed);

/* TI `ti` of the run succeeded: an event for each of its task's outlets. */
void dm_datasets_on_success(struct dag_manager *dm, const struct run_ctx *rc, size_t ti);

/* The latest events of TI `ti`'s task's inlets, for its try: at most
 * INLET_EVENTS_MAX each, oldest first, as {"datasets": {URI: [event...]},
 * "aliases": {NAME: [event...]}} (an alias's: those added through it) in a
 * file beside its $WEIR_OUTPUT; the path into *path (its
 * $WEIR_INLET_EVENTS). */
#define INLET_EVENTS_MAX 100
int dm_write_inlet_events(struct dag_manager *dm, const struct run_ctx *rc, size_t ti,
                          int try_number, char **path, struct weir_error *err);

/* The DAGs scheduled on datasets whose every URI is queued get a run
 * (nothing to do unless dm->datasets.dirty). */
void dm_dataset_pass(struct dag_manager *dm);

/* ---- trigger.c: trigger_dag tasks ---- */

/* Starts try + 1 of scheduled trigger_dag TI `ti`: a run of the other DAG,
 * then the try's end at once or a wait for the run's end. */
void dm_trigger_start(struct dag_manager *dm, struct run_ctx *rc, size_t ti);

/* The waiting tries whose run ended end (nothing to do unless
 * dm->triggers.dirty). */
void dm_trigger_pass(struct dag_manager *dm);

/* ---- states.c: the one door of a TI's and a run's state ---- */

/* r's (a run's) state becomes `to` when sched/dag_states.h allows the move
 * (from == to included); else the move is refused, logged as an error
 * naming the TI (run) and both states, and the row left as it was.  0, or
 * -1 when refused.  The store write is the caller's, as before. */
int dm_ti_set_state(struct dag_ti_row *r, enum dag_ti_state to);
int dm_run_set_state(struct dag_run_row *run, enum dag_run_state to);
/* TI `ti`'s book entry after a start: state `to`, try `try_number`, no
 * retry time (dag_book_set()); refused and logged as dm_ti_set_state(). */
int dm_book_started(struct run_ctx *rc, size_t ti, enum dag_ti_state to, int try_number);

#endif
