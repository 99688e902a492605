/* ops.c: the DAG manager's face to the API (dag_manager.h,
 * dm_internal.h): the dag_api_ops the Airflow routes call for one DAG, run
 * or task instance and for import errors (the lists: list_ops.c) (triggers, pause, marks, clears,
 * log locations).  Reads come from the store and the manager's DAG entries and are handed over
 * as typed rows (api/dag_rows.h), which the API renders; every change goes through the run
 * decisions of the DAG manager in one turn.
 */
#include "server/dag_manager/ops.h"
#include "server/dag_manager.h"
#include "server/dag_manager/dm_internal.h"
#include "server/notifier.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dag_views.h"
#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/strvec.h"
#include "model/cron.h"
#include "model/dag_spec.h"
#include "sched/access.h"
#include "sched/dag_states.h"
#include "store/dag_store.h"

/* ---- what the views need besides the rows ---- */

int64_t dm_next_dagrun(struct dag_manager *dm, const struct dag_row *row,
                       const struct dag_spec **spec)
{
	struct dag_entry *e = dm_entry_by_id(dm, row->dag_id);
	const struct dag_spec *s = e ? e->spec : NULL;
	int64_t due[1];

	*spec = s;
	if (!s || s->schedule.kind == CRON_NONE || row->paused || !row->active)
		return CRON_NEVER;
	if (schedule_due_runs(&s->schedule, s->start_date_ms, s->end_date_ms, s->catchup,
	                      dm_last_scheduled(dm, e), INT64_MAX / 2, due, 1) != 1)
		return CRON_NEVER;
	return due[0];
}

void dm_dag_view_fill(struct dag_manager *dm, struct dag_view *d)
{
	d->next_ms = dm_next_dagrun(dm, &d->row, &d->spec);
}

json_t *dm_run_json(const struct dag_run_row *r)
{
	return dag_view_run(r);
}

void dm_ti_job_view(struct dag_manager *dm, const struct dag_ti_row *r, struct job_row *job,
                    struct dag_job_view *v)
{
	struct dag_entry *e = dm_entry_by_id(dm, r->dag_id);
	const struct dag_task *t = e && e->spec ? dag_spec_find_task(e->spec, r->task_id) : NULL;

	if (t) {
		const char *module;
		size_t module_len;
		dag_task_class(t, &v->task_class, &module, &module_len);
	}
	if (r->job_id <= 0)
		return;
	if (!dag_view_ti_needs_job(r)) {
		v->known = true;
		return;
	}
	if (store_job_glance(dm->store, r->job_id, job, NULL) == 0) {
		v->known = true;
		v->running = dm_job_runs(job);
		v->started_at = job->started_at;
		v->reason = job->reason;
	}
}

json_t *dm_ti_json(struct dag_manager *dm, const struct dag_ti_row *r,
                   const struct dag_run_row *run)
{
	struct job_row job = {0};
	struct dag_job_view v = {0};
	json_t *o;

	dm_ti_job_view(dm, r, &job, &v);
	o = dag_view_ti(r, run, &v);
	job_row_release(&job);
	if (o)
		json_object_set_new(o, "sla_miss",
		                    notifier_ti_sla_miss(dm->notifier, r->dag_id, r->run_id,
		                                         r->task_id, r->map_index));
	return o;
}

int dm_ti_view_fill(struct dag_manager *dm, struct dag_ti_view *t, const struct dag_job_view *job,
                    bool no_sla_miss, struct weir_error *err)
{
	const struct dag_ti_row *r = &t->row;

	if (dag_ti_view_set_job(t, job) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (!no_sla_miss)
		t->sla_miss = notifier_ti_sla_miss(dm->notifier, r->dag_id, r->run_id, r->task_id,
		                                   r->map_index);
	return 0;
}

/* ---- API ops ---- */

static int op_get_dag(void *ctx, const char *dag_id, struct dag_view *out, struct weir_error *err)
{
	struct dag_manager *dm = ctx;

	if (dag_store_dag_get(dm->ds, dag_id, &out->row, err) < 0) {
		dag_view_release(out);
		return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: no such DAG", dag_id);
	}
	dm_dag_view_fill(dm, out);
	return 0;
}

static int op_patch_dag(void *ctx, const char *dag_id, json_t *body, struct dag_view *out,
                        struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	json_t *p = json_object_get(body, "is_paused");
	struct dag_row row = {0};
	int rc = -1;

	if (!json_is_boolean(p))
		return weir_error_set(err, WEIR_E_INVALID, "is_paused: expected true or false");
	dm_touch(dm);
	if (dag_store_dag_get(dm->ds, dag_id, &row, err) < 0) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: no such DAG", dag_id);
		goto out;
	}
	if (dag_store_dag_set_paused(dm->ds, dag_id, json_is_true(p), err) < 0)
		goto out;
	if (dag_store_dag_get(dm->ds, dag_id, &out->row, err) == 0) {
		dm_dag_view_fill(dm, out);
		rc = 0;
	} else {
		dag_view_release(out);
	}
	log_info("DAG %s %s", dag_id, json_is_true(p) ? "paused" : "unpaused");
out:
	dag_row_release(&row);
	return rc;
}

