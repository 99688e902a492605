/* cli_dag_test.c: `weir dags test`: one run of a DAG file in this process, and
 * `weir dags check`: DAG files loaded as the server loads them (cli_dag_test.h).
 *
 * Owns the temporary home, the loop and the follow-up of the one run.  The
 * run itself is the server's: the parts come from server_parts_create(),
 * the run is created and read through the same dag_api_ops the Airflow
 * routes use, so what passes here passes on a server.  The run is followed
 * by a timer that reads its rows (in process: a read costs microseconds),
 * rather than a hook in the DAG manager, which knows nothing of tests.
 */
#include "cli/cli_dag_test.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <uv.h>

#include "api/dag_answers.h"
#include "cli/cli_common.h"
#include "cli/cli_ti.h"
#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/strvec.h"
#include "model/cron.h"
#include "model/dag_spec.h"
#include "model/states.h"
#include "server/dag_manager.h"
#include "server/server.h"

#define TICK_MS 100
#define LOG_TAIL_LINES 20
#define LOG_TAIL_BYTES (64 * 1024)
/* `tasks test` prints its task's log whole, up to its last this many bytes */
#define LOG_WHOLE_BYTES (4 * 1024 * 1024)
/* After the run's end its jobs wind down (a launcher reports, then exits);
 * past this the ones left are killed, and past twice this we give up. */
#define DRAIN_MS 30000
/* The latest start_date a DAG file may hold (9999-12-31T23:59:00Z): the
 * schedule of the test's copy never fires before it. */
#define NEVER_START_S 253402300740LL
/* dagbag_import_timeout's default (server/config.h) */
#define IMPORT_TIMEOUT_S 30.0

enum phase { PHASE_RUNNING, PHASE_DRAINING, PHASE_DONE };

struct dag_test {
	uv_loop_t loop;
	uv_timer_t tick;
	uv_signal_t sigint, sigterm;
	struct server_parts parts;
	const struct dag_api_ops *ops;
	const char *dag_id;
	char *run_id;
	enum phase phase;
	bool failed;      /* the run's final state was failed */
	bool interrupted; /* SIGINT or SIGTERM */
	bool killed;      /* the jobs left were killed */
	bool keep;        /* the home stays: paths in it may be printed */
	bool one_task;    /* `tasks test`: every TI's log printed whole, not only failed tails */
	bool tick_on;
	int64_t started_ms, drain_since_ms;
	json_t *seen; /* "state/try" by TI name */
	json_t *tis;  /* the latest task instances */
};

/* ---- output: the CLI's printers (cli_common.h, cli_ti.h) ---- */

/* The TI's state as the API names it; none for a name not known. */
static enum dag_ti_state ti_state_enum(json_t *ti)
{
	enum dag_ti_state s = DAG_TI_NONE;
	dag_ti_state_from_name(cli_ti_state(ti), &s);
	return s;
}

static const char *ti_task(json_t *ti)
{
	return cli_json_str(ti, "task_id", "?");
}

static int ti_map_index(json_t *ti)
{
	return (int)cli_json_int(ti, "map_index", -1);
}

static int ti_try(json_t *ti)
{
	return (int)cli_json_int(ti, "try_number", 0);
}

static void print_summary(struct dag_test *t)
{
	static const char *const header[] = {"TASK", "MAP INDEX", "STATE", "TRIES", "DURATION"};
	struct cli_table tab;
	json_t *ti;
	size_t i;

	if (cli_table_init(&tab, 5, header) < 0)
		return;
	json_array_foreach(t->tis, i, ti)
	{
		char map[16], tries[16], dur[32];
		json_t *d = json_object_get(ti, "duration");

		if (ti_map_index(ti) >= 0)
			snprintf(map, sizeof map, "%d", ti_map_index(ti));
		else
			snprintf(map, sizeof map, "-");
		snprintf(tries, sizeof tries, "%d", ti_try(ti));
		cli_format_duration(json_is_number(d) ? (int64_t)(json_number_value(d) * 1000) : -1,
		                    dur, sizeof dur);
		const char *row[] = {ti_task(ti), map, cli_ti_state(ti), tries, dur};
		cli_table_add(&tab, row);
	}
	putchar('\n');
	cli_table_print(&tab, stdout);
	cli_table_release(&tab);
}

