/* pyfiles.c: Python DAG files (Airflow's), parsed off the loop.
 *
 * Owns the parses of `.py` files: at most PY_PARALLEL at once, each handed
 * to the warm processor (pywarm.c: a long-lived one that forks a child per
 * file) or, where that is off or failed, run cold: a child process per
 * file (`python3 -m _weir_airflow.processor FILE DAGS_FOLDER`, PYTHONPATH
 * led by weir's `airflow` folder) with a pipe for its answer (one JSON
 * line: the file's DAGs as weir documents, or an import error) capped at
 * PY_ANSWER_MAX bytes, and a timer that kills its process group after
 * dagbag_import_timeout.  Either way the answer feeds the same path as a
 * YAML file's parse (dm_take_spec()); each DAG of a file is an entry of
 * its own whose `owner` is the file's entry.  A processor runs as the
 * tasks' user, in the DAG folder.  Docs: docs/internals/airflow.md.
 */
#include "server/dag_manager.h"
#include "server/dag_manager/dm_internal.h"
#include "server/dag_manager/py_parse.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/env_scrub.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/strvec.h"
#include "model/variable.h"
#include "server/secrets.h"
#include "server/task_user.h"
#include "store/dag_store.h"

extern char **environ;

#define PY_PARALLEL 2
/* below the folder of the weir package: weir's `airflow` and the processor */
#define SITE_DIR "weir/compat/airflow/site"
#define PROCESSOR_FILE SITE_DIR "/_weir_airflow/processor.py"

bool dm_py_file_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 3 && !strcmp(name + n - 3, ".py");
}

int dag_manager_set_import_timeout(struct dag_manager *dm, double seconds)
{
	if (!(seconds > 0) || seconds > 86400)
		return -1;
	dm->folder.import_timeout_ms = (int64_t)(seconds * 1000);
	return 0;
}

/* The interpreter (WEIR_AIRFLOW_PYTHON, else python3) and weir's `airflow`
 * folder (SITE_DIR) below the folder of the weir package:
 * WEIR_AIRFLOW_PYTHONPATH, else python/ beside the folder of the weir
 * binary (the repository: build/weir, python/), else ../share/weir/python
 * from it.  None found: python_path NULL, and each file is an import error
 * that says so. */
static void find_python_into(char **python, char **python_path)
{
	const char *env = getenv("WEIR_AIRFLOW_PYTHON");
	char exe[4096];
	size_t size = sizeof exe;

	if (*python)
		return;
	*python = strdup(env && *env ? env : "python3");
	env = getenv("WEIR_AIRFLOW_PYTHONPATH");
	if (env && *env) {
		if (asprintf(python_path, "%s/%s", env, SITE_DIR) < 0)
			*python_path = NULL;
		return;
	}
	if (uv_exepath(exe, &size) != 0)
		return;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return;
	*slash = '\0';
	const char *tries[] = {"%s/../python", "%s/../share/weir/python"};
	for (size_t i = 0; i < sizeof tries / sizeof *tries; i++) {
		char *dir = NULL, *probe = NULL;
		if (asprintf(&dir, tries[i], exe) < 0)
			return;
		if (asprintf(&probe, "%s/%s", dir, PROCESSOR_FILE) >= 0 && fs_exists(probe) == 1) {
			free(probe);
			char *real = realpath(dir, NULL);
			if (real && asprintf(python_path, "%s/%s", real, SITE_DIR) < 0)
				*python_path = NULL;
			free(real);
			free(dir);
			return;
		}
		free(probe);
		free(dir);
	}
}

static void find_python(struct dag_manager *dm)
{
	find_python_into(&dm->folder.python, &dm->folder.python_path);
}

/* Airflow's heuristic (dag_discovery_safe_mode): a file that does not
 * mention both "airflow" and "dag", in any case, defines no DAG. */
static bool might_hold_dags(const char *path)
{
	size_t len = 0;
	char *text = fs_read_file(path, &len, NULL);
	bool airflow = false, dag = false;

	if (!text)
		return true; /* the processor says why */
	for (size_t i = 0; i < len; i++)
		text[i] = (char)((text[i] >= 'A' && text[i] <= 'Z') ? text[i] + 32 : text[i]);
	airflow = memmem(text, len, "airflow", 7) != NULL;
	dag = memmem(text, len, "dag", 3) != NULL;
	free(text);
	return airflow && dag;
}

/* ---- the answer ---- */