/* The access list route_dispatch() checks a DAG's paths against. */
static const struct dag_access *op_dag_access(void *ctx, const char *dag_id)
{
	struct dag_entry *e = dm_entry_by_id(ctx, dag_id);

	return e && e->spec && e->spec->access.set ? &e->spec->access : NULL;
}

bool dm_dag_allows(struct dag_manager *dm, const char *dag_id, const struct dag_reader *rd)
{
	return !rd || access_dag_allowed(op_dag_access(dm, dag_id), rd->user, rd->role, rd->need);
}

bool dm_file_allows(struct dag_manager *dm, const char *file, const struct dag_reader *rd,
                    const char **denied)
{
	if (!rd || !file)
		return true;
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next) {
		if (!e->spec || !e->file || strcmp(e->file, file) || !e->spec->access.set ||
		    access_dag_allowed(&e->spec->access, rd->user, rd->role, rd->need))
			continue;
		if (denied)
			*denied = e->spec->dag_id;
		return false;
	}
	return true;
}

int dm_import_error_list(struct dag_manager *dm, const struct dag_reader *rd,
                         struct dag_import_error_row **rows, size_t *n, struct weir_error *err)
{
	size_t kept = 0;

	if (dag_store_import_error_list(dm->ds, rows, n, err) < 0)
		return -1;
	for (size_t i = 0; i < *n; i++) {
		if (dm_file_allows(dm, (*rows)[i].file, rd, NULL))
			(*rows)[kept++] = (*rows)[i];
		else
			dag_import_error_row_release(&(*rows)[i]);
	}
	*n = kept;
	return 0;
}

/* The DAGs whose access lists refuse `rd` (the event log leaves their
 * records out). */
static int op_denied_dags(void *ctx, const struct dag_reader *rd, struct strvec *out,
                          struct weir_error *err)
{
	struct dag_manager *dm = ctx;

	for (struct dag_entry *e = dm->folder.entries; e; e = e->next)
		if (e->spec && e->spec->access.set &&
		    !access_dag_allowed(&e->spec->access, rd->user, rd->role, rd->need) &&
		    strvec_push(out, e->spec->dag_id) < 0)
			return weir_error_oom(err);
	return 0;
}

int dm_dag_check_exists(struct dag_manager *dm, const char *dag_id, struct weir_error *err)
{
	bool exists = false;

	if (dag_store_dag_exists(dm->ds, dag_id, &exists, err) < 0)
		return -1;
	if (!exists)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: no such DAG", dag_id);
	return 0;
}

int dm_run_row(struct dag_manager *dm, const char *dag_id, const char *run_id,
               struct dag_run_row *row, struct weir_error *err)
{
	struct weir_error e = {0};

	if (dag_store_run_get(dm->ds, dag_id, run_id, row, &e) == 0)
		return 0;
	if (e.kind == WEIR_E_NOT_FOUND)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s has no run %s", dag_id,
		                      run_id);
	if (err)
		*err = e;
	return -1;
}

