/* slurm_watch.c: following submitted jobs with squeue (every POLL_MS while
 * one is not over) to the end Slurm gives them, and finding a job whose
 * sbatch answered no one (the server died in between) by its name. */
#include "exec/slurm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fs.h"
#include "lib/grow.h"
#include "lib/log.h"

#define POLL_MS 1000

static bool state_final(const char *s)
{
	static const char *const live[] = {
	    "PENDING",       "RUNNING",     "SUSPENDED",   "COMPLETING", "CONFIGURING",
	    "RESIZING",      "REQUEUED",    "SIGNALING",   "STAGE_OUT",  "STOPPED",
	    "RESV_DEL_HOLD", "REQUEUE_FED", "REQUEUE_HOLD"};
	for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
		if (!strcmp(s, live[i]))
			return false;
	return true;
}

enum executor_gang_event slurm_end_of(const char *slurm_id, const char *state, const char *reason,
                                      const char *nodes, bool by_weir, char *out, size_t size)
{
	const char *on = nodes && *nodes ? nodes : "a node";

	if (!strcmp(state, "OUT_OF_MEMORY")) {
		snprintf(out, size, "OOMKilled (Slurm OUT_OF_MEMORY)");
		return EXECUTOR_GANG_OOM;
	}
	if (!strcmp(state, "TIMEOUT")) {
		snprintf(out, size, "timeout: Slurm time limit");
		return EXECUTOR_GANG_TIME_LIMIT;
	}
	if (!strcmp(state, "DEADLINE")) {
		snprintf(out, size, "timeout: Slurm deadline");
		return EXECUTOR_GANG_TIME_LIMIT;
	}
	if (!strcmp(state, "NODE_FAIL")) {
		snprintf(out, size, "node failure: %s", on);
		return EXECUTOR_GANG_ENDED;
	}
	if (!strcmp(state, "BOOT_FAIL")) {
		snprintf(out, size, "node failure: %s did not boot (Slurm BOOT_FAIL)", on);
		return EXECUTOR_GANG_ENDED;
	}
	if (!strcmp(state, "PREEMPTED")) {
		snprintf(out, size, "preempted by Slurm");
		return EXECUTOR_GANG_ENDED;
	}
	if (!strcmp(state, "CANCELLED") && !by_weir) {
		snprintf(out, size, "cancelled outside weir (Slurm job %s CANCELLED)", slurm_id);
		return EXECUTOR_GANG_CANCELLED;
	}
	snprintf(out, size, "Slurm job %s %s%s%s", slurm_id, state, reason[0] ? ": " : "", reason);
	return EXECUTOR_GANG_ENDED;
}

bool slurm_id_covers(const char *shown, const char *ours)
{
	const char *us = strchr(ours, '_');
	size_t base;
	char *end;

	if (!strcmp(shown, ours))
		return true;
	if (!us) {
		/* a heterogeneous job shows as ID+0, ID+1, ...: its first line speaks */
		base = strlen(ours);
		return !strncmp(shown, ours, base) && shown[base] == '+';
	}
	/* array elements not split off yet show collapsed: ID_[0-3,7,9-11%4] */
	base = (size_t)(us - ours) + 1;
	if (strncmp(shown, ours, base) || shown[base] != '[')
		return false;
	errno = 0;
	unsigned long want = strtoul(us + 1, &end, 10);
	if (errno || end == us + 1 || *end)
		return false;
	for (const char *p = shown + base + 1; *p && *p != ']' && *p != '%';) {
		unsigned long lo = strtoul(p, &end, 10), hi = lo, step = 1;
		if (end == p)
			return false;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			if (end == p + 1)
				return false;
			p = end;
		}
		if (*p == ':') {
			step = strtoul(p + 1, &end, 10);
			if (end == p + 1 || step == 0)
				return false;
			p = end;
		}
		if (want >= lo && want <= hi && (want - lo) % step == 0)
			return true;
		if (*p == ',')
			p++;
		else if (*p && *p != ']' && *p != '%')
			return false;
	}
	return false;
}

/* One line of `squeue -o '%i %T %r|%N'`, cut in place. */
struct sq_line {
	const char *id, *state, *reason;
};

static size_t sq_parse(char *out, struct sq_line **lines)
{
	size_t n = 0, cap = 0;

	*lines = NULL;
	for (char *line = out; line && *line;) {
		char *eol = strchr(line, '\n'), *sp1, *sp2;
		if (eol)
			*eol = '\0';
		sp1 = strchr(line, ' ');
		sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
		if (sp1) {
			if (ALLOC_GROW(*lines, n + 1, cap) < 0)
				break;
			*sp1 = '\0';
			if (sp2)
				*sp2 = '\0';
			(*lines)[n++] = (struct sq_line){line, sp1 + 1, sp2 ? sp2 + 1 : ""};
		}
		line = eol ? eol + 1 : NULL;
	}
	return n;
}

