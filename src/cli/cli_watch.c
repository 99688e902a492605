/* cli_watch.c: change detection between job snapshots (see cli_watch.h). */
#include "cli/cli_watch.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_common.h"
#include "lib/grow.h"
#include "model/states.h"

void cli_watch_init(struct cli_watch *w, long long job_id)
{
	memset(w, 0, sizeof *w);
	w->job_id = job_id;
}

static void forget_tasks(struct cli_watch *w)
{
	for (size_t i = 0; i < w->n_tasks; i++) {
		free(w->tasks[i].key);
		free(w->tasks[i].state);
	}
	w->n_tasks = 0;
}

void cli_watch_release(struct cli_watch *w)
{
	if (!w)
		return;
	forget_tasks(w);
	free(w->tasks);
	free(w->reason);
	memset(w, 0, sizeof *w);
}

char *cli_watch_task_reason(json_t *task, char *buf, size_t size)
{
	const char *state = cli_json_str(task, "state", "");
	const char *reason = cli_json_str(task, "reason", "");
	size_t sl = strlen(state), rl = strlen(reason);

	/* "exited 1" says again what the exit code says; "killed (why)" on a
	 * killed task says the state again around the part worth reading. */
	if (!strncmp(reason, "exited ", 7) || !strcmp(reason, state))
		reason = "";
	else if (sl > 0 && rl > sl + 3 && !strncmp(reason, state, sl) &&
	         !strncmp(reason + sl, " (", 2) && reason[rl - 1] == ')') {
		snprintf(buf, size, "%.*s", (int)(rl - sl - 3), reason + sl + 2);
		return buf;
	}
	snprintf(buf, size, "%s", reason);
	return buf;
}

char *cli_watch_task_text(json_t *task, char *buf, size_t size)
{
	const char *state = cli_json_str(task, "state", "unknown");
	long long code = cli_json_int(task, "exit_code", -1);
	long long sig = cli_json_int(task, "signal", 0);
	char reason[256];
	char detail[320] = "";

	cli_watch_task_reason(task, reason, sizeof reason);
	/* A success needs no "(exit 0)"; a non-zero status always shows, so a
	 * failed line says why without a look at the summary. */
	enum task_state ts;
	bool succeeded = task_state_from_name(state, &ts) == 0 && ts == TASK_SUCCEEDED;
	if (succeeded || !cli_task_state_is_final(state)) {
		if (*reason && !succeeded)
			snprintf(detail, sizeof detail, " (%s)", reason);
	} else if (sig > 0 && code < 0) {
		snprintf(detail, sizeof detail, " (signal %lld%s%s)", sig, *reason ? ", " : "",
		         reason);
	} else if (code >= 0) {
		snprintf(detail, sizeof detail, " (exit %lld%s%s)", code, *reason ? ", " : "",
		         reason);
	} else if (*reason) {
		snprintf(detail, sizeof detail, " (%s)", reason);
	}
	snprintf(buf, size, "%s%s", state, detail);
	return buf;
}

static struct cli_watch_task *find_task(struct cli_watch *w, const char *key)
{
	for (size_t i = 0; i < w->n_tasks; i++)
		if (!strcmp(w->tasks[i].key, key))
			return &w->tasks[i];
	return NULL;
}

static struct cli_watch_task *add_task(struct cli_watch *w, const char *key)
{
	if (ALLOC_GROW(w->tasks, w->n_tasks + 1, w->cap_tasks) < 0)
		return NULL;
	struct cli_watch_task *t = &w->tasks[w->n_tasks];
	t->key = strdup(key);
	t->state = NULL;
	if (!t->key)
		return NULL;
	w->n_tasks++;
	return t;
}

