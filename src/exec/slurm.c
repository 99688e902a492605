/* slurm.c: the slurm backend: sbatch, squeue and scancel run with uv_spawn.
 *
 * Owns one `sjob` per gang handed to Slurm (from the sbatch until squeue
 * shows its end), one `cmd` per command in flight (a process and its two
 * output pipes), the batches of gangs waiting for sbatch (one-task gangs of
 * the same settings become one job array) and the poll and flush timers.
 * Everything it learns goes to the job manager through the executor_gang_fn;
 * it decides nothing.
 */
#include "exec/slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "lib/str.h"
#include "lib/strvec.h"

#define POLL_MS 1000
/* what a command may print: squeue -t all lists every job of ours Slurm still keeps
 * (MinJobAge), one line per array element, ~40 bytes each */
#define CMD_OUT_MAX (64 * 1024 * 1024)
#define SLURM_TIME_MARGIN_S 60
/* sbatch processes at once: more only compete with slurmctld for the CPUs */
#define SBATCH_MAX 4
/* one-task gangs in one array: under Slurm's default MaxArraySize (1001) */
#define ARRAY_MAX 1000
/* sbatch told us Slurm is busy (MaxJobCount reached, the controller overloaded):
 * the same submission again after this long, doubling up to RETRY_MAX_MS */
#define RETRY_FIRST_MS 2000
#define RETRY_MAX_MS 60000


struct slurm_executor;

struct sjob {
	int64_t job_id;
	int attempt;
	char slurm_id[32]; /* "" until sbatch answered */
	char state[32];    /* last state squeue showed */
	char reason[128];  /* last pending reason told */
	bool cancel_wanted;
	bool cancel_sent;
	char *script;   /* while looking for it by name after a restart (find_gang) */
	int find_tries; /* squeue failures while looking */
	struct sjob *next;
};

/* One sbatch to run: a gang of many tasks, or one-task gangs with the same
 * sbatch settings (`key`) gathered into a job array while they wait for the
 * end of the loop turn or a free sbatch slot. */
struct batch_member {
	int64_t job_id;
	int attempt;
	char *script; /* the gang's own batch script (the array element runs it) */
	char *dir;    /* its logs directory */
};

struct batch {
	char *key;        /* NULL: a gang of many tasks, never joined */
	struct strvec av; /* sbatch's argv for the first member alone */
	struct strvec res; /* its resource and placement arguments (an array's) */
	struct batch_member *m;
	size_t n, cap;
	char *array_script; /* once written */
	struct batch *next;
};

struct cmd;
typedef void (*cmd_done_fn)(struct slurm_executor *sx, struct cmd *c);

struct cmd {
	uv_process_t proc;
	uv_pipe_t out, err;
	struct slurm_executor *sx; /* NULL once the executor is gone */
	cmd_done_fn done;
	int64_t job_id;
	int attempt;
	struct batch *batch; /* an array's sbatch: the gangs it submits */
	char *out_buf, *err_buf;
	size_t out_len, err_len;
	int64_t exit_status;
	int term_signal;
	bool truncated; /* it printed more than CMD_OUT_MAX: the rest was dropped */
	int open;    /* handles not yet closed */
	int pending; /* exit and the two EOFs still to come */
	struct cmd *next;
};

struct slurm_executor {
	struct executor base;
	uv_loop_t *loop;
	char *partition, *account, *qos, *time;
	char **extra;
	size_t n_extra;
	char *launcher;
	bool lean;
	char *env_server, *env_token;
	executor_gang_fn on_gang;
	void *arg;
	struct sjob *jobs;
	struct cmd *cmds;
	uv_timer_t poll;
	bool polling; /* a squeue is in flight */
	struct batch *batches, **batches_tail; /* waiting for sbatch, oldest first */
	uv_timer_t flush; /* 0 ms: submits them once this loop turn is over */
	struct batch *later; /* refused because Slurm was busy: submitted again */
	uv_timer_t retry;    /* when `later` goes back to `batches` */
	int retry_ms;        /* the next wait; 0 after an sbatch Slurm took */
	int sbatch_running;
	int handles; /* poll, flush and retry, until closed */
};

