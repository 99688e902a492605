/* clean_store.h: removing old history (`weir db clean`, docs/cli.md): the
 * finished DAG runs that ended before a date with everything of theirs
 * (task instances, tries, sensor pokes, notifications, SLA misses, waits,
 * their jobs with tasks, events and sealed specs), the finished jobs of no
 * DAG that ended before it, and the event log's records older than it.
 *
 * A finished run is `success` or `failed` with an end date; a queued or
 * running one is never touched, nor is a job that has not ended (a job of
 * a finished run is removed only once it ended too).  A batch removes at
 * most `limit` runs, `limit` jobs of no DAG and `limit` event log records,
 * inside the caller's turn (it never begins or commits itself): the
 * server runs one batch a loop turn so that requests are answered in
 * between.  The store keeps and returns; which date and which DAGs is the
 * caller's.
 */
#ifndef WEIR_STORE_CLEAN_STORE_H
#define WEIR_STORE_CLEAN_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "store/store.h"

struct store_clean_query {
	int64_t before_ms;     /* ended (or recorded) before this epoch ms */
	const char *dags_json; /* a JSON array of DAG ids; NULL: every DAG and the jobs of none */
	/* the jobs of no DAG are looked for above this id: 0 at a clean's
	 * start, moved on by each batch (a batch reads a bounded number of
	 * jobs past it) */
	int64_t after_job_id;
};

/* What a batch removed (or, for a count, would remove). */
struct store_clean_counts {
	int64_t dag_runs, task_instances, jobs, tasks, events, event_log;
};

/* The ids of what a batch removed, whose files the caller removes
 * (HOME/jobs/ID, HOME/dag_runs/ROW_ID); grown with realloc, freed with
 * store_clean_ids_release(). */
struct store_clean_ids {
	int64_t *jobs;
	size_t n_jobs;
	int64_t *runs; /* the runs' row ids (dag_runs.id) */
	size_t n_runs;
};

void store_clean_ids_release(struct store_clean_ids *ids);

/* Adds b's counts to a's. */
void store_clean_counts_add(struct store_clean_counts *a, const struct store_clean_counts *b);

/* Counts what store_clean_batch() would remove with no limit; changes
 * nothing.  0, or -1 with err. */
int store_clean_count(struct store *s, const struct store_clean_query *q,
                      struct store_clean_counts *would, struct weir_error *err);

/* Removes one batch (at most `limit` runs, jobs of no DAG and event log
 * records: limit > 0) inside the open turn; adds what it removed to
 * *removed and the ids of the jobs and runs removed to *ids, moves
 * q->after_job_id on, and sets *more when a batch may find more.  0, or -1 with err (the caller
 * rolls the turn back). */
int store_clean_batch(struct store *s, struct store_clean_query *q, int limit,
                      struct store_clean_counts *removed, struct store_clean_ids *ids, bool *more,
                      struct weir_error *err);

#endif
