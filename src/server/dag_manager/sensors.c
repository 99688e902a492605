/* sensors.c: the sensors the server pokes itself: those in mode
 * reschedule, and every external_task sensor (its poke is a read of the
 * server's own store).  Such a TI is admitted by the pools like any task,
 * then starts its try here instead of a job: it goes up_for_reschedule,
 * which holds no pool slot and no process, and is poked when due.  A
 * file, time, delta or external_task poke is a stat, the clock or one
 * indexed read, done on the loop; an HTTP or SQL poke blocks on the
 * network, so it runs on libuv's worker pool (bounded by its timeouts)
 * and its result comes back to the loop.  What a poke's outcome means is
 * sched/sensor.h's; each poke is recorded (store/sensor_store.h) and the
 * TI's reason says the last result.
 *
 * A command sensor (a command task with sensor: options) is poked by
 * starting its job again (dm_poke_job_start(), ti_jobs.c); the TI stays
 * up_for_reschedule meanwhile and the job's end is its poke's outcome
 * (dm_sensor_job_end(): exit 97 is "not yet").
 *
 * Owns: the waiting sensors in memory, a slot each, and their due times
 * (sched/due_table.h keyed by the slot), read from the store once after a
 * start (a restarted server goes on with the same first poke and count).
 */
#include "server/dag_manager/dm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/sensor_poke.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/log.h"
#include "sched/due_table.h"
#include "sched/sensor.h"
#include "sched/timers.h"
#include "server/secrets.h"
#include "store/sensor_store.h"

/* One waiting sensor: its TI's key, its try's pokes and its sensor as
 * rendered for the try. */
struct waiting {
	bool used;
	bool in_flight; /* an HTTP or SQL poke is on the worker pool */
	struct sensor_poke_row row;
	struct dag_sensor *sensor; /* NULL until the try's first poke renders it */
};

struct dm_sensors {
	struct waiting *w;
	size_t n, cap;
	struct due_table due; /* slot -> next poke */
	bool loaded;
	bool closing;  /* the manager is gone: pokes under way are dropped */
	int in_flight; /* work items not yet back */
};

/* A poke on the worker pool. */
struct poke_work {
	uv_work_t req;
	struct dag_manager *dm;
	struct dm_sensors *ss;
	size_t slot;
	struct dag_sensor *sensor; /* a copy: a rescan may replace the spec meanwhile */
	struct connection conn;
	bool has_conn;
	int64_t logical_ms;
	enum sensor_outcome outcome;
	char msg[SENSOR_MSG_MAX];
};

static struct dm_sensors *sensors_of(struct dag_manager *dm)
{
	if (!dm->sensors)
		dm->sensors = calloc(1, sizeof *dm->sensors);
	return dm->sensors;
}

static bool command_sensor(const struct dag_task *t)
{
	return t->kind == DAG_TASK_COMMAND && t->sensor && t->sensor->kind == DAG_SENSOR_COMMAND;
}

/* A command sensor waits between its jobs whatever its mode says. */
static bool server_pokes(const struct dag_task *t)
{
	if (command_sensor(t))
		return true;
	return t->kind == DAG_TASK_SENSOR && t->sensor &&
	       (t->sensor->mode == DAG_SENSOR_RESCHEDULE ||
	        t->sensor->kind == DAG_SENSOR_EXTERNAL_TASK);
}

/* A free slot (or a new one); -1 when out of memory. */
static long slot_new(struct dm_sensors *ss)
{
	for (size_t i = 0; i < ss->n; i++)
		if (!ss->w[i].used)
			return (long)i;
	if (ALLOC_GROW(ss->w, ss->n + 1, ss->cap) < 0)
		return -1;
	memset(&ss->w[ss->n], 0, sizeof ss->w[ss->n]);
	return (long)ss->n++;
}

static void slot_free(struct dm_sensors *ss, size_t slot)
{
	due_table_set(&ss->due, (int64_t)slot, TIMER_NEVER);
	sensor_poke_row_release(&ss->w[slot].row);
	dag_sensor_free(ss->w[slot].sensor);
	ss->w[slot].sensor = NULL;
	ss->w[slot].used = false;
	ss->w[slot].in_flight = false;
}

