/* watch.c: watching launchers and gang backends.  Owns the watch context:
 * the launchers to look at again (one that ended without reporting, looked
 * at ~1 s later since an `exited` report may still be in flight; one found
 * alive at recovery, not our child, polled with is_alive) and the 250 ms
 * housekeeping tick that does it.  Turns the executor's callbacks (a
 * launcher's exit, a gang backend's events) into store updates; what a
 * launcher gone or a backend's verdict means for a task is
 * sched/task_end.c's.
 */
#include "server/job_manager/jm_internal.h"

#include <signal.h>
#include <stdio.h>

#include "lib/clock.h"
#include "lib/log.h"

#define HOUSEKEEPING_MS 250
#define LOST_GRACE_MS 1000

struct launcher_watch {
	int64_t job_id;
	int attempt;
	char *role;
	int index;
	int launcher_pid;
	int64_t due_ms; /* monotonic; 0 while watching a live one */
	char why[128];
	enum task_verdict verdict; /* a gang backend's, for the task */
	struct launcher_watch *next;
};

struct jm_watch {
	struct job_manager *jm;
	uv_timer_t housekeeping;
	struct launcher_watch *watches;
};

static void watch_free(struct launcher_watch *w)
{
	free(w->role);
	free(w);
}

int jm_watch_add(struct job_manager *jm, int64_t job_id, int attempt, const char *role, int index,
                 int launcher_pid, int64_t due_ms, const char *why, enum task_verdict v)
{
	struct launcher_watch *w = calloc(1, sizeof *w);

	if (!w || !(w->role = strdup(role))) {
		free(w);
		return -1;
	}
	w->verdict = v;
	w->job_id = job_id;
	w->attempt = attempt;
	w->index = index;
	w->launcher_pid = launcher_pid;
	w->due_ms = due_ms;
	snprintf(w->why, sizeof w->why, "%s", why);
	w->next = jm->watch->watches;
	jm->watch->watches = w;
	return 0;
}

/* A gang backend's verdict on a task that did report a failure (a SIGKILL in
 * a Slurm job that ran out of memory is an OOM kill): the task, and the job
 * when this attempt decided it, take the backend's words. */
static void verdict_on_reported(struct job_manager *jm, const struct launcher_watch *w,
                                struct task_row *t, struct job_row *job)
{
	struct weir_error err = {0};
	struct task_retold told;

	task_end_verdict(t->state, t->attempt, job->state, job->attempt, w->verdict, &told);
	if (!told.task)
		return;
	str_set(&t->reason, w->why);
	t->cause = told.cause;
	if (told.oom_killed)
		t->oom_killed = true;
	if (jm_task_save(jm, t, &err) < 0)
		log_error("job %lld: %s", (long long)t->job_id, err.msg);
	jm_event(jm, t->job_id, "task", "%s:%d %s: %s", t->role, t->idx, task_state_name(t->state),
	         t->reason);
	if (told.job) {
		jm_set_reason(&job->reason, "%s:%d %s", t->role, t->idx, w->why);
		job->cause = told.cause;
		if (jm_job_save(jm, job, &err) < 0)
			log_error("job %lld: %s", (long long)job->id, err.msg);
	}
}

/* The launcher is gone: if the task never reported its end, it ends as
 * sched says (lost, killed when weir was stopping it anyway, or by the
 * backend's verdict). */
static void launcher_gone(struct job_manager *jm, const struct launcher_watch *w)
{
	struct weir_error err = {0};
	struct task_row t = {0};
	struct job_row job = {0};
	struct task_end was, end;

	if (jm_task_load(jm, w->job_id, w->attempt, w->role, w->index, &t, &err) < 0)
		return;
	if (jm_job_load(jm, w->job_id, &job, &err) < 0)
		goto out;
	if (jm_task_final(&t)) {
		if (w->verdict != TASK_VERDICT_NONE)
			verdict_on_reported(jm, w, &t, &job);
		goto out;
	}
	jm_task_end_of(&t, &was);
	task_end_gone(&was, jm_winding(jm, &job) || job.attempt != t.attempt, w->verdict, w->why,
	              SIGKILL, &end);
	if (jm_task_end_apply(&t, &end) < 0)
		goto out; /* refused (logged): nothing written */
	t.ended_at = clock_now_ms();
	if (jm_task_save(jm, &t, &err) < 0)
		log_error("job %lld: %s", (long long)t.job_id, err.msg);
	jm_event(jm, t.job_id, "task", "%s:%d %s: %s", t.role, t.idx, task_state_name(t.state),
	         t.reason);
	if (t.attempt == job.attempt)
		jm_task_ended(jm, t.job_id, t.role, t.idx);
out:
	job_row_release(&job);
	task_row_release(&t);
}

