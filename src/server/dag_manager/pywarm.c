/* pywarm.c: the warm DAG processor.
 *
 * Owns one long-lived `python3 -m _weir_airflow.warm_processor DAGS_FOLDER`
 * per DAG manager, spawned as a cold processor is (the tasks' user, the DAG
 * folder, the scrubbed environment, a session of its own): it imported
 * weir's `airflow` once and forks a child per file, which keeps a file's
 * parse to a fork and the file's own import.  pyfiles.c hands it a parse
 * (dm_pywarm_send(): one request line on its standard input); the answer
 * line that comes back (the child's output and end) fills the parse as a
 * cold processor's would, and dm_py_finish() applies it.  The warm
 * processor keeps each child's limits (time, output, its session killed at
 * the end); a timer per parse here waits for its answer a while longer,
 * and past that the warm processor is killed.  When it ends or cannot
 * start, the parses it held are wanted again and files are parsed cold
 * for WARM_BACKOFF_MS.  Docs: docs/internals/airflow.md, "The warm
 * processor".
 */
#include "server/dag_manager/py_parse.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/strvec.h"
#include "server/task_user.h"

/* After a failure, parses run cold this long before the warm processor is
 * tried again. */
#define WARM_BACKOFF_MS 30000
/* How much longer than the file's own limit an answer may take (the warm
 * processor kills the child at the limit; this is for the warm processor
 * itself stuck). */
#define WARM_GRACE_MS 10000

struct dm_pywarm {
	struct dag_manager *dm; /* NULL once stopped */
	uv_process_t proc;
	uv_pipe_t in;  /* its standard input: the requests */
	uv_pipe_t out; /* its standard output: the answers */
	int open;      /* handles still open; the struct goes with the last */
	bool exited;
	char *buf; /* answers read, not yet a whole line */
	size_t len, cap;
	uint64_t next_id;
	struct py_parse *inflight; /* sent, not answered (warm_next) */
};

struct warm_write {
	uv_write_t req;
	char *line;
};

static void warm_on_closed(uv_handle_t *h)
{
	struct dm_pywarm *w = h->data;
	if (--w->open == 0) {
		free(w->buf);
		free(w);
	}
}

static void close_parse(struct py_parse *p)
{
	uv_timer_stop(&p->timer);
	if (!uv_is_closing((uv_handle_t *)&p->timer))
		uv_close((uv_handle_t *)&p->timer, dm_py_on_closed);
}

static struct py_parse *take_inflight(struct dm_pywarm *w, uint64_t id)
{
	for (struct py_parse **pp = &w->inflight; *pp; pp = &(*pp)->warm_next)
		if ((*pp)->warm_id == id) {
			struct py_parse *p = *pp;
			*pp = p->warm_next;
			p->warm_next = NULL;
			return p;
		}
	return NULL;
}

/* The warm processor ends (w detached from its manager): its handles
 * closed; each parse it held wanted again, to run cold. */
static void warm_end(struct dm_pywarm *w, const char *why)
{
	struct dag_manager *dm = w->dm;
	bool held = w->inflight != NULL;
	struct py_parse *p;

	if (dm) {
		dm->folder.warm = NULL;
		dm->folder.warm_retry_ms = clock_now_ms() + WARM_BACKOFF_MS;
		if (why)
			log_warn("the warm DAG processor %s: Python DAG files are parsed one "
			         "process each for %d s",
			         why, WARM_BACKOFF_MS / 1000);
	}
	w->dm = NULL;
	if (!w->exited && w->proc.pid > 0)
		kill(-w->proc.pid, SIGKILL); /* its session: the children too */
	while ((p = w->inflight)) {
		w->inflight = p->warm_next;
		if (p->dm && p->e) {
			p->e->parse = NULL;
			p->e->py_wanted = true;
			p->dm->folder.py_running--;
		}
		p->done = true;
		close_parse(p);
	}
	if (!uv_is_closing((uv_handle_t *)&w->in))
		uv_close((uv_handle_t *)&w->in, warm_on_closed);
	if (!uv_is_closing((uv_handle_t *)&w->out))
		uv_close((uv_handle_t *)&w->out, warm_on_closed);
	if (!uv_is_closing((uv_handle_t *)&w->proc))
		uv_close((uv_handle_t *)&w->proc, warm_on_closed);
	if (dm && held)
		dm_py_want(dm, NULL); /* what it held, cold */
}

