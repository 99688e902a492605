/* runs.c: where a DAG's runs come from and when they start
 * (dm_check_run_id(), dm_create_run() of dm_internal.h): a
 * trigger's or a schedule's new run with its TIs, the scheduled runs that
 * are due (catchup included), the queue of runs under max_active_runs, and
 * the runs whose retries are due, the runs that ran past their DAG's
 * dagrun_timeout (dm_timeout_pass()).
 *
 * Owns dm->retries (whether the store holds no due retry) and
 * dm->timeouts (the nearest deadline, and the flag that asks to look
 * again); an entry's
 * latest scheduled date is cached in the entry (folder.c), everything
 * else is read from the store.
 */
#include "server/dag_manager/dm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "model/cron.h"
#include "sched/continuous_due.h"
#include "store/dag_store.h"

/* At most this many due runs of a DAG are made in one round; the next
 * round of the work pass makes more. */
#define MAX_DUE_PER_PASS 64

/* ---- the queue of runs ---- */

void dm_start_runs(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct dag_run_row *rows = NULL;
	size_t n = 0, i = 0;
	bool any;

	/* most passes find no run waiting to start: one indexed look, not
	 * every active run read */
	if (dag_store_run_queued_any(dm->ds, &any, &err) == 0 && !any)
		return;
	if (dag_store_runs_active(dm->ds, &rows, &n, &err) < 0) {
		log_error("DAG runs: %s", err.msg);
		return;
	}
	while (i < n) {
		size_t j = i, n_queued = 0, startable;
		int running = 0;
		struct dag_entry *e = dm_entry_by_id(dm, rows[i].dag_id);
		struct dag_row dr = {0};
		bool paused = false;

		while (j < n && !strcmp(rows[j].dag_id, rows[i].dag_id)) {
			if (rows[j].state == DAG_RUN_RUNNING)
				running++;
			else
				n_queued++;
			j++;
		}
		/* the DAG row carries the whole spec: read it only when a run waits */
		if (n_queued > 0 && dag_store_dag_get(dm->ds, rows[i].dag_id, &dr, NULL) == 0) {
			paused = dr.paused;
			dag_row_release(&dr);
		}
		if (e && !paused && n_queued > 0) {
			startable = dag_runs_startable(e->spec->max_active_runs, running, n_queued);
			for (size_t k = i; k < j && startable > 0; k++) {
				struct dag_event ev = {.kind = DAG_EV_START};
				if (rows[k].state != DAG_RUN_QUEUED)
					continue;
				startable--;
				if (dm_run_event(dm, rows[k].dag_id, rows[k].run_id, &ev, &err) < 0)
					log_error("DAG %s run %s: cannot start: %s", rows[k].dag_id,
					          rows[k].run_id, err.msg);
			}
		}
		i = j;
	}
	dag_run_rows_free(rows, n);
}

/* ---- schedules and retries ---- */

static int create_run(struct dag_manager *dm, struct dag_entry *e, const char *run_id,
                      const char *run_type, int64_t logical, struct schedule_interval iv,
                      json_t *conf, struct dag_run_row *out, struct weir_error *err);

/* A DAG on @continuous: its next run as soon as none is active (queued or
 * running, of any type: two indexed counts), its data interval from the
 * latest scheduled run's end to now (sched/continuous_due.h's
 * schedule_continuous_due decides).  Every work pass asks, a run's end
 * included; no read grows with the DAG's history. */
static void continuous_pass(struct dag_manager *dm, struct dag_entry *e, int64_t now)
{
	const struct dag_spec *s = e->spec;
	/* the runs of each active state (queries: no run's state is set here) */
	struct dag_run_query q_queued = {
	    .dag_id = s->dag_id, .by_state = true, .state = DAG_RUN_QUEUED};
	struct dag_run_query q_running = {
	    .dag_id = s->dag_id, .by_state = true, .state = DAG_RUN_RUNNING};
	struct schedule_interval iv, last_iv;
	struct weir_error err = {0};
	int64_t last, last_end = CRON_NEVER, queued = 0, running = 0;
	char ts[48], id[80];

	if (dag_store_run_count(dm->ds, &q_queued, &queued, &err) == 0)
		dag_store_run_count(dm->ds, &q_running, &running, &err);
	if (err.msg[0]) {
		log_error("DAG %s: @continuous: %s", s->dag_id, err.msg);
		return;
	}
	if (dm_last_scheduled_interval(dm, e, &last, &last_iv) == 0)
		last_end = last_iv.end_ms; /* (deleted: its logical date) */
	if (!schedule_continuous_due(s->start_date_ms, s->end_date_ms, last_end,
	                             queued + running > 0, now, &iv))
		return;
	snprintf(id, sizeof id, "scheduled__%s", clock_format_airflow(iv.start_ms, ts, sizeof ts));
	if (create_run(dm, e, id, "scheduled", iv.start_ms, iv, NULL, NULL, &err) < 0 &&
	    err.kind != WEIR_E_CONFLICT)
		log_error("DAG %s: scheduled run %s: %s", s->dag_id, id, err.msg);
	e->last_sched_ms = iv.start_ms;
	e->last_sched_known = true;
}

