/* slurm_script.c: what sbatch is given: the batch script of a gang (the
 * launcher once, or srun steps), sbatch's arguments from the placement and
 * the tasks' resources, and the script and arguments of a job array of
 * one-task gangs. */
#include "exec/slurm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/launch_secret.h"
#include "lib/shell.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define SLURM_TIME_MARGIN_S 60

char *slurm_dir_of(const char *log_path)
{
	const char *slash = strrchr(log_path, '/');
	int len = slash ? (int)(slash - log_path) : 0;
	char *d = NULL;

	if (asprintf(&d, "%.*s%slogs", len, log_path, slash ? "/" : "") < 0)
		return NULL;
	return d;
}

static uint64_t mem_per_cpu(const struct executor_task *t)
{
	return (t->memory_mb + (uint64_t)t->vcores - 1) / (uint64_t)t->vcores;
}

static bool same_resources(const struct executor_task *a, const struct executor_task *b)
{
	return a->vcores == b->vcores && a->memory_mb == b->memory_mb && a->gpus == b->gpus;
}

int slurm_components_of(const struct executor_task *tasks, size_t n, struct components *c)
{
	c->n = 0;
	c->comp = calloc(n, sizeof *c->comp);
	c->first = calloc(n, sizeof *c->first);
	c->count = calloc(n, sizeof *c->count);
	if (!c->comp || !c->first || !c->count)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < c->n && !same_resources(&tasks[c->first[k]], &tasks[i]))
			k++;
		if (k == c->n)
			c->first[c->n++] = i;
		c->comp[i] = k;
		c->count[k]++;
	}
	return 0;
}

void slurm_components_release(struct components *c)
{
	free(c->comp);
	free(c->first);
	free(c->count);
}

/* Appends the launcher's command line on the node, for sh: `who` is
 * "--role R --index I" or "--tasks LIST"; the launcher listens on the node's
 * first address, which it finds itself (--host auto: no `hostname -I`
 * process per task). */
static void launcher_line(struct slurm_executor *sx, const struct executor_task *t, const char *who,
                          struct strbuf *sb)
{
	strbuf_addstr(sb, "exec ");
	shell_quote(sb, sx->launcher);
	if (!sx->lean)
		strbuf_addstr(sb, " launch");
	strbuf_addf(sb, " --job %lld %s --attempt %d --host auto", (long long)t->job_id, who,
	            t->attempt);
	if (sx->base.log_to_server) {
		/* The launcher sends the program's output to the server, all of it
		 * before it reports the end; its own stderr goes with the step's to
		 * slurm-<id>.out. */
		strbuf_addstr(sb, " --log-to-server");
	} else {
		/* log_transport: file: the launcher and its program append to the
		 * log on the shared file system themselves, so every byte is in it
		 * before the end is reported (srun's forwarding could still be
		 * flushing then). */
		strbuf_addstr(sb, " >>");
		shell_quote(sb, t->log_path);
		strbuf_addstr(sb, " 2>&1");
	}
}

/* "--role R --index I" into who (reset first). */
static void role_index_words(const struct executor_task *t, struct strbuf *who)
{
	strbuf_reset(who);
	strbuf_addstr(who, "--role ");
	shell_quote(who, t->role);
	strbuf_addf(who, " --index %d", t->index);
}

/* "--tasks ROLE:I-J,..." into sb (reset first): the tasks of component k in
 * SLURM_PROCID order, runs of one role's consecutive indices as ranges. */
static void tasks_words(const struct executor_task *tasks, size_t n, const struct components *c,
                        size_t k, struct strbuf *sb)
{
	bool first = true;

	strbuf_reset(sb);
	strbuf_addstr(sb, "--tasks ");
	for (size_t i = 0; i < n; i++) {
		if (c->comp[i] != k)
			continue;
		size_t j = i;
		while (j + 1 < n && c->comp[j + 1] == k &&
		       !strcmp(tasks[j + 1].role, tasks[i].role) &&
		       tasks[j + 1].index == tasks[j].index + 1)
			j++;
		/* role names are identifiers ([a-z][a-z0-9_-]*): no quoting needed */
		strbuf_addf(sb, "%s%s:%d", first ? "" : ",", tasks[i].role, tasks[i].index);
		if (j > i)
			strbuf_addf(sb, "-%d", tasks[j].index);
		first = false;
		i = j;
	}
}

