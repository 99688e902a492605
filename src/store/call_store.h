/* call_store.h: the calls table: the calls a Ray program ran on a warm
 * worker, recorded in batches under the worker's job (model/call.h,
 * docs/internals/calls.md).
 *
 * A batch is one statement a row within the caller's transaction (the
 * loop turn's: one commit a batch, not one a call).  A record replaces the
 * row of the same (job, call) only while that row is running
 * (call_state_may_move(): an end never changes); the job's deletion
 * deletes its calls (a foreign key's cascade).  Rows returned are the
 * caller's (call_rows_free).  Errors: -1 with err (WEIR_E_NOT_FOUND for a
 * job that does not exist, WEIR_E_INTERNAL for SQLite or memory).
 */
#ifndef WEIR_STORE_CALL_STORE_H
#define WEIR_STORE_CALL_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/call.h"
#include "store/store.h"

struct call_row {
	int64_t job_id;
	int64_t call_id; /* the program's number for the call, >= 1 */
	char *name;      /* the function's name */
	enum call_state state;
	int tries;          /* the tries so far, >= 1 */
	int64_t started_ms; /* epoch ms; 0: unknown */
	int64_t ended_ms;   /* epoch ms; 0: not ended */
	char *error;        /* an ended call's error (its class); NULL: none */
};

/* Records rows[0..n) of job `job_id` (each row's job_id is ignored).
 * *changed (NULL: not wanted): the rows inserted or replaced (a record of
 * an ended call that was ended already changes nothing).  0, or -1. */
int store_calls_record(struct store *s, int64_t job_id, const struct call_row *rows, size_t n,
                       size_t *changed, struct weir_error *err);
/* The calls of job_id whose call_id is above `after`, in call_id order, at
 * most `limit` (> 0).  0, or -1. */
int store_calls_of_job(struct store *s, int64_t job_id, int64_t after, int limit,
                       struct call_row **rows, size_t *n, struct weir_error *err);
/* How many calls of job_id are in each state (counts[CALL_STATE_COUNT]). */
int store_call_counts(struct store *s, int64_t job_id, int64_t counts[CALL_STATE_COUNT],
                      struct weir_error *err);
void call_row_release(struct call_row *row);
void call_rows_free(struct call_row *rows, size_t n);

#endif
