/* sensor_task.c: `weir task-sensor`, the process of a sensor in mode poke
 * (sensor_task.h): it holds its slot and pokes (data/sensor_poke.h) as
 * sched/sensor.h's rules say, sleeping between pokes.  Here because it
 * needs both: data pokes, sched decides. */
#include "server/sensor_task.h"

#include <stdio.h>
#include <stdlib.h>

#include "data/driver.h"
#include "data/sensor_poke.h"
#include "lib/clock.h"
#include "sched/sensor.h"

int sensor_task_main(int argc, char **argv)
{
	const char *text = getenv("WEIR_DATA_SPEC"), *conn_id;
	struct weir_error err = {0};
	struct dag_sensor *s = NULL;
	struct connection conn = {0}, *cp = NULL;
	struct sensor_policy pol;
	json_t *spec;
	int64_t logical, first, now;
	int pokes = 0, rc = 2;

	(void)argc;
	(void)argv;
	spec = text ? json_loads(text, 0, NULL) : NULL;
	if (!spec) {
		fprintf(stderr,
		        "weir task-sensor: WEIR_DATA_SPEC: expected the sensor's JSON spec\n");
		return 2;
	}
	logical = json_integer_value(json_object_get(spec, "logical_date_ms"));
	s = dag_sensor_from_spec(json_object_get(spec, "sensor"), &err);
	if (!s) {
		fprintf(stderr, "weir task-sensor: %s\n", err.msg);
		goto out;
	}
	conn_id = json_string_value(json_object_get(s->what, "conn"));
	if (conn_id) {
		if (data_conn_from_env(conn_id, &conn, &err) < 0) {
			fprintf(stderr, "weir task-sensor: %s\n", err.msg);
			rc = 1;
			goto out;
		}
		cp = &conn;
	}
	pol = (struct sensor_policy){s->poke_interval_ms, s->timeout_ms, s->max_wait_ms,
	                             s->exponential_backoff, s->soft_fail};
	first = clock_now_ms();
	for (;;) {
		char msg[SENSOR_MSG_MAX];
		enum sensor_outcome o;
		struct sensor_verdict v;

		now = clock_now_ms();
		o = sensor_poke(s, logical, cp, now, msg, sizeof msg);
		v = sensor_after_poke(&pol, o, ++pokes, first, now);
		fprintf(stderr, "weir: poke %d: %s\n", pokes, msg);
		if (v.action == SENSOR_SUCCEED) {
			rc = 0;
			break;
		}
		if (v.action != SENSOR_WAIT) {
			if (v.timed_out)
				fprintf(stderr, "weir: the sensor timed out after %d pokes\n",
				        pokes);
			rc = v.action == SENSOR_SKIP ? SENSOR_EXIT_SKIP
			     : v.timed_out           ? SENSOR_EXIT_TIMEOUT
			                             : 1;
			break;
		}
		clock_sleep_ms(v.next_poke_at - now);
	}
out:
	if (cp)
		connection_release(cp);
	dag_sensor_free(s);
	json_decref(spec);
	return rc;
}