static bool watch_gone(struct job_manager *jm, const struct launcher_watch *w, int64_t now)
{
	struct executor *ex;

	if (w->due_ms > 0)
		return now >= w->due_ms;
	ex = jm_exec_of(jm, w->job_id);
	if (!ex)
		return false;
	struct executor_task et = {.job_id = w->job_id,
	                           .role = w->role,
	                           .index = w->index,
	                           .attempt = w->attempt,
	                           .launcher_pid = w->launcher_pid};
	return !ex->ops->is_alive(ex, &et);
}

static void on_housekeeping(uv_timer_t *timer)
{
	struct jm_watch *wc = timer->data;
	struct job_manager *jm = wc->jm;
	int64_t now = clock_mono_ms();
	struct launcher_watch **pw = &wc->watches;

	while (*pw) {
		struct launcher_watch *w = *pw;
		if (!watch_gone(jm, w, now)) {
			pw = &w->next;
			continue;
		}
		*pw = w->next;
		launcher_gone(jm, w);
		watch_free(w);
	}
}

struct jm_watch *jm_watch_create(struct job_manager *jm, struct weir_error *err)
{
	struct jm_watch *wc = calloc(1, sizeof *wc);

	if (!wc) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	wc->jm = jm;
	uv_timer_init(jm->loop, &wc->housekeeping);
	wc->housekeeping.data = wc;
	uv_timer_start(&wc->housekeeping, on_housekeeping, HOUSEKEEPING_MS, HOUSEKEEPING_MS);
	return wc;
}

static void watch_closed(uv_handle_t *h)
{
	free(h->data);
}

void jm_watch_destroy(struct jm_watch *wc)
{
	if (!wc)
		return;
	while (wc->watches) {
		struct launcher_watch *w = wc->watches;
		wc->watches = w->next;
		watch_free(w);
	}
	uv_timer_stop(&wc->housekeeping);
	uv_close((uv_handle_t *)&wc->housekeeping, watch_closed);
}

/* ---- the executor's callbacks ---- */

void job_manager_on_launcher_exit(void *arg, int64_t job_id, const char *role, int index,
                                  int attempt, int launcher_pid, int64_t exit_status,
                                  int term_signal)
{
	struct job_manager *jm = arg;
	char why[128];

	if (term_signal)
		snprintf(why, sizeof why, "launcher killed by signal %d without reporting",
		         term_signal);
	else
		snprintf(why, sizeof why, "launcher exited %lld without reporting",
		         (long long)exit_status);
	/* an `exited` report may still be on its way: look again in a second */
	jm_watch_add(jm, job_id, attempt, role, index, launcher_pid,
	             clock_mono_ms() + LOST_GRACE_MS, why, TASK_VERDICT_NONE);
}

static enum task_verdict verdict_of(enum executor_gang_event ev)
{
	switch (ev) {
	case EXECUTOR_GANG_OOM:
		return TASK_VERDICT_OOM;
	case EXECUTOR_GANG_TIME_LIMIT:
		return TASK_VERDICT_TIME_LIMIT;
	case EXECUTOR_GANG_CANCELLED:
		return TASK_VERDICT_CANCELLED;
	default:
		return TASK_VERDICT_NONE;
	}
}

/* The cluster refused the attempt: its result is failed with the
 * backend's words, its unended tasks could not start. */
