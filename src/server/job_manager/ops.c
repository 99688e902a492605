/* ops.c: the operations the API calls (api_ops, api/job_api.h): submit,
 * list, get, kill, tasks, events, a log's place, a warm worker's calls; and the DAG manager's
 * submit and kill.  They hand over typed rows: api/job_views.h renders
 * them.
 */
#include "server/job_manager/jm_internal.h"

#include <stdio.h>

#include "api/job_views.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "server/secrets.h"

/* ---- what the views show ---- */

/* The job's row, WEIR_E_NOT_FOUND in the API's words when there is none.
 * The views read the store: what a turn wrote behind is written first. */
static int job_get(struct job_manager *jm, int64_t id, struct job_row *job, struct weir_error *err)
{
	jm_settle(jm);
	if (store_job_get(jm->store, id, job, err) < 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "job %lld: no such job",
		                      (long long)id);
	return 0;
}

static void place_of(struct job_manager *jm, int64_t id, struct job_place *place)
{
	struct jm_route rt;

	jm_route_get(jm, id, &rt);
	place->gang = rt.gang;
	snprintf(place->queue, sizeof place->queue, "%s", rt.queue);
}

/* Adds to the view's row its place and its current attempt's tasks.  0, or
 * -1 with err (no tasks then). */
static int view_fill(struct job_manager *jm, struct job_view *v, struct weir_error *err)
{
	place_of(jm, v->row.id, &v->place);
	if (store_tasks_of_job(jm->store, v->row.id, v->row.attempt, &v->tasks, &v->n_tasks, err) <
	    0) {
		v->tasks = NULL;
		v->n_tasks = 0;
		return -1;
	}
	return 0;
}

static int view_by_id(struct job_manager *jm, int64_t id, struct job_view *v,
                      struct weir_error *err)
{
	memset(v, 0, sizeof *v);
	jm_settle(jm);
	if (store_job_get(jm->store, id, &v->row, err) < 0) {
		if (err && err->kind == WEIR_E_NOT_FOUND)
			weir_error_set(err, WEIR_E_NOT_FOUND, "job %lld: no such job",
			               (long long)id);
		return -1;
	}
	if (view_fill(jm, v, err) < 0) {
		job_view_release(v);
		return -1;
	}
	return 0;
}

/* ---- submit ---- */

/* Stores a validated spec as a queued job and runs a queue pass (inside the
 * caller's turn).  `keep` (taken; NULL: none) becomes the job's spec;
 * without it the spec is read back from the tree its stored text is. */
