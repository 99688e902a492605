/* sensor_poke.h: one poke of a sensor (model/dag_spec.h's dag_sensor), for
 * the server and for `weir task-sensor`, the process of a sensor in mode
 * poke (server/sensor_task.c).
 *
 * A poke looks once and says what it found (sched/sensor.h's outcome) and
 * a line for the record ("no file matches in/x_*.csv", "HTTP 503").  The
 * file and time pokes only stat and read the clock; the HTTP and SQL
 * pokes block on the network, bounded by their timeouts: the server runs
 * them on libuv's worker pool (server/dag_manager/sensors.c), never on its
 * loop.  An external_task sensor reads the server's own store: the server
 * pokes it in either mode (sensors.c).
 *
 * `weir task-sensor` reads its spec from WEIR_DATA_SPEC:
 * {"sensor": <the checked sensor mapping, rendered for the try>,
 * "logical_date_ms": N} and its
 * connection from WEIR_CONN_<ID> (data/driver.h), pokes as
 * sched/sensor.h's rules say (server/sensor_task.c) and exits 0 when met, SENSOR_EXIT_SKIP on a
 * soft_fail timeout, SENSOR_EXIT_TIMEOUT on a timeout, 1 when a poke
 * failed, 2 for a spec that is not valid.
 */
#ifndef WEIR_DATA_SENSOR_POKE_H
#define WEIR_DATA_SENSOR_POKE_H

#include <stddef.h>
#include <stdint.h>

#include "model/connection.h"
#include "model/dag_spec.h"

/* Exit statuses of `weir task-sensor` the server reads (Airflow's
 * BashOperator skips on 99 too). */
#define SENSOR_EXIT_SKIP 99
#define SENSOR_EXIT_TIMEOUT 98
/* A command sensor's poke (a command task with sensor: options) says "not
 * yet" by this exit status; 0 is met, anything else an error. */
#define SENSOR_EXIT_NOT_YET 97

#define SENSOR_MSG_MAX 256

/* A file, time, delta, http or sql poke.  `conn` is the connection the
 * sensor names (a file sensor's fs conn, an http or sql sensor's; NULL
 * when it names none).  The message goes to msg, the connection's
 * password masked as "***" in it. */
enum sensor_outcome sensor_poke(const struct dag_sensor *s, int64_t logical_ms,
                                const struct connection *conn, int64_t now_ms, char *msg,
                                size_t msg_size);

/* An external_task sensor's outcome when the awaited TI (or run, without a
 * task_id) is in state `state` (a name; NULL: there is none yet): met in
 * `states`, failed in failed_states, skipped in skipped_states. */
enum sensor_outcome sensor_external_outcome(const struct dag_sensor *s, const char *state,
                                            char *msg, size_t msg_size);

/* Whether an external_task sensor waits for several tasks: task_ids, or a
 * task_group_id. */
bool sensor_external_is_many(const struct dag_sensor *s);

/* A task instance of the awaited run: its task and its state (borrowed). */
struct sensor_ext_ti {
	const char *task_id;
	const char *state;
};

/* An external_task sensor's outcome over the task instances of the awaited
 * run (run_found false: there is no such run yet), as Airflow's: one of
 * the awaited tasks in failed_states fails it, then one in skipped_states
 * skips it; it is met when each task of task_ids has task instances (each
 * of its map indexes) and all are in `states`, or the group has tasks and
 * all are.  The others of `tis` are left out. */
enum sensor_outcome sensor_external_many(const struct dag_sensor *s,
                                         const struct sensor_ext_ti *tis, size_t n, bool run_found,
                                         char *msg, size_t msg_size);

/* The logical date an external_task sensor looks at: logical_ms minus its
 * execution_delta. */
int64_t sensor_external_date(const struct dag_sensor *s, int64_t logical_ms);

/* A time sensor's moment: `time` seconds into the UTC day of logical_ms;
 * a delta sensor's: logical_ms + delta_s. */
int64_t sensor_time_target(int64_t logical_ms, int time_of_day_s);
int64_t sensor_delta_target(int64_t logical_ms, int64_t delta_s);

/* Whether a SQL sensor's first cell counts as true: not NULL, not empty,
 * and none of 0, 0.0, f, false, n, no, off (any case; PostgreSQL writes a
 * boolean as t or f). */
bool sensor_cell_truthy(const char *cell);

#endif
