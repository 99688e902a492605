/* progress.c: carrying out what sched/job_progress.c decides for a job.
 * After a task of the current attempt ends, a kill or a timeout, the
 * attempt's tasks go to job_progress_decide(); a result waits in the store
 * (jm_outcome_set) while the tasks marked are stopped, a restart is marked
 * pending; when the last task of the attempt has ended, job_progress_gang_end()
 * says whether the job now ends (its result recorded, its resources given
 * back) or goes back to the queue as the next attempt.
 */
#include "server/job_manager/jm_internal.h"

#include <signal.h>
#include <stdio.h>

#include "lib/clock.h"
#include "lib/log.h"

static void stop_task(struct job_manager *jm, const struct task_row *t)
{
	struct weir_error err = {0};
	struct executor_task et = jm_executor_task(t);
	struct executor *ex = jm_exec_of(jm, t->job_id);

	/* no launcher pid yet: a gang backend's task, or one the server
	 * registered itself and handed to the agent (its shim's pid comes with
	 * its start), is still the backend's to stop */
	if (!ex || (t->launcher_pid <= 0 && !ex->ops->start_gang && !ex->takes_answer))
		return;
	if (ex->ops->stop_task(ex, &et, SIGTERM, &err) < 0)
		log_warn("job %lld %s:%d: %s", (long long)t->job_id, t->role, t->idx, err.msg);
}

/* The job's result, waiting in the store, becomes its state. */
static void record_result(struct job_manager *jm, struct job_row *job, const struct job_outcome *o)
{
	struct weir_error err = {0};

	if (jm_job_set_state(job, o->state) < 0) {
		jm_outcome_set(jm, job->id, NULL); /* refused (logged): the job as it was */
		return;
	}
	job->cause = o->cause;
	job->exit_code = o->exit_code;
	job->restart_pending = false;
	str_set(&job->reason, o->reason);
	job->ended_at = clock_now_ms();
	if (jm_job_save(jm, job, &err) < 0)
		log_error("job %lld: %s", (long long)job->id, err.msg);
	jm_outcome_set(jm, job->id, NULL);
	jm_event(jm, job->id, "state", "%s%s%s", job_state_name(job->state),
	         o->reason[0] ? ": " : "", o->reason);
	jm_ended_add(jm, job);
}

/* The next attempt of a restarting job, back in the queue. */
static void requeue(struct job_manager *jm, struct job_row *job)
{
	struct weir_error err = {0};

	if (jm_job_set_state(job, JOB_QUEUED) < 0)
		return; /* refused (logged): the job as it was */
	job->restart_pending = false;
	job->attempt++;
	job->queued_at = clock_now_ms();
	job->allocated_at = 0;
	job->running_at = 0;
	str_set(&job->reason, "");
	if (jm_job_save(jm, job, &err) < 0)
		log_error("job %lld: %s", (long long)job->id, err.msg);
	jm_event(jm, job->id, "state", "queued (attempt %d)", job->attempt);
}

void jm_wind_down(struct job_manager *jm, int64_t job_id)
{
	struct weir_error err = {0};
	struct job_row job = {0};
	struct task_row *rows = NULL;
	struct task_status *st = NULL;
	size_t n = 0;
	struct job_outcome o;
	struct progress_gang g = {0};

	if (jm_job_load(jm, job_id, &job, &err) < 0)
		return;
	if (jm_tasks_load(jm, job_id, job.attempt, &rows, &n, &err) < 0)
		goto out;
	st = jm_task_statuses(rows, n);
	if (!st)
		goto out;
	g.all_ended = job_progress_all_ended(st, n);
	g.final = jm_job_final(&job);
	g.restart_pending = job.restart_pending;
	/* read only when it matters (a store read per late report otherwise) */
	g.result_waits = g.all_ended && !g.final && jm_outcome_get(jm, job_id, &o);
	switch (job_progress_gang_end(&g)) {
	case PROGRESS_GANG_WAIT:
		goto out;
	case PROGRESS_GANG_RECORD:
		record_result(jm, &job, &o);
		break;
	case PROGRESS_GANG_FINAL:
		break;
	case PROGRESS_GANG_RESTART:
		jm_release_alloc(jm, job_id);
		requeue(jm, &job);
		jm_notify_cluster(jm, job_id);
		jm_notify_logs(jm, job_id);
		jm_queue_pass(jm);
		goto out;
	}
	jm_release_alloc(jm, job_id);
	jm_spec_forget(jm, job_id);
	jm_timers_forget(jm, job_id);
	jm_notify_cluster(jm, job_id);
	jm_notify_logs(jm, job_id);
	jm_queue_pass(jm);
out:
	free(st);
	task_rows_free(rows, n);
	job_row_release(&job);
}

