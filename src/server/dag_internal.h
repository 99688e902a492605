/* dag_internal.h: what the pieces of the DAG manager share (dag_manager/:
 * the folder, runs, TIs as jobs, pools, outputs, recovery, one file each;
 * dag_ops.c: the API ops; dag_ui_ops.c: the ops of the DAG structure and
 * the web UI's views).  Not for use outside src/server/dag_*.c and
 * src/server/dag_manager/.
 *
 * Threading: everything runs on the server's loop.  Every entry point
 * brackets its work with dm_begin()/dm_end() (one SQLite transaction, the
 * job manager's).  The run copies of dm_run_get() are the run cache: kept
 * across turns while their run is active, dropped when the run ends, when
 * a rescan changes a DAG's parse, when a write through them failed, and
 * when the store rolled a transaction back (docs/internals/server.md).
 */
#ifndef WEIR_SERVER_DAG_INTERNAL_H
#define WEIR_SERVER_DAG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "lib/error.h"
#include "model/dag_spec.h"
#include "lib/hashmap.h"
#include "sched/dag_book.h"
#include "model/template.h"
#include "sched/dag_pool.h"
#include "sched/dag_run.h"
#include "server/job_manager.h"
#include "store/dag_store.h"
#include "store/store.h"

/* One DAG file. */
struct dag_entry {
	char *file;
	int64_t mtime_ns;
	int64_t size;
	bool present;          /* seen in the latest scan */
	bool seen;             /* during a scan */
	struct dag_spec *spec; /* the last good parse; NULL when it never parsed */
	int64_t last_sched_ms; /* logical date of its latest scheduled run; CRON_NEVER */
	bool last_sched_known;
	/* a symbolic link refused by dag_folder_symlinks (dm_dag_file_open());
	 * mtime_ns and size are the link's own then */
	bool refused;
	struct dag_entry *next;
};