static struct dag_entry *dag_of_file(struct dag_manager *dm, struct dag_entry *file,
                                     const char *dag_id)
{
	for (struct dag_entry *d = dm->folder.entries; d; d = d->next)
		if (d->owner == file && d->spec && !strcmp(d->spec->dag_id, dag_id))
			return d;
	return NULL;
}

static struct dag_entry *new_dag_entry(struct dag_manager *dm, struct dag_entry *file)
{
	struct dag_entry *d = calloc(1, sizeof *d);

	if (!d || !(d->file = strdup(file->file))) {
		free(d);
		return NULL;
	}
	d->owner = file;
	d->mtime_ns = file->mtime_ns;
	d->size = file->size;
	d->next = dm->folder.entries;
	dm->folder.entries = d;
	return d;
}

/* One DAG document of the answer loaded; -1 with msg. */
static int load_doc(struct dag_manager *dm, struct dag_entry *file, json_t *doc, char *msg,
                    size_t size, json_t *loaded)
{
	struct weir_error err = {0};
	char *base = fs_abs_dirname(file->file);
	struct dag_spec *spec = base ? dag_spec_from_json(doc, file->file, base, &err) : NULL;
	struct dag_entry *d;

	free(base);
	if (!spec) {
		const char *id = json_string_value(json_object_get(doc, "dag_id"));
		snprintf(msg, size, "%s: DAG %s: %s", file->file, id ? id : "?",
		         err.msg[0] ? err.msg : "out of memory");
		return -1;
	}
	if (json_object_get(loaded, spec->dag_id)) {
		snprintf(msg, size, "%s: dag_id \"%s\" is defined twice in this file", file->file,
		         spec->dag_id);
		dag_spec_destroy(spec);
		return -1;
	}
	if (dag_manager_check_spec(dm, spec, file->file, &err) < 0) {
		snprintf(msg, size, "%s", err.msg);
		dag_spec_destroy(spec);
		return -1;
	}
	json_object_set_new(loaded, spec->dag_id, json_true());
	d = dag_of_file(dm, file, spec->dag_id);
	if (!d && !(d = new_dag_entry(dm, file))) {
		dag_spec_destroy(spec);
		snprintf(msg, size, "%s: out of memory", file->file);
		return -1;
	}
	d->present = true;
	return dm_take_spec(dm, d, spec, msg, size);
}

/* The file's DAGs are those of `dags` (NULL: keep the ones it had, an
 * import error stands); then its import error, set or cleared. */
static void apply_answer(struct dag_manager *dm, struct dag_entry *file, json_t *dags,
                         const char *error)
{
	char msg[WEIR_ERROR_MSG_MAX + 256] = "";
	struct weir_error err = {0};
	json_t *loaded = json_object();
	size_t i, n_errors = 0;
	json_t *doc;

	dm_touch(dm);
	dm_run_cache_drop(dm); /* the copies point at the old parse */
	json_array_foreach(dags, i, doc)
	{
		char one[sizeof msg];
		if (load_doc(dm, file, doc, one, sizeof one, loaded) < 0 && n_errors++ == 0)
			snprintf(msg, sizeof msg, "%s", one);
	}
	/* DAGs the file no longer defines (not when the import failed: their
	 * last good version keeps running, as a broken YAML file's) */
	for (struct dag_entry *d = dm->folder.entries; dags && d; d = d->next)
		if (d->owner == file && d->present && d->spec &&
		    !json_object_get(loaded, d->spec->dag_id)) {
			d->present = false;
			dm_file_gone(dm, d);
		}
	json_decref(loaded);
	if (error)
		dm_import_error(dm, file, error);
	else if (n_errors)
		dm_import_error(dm, file, msg);
	else if (dag_store_import_error_clear(dm->ds, file->file, &err) < 0)
		log_error("DAG file %s: %s", file->file, err.msg);
	dm_specs_changed(dm);
}

/* ---- the variables of a parse ---- */

/* At most this many keys a file's parse is given (a processor's answer
 * that names more is refused). */
#define PY_VARS_MAX 1000
/* At most this many parses of a file in a row may ask for variables (a
 * file names its keys once; a processor that keeps asking would loop). */
#define PY_VAR_ASKS_MAX 3

static bool in_strvec(const struct strvec *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return true;
	return false;
}