/* Takes the row's strings into a new slot, due at row->next_poke_at. */
static long slot_add(struct dm_sensors *ss, struct sensor_poke_row *row)
{
	long k = slot_new(ss);

	if (k < 0)
		return -1;
	ss->w[k].used = true;
	ss->w[k].in_flight = false;
	ss->w[k].row = *row;
	ss->w[k].sensor = NULL;
	memset(row, 0, sizeof *row);
	if (due_table_set(&ss->due, k, ss->w[k].row.next_poke_at) < 0) {
		slot_free(ss, (size_t)k);
		return -1;
	}
	return k;
}

static void record(struct dag_manager *dm, const struct sensor_poke_row *r)
{
	struct weir_error err = {0};

	if (sensor_store_put(dm->store, r, &err) < 0)
		log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
}

/* ---- a try starts ---- */

bool dm_sensor_start(struct dag_manager *dm, struct run_ctx *rc, size_t ti)
{
	const struct dag_task *t = &rc->spec->tasks[rc->ti_task[ti]];
	struct dag_ti_row *r = &rc->rows[rc->ti_row[ti]];
	struct dm_sensors *ss;
	struct sensor_poke_row row = {0};
	struct weir_error err = {0};
	int64_t now = clock_now_ms();

	if (!server_pokes(t))
		return false;
	ss = sensors_of(dm);
	if (!ss)
		return false; /* out of memory: the job path will poke it */
	if (dm_ti_set_state(r, DAG_TI_UP_FOR_RESCHEDULE) < 0)
		return true; /* refused (logged): the row as it was, no job either */
	r->try_number++;
	r->job_id = 0;
	r->queued_at = now;
	r->start_date = now;
	r->end_date = 0;
	r->next_retry_at = 0;
	dm_set_str(&r->rendered_command, "");
	dm_set_str(&r->outputs, "");
	dm_set_str(&r->reason, "waiting: the first poke is due");
	if (dm_ti_save(dm, rc, r, &err) < 0) {
		log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
		rc->stale = true;
		return true;
	}
	dm_book_started(rc, ti, DAG_TI_UP_FOR_RESCHEDULE, r->try_number);
	dm_try_update(dm, r, DAG_TI_UP_FOR_RESCHEDULE, "", false);
	row.dag_id = dm_strdup_or_empty(r->dag_id);
	row.run_id = dm_strdup_or_empty(r->run_id);
	row.task_id = dm_strdup_or_empty(r->task_id);
	row.map_index = r->map_index;
	row.try_number = r->try_number;
	row.first_poke_at = now;
	row.next_poke_at = now;
	record(dm, &row);
	if (!row.dag_id || !row.run_id || !row.task_id || slot_add(ss, &row) < 0)
		log_error("DAG %s task %s: out of memory: the sensor waits for a restart",
		          r->dag_id, r->task_id);
	sensor_poke_row_release(&row);
	log_info("DAG %s run %s task %s try %d: a %s sensor the server pokes", r->dag_id, r->run_id,
	         r->task_id, r->try_number, dag_sensor_kind_name(t->sensor->kind));
	dm_wake_note(dm, now);
	dm->turn.pass_again = true;
	dm->pools.dirty = true; /* its slot is free again at once */
	return true;
}

/* ---- a poke's outcome ---- */

/* The TI's reason says the last poke ("poke 3: no file matches in/x.csv");
 * its start date is when it began waiting. */
static void show_wait(struct dag_manager *dm, const struct sensor_poke_row *row)
{
	struct weir_error err = {0};
	struct run_ctx *rc = dm_run_get(dm, row->dag_id, row->run_id, &err);
	struct dag_ti_row *r;
	char why[SENSOR_RESULT_MAX + 32];
	long ti;

	if (!rc || rc->stale || (ti = dm_run_find_ti(rc, row->task_id, row->map_index)) < 0)
		return;
	r = &rc->rows[rc->ti_row[ti]];
	snprintf(why, sizeof why, "poke %d: %s", row->pokes, row->last_result);
	if (r->reason && !strcmp(r->reason, why))
		return;
	dm_set_str(&r->reason, why);
	if (dm_ti_save(dm, rc, r, &err) < 0) {
		log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
		rc->stale = true;
	}
}