static void srun_words(struct strbuf *sb, const struct executor_task *t, const struct components *c,
                       size_t k, size_t ntasks, bool one)
{
	strbuf_addstr(sb, "srun");
	if (c->n > 1)
		strbuf_addf(sb, " --het-group=%zu", k);
	if (one)
		strbuf_addstr(sb, " --nodes=1 --ntasks=1 --exact");
	else
		strbuf_addf(sb, " --ntasks=%zu", ntasks);
	strbuf_addf(sb, " --cpus-per-task=%d --mem-per-cpu=%llu", t->vcores,
	            (unsigned long long)mem_per_cpu(t));
	if (t->gpus > 0)
		strbuf_addf(sb, " --gpus-per-task=%d", t->gpus);
	strbuf_addstr(sb, " --kill-on-bad-exit=0");
}

/* One srun step of the script: `srun ... \ /bin/sh -c 'LAUNCHER LINE' &`. */
static void step_line(struct slurm_executor *sx, struct strbuf *sb, const struct executor_task *t,
                      const char *who, const struct components *c, size_t k, size_t ntasks,
                      bool one, struct strbuf *inner)
{
	strbuf_reset(inner);
	launcher_line(sx, t, who, inner);
	srun_words(sb, t, c, k, ntasks, one);
	strbuf_addstr(sb, " \\\n\t/bin/sh -c ");
	shell_quote(sb, inner->buf);
	strbuf_addstr(sb, " &\n");
	sb->failed |= inner->failed;
}

char *slurm_batch_script(struct slurm_executor *sx, const struct executor_task *tasks, size_t n,
                         const struct components *c)
{
	struct strbuf sb = STRBUF_INIT, inner = STRBUF_INIT, who = STRBUF_INIT;
	char secret[LAUNCH_SECRET_HEX + 1];

	/* one environment for every launcher of the script (a step of many
	 * tasks picks its own at its SLURM_PROCID): the attempt's secret, not
	 * a task's (exec/launch_secret.h) */
	launch_secret_attempt(sx->token, tasks[0].job_id, tasks[0].attempt, secret);
	strbuf_addf(&sb,
	            "#!/bin/sh\n"
	            "# weir job %lld, attempt %d: weir's launcher for each task on its node;\n"
	            "# it fetches the task's command from the server (WEIR_SERVER from the\n"
	            "# environment, the attempt's launch secret below).\n"
	            "WEIR_LAUNCH_SECRET=%s\n"
	            "export WEIR_LAUNCH_SECRET\n",
	            (long long)tasks[0].job_id, tasks[0].attempt, secret);
	if (n == 1) {
		role_index_words(&tasks[0], &who);
		sb.failed |= who.failed;
		launcher_line(sx, &tasks[0], who.buf, &sb);
		strbuf_addch(&sb, '\n');
	} else if (sx->base.log_to_server) {
		for (size_t k = 0; k < c->n; k++) {
			tasks_words(tasks, n, c, k, &who);
			sb.failed |= who.failed;
			step_line(sx, &sb, &tasks[c->first[k]], who.buf, c, k, c->count[k], false,
			          &inner);
		}
		strbuf_addstr(&sb, "wait\n");
	} else {
		for (size_t i = 0; i < n; i++) {
			role_index_words(&tasks[i], &who);
			sb.failed |= who.failed;
			step_line(sx, &sb, &tasks[i], who.buf, c, c->comp[i], 1, true, &inner);
		}
		strbuf_addstr(&sb, "wait\n");
	}
	strbuf_release(&who);
	strbuf_release(&inner);
	return strbuf_detach(&sb, NULL); /* NULL when an add ran out of memory */
}