static int submit_spec(struct job_manager *jm, const struct job_spec *spec, struct job_spec *keep,
                       int64_t *id, struct weir_error *err)
{
	struct job_row row = {0};
	struct jm_route route = {0};
	struct strbuf text = STRBUF_INIT;
	json_t *sj = NULL;
	char *masked = NULL;
	struct weir_error e2 = {0};
	int rc = -1;
	bool gang;

	if (jm_route_choose(jm, spec->queue, &gang, err) < 0)
		goto out;
	if (!gang && alloc_never_fits(&jm->node, spec, err) < 0) {
		err->kind = WEIR_E_UNFIT;
		goto out;
	}
	if (job_spec_write_json(&text, spec) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	/* a spec with secrets (a DAG task's secret variables): the row holds it
	 * masked, the store's sealed table the spec itself */
	if (spec->mask.n && !(masked = variable_mask_json(text.buf, &spec->mask))) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	row.name = spec->name ? spec->name : "job";
	row.spec_json = masked ? masked : text.buf;
	row.framework = (char *)framework_name(spec->framework);
	jm_job_set_state(&row, JOB_QUEUED); /* a new row: its first state */
	row.reason = "";
	row.priority = spec->priority;
	row.attempt = 1;
	row.max_restarts = spec->max_restarts;
	row.exit_code = -1;
	row.submitted_at = clock_now_ms();
	row.queued_at = row.submitted_at;
	route.gang = gang;
	snprintf(route.queue, sizeof route.queue, "%s", spec->queue ? spec->queue : "");
	if (jm_job_add(jm, &row, &route, err) < 0)
		goto out;
	*id = row.id;
	if (masked && jm->secrets &&
	    secrets_store_spec_put(secrets_store_of(jm->secrets), *id, text.buf, &e2) < 0)
		log_error("job %lld: its spec with secrets: %s", (long long)*id, e2.msg);
	jm_timers_touch(jm, *id);
	/* the spec as its stored text reads: the caller's (settled as the text
	 * reads) or the text read back */
	if (!keep && (sj = json_loadb(text.buf, text.len, 0, NULL)))
		keep = job_spec_from_json(sj, NULL);
	jm_spec_keep(jm, *id, keep);
	keep = NULL;
	jm_event(jm, *id, "submitted", "%s: %d tasks, %s%s%s", row.name, job_spec_task_count(spec),
	         gang ? "on slurm" : "local", spec->queue ? ", queue " : "",
	         spec->queue ? spec->queue : "");
	jm_queue_pass(jm);
	rc = 0;
out:
	job_spec_destroy(keep);
	if (masked)
		memset(text.buf, 0, text.len);
	free(masked);
	strbuf_release(&text);
	json_decref(sj);
	return rc;
}

int job_manager_submit_spec(struct job_manager *jm, struct job_spec *spec, int64_t *job_id,
                            struct weir_error *err)
{
	if (job_spec_validate(spec, err) < 0) {
		job_spec_destroy(spec);
		return -1;
	}
	return job_manager_submit_valid(jm, spec, job_id, err);
}

int job_manager_submit_valid(struct job_manager *jm, struct job_spec *spec, int64_t *job_id,
                             struct weir_error *err)
{
	int rc;

	/* what reading the stored text back would settle: a sidecar is
	 * untracked (job_spec_to_json writes it so) */
	for (size_t i = 0; i < spec->n_roles; i++)
		spec->roles[i].untracked |= spec->roles[i].sidecar;
	rc = submit_spec(jm, spec, spec, job_id, err);
	return rc;
}

static int op_submit(void *ctx, json_t *body, struct job_view *out, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_spec *spec = job_spec_from_json(body, err);
	int rc = -1;
	int64_t id = 0;

	if (!spec)
		return -1;
	if (submit_spec(jm, spec, NULL, &id, err) == 0)
		rc = view_by_id(jm, id, out, err);
	job_spec_destroy(spec);
	return rc;
}

/* ---- kill ---- */

int job_manager_kill(struct job_manager *jm, int64_t id, struct weir_error *err)
{
	struct job_row job = {0};
	int rc = -1;

	if (job_get(jm, id, &job, err) < 0)
		goto out;
	if (jm_job_final(&job)) {
		weir_error_set(err, WEIR_E_CONFLICT, "job %lld has already ended (%s)",
		               (long long)id, job_state_name(job.state));
		goto out;
	}
	jm_event(jm, id, "kill", "kill requested");
	if (job.state == JOB_QUEUED || job.restart_pending) {
		/* nothing runs for the current attempt (or it is already being
		 * stopped): the job ends now, the tasks' ends are only recorded */
		struct progress_decision d;
		job_progress_kill_idle(&d);
		jm_apply_decision(jm, &job, NULL, 0, &d);
	} else {
		struct progress_event ev = {.kind = PROGRESS_KILL};
		jm_progress(jm, id, &ev);
	}
	rc = 0;
out:
	job_row_release(&job);
	return rc;
}

static int op_kill_job(void *ctx, int64_t id, struct job_view *out, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	int rc = -1;

	if (job_manager_kill(jm, id, err) == 0)
		rc = view_by_id(jm, id, out, err);
	return rc;
}

/* ---- reads ---- */

static int op_list_jobs(void *ctx, const char *state, int limit, struct job_view **jobs,
                        size_t *n_jobs, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row *rows = NULL;
	struct job_view *v;
	size_t n = 0;
	enum job_state js;

	if (state && job_state_from_name(state, &js) < 0)
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "state: expected queued, starting, running, succeeded, failed "
		    "or killed, got \"%s\"",
		    state);
	jm_settle(jm);
	if (store_job_list(jm->store, state ? &js : NULL, limit, &rows, &n, err) < 0)
		return -1;
	v = calloc(n ? n : 1, sizeof *v);
	if (!v) {
		job_rows_free(rows, n);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		/* a list shows a job whose tasks it could not read with none */
		v[i].row = rows[i];
		view_fill(jm, &v[i], NULL);
	}
	free(rows); /* each row's strings now belong to its view */
	*jobs = v;
	*n_jobs = n;
	return 0;
}