int slurm_sh_quote(char *out, size_t size, const char *s)
{
	size_t n = strlen(out);

	if (n + 2 >= size)
		return -1;
	out[n++] = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			if (n + 5 >= size)
				return -1;
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else {
			if (n + 2 >= size)
				return -1;
			out[n++] = *s;
		}
	}
	out[n++] = '\'';
	out[n] = '\0';
	return 0;
}

static void emit(struct slurm_executor *sx, const struct sjob *j, enum executor_gang_event ev,
                 const char *reason)
{
	if (sx->on_gang)
		sx->on_gang(sx->arg, j->job_id, j->attempt, ev, j->slurm_id, reason ? reason : "");
}

static struct sjob *sjob_find(struct slurm_executor *sx, int64_t job_id, int attempt)
{
	for (struct sjob *j = sx->jobs; j; j = j->next)
		if (j->job_id == job_id && j->attempt == attempt)
			return j;
	return NULL;
}

static void sjob_remove(struct slurm_executor *sx, struct sjob *j)
{
	for (struct sjob **p = &sx->jobs; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			free(j->script);
			free(j);
			return;
		}
}

/* ---- running a command ---- */

static void batch_free(struct batch *b);

static void cmd_closed(uv_handle_t *h)
{
	struct cmd *c = h->data;

	if (--c->open > 0)
		return;
	batch_free(c->batch);
	free(c->out_buf);
	free(c->err_buf);
	free(c);
}

static void cmd_finish(struct cmd *c)
{
	struct slurm_executor *sx = c->sx;

	if (--c->pending > 0)
		return;
	if (sx) {
		for (struct cmd **p = &sx->cmds; *p; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
		if (c->done)
			c->done(sx, c);
	}
	uv_close((uv_handle_t *)&c->proc, cmd_closed);
	uv_close((uv_handle_t *)&c->out, cmd_closed);
	uv_close((uv_handle_t *)&c->err, cmd_closed);
}

static void cmd_alloc(uv_handle_t *h, size_t want, uv_buf_t *buf)
{
	static char scratch[65536];
	(void)h;
	(void)want;
	buf->base = scratch;
	buf->len = sizeof scratch;
}

static void cmd_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct cmd *c = s->data;
	bool is_out = s == (uv_stream_t *)&c->out;
	char **dst = is_out ? &c->out_buf : &c->err_buf;
	size_t *len = is_out ? &c->out_len : &c->err_len;

	if (n < 0) {
		uv_read_stop(s);
		cmd_finish(c);
		return;
	}
	if (n == 0)
		return;
	char *p = *len + (size_t)n > CMD_OUT_MAX ? NULL : realloc(*dst, *len + (size_t)n + 1);
	if (!p) {
		c->truncated = true;
		return;
	}
	memcpy(p + *len, buf->base, (size_t)n);
	*len += (size_t)n;
	p[*len] = '\0';
	*dst = p;
}

static void cmd_exit(uv_process_t *p, int64_t exit_status, int term_signal)
{
	struct cmd *c = p->data;
	c->exit_status = exit_status;
	c->term_signal = term_signal;
	cmd_finish(c);
}