/* Applies a poke's outcome to the sensor in `slot`. */
static void poke_done(struct dag_manager *dm, struct dm_sensors *ss, size_t slot,
                      const struct dag_sensor *s, enum sensor_outcome o, const char *msg)
{
	struct sensor_poke_row *row = &ss->w[slot].row;
	struct sensor_policy pol = {s->poke_interval_ms, s->timeout_ms, s->max_wait_ms,
	                            s->exponential_backoff, s->soft_fail};
	int64_t now = clock_now_ms();
	struct sensor_verdict v;
	char why[SENSOR_RESULT_MAX + 64];

	row->pokes++;
	row->last_poke_at = now;
	snprintf(row->last_result, sizeof row->last_result, "%s", msg);
	v = sensor_after_poke(&pol, o, row->pokes, row->first_poke_at, now);
	row->next_poke_at = v.action == SENSOR_WAIT ? v.next_poke_at : 0;
	record(dm, row);
	if (v.action == SENSOR_WAIT) {
		show_wait(dm, row);
		if (due_table_set(&ss->due, (int64_t)slot, v.next_poke_at) < 0)
			log_error("DAG %s task %s: out of memory", row->dag_id, row->task_id);
		dm_wake_note(dm, v.next_poke_at);
		return;
	}
	if (v.timed_out)
		snprintf(why, sizeof why, "sensor timed out after %d pokes: %s", row->pokes, msg);
	else
		snprintf(why, sizeof why, "%s", msg);
	dm_ti_ended(dm, row->dag_id, row->run_id, row->task_id, row->map_index, row->try_number,
	            v.action == SENSOR_SUCCEED, v.no_retry, v.action == SENSOR_SKIP,
	            v.action == SENSOR_SUCCEED ? "" : why, 0);
	slot_free(ss, slot);
}

static void work_poke(uv_work_t *req)
{
	struct poke_work *w = req->data;

	w->outcome = sensor_poke(w->sensor, w->logical_ms, w->has_conn ? &w->conn : NULL,
	                         clock_now_ms(), w->msg, sizeof w->msg);
}

static void work_free(struct poke_work *w)
{
	if (w->has_conn)
		connection_release(&w->conn);
	dag_sensor_free(w->sensor);
	free(w);
}

static void after_poke(uv_work_t *req, int status)
{
	struct poke_work *w = req->data;
	struct dm_sensors *ss = w->ss;
	struct dag_manager *dm = w->dm;

	ss->in_flight--;
	if (ss->closing) {
		work_free(w);
		if (ss->in_flight == 0)
			free(ss);
		return;
	}
	dm_touch(dm);
	if (w->slot < ss->n && ss->w[w->slot].used && ss->w[w->slot].in_flight) {
		ss->w[w->slot].in_flight = false;
		if (status < 0)
			snprintf(w->msg, sizeof w->msg, "the poke was cancelled");
		poke_done(dm, ss, w->slot, w->sensor, status < 0 ? SENSOR_NOT_YET : w->outcome,
		          w->msg);
	}
	work_free(w);
}

/* ---- a poke ---- */

/* An HTTP or SQL poke, queued on the worker pool with a copy of what it
 * needs.  -1 (with msg) when it could not be. */
static int queue_poke(struct dag_manager *dm, struct dm_sensors *ss, size_t slot,
                      const struct dag_sensor *s, int64_t logical_ms, char *msg, size_t size)
{
	struct poke_work *w = calloc(1, sizeof *w);
	const char *conn_id = json_string_value(json_object_get(s->what, "conn"));
	struct weir_error err = {0};

	if (!w || !(w->sensor = dag_sensor_from_spec(s->spec, &err))) {
		snprintf(msg, size, "%s", err.msg[0] ? err.msg : "out of memory");
		free(w);
		return -1;
	}
	if (conn_id) {
		if (!dm->secrets ||
		    secrets_conn_resolve(dm->secrets, conn_id, &w->conn, NULL, &err) < 0) {
			snprintf(msg, size, "conn %s: %s", conn_id,
			         err.msg[0] ? err.msg : "this server resolves no connections");
			work_free(w);
			return -1;
		}
		w->has_conn = true;
	}
	w->req.data = w;
	w->dm = dm;
	w->ss = ss;
	w->slot = slot;
	w->logical_ms = logical_ms;
	if (uv_queue_work(dm->loop, &w->req, work_poke, after_poke) < 0) {
		snprintf(msg, size, "cannot queue the poke");
		work_free(w);
		return -1;
	}
	ss->in_flight++;
	ss->w[slot].in_flight = true;
	due_table_set(&ss->due, (int64_t)slot, TIMER_NEVER);
	return 0;
}

