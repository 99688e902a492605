/* notify_due.h: when a notification is delivered again and when a task
 * misses its SLA; pure decisions (no clock read: `now` comes in).
 *
 * A failed delivery is tried again after retry_delay * 2^(attempt - 1),
 * capped at NOTIFY_RETRY_CAP_MS, while attempts remain.  A task instance
 * misses its SLA when its run's anchor (the logical date, or the run's
 * start) plus the SLA's duration has passed and it has not succeeded
 * (skipped and removed instances never miss one).
 */
#ifndef WEIR_SCHED_NOTIFY_DUE_H
#define WEIR_SCHED_NOTIFY_DUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/notify.h"
#include "model/states.h"

#define NOTIFY_RETRY_CAP_MS (3600LL * 1000)

struct notify_retry {
	bool again;    /* false: the delivery failed for good */
	int64_t at_ms; /* again: when the next attempt starts */
};

/* After attempt `attempt` (1: the first) failed, of a delivery allowed
 * `retries` attempts after the first, the first wait `delay_ms`.  The wait
 * saturates instead of overflowing. */
struct notify_retry notify_retry_decide(int attempt, int retries, int64_t delay_ms, int64_t now_ms);

/* The time a TI of a run must have succeeded by: the anchor plus the
 * duration; 0 when there is no SLA or its anchor is not known yet (a run
 * that has not started, for SLA_FROM_RUN_START). */
int64_t sla_due_ms(const struct dag_sla *sla, int64_t logical_ms, int64_t run_start_ms);

struct sla_item {
	int64_t due_ms; /* sla_due_ms(); 0: none */
	enum dag_ti_state state;
	bool recorded; /* a miss is already on record */
};

/* Which items missed their SLA by `now` and are not recorded yet: their
 * indices into `missed` (room for n), their count into *n_missed; the
 * earliest due time still ahead of an item that may miss it into *next_ms
 * (0: none). */
void sla_decide(const struct sla_item *items, size_t n, int64_t now_ms, size_t *missed,
                size_t *n_missed, int64_t *next_ms);

#endif