/* What the parse of e is given: each key of e->var_names as the secrets
 * lookup resolves it (store, configuration, the server's WEIR_VAR_ and
 * AIRFLOW_VAR_), null when none has it; a secret key (variable_is_secret())
 * refused, its value never looked up.  NULL when out of memory. */
static json_t *parse_variables(struct dag_manager *dm, struct dag_entry *e)
{
	json_t *values = json_object(), *refused = json_array();
	json_t *doc = values && refused
	                  ? json_pack("{s:o, s:o}", "values", values, "refused", refused)
	                  : NULL;

	if (!doc) {
		json_decref(values);
		json_decref(refused);
		return NULL;
	}
	for (size_t i = 0; i < e->var_names.n; i++) {
		const char *key = e->var_names.v[i];
		struct weir_error err = {0};
		struct variable v;
		if (variable_is_secret(key)) {
			json_array_append_new(refused, json_string(key));
			continue;
		}
		if (dm->secrets && secrets_var_resolve(dm->secrets, key, &v, NULL, &err) == 0) {
			json_t *text = json_string(v.value);
			json_object_set_new(values, key, text ? text : json_null());
			variable_release(&v);
			continue;
		}
		if (dm->secrets && err.kind != WEIR_E_NOT_FOUND)
			log_warn("DAG file %s: variable %s for its parse: %s", e->file, key,
			         err.msg);
		json_object_set_new(values, key, json_null());
	}
	return doc;
}

/* Whether the parse was given `key` (a value, null, or refused). */
static bool offered(const struct py_parse *p, const char *key)
{
	size_t i;
	json_t *k;

	if (json_object_get(json_object_get(p->variables, "values"), key))
		return true;
	json_array_foreach(json_object_get(p->variables, "refused"), i, k)
	{
		if (json_is_string(k) && !strcmp(json_string_value(k), key))
			return true;
	}
	return false;
}

/* The keys of a processor's list (variable keys, at most PY_VARS_MAX) into
 * *out; -1 when it is no such list. */
static int read_keys(json_t *list, struct strvec *out)
{
	size_t i;
	json_t *k;

	if (!json_is_array(list) || json_array_size(list) > PY_VARS_MAX)
		return -1;
	json_array_foreach(list, i, k)
	{
		struct weir_error err = {0};
		if (!json_is_string(k) || variable_check_key(json_string_value(k), &err) < 0 ||
		    strvec_push(out, json_string_value(k)) < 0) {
			strvec_release(out);
			return -1;
		}
	}
	return 0;
}

/* The answer's variables_wanted (the file read a key it names that its
 * parse was not given: the server learns a file's names so): the names
 * kept for the next parse and the file wanted again.  NULL, or why the
 * answer is an import error (not keys; or nothing new: a processor that
 * asks again for what it was given would loop). */
static const char *take_wanted(struct py_parse *p, json_t *wanted)
{
	struct strvec names = STRVEC_INIT;
	bool news = false;

	if (++p->e->var_asks > PY_VAR_ASKS_MAX) {
		p->e->var_asks = 0;
		return "the DAG processor asked for variables at each of the file's last parses";
	}
	if (read_keys(wanted, &names) < 0)
		return "the DAG processor's variables_wanted is not a list of variable keys";
	for (size_t i = 0; i < names.n && !news; i++)
		news = !offered(p, names.v[i]);
	if (!news) {
		strvec_release(&names);
		return "the DAG processor asked again for the variables its parse was given";
	}
	strvec_release(&p->e->var_names);
	p->e->var_names = names;
	p->e->py_wanted = true;
	return NULL;
}

/* The answer's variables_read: the keys whose change parses e again. */
static void keep_read(struct dag_entry *e, json_t *read)
{
	struct strvec keys = STRVEC_INIT;

	e->var_asks = 0;
	if (read && read_keys(read, &keys) < 0)
		log_warn("DAG file %s: the DAG processor's variables_read is not a list of "
		         "variable keys",
		         e->file);
	strvec_release(&e->var_read);
	e->var_read = keys;
}

void dag_manager_variable_changed(struct dag_manager *dm, const char *key)
{
	bool any = false;

	for (struct dag_entry *e = dm->folder.entries; e; e = e->next)
		if (e->py && e->present && in_strvec(&e->var_read, key)) {
			log_info("DAG file %s: variable %s changed: the file is parsed again",
			         e->file, key);
			e->py_wanted = true;
			any = true;
		}
	if (any)
		dm_py_want(dm, NULL);
}