/* The last `max_lines` lines of a file (0: all of its last `max_bytes`). */
static void print_tail(const char *path, int max_lines, long max_bytes)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size, from;
	size_t n, start;
	int lines = 0;

	if (!f) {
		printf("  (no log: %s: %s)\n", path, strerror(errno));
		return;
	}
	if (fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0)
		goto out;
	from = size > max_bytes ? size - max_bytes : 0;
	buf = malloc((size_t)(size - from) + 1);
	if (!buf || fseek(f, from, SEEK_SET) < 0)
		goto out;
	n = fread(buf, 1, (size_t)(size - from), f);
	buf[n] = '\0';
	if (n == 0) {
		printf("  (the log is empty)\n");
		goto out;
	}
	/* back from the end: the start of the max_lines-th line from last */
	start = max_lines > 0 ? n : 0;
	if (max_lines > 0 && start > 0 && buf[start - 1] == '\n')
		start--;
	while (max_lines > 0 && start > 0) {
		if (buf[start - 1] == '\n' && ++lines == max_lines)
			break;
		start--;
	}
	fputs(buf + start, stdout);
	if (buf[n - 1] != '\n')
		putchar('\n');
out:
	free(buf);
	fclose(f);
}

/* The log tail of each failed TI; with one_task, every TI's log whole. */
static void print_ti_logs(struct dag_test *t)
{
	json_t *ti;
	size_t i;

	json_array_foreach(t->tis, i, ti)
	{
		struct weir_error err = {0};
		char name[300], *path = NULL;
		bool ended = false;
		int try_n = ti_try(ti);

		const char *why = json_string_value(json_object_get(ti, "reason"));

		bool failed = ti_state_enum(ti) == DAG_TI_FAILED;
		if (!failed && !t->one_task)
			continue;
		cli_ti_name(ti, name, sizeof name);
		/* the try that ran last: try_number, or the one before when the count moved on */
		if (t->ops->ti_log_locate(t->parts.dm, t->dag_id, t->run_id, ti_task(ti),
		                          ti_map_index(ti), try_n, &path, &ended, &err) < 0 &&
		    (try_n <= 1 ||
		     t->ops->ti_log_locate(t->parts.dm, t->dag_id, t->run_id, ti_task(ti),
		                           ti_map_index(ti), --try_n, &path, &ended, &err) < 0)) {
			printf("\n--- %s failed%s%s; no log: %s\n", name, why && *why ? ": " : "",
			       why && *why ? why : "", err.msg);
			continue;
		}
		printf("\n--- %s %s (try %d)%s%s\n", name, cli_ti_state(ti), try_n,
		       why && *why ? ": " : "", why && *why ? why : "");
		/* the path is worth printing only when the home is kept */
		if (t->one_task) {
			printf("--- its log%s%s:\n", t->keep ? " " : "", t->keep ? path : "");
			print_tail(path, 0, LOG_WHOLE_BYTES);
		} else {
			printf("--- the last %d lines of its log%s%s:\n", LOG_TAIL_LINES,
			       t->keep ? " " : "", t->keep ? path : "");
			print_tail(path, LOG_TAIL_LINES, LOG_TAIL_BYTES);
		}
		free(path);
	}
}

/* ---- the run ---- */

