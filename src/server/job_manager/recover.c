/* recover.c: recovery at start.  For every active job: its allocation is
 * rebuilt from the current attempt's task rows, a gang backend follows
 * again the gang it was given (adopt_gang, or find_gang when no id was
 * stored), launchers still alive are watched (watch.c), tasks whose
 * launcher is gone end as sched/task_end.c says, and sched decides for the
 * job.  Nothing starts here: the first queue pass is job_manager_open()'s,
 * once the whole server has started.
 */
#include "server/job_manager/jm_internal.h"

#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/str.h"

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

/* The folders of jobs past the store's last (HOME/jobs/ID, ID above it):
 * a power cut lost the turns that made those jobs, and their ids go to the
 * next jobs, which must not find a lost job's logs and work folders in
 * theirs (docs/internals/recovery.md, "A power cut").  Their tasks, if the
 * agent still runs them, are killed once the server has started
 * (exec/agent_link.h, agent_link_set_known). */
static void sweep_lost_job_folders(struct job_manager *jm)
{
	struct weir_error err = {0};
	int64_t max;
	char *dir = NULL;
	DIR *d;
	struct dirent *de;

	if (store_job_max_id(jm->store, &max, &err) < 0) {
		log_error("recovery: %s", err.msg);
		return;
	}
	if (asprintf(&dir, "%s/jobs", jm->home) < 0 || !(d = opendir(dir))) {
		free(dir);
		return;
	}
	while ((de = readdir(d))) {
		int64_t id;
		char *path;
		if (str_to_int64(de->d_name, 1, INT64_MAX, &id) < 0 || id <= max)
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
			continue;
		if (fs_remove_tree(path) < 0)
			log_warn("recovery: cannot remove %s", path);
		else
			log_warn("recovery: removed %s: job %" PRId64 " is past the store's last "
			         "(%" PRId64
			         "); a power cut lost it, and its id goes to the next job",
			         path, id, max);
		free(path);
	}
	closedir(d);
	free(dir);
}

int job_manager_recover(struct job_manager *jm, struct weir_error *err)
{
	struct job_row *jobs = NULL;
	size_t nj = 0;
	int rc = -1;

	sweep_lost_job_folders(jm);

	if (store_jobs_active(jm->store, &jobs, &nj, err) < 0)
		goto out;
	for (size_t i = 0; i < nj; i++)
		recover_job(jm, &jobs[i]);
	rc = 0;
out:
	job_rows_free(jobs, nj);
	return rc;
}