/* Runs argv[0] (found on PATH); `done` gets its exit and output. */
static int cmd_spawn(struct slurm_executor *sx, char **argv, cmd_done_fn done, int64_t job_id,
                     int attempt, struct batch *batch, struct weir_error *err)
{
	struct cmd *c = calloc(1, sizeof *c);
	uv_process_options_t opt;
	uv_stdio_container_t stdio[3];
	char **env = executor_launcher_env(sx->env_server, sx->env_token);
	int r;

	if (!c || !env) {
		free(c);
		free(env);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	c->sx = sx;
	c->done = done;
	c->job_id = job_id;
	c->attempt = attempt;
	c->batch = batch;
	uv_pipe_init(sx->loop, &c->out, 0);
	uv_pipe_init(sx->loop, &c->err, 0);
	c->out.data = c->err.data = c->proc.data = c;
	memset(&opt, 0, sizeof opt);
	stdio[0].flags = UV_IGNORE;
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&c->out;
	stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[2].data.stream = (uv_stream_t *)&c->err;
	opt.file = argv[0];
	opt.args = argv;
	opt.env = env;
	opt.stdio = stdio;
	opt.stdio_count = 3;
	opt.exit_cb = cmd_exit;
	r = uv_spawn(sx->loop, &c->proc, &opt);
	free(env);
	c->open = 3;
	if (r != 0) {
		c->sx = NULL;
		c->batch = NULL; /* still the caller's */
		uv_close((uv_handle_t *)&c->proc, cmd_closed);
		uv_close((uv_handle_t *)&c->out, cmd_closed);
		uv_close((uv_handle_t *)&c->err, cmd_closed);
		return weir_error_set(err, WEIR_E_INTERNAL, "cannot run %s: %s", argv[0],
		                      uv_strerror(r));
	}
	c->pending = 3;
	uv_read_start((uv_stream_t *)&c->out, cmd_alloc, cmd_read);
	uv_read_start((uv_stream_t *)&c->err, cmd_alloc, cmd_read);
	c->next = sx->cmds;
	sx->cmds = c;
	return 0;
}

static int cmd_run(struct slurm_executor *sx, char **argv, cmd_done_fn done, int64_t job_id,
                   int attempt, struct weir_error *err)
{
	return cmd_spawn(sx, argv, done, job_id, attempt, NULL, err);
}

/* The command's complaint, on one line, for a reason. */
static void cmd_complaint(const struct cmd *c, char *out, size_t size)
{
	const char *t = c->err_len ? c->err_buf : c->out_len ? c->out_buf : "";
	size_t k = 0;

	for (; *t && k + 1 < size; t++)
		out[k++] = (*t == '\n' || *t == '\r') ? ' ' : *t;
	while (k > 0 && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
	if (k == 0)
		snprintf(out, size, "exited %lld (signal %d)", (long long)c->exit_status,
		         c->term_signal);
}

/* ---- cancelling ---- */

static void scancel_done(struct slurm_executor *sx, struct cmd *c)
{
	char why[256];
	if (c->exit_status != 0 || c->term_signal) {
		struct sjob *j = sjob_find(sx, c->job_id, c->attempt);
		cmd_complaint(c, why, sizeof why);
		/* Someone cancelled it before us (its launchers got the SIGTERM,
		 * reported, and weir stopped the rest): the cancel was not weir's. */
		if (j && strstr(why, "already completing or completed")) {
			j->cancel_sent = false;
			return;
		}
		log_warn("job %lld: scancel: %s", (long long)c->job_id, why);
	}
}

static void sjob_cancel(struct slurm_executor *sx, struct sjob *j)
{
	struct weir_error err = {0};
	char *argv[] = {"scancel", j->slurm_id, NULL};

	if (j->cancel_sent)
		return;
	j->cancel_sent = true;
	if (cmd_run(sx, argv, scancel_done, j->job_id, j->attempt, &err) < 0)
		log_warn("job %lld: %s", (long long)j->job_id, err.msg);
}

/* ---- following jobs ---- */

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

static void poll_arm(struct slurm_executor *sx);

enum executor_gang_event slurm_end_of(const char *slurm_id, const char *state,
                                      const char *reason, const char *nodes, bool by_weir,
                                      char *out, size_t size)
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
	snprintf(out, size, "Slurm job %s %s%s%s", slurm_id, state, reason[0] ? ": " : "",
	         reason);
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
			if (n == cap) {
				struct sq_line *m = realloc(*lines, (cap = cap ? 2 * cap : 64) * sizeof *m);
				if (!m)
					break;
				*lines = m;
			}
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
		cmd_complaint(c, why, sizeof why);
		/* a listing cut short would make the jobs after the cut look gone */
		log_warn("squeue: %s", c->truncated ? "its listing was too long to read whole" : why);
		poll_arm(sx);
		return;
	}
	/* parsed once: with an array of many elements, as many lines as jobs */
	n_lines = c->out_buf ? sq_parse(c->out_buf, &lines) : 0;
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
					emit(sx, j, EXECUTOR_GANG_PENDING, reason);
				}
			} else if (!strcmp(state, "RUNNING") && strcmp(j->state, "RUNNING")) {
				emit(sx, j, EXECUTOR_GANG_RUNNING, "");
			}
			snprintf(j->state, sizeof j->state, "%s", state);
			continue;
		}
		char how[200];
		enum executor_gang_event ev =
		    slurm_end_of(j->slurm_id, state, reason, nodes ? nodes : "", j->cancel_sent,
		                 how, sizeof how);
		emit(sx, j, ev, how);
		sjob_remove(sx, j);
	}
	free(lines);
	poll_arm(sx);
}