void dm_schedule_pass(struct dag_manager *dm)
{
	int64_t now = clock_now_ms();

	for (struct dag_entry *e = dm->folder.entries; e; e = e->next) {
		const struct dag_spec *s = e->spec;
		struct dag_row dr = {0};
		bool paused = true;
		int64_t due[MAX_DUE_PER_PASS];
		size_t n;

		if (!e->present || !s || s->schedule.kind == CRON_NONE ||
		    dm_entry_by_id(dm, s->dag_id) != e)
			continue;
		if (dag_store_dag_get(dm->ds, s->dag_id, &dr, NULL) == 0) {
			paused = dr.paused;
			dag_row_release(&dr);
		}
		if (paused)
			continue;
		if (s->schedule.kind == CRON_CONTINUOUS) {
			continuous_pass(dm, e, now);
			continue;
		}
		if (s->schedule.kind == CRON_RUNS && !dm_timetable_list_current(dm, e))
			continue; /* its file is parsed again (timetable.c) */
		n = schedule_due_runs(&s->schedule, s->start_date_ms, s->end_date_ms, s->catchup,
		                      dm_last_scheduled(dm, e), now, due, MAX_DUE_PER_PASS);
		for (size_t i = 0; i < n; i++) {
			struct weir_error err = {0};
			char ts[48], id[80];
			snprintf(id, sizeof id, "scheduled__%s",
			         clock_format_airflow(due[i], ts, sizeof ts));
			if (dm_create_run(dm, e, id, "scheduled", due[i], NULL, NULL, &err) < 0 &&
			    err.kind != WEIR_E_CONFLICT)
				log_error("DAG %s: scheduled run %s: %s", s->dag_id, id, err.msg);
			e->last_sched_ms = due[i];
			e->last_sched_known = true;
		}
		if (n == MAX_DUE_PER_PASS)
			dm->turn.pass_again = true;
	}
}

void dm_retry_pass(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct dag_ti_row *rows = NULL;
	size_t n = 0;
	int64_t now = clock_now_ms();

	if (dm->retries.none)
		return;
	if (dag_store_tis_in_state(dm->ds, DAG_TI_UP_FOR_RETRY, &rows, &n, &err) < 0) {
		log_error("DAG retries: %s", err.msg);
		return;
	}
	dm->retries.none = n == 0;
	for (size_t i = 0; i < n; i++) {
		struct dag_event ev = {.kind = DAG_EV_TIMER};
		bool seen = false;
		if (rows[i].next_retry_at > now) {
			dm_wake_note(dm, rows[i].next_retry_at);
			continue;
		}
		for (size_t k = 0; k < i && !seen; k++)
			seen = rows[k].next_retry_at <= now &&
			       !strcmp(rows[k].dag_id, rows[i].dag_id) &&
			       !strcmp(rows[k].run_id, rows[i].run_id);
		if (seen)
			continue;
		if (dm_run_event(dm, rows[i].dag_id, rows[i].run_id, &ev, &err) < 0)
			log_error("DAG %s run %s: %s", rows[i].dag_id, rows[i].run_id, err.msg);
	}
	dag_ti_rows_free(rows, n);
}

/* ---- dagrun_timeout ---- */

static bool any_timeout(struct dag_manager *dm)
{
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next)
		if (e->present && e->spec && e->spec->dagrun_timeout_s > 0)
			return true;
	return false;
}

void dm_timeout_pass(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct dag_run_row *rows = NULL;
	size_t n = 0;
	int64_t now = clock_now_ms(), next = 0;

	if (!dm->timeouts.dirty && (dm->timeouts.next_ms == 0 || now < dm->timeouts.next_ms)) {
		dm_wake_note(dm, dm->timeouts.next_ms);
		return;
	}
	dm->timeouts.dirty = false;
	dm->timeouts.next_ms = 0;
	if (!any_timeout(dm))
		return;
	if (dag_store_runs_active(dm->ds, &rows, &n, &err) < 0) {
		log_error("DAG run timeouts: %s", err.msg);
		dm->timeouts.dirty = true; /* looked at again at the next pass */
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dag_spec *spec = dm_spec_of(dm, rows[i].dag_id, NULL);
		int64_t at;
		if (!spec)
			continue; /* its DAG's file is missing: it waits for it (recovery.c) */
		at = dag_run_timeout_at(rows[i].state, rows[i].start_date, spec->dagrun_timeout_s);
		if (at == 0)
			continue;
		if (at > now) {
			if (next == 0 || at < next)
				next = at;
			continue;
		}
		struct dag_event ev = {.kind = DAG_EV_TIMED_OUT};
		log_info("DAG %s run %s: ran longer than its dagrun_timeout (%llds)",
		         rows[i].dag_id, rows[i].run_id, (long long)spec->dagrun_timeout_s);
		if (dm_run_event(dm, rows[i].dag_id, rows[i].run_id, &ev, &err) < 0)
			log_error("DAG %s run %s: %s", rows[i].dag_id, rows[i].run_id, err.msg);
	}
	dag_run_rows_free(rows, n);
	dm->timeouts.next_ms = next;
	dm_wake_note(dm, next);
}

