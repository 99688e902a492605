/* sensor.c: a sensor's verdict after a poke and its next poke (sensor.h). */
#include "sched/sensor.h"

#include <stdint.h>

int64_t sensor_wait_ms(const struct sensor_policy *p, int pokes)
{
	int64_t w = p->poke_interval_ms > 0 ? p->poke_interval_ms : 1;
	int64_t cap = p->max_wait_ms > 0 ? p->max_wait_ms : p->timeout_ms;

	if (p->exponential_backoff)
		for (int i = 1; i < pokes && w < cap && w < INT64_MAX / 2; i++)
			w *= 2;
	if (cap > 0 && w > cap)
		w = cap;
	return w;
}

struct sensor_verdict sensor_after_poke(const struct sensor_policy *p, enum sensor_outcome o,
                                        int pokes, int64_t first_poke_ms, int64_t now_ms)
{
	struct sensor_verdict v = {.action = SENSOR_WAIT};
	int64_t deadline =
	    first_poke_ms > INT64_MAX - p->timeout_ms ? INT64_MAX : first_poke_ms + p->timeout_ms;
	int64_t w;

	switch (o) {
	case SENSOR_MET:
		v.action = SENSOR_SUCCEED;
		return v;
	case SENSOR_ERROR:
		v.action = SENSOR_FAIL;
		return v;
	case SENSOR_FAILED_STATE:
		v.action = p->soft_fail ? SENSOR_SKIP : SENSOR_FAIL;
		v.no_retry = true;
		return v;
	case SENSOR_SKIP_STATE:
		v.action = SENSOR_SKIP;
		return v;
	case SENSOR_NOT_YET:
		break;
	}
	if (now_ms >= deadline) {
		v.action = p->soft_fail ? SENSOR_SKIP : SENSOR_FAIL;
		v.no_retry = true;
		v.timed_out = true;
		return v;
	}
	w = sensor_wait_ms(p, pokes < 1 ? 1 : pokes);
	v.next_poke_at = now_ms > deadline - w ? deadline : now_ms + w;
	return v;
}
