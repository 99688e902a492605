/* start.c: starting a gang the queue pass allocated.  The job goes
 * `starting`, every task row is written `pending` with its GPU ids before
 * any launcher can register, then one launcher per task (start_task) or
 * the whole gang at once (a gang backend's start_gang: its archives are
 * shipped first, its placement merged).  On a backend that takes the
 * register answer (the agent), every task is registered here, a gang's
 * with ports picked for them and the whole cluster in each answer, the
 * answer handed to the backend: no round trip, no gang wait.  A launcher that cannot start ends
 * its task `lost` at once (sched/task_end.h), and sched decides for the job.
 */
#include "server/job_manager/jm_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "server/job_manager/answer.h"
#include "server/observe_series.h"

static void not_started(struct task_row *t, const char *why)
{
	struct task_end was, now;

	jm_task_end_of(t, &was);
	task_end_not_started(&was, why, &now);
	if (jm_task_end_apply(t, &now) == 0)
		t->ended_at = clock_now_ms();
}

/* A one-task job on a backend that takes the register answer (the
 * agent's shims): the server registers the task itself, as its launcher's
 * POST /launch/register would (the task `starting` on this host, the gang of
 * one complete: the job `running`), and the answer's text goes with the
 * start.  0, or -1 with err. */
static int register_here(struct job_manager *jm, const struct task_row *t, int port,
                         struct strbuf *answer, struct weir_error *err)
{
	struct jm_register_call c = {.job_id = t->job_id,
	                             .role = t->role,
	                             .index = t->idx,
	                             .attempt = t->attempt,
	                             .host = "127.0.0.1",
	                             .port = port};

	return jm_register(jm, &c, answer, err);
}

/* A gang of several tasks on a backend that takes the register answer
 * (the agent's shims, all on this host): every task registered here, each
 * with a port picked for it, so the gang is complete before any shim
 * starts, and each answer carries the task's port and the whole cluster:
 * no registration over HTTP, no wait for the gang.  0 with answers[i] for
 * rows[i], or -1 with err, the rows then reloaded as stored (some may be
 * registered: their shims register again over HTTP, which is idempotent). */
/* A port for a gang's task that none of the `n` picked before it has: a
 * port let go is free for the kernel to hand out again at once, and it
 * picks at random (a 32-task gang met a repeat once in some twenty), so a
 * repeat is picked again.  The port, or -1 with err. */
static int pick_port_apart(struct job_manager *jm, int64_t job_id, const int *ports, size_t n,
                           struct weir_error *err)
{
	for (int tries = 0; tries < 16; tries++) {
		int port = executor_pick_port(jm_exec_of(jm, job_id), err);
		size_t i = 0;

		if (port < 0)
			return -1;
		while (i < n && ports[i] != port)
			i++;
		if (i == n)
			return port;
	}
	return weir_error_set(err, WEIR_E_INTERNAL,
	                      "cannot pick a port for the gang: the same ones come again");
}

/* Appends the gang's whole cluster (every task of `t`'s attempt registered)
 * to answers[i], with ports[i], i < n.  0, or -1 with err. */
static int add_cluster(struct job_manager *jm, const struct task_row *t, struct strbuf *answers,
                       const int *ports, size_t n, struct weir_error *err)
{
	/* {"ready": true, "cluster": {...}}, the cluster poll's answer */
	bool ready = false;
	json_t *cluster = jm_launch_cluster(jm, t->job_id, t->attempt, &ready, err);
	char *text = NULL;
	int rc = -1;

	if (!cluster || !ready ||
	    !(text = json_dumps(json_object_get(cluster, "cluster"), JSON_COMPACT))) {
		if (!err->msg[0])
			weir_error_set(err, WEIR_E_INTERNAL,
			               "the gang registered here is not complete");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (jm_answer_add_gang(&answers[i], ports[i], text) < 0) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			goto out;
		}
	rc = 0;
out:
	free(text);
	json_decref(cluster);
	return rc;
}

static int register_gang_here(struct job_manager *jm, struct task_row *rows, size_t n,
                              struct strbuf *answers, struct weir_error *err)
{
	int *ports = calloc(n, sizeof *ports);
	int rc = -1;

	if (!ports) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if ((ports[i] = pick_port_apart(jm, rows[i].job_id, ports, i, err)) < 0 ||
		    register_here(jm, &rows[i], ports[i], &answers[i], err) < 0)
			goto out;
	rc = add_cluster(jm, &rows[0], answers, ports, n, err);
out:
	if (rc < 0)
		for (size_t i = 0; i < n; i++) {
			struct task_row cur = {0};
			strbuf_release(&answers[i]);
			if (jm_task_load(jm, rows[i].job_id, rows[i].attempt, rows[i].role,
			                 rows[i].idx, &cur, NULL) == 0) {
				task_row_release(&rows[i]);
				rows[i] = cur;
			}
		}
	free(ports);
	return rc;
}