static int op_trigger_run(void *ctx, const char *dag_id, json_t *body, struct dag_run_row *out,
                          struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_entry *e = dm_entry_by_id(dm, dag_id);
	json_t *conf = json_object_get(body, "conf"), *rid = json_object_get(body, "dag_run_id"),
	       *ld = json_object_get(body, "logical_date");
	int64_t logical = clock_now_ms();
	int rc = -1;
	char ts[48];
	char *run_id = NULL;
	struct dag_run_row row = {0};

	if (!e || !e->present)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: no such DAG", dag_id);
	if (body && !json_is_object(body))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "expected a JSON object {conf, dag_run_id, "
		                      "logical_date}");
	if (conf && !json_is_null(conf) && !json_is_object(conf))
		return weir_error_set(err, WEIR_E_INVALID, "conf: expected a JSON object");
	if (ld && !json_is_null(ld)) {
		if (!json_is_string(ld) ||
		    dm_parse_date(json_string_value(ld), "logical_date", &logical, err) < 0) {
			if (!json_is_string(ld))
				weir_error_set(err, WEIR_E_INVALID,
				               "logical_date: expected a date like "
				               "2024-01-31T06:00:00+00:00");
			err->kind = WEIR_E_INVALID;
			return -1;
		}
	} else {
		/* now, as Airflow: later than the last such trigger's, so that
		 * triggers in one millisecond do not collide */
		if (logical <= dm->last_trigger_now_ms)
			logical = dm->last_trigger_now_ms + 1;
		dm->last_trigger_now_ms = logical;
	}
	if (rid && !json_is_null(rid)) {
		if (!json_is_string(rid))
			return weir_error_set(err, WEIR_E_INVALID, "dag_run_id: expected a string");
		run_id = dm_strdup_or_empty(json_string_value(rid));
	} else if (asprintf(&run_id, "manual__%s", clock_format_airflow(logical, ts, sizeof ts)) <
	           0) {
		run_id = NULL;
	}
	if (!run_id)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (dm_check_run_id(run_id, err) < 0)
		goto out;
	dm_touch(dm);
	if (dm_create_run(dm, e, run_id, "manual", logical, json_is_object(conf) ? conf : NULL,
	                  &row, err) == 0) {
		dm_work_pass(dm);
		dag_run_row_release(&row);
		memset(&row, 0, sizeof row);
		rc = dm_run_row(dm, dag_id, run_id, out, err);
	} else if (err->kind == WEIR_E_CONFLICT) {
		weir_error_set(err, WEIR_E_CONFLICT,
		               "DAG %s already has a run with dag_run_id %s or logical_date %s",
		               dag_id, run_id, clock_format_airflow(logical, ts, sizeof ts));
	}
out:
	dag_run_row_release(&row);
	free(run_id);
	return rc;
}

static int op_get_run(void *ctx, const char *dag_id, const char *run_id, struct dag_run_row *out,
                      struct weir_error *err)
{
	struct dag_manager *dm = ctx;

	if (dm_dag_check_exists(dm, dag_id, err) < 0)
		return -1;
	return dm_run_row(dm, dag_id, run_id, out, err);
}

static int op_patch_run(void *ctx, const char *dag_id, const char *run_id, json_t *body,
                        struct dag_run_row *out, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	enum dag_run_state state;
	struct dag_event ev = {0};
	struct dag_run_row row = {0};
	int rc = -1;

	if (dag_run_state_from_name(json_string_value(json_object_get(body, "state")), &state) <
	        0 ||
	    state == DAG_RUN_RUNNING)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "state: expected success, failed or queued");
	if (!dm_spec_of(dm, dag_id, err))
		return -1;
	if (dm_run_row(dm, dag_id, run_id, &row, err) < 0)
		return -1;
	dag_run_row_release(&row);
	if (state == DAG_RUN_QUEUED) {
		ev.kind = DAG_EV_CLEAR; /* Airflow: a run set to queued is cleared */
	} else {
		ev.kind = DAG_EV_MARK_RUN;
		ev.mark_run = state;
	}
	dm_touch(dm);
	if (dm_run_event(dm, dag_id, run_id, &ev, err) == 0) {
		dm_work_pass(dm);
		rc = dm_run_row(dm, dag_id, run_id, out, err);
	}
	return rc;
}

/* Notes are a person's words, not a change of state: written at once, no
 * run decision, no work pass. */
static int op_set_run_note(void *ctx, const char *dag_id, const char *run_id, const char *text,
                           const char *user, struct dag_run_row *out, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_row row = {0};

	if (dm_dag_check_exists(dm, dag_id, err) < 0 ||
	    dm_run_row(dm, dag_id, run_id, &row, err) < 0)
		return -1;
	dag_run_row_release(&row);
	if (dag_store_run_set_note(dm->ds, dag_id, run_id, text, user, clock_now_ms(), err) < 0)
		return -1;
	return dm_run_row(dm, dag_id, run_id, out, err);
}

