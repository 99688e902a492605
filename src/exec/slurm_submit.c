/* slurm_submit.c: gangs on their way to sbatch: batches (a gang of many
 * tasks, or one-task gangs of the same settings as one job array), at most
 * SBATCH_MAX sbatch processes at once, sbatch's answers, and the retry while
 * Slurm is busy. */
#include "exec/slurm_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fs.h"
#include "lib/grow.h"
#include "lib/log.h"
#include "lib/strbuf.h"

/* sbatch processes at once: more only compete with slurmctld for the CPUs */
#define SBATCH_MAX 4
/* one-task gangs in one array: under Slurm's default MaxArraySize (1001) */
#define ARRAY_MAX 1000
/* sbatch told us Slurm is busy (MaxJobCount reached, the controller overloaded):
 * the same submission again after this long, doubling up to RETRY_MAX_MS */
#define RETRY_FIRST_MS 2000
#define RETRY_MAX_MS 60000

static void sbatch_slot_free(struct slurm_executor *sx);
static void on_flush(uv_timer_t *h);
static void batch_later(struct slurm_executor *sx, struct cmd *c, const char *why);

bool slurm_sbatch_busy(const char *why)
{
	return strstr(why, "Resource temporarily unavailable") ||
	       strstr(why, "temporarily unable to accept job");
}

static void sbatch_done(struct slurm_executor *sx, struct cmd *c)
{
	struct sjob *j = sjob_find(sx, c->job_id, c->attempt);
	char why[512];
	const char *semi;

	sbatch_slot_free(sx);
	if (!j)
		return;
	if (c->exit_status != 0 || c->term_signal || !c->out_text.len) {
		slurm_cmd_complaint(c, why, sizeof why);
		if (slurm_sbatch_busy(why)) {
			batch_later(sx, c, why);
			return;
		}
		slurm_emit(sx, j, EXECUTOR_GANG_REJECTED, why);
		sjob_remove(sx, j);
		return;
	}
	sx->retry_ms = 0;
	/* --parsable: "ID" or "ID;CLUSTER" */
	semi = strpbrk(c->out_text.buf, ";\n");
	snprintf(j->slurm_id, sizeof j->slurm_id, "%.*s",
	         (int)(semi ? (size_t)(semi - c->out_text.buf) : c->out_text.len), c->out_text.buf);
#ifdef WEIR_TEST_HOOKS
	/* test hook (developer builds only): the server dies as if killed after
	 * Slurm took the job and before the id is stored (the crash window that
	 * find_gang closes) */
	if (getenv("WEIR_TEST_DIE_AFTER_SBATCH"))
		raise(SIGKILL);
#endif
	slurm_emit(sx, j, EXECUTOR_GANG_SUBMITTED, "");
	if (j->cancel_wanted)
		sjob_cancel(sx, j);
	slurm_poll_arm(sx);
}

void slurm_batch_free(struct batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		free(b->m[i].script);
		free(b->m[i].dir);
	}
	free(b->m);
	free(b->key);
	free(b->array_script);
	strvec_release(&b->av);
	strvec_release(&b->res);
	free(b);
}

/* sbatch did not take the batch: each of its gangs is told so. */
static void batch_refused(struct slurm_executor *sx, struct batch *b, const char *why)
{
	for (size_t i = 0; i < b->n; i++) {
		struct sjob *j = sjob_find(sx, b->m[i].job_id, b->m[i].attempt);
		if (j) {
			slurm_emit(sx, j, EXECUTOR_GANG_REJECTED, why);
			sjob_remove(sx, j);
		}
	}
}

static void sbatch_slot_free(struct slurm_executor *sx)
{
	sx->sbatch_running--;
	if (sx->batches)
		uv_timer_start(&sx->flush, on_flush, 0, 0);
}