/* Starts one task's launcher; on failure the task ends `lost` at once.
 * `alone`: the job's only task; `given`: its register answer when the
 * task was registered here already (register_gang_here), else NULL. */
static bool spawn_task(struct job_manager *jm, struct task_row *t, bool alone, const char *given)
{
	struct weir_error err = {0};
	char *lp = jm_log_path(jm, t->job_id, t->role, t->idx, t->attempt);
	struct executor_task et = {.job_id = t->job_id,
	                           .role = t->role,
	                           .index = t->idx,
	                           .attempt = t->attempt,
	                           .log_path = lp};
	int pid = 0;
	bool ok = false, registered = false;
	struct executor *ex = jm_exec_of(jm, t->job_id);
	struct strbuf answer = STRBUF_INIT;

	if (jm_job_nonce(jm, t->job_id, &et.nonce) != 0)
		et.nonce = 0;
	if (!lp)
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
	else if (!ex)
		weir_error_set(&err, WEIR_E_INTERNAL, "no executor");
	else if (!given && alone && ex->takes_answer && register_here(jm, t, 0, &answer, &err) < 0)
		; /* err says why */
	else {
		registered = given || (alone && ex->takes_answer);
		et.answer = given ? given : registered ? answer.buf : NULL;
		ok = ex->ops->start_task(ex, &et, &pid, &err) == 0;
	}
	strbuf_release(&answer);
	if (ok && registered) {
		/* the row is as register_here left it; the shim's pid comes with
		 * its start */
		free(lp);
		return true;
	}
	if (ok) {
		t->launcher_pid = pid;
	} else {
		if (registered || given || (alone && ex && ex->takes_answer)) {
			/* registered here: the row to end is the stored one */
			struct weir_error e2 = {0};
			struct task_row cur = {0};
			if (jm_task_load(jm, t->job_id, t->attempt, t->role, t->idx, &cur, &e2) ==
			    0) {
				task_row_release(t);
				*t = cur;
			}
		}
		not_started(t, err.msg);
		log_error("job %lld %s:%d: %s", (long long)t->job_id, t->role, t->idx, err.msg);
	}
	if (jm_task_save(jm, t, &err) < 0)
		log_error("job %lld: %s", (long long)t->job_id, err.msg);
	free(lp);
	return ok;
}

bool jm_start_again(struct job_manager *jm, struct task_row *t, size_t n_tasks)
{
	struct weir_error err = {0};
	struct strbuf answer = STRBUF_INIT;
	bool ok;

	/* a gang's task registered here: the answer its first start carried,
	 * written again from the rows (its port, the cluster its peers got) */
	if (n_tasks > 1 && t->state == TASK_STARTING &&
	    (register_here(jm, t, t->port, &answer, &err) < 0 ||
	     add_cluster(jm, t, &answer, &t->port, 1, &err) < 0)) {
		log_warn("job %lld %s:%d: %s; it registers itself", (long long)t->job_id, t->role,
		         t->idx, err.msg);
		strbuf_release(&answer);
	}
	ok = spawn_task(jm, t, n_tasks == 1, answer.len ? answer.buf : NULL);
	if (ok)
		jm_event(jm, t->job_id, "task",
		         "%s:%d started again: its start never reached the %s", t->role, t->idx,
		         jm_exec_of(jm, t->job_id)->ops->name);
	else
		jm_event(jm, t->job_id, "task", "%s:%d lost: %s", t->role, t->idx, t->reason);
	strbuf_release(&answer);
	return ok;
}

/* Before a gang job is submitted: each archive in the shared folder. */
static int ship_artifacts(struct job_manager *jm, int64_t job_id, const struct job_spec *spec,
                          struct weir_error *err)
{
	const char *shared;
	char *nc;

	jm_job_shipping(jm, job_id, &shared, &nc);
	free(nc);
	for (size_t i = 0; shared && i < spec->n_artifacts; i++) {
		char *p;
		if (!spec->artifacts[i].archive)
			continue;
		p = jm_shipped_path(jm, shared, spec->artifacts[i].path, err);
		if (!p)
			return -1;
		free(p);
	}
	return 0;
}

/* A gang backend (slurm) takes the whole gang at once; the outcome comes
 * later through job_manager_on_gang_event.  On a refusal now, every task
 * ends `lost` with the reason. */
static bool spawn_gang(struct job_manager *jm, struct executor *ex, const struct job_row *job,
                       struct task_row *rows, size_t n)
{
	struct weir_error err = {0};
	const struct job_spec *spec = jm_spec_of(jm, job, &err);
	struct executor_task *et = calloc(n ? n : 1, sizeof *et);
	char **lp = calloc(n ? n : 1, sizeof *lp);
	struct executor_placement place = {0};
	bool ok = false;