static int emitf(cli_watch_line_fn emit, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int emitf(cli_watch_line_fn emit, void *arg, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	emit(line, arg);
	return 1;
}

void cli_watch_set_events(struct cli_watch *w, json_t *events)
{
	w->events = json_is_array(events) ? events : NULL;
}

/* A task's states in the order it goes through them (pending, starting,
 * running: the enum's order); every end, and a name not known, is last. */
static int state_step(const char *state)
{
	enum task_state s;
	if (!state)
		return -1;
	if (task_state_from_name(state, &s) == 0 && !task_state_is_final(s))
		return (int)s;
	return 3;
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Whether the events of attempt `attempt` show `key` reaching `state`
 * (pending, starting or running).  An attempt's events run from its
 * "starting: attempt N," to the next attempt's "queued (attempt" or
 * "starting: attempt". */
static bool events_show(json_t *events, long long attempt, const char *key, int step)
{
	char start[64], mark[160];
	bool in = false, seen = false;
	size_t i;
	json_t *ev;

	snprintf(start, sizeof start, "starting: attempt %lld,", attempt);
	snprintf(mark, sizeof mark, "%s %s", key, step == 1 ? "registered" : "running");
	json_array_foreach(events, i, ev)
	{
		const char *kind = cli_json_str(ev, "kind", "");
		const char *msg = cli_json_str(ev, "message", "");
		if (!strcmp(kind, "state")) {
			if (starts_with(msg, start)) {
				in = true;
				seen = step == 0;
			} else if (in && (starts_with(msg, "queued (attempt") ||
			                  starts_with(msg, "starting: attempt"))) {
				in = false;
			}
		} else if (in && !strcmp(kind, "task") && starts_with(msg, mark) &&
		           (msg[strlen(mark)] == ' ' || msg[strlen(mark)] == '\0')) {
			seen = true;
		}
	}
	return seen;
}

/* The lines for the states `seen` passed through on its way to `state`
 * that the events show; seen->state follows.  Lines, or -1. */
static int passed_through(struct cli_watch *w, struct cli_watch_task *seen, const char *state,
                          cli_watch_line_fn emit, void *arg)
{
	int lines = 0;

	if (!w->events)
		return 0;
	for (int s = state_step(seen->state) + 1; s < state_step(state) && s < 3; s++) {
		if (!events_show(w->events, w->attempt > 0 ? w->attempt : 1, seen->key, s))
			continue;
		free(seen->state);
		seen->state = strdup(task_state_name((enum task_state)s));
		if (!seen->state)
			return -1;
		lines += emitf(emit, arg, "%s %s", seen->key, task_state_name((enum task_state)s));
	}
	return lines;
}

int cli_watch_tasks(struct cli_watch *w, json_t *tasks, cli_watch_line_fn emit, void *arg)
{
	size_t i;
	json_t *task;
	int lines = 0;

	json_array_foreach(tasks, i, task)
	{
		char key[128], text[512];
		const char *tstate = cli_json_str(task, "state", "unknown");
		struct cli_watch_task *seen;

		cli_task_name(task, key, sizeof key);
		seen = find_task(w, key);
		if (!seen) {
			seen = add_task(w, key);
			if (!seen)
				return -1;
		}
		if (seen->state && !strcmp(seen->state, tstate))
			continue;
		int passed = passed_through(w, seen, tstate, emit, arg);
		if (passed < 0)
			return -1;
		lines += passed;
		free(seen->state);
		seen->state = strdup(tstate);
		if (!seen->state)
			return -1;
		lines +=
		    emitf(emit, arg, "%s %s", key, cli_watch_task_text(task, text, sizeof text));
	}
	return lines;
}

int cli_watch_update(struct cli_watch *w, json_t *job, cli_watch_line_fn emit, void *arg)
{
	const char *state = cli_json_str(job, "state", "");
	const char *reason = cli_json_str(job, "reason", "");
	long long attempt = cli_json_int(job, "attempt", 1);
	json_t *tasks = json_object_get(job, "tasks");
	int lines = 0;

	if (w->attempt != 0 && attempt != w->attempt) {
		/* A new gang: its tasks start over, and the reason (often the
		 * previous attempt's failure) is said on this line. */
		forget_tasks(w);
		if (*reason)
			lines += emitf(emit, arg, "job %lld restarted: attempt %lld: %s", w->job_id,
			               attempt, reason);
		else
			lines += emitf(emit, arg, "job %lld restarted: attempt %lld", w->job_id,
			               attempt);
		free(w->reason);
		w->reason = strdup(reason);
		if (!w->reason)
			return -1;
	}
	w->attempt = attempt;

	if (!cli_job_state_is_final(state) && strcmp(reason, w->reason ? w->reason : "") != 0) {
		if (*reason) {
			if (!strncmp(reason, "waiting", 7))
				lines += emitf(emit, arg, "job %lld %s", w->job_id, reason);
			else
				lines +=
				    emitf(emit, arg, "job %lld %s: %s", w->job_id, state, reason);
		}
		free(w->reason);
		w->reason = strdup(reason);
		if (!w->reason)
			return -1;
	}

	int n = cli_watch_tasks(w, tasks, emit, arg);
	return n < 0 ? -1 : lines + n;
}
