/* notify_hooks.c: what the DAG manager tells the notifier
 * (server/notifier.h): a TI's try that failed, will retry or succeeded and
 * a run that ended, from each decision written (dm_notify_step()); and the
 * SLA pass (dm_sla_pass()), which records the misses sched/notify_due.h
 * finds in the active runs and notifies each once.
 *
 * The SLA pass runs in the work pass, but only when a run started since
 * the last one or the earliest due time it saw has come; that time goes
 * to the wake-up timer (dm_wake_note()), so a miss is seen when it happens
 * and not at some polling interval.  Owns dm->sla (that time, and the
 * flag a run's start raises).
 */
#include "server/dag_manager/dm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "sched/notify_due.h"
#include "server/notifier.h"

static void emit_ti(struct dag_manager *dm, const struct run_ctx *rc, const struct dag_task *t,
                    const struct dag_ti_row *r, enum notify_event ev, const char *reason)
{
	const struct notify_list *l = t->on[ev];
	char *url;

	if (!l || !l->n)
		return;
	url = notifier_log_url(dm->notifier, r->dag_id, r->run_id, r->task_id, r->map_index,
	                       r->try_number);
	struct notify_payload p = {
	    .event = ev,
	    .dag_id = r->dag_id,
	    .run_id = r->run_id,
	    .task_id = r->task_id,
	    .map_index = r->map_index,
	    .try_number = r->try_number,
	    .state = dag_ti_state_name(r->state),
	    .reason = reason ? reason : r->reason,
	    .log_url = url ? url : "",
	    .logical_date_ms = rc->run.logical_date,
	};
	notifier_emit(dm->notifier, l, &p);
	free(url);
}

void dm_notify_step(struct dag_manager *dm, const struct run_ctx *rc,
                    const struct dag_run_decision *d)
{
	if (!dm->notifier)
		return;
	for (size_t i = 0; i < d->n_changes; i++) {
		const struct dag_ti_change *c = &d->changes[i];
		enum notify_event ev;

		/* a try's end (a rescheduled sensor's too, poked by the server): marks
		 * and clears by hand notify nothing (as Airflow's) */
		if (c->from != DAG_TI_SCHEDULED && c->from != DAG_TI_QUEUED &&
		    c->from != DAG_TI_RUNNING && c->from != DAG_TI_UP_FOR_RESCHEDULE)
			continue;
		if (c->to == DAG_TI_SUCCESS)
			ev = NOTIFY_ON_SUCCESS;
		else if (c->to == DAG_TI_UP_FOR_RETRY)
			ev = NOTIFY_ON_RETRY;
		else if (c->to == DAG_TI_FAILED)
			ev = NOTIFY_ON_FAILURE;
		else
			continue;
		emit_ti(dm, rc, &rc->spec->tasks[rc->ti_task[c->ti]], &rc->rows[rc->ti_row[c->ti]],
		        ev, NULL);
	}
	if (d->run_to == d->run_from)
		return;
	if (d->run_to == DAG_RUN_RUNNING)
		dm->sla.dirty = true;
	if ((d->run_to != DAG_RUN_SUCCESS && d->run_to != DAG_RUN_FAILED) || !rc->spec->notify)
		return;
	enum notify_event ev = d->run_to == DAG_RUN_SUCCESS ? NOTIFY_ON_SUCCESS : NOTIFY_ON_FAILURE;
	if (!rc->spec->notify->given[ev])
		return;
	char *url = notifier_log_url(dm->notifier, rc->run.dag_id, rc->run.run_id, NULL, -1, 0);
	struct notify_payload p = {
	    .event = ev,
	    .run_level = true,
	    .dag_id = rc->run.dag_id,
	    .run_id = rc->run.run_id,
	    .task_id = "",
	    .map_index = -1,
	    .state = dag_run_state_name(d->run_to),
	    .reason = d->reason,
	    .log_url = url ? url : "",
	    .logical_date_ms = rc->run.logical_date,
	};
	notifier_emit(dm->notifier, &rc->spec->notify->on[ev], &p);
	free(url);
}

/* ---- SLAs ---- */

static bool has_sla(const struct dag_spec *s)
{
	for (size_t i = 0; s && i < s->n_tasks; i++)
		if (s->tasks[i].sla.within_s > 0)
			return true;
	return false;
}