/* check_existence (Airflow's): the DAG is loaded, and so are the tasks
 * (or the group) the sensor names.  -1 with msg when not. */
static int external_exists(struct dag_manager *dm, const struct dag_sensor *s, char *msg,
                           size_t size)
{
	const char *dag_id = json_string_value(json_object_get(s->what, "dag_id"));
	const char *task_id = json_string_value(json_object_get(s->what, "task_id"));
	const char *group = json_string_value(json_object_get(s->what, "task_group_id"));
	json_t *ids = json_object_get(s->what, "task_ids"), *v;
	struct weir_error err = {0};
	const struct dag_spec *spec = dm_spec_of(dm, dag_id, &err);
	size_t i, n;

	if (!spec) {
		snprintf(msg, size, "The external DAG %s does not exist.", dag_id);
		return -1;
	}
	if (task_id && !dag_spec_find_task(spec, task_id)) {
		snprintf(msg, size, "The external task %s in DAG %s does not exist.", task_id,
		         dag_id);
		return -1;
	}
	json_array_foreach(ids, i, v) if (!dag_spec_find_task(spec, json_string_value(v)))
	{
		snprintf(msg, size, "The external task %s in DAG %s does not exist.",
		         json_string_value(v), dag_id);
		return -1;
	}
	if (!group)
		return 0;
	n = strlen(group);
	for (i = 0; i < spec->n_tasks; i++)
		if (!strncmp(spec->tasks[i].task_id, group, n) && spec->tasks[i].task_id[n] == '.')
			return 0;
	snprintf(msg, size, "The external task group '%s' in DAG '%s' does not exist.", group,
	         dag_id);
	return -1;
}

/* A sensor on several tasks of the other run (task_ids, task_group_id). */
static enum sensor_outcome poke_external_many(struct dag_manager *dm, const struct dag_sensor *s,
                                              int64_t logical_ms, char *msg, size_t size)
{
	struct sensor_ext_row *rows = NULL;
	struct sensor_ext_ti *tis = NULL;
	struct weir_error err = {0};
	enum sensor_outcome o;
	bool found;
	size_t n = 0;

	if (sensor_store_external_tis(
	        dm->store, json_string_value(json_object_get(s->what, "dag_id")),
	        sensor_external_date(s, logical_ms), &found, &rows, &n, &err) < 0) {
		snprintf(msg, size, "%s", err.msg);
		return SENSOR_ERROR;
	}
	if (n && !(tis = calloc(n, sizeof *tis))) {
		sensor_ext_rows_free(rows, n);
		snprintf(msg, size, "out of memory");
		return SENSOR_ERROR;
	}
	for (size_t i = 0; i < n; i++)
		tis[i] = (struct sensor_ext_ti){rows[i].task_id, rows[i].state};
	o = sensor_external_many(s, tis, n, found, msg, size);
	free(tis);
	sensor_ext_rows_free(rows, n);
	return o;
}

static enum sensor_outcome poke_external(struct dag_manager *dm, const struct dag_sensor *s,
                                         int64_t logical_ms, char *msg, size_t size)
{
	char state[STORE_STATE_MAX];
	struct weir_error err = {0};

	if (json_is_true(json_object_get(s->what, "check_existence")) &&
	    external_exists(dm, s, msg, size) < 0)
		return SENSOR_ERROR;
	if (sensor_external_is_many(s))
		return poke_external_many(dm, s, logical_ms, msg, size);
	if (sensor_store_external_state(
	        dm->store, json_string_value(json_object_get(s->what, "dag_id")),
	        json_string_value(json_object_get(s->what, "task_id")),
	        sensor_external_date(s, logical_ms), state, sizeof state, &err) < 0) {
		snprintf(msg, size, "%s", err.msg);
		return SENSOR_ERROR;
	}
	return sensor_external_outcome(s, state[0] ? state : NULL, msg, size);
}

/* The sensor of the slot's try, its fields rendered (model/dag_spec.h): at
 * its first poke, when the try starts (again at the first after a
 * restart).  NULL: they did not render, and the try has failed saying why,
 * with its retries when a variable or connection is not defined yet. */