static void gang_refused(struct job_manager *jm, struct job_row *job, int attempt,
                         const char *reason)
{
	struct weir_error err = {0};
	struct job_outcome o = {.state = JOB_FAILED, .cause = END_CAUSE_REJECTED, .exit_code = -1};
	struct task_row *rows = NULL;
	size_t n = 0;

	jm_event(jm, job->id, "backend", "attempt %d refused: %s", attempt, reason);
	if (job->attempt != attempt || jm_winding(jm, job))
		return;
	snprintf(o.reason, sizeof o.reason, "%s refused the job: %s",
	         jm_gang_name(jm, "the backend"), reason);
	jm_outcome_set(jm, job->id, &o);
	if (jm_tasks_load(jm, job->id, attempt, &rows, &n, &err) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct task_end was, end;
		if (jm_task_final(&rows[i]))
			continue;
		jm_task_end_of(&rows[i], &was);
		task_end_not_started(&was, reason, &end);
		if (jm_task_end_apply(&rows[i], &end) < 0)
			continue; /* refused (logged): nothing written */
		rows[i].ended_at = clock_now_ms();
		if (jm_task_save(jm, &rows[i], &err) < 0)
			log_error("job %lld: %s", (long long)job->id, err.msg);
	}
	task_rows_free(rows, n);
	jm_notify_cluster(jm, job->id);
	jm_wind_down(jm, job->id);
}

/* The attempt is over on the cluster: tasks that did not report are lost
 * (a report may still be in flight); with a verdict, reported failures
 * take its words too. */
static void gang_over(struct job_manager *jm, int64_t job_id, int attempt,
                      enum executor_gang_event ev, const char *reason)
{
	struct weir_error err = {0};
	struct task_row *rows = NULL;
	size_t n = 0;

	jm_event(jm, job_id, "backend", "attempt %d: %s", attempt, reason);
	if (jm_tasks_load(jm, job_id, attempt, &rows, &n, &err) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (!jm_task_final(&rows[i]) || ev != EXECUTOR_GANG_ENDED)
			jm_watch_add(jm, job_id, attempt, rows[i].role, rows[i].idx, 0,
			             clock_mono_ms() + LOST_GRACE_MS, reason, verdict_of(ev));
	task_rows_free(rows, n);
}

void job_manager_on_gang_event(void *arg, int64_t job_id, int attempt, enum executor_gang_event ev,
                               const char *backend_id, const char *reason)
{
	struct job_manager *jm = arg;
	struct weir_error err = {0};
	struct job_row job = {0};

	if (jm_job_load(jm, job_id, &job, &err) < 0)
		goto out;
	switch (ev) {
	case EXECUTOR_GANG_SUBMITTED: {
		/* the backend's id of the attempt, for people and for a later recovery */
		if (store_job_backend_set(jm->store, job_id, attempt, backend_id, &err) < 0)
			log_error("job %lld: %s", (long long)job_id, err.msg);
		jm_event(jm, job_id, "backend", "attempt %d: %s job %s submitted", attempt,
		         jm_gang_name(jm, ""), backend_id);
		break;
	}
	case EXECUTOR_GANG_REJECTED:
		gang_refused(jm, &job, attempt, reason);
		break;
	case EXECUTOR_GANG_PENDING:
	case EXECUTOR_GANG_RUNNING:
		if (job.attempt != attempt || job.state != JOB_STARTING)
			break;
		if (ev == EXECUTOR_GANG_PENDING)
			jm_set_reason(&job.reason, "pending in %s%s%s",
			              jm_gang_name(jm, "the backend"), reason[0] ? ": " : "",
			              reason);
		else
			str_set(&job.reason, "");
		if (jm_job_save(jm, &job, &err) < 0)
			log_error("job %lld: %s", (long long)job_id, err.msg);
		if (ev == EXECUTOR_GANG_PENDING)
			jm_event(jm, job_id, "backend", "%s", job.reason);
		break;
	case EXECUTOR_GANG_ENDED:
	case EXECUTOR_GANG_OOM:
	case EXECUTOR_GANG_TIME_LIMIT:
	case EXECUTOR_GANG_CANCELLED:
		gang_over(jm, job_id, attempt, ev, reason);
		break;
	}
out:
	job_row_release(&job);
}
