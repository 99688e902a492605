/* long_poll.h: requests held without an answer until something they wait
 * for happens or their deadline passes (GET /launch/cluster?wait, GET
 * /jobs/{id}?wait&since).
 *
 * A waiter belongs to a kind and a key (for example: the cluster of job 7);
 * long_polls_notify() asks the waiters of a kind (and key) again, and one
 * timer, armed for the earliest deadline, asks a waiter a last time when
 * its deadline comes.  A suspended request costs nothing meanwhile.
 *
 * long_polls_hurry() lets a check answer sooner than the deadline it came
 * with (a follower that gathers changes: at most so long after the first).
 *
 * long_polls_seen() and long_polls_still() spare a new request a read of
 * what it waits on when nothing was noticed since it was last read.
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
/* Brings the deadline of the waiter of `req` forward to `at_ms` (monotonic)
 * when that is earlier: it is then asked with timed_out at `at_ms`.  May be
 * called from its check (which then returns false); a request that is not
 * waiting is a no-op. */
void long_polls_hurry(struct long_polls *lp, struct http_request *req, int64_t at_ms);

/* What a check saw, remembered until the next notice of its kind: a
 * request that comes with what was last seen of `key` (its version, a
 * NUL-terminated text of at most LONG_POLL_SEEN_MAX bytes) can wait at once,
 * without reading it again, as long as no notice came since (nothing of
 * that kind can have changed without one).  A few keys are remembered,
 * the one seen longest ago forgotten first.  kind: 0..LONG_POLL_KINDS-1;
 * others are not remembered. */
#define LONG_POLL_KINDS 4
#define LONG_POLL_SEEN_MAX 32
void long_polls_seen(struct long_polls *lp, int kind, int64_t key, const char *what);
/* true when `what` is what long_polls_seen() remembered of `key` and no
 * notice of `kind` came since. */
bool long_polls_still(const struct long_polls *lp, int kind, int64_t key, const char *what);

#endif
