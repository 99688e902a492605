/* recover.c: recovery at start.  For every active job: its allocation is
 * rebuilt from the current attempt's task rows, a gang backend follows
 * again the gang it was given (adopt_gang, or find_gang when no id was
 * stored), launchers still alive are watched (watch.c), tasks whose
 * launcher is gone end as sched/task_end.c says, and sched decides for the
 * job.  Nothing starts here: the first queue pass is job_manager_open()'s,
 * once the whole server has started.
 */
#include "server/job_manager/jm_internal.h"

#include <signal.h>
#include <stdio.h>

#include "lib/clock.h"
#include "lib/log.h"

/* A gang backend follows again the attempt it was given before the restart
 * (by the id stored at EXECUTOR_GANG_SUBMITTED); is_alive then answers for
 * its tasks until the backend sees the end. */
static void adopt_gang(struct job_manager *jm, struct executor *ex, const struct job_row *job,
                       const struct task_row *rows, size_t n)
{
	struct weir_error err = {0};
	char id[64];
	int attempt = 0;
	const struct task_row *open = NULL;

	if (!ex || !ex->ops->adopt_gang)
		return;
	if (store_job_backend_get(jm->store, job->id, &attempt, id, sizeof id, &err) == 0 &&
	    attempt == job->attempt) {
		if (ex->ops->adopt_gang(ex, job->id, attempt, id, &err) < 0)
			log_error("recovery: job %lld: %s", (long long)job->id, err.msg);
		return;
	}
	/* No id for this attempt: the server may have stopped between the
	 * backend taking the gang and the id being stored.  Look for it by what
	 * it was submitted with, rather than losing it or submitting it twice. */
	for (size_t i = 0; i < n && !open; i++)
		if (!jm_task_final(&rows[i]))
			open = &rows[i];
	if (open && ex->ops->find_gang) {
		char *lp = jm_log_path(jm, job->id, open->role, open->idx, open->attempt);
		if (!lp || ex->ops->find_gang(ex, job->id, job->attempt, lp, &err) < 0)
			log_error("recovery: job %lld: %s", (long long)job->id,
			          lp ? err.msg : "out of memory");
		else
			jm_event(jm, job->id, "backend",
			         "attempt %d: no %s id stored; looking for its job by name",
			         job->attempt, ex->ops->name);
		free(lp);
	}
}

/* The allocation of the job's current attempt, taken back. */
static void reserve(struct job_manager *jm, const struct job_row *job, const struct job_spec *spec,
                    const struct task_row *rows, size_t n)
{
	struct weir_error err = {0};
	struct task_alloc *ta = calloc(n ? n : 1, sizeof *ta);

	for (size_t k = 0; ta && k < n; k++) {
		ta[k].role = rows[k].role;
		ta[k].index = rows[k].idx;
		ta[k].gpus = rows[k].gpus;
	}
	if (ta && n > 0 && alloc_reserve(jm_alloc_of(jm, job->id), job->id, spec, ta, n, &err) < 0)
		log_error("recovery: job %lld: cannot take its resources back: %s",
		          (long long)job->id, err.msg);
	free(ta);
}

/* An unended task: its launcher is watched while alive; a task whose
 * start never reached a backend that keeps its tasks is started again;
 * else the task ends now.  Whether it ended.  `n`: the attempt's tasks. */
static bool recover_task(struct job_manager *jm, struct executor *ex, const struct job_row *job,
                         struct task_row *t, size_t n)
{
	struct weir_error err = {0};
	struct executor_task et = jm_executor_task(t);
	struct task_end was, end;

	/* the backend knows (a launcher's pid, a gang it follows, what the
	 * agent holds, pid or not) */
	if (ex && ex->ops->is_alive(ex, &et)) {
		jm_watch_add(jm, t->job_id, t->attempt, t->role, t->idx, t->launcher_pid, 0,
		             "launcher vanished without reporting", TASK_VERDICT_NONE);
		return false;
	}
	/* never ran: the server stopped between the commit of its start and
	 * the write to the backend; a try of the task's own it was not */
	if (ex && ex->keeps_tasks && (t->state == TASK_PENDING || t->state == TASK_STARTING) &&
	    !jm_winding(jm, job))
		return !jm_start_again(jm, t, n);
	jm_task_end_of(t, &was);
	task_end_gone(&was, jm_winding(jm, job), TASK_VERDICT_NONE,
	              "launcher gone while the server was down", SIGKILL, &end);
	if (jm_task_end_apply(t, &end) < 0)
		return true; /* refused (logged): it had ended */
	t->ended_at = clock_now_ms();
	if (jm_task_save(jm, t, &err) < 0)
		log_error("recovery: %s", err.msg);
	jm_event(jm, job->id, "task", "%s:%d %s: %s", t->role, t->idx, task_state_name(t->state),
	         t->reason);
	return true;
}

static void recover_job(struct job_manager *jm, struct job_row *job)
{
	struct task_row *rows = NULL;
	size_t n = 0;
	const struct job_spec *spec;
	struct weir_error err = {0};
	struct executor *ex = jm_exec_of(jm, job->id);
	bool any_lost = false;

	if (job->state == JOB_QUEUED && !job->restart_pending)
		return;
	spec = jm_spec_of(jm, job, &err);
	if (!spec) {
		jm_fail_job_now(jm, job->id, err.msg);
		return;
	}
	if (jm_tasks_load(jm, job->id, job->attempt, &rows, &n, &err) < 0) {
		log_error("recovery: job %lld: %s", (long long)job->id, err.msg);
		return;
	}
	reserve(jm, job, spec, rows, n);
	adopt_gang(jm, ex, job, rows, n);
	for (size_t k = 0; k < n; k++)
		if (!jm_task_final(&rows[k]) && recover_task(jm, ex, job, &rows[k], n))
			any_lost = true;
	task_rows_free(rows, n);
	if (any_lost || jm_winding(jm, job)) {
		struct progress_event ev = {.kind = PROGRESS_TASK_ENDED, .role = NULL};
		jm_progress(jm, job->id, &ev);
	}
}

int job_manager_recover(struct job_manager *jm, struct weir_error *err)
{
	struct job_row *jobs = NULL;
	size_t nj = 0;
	int rc = -1;

	if (store_jobs_active(jm->store, &jobs, &nj, err) < 0)
		goto out;
	for (size_t i = 0; i < nj; i++)
		recover_job(jm, &jobs[i]);
	rc = 0;
out:
	job_rows_free(jobs, nj);
	return rc;
}