static void squeue_done(struct slurm_executor *sx, struct cmd *c)
{
	struct sjob *j, *next;
	struct sq_line *lines = NULL;
	size_t n_lines;

	sx->polling = false;
	if (c->exit_status != 0 || c->term_signal || c->truncated) {
		char why[256];
		slurm_cmd_complaint(c, why, sizeof why);
		/* a listing cut short would make the jobs after the cut look gone */
		log_warn("squeue: %s",
		         c->truncated ? "its listing was too long to read whole" : why);
		slurm_poll_arm(sx);
		return;
	}
	/* parsed once: with an array of many elements, as many lines as jobs */
	n_lines = sq_parse(c->out_text.buf, &lines);
	for (j = sx->jobs; j; j = next) {
		char state[32] = "", reason[128] = "", *nodes = NULL;
		bool seen = false;

		next = j->next;
		if (!j->slurm_id[0])
			continue;
		for (size_t i = 0; i < n_lines; i++)
			if (slurm_id_covers(lines[i].id, j->slurm_id)) {
				snprintf(state, sizeof state, "%s", lines[i].state);
				snprintf(reason, sizeof reason, "%s", lines[i].reason);
				seen = true;
				break;
			}
		/* "%r|%N": the node list after the last bar */
		if (seen && (nodes = strrchr(reason, '|')) != NULL)
			*nodes++ = '\0';
		if (!seen) {
			snprintf(state, sizeof state, "GONE");
			snprintf(reason, sizeof reason, "no longer known to Slurm");
		}
		if (!strcmp(reason, "None"))
			reason[0] = '\0';
		if (!state_final(state)) {
			if (!strcmp(state, "PENDING")) {
				if (strcmp(j->state, state) || strcmp(j->reason, reason)) {
					snprintf(j->reason, sizeof j->reason, "%s", reason);
					slurm_emit(sx, j, EXECUTOR_GANG_PENDING, reason);
				}
			} else if (!strcmp(state, "RUNNING") && strcmp(j->state, "RUNNING")) {
				slurm_emit(sx, j, EXECUTOR_GANG_RUNNING, "");
			}
			snprintf(j->state, sizeof j->state, "%s", state);
			continue;
		}
		char how[200];
		enum executor_gang_event ev =
		    slurm_end_of(j->slurm_id, state, reason, nodes ? nodes : "", j->cancel_sent,
		                 how, sizeof how);
		slurm_emit(sx, j, ev, how);
		sjob_remove(sx, j);
	}
	free(lines);
	slurm_poll_arm(sx);
}

static void on_poll(uv_timer_t *t)
{
	struct slurm_executor *sx = t->data;
	struct weir_error err = {0};
	/* -r: an array's elements one per line, pending ones too */
	char *argv[] = {"squeue", "--me", "-h", "-r", "-t", "all", "-o", "%i %T %r|%N", NULL};

	if (sx->polling)
		return;
	if (slurm_cmd_run(sx, argv, squeue_done, 0, 0, &err) < 0) {
		log_warn("%s", err.msg);
		slurm_poll_arm(sx);
		return;
	}
	sx->polling = true;
}

void slurm_poll_arm(struct slurm_executor *sx)
{
	for (struct sjob *j = sx->jobs; j; j = j->next)
		if (j->slurm_id[0]) {
			if (!sx->polling)
				uv_timer_start(&sx->poll, on_poll, POLL_MS, 0);
			return;
		}
}

/* ---- finding a job whose sbatch answered no one (a crash in between) ---- */

static int find_run(struct slurm_executor *sx, struct sjob *j, struct weir_error *err);

static void found(struct slurm_executor *sx, struct sjob *j)
{
	free(j->script);
	j->script = NULL;
	slurm_emit(sx, j, EXECUTOR_GANG_SUBMITTED, "");
	if (j->cancel_wanted)
		sjob_cancel(sx, j);
	slurm_poll_arm(sx);
}

/* Among squeue's "ID_I|COMMAND" lines of arrays, the one whose script (read
 * back: weir wrote it) runs j's own script: sets j's id to that element. */