static int op_get_ti(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                     int map_index, struct dag_ti_view *out, struct weir_error *err);

static int op_set_ti_note(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                          int map_index, const char *text, const char *user,
                          struct dag_ti_view *out, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_row run = {0};
	struct dag_ti_row ti = {0};

	if (dm_ti_lookup(dm, dag_id, run_id, task_id, map_index, &run, &ti, err) < 0)
		return -1;
	dag_run_row_release(&run);
	dag_ti_row_release(&ti);
	if (dag_store_ti_set_note(dm->ds, dag_id, run_id, task_id, map_index, text, user,
	                          clock_now_ms(), err) < 0)
		return -1;
	return op_get_ti(ctx, dag_id, run_id, task_id, map_index, out, err);
}

int dm_ti_lookup(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const char *task_id, int map_index, struct dag_run_row *run, struct dag_ti_row *ti,
                 struct weir_error *err)
{
	if (dm_dag_check_exists(dm, dag_id, err) < 0)
		return -1;
	if (dm_run_row(dm, dag_id, run_id, run, err) < 0)
		return -1;
	if (dag_store_ti_get(dm->ds, dag_id, run_id, task_id, map_index, ti, NULL) < 0) {
		dag_run_row_release(run);
		if (map_index < 0)
			return weir_error_set(err, WEIR_E_NOT_FOUND,
			                      "run %s of DAG %s has no task %s", run_id, dag_id,
			                      task_id);
		return weir_error_set(err, WEIR_E_NOT_FOUND,
		                      "run %s of DAG %s has no instance %d of task %s", run_id,
		                      dag_id, map_index, task_id);
	}
	return 0;
}

static int op_get_ti(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                     int map_index, struct dag_ti_view *out, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_row run = {0};
	struct job_row job = {0};
	struct dag_job_view v = {0};
	int rc;

	if (dm_ti_lookup(dm, dag_id, run_id, task_id, map_index, &run, &out->row, err) < 0)
		return -1;
	out->logical_date = run.logical_date;
	dag_run_row_release(&run);
	dm_ti_job_view(dm, &out->row, &job, &v);
	rc = dm_ti_view_fill(dm, out, &v, false, err);
	job_row_release(&job);
	if (rc < 0)
		dag_ti_view_release(out);
	return rc;
}

/* The log of a try that never got a job, when it has one; NULL otherwise. */
static char *start_log(struct dag_manager *dm, const struct dag_try_row *t)
{
	struct dag_run_row run = {0};
	char *p = NULL;

	if (dag_store_run_get(dm->ds, t->dag_id, t->run_id, &run, NULL) == 0)
		p = dm_start_log_path(dm, run.id, t->task_id, t->map_index, t->try_number);
	dag_run_row_release(&run);
	if (p && !fs_exists(p)) {
		free(p);
		p = NULL;
	}
	return p;
}

static int op_ti_log_locate(void *ctx, const char *dag_id, const char *run_id, const char *task_id,
                            int map_index, int try_number, char **path, bool *ended,
                            struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_try_row t = {0};
	struct job_row job = {0};
	struct job_spec *spec = NULL;
	const char *role = "task";
	int rc = -1;

	if (dag_store_try_get(dm->ds, dag_id, run_id, task_id, map_index, try_number, &t, NULL) <
	        0 ||
	    (t.job_id <= 0 && !(*path = start_log(dm, &t)))) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s run %s task %s has no try %d", dag_id,
		               run_id, task_id, try_number);
		goto out;
	}
	if (t.job_id <= 0) {
		*ended = true; /* a try that could not start: its reason is its log */
		rc = 0;
		goto out;
	}
	if (store_job_get(dm->store, t.job_id, &job, err) < 0)
		goto out;
	{
		json_t *sj = json_loads(job.spec_json, 0, NULL);
		if (sj)
			spec = job_spec_from_json(sj, NULL);
		json_decref(sj);
		if (spec && !job_spec_find_role(spec, "task")) {
			const struct role_spec *rs = job_spec_deciding_role(spec);
			if (rs)
				role = rs->name;
		}
	}
	if (job_manager_api_ops()->log_locate(dm->jm, t.job_id, role, 0, 0, path, ended, err) < 0)
		goto out;
	/* the try has ended when its TI moved on, even if the job winds down */
	if (!dag_ti_state_is_active(t.state))
		*ended = *ended || t.end_date > 0;
	rc = 0;