/* ---- creating runs ---- */

int dm_check_run_id(const char *run_id, struct weir_error *err)
{
	size_t n = strlen(run_id);

	if (n == 0 || n > 250)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "dag_run_id: expected 1 to 250 characters");
	for (const char *c = run_id; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "dag_run_id: control characters are not allowed");
	return 0;
}

/* Creates a queued run with its TIs (foreach fanned out now, from the
 * run's params).  Templates are checked against the run's params.  *out
 * (may be NULL) gets the run row. */
int dm_create_run(struct dag_manager *dm, struct dag_entry *e, const char *run_id,
                  const char *run_type, int64_t logical, json_t *conf, struct dag_run_row *out,
                  struct weir_error *err)
{
	const struct cron *c = &e->spec->schedule;
	struct schedule_interval iv = schedule_data_interval(c, logical);

	/* a trigger's; a backfill's runs (`weir dags backfill`: backfill__DATE,
	 * made through the trigger) keep the scheduled runs' intervals */
	if (!strcmp(run_type, "manual") && strncmp(run_id, "backfill__", 10))
		iv = e->spec->manual_ending
		         ? schedule_manual_interval_ending(c, logical, e->spec->manual_before_ms)
		         : schedule_manual_interval(c, logical);

	return create_run(dm, e, run_id, run_type, logical, iv, conf, out, err);
}

/* dm_create_run's work, the run's data interval given. */
static int create_run(struct dag_manager *dm, struct dag_entry *e, const char *run_id,
                      const char *run_type, int64_t logical, struct schedule_interval iv,
                      json_t *conf, struct dag_run_row *out, struct weir_error *err)
{
	const struct dag_spec *spec = e->spec;
	json_t *params = NULL, *c = conf ? json_incref(conf) : json_object();
	char *conf_text = NULL;
	struct dag_run_row row = {0};
	int rc = -1;

	params = dag_spec_run_params(spec, c, err);
	if (!params || dag_spec_check_run_params(spec, params, err) < 0)
		goto out;
	/* a foreach over a param that a conf broke is the trigger's error */
	for (size_t i = 0; i < spec->n_tasks; i++) {
		const struct dag_task *t = &spec->tasks[i];
		json_t *items;
		if (!t->foreach_list && !t->foreach_param)
			continue;
		items = dag_task_foreach_items(spec, t, params, err);
		if (!items) {
			weir_error_prefix(err, "conf: task %s", t->task_id);
			err->kind = WEIR_E_INVALID;
			goto out;
		}
		json_decref(items);
	}
	conf_text = json_dumps(c, JSON_COMPACT);
	row.dag_id = spec->dag_id;
	row.run_id = (char *)run_id;
	dm_run_set_state(&row, DAG_RUN_QUEUED); /* a new row: its first state */
	dm_set_name(row.run_type, run_type);
	row.logical_date = logical;
	row.data_interval_start = iv.start_ms;
	row.data_interval_end = iv.end_ms;
	row.conf = conf_text ? conf_text : "{}";
	row.reason = "";
	row.queued_at = clock_now_ms();
	if (dag_store_run_insert(dm->ds, &row, &row.id, err) < 0)
		goto out;
	for (size_t i = 0; i < spec->n_tasks; i++)
		if (dm_insert_task_tis(dm, spec, run_id, &spec->tasks[i], params, err) < 0) {
			struct weir_error e2 = {0};
			dag_store_run_delete(dm->ds, spec->dag_id, run_id, &e2);
			goto out;
		}
	log_info("DAG %s run %s: queued (%s)", spec->dag_id, run_id, run_type);
	if (out && dag_store_run_get(dm->ds, spec->dag_id, run_id, out, err) < 0)
		goto out;
	dm->turn.pass_again = true;
	rc = 0;
out:
	free(conf_text);
	json_decref(params);
	json_decref(c);
	return rc;
}