static void on_poll(uv_timer_t *t)
{
	struct slurm_executor *sx = t->data;
	struct weir_error err = {0};
	/* -r: an array's elements one per line, pending ones too */
	char *argv[] = {"squeue", "--me", "-h", "-r", "-t", "all", "-o", "%i %T %r|%N", NULL};

	if (sx->polling)
		return;
	if (cmd_run(sx, argv, squeue_done, 0, 0, &err) < 0) {
		log_warn("%s", err.msg);
		poll_arm(sx);
		return;
	}
	sx->polling = true;
}

/* Polls again in a second while a submitted job of ours is not over. */
static void poll_arm(struct slurm_executor *sx)
{
	for (struct sjob *j = sx->jobs; j; j = j->next)
		if (j->slurm_id[0]) {
			if (!sx->polling)
				uv_timer_start(&sx->poll, on_poll, POLL_MS, 0);
			return;
		}
}

/* ---- submitting ---- */

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
	if (c->exit_status != 0 || c->term_signal || !c->out_len) {
		cmd_complaint(c, why, sizeof why);
		if (slurm_sbatch_busy(why)) {
			batch_later(sx, c, why);
			return;
		}
		emit(sx, j, EXECUTOR_GANG_REJECTED, why);
		sjob_remove(sx, j);
		return;
	}
	sx->retry_ms = 0;
	/* --parsable: "ID" or "ID;CLUSTER" */
	semi = strpbrk(c->out_buf, ";\n");
	snprintf(j->slurm_id, sizeof j->slurm_id, "%.*s",
	         (int)(semi ? (size_t)(semi - c->out_buf) : c->out_len), c->out_buf);
#ifdef WEIR_TEST_HOOKS
	/* test hook (developer builds only): the server dies as if killed after
	 * Slurm took the job and before the id is stored (the crash window that
	 * find_gang closes) */
	if (getenv("WEIR_TEST_DIE_AFTER_SBATCH"))
		raise(SIGKILL);
#endif
	emit(sx, j, EXECUTOR_GANG_SUBMITTED, "");
	if (j->cancel_wanted)
		sjob_cancel(sx, j);
	poll_arm(sx);
}