static void record_miss(struct dag_manager *dm, const struct run_ctx *rc, size_t ti, int64_t due,
                        int64_t now)
{
	const struct dag_task *t = &rc->spec->tasks[rc->ti_task[ti]];
	const struct dag_ti_row *r = &rc->rows[rc->ti_row[ti]];
	const struct notify_list *l = t->on[NOTIFY_ON_SLA_MISS];
	struct notify_store *ns = notifier_store(dm->notifier);
	char reason[160];
	struct sla_miss_row m = {.dag_id = r->dag_id,
	                         .run_id = r->run_id,
	                         .task_id = r->task_id,
	                         .map_index = r->map_index,
	                         .due_at = due,
	                         .recorded_at = now,
	                         .state = (char *)dag_ti_state_name(r->state),
	                         .logical_date = rc->run.logical_date,
	                         .description = reason};
	struct weir_error err = {0};
	bool added = false;

	snprintf(reason, sizeof reason, "not succeeded within %lld s of the %s",
	         (long long)t->sla.within_s,
	         t->sla.from == SLA_FROM_RUN_START ? "run's start" : "logical date");
	if (sla_store_add(ns, &m, &added, &err) < 0) {
		log_error("DAG %s run %s task %s: recording an SLA miss: %s", r->dag_id, r->run_id,
		          r->task_id, err.msg);
		return;
	}
	if (!added)
		return;
	log_warn("DAG %s run %s task %s: SLA missed (%s)", r->dag_id, r->run_id, r->task_id,
	         reason);
	emit_ti(dm, rc, t, r, NOTIFY_ON_SLA_MISS, reason);
	if (!l || !l->n)
		return; /* recorded; nobody to tell */
	for (size_t i = 0; i < l->n; i++)
		m.email_sent = m.email_sent || l->v[i].kind == NOTIFY_EMAIL;
	if (sla_store_set_notified(ns, &m, &err) < 0)
		log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
}

/* One run: its TIs with an SLA, the misses on record, the decision. */
static int64_t sla_run(struct dag_manager *dm, struct run_ctx *rc, int64_t now)
{
	struct sla_query q = {.dag_id = rc->run.dag_id, .run_id = rc->run.run_id, .limit = 100000};
	struct sla_miss_row *done = NULL;
	size_t n_done = 0, n_missed = 0;
	struct sla_item *items = calloc(rc->n_tis + 1, sizeof *items);
	size_t *missed = calloc(rc->n_tis + 1, sizeof *missed);
	int64_t next = 0;

	if (!items || !missed ||
	    sla_store_list(notifier_store(dm->notifier), &q, &done, &n_done, NULL, NULL) < 0)
		goto out;
	for (size_t i = 0; i < rc->n_tis; i++) {
		const struct dag_task *t = &rc->spec->tasks[rc->ti_task[i]];
		const struct dag_ti_row *r = &rc->rows[rc->ti_row[i]];
		items[i].due_ms = sla_due_ms(&t->sla, rc->run.logical_date, rc->run.start_date);
		items[i].state = r->state;
		for (size_t k = 0; items[i].due_ms && k < n_done; k++)
			if (!strcmp(done[k].task_id, r->task_id) &&
			    done[k].map_index == r->map_index)
				items[i].recorded = true;
	}
	sla_decide(items, rc->n_tis, now, missed, &n_missed, &next);
	for (size_t k = 0; k < n_missed; k++)
		record_miss(dm, rc, missed[k], items[missed[k]].due_ms, now);
out:
	sla_miss_rows_free(done, n_done);
	free(items);
	free(missed);
	return next;
}

void dm_sla_pass(struct dag_manager *dm)
{
	int64_t now = clock_now_ms(), next = 0;
	struct dag_run_row *runs = NULL;
	size_t n = 0;
	struct weir_error err = {0};

	if (!dm->notifier)
		return;
	if (!dm->sla.dirty && (dm->sla.next_ms == 0 || now < dm->sla.next_ms)) {
		dm_wake_note(dm, dm->sla.next_ms);
		return;
	}
	dm->sla.dirty = false;
	bool any = false;
	for (struct dag_entry *e = dm->folder.entries; e && !any; e = e->next)
		any = e->present && has_sla(e->spec);
	if (!any || dag_store_runs_active(dm->ds, &runs, &n, &err) < 0) {
		if (any)
			log_error("SLA pass: %s", err.msg);
		dm->sla.next_ms = 0;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct weir_error e2 = {0};
		const struct dag_spec *spec = dm_spec_of(dm, runs[i].dag_id, NULL);
		struct run_ctx *rc;
		int64_t due;
		if (!has_sla(spec))
			continue;
		if (!(rc = dm_run_get(dm, runs[i].dag_id, runs[i].run_id, &e2))) {
			log_warn("SLA pass: DAG %s run %s: %s", runs[i].dag_id, runs[i].run_id,
			         e2.msg);
			continue;
		}
		due = sla_run(dm, rc, now);
		if (due > 0 && (next == 0 || due < next))
			next = due;
	}
	dag_run_rows_free(runs, n);
	dm->sla.next_ms = next;
	dm_wake_note(dm, next);
}