/* The tail of what the processor wrote, for an error that has no answer. */
static const char *tail_of(struct py_parse *p)
{
	size_t keep = 2000;
	if (!p->buf)
		return "";
	return p->len > keep ? p->buf + p->len - keep : p->buf;
}

void dm_py_finish(struct py_parse *p)
{
	struct dag_manager *dm = p->dm;
	struct dag_entry *e = p->e;
	const char *file = p->file;
	char error[WEIR_ERROR_MSG_MAX + 256] = "";
	json_t *answer = NULL, *dags = NULL;
	double secs = (double)p->timeout_ms / 1000.0;

	if (p->done)
		return;
	p->done = true;
	if (!dm && !p->alone)
		return;
	if (dm) {
		dm->folder.py_running--;
		e->parse = NULL;
	}
	if (p->timed_out) {
		snprintf(
		    error, sizeof error,
		    "%s: the import took longer than dagbag_import_timeout (%g s) and was "
		    "killed (a loop, a wait on the network, or a slow import at the top of the "
		    "file?)",
		    file, secs);
	} else if (p->too_much) {
		snprintf(error, sizeof error,
		         "%s: the DAG processor's answer passed %d bytes and it was killed", file,
		         PY_ANSWER_MAX);
	} else {
		/* the answer is the last line; anything before it is Python's own
		 * complaint from before the processor took its output over */
		char *last = NULL;
		if (p->buf) {
			p->buf[p->len] = '\0';
			while (p->len && p->buf[p->len - 1] == '\n')
				p->buf[--p->len] = '\0';
			last = strrchr(p->buf, '\n');
			last = last ? last + 1 : p->buf;
			answer = json_loads(last, 0, NULL);
		}
		if (!json_is_object(answer))
			snprintf(error, sizeof error,
			         "%s: the DAG processor ended (%s %lld) without an answer%s%s",
			         file, p->term_signal ? "signal" : "exit status",
			         (long long)(p->term_signal ? p->term_signal : p->status),
			         p->len ? ": " : "", tail_of(p));
	}
	/* the file's own error, whole (a traceback is longer than a weir_error) */
	const char *why = error[0] ? error : NULL;
	json_t *wanted = why ? NULL : json_object_get(answer, "variables_wanted");
	if (wanted) {
		/* the file read a key it names that it was not given: again, with them */
		why = p->alone || !e->present ? "the DAG processor asked for variables where it "
		                                "was given none"
		                              : take_wanted(p, wanted);
		if (!why) {
			log_info("DAG file %s: reads variables at its top level: parsed again "
			         "with the %zu its file names",
			         e->file, e->var_names.n);
			json_decref(answer);
			dm_py_want(dm, NULL); /* the file again */
			return;
		}
	} else if (!why) {
		json_t *je = json_object_get(answer, "error");
		const char *m = json_string_value(json_object_get(je, "message"));
		dags = json_object_get(answer, "dags");
		if (je)
			why = m ? m : "an import error";
		else if (!json_is_array(dags))
			why = "the DAG processor's answer has no DAG list";
	}
	if (p->alone) {
		*p->docs_out = why ? NULL : json_incref(dags);
		*p->error_out = why ? strdup(why) : NULL;
		json_decref(answer);
		return;
	}
	if (e->present) {
		log_info("DAG file %s: processed in %lld ms", e->file,
		         (long long)(clock_now_ms() - p->started_ms));
		keep_read(e, json_object_get(answer, "variables_read"));
		apply_answer(dm, e, why ? NULL : dags, why);
	}
	json_decref(answer);
	dm_py_want(dm, NULL); /* the next waiting file */
}

void dm_py_on_closed(uv_handle_t *h)
{
	struct py_parse *p = h->data;
	if (--p->open == 0) {
		json_decref(p->last_runs);
		json_decref(p->variables);
		if (p->in_text)
			memset(p->in_text, 0, strlen(p->in_text));
		free(p->in_text);
		free(p->buf);
		free(p);
	}
}

/* The variables' pipe closed (written, or the parse is over). */
static void close_in(struct py_parse *p)
{
	if (p->in.data && !uv_is_closing((uv_handle_t *)&p->in))
		uv_close((uv_handle_t *)&p->in, dm_py_on_closed);
}

static void on_in_written(uv_write_t *req, int status)
{
	(void)status; /* a processor that did not read them: its answer says what it did */
	close_in(req->data);
}