static struct dag_sensor *render(struct dag_manager *dm, const struct run_ctx *rc, size_t ti,
                                 const struct sensor_poke_row *row)
{
	const struct dag_task *t = &rc->spec->tasks[rc->ti_task[ti]];
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct template_source src;
	struct weir_error err = {0};
	struct dag_sensor *s = NULL;
	char why[WEIR_ERROR_MSG_MAX + 32];

	if (dm_try_template_ctx(dm, rc, ti, row->try_number, &src, &ctx, &err) == 0)
		s = dag_sensor_render(t->sensor, &ctx, &err);
	template_ctx_release(&ctx);
	if (s)
		return s;
	snprintf(why, sizeof why, "cannot start: %s", err.msg);
	log_warn("DAG %s run %s task %s: %s", row->dag_id, row->run_id, row->task_id, why);
	dm_ti_ended(dm, row->dag_id, row->run_id, row->task_id, row->map_index, row->try_number,
	            false, err.kind != WEIR_E_NOT_FOUND, false, why, 0);
	return NULL;
}

static void poke_slot(struct dag_manager *dm, struct dm_sensors *ss, size_t slot)
{
	struct sensor_poke_row *row = &ss->w[slot].row;
	struct weir_error err = {0};
	struct run_ctx *rc = dm_run_get(dm, row->dag_id, row->run_id, &err);
	const struct dag_sensor *s;
	char msg[SENSOR_MSG_MAX];
	enum sensor_outcome o;
	long ti;

	if (!rc) {
		slot_free(ss, slot); /* the run or its DAG is gone */
		return;
	}
	ti = dm_run_find_ti(rc, row->task_id, row->map_index);
	if (ti < 0 || rc->book.tis[ti].state != DAG_TI_UP_FOR_RESCHEDULE ||
	    rc->book.tis[ti].try_number != row->try_number ||
	    !server_pokes(&rc->spec->tasks[rc->ti_task[ti]])) {
		slot_free(ss, slot); /* cleared, marked, or no longer a sensor */
		return;
	}
	if (!ss->w[slot].sensor && !(ss->w[slot].sensor = render(dm, rc, (size_t)ti, row))) {
		slot_free(ss, slot); /* the try has failed */
		return;
	}
	s = ss->w[slot].sensor;
	switch (s->kind) {
	case DAG_SENSOR_COMMAND: {
		/* the poke is the task's job; its end says (dm_sensor_job_end) */
		int rc_start = dm_poke_job_start(dm, rc, (size_t)ti, msg, sizeof msg);
		if (rc_start == 0) {
			ss->w[slot].in_flight = true;
			due_table_set(&ss->due, (int64_t)slot, TIMER_NEVER);
			return;
		}
		o = rc_start > 0 ? SENSOR_NOT_YET : SENSOR_ERROR;
		break;
	}
	case DAG_SENSOR_HTTP:
	case DAG_SENSOR_SQL:
		if (queue_poke(dm, ss, slot, s, rc->run.logical_date, msg, sizeof msg) == 0)
			return;
		o = SENSOR_ERROR;
		break;
	case DAG_SENSOR_EXTERNAL_TASK:
		o = poke_external(dm, s, rc->run.logical_date, msg, sizeof msg);
		break;
	default: {
		const char *conn_id = json_string_value(json_object_get(s->what, "conn"));
		struct connection c = {0};
		bool has = false;
		if (conn_id && dm->secrets &&
		    secrets_conn_resolve(dm->secrets, conn_id, &c, NULL, &err) == 0)
			has = true;
		o = sensor_poke(s, rc->run.logical_date, has ? &c : NULL, clock_now_ms(), msg,
		                sizeof msg);
		if (has)
			connection_release(&c);
	}
	}
	poke_done(dm, ss, slot, s, o, msg);
}

/* The waiting sensors of the store, after a start. */
static void load(struct dag_manager *dm, struct dm_sensors *ss)
{
	struct sensor_poke_row *rows = NULL;
	struct weir_error err = {0};
	size_t n = 0;

	ss->loaded = true;
	if (sensor_store_waiting(dm->store, &rows, &n, &err) < 0) {
		log_error("DAG sensors: %s", err.msg);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (rows[i].next_poke_at <= 0)
			rows[i].next_poke_at = clock_now_ms(); /* a poke was under way */
		if (slot_add(ss, &rows[i]) < 0)
			log_error("DAG sensors: out of memory");
	}
	sensor_poke_rows_free(rows, n);
}