static int op_get_job(void *ctx, int64_t id, struct job_view *out, struct weir_error *err)
{
	return view_by_id(ctx, id, out, err);
}

static int op_tasks(void *ctx, int64_t id, int attempt, struct task_row **rows, size_t *n,
                    struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};

	if (job_get(jm, id, &job, err) < 0)
		return -1;
	if (attempt == API_ATTEMPT_CURRENT)
		attempt = job.attempt;
	else if (attempt == API_ATTEMPT_ALL)
		attempt = 0;
	job_row_release(&job);
	return store_tasks_of_job(jm->store, id, attempt, rows, n, err);
}

static int op_events(void *ctx, int64_t id, struct event_row **rows, size_t *n,
                     struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};

	if (job_get(jm, id, &job, err) < 0)
		return -1;
	job_row_release(&job);
	return store_events_of_job(jm->store, id, rows, n, err);
}

static int op_log_locate(void *ctx, int64_t id, const char *role, int index, int attempt,
                         char **path, bool *ended, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};
	struct task_row t = {0};
	int rc = -1;

	if (job_get(jm, id, &job, err) < 0)
		return -1;
	if (attempt <= 0)
		attempt = job.attempt;
	if (store_task_get(jm->store, id, attempt, role, index, &t, err) < 0) {
		weir_error_set(err, WEIR_E_NOT_FOUND,
		               "job %lld has no task %s:%d in attempt %d (yet)", (long long)id,
		               role, index, attempt);
		goto out;
	}
	*path = jm_log_path_found(jm, id, role, index, attempt);
	if (!*path) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	*ended = jm_task_final(&t);
	rc = 0;
out:
	task_row_release(&t);
	job_row_release(&job);
	return rc;
}

static int op_record_calls(void *ctx, int64_t id, const struct call_row *rows, size_t n,
                           size_t *changed, struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};

	if (job_get(jm, id, &job, err) < 0)
		return -1;
	job_row_release(&job);
	/* into the turn's transaction: one commit a batch */
	return store_calls_record(jm->store, id, rows, n, changed, err);
}

static int op_calls(void *ctx, int64_t id, int64_t after, int limit, struct call_row **rows,
                    size_t *n, int64_t counts[CALL_STATE_COUNT], struct weir_error *err)
{
	struct job_manager *jm = ctx;
	struct job_row job = {0};

	if (job_get(jm, id, &job, err) < 0)
		return -1;
	job_row_release(&job);
	if (store_call_counts(jm->store, id, counts, err) < 0)
		return -1;
	return store_calls_of_job(jm->store, id, after, limit, rows, n, err);
}

static const struct api_ops ops = {
    .submit = op_submit,
    .list_jobs = op_list_jobs,
    .get_job = op_get_job,
    .kill_job = op_kill_job,
    .tasks = op_tasks,
    .events = op_events,
    .record_calls = op_record_calls,
    .calls = op_calls,
    .log_locate = op_log_locate,
    .launch_register = jm_launch_register,
    .launch_cluster = jm_launch_cluster,
    .launch_started = jm_launch_started,
    .launch_exited = jm_launch_exited,
};

const struct api_ops *job_manager_api_ops(void)
{
	return &ops;
}