static int append(char **buf, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int append(char **buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	char *b = realloc(*buf, *len + (size_t)n + 1);
	if (!b) {
		free(p);
		return -1;
	}
	memcpy(b + *len, p, (size_t)n + 1);
	*len += (size_t)n;
	*buf = b;
	free(p);
	return 0;
}

static char *dir_of(const char *path)
{
	char *d = strdup(path);
	char *slash = d ? strrchr(d, '/') : NULL;
	if (slash && slash != d)
		*slash = '\0';
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

/* Tasks with the same resources share a component of the Slurm job; more
 * than one component makes it a heterogeneous job.  comp[i]: task i's
 * component; first[k]: a task of component k; count[k]: its tasks. */
struct components {
	size_t n;
	size_t *comp, *first, *count;
};

static int components_of(const struct executor_task *tasks, size_t n, struct components *c)
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

static void components_release(struct components *c)
{
	free(c->comp);
	free(c->first);
	free(c->count);
}

/* The launcher's command line on the node, for sh: `who` is "--role R --index
 * I" or "--tasks LIST"; the launcher listens on the node's first address,
 * which it finds itself (--host auto: no `hostname -I` process per task). */
static int launcher_line(struct slurm_executor *sx, const struct executor_task *t,
                         const char *who, char *inner, size_t size)
{
	int fail = 0;
	char num[96];

	snprintf(inner, size, "exec ");
	fail |= slurm_sh_quote(inner, size, sx->launcher);
	if (!sx->lean)
		str_append(inner, size, " launch");
	snprintf(num, sizeof num, " --job %lld ", (long long)t->job_id);
	str_append(inner, size, num);
	if (strlen(inner) + strlen(who) + 200 >= size)
		return -1;
	str_append(inner, size, who);
	snprintf(num, sizeof num, " --attempt %d", t->attempt);
	str_append(inner, size, num);
	str_append(inner, size, " --host auto");
	if (sx->base.log_to_server) {
		/* The launcher sends the program's output to the server, all of it
		 * before it reports the end; its own stderr goes with the step's to
		 * slurm-<id>.out. */
		str_append(inner, size, " --log-to-server");
	} else {
		/* log_transport: file: the launcher and its program append to the
		 * log on the shared file system themselves, so every byte is in it
		 * before the end is reported (srun's forwarding could still be
		 * flushing then). */
		str_append(inner, size, " >>");
		fail |= slurm_sh_quote(inner, size, t->log_path);
		str_append(inner, size, " 2>&1");
	}
	return fail;
}

static int role_index_words(const struct executor_task *t, char *who, size_t size)
{
	who[0] = '\0';
	str_append(who, size, "--role ");
	if (slurm_sh_quote(who, size, t->role) < 0)
		return -1;
	size_t n = strlen(who);
	snprintf(who + n, size - n, " --index %d", t->index);
	return 0;
}

/* "--tasks ROLE:I-J,...": the tasks of component k in SLURM_PROCID order,
 * runs of one role's consecutive indices as ranges. */
static char *tasks_words(const struct executor_task *tasks, size_t n, const struct components *c,
                         size_t k)
{
	char *s = NULL;
	size_t len = 0;
	int fail = append(&s, &len, "--tasks ");

	for (size_t i = 0; i < n && !fail; i++) {
		if (c->comp[i] != k)
			continue;
		size_t j = i;
		while (j + 1 < n && c->comp[j + 1] == k && !strcmp(tasks[j + 1].role, tasks[i].role) &&
		       tasks[j + 1].index == tasks[j].index + 1)
			j++;
		/* role names are identifiers ([a-z][a-z0-9_-]*): no quoting needed */
		fail |= append(&s, &len, "%s%s:%d", len > 8 ? "," : "", tasks[i].role,
		               tasks[i].index);
		if (j > i)
			fail |= append(&s, &len, "-%d", tasks[j].index);
		i = j;
	}
	if (fail) {
		free(s);
		return NULL;
	}
	return s;
}

static int srun_words(char **s, size_t *len, const struct executor_task *t,
                      const struct components *c, size_t k, size_t ntasks, bool one)
{
	int fail = append(s, len, "srun");
	if (c->n > 1)
		fail |= append(s, len, " --het-group=%zu", k);
	if (one)
		fail |= append(s, len, " --nodes=1 --ntasks=1 --exact");
	else
		fail |= append(s, len, " --ntasks=%zu", ntasks);
	fail |= append(s, len, " --cpus-per-task=%d --mem-per-cpu=%llu", t->vcores,
	               (unsigned long long)mem_per_cpu(t));
	if (t->gpus > 0)
		fail |= append(s, len, " --gpus-per-task=%d", t->gpus);
	fail |= append(s, len, " --kill-on-bad-exit=0");
	return fail;
}

/* The batch script.  One task: the batch step runs the launcher itself (it
 * already holds the task's CPUs, memory and GPUs; a step would only add its
 * start).  Logs over HTTP: one srun step per component, each of its tasks
 * a launcher that finds its task by SLURM_PROCID (one step starts much
 * sooner than many).  Logs to files: one step per task, each appending to
 * its own log. */
static char *batch_script(struct slurm_executor *sx, const struct executor_task *tasks, size_t n,
                          const struct components *c)
{
	char *s = NULL;
	size_t len = 0;
	int fail = 0;
	char inner[8192], outer[16384], who[512];

	fail |= append(&s, &len,
	               "#!/bin/sh\n"
	               "# weir job %lld, attempt %d: weir's launcher for each task on its node;\n"
	               "# it fetches the task's command from the server (WEIR_SERVER,\n"
	               "# WEIR_TOKEN come from the environment).\n",
	               (long long)tasks[0].job_id, tasks[0].attempt);
	if (n == 1) {
		fail |= role_index_words(&tasks[0], who, sizeof who);
		fail |= launcher_line(sx, &tasks[0], who, inner, sizeof inner);
		fail |= append(&s, &len, "%s\n", inner);
	} else if (sx->base.log_to_server) {
		for (size_t k = 0; k < c->n && !fail; k++) {
			/* the task list grows with the gang: buffers to fit */
			char *tw = tasks_words(tasks, n, c, k);
			size_t isz = (tw ? strlen(tw) : 0) + 8192, osz = 4 * isz + 16;
			char *in = malloc(isz), *out = malloc(osz);
			fail |= !tw || !in || !out;
			if (!fail) {
				out[0] = '\0';
				fail |= launcher_line(sx, &tasks[c->first[k]], tw, in, isz);
				fail |= slurm_sh_quote(out, osz, in);
				fail |= srun_words(&s, &len, &tasks[c->first[k]], c, k, c->count[k],
				                   false);
				fail |= append(&s, &len, " \\\n\t/bin/sh -c %s &\n", out);
			}
			free(tw);
			free(in);
			free(out);
		}
		fail |= append(&s, &len, "wait\n");
	} else {
		for (size_t i = 0; i < n && !fail; i++) {
			outer[0] = '\0';
			fail |= role_index_words(&tasks[i], who, sizeof who);
			fail |= launcher_line(sx, &tasks[i], who, inner, sizeof inner);
			fail |= slurm_sh_quote(outer, sizeof outer, inner);
			fail |= srun_words(&s, &len, &tasks[i], c, c->comp[i], 1, true);
			fail |= append(&s, &len, " \\\n\t/bin/sh -c %s &\n", outer);
		}
		fail |= append(&s, &len, "wait\n");
	}
	if (fail) {
		free(s);
		return NULL;
	}
	return s;
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
		fail |= component_args(pl, &tasks[c->first[k]], c->count[k], tasks[0].time_limit_s,
		                       av);
	}
	fail |= strvec_push(av, path);
	return fail ? -1 : 0;
}

int slurm_sbatch_argv(const struct executor_placement *defaults,
                      const struct executor_task *tasks, size_t n, const char *outpat,
                      const char *script, struct strvec *av, struct weir_error *err)
{
	struct components comps = {0};
	struct executor_placement pl = {0};
	int rc = -1;

	if (n == 0)
		return weir_error_set(err, WEIR_E_INVALID, "an empty gang");
	if (components_of(tasks, n, &comps) < 0 ||
	    executor_placement_merge(defaults, tasks[0].place, &pl) < 0 ||
	    sbatch_args(&pl, tasks, &comps, outpat, script, av) < 0)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	else
		rc = 0;
	free((void *)pl.options);
	components_release(&comps);
	return rc;
}

/* The executor's own defaults (`slurm:` of weir.yaml) as a placement. */
static void sx_defaults(const struct slurm_executor *sx, struct executor_placement *pl)
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
	char *s = NULL;
	size_t len = 0;
	int fail = 0;

	fail |= append(&s, &len,
	               "#!/bin/sh\n"
	               "# weir: a Slurm job array of one-task jobs; element I runs the batch\n"
	               "# script of its weir job, its output next to that job's logs.\n"
	               "case \"$SLURM_ARRAY_TASK_ID\" in\n");
	for (size_t i = 0; i < n && !fail; i++) {
		size_t sz = 2 * (strlen(scripts[i]) + strlen(dirs[i])) + 64;
		char *qs = calloc(1, sz), *qd = calloc(1, sz), *d = NULL;
		fail |= !qs || !qd || asprintf(&d, "%s/slurm-", dirs[i]) < 0;
		if (!fail) {
			fail |= slurm_sh_quote(qs, sz, scripts[i]);
			fail |= slurm_sh_quote(qd, sz, d);
			fail |= append(&s, &len,
			               "%zu) exec /bin/sh %s >>%s\"$SLURM_ARRAY_JOB_ID\"_%zu.out 2>&1 ;;\n",
			               i, qs, qd, i);
		}
		free(qs);
		free(qd);
		free(d);
	}
	fail |= append(&s, &len,
	               "*) echo \"weir: no job for array index $SLURM_ARRAY_TASK_ID\" >&2; exit 1 ;;\n"
	               "esac\n");
	if (fail) {
		free(s);
		return NULL;
	}
	return s;
}

