/* slurm.c: the slurm backend: sbatch, squeue and scancel run with uv_spawn.
 *
 * Owns one `sjob` per gang handed to Slurm (from the sbatch until squeue
 * shows its end), one `cmd` per command in flight (a process and its two
 * output pipes), the batches of gangs waiting for sbatch (one-task gangs of
 * the same settings become one job array) and the poll and flush timers.
 * Everything it learns goes to the job manager through the executor_gang_fn;
 * it decides nothing.
 *
 * This file: the executor itself (its ops, create and destroy), the sjobs
 * (a list in the order squeue's answers are told, indexed by gang and
 * attempt) and cancelling; slurm_internal.h names the others.
 */
#include "exec/slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/slurm_internal.h"
#include "lib/fs.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/strvec.h"

void slurm_emit(struct slurm_executor *sx, const struct sjob *j, enum executor_gang_event ev,
                const char *reason)
{
	if (sx->on_gang)
		sx->on_gang(sx->arg, j->job_id, j->attempt, ev, j->slurm_id, reason ? reason : "");
}

/* The index's key of a gang's attempt. */
static void sjob_key(int64_t job_id, int attempt, char *key, size_t size)
{
	snprintf(key, size, "%lld.%d", (long long)job_id, attempt);
}

struct sjob *sjob_find(struct slurm_executor *sx, int64_t job_id, int attempt)
{
	char key[48];

	sjob_key(job_id, attempt, key, sizeof key);
	return hashmap_get_str(sx->jobs_by_key, key);
}

int sjob_add(struct slurm_executor *sx, struct sjob *j)
{
	char key[48];

	sjob_key(j->job_id, j->attempt, key, sizeof key);
	if (hashmap_put_str(sx->jobs_by_key, key, j, NULL) < 0)
		return -1;
	j->prev = NULL;
	j->next = sx->jobs;
	if (sx->jobs)
		sx->jobs->prev = j;
	sx->jobs = j;
	return 0;
}

void sjob_remove(struct slurm_executor *sx, struct sjob *j)
{
	char key[48];

	sjob_key(j->job_id, j->attempt, key, sizeof key);
	hashmap_remove_str(sx->jobs_by_key, key);
	if (j->prev)
		j->prev->next = j->next;
	else
		sx->jobs = j->next;
	if (j->next)
		j->next->prev = j->prev;
	free(j->script);
	free(j);
}

/* ---- cancelling ---- */

static void scancel_done(struct slurm_executor *sx, struct cmd *c)
{
	char why[256];
	if (c->exit_status != 0 || c->term_signal) {
		struct sjob *j = sjob_find(sx, c->job_id, c->attempt);
		slurm_cmd_complaint(c, why, sizeof why);
		/* Someone cancelled it before us (its launchers got the SIGTERM,
		 * reported, and weir stopped the rest): the cancel was not weir's. */
		if (j && strstr(why, "already completing or completed")) {
			j->cancel_sent = false;
			return;
		}
		log_warn("job %lld: scancel: %s", (long long)c->job_id, why);
	}
}

void sjob_cancel(struct slurm_executor *sx, struct sjob *j)
{
	struct weir_error err = {0};
	char *argv[] = {"scancel", j->slurm_id, NULL};

	if (j->cancel_sent)
		return;
	j->cancel_sent = true;
	if (slurm_cmd_run(sx, argv, scancel_done, j->job_id, j->attempt, &err) < 0)
		log_warn("job %lld: %s", (long long)j->job_id, err.msg);
}

static int slurm_start_gang(struct executor *ex, const struct executor_task *tasks, size_t n,
                            struct weir_error *err)
{
	struct slurm_executor *sx = (struct slurm_executor *)ex;
	char *script = NULL, *dir = NULL, *path = NULL, *outpat = NULL;
	struct strvec av = STRVEC_INIT;
	struct components comps = {0};
	struct executor_placement defaults = {0};
	struct sjob *j = NULL;
	int rc = -1, fd = -1;