static void close_all(struct py_parse *p)
{
	close_in(p);
	uv_timer_stop(&p->timer);
	if (!uv_is_closing((uv_handle_t *)&p->timer))
		uv_close((uv_handle_t *)&p->timer, dm_py_on_closed);
	if (!uv_is_closing((uv_handle_t *)&p->out))
		uv_close((uv_handle_t *)&p->out, dm_py_on_closed);
	if (p->exited && !uv_is_closing((uv_handle_t *)&p->proc))
		uv_close((uv_handle_t *)&p->proc, dm_py_on_closed);
}

static void kill_group(struct py_parse *p)
{
	if (!p->exited && p->proc.pid > 0)
		kill(-p->proc.pid, SIGKILL); /* its own session: the file's forks too */
}

static void maybe_done(struct py_parse *p)
{
	if (p->exited && p->eof) {
		dm_py_finish(p);
		close_all(p);
	}
}

void dm_py_read_room(char **buf, size_t len, size_t *cap, uv_buf_t *room)
{
	if (*cap - len < 65536 + 1) {
		size_t grown_cap = *cap ? *cap * 2 : 131072;
		char *grown = realloc(*buf, grown_cap);
		if (!grown) {
			*room = uv_buf_init(NULL, 0);
			return;
		}
		*buf = grown;
		*cap = grown_cap;
	}
	*room = uv_buf_init(*buf + len, (unsigned)(*cap - len - 1));
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct py_parse *p = h->data;
	(void)suggested;
	dm_py_read_room(&p->buf, p->len, &p->cap, buf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct py_parse *p = s->data;
	(void)buf;
	if (n > 0) {
		p->len += (size_t)n;
		if (p->len > PY_ANSWER_MAX && !p->too_much) {
			p->too_much = true;
			kill_group(p);
			p->len = 0;
		}
		if (p->too_much)
			p->len = 0;
		return;
	}
	if (n < 0) {
		uv_read_stop(s);
		p->eof = true;
		maybe_done(p);
	}
}

static void on_timer(uv_timer_t *t)
{
	struct py_parse *p = t->data;

	if (p->exited) {
		/* its forks still hold the pipe: what came is the answer */
		uv_read_stop((uv_stream_t *)&p->out);
		p->eof = true;
		maybe_done(p);
		return;
	}
	p->timed_out = true;
	kill_group(p);
}

static void on_exit_cb(uv_process_t *proc, int64_t status, int term_signal)
{
	struct py_parse *p = proc->data;

	p->exited = true;
	p->status = status;
	p->term_signal = term_signal;
	kill(-proc->pid, SIGKILL); /* what the file left behind in its session */
	if (p->eof) {
		maybe_done(p);
		return;
	}
	uv_timer_start(&p->timer, on_timer, PY_DRAIN_MS, 0);
}

/* HOME/airflow-warm, where the warm interpreters listen: made 0700 and given
 * to the tasks' user, who runs them and their clients (the home is 0711
 * then, its own).  Its path (malloc'd), or NULL when it cannot be had: the
 * tasks run cold (docs/internals/airflow_warm.md). */
static char *warm_dir(const char *home)
{
	const struct run_as *ra = task_user_current();
	char *dir = home ? fs_join(home, "airflow-warm") : NULL;

	if (dir && ((mkdir(dir, 0700) < 0 && errno != EEXIST) ||
	            (ra && ra->set && lchown(dir, ra->uid, ra->gid) < 0))) {
		free(dir);
		dir = NULL;
	}
	return dir;
}

int dm_py_env(const char *python_path, const char *home, struct strvec *env)
{
	const char *old = getenv("PYTHONPATH");

	for (char **v = environ; *v; v++)
		if (strncmp(*v, "PYTHONPATH=", 11) && strncmp(*v, "WEIR_AIRFLOW_WARM_DIR=", 22) &&
		    strncmp(*v, "WEIR_AIRFLOW_LAST_RUNS=", 23) &&
		    strncmp(*v, "WEIR_AIRFLOW_PARSE_VARS=", 24) && !env_scrub_drops(*v) &&
		    strvec_push(env, *v) < 0)
			return -1;
	char *warm = warm_dir(home);
	int rc = warm ? strvec_pushf(env, "WEIR_AIRFLOW_WARM_DIR=%s", warm) : 0;
	free(warm);
	if (rc < 0)
		return -1;
	if (python_path)
		return strvec_pushf(env, "PYTHONPATH=%s%s%s", python_path, old && *old ? ":" : "",
		                    old && *old ? old : "");
	return old ? strvec_pushf(env, "PYTHONPATH=%s", old) : 0;
}

/* WEIR_AIRFLOW_LAST_RUNS=JSON of p->last_runs, when there are some. */
static int last_runs_env(struct py_parse *p, struct strvec *env)
{
	char *text = p->last_runs ? json_dumps(p->last_runs, JSON_COMPACT) : NULL;
	int rc = p->last_runs && !text ? -1 : 0;

	if (text)
		rc = strvec_pushf(env, "WEIR_AIRFLOW_LAST_RUNS=%s", text);
	free(text);
	return rc;
}

/* Starts p's processor on p->file in `dir` (the DAG folder) on `loop`:
 * rc of uv_spawn (p's handles to close either way), or 1 when out of
 * memory (nothing made). */
static int spawn(struct py_parse *p, uv_loop_t *loop, char *python, const char *python_path,
                 const char *dir)
{
	struct strvec env = STRVEC_INIT;
	uv_file fds[2] = {-1, -1};
	char *args[] = {python,          "-m",        "_weir_airflow.processor",
	                (char *)p->file, (char *)dir, NULL};
	uv_stdio_container_t stdio[3] = {{.flags = UV_IGNORE}};
	uv_process_options_t o = {0};
	int rc;

	if (p->variables && !(p->in_text = json_dumps(p->variables, JSON_COMPACT)))
		return 1;
	if (dm_py_env(python_path, p->dm ? p->dm->home : NULL, &env) < 0 ||
	    last_runs_env(p, &env) < 0 ||
	    (p->in_text && strvec_push(&env, "WEIR_AIRFLOW_PARSE_VARS=stdin") < 0) ||
	    uv_pipe(fds, 0, 0) != 0) {
		strvec_release(&env);
		free(p->in_text);
		p->in_text = NULL;
		return 1;
	}
	p->started_ms = clock_now_ms();
	uv_pipe_init(loop, &p->out, 0);
	uv_pipe_open(&p->out, fds[0]);
	uv_timer_init(loop, &p->timer);
	p->out.data = p->timer.data = p->proc.data = p;
	p->open = 2;
	if (p->in_text) {
		/* the variables on its standard input: never in an environment or a log */
		uv_pipe_init(loop, &p->in, 0);
		p->in.data = p->in_req.data = p;
		p->open++;
		stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
		stdio[0].data.stream = (uv_stream_t *)&p->in;
	}
	stdio[1].flags = stdio[2].flags = UV_INHERIT_FD;
	stdio[1].data.fd = stdio[2].data.fd = fds[1];
	o.file = python;
	o.args = args;
	o.env = env.v;
	o.stdio = stdio;
	o.stdio_count = 3;
	o.exit_cb = on_exit_cb;
	o.flags = UV_PROCESS_DETACHED; /* its own session: a kill reaches its forks */
	/* a DAG file is code: it runs as the tasks do (docs/security.md), in
	 * the DAG folder (python -m puts the working folder on sys.path) */
	o.cwd = dir;
	const struct run_as *ra = task_user_current();
	if (ra && ra->set) {
		o.uid = ra->uid;
		o.gid = ra->gid;
		o.flags |= UV_PROCESS_SETUID | UV_PROCESS_SETGID;
	}
	rc = uv_spawn(loop, &p->proc, &o);
	close(fds[1]);
	strvec_release(&env);
	p->open++; /* a failed spawn leaves a handle to close too */
	if (rc == 0) {
		uv_read_start((uv_stream_t *)&p->out, on_alloc, on_read);
		uv_timer_start(&p->timer, on_timer, (uint64_t)p->timeout_ms, 0);
	}
	if (p->in_text) {
		uv_buf_t b = uv_buf_init(p->in_text, (unsigned)strlen(p->in_text));
		if (rc != 0 ||
		    uv_write(&p->in_req, (uv_stream_t *)&p->in, &b, 1, on_in_written) != 0)
			close_in(p);
	}
	return rc;
}

static int start(struct dag_manager *dm, struct dag_entry *e)
{
	struct py_parse *p = calloc(1, sizeof *p);
	int rc;

	if (!p)
		return -1;
	p->dm = dm;
	p->e = e;
	p->file = e->file;
	p->timeout_ms = dm->folder.import_timeout_ms;
	p->last_runs = dm_timetable_last_runs(dm, e);
	if (!(p->variables = parse_variables(dm, e))) {
		json_decref(p->last_runs);
		free(p);
		return -1;
	}
	if (dm_pywarm_send(dm, p) == 0) {
		e->parse = p;
		dm->folder.py_running++;
		return 0;
	}
	rc = spawn(p, dm->loop, dm->folder.python, dm->folder.python_path, dm->folder.dir);
	if (rc == 1) {
		json_decref(p->last_runs);
		json_decref(p->variables);
		free(p);
		return -1;
	}
	if (rc < 0) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s: cannot start the DAG processor (%s): %s", e->file,
		         dm->folder.python, uv_strerror(rc));
		p->exited = p->eof = p->done = true;
		close_all(p);
		apply_answer(dm, e, NULL, msg);
		return 0;
	}
	e->parse = p;
	dm->folder.py_running++;
	return 0;
}