static void kill_jobs(struct dag_test *t)
{
	struct job_row *rows = NULL;
	size_t n = 0;
	struct weir_error err = {0};

	if (store_jobs_active(t->parts.store, &rows, &n, &err) < 0) {
		cli_error("cannot list the jobs to kill: %s", err.msg);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (job_manager_kill(t->parts.jm, rows[i].id, &err) < 0 &&
		    err.kind != WEIR_E_CONFLICT)
			cli_error("job %lld: %s", (long long)rows[i].id, err.msg);
	job_rows_free(rows, n);
}

static void count_process(uv_handle_t *h, void *arg)
{
	if (h->type == UV_PROCESS && !uv_is_closing(h))
		(*(int *)arg)++;
}

static void close_handles(struct dag_test *t)
{
	if (t->tick_on)
		uv_close((uv_handle_t *)&t->tick, NULL);
	t->tick_on = false;
	if (!uv_is_closing((uv_handle_t *)&t->sigint)) {
		uv_close((uv_handle_t *)&t->sigint, NULL);
		uv_close((uv_handle_t *)&t->sigterm, NULL);
	}
}

static void finish(struct dag_test *t)
{
	if (t->phase == PHASE_DONE)
		return;
	t->phase = PHASE_DONE;
	if (t->tis) {
		print_summary(t);
		if (!t->interrupted)
			print_ti_logs(t);
	}
	server_parts_stop(&t->parts);
	close_handles(t);
}

/* Reads the run and its TIs; the run's state goes to *state (borrowed
 * from a static string) when it has ended. */
static void look(struct dag_test *t, const char **state)
{
	struct weir_error err = {0};
	json_t *run = dag_answer_get_run(t->ops, t->parts.dm, t->dag_id, t->run_id, &err);
	json_t *tis = run ? dag_answer_list_tis(t->ops, t->parts.dm, t->dag_id, t->run_id,
	                                        &(struct dag_ti_list_query){.limit = 1000}, &err)
	                  : NULL;

	*state = NULL;
	if (!run || !tis) {
		cli_error("run %s: %s", t->run_id, err.msg);
		json_decref(run);
		return;
	}
	cli_ti_print_changes(t->seen, json_object_get(tis, "task_instances"), NULL);
	json_decref(t->tis);
	t->tis = json_incref(json_object_get(tis, "task_instances"));
	enum dag_run_state rs;
	if (dag_run_state_from_name(json_string_value(json_object_get(run, "state")), &rs) == 0 &&
	    dag_run_state_is_final(rs))
		*state = dag_run_state_name(rs);
	json_decref(tis);
	json_decref(run);
}

static void on_tick(uv_timer_t *h)
{
	struct dag_test *t = h->data;
	const char *state = NULL;
	int jobs = 0, tasks = 0, procs = 0;
	int64_t now = clock_mono_ms();

	if (t->phase == PHASE_RUNNING) {
		look(t, &state);
		if (!state)
			return;
		char dur[32];
		enum dag_run_state rs = DAG_RUN_SUCCESS;
		dag_run_state_from_name(state, &rs);
		t->failed = rs == DAG_RUN_FAILED;
		t->phase = PHASE_DRAINING;
		t->drain_since_ms = now;
		printf("dag run %s of %s %s in %s\n", t->run_id, t->dag_id, state,
		       cli_format_duration(now - t->started_ms, dur, sizeof dur));
		fflush(stdout);
	}
	if (t->phase != PHASE_DRAINING)
		return;
	/* every job ended and every launcher reaped: nothing of the run is left */
	job_manager_counts(t->parts.jm, &jobs, &tasks);
	uv_walk(&t->loop, count_process, &procs);
	if (jobs == 0 && tasks == 0 && procs == 0) {
		look(t, &state);
		finish(t);
		return;
	}
	if (!t->killed && now - t->drain_since_ms > DRAIN_MS) {
		cli_error("%d jobs and %d launchers still running %ds after the run ended: "
		          "killing them",
		          jobs, procs, DRAIN_MS / 1000);
		t->killed = true;
		kill_jobs(t);
	} else if (now - t->drain_since_ms > 2 * DRAIN_MS) {
		cli_error("%d jobs and %d launchers did not end; leaving them", jobs, procs);
		t->failed = true;
		finish(t);
	}
}

static void on_signal(uv_signal_t *h, int signum)
{
	struct dag_test *t = h->data;
	struct weir_error err = {0};
	json_t *body, *r;

	fflush(stdout);
	fprintf(stderr, "weir: %s: killing the run's jobs\n", strsignal(signum));
	if (t->phase == PHASE_DONE)
		return;
	t->interrupted = true;
	if (!t->run_id) {
		/* set-up was interrupted: the run was never made */
		finish(t);
		return;
	}
	if (t->phase == PHASE_RUNNING) {
		/* the run fails first, so that no retry and no successor starts */
		body = json_pack("{s:s}", "state", dag_run_state_name(DAG_RUN_FAILED));
		r = body ? dag_answer_patch_run(t->ops, t->parts.dm, t->dag_id, t->run_id, body,
		                                &err)
		         : NULL;
		if (!r && body)
			cli_error("run %s: %s", t->run_id, err.msg);
		json_decref(r);
		json_decref(body);
		t->phase = PHASE_DRAINING;
		t->drain_since_ms = clock_mono_ms();
	}
	kill_jobs(t);
	t->killed = true;
}

/* ---- set-up ---- */

/* `tasks test`: the document's task `task_id` alone, without its upstream
 * (Airflow's `tasks test` ignores every dependency).  A template that uses
 * an upstream's outputs is then refused by the check, naming them; a Python
 * task's xcom_pull finds nothing, as Airflow's in a test. */
static int keep_one_task(json_t *doc, const char *task_id)
{
	json_t *tasks = json_object_get(doc, "tasks"), *one = NULL, *t;
	size_t i;

	json_array_foreach(tasks, i, t)
	{
		const char *id = json_string_value(json_object_get(t, "task_id"));
		if (id && !strcmp(id, task_id))
			one = t;
	}
	json_t *only = one ? json_array() : NULL;
	/* a command task is told it runs as a test (a Python task's test_mode) */
	json_t *env = one && json_object_get(one, "command") ? json_object_get(one, "env") : NULL;
	if (one && json_object_get(one, "command") && !env) {
		env = json_object();
		if (json_object_set_new(one, "env", env) < 0)
			env = NULL;
	}
	if (env && json_object_set_new(env, "WEIR_TEST_MODE", json_string("1")) < 0)
		env = NULL;
	if (!only || (json_object_get(one, "command") && !env) ||
	    json_array_append(only, one) < 0 ||
	    json_object_set_new(one, "depends_on", json_array()) < 0 ||
	    json_object_set_new(one, "trigger_rule", json_string("all_success")) < 0) {
		json_decref(only);
		return -1;
	}
	return json_object_set_new(doc, "tasks", only);
}

/* The DAG as the manager will load it: paths resolved against the original
 * file's folder, and a schedule that never fires on its own; only the task
 * `task_id` when it is not NULL. */
static int write_copy(const struct dag_spec *spec, const char *task_id, const char *path,
                      struct weir_error *err)
{
	json_t *j = dag_spec_to_json(spec);
	char *text = NULL;
	int rc = -1;

	if (!j || (task_id && keep_one_task(j, task_id) < 0) ||
	    json_object_set_new(j, "start_date", json_integer(NEVER_START_S)) < 0 ||
	    json_object_set_new(j, "end_date", json_null()) < 0 ||
	    !(text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER))) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	rc = fs_write_file_atomic(path, text, strlen(text), 0644, err);
out:
	free(text);
	json_decref(j);
	return rc;
}

