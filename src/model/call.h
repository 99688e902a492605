/* call.h: a call of a Ray program on a warm worker, as the server records it
 * (docs/internals/calls.md): its states and their names (one table,
 * call.c), the one rule of their moves, and the bounds of a record.
 *
 * A call is not a job: the worker that ran it is (its resources, limits
 * and log are the job's).  The program reports its calls in batches
 * (POST /api/v1/jobs/{id}/calls); a record names its call by the
 * program's number for it, unique within the worker's job.
 *
 * Pure functions; no allocation.
 */
#ifndef WEIR_MODEL_CALL_H
#define WEIR_MODEL_CALL_H

#include <stdbool.h>
#include <stdint.h>

enum call_state {
	CALL_RUNNING = 0, /* sent to the worker, not ended */
	CALL_SUCCEEDED,   /* returned a value */
	CALL_FAILED,      /* raised (its last try) */
	CALL_CANCELLED,   /* ray.cancel, or the program ended before it did */
	CALL_CRASHED,     /* its worker died while it ran (a signal, out of memory) */
};

#define CALL_STATE_COUNT (CALL_CRASHED + 1)

/* the most calls one report may carry, and the longest name and error */
#define CALL_BATCH_MAX 1000
#define CALL_NAME_MAX 128
#define CALL_ERROR_MAX 256
/* the most tries a record may count (Ray's max_retries=-1 is 1000 here) */
#define CALL_TRIES_MAX 100000

/* "running", "succeeded", ...; never NULL ("?" out of range). */
const char *call_state_name(enum call_state s);
/* 0, or -1 when `name` is not a state (NULL included); *out unchanged then. */
int call_state_from_name(const char *name, enum call_state *out);
/* Whether s is an end (every state but running). */
bool call_state_final(enum call_state s);
/* The one rule of a call's moves: whether a record of state `to` may
 * replace one of state `from`.  Running may become anything (running again
 * on a retry included); an end never changes.  The store applies it in
 * its upsert (store/call_store.h), the only writer of a call's state. */
bool call_state_may_move(enum call_state from, enum call_state to);

#endif