static bool array_find(struct sjob *j, const char *out)
{
	char last[4096] = "";

	for (const char *line = out; line && *line;) {
		const char *bar = strchr(line, '|'), *eol = strchr(line, '\n');
		const char *us = bar ? memchr(line, '_', (size_t)(bar - line)) : NULL;
		size_t cl = bar ? (eol ? (size_t)(eol - bar - 1) : strlen(bar + 1)) : 0;
		const char *start = line;
		char path[4096], *text;
		size_t idx, len;

		line = eol ? eol + 1 : NULL;
		if (!us || us == start || (eol && bar > eol) || cl == 0 || cl >= sizeof path)
			continue;
		snprintf(path, sizeof path, "%.*s", (int)cl, bar + 1);
		if (!strcmp(path, last)) /* each element of one array names the same script */
			continue;
		snprintf(last, sizeof last, "%s", path);
		text = fs_read_file(path, &len, NULL);
		if (!text)
			continue;
		int rc = slurm_array_index(text, j->script, &idx);
		free(text);
		if (rc == 0 && (size_t)(us - start) + 24 < sizeof j->slurm_id) {
			snprintf(j->slurm_id, sizeof j->slurm_id, "%.*s_%zu", (int)(us - start),
			         start, idx);
			return true;
		}
	}
	return false;
}

static void find_done(struct slurm_executor *sx, struct cmd *c)
{
	struct sjob *j = sjob_find(sx, c->job_id, c->attempt);
	struct weir_error err = {0};
	char why[256];
	const char *line;

	if (!j || !j->script)
		return;
	if (c->exit_status != 0 || c->term_signal) {
		slurm_cmd_complaint(c, why, sizeof why);
		log_warn("job %lld: squeue: %s", (long long)j->job_id, why);
		/* not knowing is not "none": ask again, a few times */
		if (++j->find_tries < 5 && find_run(sx, j, &err) == 0)
			return;
		snprintf(why, sizeof why, "cannot ask Slurm for job weir-%lld-%d: %s",
		         (long long)j->job_id, j->attempt, err.msg[0] ? err.msg : "squeue failed");
		slurm_emit(sx, j, EXECUTOR_GANG_ENDED, why);
		sjob_remove(sx, j);
		return;
	}
	/* "ID|COMMAND" per job of that name: ours is the one that runs our script,
	 * or the element of an array (weir-array) whose script runs it */
	if (array_find(j, c->out_text.buf)) {
		found(sx, j);
		return;
	}
	for (line = c->out_text.buf; line && *line;) {
		const char *bar = strchr(line, '|'), *eol = strchr(line, '\n');
		size_t cl = eol ? (size_t)(eol - bar - 1) : bar ? strlen(bar + 1) : 0;
		if (bar && (!eol || bar < eol) && cl == strlen(j->script) &&
		    !strncmp(bar + 1, j->script, cl) && bar > line &&
		    (size_t)(bar - line) < sizeof j->slurm_id) {
			size_t il = strcspn(line, "+|"); /* a heterogeneous job: ID+k */
			snprintf(j->slurm_id, sizeof j->slurm_id, "%.*s", (int)il, line);
			found(sx, j);
			return;
		}
		line = eol ? eol + 1 : NULL;
	}
	snprintf(why, sizeof why,
	         "no Slurm job weir-%lld-%d: the server stopped before sbatch answered",
	         (long long)j->job_id, j->attempt);
	slurm_emit(sx, j, EXECUTOR_GANG_ENDED, why);
	sjob_remove(sx, j);
}

static int find_run(struct slurm_executor *sx, struct sjob *j, struct weir_error *err)
{
	char name[80];
	/* -r: an array's elements one per line, so that its id is ID_I */
	char *argv[] = {"squeue", "--me", "-h", "-r", "-t", "all", name, "-o", "%i|%o", NULL};

	snprintf(name, sizeof name, "--name=weir-%lld-%d,weir-array", (long long)j->job_id,
	         j->attempt);
	return slurm_cmd_run(sx, argv, find_done, j->job_id, j->attempt, err);
}

int slurm_find_gang(struct executor *ex, int64_t job_id, int attempt, const char *log_path,
                    struct weir_error *err)
{
	struct slurm_executor *sx = (struct slurm_executor *)ex;
	struct sjob *j;
	char *dir;

	if (sjob_find(sx, job_id, attempt))
		return 0;
	j = calloc(1, sizeof *j);
	dir = slurm_dir_of(log_path);
	if (!j || !dir || asprintf(&j->script, "%s/slurm-%d.sh", dir, attempt) < 0) {
		free(j);
		free(dir);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	free(dir);
	j->job_id = job_id;
	j->attempt = attempt;
	if (sjob_add(sx, j) < 0) {
		free(j->script);
		free(j);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	if (find_run(sx, j, err) < 0) {
		sjob_remove(sx, j);
		return -1;
	}
	return 0;
}
