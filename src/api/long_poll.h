/* long_poll.h: requests held without an answer until something they wait
 * for happens or their deadline passes (GET /launch/cluster?wait, GET
 * /jobs/{id}?wait&since).
 *
 * A waiter belongs to a kind and a key (for example: the cluster of job 7);
 * long_polls_notify() asks the waiters of a kind (and key) again, and one
 * timer, armed for the earliest deadline, asks a waiter a last time when
 * its deadline comes.  A suspended request costs nothing meanwhile.
 *
 * The check answers the request and returns true when it has an answer;
 * the waiter is then freed (its `arg` with free()).  Destroying the set
 * answers every waiter 503 {"error": "the server is stopping"}.
 */
#ifndef WEIR_API_LONG_POLL_H
#define WEIR_API_LONG_POLL_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "api/http.h"

#define LONG_POLL_ANY_KEY INT64_MIN

/* Asks again: answers `req` and returns true, or returns false to go on
 * waiting (with timed_out the check must answer). */
typedef bool (*long_poll_check_fn)(struct http_request *req, void *arg, bool timed_out);

struct long_polls; /* opaque */

/* NULL on out of memory. */
struct long_polls *long_polls_create(uv_loop_t *loop);
/* Answers every waiter 503 and closes the timer (run the loop once more to
 * finish closing it).  NULL is a no-op. */
void long_polls_destroy(struct long_polls *lp);

/* Suspends `req` until `check` answers it, at the latest at `deadline_ms`
 * (monotonic).  `arg` (malloc'ed) is owned by the waiter from here on, also
 * on failure; NULL (its allocation failed) answers 500.  0, or -1 out of
 * memory (`req` answered 500). */
int long_polls_add(struct long_polls *lp, struct http_request *req, int kind, int64_t key,
                   int64_t deadline_ms, long_poll_check_fn check, void *arg);
/* Asks the waiters of `kind` whose key is `key` (LONG_POLL_ANY_KEY: all of
 * that kind) again. */
void long_polls_notify(struct long_polls *lp, int kind, int64_t key);

#endif