/* One component's resources and placement: `count` tasks like `t`. */
static int component_args(const struct executor_placement *pl, const struct executor_task *t,
                          size_t count, int64_t time_limit_s, struct strvec *av)
{
	int fail = 0;

	fail |= strvec_pushf(av, "--ntasks=%zu", count);
	fail |= strvec_pushf(av, "--cpus-per-task=%d", t->vcores);
	fail |= strvec_pushf(av, "--mem-per-cpu=%llu", (unsigned long long)mem_per_cpu(t));
	if (t->gpus > 0)
		fail |= strvec_pushf(av, "--gpus-per-task=%d", t->gpus);
	if (pl->partition)
		fail |= strvec_pushf(av, "--partition=%s", pl->partition);
	if (pl->account)
		fail |= strvec_pushf(av, "--account=%s", pl->account);
	if (pl->qos)
		fail |= strvec_pushf(av, "--qos=%s", pl->qos);
	/* weir kills at the execution timeout; Slurm's limit is the backstop, a
	 * minute later (it counts from the allocation, before registration) */
	if (pl->time)
		fail |= strvec_pushf(av, "--time=%s", pl->time);
	else if (time_limit_s > 0)
		fail |= strvec_pushf(av, "--time=%lld",
		                     (long long)((time_limit_s + SLURM_TIME_MARGIN_S + 59) / 60));
	for (size_t i = 0; i < pl->n_options; i++)
		fail |= strvec_push(av, pl->options[i]);
	return fail;
}

/* sbatch's arguments: the job-wide ones, then one group per component
 * (separated by ":"), then the script. */
static int sbatch_args(const struct executor_placement *pl, const struct executor_task *tasks,
                       const struct components *c, const char *outpat, const char *path,
                       struct strvec *av)
{
	int fail = 0;

	fail |= strvec_push(av, "sbatch");
	fail |= strvec_push(av, "--parsable");
	/* one name per attempt: after a crash between sbatch and storing its
	 * answer, the restarted server finds the attempt's job by this name */
	fail |= strvec_pushf(av, "--job-name=weir-%lld-%d", (long long)tasks[0].job_id,
	                     tasks[0].attempt);
	fail |= strvec_push(av, "--export=ALL");
	fail |= strvec_pushf(av, "--output=%s", outpat);
	fail |= strvec_push(av, "--open-mode=append");
	for (size_t k = 0; k < c->n; k++) {
		if (k > 0)
			fail |= strvec_push(av, ":");
		fail |=
		    component_args(pl, &tasks[c->first[k]], c->count[k], tasks[0].time_limit_s, av);
	}
	fail |= strvec_push(av, path);
	return fail ? -1 : 0;
}

int slurm_sbatch_argv(const struct executor_placement *defaults, const struct executor_task *tasks,
                      size_t n, const char *outpat, const char *script, struct strvec *av,
                      struct weir_error *err)
{
	struct components comps = {0};
	struct executor_placement pl = {0};
	int rc = -1;

	if (n == 0)
		return weir_error_set(err, WEIR_E_INVALID, "an empty gang");
	if (slurm_components_of(tasks, n, &comps) < 0 ||
	    executor_placement_merge(defaults, tasks[0].place, &pl) < 0 ||
	    sbatch_args(&pl, tasks, &comps, outpat, script, av) < 0)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	else
		rc = 0;
	free((void *)pl.options);
	slurm_components_release(&comps);
	return rc;
}

void slurm_defaults(const struct slurm_executor *sx, struct executor_placement *pl)
{
	pl->partition = sx->partition;
	pl->account = sx->account;
	pl->qos = sx->qos;
	pl->time = sx->time;
	pl->options = (const char *const *)sx->extra;
	pl->n_options = sx->n_extra;
}

/* ---- one-task gangs as job arrays ---- */