/* A pool the DAG names that the configuration lacks gets the slots its
 * largest task takes (see dag_test.h). */
static int add_pools(struct server_config *cfg, const struct dag_spec *spec, const char *file)
{
	for (size_t i = 0; i < spec->n_tasks; i++) {
		const char *name = spec->tasks[i].pool;
		bool have = false;
		int slots = 1;
		struct server_pool *p;

		if (!name || !*name || !strcmp(name, "default_pool"))
			continue;
		for (size_t k = 0; k < cfg->n_pools; k++)
			have = have || !strcmp(cfg->pools[k].name, name);
		if (have)
			continue;
		for (size_t k = 0; k < spec->n_tasks; k++)
			if (spec->tasks[k].pool && !strcmp(spec->tasks[k].pool, name) &&
			    spec->tasks[k].pool_slots > slots)
				slots = spec->tasks[k].pool_slots;
		printf("weir dags test: %s: pool %s is not in the server's configuration%s%s (a "
		       "server leaves its tasks waiting); it gets %d slot%s here\n",
		       file, name, cfg->config_path ? " " : "",
		       cfg->config_path ? cfg->config_path : "", slots, slots == 1 ? "" : "s");
		p = realloc(cfg->pools, (cfg->n_pools + 1) * sizeof *p);
		if (!p)
			return -1;
		cfg->pools = p;
		memset(&p[cfg->n_pools], 0, sizeof *p);
		p[cfg->n_pools].name = strdup(name);
		p[cfg->n_pools].slots = slots;
		if (!p[cfg->n_pools].name)
			return -1;
		cfg->n_pools++;
	}
	return 0;
}

/* The server's configuration as `weir server --home HOME --config FILE`
 * reads it, with --executor local applied; the test's own home, DAG folder
 * and port go over it afterwards. */
static int load_server_config(struct server_config *cfg, const struct dag_test_opts *o,
                              struct weir_error *err)
{
	if ((o->home && !(cfg->home = strdup(o->home))) ||
	    (o->config && !(cfg->config_path = strdup(o->config))))
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (server_config_load(cfg, err) < 0)
		return -1;
	if (!cfg->config_path) {
		char *def = fs_join(cfg->home, "weir.yaml");
		if (def && fs_exists(def))
			cfg->config_path = def;
		else
			free(def);
	}
	/* the test's server is a private one on loopback, its launchers told
	 * http://: the server's tls: stays the server's */
	free(cfg->tls_cert);
	free(cfg->tls_key);
	cfg->tls_cert = cfg->tls_key = NULL;
	if (o->executor_local) {
		cfg->executor_slurm = false;
		for (size_t i = 0; i < cfg->n_queues; i++)
			cfg->queues[i].slurm = false;
	}
	return 0;
}

static char *make_home(void)
{
	const char *tmp = getenv("TMPDIR");
	char *path = NULL;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (asprintf(&path, "%s/weir-dags-test-XXXXXX", tmp) < 0)
		return NULL;
	if (!mkdtemp(path)) {
		cli_error("cannot make a temporary home under %s: %s", tmp, strerror(errno));
		free(path);
		return NULL;
	}
	return path;
}

/* An import error of the copy, told of the user's file: the copy's path
 * (and its line, which means nothing in the user's file) become the file's. */