json_t *dag_manager_py_documents(const char *file, const char *dags_dir, double timeout_s,
                                 char **error)
{
	struct py_parse *p = calloc(1, sizeof *p);
	char *python = NULL, *python_path = NULL;
	uv_loop_t loop;
	json_t *docs = NULL;
	int rc = 1;

	*error = NULL;
	if (!p || uv_loop_init(&loop) != 0) {
		free(p);
		return NULL;
	}
	p->alone = true;
	p->docs_out = &docs;
	p->error_out = error;
	p->file = file;
	p->timeout_ms = (int64_t)(timeout_s * 1000);
	if (!might_hold_dags(file)) {
		docs = json_array();
		free(p);
	} else {
		find_python_into(&python, &python_path);
		rc = python ? spawn(p, &loop, python, python_path, dags_dir) : 1;
		if (rc < 0) {
			if (asprintf(error, "%s: cannot start the DAG processor (%s): %s", file,
			             python, uv_strerror(rc)) < 0)
				*error = NULL;
			p->exited = p->eof = p->done = true;
			close_all(p);
		}
		if (rc == 1)
			free(p); /* nothing made */
		else
			uv_run(&loop, UV_RUN_DEFAULT); /* p frees itself with its last handle */
	}
	uv_loop_close(&loop);
	free(python);
	free(python_path);
	return docs;
}