out:
	job_spec_destroy(spec);
	job_row_release(&job);
	dag_try_row_release(&t);
	return rc;
}

/* Clears the chosen TIs of one run; appends the references of what it
 * clears (or would clear) to `out`. */
int dm_clear_run(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const struct strvec *task_ids, bool downstream, bool only_failed, bool dry_run,
                 struct dag_ti_refs *out, struct weir_error *err)
{
	struct run_ctx *rc;
	size_t *tasks = NULL, nt = 0;
	bool *chosen = NULL;
	int r = -1;

	rc = dm_run_get(dm, dag_id, run_id, err);
	if (!rc)
		return -1;
	tasks = calloc(rc->spec->n_tasks + 1, sizeof *tasks);
	chosen = calloc(rc->spec->n_tasks + 1, sizeof *chosen);
	if (!tasks || !chosen) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < task_ids->n; i++) {
		long k = dag_spec_task_index(rc->spec, task_ids->v[i]);
		if (k < 0) {
			weir_error_set(err, WEIR_E_INVALID, "task_ids: DAG %s has no task %s",
			               dag_id, task_ids->v[i]);
			goto out;
		}
		if (!chosen[k])
			tasks[nt++] = (size_t)k;
		chosen[k] = true;
	}
	/* what the clear touches, for the answer (the decision does it) */
	{
		bool *in = calloc(rc->spec->n_tasks + 1, sizeof *in);
		if (!in) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < rc->spec->n_tasks; i++)
			in[i] = nt == 0 || chosen[i];
		/* the tasks below with `downstream`, and the chosen tasks' setups
		 * and teardowns, as Airflow's clear adds them */
		if (nt > 0 && dag_clear_tasks(rc->spec, in, downstream) < 0) {
			free(in);
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			goto out;
		}
		/* the decision clears exactly these */
		if (nt > 0) {
			nt = 0;
			for (size_t i = 0; i < rc->spec->n_tasks; i++)
				if (in[i])
					tasks[nt++] = i;
			downstream = false;
		}
		for (size_t i = 0; i < rc->n_tis; i++) {
			enum dag_ti_state s = rc->book.tis[i].state;
			if (!in[rc->ti_task[i]])
				continue;
			if (only_failed && !dag_ti_state_is_failure(s))
				continue;
			if (dag_ti_refs_add(out, &rc->rows[rc->ti_row[i]], rc->run.logical_date) <
			    0) {
				free(in);
				weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
				goto out;
			}
		}
		free(in);
	}
	if (!dry_run) {
		struct dag_event ev = {.kind = DAG_EV_CLEAR,
		                       .tasks = tasks,
		                       .n_tasks = nt,
		                       .downstream = downstream,
		                       .only_failed = only_failed};
		if (dm_run_step(dm, rc, &ev, err) < 0)
			goto out;
	}
	r = 0;
out:
	free(tasks);
	free(chosen);
	return r;
}