static void print_import_error(const char *msg, const char *copy, const char *file)
{
	size_t n = strlen(copy);
	const char *rest = msg;

	if (strncmp(msg, copy, n)) {
		cli_error("%s", msg);
		return;
	}
	rest = msg + n;
	if (*rest == ':' && rest[1] >= '0' && rest[1] <= '9')
		rest += 1 + strspn(rest + 1, "0123456789");
	cli_error("%s%s", file, rest);
}

/* The DAG manager loaded the copy: else say why (its import error). */
static int check_loaded(struct dag_test *t, const char *copy, const char *file)
{
	struct weir_error err = {0};
	json_t *dag = dag_answer_get_dag(t->ops, t->parts.dm, t->dag_id, &err);
	json_t *ie, *e;
	size_t i;

	if (dag) {
		json_decref(dag);
		return 0;
	}
	ie = dag_answer_import_errors(t->ops, t->parts.dm, NULL, 100, 0, &err);
	json_array_foreach(json_object_get(ie, "import_errors"), i, e)
	    print_import_error(json_string_value(json_object_get(e, "stack_trace")), copy, file);
	if (json_array_size(json_object_get(ie, "import_errors")) == 0)
		cli_error("%s: DAG %s did not load", file, t->dag_id);
	json_decref(ie);
	return -1;
}

static int trigger(struct dag_test *t, const struct dag_test_opts *o, const char *iso)
{
	struct weir_error err = {0};
	json_t *body = json_object(), *run;
	int rc = DAG_TEST_FAILED;

	if (!body)
		return rc;
	if (o->conf)
		json_object_set(body, "conf", o->conf);
	if (iso)
		json_object_set_new(body, "logical_date", json_string(iso));
	run = dag_answer_trigger_run(t->ops, t->parts.dm, t->dag_id, body, &err);
	json_decref(body);
	if (!run) {
		cli_error("%s", err.msg);
		return err.kind == WEIR_E_INVALID ? DAG_TEST_BAD_INPUT : DAG_TEST_FAILED;
	}
	const char *id = json_string_value(json_object_get(run, "dag_run_id"));
	t->run_id = strdup(id ? id : "");
	if (t->run_id) {
		printf("dag run %s triggered\n", t->run_id);
		fflush(stdout);
		rc = DAG_TEST_SUCCESS;
	}
	json_decref(run);
	return rc;
}

/* --conn and --var over every source. */
static int add_overrides(struct secrets *s, const struct dag_test_opts *o, struct weir_error *err)
{
	size_t i;
	json_t *v;

	json_array_foreach(o->conns, i, v)
	{
		if (secrets_override_conn(s, json_string_value(v), err) < 0)
			return -1;
	}
	json_array_foreach(o->vars, i, v)
	{
		if (secrets_override_var(s, json_string_value(v), err) < 0)
			return -1;
	}
	return 0;
}

static bool is_py(const char *file)
{
	size_t n = strlen(file);
	return n > 3 && !strcmp(file + n - 3, ".py");
}

/* The DAGs of a DAG file as the server loads them: a YAML or JSON file
 * parsed, a Python file imported by the DAG processor (its own folder as
 * the DAG folder, killed after timeout_s).  A JSON array of specs' owners:
 * the specs themselves are returned through *specs (n of them, the caller
 * destroys each and frees the array); -1 with *error (newly allocated)
 * naming the file and line. */
static int load_file_dags(const char *file, const char *dags_dir, double timeout_s,
                          struct dag_spec ***specs, size_t *n, char **error)
{
	struct weir_error err = {0};
	json_t *docs, *doc;
	size_t i;
	char *base;

	*specs = NULL;
	*n = 0;
	*error = NULL;
	if (!is_py(file)) {
		struct dag_spec *one = dag_spec_parse_file(file, &err);
		if (!one || !(*specs = malloc(sizeof **specs))) {
			dag_spec_destroy(one);
			*error = strdup(err.msg[0] ? err.msg : "out of memory");
			return -1;
		}
		(*specs)[0] = one;
		*n = 1;
		return 0;
	}
	/* the processor runs in the file's folder: it gets the file's absolute path */
	base = fs_abs_dirname(file);
	const char *name = strrchr(file, '/');
	char *abs = base ? fs_join(base, name ? name + 1 : file) : NULL;
	docs = abs ? dag_manager_py_documents(abs, dags_dir ? dags_dir : base, timeout_s, error)
	           : NULL;
	free(abs);
	if (!docs) {
		free(base);
		if (!*error)
			*error = strdup("out of memory");
		return -1;
	}
	*specs = calloc(json_array_size(docs) + 1, sizeof **specs);
	json_array_foreach(docs, i, doc)
	{
		struct dag_spec *spec = *specs ? dag_spec_from_json(doc, file, base, &err) : NULL;
		if (!spec) {
			const char *id = json_string_value(json_object_get(doc, "dag_id"));
			if (asprintf(error, "%s: DAG %s: %s", file, id ? id : "?",
			             err.msg[0] ? err.msg : "out of memory") < 0)
				*error = NULL;
			break;
		}
		(*specs)[(*n)++] = spec;
	}
	free(base);
	json_decref(docs);
	if (!*error && *specs)
		return 0;
	for (i = 0; *specs && i < *n; i++)
		dag_spec_destroy((*specs)[i]);
	free(*specs);
	*specs = NULL;
	*n = 0;
	if (!*error)
		*error = strdup("out of memory");
	return -1;
}