void dm_sensor_pass(struct dag_manager *dm)
{
	struct dm_sensors *ss = sensors_of(dm);
	int64_t now = clock_now_ms(), next;
	int64_t *due;
	size_t n = 0;

	if (!ss)
		return;
	if (!ss->loaded)
		load(dm, ss);
	next = due_table_earliest(&ss->due);
	if (next == TIMER_NEVER)
		return;
	if (next > now) {
		dm_wake_note(dm, next);
		return;
	}
	due = due_table_due(&ss->due, now, &n);
	for (size_t i = 0; i < n; i++) {
		size_t slot = (size_t)due[i];
		if (slot < ss->n && ss->w[slot].used && !ss->w[slot].in_flight)
			poke_slot(dm, ss, slot);
	}
	free(due);
	next = due_table_earliest(&ss->due);
	if (next != TIMER_NEVER)
		dm_wake_note(dm, next);
}

int64_t dm_sensor_next_due(struct dag_manager *dm)
{
	int64_t next = dm->sensors ? due_table_earliest(&dm->sensors->due) : TIMER_NEVER;

	return next == TIMER_NEVER ? CRON_NEVER : next;
}

bool dm_sensor_exit(struct dag_manager *dm, const char *dag_id, const char *task_id, int exit_code,
                    bool *skip, char *why, size_t why_size)
{
	const struct dag_spec *spec;
	const struct dag_task *t;

	*skip = false;
	if (exit_code != SENSOR_EXIT_SKIP && exit_code != SENSOR_EXIT_TIMEOUT)
		return false;
	spec = dm_spec_of(dm, dag_id, NULL);
	t = spec ? dag_spec_find_task(spec, task_id) : NULL;
	if (!t)
		return false;
	if (t->kind == DAG_TASK_SENSOR || command_sensor(t)) {
		*skip = exit_code == SENSOR_EXIT_SKIP;
		snprintf(why, why_size, "sensor timed out%s (its log has every poke)",
		         *skip ? " (soft_fail: skipped)" : "");
		return true;
	}
	/* an Airflow DAG file's runner's 98 and 99 (AirflowFailException, AirflowSkipException)
	 * are its task's no_retry_on_exit_code and skip_on_exit_code (dm_flow_exit()) */
	return false;
}

bool dm_sensor_job_end(struct dag_manager *dm, const char *dag_id, const char *run_id,
                       const char *task_id, int map_index, int try_number, int exit_code)
{
	const struct dag_spec *spec = dm_spec_of(dm, dag_id, NULL);
	const struct dag_task *t = spec ? dag_spec_find_task(spec, task_id) : NULL;
	struct dm_sensors *ss;
	char msg[SENSOR_MSG_MAX];
	size_t slot;

	if (!t || !command_sensor(t) || !(ss = sensors_of(dm)))
		return false;
	if (!ss->loaded)
		load(dm, ss);
	for (slot = 0; slot < ss->n; slot++) {
		const struct sensor_poke_row *row = &ss->w[slot].row;
		if (ss->w[slot].used && row->map_index == map_index &&
		    row->try_number == try_number && !strcmp(row->task_id, task_id) &&
		    !strcmp(row->run_id, run_id) && !strcmp(row->dag_id, dag_id))
			break;
	}
	if (slot == ss->n)
		return false; /* not waiting (cleared, marked): the job's end as any */
	ss->w[slot].in_flight = false;
	if (exit_code != SENSOR_EXIT_NOT_YET || !ss->w[slot].sensor) {
		slot_free(ss, slot); /* met, or an error: the try ends as a job's */
		return false;
	}
	snprintf(msg, sizeof msg, "not yet (the command exited %d)", exit_code);
	poke_done(dm, ss, slot, ss->w[slot].sensor, SENSOR_NOT_YET, msg);
	return true;
}

void dm_sensors_free(struct dag_manager *dm)
{
	struct dm_sensors *ss = dm->sensors;

	if (!ss)
		return;
	dm->sensors = NULL;
	for (size_t i = 0; i < ss->n; i++)
		if (ss->w[i].used) {
			sensor_poke_row_release(&ss->w[i].row);
			dag_sensor_free(ss->w[i].sensor);
		}
	free(ss->w);
	ss->w = NULL;
	ss->n = ss->cap = 0;
	due_table_clear(&ss->due);
	if (ss->in_flight > 0) {
		ss->closing = true; /* the last poke to come back frees it */
		return;
	}
	free(ss);
}