/* One answer line: its parse filled and finished. */
static void on_answer(struct dm_pywarm *w, const char *line)
{
	json_t *a = json_loads(line, JSON_ALLOW_NUL, NULL);
	json_int_t id = json_integer_value(json_object_get(a, "id"));
	struct py_parse *p = a ? take_inflight(w, (uint64_t)id) : NULL;
	json_t *out = json_object_get(a, "out");

	if (!p) {
		log_warn("the warm DAG processor answered what was not asked: %.200s", line);
		json_decref(a);
		return;
	}
	p->len = json_string_length(out); /* 0 for none */
	p->cap = p->len + 1;
	p->buf = malloc(p->cap);
	if (p->buf) {
		memcpy(p->buf, p->len ? json_string_value(out) : "", p->len);
		p->buf[p->len] = '\0';
	} else {
		p->len = p->cap = 0;
	}
	p->status = json_integer_value(json_object_get(a, "status"));
	p->term_signal = (int)json_integer_value(json_object_get(a, "signal"));
	p->timed_out = json_is_true(json_object_get(a, "timed_out"));
	p->too_much = json_is_true(json_object_get(a, "too_much"));
	p->exited = p->eof = true;
	json_decref(a);
	dm_py_finish(p);
	close_parse(p);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct dm_pywarm *w = h->data;
	(void)suggested;
	dm_py_read_room(&w->buf, w->len, &w->cap, buf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct dm_pywarm *w = s->data;
	char *start, *nl;

	(void)buf;
	if (n < 0) {
		/* its end follows (on_exit_cb says how); one that lives on without
		 * its output is stuck, and its parses' timers end it */
		uv_read_stop(s);
		return;
	}
	w->len += (size_t)n;
	w->buf[w->len] = '\0';
	start = w->buf;
	while ((nl = memchr(start, '\n', w->len - (size_t)(start - w->buf)))) {
		*nl = '\0';
		if (nl > start)
			on_answer(w, start);
		start = nl + 1;
	}
	w->len -= (size_t)(start - w->buf);
	memmove(w->buf, start, w->len);
	/* an answer holds at most PY_ANSWER_MAX bytes of output, escaped */
	if (w->len > 8 * (size_t)PY_ANSWER_MAX && w->dm)
		warm_end(w, "wrote an answer past any bound");
}

static void on_exit_cb(uv_process_t *proc, int64_t status, int term_signal)
{
	struct dm_pywarm *w = proc->data;
	char why[96];

	w->exited = true;
	if (!w->dm)
		return;
	snprintf(why, sizeof why, "ended (%s %lld)", term_signal ? "signal" : "exit status",
	         (long long)(term_signal ? term_signal : status));
	warm_end(w, why);
}

static void on_written(uv_write_t *req, int status)
{
	struct warm_write *ww = (struct warm_write *)req;
	(void)status; /* a failed write: the exit or the closed output follows */
	free(ww->line);
	free(ww);
}

/* The answer did not come in the file's time and the grace: the warm
 * processor is stuck; it goes (and its parses run cold). */
static void on_parse_timer(uv_timer_t *t)
{
	struct py_parse *p = t->data;
	struct dm_pywarm *w = p->dm ? p->dm->folder.warm : NULL;

	if (w)
		warm_end(w, "did not answer in time");
}

/* Spawns the warm processor: NULL when it cannot start. */
static struct dm_pywarm *warm_start(struct dag_manager *dm)
{
	struct dm_pywarm *w = calloc(1, sizeof *w);
	struct strvec env = STRVEC_INIT;
	char *args[] = {dm->folder.python, "-m", "_weir_airflow.warm_processor", dm->folder.dir,
	                NULL};
	uv_stdio_container_t stdio[3];
	uv_process_options_t o = {0};
	const struct run_as *ra = task_user_current();
	int rc;

	if (!w || dm_py_env(dm->folder.python_path, dm->home, &env) < 0) {
		free(w);
		strvec_release(&env);
		return NULL;
	}
	w->dm = dm;
	uv_pipe_init(dm->loop, &w->in, 0);
	uv_pipe_init(dm->loop, &w->out, 0);
	w->in.data = w->out.data = w->proc.data = w;
	w->open = 3; /* in, out, and the process handle (a failed spawn leaves one too) */
	stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
	stdio[0].data.stream = (uv_stream_t *)&w->in;
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&w->out;
	stdio[2].flags = UV_INHERIT_FD; /* its own complaints: the server's log */
	stdio[2].data.fd = 2;
	o.file = dm->folder.python;
	o.args = args;
	o.env = env.v;
	o.stdio = stdio;
	o.stdio_count = 3;
	o.exit_cb = on_exit_cb;
	o.flags = UV_PROCESS_DETACHED; /* its own session: a kill reaches its children */
	o.cwd = dm->folder.dir;        /* as a cold processor: the tasks' user, the folder */
	if (ra && ra->set) {
		o.uid = ra->uid;
		o.gid = ra->gid;
		o.flags |= UV_PROCESS_SETUID | UV_PROCESS_SETGID;
	}
	rc = uv_spawn(dm->loop, &w->proc, &o);
	strvec_release(&env);
	if (rc < 0) {
		w->exited = true;
		warm_end(w, uv_strerror(rc));
		return NULL;
	}
	uv_read_start((uv_stream_t *)&w->out, on_alloc, on_read);
	log_info("the warm DAG processor started (pid %d)", w->proc.pid);
	return w;
}

int dm_pywarm_send(struct dag_manager *dm, struct py_parse *p)
{
	const char *off = getenv("WEIR_AIRFLOW_WARM_PROCESSOR");
	struct dm_pywarm *w = dm->folder.warm;
	struct warm_write *ww;
	json_t *req;
	char *text;
	uv_buf_t b;

	if ((off && !strcmp(off, "0")) || !dm->folder.python || !dm->folder.python_path)
		return -1;
	if (!w && clock_now_ms() < dm->folder.warm_retry_ms)
		return -1;
	if (!w && !(w = dm->folder.warm = warm_start(dm)))
		return -1;
	if (!(ww = calloc(1, sizeof *ww)))
		return -1;
	p->warm = true;
	p->warm_id = ++w->next_id;
	req = json_pack("{s:I, s:s, s:I, s:i, s:i}", "id", (json_int_t)p->warm_id, "file", p->file,
	                "timeout_ms", (json_int_t)p->timeout_ms, "max_bytes", PY_ANSWER_MAX,
	                "drain_ms", PY_DRAIN_MS);
	if (req && p->last_runs)
		json_object_set(req, "last_runs", p->last_runs);
	if (req && p->variables) /* the line goes to its pipe alone, never a log */
		json_object_set(req, "variables", p->variables);
	text = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (!text || asprintf(&ww->line, "%s\n", text) < 0) {
		free(text);
		free(ww);
		p->warm = false;
		return -1;
	}
	free(text);
	b = uv_buf_init(ww->line, (unsigned)strlen(ww->line));
	if (uv_write(&ww->req, (uv_stream_t *)&w->in, &b, 1, on_written) != 0) {
		free(ww->line);
		free(ww);
		p->warm = false;
		return -1;
	}
	p->started_ms = clock_now_ms();
	uv_timer_init(dm->loop, &p->timer);
	p->timer.data = p;
	p->open = 1;
	uv_timer_start(&p->timer, on_parse_timer, (uint64_t)(p->timeout_ms + WARM_GRACE_MS), 0);
	p->warm_next = w->inflight;
	w->inflight = p;
	return 0;
}

void dm_pywarm_stop(struct dag_manager *dm)
{
	struct dm_pywarm *w = dm->folder.warm;

	if (!w)
		return;
	dm->folder.warm = NULL;
	w->dm = NULL;
	w->inflight = NULL; /* dm_py_stop_all() detached them */
	warm_end(w, NULL);
}
