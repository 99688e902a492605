/* sensor.h: what a sensor does after a poke, and when it pokes next.
 *
 * Pure: the poke's outcome, the sensor's settings and the times come in;
 * a verdict comes out.  The server (server/dag_manager/sensors.c) and the
 * poking process (`weir task-sensor`, server/sensor_task.c) both follow it,
 * so a sensor waits the same way in either mode.
 *
 * Rules (docs/dags.md, "Sensors"):
 *  - a poke that found what it waits for ends the try: success;
 *  - a poke that errs (a query that does not run, a connection that is not
 *    defined) ends the try failed, and the task's retries apply;
 *  - a sensor whose external task reached one of its failed_states ends
 *    failed, without a retry (skipped with soft_fail, as Airflow's); one
 *    that reached one of its skipped_states ends skipped;
 *  - once `timeout` has passed since the try's first poke, a poke that did
 *    not find it ends the try: skipped with soft_fail, else failed, never
 *    retried (Airflow's sensor timeout);
 *  - else it waits: the next poke comes poke_interval after this one, or
 *    with exponential_backoff poke_interval * 2^(pokes - 1), capped by
 *    max_wait (0: by the timeout), and never later than the timeout itself
 *    (the last poke falls on it).
 */
#ifndef WEIR_SCHED_SENSOR_H
#define WEIR_SCHED_SENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "model/dag_spec.h"

struct sensor_policy {
	int64_t poke_interval_ms; /* > 0 */
	int64_t timeout_ms;       /* > 0 */
	int64_t max_wait_ms;      /* <= 0: the timeout caps it */
	bool exponential_backoff;
	bool soft_fail;
};

enum sensor_action {
	SENSOR_SUCCEED = 0,
	SENSOR_WAIT, /* next_poke_at says when */
	SENSOR_FAIL, /* no_retry says whether the retries apply */
	SENSOR_SKIP, /* soft_fail timeout (or failed state), or a skipped state */
};

struct sensor_verdict {
	enum sensor_action action;
	int64_t next_poke_at; /* SENSOR_WAIT: epoch ms */
	bool no_retry;        /* SENSOR_FAIL */
	bool timed_out;       /* SENSOR_FAIL, SENSOR_SKIP: the timeout ended it */
};

/* After poke number `pokes` (>= 1, this one counted) of a try whose first
 * poke was at first_poke_ms, made at now_ms. */
struct sensor_verdict sensor_after_poke(const struct sensor_policy *p, enum sensor_outcome o,
                                        int pokes, int64_t first_poke_ms, int64_t now_ms);

/* The wait after poke number `pokes` (>= 1), before the timeout's cap. */
int64_t sensor_wait_ms(const struct sensor_policy *p, int pokes);

#endif