void jm_apply_decision(struct job_manager *jm, struct job_row *job, const struct task_row *tasks,
                       size_t n, const struct progress_decision *d)
{
	struct weir_error err = {0};
	struct job_outcome o = {0};

	if (job_progress_result(d, &o.state, &o.exit_code)) {
		o.cause = d->cause;
		snprintf(o.reason, sizeof o.reason, "%s", d->reason);
		jm_outcome_set(jm, job->id, &o);
		job->restart_pending = false;
		if (d->n_stop > 0)
			jm_set_reason(&job->reason, "stopping: %s",
			              d->reason[0] ? d->reason : job_state_name(o.state));
		if (jm_job_save(jm, job, &err) < 0)
			log_error("job %lld: %s", (long long)job->id, err.msg);
		if (d->n_stop > 0)
			jm_event(jm, job->id, "stopping", "%s%s%s: stopping %zu tasks",
			         job_state_name(o.state), d->reason[0] ? ": " : "", d->reason,
			         d->n_stop);
	} else if (d->outcome == PROGRESS_RESTART_GANG) {
		job->restart_pending = true;
		jm_set_reason(&job->reason, "restarting: %s", d->reason);
		if (jm_job_save(jm, job, &err) < 0)
			log_error("job %lld: %s", (long long)job->id, err.msg);
		jm_event(jm, job->id, "restart", "restarting the gang after attempt %d: %s",
		         job->attempt, d->reason);
	} else {
		return;
	}
	for (size_t i = 0; i < n && i < d->n_tasks; i++)
		if (d->stop && d->stop[i] && !jm_task_final(&tasks[i]))
			stop_task(jm, &tasks[i]);
	jm_notify_cluster(jm, job->id);
	jm_wind_down(jm, job->id);
}

void jm_progress(struct job_manager *jm, int64_t job_id, const struct progress_event *ev)
{
	struct weir_error err = {0};
	struct job_row job = {0};
	struct task_row *rows = NULL;
	size_t n = 0;
	struct task_status *st = NULL;
	struct progress_decision d = {0};
	const struct job_spec *spec;
	if (jm_job_load(jm, job_id, &job, &err) < 0)
		return;
	if (jm_winding(jm, &job)) {
		/* winding down: late ends are only recorded */
		jm_wind_down(jm, job_id);
		goto out;
	}
	spec = jm_spec_of(jm, &job, &err);
	if (!spec)
		goto fail;
	if (job.state != JOB_QUEUED && jm_tasks_load(jm, job_id, job.attempt, &rows, &n, &err) < 0)
		goto fail;
	st = jm_task_statuses(rows, n);
	if (!st)
		goto out;
	if (job_progress_decide(spec, job.attempt, st, n, ev, &d, &err) < 0)
		goto fail;
	jm_apply_decision(jm, &job, rows, n, &d);
	progress_decision_release(&d);
	goto out;
fail:
	log_error("job %lld: cannot decide what follows: %s", (long long)job_id, err.msg);
out:
	free(st);
	task_rows_free(rows, n);
	job_row_release(&job);
}

void jm_task_ended(struct job_manager *jm, int64_t job_id, const char *role, int index)
{
	struct progress_event ev = {.kind = PROGRESS_TASK_ENDED, .role = role, .index = index};

	jm_notify_logs(jm, job_id);
	jm_progress(jm, job_id, &ev);
}