static void free_specs(struct dag_spec **specs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dag_spec_destroy(specs[i]);
	free(specs);
}

/* The one DAG a file defines, for `dags test`; NULL (printed why) when it
 * does not load or defines none or several. */
static struct dag_spec *test_spec(const char *file, double timeout_s)
{
	struct dag_spec **specs = NULL, *spec = NULL;
	size_t n = 0;
	char *error = NULL;

	if (load_file_dags(file, NULL, timeout_s, &specs, &n, &error) < 0) {
		cli_error("%s", error ? error : "out of memory");
		free(error);
		return NULL;
	}
	if (n == 1) {
		spec = specs[0];
		specs[0] = NULL;
	} else {
		cli_error("%s: defines %zu DAGs; `weir dags test` runs a file that defines one",
		          file, n);
	}
	free_specs(specs, n);
	return spec;
}

/* One file of `dags check`: its DAGs or its import error printed; -1 when
 * it did not load.  `dags_dir`: the DAG folder it was found in (NULL: its
 * own folder). */
static int check_file(const char *file, const char *dags_dir, double timeout_s, size_t *n_dags)
{
	struct dag_spec **specs = NULL;
	size_t n = 0;
	char *error = NULL;

	if (load_file_dags(file, dags_dir, timeout_s, &specs, &n, &error) < 0) {
		printf("%s: import error: %s\n", file, error ? error : "out of memory");
		free(error);
		return -1;
	}
	if (n == 0)
		printf("%s: no DAG\n", file);
	for (size_t i = 0; i < n; i++) {
		const struct dag_spec *d = specs[i];
		printf("%s: DAG %s: schedule %s; %zu task%s:", file, d->dag_id,
		       dag_on_datasets(d)    ? "datasets"
		       : d->schedule.text[0] ? d->schedule.text
		                             : "none",
		       d->n_tasks, d->n_tasks == 1 ? "" : "s");
		for (size_t t = 0; t < d->n_tasks; t++)
			printf(" %s", d->tasks[t].task_id);
		printf("\n");
	}
	*n_dags += n;
	free_specs(specs, n);
	return 0;
}

/* The DAG files of a folder given to `dags check`, as the server's walk
 * finds them. */
