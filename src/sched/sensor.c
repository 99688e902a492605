/* sensor.c: a sensor's verdict after a poke and its next poke (sensor.h). */
#include "sched/sensor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
	int64_t deadline = first_poke_ms > INT64_MAX - p->timeout_ms ? INT64_MAX
	                                                             : first_poke_ms + p->timeout_ms;
	int64_t w;

	switch (o) {
	case SENSOR_MET:
		v.action = SENSOR_SUCCEED;
		return v;
	case SENSOR_ERROR:
		v.action = SENSOR_FAIL;
		return v;
	case SENSOR_FAILED_STATE:
		v.action = SENSOR_FAIL;
		v.no_retry = true;
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

int64_t sensor_time_target(int64_t logical_ms, int time_of_day_s)
{
	const int64_t day = 86400000;
	int64_t start = logical_ms - ((logical_ms % day) + day) % day;

	return start + (int64_t)time_of_day_s * 1000;
}

int64_t sensor_delta_target(int64_t logical_ms, int64_t delta_s)
{
	return logical_ms + delta_s * 1000;
}

bool sensor_cell_truthy(const char *cell)
{
	static const char *const falsy[] = {"0", "f", "false", "n", "no", "off", NULL};
	char *end;
	double d;

	if (!cell || !*cell)
		return false;
	for (size_t i = 0; falsy[i]; i++)
		if (!strcasecmp(cell, falsy[i]))
			return false;
	d = strtod(cell, &end);
	if (end != cell && !*end && d == 0)
		return false;
	return true;
}