static void array_done(struct slurm_executor *sx, struct cmd *c)
{
	struct batch *b = c->batch;
	char why[512], id[32];
	const char *semi;

	sbatch_slot_free(sx);
	if (c->exit_status != 0 || c->term_signal || !c->out_text.len) {
		slurm_cmd_complaint(c, why, sizeof why);
		if (slurm_sbatch_busy(why))
			batch_later(sx, c, why);
		else
			batch_refused(sx, b, why); /* the batch goes with the command */
		return;
	}
	sx->retry_ms = 0;
	semi = strpbrk(c->out_text.buf, ";\n");
	snprintf(id, sizeof id, "%.*s",
	         (int)(semi ? (size_t)(semi - c->out_text.buf) : c->out_text.len), c->out_text.buf);
#ifdef WEIR_TEST_HOOKS
	/* test hook: as in sbatch_done (the crash window that find_gang closes) */
	if (getenv("WEIR_TEST_DIE_AFTER_SBATCH"))
		raise(SIGKILL);
#endif
	for (size_t i = 0; i < b->n; i++) {
		struct sjob *j = sjob_find(sx, b->m[i].job_id, b->m[i].attempt);
		if (!j)
			continue;
		snprintf(j->slurm_id, sizeof j->slurm_id, "%s_%zu", id, i);
		slurm_emit(sx, j, EXECUTOR_GANG_SUBMITTED, "");
		if (j->cancel_wanted)
			sjob_cancel(sx, j);
	}
	slurm_poll_arm(sx);
}

/* Runs the batch's sbatch: its gang's own for one gang, else an array whose
 * element I runs member I's script.  The batch is gone when this returns
 * (owned by the command until it answers, or freed). */
static void batch_submit(struct slurm_executor *sx, struct batch *b)
{
	struct weir_error err = {0};
	struct strvec av = STRVEC_INIT;
	char *text = NULL, *outpat = NULL;
	const char **scripts = NULL, **dirs = NULL;
	int fd = -1;

	if (b->n == 0) { /* a gang that could not join (out of memory) */
		slurm_batch_free(b);
		return;
	}
	if (b->n == 1) {
		/* the command keeps the batch: Slurm may be busy and it goes again */
		if (slurm_cmd_spawn(sx, b->av.v, sbatch_done, b->m[0].job_id, b->m[0].attempt, b,
		                    &err) < 0) {
			batch_refused(sx, b, err.msg);
			slurm_batch_free(b);
		} else {
			sx->sbatch_running++;
		}
		return;
	}
	scripts = calloc(b->n, sizeof *scripts);
	dirs = calloc(b->n, sizeof *dirs);
	if (!scripts || !dirs)
		goto oom;
	for (size_t i = 0; i < b->n; i++) {
		scripts[i] = b->m[i].script;
		dirs[i] = b->m[i].dir;
	}
	text = slurm_array_script(scripts, dirs, b->n);
	free(b->array_script); /* a batch submitted again may have grown */
	b->array_script = NULL;
	if (!text ||
	    asprintf(&b->array_script, "%s/slurm-array-%d.sh", b->m[0].dir, b->m[0].attempt) < 0 ||
	    asprintf(&outpat, "%s/slurm-array-%%A_%%a.out", b->m[0].dir) < 0) {
		b->array_script = outpat = NULL;
		goto oom;
	}
	fd = open(b->array_script, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		weir_error_set(&err, WEIR_E_INTERNAL, "%s: cannot write the array's script: %s",
		               b->array_script, strerror(errno));
		goto fail;
	}
	if (slurm_array_args(&b->res, b->n, outpat, b->array_script, &av) < 0)
		goto oom;
	if (slurm_cmd_spawn(sx, av.v, array_done, 0, 0, b, &err) < 0)
		goto fail;
	sx->sbatch_running++;
	b = NULL; /* the command's now */
	goto out;
oom:
	weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
fail:
	batch_refused(sx, b, err.msg);
out:
	if (fd >= 0)
		close(fd);
	slurm_batch_free(b);
	strvec_release(&av);
	free(text);
	free(outpat);
	free(scripts);
	free(dirs);
}

/* The time to try Slurm again is up: the batches that waited go back in
 * line, oldest first, ahead of newer ones. */
static void on_retry(uv_timer_t *h)
{
	struct slurm_executor *sx = h->data;
	struct batch *back = NULL;

	while (sx->later) { /* `later` is newest first: turn it round */
		struct batch *b = sx->later;
		sx->later = b->next;
		b->next = back;
		back = b;
	}
	if (!back)
		return;
	struct batch *last = back;
	while (last->next)
		last = last->next;
	last->next = sx->batches;
	if (!sx->batches)
		sx->batches_tail = &last->next;
	sx->batches = back;
	uv_timer_start(&sx->flush, on_flush, 0, 0);
}