	if (!et || !lp) {
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (!spec)
		goto out;
	if (jm_job_placement(jm, job->id, spec, &place) < 0) {
		weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (ship_artifacts(jm, job->id, spec, &err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct role_spec *rs = job_spec_find_role(spec, rows[i].role);
		lp[i] = jm_log_path(jm, rows[i].job_id, rows[i].role, rows[i].idx, rows[i].attempt);
		if (!lp[i] || !rs) {
			weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
			goto out;
		}
		et[i] = (struct executor_task){.job_id = rows[i].job_id,
		                               .role = rows[i].role,
		                               .index = rows[i].idx,
		                               .attempt = rows[i].attempt,
		                               .log_path = lp[i],
		                               .vcores = rs->vcores,
		                               .memory_mb = rs->memory_mb,
		                               .gpus = rs->gpus,
		                               .time_limit_s = spec->execution_timeout_s,
		                               .place = &place};
	}
	ok = ex->ops->start_gang(ex, et, n, &err) == 0;
out:
	for (size_t i = 0; i < n; i++) {
		if (!ok) {
			not_started(&rows[i], err.msg);
			if (jm_task_save(jm, &rows[i], NULL) < 0)
				log_error("job %lld: cannot record a task", (long long)job->id);
		}
		if (lp)
			free(lp[i]);
	}
	if (!ok)
		log_error("job %lld: %s", (long long)job->id, err.msg);
	free((void *)place.options);
	free(lp);
	free(et);
	return ok;
}

void jm_start_gang(struct job_manager *jm, int64_t job_id, const struct job_alloc *a)
{
	struct weir_error err = {0};
	struct job_row job = {0};
	struct task_row *rows = NULL;
	struct executor *ex;
	int failed = -1;

	if (jm_job_load(jm, job_id, &job, &err) < 0)
		goto fail;
	jm_job_set_state(&job, JOB_STARTING);
	job.allocated_at = clock_now_ms();
	observe_series_time_ms(OBSERVE_JOB_QUEUE_WAIT, job.queued_at, job.allocated_at);
	str_set(&job.reason, "");
	if (jm_job_save(jm, &job, &err) < 0)
		goto fail;
	jm_event(jm, job_id, "state", "starting: attempt %d, %zu tasks", job.attempt, a->n_tasks);
	rows = calloc(a->n_tasks ? a->n_tasks : 1, sizeof *rows);
	if (!rows)
		goto fail;
	/* every row exists before any launcher can register */
	for (size_t i = 0; i < a->n_tasks; i++) {
		struct task_row *t = &rows[i];
		t->job_id = job_id;
		t->attempt = job.attempt;
		t->role = strdup(a->tasks[i].role);
		t->idx = a->tasks[i].index;
		jm_task_set_state(t, TASK_PENDING);
		t->reason = strdup("");
		t->host = strdup("");
		t->gpus = strdup(a->tasks[i].gpus ? a->tasks[i].gpus : "");
		t->exit_code = -1;
		if (jm_task_add(jm, t, &err) < 0)
			goto fail;
	}
	ex = jm_exec_of(jm, job_id);
	if (ex && ex->ops->start_gang) {
		if (!spawn_gang(jm, ex, &job, rows, a->n_tasks))
			failed = 0;
	} else {
		struct strbuf *answers = NULL;
		if (ex && ex->takes_answer && a->n_tasks > 1 &&
		    (answers = calloc(a->n_tasks, sizeof *answers)) &&
		    register_gang_here(jm, rows, a->n_tasks, answers, &err) < 0) {
			log_warn("job %lld: %s; its tasks register themselves", (long long)job_id,
			         err.msg);
			free(answers);
			answers = NULL;
		}
		for (size_t i = 0; i < a->n_tasks; i++)
			if (!spawn_task(jm, &rows[i], a->n_tasks == 1,
			                answers ? answers[i].buf : NULL) &&
			    failed < 0)
				failed = (int)i;
		for (size_t i = 0; answers && i < a->n_tasks; i++)
			strbuf_release(&answers[i]);
		free(answers);
	}
	if (failed >= 0) {
		jm_event(jm, job_id, "task", "%s:%d lost: %s", rows[failed].role, rows[failed].idx,
		         rows[failed].reason);
		jm_task_ended(jm, job_id, rows[failed].role, rows[failed].idx);
	}
	goto out;
fail:
	log_error("job %lld: cannot start its gang: %s", (long long)job_id, err.msg);
out:
	if (rows)
		task_rows_free(rows, a->n_tasks);
	job_row_release(&job);
}