struct dag_manager {
	uv_loop_t *loop;
	struct store *store;
	struct dag_store *ds;
	struct job_manager *jm;
	char *home;
	char *dir;
	bool symlinks_never; /* dag_folder_symlinks: never */
	char *paths_root;    /* the folder a DAG's files must be in; NULL: dir */
	struct dag_pool *pools; /* names owned */
	char **pool_queues;     /* per pool: the queue of its tasks that name none; NULL: none */
	size_t n_pools;
	struct dag_entry *entries;
	uv_fs_event_t fsev;
	bool fsev_on;
	uv_timer_t scan_timer;
	uv_timer_t wake_timer;
	int open_handles;
	bool in_pass;
	bool in_job_end;    /* dm_on_job_end(): its TIs' writes may wait for the turn's end */
	bool no_retries;    /* the store holds no up_for_retry TI: the last look found none,
	                     * and no TI was written so since, nor a turn rolled back */
	bool pass_again;
	bool pool_dirty;    /* something changed since the last pool pass */
	bool past_dirty;    /* a run of a DAG with depends_on_past moved (dm_past_pass()) */
	int depth;          /* nested entry points (begin/end) */
	struct run_ctx **runs; /* the run cache: active runs as read once (dm_run_get()) */
	size_t n_runs, cap_runs;
	uint64_t cache_rollbacks; /* store_rollbacks() when the cache was last checked */
	int64_t wake_at_ms; /* the earliest retry seen since the timer was armed; 0: none */
	int64_t last_pass_ms; /* the end of the latest periodic pass (recovery, rescans) */
	struct secrets *secrets; /* var.* and conn.* of templates, a task's connections; NULL:
	                          * none */
	struct notifier *notifier; /* on_failure, ... and SLA misses; NULL: none */
	int64_t sla_next_ms;       /* the earliest SLA due time the last SLA pass saw; 0: none */
	bool sla_dirty;            /* a run started since: the SLA pass looks again */
	struct dm_sensors *sensors; /* the sensors the server pokes (dag_manager/sensors.c) */
	struct dataset_store *dsets; /* datasets, their events and queue, trigger_dag waits */
	bool datasets_dirty;  /* the dataset pass has something to look at (datasets.c) */
	bool datasets_known;  /* the DAG files' URIs are registered (datasets.c) */
	bool triggers_dirty;  /* a run ended: a trigger_dag task may wait for it (trigger.c) */
	/* an active run's DAG file was missing at the last settle (recovery.c):
	 * its TIs' job ends could not be applied; a scan that loads DAGs settles
	 * the runs again */
	bool runs_wait_dag;
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
	struct dag_book book; /* the TIs' states, counts, ready set (sched/dag_book.h) */
	struct hashmap *task_ix; /* task id -> task index + 1 */
	size_t *ti_row; /* TI index -> index into rows */
	size_t n_tis;
	size_t *ti_task; /* TI index -> task index */
	/* job id -> row index + 1, for a job's end (dm_run_by_job()); an entry
	 * whose row runs another job since is left, and not believed */
	struct hashmap *by_job;
	json_t *params;  /* the run's params (the DAG's, conf over them) */
	bool has_outputs; /* a TI wrote outputs since the run was read (dm_run_outputs()) */
	bool has_past;    /* a task of its DAG depends_on_past (read with the spec) */
	bool dir_made;    /* its tries' folder was made since the run was read (a start's) */
	bool stale;      /* a write failed: memory and store may differ; read again */
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

/* strdup of s, "" for NULL; NULL only when out of memory. */
char *dm_xstrdup(const char *s);

/* Entry points: dm_begin() opens the turn (the outermost drops the run
 * copies and owes a pool pass); dm_end() runs what follows from the
 * changes (dm_work_pass()), commits with the outermost turn, re-arms the
 * wake-up timer. */
void dm_begin(struct dag_manager *dm);
void dm_end(struct dag_manager *dm);
void dm_work_pass(struct dag_manager *dm);
void dm_arm_wake(struct dag_manager *dm);

/* An RFC 3339 date in `field`, -1 with err naming it (Airflow's times are
 * written by lib/clock.h's clock_format_airflow). */
int dm_parse_date(const char *text, const char *field, int64_t *ms, struct weir_error *err);

/* The entry of a DAG (NULL when no file holds it); its last good parse
 * (NULL with a WEIR_E_NOT_FOUND err); its latest scheduled logical date. */
struct dag_entry *dm_entry_by_id(struct dag_manager *dm, const char *dag_id);
const struct dag_spec *dm_spec_of(struct dag_manager *dm, const char *dag_id,
                                  struct weir_error *err);
int64_t dm_last_scheduled(struct dag_manager *dm, struct dag_entry *e);

/* The run from the run cache, read now when it is not there (borrowed until
 * the outermost dm_end()); a decision on `ev` written through it; both at
 * once.  -1 / NULL with err. */
struct run_ctx *dm_run_get(struct dag_manager *dm, const char *dag_id, const char *run_id,
                           struct weir_error *err);
int dm_run_step(struct dag_manager *dm, struct run_ctx *rc, const struct dag_event *ev,
                struct weir_error *err);
int dm_run_event(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const struct dag_event *ev, struct weir_error *err);

/* Runs: a run id users may give ([A-Za-z0-9_.:+-], bounded); a new run
 * with its TIs (WEIR_E_CONFLICT for a run id or logical date taken). */
int dm_check_run_id(const char *run_id, struct weir_error *err);
int dm_create_run(struct dag_manager *dm, struct dag_entry *e, const char *run_id,
                  const char *run_type, int64_t logical, json_t *conf, struct dag_run_row *out,
                  struct weir_error *err);

/* dag_ops.c: a DAG (Airflow's DAG object) and a run (DAGRun), new references. */
json_t *dm_dag_json(struct dag_manager *dm, const struct dag_row *row);
json_t *dm_run_json(const struct dag_run_row *r);
/* A task instance the store keeps "queued" shows "running" once its job does:
 * every task registered and the user's program started (a job still being
 * placed, locally or in Slurm's queue, leaves it queued). */
bool dm_job_runs(const struct job_row *job);
/* A task instance and its run, or a not-found error naming the DAG, run or task that is
 * missing; on success the caller releases both rows. */
int dm_ti_lookup(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const char *task_id, int map_index, struct dag_run_row *run,
                 struct dag_ti_row *ti, struct weir_error *err);

/* dag_admin_ops.c: the rest of Airflow's operations (api/dag_admin_api.h). */
const struct dag_admin_ops *dm_admin_ops(void);
/* dag_manager/datasets.c, for dataset_ops.c: an event of `uri` recorded
 * (ev: its extra and source; its id, dataset id and timestamp are filled)
 * and queued for every DAG scheduled on the URI (0, or -1 with err); a
 * row as Airflow's DatasetEvent without created_dagruns (a new reference). */
struct dataset_event_row;
int dm_dataset_event(struct dag_manager *dm, const char *uri, struct dataset_event_row *ev,
                     struct weir_error *err);
json_t *dm_dataset_event_json(const struct dataset_event_row *e);

/* dag_ui_ops.c: the ops of the DAG structure and web UI routes (api/dag_api.h). */
json_t *dm_op_dag_tasks(void *ctx, const char *dag_id, struct weir_error *err);
json_t *dm_op_dag_details(void *ctx, const char *dag_id, struct weir_error *err);
json_t *dm_op_ti_tries(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                       int map_index, struct weir_error *err);
json_t *dm_op_ui_dags(void *ctx, int limit, int offset, struct weir_error *err);
json_t *dm_op_ui_grid(void *ctx, const char *dag_id, int limit, struct weir_error *err);
json_t *dm_op_ui_stats(void *ctx, const char *dag_id, int limit, struct weir_error *err);

#endif