int slurm_array_index(const char *text, const char *script, size_t *index)
{
	size_t sz = 2 * strlen(script) + 32;
	char *needle = calloc(1, sz);
	const char *hit, *bol;
	int rc = -1;

	if (!needle)
		return -1;
	snprintf(needle, sz, "%s", ") exec /bin/sh ");
	if (slurm_sh_quote(needle, sz, script) < 0 || strlen(needle) + 4 >= sz)
		goto out;
	str_append(needle, sz, " >>");
	for (hit = strstr(text, needle); hit; hit = strstr(hit + 1, needle)) {
		for (bol = hit; bol > text && bol[-1] != '\n'; bol--)
			;
		if (bol < hit && strspn(bol, "0123456789") == (size_t)(hit - bol)) {
			*index = strtoul(bol, NULL, 10);
			rc = 0;
			break;
		}
	}
out:
	free(needle);
	return rc;
}

/* A one-task gang's resource and placement arguments: what the gangs of one
 * array must share. */
static int gang_res(const struct executor_placement *defaults, const struct executor_task *t,
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

static int array_args(const struct strvec *res, size_t n, const char *outpat,
                      const char *script, struct strvec *av)
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
	if (gang_res(defaults, task, &res) < 0 || array_args(&res, n, outpat, script, av) < 0)
		rc = weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	strvec_release(&res);
	return rc;
}