static void check_visit(void *arg, char *path, bool top)
{
	struct strvec *found = arg;

	if ((top || is_py(path) || dag_manager_names_dag_id(path)) && strvec_push(found, path) < 0)
		cli_error("out of memory");
	free(path);
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* `dags test DAG_ID --dags DIR`: the DAG `dag_id` of the folder, its file
 * in *file (newly allocated); NULL (printed why) when no file defines it. */
static struct dag_spec *folder_spec(const char *dir, bool glob, const char *dag_id,
                                    double timeout_s, char **file)
{
	struct strvec found = STRVEC_INIT;
	struct dag_spec *spec = NULL;

	*file = NULL;
	dag_manager_walk(dir, glob, check_visit, &found);
	if (found.n)
		qsort(found.v, found.n, sizeof *found.v, cmp_text);
	for (size_t i = 0; i < found.n && !spec; i++) {
		struct dag_spec **specs = NULL;
		size_t n = 0;
		char *error = NULL;
		if (load_file_dags(found.v[i], dir, timeout_s, &specs, &n, &error) < 0) {
			free(error); /* another file's import error: `dags check` tells it */
			continue;
		}
		for (size_t k = 0; k < n && !spec; k++)
			if (!strcmp(specs[k]->dag_id, dag_id)) {
				spec = specs[k];
				specs[k] = NULL;
				*file = strdup(found.v[i]);
			}
		free_specs(specs, n);
	}
	strvec_release(&found);
	if (spec && !*file) {
		dag_spec_destroy(spec);
		spec = NULL;
	}
	if (!spec)
		cli_error("%s: no DAG file defines a DAG %s (or its file does not load: weir dags "
		          "check %s)",
		          dir, dag_id, dir);
	return spec;
}

int dag_check_run(const char *const *paths, size_t n_paths, const char *home, const char *config)
{
	struct weir_error err = {0};
	struct dag_test_opts o = {.home = home, .config = config};
	struct server_config cfg;
	double timeout_s;
	size_t n_dags = 0, n_failed = 0;

	server_config_init(&cfg);
	if (load_server_config(&cfg, &o, &err) < 0) {
		cli_error("%s", err.msg);
		server_config_release(&cfg);
		return DAG_TEST_BAD_INPUT;
	}
	timeout_s = cfg.dagbag_import_timeout > 0 ? cfg.dagbag_import_timeout : IMPORT_TIMEOUT_S;
	bool glob = cfg.dag_ignore_glob;
	server_config_release(&cfg);
	size_t n_checked = 0;
	for (size_t f = 0; f < n_paths; f++) {
		struct stat st;
		if (stat(paths[f], &st) == 0 && S_ISDIR(st.st_mode)) {
			struct strvec found = STRVEC_INIT;
			dag_manager_walk(paths[f], glob, check_visit, &found);
			if (found.n)
				qsort(found.v, found.n, sizeof *found.v, cmp_text);
			for (size_t i = 0; i < found.n; i++)
				n_failed +=
				    check_file(found.v[i], paths[f], timeout_s, &n_dags) < 0;
			n_checked += found.n;
			strvec_release(&found);
			continue;
		}
		n_failed += check_file(paths[f], NULL, timeout_s, &n_dags) < 0;
		n_checked++;
	}
	printf("%zu file%s, %zu DAG%s, %zu import error%s\n", n_checked, n_checked == 1 ? "" : "s",
	       n_dags, n_dags == 1 ? "" : "s", n_failed, n_failed == 1 ? "" : "s");
	fflush(stdout);
	return n_failed ? DAG_TEST_FAILED : DAG_TEST_SUCCESS;
}

int dag_test_run(const struct dag_test_opts *o)
{
	struct weir_error err = {0};
	struct dag_test t;
	struct server_config cfg;
	struct dag_spec *spec = NULL;
	char *file = NULL;
	char *home = NULL, *dags = NULL, *copy = NULL, *name = NULL, *base = NULL;
	char iso[64];
	int64_t logical_ms;
	json_t *params;
	int rc = DAG_TEST_FAILED, r;

	memset(&t, 0, sizeof t);
	server_config_init(&cfg);
	signal(SIGPIPE, SIG_IGN);
	if (load_server_config(&cfg, o, &err) < 0) {
		cli_error("%s", err.msg);
		rc = DAG_TEST_BAD_INPUT;
		goto out;
	}
	double timeout_s =
	    cfg.dagbag_import_timeout > 0 ? cfg.dagbag_import_timeout : IMPORT_TIMEOUT_S;
	/* `tasks test DAG_ID TASK`: the DAG in the server's DAG folder unless a folder is
	 * given or the first argument is a file */
	const char *dir = o->dags_dir;
	if (!dir && o->task_id && fs_exists(o->file) != 1)
		dir = cfg.dags_dir;
	if (dir)
		spec = folder_spec(dir, cfg.dag_ignore_glob, o->file, timeout_s, &file);
	else if ((spec = test_spec(o->file, timeout_s)) && !(file = strdup(o->file))) {
		dag_spec_destroy(spec);
		spec = NULL;
	}
	if (!spec) {
		rc = DAG_TEST_BAD_INPUT;
		goto out;
	}
	if (o->task_id && dag_spec_task_index(spec, o->task_id) < 0) {
		cli_error("%s: DAG %s has no task %s", file, spec->dag_id, o->task_id);
		rc = DAG_TEST_BAD_INPUT;
		goto out;
	}
	if (o->logical_date &&
	    schedule_parse_time(o->logical_date, "--logical-date", &logical_ms, &err) < 0) {
		cli_error("%s", err.msg);
		rc = DAG_TEST_BAD_INPUT;
		goto out;
	}
	if (o->logical_date)
		schedule_format_ts(logical_ms, iso, sizeof iso);
	params = dag_spec_run_params(spec, o->conf, &err);
	if (!params || dag_spec_check_run_params(spec, params, &err) < 0) {
		json_decref(params);
		cli_error("--conf: %s", err.msg);
		rc = DAG_TEST_BAD_INPUT;
		goto out;
	}
	json_decref(params);

	home = make_home();
	if (!home)
		goto out;
	dags = fs_join(home, "dags");
	if (!dags || asprintf(&name, "%s.json", spec->dag_id) < 0 || !(copy = fs_join(dags, name)))
		goto out;
	if (fs_mkdir_p(dags, 0755, &err) < 0 || write_copy(spec, o->task_id, copy, &err) < 0) {
		cli_error("%s: %s", home, err.msg);
		goto out;
	}
	free(cfg.home);
	free(cfg.dags_dir);
	free(cfg.listen_host);
	cfg.home = strdup(home);
	cfg.dags_dir = strdup(dags);
	cfg.listen_host = strdup("127.0.0.1");
	cfg.listen_port = 0;
	if (!cfg.home || !cfg.dags_dir || !cfg.listen_host || add_pools(&cfg, spec, file) < 0)
		goto out;
	if (server_prepare_home(&cfg, &err) < 0) {
		cli_error("home %s: %s", home, err.msg);
		goto out;
	}
	if (uv_loop_init(&t.loop) != 0) {
		cli_error("cannot create the event loop");
		goto out;
	}
	/* a Ctrl-C during set-up is seen once the loop runs: the home is removed all the same */
	uv_signal_init(&t.loop, &t.sigint);
	uv_signal_init(&t.loop, &t.sigterm);
	t.sigint.data = t.sigterm.data = &t;
	uv_signal_start(&t.sigint, on_signal, SIGINT);
	uv_signal_start(&t.sigterm, on_signal, SIGTERM);
	/* the server's own chatter (DAG loaded, run queued) is not the test's output */
	if (!getenv("WEIR_LOG"))
		log_set_level(LOG_WARN);
	/* the temporary home goes when the run ends: an agent, made to outlive
	 * its server, would outlive the home (docs/internals/launch.md) */
	cfg.no_agent = true;
	if (server_parts_create(&t.parts, &t.loop, &cfg, &err) < 0) {
		cli_error("%s", err.msg);
		goto out_loop;
	}
	if (add_overrides(t.parts.secrets, o, &err) < 0) {
		cli_error("%s", err.msg);
		rc = DAG_TEST_BAD_INPUT;
		goto out_loop;
	}
	/* the DAG's job files are where the user's file is, not in the copy's folder */
	base = fs_abs_dirname(file);
	dag_manager_set_paths_root(t.parts.dm, base);
	free(base);
	/* checked on the user's file, so that an error names it and its line */
	if (dag_manager_check_spec(t.parts.dm, spec, file, &err) < 0) {
		cli_error("%s", err.msg);
		rc = DAG_TEST_BAD_INPUT;
		goto out_loop;
	}
	if (server_parts_recover(&t.parts, &err) < 0) {
		cli_error("%s", err.msg);
		goto out_loop;
	}
	t.ops = dag_manager_api_ops();
	t.dag_id = spec->dag_id;
	t.keep = o->keep;
	t.one_task = o->task_id != NULL;
	t.seen = json_object();
	if (!t.seen)
		goto out_loop;
	if (check_loaded(&t, copy, file) < 0) {
		rc = DAG_TEST_BAD_INPUT;
		goto out_loop;
	}
	if (o->task_id)
		printf("weir tasks test: task %s of DAG %s from %s (its upstream not run)\n",
		       o->task_id, spec->dag_id, file);
	else
		printf("weir dags test: DAG %s (%zu tasks) from %s\n", spec->dag_id, spec->n_tasks,
		       file);
	fflush(stdout);
	t.started_ms = clock_mono_ms();
	r = trigger(&t, o, o->logical_date ? iso : NULL);
	if (r != DAG_TEST_SUCCESS) {
		rc = r;
		goto out_loop;
	}
	uv_timer_init(&t.loop, &t.tick);
	t.tick.data = &t;
	t.tick_on = true;
	uv_timer_start(&t.tick, on_tick, TICK_MS, TICK_MS);
	uv_run(&t.loop, UV_RUN_DEFAULT);
	rc = t.interrupted ? DAG_TEST_INTERRUPTED : t.failed ? DAG_TEST_FAILED : DAG_TEST_SUCCESS;
out_loop:
	close_handles(&t);
	server_parts_stop(&t.parts);
	uv_run(&t.loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&t.loop) != 0)
		log_warn("event loop closed with handles still open");
out:
	server_parts_release(&t.parts);
	if (home && o->keep) {
		printf("kept the test's home: %s\n", home);
	} else if (home && fs_remove_tree(home) < 0) {
		cli_error("cannot remove %s: %s", home, strerror(errno));
	}
	fflush(stdout);
	json_decref(t.seen);
	json_decref(t.tis);
	free(t.run_id);
	free(name);
	free(file);
	free(copy);
	free(dags);
	free(home);
	dag_spec_destroy(spec);
	server_config_release(&cfg);
	return rc;
}