static int op_clear_tis(void *ctx, const char *dag_id, json_t *body, struct dag_ti_refs *out,
                        struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	json_t *rid = json_object_get(body, "dag_run_id"), *ids = json_object_get(body, "task_ids");
	json_t *v;
	int rc = -1;
	struct strvec task_ids = STRVEC_INIT;
	bool downstream = json_is_true(json_object_get(body, "include_downstream"));
	/* Airflow's "Recursive": the ExternalTaskMarkers cleared clear their tasks */
	bool recursive = json_is_true(json_object_get(body, "include_subdags"));
	size_t from = out->n;
	/* Airflow's defaults: only_failed and dry_run are true unless told */
	bool only_failed = !json_is_false(json_object_get(body, "only_failed"));
	bool dry_run = !json_is_false(json_object_get(body, "dry_run"));
	size_t i;

	if (!dm_spec_of(dm, dag_id, err))
		return -1;
	if (body && !json_is_object(body))
		return weir_error_set(err, WEIR_E_INVALID, "expected a JSON object");
	if (rid && !json_is_null(rid) && !json_is_string(rid))
		return weir_error_set(err, WEIR_E_INVALID, "dag_run_id: expected a string");
	if (ids && !json_is_null(ids) && !json_is_array(ids))
		return weir_error_set(err, WEIR_E_INVALID, "task_ids: expected a list of task ids");
	json_array_foreach(ids, i, v)
	{
		if (!json_is_string(v)) {
			weir_error_set(err, WEIR_E_INVALID, "task_ids[%zu]: expected a task id", i);
			goto fail;
		}
		strvec_push(&task_ids, json_string_value(v));
	}
	if (recursive && !dry_run) {
		/* the markers' whole reach first, as Airflow collects it before it
		 * clears: past a marker's depth nothing is cleared */
		struct dag_ti_refs reach = {0};
		json_t *probe = json_deep_copy(body);
		int r = probe && json_object_set_new(probe, "dry_run", json_true()) == 0
		            ? op_clear_tis(ctx, dag_id, probe, &reach, err)
		            : weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		json_decref(probe);
		dag_ti_refs_free(&reach);
		if (r < 0)
			goto fail;
	}
	dm_touch(dm);
	if (json_is_string(rid)) {
		struct dag_run_row row = {0};
		if (dm_run_row(dm, dag_id, json_string_value(rid), &row, err) < 0)
			goto fail;
		dag_run_row_release(&row);
		if (dm_clear_run(dm, dag_id, json_string_value(rid), &task_ids, downstream,
		                 only_failed, dry_run, out, err) < 0)
			goto fail;
		if (recursive && dm_clear_markers(dm, out, from, only_failed, dry_run, 0, err) < 0)
			goto fail;
	} else {
		struct dag_run_query q = {.dag_id = dag_id};
		struct dag_run_row *rows = NULL;
		size_t n = 0;
		if (dag_store_run_list(dm->ds, &q, &rows, &n, err) < 0)
			goto fail;
		for (size_t k = 0; k < n; k++) {
			from = out->n;
			if (dm_clear_run(dm, dag_id, rows[k].run_id, &task_ids, downstream,
			                 only_failed, dry_run, out, err) < 0 ||
			    (recursive &&
			     dm_clear_markers(dm, out, from, only_failed, dry_run, 0, err) < 0)) {
				dag_run_rows_free(rows, n);
				goto fail;
			}
		}
		dag_run_rows_free(rows, n);
	}
	rc = 0;
fail:
	if (rc < 0)
		dag_ti_refs_free(out);
	strvec_release(&task_ids);
	return rc;
}

static int op_import_errors(void *ctx, const struct dag_reader *rd, int limit, int offset,
                            struct dag_import_error_list *out, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_import_error_row *rows = NULL;
	size_t n = 0, from = (size_t)(offset > 0 ? offset : 0), k = 0;

	if (dm_import_error_list(dm, rd, &rows, &n, err) < 0)
		return -1;
	if (limit <= 0)
		limit = 100;
	/* the page moves to the front; the rest is freed */
	for (size_t i = 0; i < n; i++) {
		if (i >= from && k < (size_t)limit)
			rows[k++] = rows[i];
		else
			dag_import_error_row_release(&rows[i]);
	}
	out->v = rows;
	out->n = k;
	out->total = n;
	return 0;
}

static const struct dag_api_ops ops = {
    .list_dags = dm_op_list_dags,
    .get_dag = op_get_dag,
    .patch_dag = op_patch_dag,
    .list_runs = dm_op_list_runs,
    .trigger_run = op_trigger_run,
    .get_run = op_get_run,
    .patch_run = op_patch_run,
    .set_run_note = op_set_run_note,
    .dag_access = op_dag_access,
    .set_ti_note = op_set_ti_note,
    .list_tis = dm_op_list_tis,
    .get_ti = op_get_ti,
    .ti_log_locate = op_ti_log_locate,
    .clear_tis = op_clear_tis,
    .import_errors = op_import_errors,
    .denied_dags = op_denied_dags,
    .dag_tasks = dm_op_dag_tasks,
    .dag_details = dm_op_dag_details,
    .ti_tries = dm_op_ti_tries,
    .ui_dags = dm_op_ui_dags,
    .ui_grid = dm_op_ui_grid,
    .ui_stats = dm_op_ui_stats,
    .admin = NULL, /* set by dag_manager_api_ops() */
};

const struct dag_api_ops *dag_manager_api_ops(void)
{
	static struct dag_api_ops all;

	if (!all.admin) {
		all = ops;
		all.admin = dm_admin_ops();
	}
	return &all;
}