static void batch_free(struct batch *b)
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
			emit(sx, j, EXECUTOR_GANG_REJECTED, why);
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
	if (c->exit_status != 0 || c->term_signal || !c->out_len) {
		cmd_complaint(c, why, sizeof why);
		if (slurm_sbatch_busy(why))
			batch_later(sx, c, why);
		else
			batch_refused(sx, b, why); /* the batch goes with the command */
		return;
	}
	sx->retry_ms = 0;
	semi = strpbrk(c->out_buf, ";\n");
	snprintf(id, sizeof id, "%.*s", (int)(semi ? (size_t)(semi - c->out_buf) : c->out_len),
	         c->out_buf);
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
		emit(sx, j, EXECUTOR_GANG_SUBMITTED, "");
		if (j->cancel_wanted)
			sjob_cancel(sx, j);
	}
	poll_arm(sx);
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
		batch_free(b);
		return;
	}
	if (b->n == 1) {
		/* the command keeps the batch: Slurm may be busy and it goes again */
		if (cmd_spawn(sx, b->av.v, sbatch_done, b->m[0].job_id, b->m[0].attempt, b,
		              &err) < 0) {
			batch_refused(sx, b, err.msg);
			batch_free(b);
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
	if (array_args(&b->res, b->n, outpat, b->array_script, &av) < 0)
		goto oom;
	if (cmd_spawn(sx, av.v, array_done, 0, 0, b, &err) < 0)
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
	batch_free(b);
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
			emit(sx, j, EXECUTOR_GANG_PENDING, reason);
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

/* Puts a gang in a batch: a one-task gang joins a waiting batch of the same
 * settings (below ARRAY_MAX), else each starts its own.  Takes `av` (sbatch's
 * argv for this gang alone). */
static int batch_add(struct slurm_executor *sx, const struct executor_task *tasks, size_t n,
                     const struct executor_placement *defaults, struct strvec *av,
                     const char *script, const char *dir, struct weir_error *err)
{
	struct strvec res = STRVEC_INIT;
	struct batch *b = NULL;
	char *key = NULL;
	size_t klen = 0;
	int fail = 0;

	if (n == 1) {
		fail |= gang_res(defaults, &tasks[0], &res);
		for (size_t i = 0; i < res.n && !fail; i++)
			fail |= append(&key, &klen, "%s\n", res.v[i]);
		if (fail)
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
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 8;
		struct batch_member *m = realloc(b->m, cap * sizeof *m);
		if (!m)
			goto oom; /* b stays, as it was */
		b->m = m;
		b->cap = cap;
	}
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
	if (components_of(tasks, n, &comps) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	dir = dir_of(tasks[0].log_path);
	script = batch_script(sx, tasks, n, &comps);
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
	sx_defaults(sx, &defaults);
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
	if (batch_add(sx, tasks, n, &defaults, &av, path, dir, err) < 0) {
		free(j);
		goto out;
	}
	j->next = sx->jobs;
	sx->jobs = j;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	strvec_release(&av);
	components_release(&comps);
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
	j->next = sx->jobs;
	sx->jobs = j;
	poll_arm(sx);
	return 0;
}

/* ---- finding a job whose sbatch answered no one (a crash in between) ---- */

static int find_run(struct slurm_executor *sx, struct sjob *j, struct weir_error *err);

static void found(struct slurm_executor *sx, struct sjob *j)
{
	free(j->script);
	j->script = NULL;
	emit(sx, j, EXECUTOR_GANG_SUBMITTED, "");
	if (j->cancel_wanted)
		sjob_cancel(sx, j);
	poll_arm(sx);
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
			snprintf(j->slurm_id, sizeof j->slurm_id, "%.*s_%zu", (int)(us - start), start,
			         idx);
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
		cmd_complaint(c, why, sizeof why);
		log_warn("job %lld: squeue: %s", (long long)j->job_id, why);
		/* not knowing is not "none": ask again, a few times */
		if (++j->find_tries < 5 && find_run(sx, j, &err) == 0)
			return;
		snprintf(why, sizeof why, "cannot ask Slurm for job weir-%lld-%d: %s",
		         (long long)j->job_id, j->attempt, err.msg[0] ? err.msg : "squeue failed");
		emit(sx, j, EXECUTOR_GANG_ENDED, why);
		sjob_remove(sx, j);
		return;
	}
	/* "ID|COMMAND" per job of that name: ours is the one that runs our script,
	 * or the element of an array (weir-array) whose script runs it */
	if (array_find(j, c->out_buf)) {
		found(sx, j);
		return;
	}
	for (line = c->out_buf; line && *line;) {
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
	emit(sx, j, EXECUTOR_GANG_ENDED, why);
	sjob_remove(sx, j);
}

static int find_run(struct slurm_executor *sx, struct sjob *j, struct weir_error *err)
{
	char name[80];
	/* -r: an array's elements one per line, so that its id is ID_I */
	char *argv[] = {"squeue", "--me", "-h", "-r", "-t", "all", name, "-o", "%i|%o", NULL};

	snprintf(name, sizeof name, "--name=weir-%lld-%d,weir-array", (long long)j->job_id,
	         j->attempt);
	return cmd_run(sx, argv, find_done, j->job_id, j->attempt, err);
}

static int slurm_find_gang(struct executor *ex, int64_t job_id, int attempt,
                           const char *log_path, struct weir_error *err)
{
	struct slurm_executor *sx = (struct slurm_executor *)ex;
	struct sjob *j;
	char *dir;

	if (sjob_find(sx, job_id, attempt))
		return 0;
	j = calloc(1, sizeof *j);
	dir = dir_of(log_path);
	if (!j || !dir || asprintf(&j->script, "%s/slurm-%d.sh", dir, attempt) < 0) {
		free(j);
		free(dir);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	free(dir);
	j->job_id = job_id;
	j->attempt = attempt;
	if (find_run(sx, j, err) < 0) {
		free(j->script);
		free(j);
		return -1;
	}
	j->next = sx->jobs;
	sx->jobs = j;
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
	free(sx->env_token);
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
	/* gangs not submitted yet: a restart finds no Slurm job for them (lost) */
	while (sx->batches) {
		struct batch *b = sx->batches;
		sx->batches = b->next;
		batch_free(b);
	}
	while (sx->later) {
		struct batch *b = sx->later;
		sx->later = b->next;
		batch_free(b);
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

/* weir-launch beside this program, else this program's `launch` */
static char *find_launcher(bool *lean)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 16);

	*lean = false;
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash) {
		char keep[4096];
		snprintf(keep, sizeof keep, "%s", self);
		memcpy(slash + 1, "weir-launch", sizeof "weir-launch");
		if (access(self, X_OK) == 0) {
			*lean = true;
			return strdup(self);
		}
		return strdup(keep);
	}
	return strdup(self);
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
	sx->arg = arg;
	uv_timer_init(loop, &sx->poll);
	sx->poll.data = sx;
	uv_timer_init(loop, &sx->flush);
	sx->flush.data = sx;
	uv_timer_init(loop, &sx->retry);
	sx->retry.data = sx;
	sx->handles = 3;
	sx->batches_tail = &sx->batches;
	sx->launcher = launcher ? strdup(launcher) : find_launcher(&sx->lean);
	if (launcher)
		sx->lean = strstr(launcher, "weir-launch") != NULL;
	if (!sx->launcher)
		goto oom;
	if (asprintf(&sx->env_server, "WEIR_SERVER=%s", server_url) < 0) {
		sx->env_server = NULL;
		goto oom;
	}
	if (asprintf(&sx->env_token, "WEIR_TOKEN=%s", token ? token : "") < 0) {
		sx->env_token = NULL;
		goto oom;
	}
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