char *slurm_array_script(const char *const *scripts, const char *const *dirs, size_t n)
{
	struct strbuf sb = STRBUF_INIT, d = STRBUF_INIT;

	strbuf_addstr(&sb, "#!/bin/sh\n"
	                   "# weir: a Slurm job array of one-task jobs; element I runs the batch\n"
	                   "# script of its weir job, its output next to that job's logs.\n"
	                   "case \"$SLURM_ARRAY_TASK_ID\" in\n");
	for (size_t i = 0; i < n; i++) {
		strbuf_reset(&d);
		strbuf_addf(&d, "%s/slurm-", dirs[i]);
		sb.failed |= d.failed;
		strbuf_addf(&sb, "%zu) exec /bin/sh ", i);
		shell_quote(&sb, scripts[i]);
		strbuf_addstr(&sb, " >>");
		shell_quote(&sb, d.buf);
		strbuf_addf(&sb, "\"$SLURM_ARRAY_JOB_ID\"_%zu.out 2>&1 ;;\n", i);
	}
	strbuf_addstr(
	    &sb, "*) echo \"weir: no job for array index $SLURM_ARRAY_TASK_ID\" >&2; exit 1 ;;\n"
	         "esac\n");
	strbuf_release(&d);
	return strbuf_detach(&sb, NULL); /* NULL when an add ran out of memory */
}

int slurm_array_index(const char *text, const char *script, size_t *index)
{
	struct strbuf needle = STRBUF_INIT;
	const char *hit, *bol;
	int rc = -1;

	strbuf_addstr(&needle, ") exec /bin/sh ");
	shell_quote(&needle, script);
	if (strbuf_addstr(&needle, " >>") < 0)
		goto out;
	for (hit = strstr(text, needle.buf); hit; hit = strstr(hit + 1, needle.buf)) {
		for (bol = hit; bol > text && bol[-1] != '\n'; bol--)
			;
		if (bol < hit && strspn(bol, "0123456789") == (size_t)(hit - bol)) {
			*index = strtoul(bol, NULL, 10);
			rc = 0;
			break;
		}
	}
out:
	strbuf_release(&needle);
	return rc;
}

int slurm_gang_res(const struct executor_placement *defaults, const struct executor_task *t,
                   struct strvec *res)
{
	struct executor_placement pl = {0};
	int rc = -1;

	if (executor_placement_merge(defaults, t->place, &pl) == 0 &&
	    component_args(&pl, t, 1, t->time_limit_s, res) == 0)
		rc = 0;
	free((void *)pl.options);
	return rc;
}

int slurm_array_args(const struct strvec *res, size_t n, const char *outpat, const char *script,
                     struct strvec *av)
{
	int fail = 0;

	fail |= strvec_push(av, "sbatch");
	fail |= strvec_push(av, "--parsable");
	/* one name for every array: after a crash in the sbatch window, find_gang
	 * looks among the arrays for the one whose script runs the gang's */
	fail |= strvec_push(av, "--job-name=weir-array");
	fail |= strvec_push(av, "--export=ALL");
	fail |= strvec_pushf(av, "--output=%s", outpat);
	fail |= strvec_push(av, "--open-mode=append");
	fail |= strvec_pushf(av, "--array=0-%zu", n - 1);
	for (size_t i = 0; i < res->n; i++)
		fail |= strvec_push(av, res->v[i]);
	fail |= strvec_push(av, script);
	return fail ? -1 : 0;
}

int slurm_array_argv(const struct executor_placement *defaults, const struct executor_task *task,
                     size_t n, const char *outpat, const char *script, struct strvec *av,
                     struct weir_error *err)
{
	struct strvec res = STRVEC_INIT;
	int rc = 0;

	if (n == 0)
		return weir_error_set(err, WEIR_E_INVALID, "an empty array");
	if (slurm_gang_res(defaults, task, &res) < 0 ||
	    slurm_array_args(&res, n, outpat, script, av) < 0)
		rc = weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	strvec_release(&res);
	return rc;
}