/* sbatch said Slurm is busy: the command's batch waits (each of its gangs
 * shows why, as a pending reason) and is submitted again, later each time
 * while Slurm stays busy. */
static void batch_later(struct slurm_executor *sx, struct cmd *c, const char *why)
{
	struct batch *b = c->batch;
	char reason[640];

	c->batch = NULL; /* ours again, not freed with the command */
	if (!b)
		return;
	if (!sx->retry_ms)
		sx->retry_ms = RETRY_FIRST_MS;
	snprintf(reason, sizeof reason, "Slurm is busy, submitting again in %ds (%s)",
	         sx->retry_ms / 1000, why);
	for (size_t i = 0; i < b->n; i++) {
		struct sjob *j = sjob_find(sx, b->m[i].job_id, b->m[i].attempt);
		if (j)
			slurm_emit(sx, j, EXECUTOR_GANG_PENDING, reason);
	}
	b->next = sx->later;
	sx->later = b;
	if (!uv_is_active((uv_handle_t *)&sx->retry))
		uv_timer_start(&sx->retry, on_retry, (uint64_t)sx->retry_ms, 0);
	sx->retry_ms = sx->retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : sx->retry_ms * 2;
}

/* At the next loop turn (a 0 ms timer: whatever callback started a gang,
 * the gangs of the whole turn are in): submit the oldest batches while
 * sbatch slots are free (the rest wait, and later one-task gangs of the same
 * settings still join them). */
static void on_flush(uv_timer_t *h)
{
	struct slurm_executor *sx = h->data;

	while (sx->batches && sx->sbatch_running < SBATCH_MAX) {
		struct batch *b = sx->batches;
		sx->batches = b->next;
		if (!sx->batches)
			sx->batches_tail = &sx->batches;
		b->next = NULL;
		batch_submit(sx, b);
	}
}

int slurm_batch_add(struct slurm_executor *sx, const struct executor_task *tasks, size_t n,
                    const struct executor_placement *defaults, struct strvec *av,
                    const char *script, const char *dir, struct weir_error *err)
{
	struct strvec res = STRVEC_INIT;
	struct batch *b = NULL;
	char *key = NULL;
	int fail = 0;

	if (n == 1) {
		struct strbuf kb = STRBUF_INIT;
		fail |= slurm_gang_res(defaults, &tasks[0], &res);
		for (size_t i = 0; i < res.n && !fail; i++)
			strbuf_addf(&kb, "%s\n", res.v[i]);
		key = fail ? NULL : strbuf_detach(&kb, NULL);
		strbuf_release(&kb);
		if (!key)
			goto oom;
		for (b = sx->batches; b; b = b->next)
			if (b->key && !strcmp(b->key, key) && b->n < ARRAY_MAX)
				break;
	}
	if (!b) {
		b = calloc(1, sizeof *b);
		if (!b)
			goto oom;
		b->key = key;
		b->res = res;
		b->av = *av;
		key = NULL;
		res = (struct strvec)STRVEC_INIT;
		*av = (struct strvec)STRVEC_INIT;
		*sx->batches_tail = b;
		sx->batches_tail = &b->next;
	}
	if (ALLOC_GROW(b->m, b->n + 1, b->cap) < 0)
		goto oom; /* b stays, as it was */
	b->m[b->n] = (struct batch_member){.job_id = tasks[0].job_id,
	                                   .attempt = tasks[0].attempt,
	                                   .script = strdup(script),
	                                   .dir = strdup(dir)};
	if (!b->m[b->n].script || !b->m[b->n].dir) {
		free(b->m[b->n].script);
		free(b->m[b->n].dir);
		goto oom;
	}
	b->n++;
	if (!uv_is_active((uv_handle_t *)&sx->flush))
		uv_timer_start(&sx->flush, on_flush, 0, 0);
	strvec_release(&res);
	free(key);
	return 0;
oom:
	strvec_release(&res);
	free(key);
	return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
}