void dm_py_want(struct dag_manager *dm, struct dag_entry *e)
{
	if (e)
		e->py_wanted = true;
	/* the files that changed, as slots free (a file being parsed again
	 * waits for its running processor) */
	for (struct dag_entry *f = dm->folder.entries; f && dm->folder.py_running < PY_PARALLEL;
	     f = f->next) {
		if (!f->py || !f->py_wanted || f->parse || !f->present)
			continue;
		f->py_wanted = false;
		if (!might_hold_dags(f->file)) {
			json_t *none = json_array();
			apply_answer(dm, f, none, NULL);
			json_decref(none);
			continue;
		}
		find_python(dm);
		if (!dm->folder.python || start(dm, f) < 0)
			log_error("DAG file %s: cannot start the DAG processor: out of memory",
			          f->file);
	}
}

void dm_py_gone(struct dag_manager *dm, struct dag_entry *e)
{
	e->py_wanted = false;
	for (struct dag_entry *d = dm->folder.entries; d; d = d->next)
		if (d->owner == e && d->present) {
			d->present = false;
			dm_file_gone(dm, d);
		}
}

void dm_py_stop_all(struct dag_manager *dm)
{
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next) {
		struct py_parse *p = e->parse;
		if (!p)
			continue;
		e->parse = NULL;
		p->dm = NULL;
		p->done = true;
		if (p->warm) {
			/* its child goes with the warm processor, below */
			uv_timer_stop(&p->timer);
			uv_close((uv_handle_t *)&p->timer, dm_py_on_closed);
			continue;
		}
		kill_group(p);
		uv_read_stop((uv_stream_t *)&p->out);
		if (!p->exited) {
			/* the exit callback closes the process handle */
			p->eof = true;
			close_in(p);
			uv_timer_stop(&p->timer);
			uv_close((uv_handle_t *)&p->timer, dm_py_on_closed);
			uv_close((uv_handle_t *)&p->out, dm_py_on_closed);
		} else {
			close_all(p);
		}
	}
	dm_pywarm_stop(dm);
	free(dm->folder.python);
	free(dm->folder.python_path);
	dm->folder.python = dm->folder.python_path = NULL;
}