	if (n == 0)
		return weir_error_set(err, WEIR_E_INVALID, "an empty gang");
	if (n > 64 * 1024)
		return weir_error_set(err, WEIR_E_INVALID, "%zu tasks: too many for one job", n);
	for (size_t i = 0; i < n; i++)
		if (tasks[i].vcores < 1)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: a task needs at least 1 vcore", tasks[i].role);
	if (slurm_components_of(tasks, n, &comps) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	dir = slurm_dir_of(tasks[0].log_path);
	script = slurm_batch_script(sx, tasks, n, &comps);
	if (!dir || !script || asprintf(&path, "%s/slurm-%d.sh", dir, tasks[0].attempt) < 0 ||
	    asprintf(&outpat, "%s/slurm-%%j.out", dir) < 0) {
		path = outpat = NULL;
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (fs_mkdir_p(dir, 0755, err) < 0)
		goto out;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	if (fd < 0 || write(fd, script, strlen(script)) != (ssize_t)strlen(script)) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot write the batch script: %s", path,
		               strerror(errno));
		goto out;
	}
	slurm_defaults(sx, &defaults);
	if (slurm_sbatch_argv(&defaults, tasks, n, outpat, path, &av, err) < 0)
		goto out;
	j = calloc(1, sizeof *j);
	if (!j) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	j->job_id = tasks[0].job_id;
	j->attempt = tasks[0].attempt;
	/* not at once: gangs started in this loop turn gather, one-task ones of
	 * the same settings into one array (fewer sbatch processes and Slurm jobs) */
	if (sjob_add(sx, j) < 0) {
		free(j);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (slurm_batch_add(sx, tasks, n, &defaults, &av, path, dir, err) < 0) {
		sjob_remove(sx, j);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	strvec_release(&av);
	slurm_components_release(&comps);
	free(script);
	free(dir);
	free(path);
	free(outpat);
	return rc;
}

static int slurm_start_task(struct executor *ex, const struct executor_task *task,
                            int *launcher_pid, struct weir_error *err)
{
	*launcher_pid = 0;
	return slurm_start_gang(ex, task, 1, err);
}

static int slurm_stop_task(struct executor *ex, const struct executor_task *task, int sig,
                           struct weir_error *err)
{
	struct slurm_executor *sx = (struct slurm_executor *)ex;
	struct sjob *j = sjob_find(sx, task->job_id, task->attempt);

	(void)err;
	if (!j || (sig != SIGTERM && sig != SIGKILL && sig != SIGINT))
		return 0;
	if (!j->slurm_id[0])
		j->cancel_wanted = true; /* sbatch has not answered yet */
	else
		sjob_cancel(sx, j);
	return 0;
}

static int slurm_adopt_gang(struct executor *ex, int64_t job_id, int attempt,
                            const char *backend_id, struct weir_error *err)
{
	struct slurm_executor *sx = (struct slurm_executor *)ex;
	struct sjob *j;

	if (sjob_find(sx, job_id, attempt))
		return 0;
	if (!backend_id[0] || strlen(backend_id) >= sizeof j->slurm_id ||
	    strspn(backend_id, "0123456789_+") != strlen(backend_id))
		return weir_error_set(err, WEIR_E_INVALID, "job %lld: %s: not a Slurm job id",
		                      (long long)job_id, backend_id);
	j = calloc(1, sizeof *j);
	if (!j)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	j->job_id = job_id;
	j->attempt = attempt;
	snprintf(j->slurm_id, sizeof j->slurm_id, "%s", backend_id);
	if (sjob_add(sx, j) < 0) {
		free(j);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	slurm_poll_arm(sx);
	return 0;
}

static bool slurm_is_alive(struct executor *ex, const struct executor_task *task)
{
	struct slurm_executor *sx = (struct slurm_executor *)ex;
	return sjob_find(sx, task->job_id, task->attempt) != NULL;
}

static void sx_closed(uv_handle_t *h)
{
	struct slurm_executor *sx = h->data;

	if (--sx->handles > 0)
		return;
	for (size_t i = 0; i < sx->n_extra; i++)
		free(sx->extra[i]);
	free(sx->extra);
	free(sx->partition);
	free(sx->account);
	free(sx->qos);
	free(sx->time);
	free(sx->launcher);
	free(sx->env_server);
	free(sx->token);
	free(sx);
}

static void slurm_destroy(struct executor *ex)
{
	struct slurm_executor *sx = (struct slurm_executor *)ex;

	if (!sx)
		return;
	while (sx->jobs) {
		struct sjob *j = sx->jobs;
		sx->jobs = j->next;
		free(j->script);
		free(j);
	}
	hashmap_destroy(sx->jobs_by_key);
	sx->jobs_by_key = NULL;
	/* gangs not submitted yet: a restart finds no Slurm job for them (lost) */
	while (sx->batches) {
		struct batch *b = sx->batches;
		sx->batches = b->next;
		slurm_batch_free(b);
	}
	while (sx->later) {
		struct batch *b = sx->later;
		sx->later = b->next;
		slurm_batch_free(b);
	}
	/* commands in flight finish on their own, telling nobody (an array's
	 * batch is freed as its command closes) */
	for (struct cmd *c = sx->cmds; c; c = c->next)
		c->sx = NULL;
	sx->cmds = NULL;
	uv_timer_stop(&sx->poll);
	uv_timer_stop(&sx->flush);
	uv_timer_stop(&sx->retry);
	uv_close((uv_handle_t *)&sx->poll, sx_closed);
	uv_close((uv_handle_t *)&sx->flush, sx_closed);
	uv_close((uv_handle_t *)&sx->retry, sx_closed);
}

static const struct executor_ops slurm_ops = {
    .name = "slurm",
    .start_task = slurm_start_task,
    .start_gang = slurm_start_gang,
    .stop_task = slurm_stop_task,
    .adopt_gang = slurm_adopt_gang,
    .find_gang = slurm_find_gang,
    .is_alive = slurm_is_alive,
    .destroy = slurm_destroy,
};

static char *dup_opt(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

struct executor *slurm_executor_create(uv_loop_t *loop, const struct slurm_options *opt,
                                       const char *launcher, const char *server_url,
                                       const char *token, executor_gang_fn on_gang, void *arg,
                                       struct weir_error *err)
{
	struct slurm_executor *sx = calloc(1, sizeof *sx);

	if (!sx)
		goto oom;
	sx->base.ops = &slurm_ops;
	sx->base.confines_tasks = true;
	sx->loop = loop;
	sx->on_gang = on_gang;
	sx->jobs_by_key = hashmap_create(HASHMAP_KEY_STR);
	sx->arg = arg;
	uv_timer_init(loop, &sx->poll);
	sx->poll.data = sx;
	uv_timer_init(loop, &sx->flush);
	sx->flush.data = sx;
	uv_timer_init(loop, &sx->retry);
	sx->retry.data = sx;
	sx->handles = 3;
	sx->batches_tail = &sx->batches;
	if (!sx->jobs_by_key)
		goto oom;
	sx->launcher = launcher ? strdup(launcher) : executor_find_launcher(&sx->lean);
	if (launcher)
		sx->lean = strstr(launcher, "weir-launch") != NULL;
	if (!sx->launcher)
		goto oom;
	if (asprintf(&sx->env_server, "WEIR_SERVER=%s", server_url) < 0) {
		sx->env_server = NULL;
		goto oom;
	}
	if (!(sx->token = strdup(token ? token : "")))
		goto oom;
	if (opt) {
		sx->partition = dup_opt(opt->partition);
		sx->account = dup_opt(opt->account);
		sx->qos = dup_opt(opt->qos);
		sx->time = dup_opt(opt->time);
		if (opt->n_sbatch_options) {
			sx->extra = calloc(opt->n_sbatch_options, sizeof *sx->extra);
			if (!sx->extra)
				goto oom;
			for (size_t i = 0; i < opt->n_sbatch_options; i++) {
				sx->extra[i] = strdup(opt->sbatch_options[i]);
				if (!sx->extra[i])
					goto oom;
				sx->n_extra++;
			}
		}
	}
	return &sx->base;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (sx)
		slurm_destroy(&sx->base);
	return NULL;
}
