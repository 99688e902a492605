/* dag_manager.c: the DAG folder, runs and their progression (dag_manager.h).
 *
 * Owns: one entry per DAG file seen (its mtime, size and parsed DAG; the
 * parsed DAG of a removed file is kept so its active runs can finish), the
 * pools, a folder watch, a rescan timer and one wake-up timer (the earliest
 * of the next due scheduled run and the next retry).
 *
 * Nothing about runs is kept in memory between events: each event reads
 * the run's rows, asks sched/ and writes the changes back, inside the job
 * manager's turn (one transaction).  So recovery is the live path run once
 * more: a restarted server reads the same rows and decides the same way.
 */
#include "server/dag_manager.h"
#include "server/dag_internal.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "model/cron.h"
#include "model/dag_spec.h"
#include "model/job_spec.h"
#include "model/template.h"
#include "model/tony.h"
#include "sched/dag_pool.h"
#include "sched/dag_run.h"
#include "sched/dag_states.h"
#include "store/dag_store.h"

#define RESCAN_MS 2000
#define FS_EVENT_DELAY_MS 50
#define DEFAULT_POOL_SLOTS 128
#define OUTPUT_MAX (64 * 1024)
#define DEFAULT_TASK_MEMORY_MB 512
#define MAX_DUE_PER_PASS 64



/* ---- small helpers ---- */

char *dm_xstrdup(const char *s)
{
	return strdup(s ? s : "");
}

static void set_str(char **dst, const char *v)
{
	char *c = dm_xstrdup(v);
	if (!c)
		return;
	free(*dst);
	*dst = c;
}

static void set_state(char *dst, const char *name)
{
	snprintf(dst, STORE_STATE_MAX, "%s", name);
}

static void run_cache_drop(struct dag_manager *dm);

/* An entry point starts: the outermost one starts with no cached run and
 * with a pool pass owed (whatever happened outside the manager, a job's end
 * or a new configuration, may have freed a slot). */
void dm_begin(struct dag_manager *dm)
{
	if (dm->depth++ == 0) {
		run_cache_drop(dm);
		dm->pool_dirty = true;
	}
	job_manager_turn_begin(dm->jm);
}


/* Every entry point ends here: what follows from its changes, the commit
 * (by the outermost turn), and the wake-up timer (a retry may be due).
 * The runs cached during the turn go with the outermost end: between
 * turns the store alone holds the truth. */
void dm_end(struct dag_manager *dm)
{
	dm_work_pass(dm);
	job_manager_turn_end(dm->jm);
	dm_arm_wake(dm);
	if (dm->depth > 0 && --dm->depth == 0)
		run_cache_drop(dm);
}

/* "2024-01-31T06:00:00+00:00", with microseconds when the time has a
 * fraction of a second (Airflow's form). */
char *dm_fmt_time(int64_t ms, char *buf, size_t size)
{
	char ts[40];
	int64_t sec_ms = ms - (((ms % 1000) + 1000) % 1000);

	schedule_format_ts(sec_ms, ts, sizeof ts);
	if (ms == sec_ms) {
		snprintf(buf, size, "%s", ts);
	} else {
		char *plus = strrchr(ts, '+');
		if (plus)
			*plus = '\0';
		snprintf(buf, size, "%s.%03d000+00:00", ts, (int)(ms - sec_ms));
	}
	return buf;
}

json_t *dm_time_json(int64_t ms)
{
	char buf[48];
	if (ms <= 0)
		return json_null();
	return json_string(dm_fmt_time(ms, buf, sizeof buf));
}

/* A date as Airflow clients send it: what schedule_parse_time reads, also
 * with a fraction of a second. */
int dm_parse_date(const char *text, const char *field, int64_t *ms, struct weir_error *err)
{
	char buf[80];
	const char *dot;
	size_t nd;
	int frac = 0;

	/* the fraction is read here: schedule_parse_time works in whole seconds */
	dot = strchr(text, '.');
	if (!dot || strlen(text) >= sizeof buf)
		return schedule_parse_time(text, field, ms, err);
	nd = strspn(dot + 1, "0123456789");
	for (size_t i = 0; i < nd && i < 3; i++)
		frac = frac * 10 + (dot[1 + i] - '0');
	for (size_t i = nd; i < 3; i++)
		frac *= 10;
	snprintf(buf, sizeof buf, "%.*s%s", (int)(dot - text), text, dot + 1 + nd);
	if (schedule_parse_time(buf, field, ms, err) < 0)
		return -1;
	*ms += frac;
	return 0;
}

/* Single-quotes `s` for /bin/sh. */
static char *shell_quote(const char *s)
{
	size_t n = 3;
	char *out, *p;

	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	out = malloc(n);
	if (!out)
		return NULL;
	p = out;
	*p++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = *c;
		}
	}
	*p++ = '\'';
	*p = '\0';
	return out;
}

/* ---- DAG entries ---- */

struct dag_entry *dm_entry_by_id(struct dag_manager *dm, const char *dag_id)
{
	struct dag_entry *found = NULL;

	for (struct dag_entry *e = dm->entries; e; e = e->next)
		if (e->spec && !strcmp(e->spec->dag_id, dag_id)) {
			if (e->present)
				return e;
			found = e;
		}
	return found;
}

static struct dag_entry *entry_by_file(struct dag_manager *dm, const char *file)
{
	for (struct dag_entry *e = dm->entries; e; e = e->next)
		if (!strcmp(e->file, file))
			return e;
	return NULL;
}

const struct dag_spec *dm_spec_of(struct dag_manager *dm, const char *dag_id,
                                      struct weir_error *err)
{
	struct dag_entry *e = dm_entry_by_id(dm, dag_id);

	if (!e) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "DAG %s: no such DAG", dag_id);
		return NULL;
	}
	return e->spec;
}

static void entry_free(struct dag_entry *e)
{
	free(e->file);
	dag_spec_destroy(e->spec);
	free(e);
}

/* The logical date of the DAG's latest scheduled (or backfill) run. */
int64_t dm_last_scheduled(struct dag_manager *dm, struct dag_entry *e)
{
	struct dag_run_query q = {.dag_id = e->spec->dag_id, .newest_first = true};
	struct dag_run_row *rows = NULL;
	size_t n = 0;

	if (e->last_sched_known)
		return e->last_sched_ms;
	e->last_sched_ms = CRON_NEVER;
	if (dag_store_run_list(dm->ds, &q, &rows, &n, NULL) == 0) {
		for (size_t i = 0; i < n; i++)
			if (!strcmp(rows[i].run_type, "scheduled")) {
				e->last_sched_ms = rows[i].logical_date;
				break;
			}
		dag_run_rows_free(rows, n);
		e->last_sched_known = true;
	}
	return e->last_sched_ms;
}

/* ---- the folder ---- */

static bool dag_file_name(const char *name)
{
	size_t n = strlen(name);

	if (name[0] == '.')
		return false;
	return (n > 5 && !strcmp(name + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(name + n - 4, ".yml")) ||
	       (n > 5 && !strcmp(name + n - 5, ".json"));
}

static void import_error(struct dag_manager *dm, struct dag_entry *e, const char *msg)
{
	struct weir_error err = {0};

	log_warn("DAG file %s: %s", e->file, msg);
	if (dag_store_import_error_set(dm->ds, e->file, clock_now_ms(), msg, &err) < 0)
		log_error("DAG file %s: %s", e->file, err.msg);
	if (e->spec) {
		/* the last good version keeps running; the DAG says why it is stale */
		struct dag_row row = {0};
		if (dag_store_dag_get(dm->ds, e->spec->dag_id, &row, NULL) == 0) {
			set_str(&row.import_error, msg);
			if (dag_store_dag_put(dm->ds, &row, &err) < 0)
				log_error("DAG %s: %s", e->spec->dag_id, err.msg);
			dag_row_release(&row);
		}
	}
}

static int put_dag(struct dag_manager *dm, struct dag_entry *e, struct weir_error *err)
{
	json_t *j = dag_spec_to_json(e->spec);
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	struct dag_row row = {.dag_id = e->spec->dag_id,
	                      .file = e->file,
	                      .paused = false,
	                      .active = true,
	                      .last_parsed_at = clock_now_ms(),
	                      .import_error = "",
	                      .spec_json = text};
	int rc = -1;

	if (!text) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	rc = dag_store_dag_put(dm->ds, &row, err);
out:
	free(text);
	json_decref(j);
	return rc;
}

int dag_manager_check_spec(struct dag_manager *dm, const struct dag_spec *spec,
                             const char *file, struct weir_error *err)
{
	for (size_t i = 0; i < spec->n_tasks; i++) {
		const struct dag_task *t = &spec->tasks[i];
		char names[256];
		if (!t->queue || job_manager_has_queue(dm->jm, t->queue, names, sizeof names))
			continue;
		int line = dag_spec_line_of(file, t->queue_at);
		char at[32] = "";
		if (line > 0)
			snprintf(at, sizeof at, ":%d", line);
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s%s: %s: no queue \"%s\" on this server (%s%s)", file, at,
		                      t->queue_at, t->queue,
		                      names[0] ? "its queues: " : "it has no queues", names);
	}
	/* more slots than its pool has: it could never run */
	for (size_t i = 0; i < spec->n_tasks; i++) {
		const struct dag_task *t = &spec->tasks[i];
		const char *pool = t->pool ? t->pool : DAG_DEFAULT_POOL;
		for (size_t k = 0; k < dm->n_pools; k++) {
			if (strcmp(dm->pools[k].name, pool) || dm->pools[k].slots < 0 ||
			    t->pool_slots <= dm->pools[k].slots)
				continue;
			int line = t->pool_slots_at[0] ? dag_spec_line_of(file, t->pool_slots_at) : 0;
			char at[32] = "";
			if (line > 0)
				snprintf(at, sizeof at, ":%d", line);
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s%s: %s: task %s takes %d slots, but pool %s has %d",
			                      file, at, t->pool_slots_at, t->task_id, t->pool_slots,
			                      pool, dm->pools[k].slots);
		}
	}
	return 0;
}

/* The file is new or changed: parse it; a good parse replaces the DAG. */
static void load_file(struct dag_manager *dm, struct dag_entry *e)
{
	struct weir_error err = {0};
	struct dag_spec *spec = dag_spec_parse_file(e->file, &err);
	struct dag_entry *other;
	char msg[WEIR_ERROR_MSG_MAX + 64];

	if (!spec) {
		import_error(dm, e, err.msg);
		return;
	}
	/* a queue this server does not have, a task larger than its pool: an import
	 * error at its line */
	if (dag_manager_check_spec(dm, spec, e->file, &err) < 0) {
		dag_spec_destroy(spec);
		import_error(dm, e, err.msg);
		return;
	}
	other = dm_entry_by_id(dm, spec->dag_id);
	if (other && other != e && other->present) {
		snprintf(msg, sizeof msg, "%s: dag_id: \"%s\" is already the DAG of %s", e->file,
		         spec->dag_id, other->file);
		dag_spec_destroy(spec);
		import_error(dm, e, msg);
		return;
	}
	if (other && other != e && !other->present) {
		/* the DAG moved to another file: this one takes it over */
		dag_spec_destroy(other->spec);
		other->spec = NULL;
	}
	if (e->spec && strcmp(e->spec->dag_id, spec->dag_id) &&
	    dag_store_dag_deactivate(dm->ds, e->spec->dag_id, &err) < 0)
		log_error("DAG %s: %s", e->spec->dag_id, err.msg);
	dag_spec_destroy(e->spec);
	e->spec = spec;
	e->last_sched_known = false;
	if (put_dag(dm, e, &err) < 0) {
		log_error("DAG %s: %s", spec->dag_id, err.msg);
		return;
	}
	if (dag_store_import_error_clear(dm->ds, e->file, &err) < 0)
		log_error("DAG file %s: %s", e->file, err.msg);
	log_info("DAG %s loaded from %s (%zu tasks)", spec->dag_id, e->file, spec->n_tasks);
}

static void file_gone(struct dag_manager *dm, struct dag_entry *e)
{
	struct weir_error err = {0};

	e->present = false;
	if (dag_store_import_error_clear(dm->ds, e->file, &err) < 0)
		log_error("DAG file %s: %s", e->file, err.msg);
	if (e->spec) {
		struct dag_entry *other = dm_entry_by_id(dm, e->spec->dag_id);
		/* another file may hold the same DAG now */
		if (!other || other == e || !other->present) {
			if (dag_store_dag_deactivate(dm->ds, e->spec->dag_id, &err) < 0)
				log_error("DAG %s: %s", e->spec->dag_id, err.msg);
			log_info("DAG %s: its file %s is gone", e->spec->dag_id, e->file);
		}
	}
}

/* Reads the folder: new and changed files are parsed, missing ones
 * deactivate their DAG.  Inside a turn. */
static void scan(struct dag_manager *dm)
{
	DIR *d = opendir(dm->dir);
	struct dirent *de;

	/* a new parse replaces the spec that the turn's runs point at */
	run_cache_drop(dm);

	if (!d) {
		log_warn("DAG folder %s: %s", dm->dir, strerror(errno));
		return;
	}
	for (struct dag_entry *e = dm->entries; e; e = e->next)
		e->seen = false;
	while ((de = readdir(d))) {
		struct stat st;
		char *path;
		struct dag_entry *e;
		int64_t mt;

		if (!dag_file_name(de->d_name))
			continue;
		path = fs_join(dm->dir, de->d_name);
		if (!path)
			continue;
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		e = entry_by_file(dm, path);
		if (!e) {
			e = calloc(1, sizeof *e);
			if (!e) {
				free(path);
				continue;
			}
			e->file = path;
			path = NULL;
			e->next = dm->entries;
			dm->entries = e;
		}
		free(path);
		e->seen = true;
		if (e->present && e->mtime_ns == mt && e->size == (int64_t)st.st_size)
			continue;
		e->present = true;
		e->mtime_ns = mt;
		e->size = (int64_t)st.st_size;
		load_file(dm, e);
	}
	closedir(d);
	for (struct dag_entry *e = dm->entries; e; e = e->next)
		if (e->present && !e->seen)
			file_gone(dm, e);
}

static void on_scan_timer(uv_timer_t *t)
{
	struct dag_manager *dm = t->data;

	dm_begin(dm);
	scan(dm);
	dm_end(dm);
	dm_arm_wake(dm);
	dm->last_pass_ms = clock_now_ms();
}

static void on_fs_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	struct dag_manager *dm = h->data;

	(void)filename;
	(void)events;
	(void)status;
	/* editors write in steps: look a moment later, then every RESCAN_MS */
	uv_timer_start(&dm->scan_timer, on_scan_timer, FS_EVENT_DELAY_MS, RESCAN_MS);
}

/* ---- a run in memory, for one event ---- */


static void run_ctx_release(struct run_ctx *rc)
{
	dag_run_row_release(&rc->run);
	dag_ti_rows_free(rc->rows, rc->n_rows);
	free(rc->nodes);
	free(rc->tis);
	free(rc->ti_row);
	free(rc->ti_task);
	json_decref(rc->params);
	memset(rc, 0, sizeof *rc);
}

static json_t *run_conf(const struct dag_run_row *run)
{
	json_t *c = json_loads(run->conf && *run->conf ? run->conf : "{}", 0, NULL);
	if (!json_is_object(c)) {
		json_decref(c);
		c = json_object();
	}
	return c;
}

static void fill_ti_row(struct dag_ti_row *r, const struct dag_spec *spec, const char *run_id,
                        const struct dag_task *t, int map_index)
{
	memset(r, 0, sizeof *r);
	r->dag_id = (char *)spec->dag_id;
	r->run_id = (char *)run_id;
	r->task_id = t->task_id;
	r->map_index = map_index;
	set_state(r->state, "none");
	r->max_tries = t->retries + 1;
	r->pool = t->pool ? t->pool : DAG_DEFAULT_POOL;
	r->pool_slots = t->pool_slots > 0 ? t->pool_slots : 1;
	r->priority = t->priority;
	r->rendered_command = "";
	r->outputs = "";
	r->reason = "";
}

/* Inserts the TIs of task `t` for a run (one, or one per foreach item). */
static int insert_task_tis(struct dag_manager *dm, const struct dag_spec *spec, const char *run_id,
                           const struct dag_task *t, const json_t *params, struct weir_error *err)
{
	struct dag_ti_row r;

	if (t->foreach_list || t->foreach_param) {
		json_t *items = dag_task_foreach_items(spec, t, params, err);
		if (!items)
			return -1;
		for (size_t k = 0; k < json_array_size(items); k++) {
			fill_ti_row(&r, spec, run_id, t, (int)k);
			if (dag_store_ti_insert(dm->ds, &r, err) < 0) {
				json_decref(items);
				return -1;
			}
		}
		json_decref(items);
		return 0;
	}
	fill_ti_row(&r, spec, run_id, t, -1);
	return dag_store_ti_insert(dm->ds, &r, err);
}

/* The task index of each row (-1: a task that left the file).  Rows come in
 * task order (inserted so), so a cursor finds nearly every one at once. */
static void rows_to_tasks(const struct dag_spec *spec, const struct dag_ti_row *rows, size_t n,
                          long *task_of)
{
	size_t t = 0;

	for (size_t k = 0; k < n; k++) {
		const char *id = rows[k].task_id;
		if (t < spec->n_tasks && !strcmp(id, spec->tasks[t].task_id)) {
			task_of[k] = (long)t;
		} else if (t + 1 < spec->n_tasks && !strcmp(id, spec->tasks[t + 1].task_id)) {
			task_of[k] = (long)++t;
		} else {
			task_of[k] = dag_spec_task_index(spec, id);
			if (task_of[k] >= 0)
				t = (size_t)task_of[k];
		}
	}
}

static int run_load(struct dag_manager *dm, const char *dag_id, const char *run_id,
                    struct run_ctx *rc, struct weir_error *err)
{
	json_t *conf;
	size_t n_tis = 0, n_tasks;
	bool inserted = false;
	long *task_of = NULL;
	size_t *count = NULL, *first = NULL;

	memset(rc, 0, sizeof *rc);
	rc->spec = dm_spec_of(dm, dag_id, err);
	if (!rc->spec)
		return -1;
	n_tasks = rc->spec->n_tasks;
	if (dag_store_run_get(dm->ds, dag_id, run_id, &rc->run, err) < 0)
		goto fail;
	conf = run_conf(&rc->run);
	rc->params = dag_spec_run_params(rc->spec, conf, err);
	json_decref(conf);
	if (!rc->params)
		goto fail;
	count = calloc(n_tasks + 1, sizeof *count);
	first = calloc(n_tasks + 1, sizeof *first);
	if (!count || !first)
		goto oom;
again:
	if (dag_store_tis_of_run(dm->ds, dag_id, run_id, &rc->rows, &rc->n_rows, err) < 0)
		goto fail;
	free(task_of);
	task_of = calloc(rc->n_rows + 1, sizeof *task_of);
	if (!task_of)
		goto oom;
	rows_to_tasks(rc->spec, rc->rows, rc->n_rows, task_of);
	memset(count, 0, (n_tasks + 1) * sizeof *count);
	for (size_t k = 0; k < rc->n_rows; k++)
		if (task_of[k] >= 0)
			count[task_of[k]]++;
	/* a task added to the file since the run began gets its TIs now */
	if (!inserted) {
		bool tried = false;
		for (size_t i = 0; i < n_tasks; i++) {
			if (count[i] > 0)
				continue;
			if (insert_task_tis(dm, rc->spec, run_id, &rc->spec->tasks[i], rc->params,
			                    err) < 0)
				goto fail;
			tried = true;
		}
		inserted = true;
		if (tried) {
			dag_ti_rows_free(rc->rows, rc->n_rows);
			rc->rows = NULL;
			rc->n_rows = 0;
			goto again;
		}
	}
	rc->nodes = calloc(n_tasks ? n_tasks : 1, sizeof *rc->nodes);
	rc->tis = calloc(rc->n_rows ? rc->n_rows : 1, sizeof *rc->tis);
	rc->ti_row = calloc(rc->n_rows ? rc->n_rows : 1, sizeof *rc->ti_row);
	rc->ti_task = calloc(rc->n_rows ? rc->n_rows : 1, sizeof *rc->ti_task);
	if (!rc->nodes || !rc->tis || !rc->ti_row || !rc->ti_task)
		goto oom;
	/* TIs in task order: a counting sort of the rows by task (stable, so a
	 * foreach task's instances stay in map_index order) */
	for (size_t i = 0; i < n_tasks; i++) {
		const struct dag_task *t = &rc->spec->tasks[i];
		struct dag_task_node *nd = &rc->nodes[i];
		nd->task_id = t->task_id;
		nd->upstream = t->upstream;
		nd->n_upstream = t->n_upstream;
		nd->trigger_rule = t->trigger_rule;
		nd->retry.retries = t->retries;
		nd->retry.delay_ms = t->retry_delay_s * 1000;
		nd->retry.exponential = t->retry_exponential_backoff;
		nd->retry.max_delay_ms = t->max_retry_delay_s * 1000;
		nd->pool = t->pool;
		nd->pool_slots = t->pool_slots > 0 ? t->pool_slots : 1;
		nd->priority = t->priority;
		nd->foreach = t->foreach_list || t->foreach_param;
		if (!nd->foreach && count[i] > 1)
			count[i] = 1; /* a task that stopped being a foreach: its first row */
		nd->n_instances = (int)count[i];
		first[i] = n_tis;
		n_tis += count[i];
	}
	memset(count, 0, (n_tasks + 1) * sizeof *count);
	for (size_t k = 0; k < rc->n_rows; k++) {
		long t = task_of[k];
		size_t at;
		if (t < 0 || count[t] >= (size_t)rc->nodes[t].n_instances)
			continue;
		at = first[t] + count[t]++;
		rc->ti_row[at] = k;
		rc->ti_task[at] = (size_t)t;
		dag_ti_state_from_name(rc->rows[k].state, &rc->tis[at].state);
		rc->tis[at].try_number = rc->rows[k].try_number;
		rc->tis[at].max_tries = rc->rows[k].max_tries;
		rc->tis[at].next_retry_at = rc->rows[k].next_retry_at;
	}
	rc->n_tis = n_tis;
	rc->g.tasks = rc->nodes;
	rc->g.n_tasks = n_tasks;
	/* rows of tasks that left the file: removed */
	for (size_t k = 0; k < rc->n_rows; k++) {
		struct dag_ti_row *r = &rc->rows[k];
		enum dag_ti_state s = DAG_TI_NONE;
		if (task_of[k] >= 0)
			continue;
		dag_ti_state_from_name(r->state, &s);
		if (dag_ti_state_is_final(s))
			continue;
		set_state(r->state, "removed");
		if (dag_store_ti_update(dm->ds, r, err) < 0)
			goto fail;
	}
	free(task_of);
	free(count);
	free(first);
	return 0;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
fail:
	free(task_of);
	free(count);
	free(first);
	run_ctx_release(rc);
	return -1;
}

/* ---- the runs read in this turn ---- */

static void run_cache_drop(struct dag_manager *dm)
{
	for (size_t i = 0; i < dm->n_runs; i++) {
		run_ctx_release(dm->runs[i]);
		free(dm->runs[i]);
	}
	dm->n_runs = 0;
}

/* The run as read in this turn, read now when it was not.  One event of a
 * 2,000-task run used to read its rows three or four times (the end of a
 * TI, the pool pass, the next TI's start); now once.  Every write of the
 * manager's goes through this copy (dm_run_step(), start_ti(), the pool pass)
 * and to the store at once, so the two agree until the turn ends, when the
 * copy goes (end()).  A copy whose write failed is marked stale and read
 * again.  Borrowed until the turn ends; NULL with err. */
struct run_ctx *dm_run_get(struct dag_manager *dm, const char *dag_id, const char *run_id,
                               struct weir_error *err)
{
	struct run_ctx *rc;

	for (size_t i = dm->n_runs; i-- > 0;) {
		rc = dm->runs[i];
		if (!rc->stale && !strcmp(rc->run.dag_id, dag_id) && !strcmp(rc->run.run_id, run_id))
			return rc;
	}
	if (dm->n_runs == dm->cap_runs) {
		size_t cap = dm->cap_runs ? 2 * dm->cap_runs : 8;
		struct run_ctx **v = realloc(dm->runs, cap * sizeof *v);
		if (!v) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			return NULL;
		}
		dm->runs = v;
		dm->cap_runs = cap;
	}
	rc = calloc(1, sizeof *rc);
	if (!rc) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	if (run_load(dm, dag_id, run_id, rc, err) < 0) {
		free(rc);
		return NULL;
	}
	dm->runs[dm->n_runs++] = rc;
	return rc;
}

/* The TI index of (task_id, map_index), or -1. */
static long run_find_ti(const struct run_ctx *rc, const char *task_id, int map_index)
{
	for (size_t i = 0; i < rc->n_tis; i++) {
		const struct dag_ti_row *r = &rc->rows[rc->ti_row[i]];
		if (!strcmp(r->task_id, task_id) && r->map_index == map_index)
			return (long)i;
	}
	return -1;
}

static void try_update(struct dag_manager *dm, const struct dag_ti_row *r, const char *state,
                       const char *reason, bool ended)
{
	struct weir_error err = {0};
	struct dag_try_row t = {0};

	if (r->try_number <= 0)
		return;
	if (dag_store_try_get(dm->ds, r->dag_id, r->run_id, r->task_id, r->map_index, r->try_number,
	                      &t, NULL) < 0) {
		t.dag_id = dm_xstrdup(r->dag_id);
		t.run_id = dm_xstrdup(r->run_id);
		t.task_id = dm_xstrdup(r->task_id);
		t.map_index = r->map_index;
		t.try_number = r->try_number;
		t.job_id = r->job_id;
		t.start_date = clock_now_ms();
		t.reason = dm_xstrdup("");
	}
	set_state(t.state, state);
	if (reason)
		set_str(&t.reason, reason);
	if (ended && !t.end_date)
		t.end_date = clock_now_ms();
	if (dag_store_try_put(dm->ds, &t, &err) < 0)
		log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
	dag_try_row_release(&t);
}

static void wake_note(struct dag_manager *dm, int64_t at);

/* Decides on `ev` and writes the result: TI rows, tries, the run, job
 * kills.  0, or -1 with err (nothing written then). */
int dm_run_step(struct dag_manager *dm, struct run_ctx *rc, const struct dag_event *ev,
                    struct weir_error *err)
{
	struct dag_run_decision d = {0};
	enum dag_run_state rs;
	int64_t now = clock_now_ms();

	if (dag_run_state_from_name(rc->run.state, &rs) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "run %s: bad state %s", rc->run.run_id,
		                      rc->run.state);
	if (dag_run_decide(&rc->g, rs, rc->tis, rc->n_tis, ev, now, &d, err) < 0)
		return -1;
	for (size_t i = 0; i < d.n_changes; i++) {
		const struct dag_ti_change *c = &d.changes[i];
		struct dag_ti_row *r = &rc->rows[rc->ti_row[c->ti]];
		int64_t job = r->job_id;

		set_state(r->state, dag_ti_state_name(c->to));
		r->max_tries = c->max_tries;
		r->next_retry_at = c->to == DAG_TI_UP_FOR_RETRY ? c->retry_at : 0;
		if (c->to == DAG_TI_NONE) {
			/* cleared: a late end of the old job must not find it */
			r->job_id = 0;
			r->start_date = 0;
			r->end_date = 0;
			r->queued_at = 0;
			set_str(&r->reason, "");
			set_str(&r->outputs, "");
		} else if (c->to == DAG_TI_SCHEDULED) {
			set_str(&r->reason, "");
		} else if (dag_ti_state_is_final(c->to) || c->to == DAG_TI_UP_FOR_RETRY) {
			if (!r->end_date)
				r->end_date = now;
		}
		if (c->stop && job > 0) {
			struct weir_error e2 = {0};
			if (job_manager_kill(dm->jm, job, &e2) < 0 && e2.kind != WEIR_E_CONFLICT)
				log_warn("DAG %s run %s task %s: stopping job %lld: %s", r->dag_id,
				         r->run_id, r->task_id, (long long)job, e2.msg);
		}
		if (dag_ti_state_is_active(c->from) &&
		    (dag_ti_state_is_final(c->to) || c->to == DAG_TI_UP_FOR_RETRY ||
		     c->to == DAG_TI_NONE))
			try_update(dm, r,
			           c->to == DAG_TI_NONE ? "failed" : dag_ti_state_name(c->to),
			           c->to == DAG_TI_NONE ? "cleared" : NULL, true);
		if (dag_store_ti_update(dm->ds, r, err) < 0)
			goto fail;
		rc->tis[c->ti].state = c->to;
		rc->tis[c->ti].max_tries = c->max_tries;
		rc->tis[c->ti].next_retry_at = r->next_retry_at;
	}
	if (d.run_to != d.run_from ||
	    (d.run_to == DAG_RUN_FAILED && strcmp(rc->run.reason, d.reason))) {
		set_state(rc->run.state, dag_run_state_name(d.run_to));
		set_str(&rc->run.reason, d.reason);
		if (d.run_to == DAG_RUN_RUNNING && !rc->run.start_date)
			rc->run.start_date = now;
		if (dag_run_state_is_final(d.run_to))
			rc->run.end_date = now;
		if (d.run_to == DAG_RUN_QUEUED) {
			rc->run.queued_at = now;
			rc->run.end_date = 0;
		}
		if (dag_store_run_update(dm->ds, &rc->run, err) < 0)
			goto fail;
		log_info("DAG %s run %s: %s%s%s", rc->run.dag_id, rc->run.run_id, rc->run.state,
		         d.reason[0] ? ": " : "", d.reason);
	}
	if (d.next_wakeup > 0)
		wake_note(dm, d.next_wakeup);
	if (d.n_changes > 0 || d.run_to != d.run_from)
		dm->pool_dirty = true;
	dag_run_decision_release(&d);
	dm->pass_again = true;
	return 0;
fail:
	rc->stale = true;
	dm->pool_dirty = true;
	dag_run_decision_release(&d);
	return -1;
}

/* Loads the run, applies `ev` and writes the result; errors are logged. */
int dm_run_event(struct dag_manager *dm, const char *dag_id, const char *run_id,
                     const struct dag_event *ev, struct weir_error *err)
{
	struct run_ctx *rc = dm_run_get(dm, dag_id, run_id, err);

	return rc ? dm_run_step(dm, rc, ev, err) : -1;
}

/* ---- a try's files ---- */

static char *try_dir(struct dag_manager *dm, int64_t run_row_id)
{
	char *p = NULL;
	if (asprintf(&p, "%s/dag_runs/%lld", dm->home, (long long)run_row_id) < 0)
		return NULL;
	return p;
}

/* Run ids and task ids come from users: the file name uses the run's row
 * id and the task id (checked to be [A-Za-z0-9_-]). */
static char *output_path(struct dag_manager *dm, int64_t run_row_id, const char *task_id,
                         int map_index, int try_number)
{
	char *dir = try_dir(dm, run_row_id), *p = NULL;

	if (!dir)
		return NULL;
	if (asprintf(&p, "%s/%s.%d.%d.output.json", dir, task_id, map_index, try_number) < 0)
		p = NULL;
	free(dir);
	return p;
}

/* The try's $WEIR_OUTPUT: "" when the task wrote none; -1 with a reason
 * when it is not a small JSON object. */
static int read_outputs(const char *path, char **out, char *why, size_t why_size)
{
	struct stat st;
	char *text;
	size_t len = 0;
	json_t *j;
	json_error_t je;

	*out = NULL;
	if (stat(path, &st) < 0) {
		*out = dm_xstrdup("");
		return 0;
	}
	if (st.st_size > OUTPUT_MAX) {
		snprintf(why, why_size, "$WEIR_OUTPUT is %lld bytes; at most %d are read",
		         (long long)st.st_size, OUTPUT_MAX);
		return -1;
	}
	text = fs_read_file(path, &len, NULL);
	if (!text) {
		snprintf(why, why_size, "$WEIR_OUTPUT cannot be read");
		return -1;
	}
	if (len == 0 || strspn(text, " \t\r\n") == len) {
		free(text);
		*out = dm_xstrdup("");
		return 0;
	}
	j = json_loadb(text, len, 0, &je);
	free(text);
	if (!json_is_object(j)) {
		if (j)
			snprintf(why, why_size, "$WEIR_OUTPUT: expected a JSON object");
		else
			snprintf(why, why_size, "$WEIR_OUTPUT is not JSON: line %d: %s", je.line,
			         je.text);
		json_decref(j);
		return -1;
	}
	*out = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return *out ? 0 : -1;
}

/* ---- turning a TI into a job ---- */

/* {"TASK": {...}} of the run's tasks that wrote outputs (foreach instances
 * aside: there are several of them). */
static json_t *run_outputs(const struct run_ctx *rc)
{
	json_t *o = json_object();

	for (size_t k = 0; k < rc->n_rows; k++) {
		const struct dag_ti_row *r = &rc->rows[k];
		json_t *v;
		if (r->map_index >= 0 || !r->outputs || !*r->outputs)
			continue;
		v = json_loads(r->outputs, 0, NULL);
		if (json_is_object(v))
			json_object_set_new(o, r->task_id, v);
		else
			json_decref(v);
	}
	return o;
}

static int render_into(json_t *obj, const char *key, const struct template_ctx *ctx,
                       enum template_mode mode, const char *field, struct weir_error *err)
{
	json_t *v = json_object_get(obj, key);
	char *s;

	if (!json_is_string(v))
		return 0;
	s = template_render(json_string_value(v), ctx, mode, err);
	if (!s) {
		weir_error_prefix(err, "%s", field);
		return -1;
	}
	json_object_set_new(obj, key, json_string(s));
	free(s);
	return 0;
}

/* The job spec JSON of a job task, before templating. */
static json_t *job_task_json(const struct dag_task *t, struct weir_error *err)
{
	struct job_spec *spec = NULL;
	json_t *j = NULL;

	switch (t->kind) {
	case DAG_TASK_JOB:
		return job_spec_to_json(t->job);
	case DAG_TASK_JOB_FILE:
		spec = job_spec_parse_file(t->job_path, err);
		break;
	case DAG_TASK_JOB_TONY: {
		struct tony_submit ts = {0};
		struct tony_conf *conf;
		json_t *v;
		size_t i;
		const char *cf = json_string_value(json_object_get(t->tony, "conf_file"));

		conf = tony_conf_parse_file(cf, err);
		if (!conf)
			return NULL;
#define TONY_STR(f)                                                                                \
	if ((v = json_object_get(t->tony, #f)) && json_is_string(v))                               \
		ts.f = dm_xstrdup(json_string_value(v));
		TONY_STR(conf_file)
		TONY_STR(src_dir)
		TONY_STR(executes)
		TONY_STR(task_params)
		TONY_STR(python_venv)
		TONY_STR(python_binary_path)
		TONY_STR(framework)
#undef TONY_STR
		json_array_foreach(json_object_get(t->tony, "shell_env"), i, v)
		    strvec_push(&ts.shell_env, json_string_value(v));
		json_array_foreach(json_object_get(t->tony, "container_env"), i, v)
		    strvec_push(&ts.container_env, json_string_value(v));
		json_array_foreach(json_object_get(t->tony, "conf"), i, v)
		{
			const char *kv = json_string_value(v), *eq = kv ? strchr(kv, '=') : NULL;
			char *name;
			strvec_push(&ts.conf, kv);
			if (!eq)
				continue;
			name = strndup(kv, (size_t)(eq - kv));
			if (name)
				tony_conf_set(conf, name, eq + 1, "conf", 0, NULL);
			free(name);
		}
		spec = tony_to_spec(conf, &ts, NULL, err);
		tony_conf_destroy(conf);
		tony_submit_release(&ts);
		break;
	}
	default:
		weir_error_set(err, WEIR_E_INTERNAL, "not a job task");
		return NULL;
	}
	if (!spec)
		return NULL;
	j = job_spec_to_json(spec);
	job_spec_destroy(spec);
	if (!j)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return j;
}

/* The job of try `try_number` of TI `ti`: rendered, validated.  *command
 * gets what runs (the command task's, or the roles' joined).  NULL with err:
 * the try fails with that reason. */
static struct job_spec *build_job(struct dag_manager *dm, const struct run_ctx *rc, size_t ti,
                                  int try_number, char **command, struct weir_error *err)
{
	const struct dag_ti_row *r = &rc->rows[rc->ti_row[ti]];
	const struct dag_task *t = &rc->spec->tasks[rc->ti_task[ti]];
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct strvec env = STRVEC_INIT;
	struct template_run tr = {0};
	json_t *outputs = run_outputs(rc), *items = NULL, *j = NULL, *envj = NULL;
	char *item = NULL, *out_path = NULL, *dir = NULL, *cmd = NULL;
	struct job_spec *spec = NULL;
	char name[DAG_MAX_ID + 80];

	*command = NULL;
	if (r->map_index >= 0) {
		items = dag_task_foreach_items(rc->spec, t, rc->params, err);
		if (!items)
			goto out;
		if ((size_t)r->map_index >= json_array_size(items)) {
			weir_error_set(err, WEIR_E_INVALID,
			               "foreach: no item %d (the list has %zu)", r->map_index,
			               json_array_size(items));
			goto out;
		}
		item = template_value_text(json_array_get(items, (size_t)r->map_index));
	}
	tr.dag_id = rc->spec->dag_id;
	tr.run_id = rc->run.run_id;
	tr.task_id = t->task_id;
	tr.logical_ms = rc->run.logical_date;
	tr.interval_start_ms = rc->run.data_interval_start;
	tr.interval_end_ms = rc->run.data_interval_end;
	tr.try_number = try_number;
	tr.params = rc->params;
	tr.outputs = outputs;
	tr.item = item;
	if (template_ctx_fill(&ctx, &tr, err) < 0 || template_env(&tr, &env, err) < 0)
		goto out;
	dir = try_dir(dm, rc->run.id);
	out_path = output_path(dm, rc->run.id, t->task_id, r->map_index, try_number);
	if (!dir || !out_path || fs_mkdir_p(dir, 0755, err) < 0) {
		if (!err->msg[0])
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	unlink(out_path);
	envj = json_object();
	for (size_t i = 0; i < env.n; i++) {
		char *eq = strchr(env.v[i], '=');
		if (!eq)
			continue;
		*eq = '\0';
		json_object_set_new(envj, env.v[i], json_string(eq + 1));
		*eq = '=';
	}
	json_object_set_new(envj, "WEIR_OUTPUT", json_string(out_path));
	if (r->map_index >= 0)
		snprintf(name, sizeof name, "%s.%s.%d", rc->spec->dag_id, t->task_id, r->map_index);
	else
		snprintf(name, sizeof name, "%s.%s", rc->spec->dag_id, t->task_id);

	if (t->kind == DAG_TASK_COMMAND) {
		char mem[32];
		cmd = template_render(t->command, &ctx, TEMPLATE_SHELL, err);
		if (!cmd) {
			weir_error_prefix(err, "command");
			goto out;
		}
		if (t->cwd) {
			char *cwd = template_render(t->cwd, &ctx, TEMPLATE_RAW, err), *q,
			     *c2 = NULL;
			if (!cwd) {
				weir_error_prefix(err, "cwd");
				goto out;
			}
			q = shell_quote(cwd);
			free(cwd);
			if (!q || asprintf(&c2, "cd %s && %s", q, cmd) < 0)
				c2 = NULL;
			free(q);
			free(cmd);
			cmd = c2;
			if (!cmd) {
				weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
				goto out;
			}
		}
		for (size_t i = 0; i < t->n_env; i++) {
			char *v = template_render(t->env[i].value, &ctx, TEMPLATE_RAW, err);
			if (!v) {
				weir_error_prefix(err, "env.%s", t->env[i].name);
				goto out;
			}
			json_object_set_new(envj, t->env[i].name, json_string(v));
			free(v);
		}
		snprintf(mem, sizeof mem, "%llum",
		         (unsigned long long)(t->resources.memory_mb ? t->resources.memory_mb
		                                                     : DEFAULT_TASK_MEMORY_MB));
		j = json_pack("{s:s, s:i, s:{s:{s:i, s:s, s:i, s:i, s:s}}, s:O, s:{s:I}}", "name",
		              name, "priority", r->priority, "roles", "task", "instances", 1,
		              "memory", mem, "vcores",
		              t->resources.vcores > 0 ? t->resources.vcores : 1, "gpus",
		              t->resources.gpus > 0 ? t->resources.gpus : 0, "command", cmd, "env",
		              envj, "timeouts", "execution", (json_int_t)t->execution_timeout_s);
		if (!j) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			goto out;
		}
		*command = cmd;
		cmd = NULL;
	} else {
		json_t *roles, *role, *jenv, *v;
		const char *rn, *k;
		char *all = NULL;

		j = job_task_json(t, err);
		if (!j)
			goto out;
		if (render_into(j, "params", &ctx, TEMPLATE_SHELL, "job.params", err) < 0)
			goto out;
		roles = json_object_get(j, "roles");
		json_object_foreach(roles, rn, role)
		{
			char field[128];
			snprintf(field, sizeof field, "job.roles.%s.command", rn);
			if (render_into(role, "command", &ctx, TEMPLATE_SHELL, field, err) < 0)
				goto out;
		}
		jenv = json_object_get(j, "env");
		if (!json_is_object(jenv)) {
			jenv = json_object();
			json_object_set_new(j, "env", jenv);
		}
		json_object_foreach(envj, k, v) json_object_set(jenv, k, v);
		if (!json_is_string(json_object_get(j, "name")) ||
		    !strcmp(json_string_value(json_object_get(j, "name")), "job"))
			json_object_set_new(j, "name", json_string(name));
		if (t->execution_timeout_s > 0) {
			json_t *to = json_object_get(j, "timeouts");
			if (!json_is_object(to)) {
				to = json_object();
				json_object_set_new(j, "timeouts", to);
			}
			json_object_set_new(to, "execution", json_integer(t->execution_timeout_s));
		}
		if (r->priority)
			json_object_set_new(j, "priority", json_integer(r->priority));
		/* what runs, for the API: each role's command */
		json_object_foreach(roles, rn, role)
		{
			const char *c = json_string_value(json_object_get(role, "command"));
			char *n2 = NULL;
			if (!c)
				c = json_string_value(json_object_get(j, "entry_point"));
			if (asprintf(&n2, "%s%s%s: %s", all ? all : "", all ? "\n" : "", rn,
			             c ? c : "") < 0)
				n2 = NULL;
			free(all);
			all = n2;
		}
		*command = all ? all : dm_xstrdup("");
	}
	/* the task's route and Slurm settings win over its job's own; a task
	 * that names no queue takes its pool's */
	if (t->queue)
		json_object_set_new(j, "queue", json_string(t->queue));
	else if (!json_is_string(json_object_get(j, "queue")))
		for (size_t i = 0; r->pool && i < dm->n_pools; i++)
			if (dm->pool_queues[i] && !strcmp(dm->pools[i].name, r->pool))
				json_object_set_new(j, "queue", json_string(dm->pool_queues[i]));
	if (t->slurm)
		json_object_set(j, "slurm", t->slurm);
	spec = job_spec_from_json(j, err);
	if (!spec) {
		weir_error_prefix(err, "job");
		free(*command);
		*command = NULL;
	}
out:
	template_ctx_release(&ctx);
	strvec_release(&env);
	json_decref(outputs);
	json_decref(items);
	json_decref(j);
	json_decref(envj);
	free(item);
	free(out_path);
	free(dir);
	free(cmd);
	return spec;
}

/* ---- task ends ---- */

/* Try `try_number` of a TI ended: record it and let the run decide. */
static void ti_ended(struct dag_manager *dm, const char *dag_id, const char *run_id,
                     const char *task_id, int map_index, int try_number, bool success,
                     bool no_retry, const char *reason, int64_t job_started_at)
{
	struct weir_error err = {0};
	struct run_ctx *rc;
	struct dag_event ev = {.kind = DAG_EV_TI_ENDED};
	struct dag_ti_row *r;
	long ti;
	char why[WEIR_ERROR_MSG_MAX];
	char *outputs = NULL;

	rc = dm_run_get(dm, dag_id, run_id, &err);
	if (!rc) {
		log_error("DAG %s run %s task %s: %s", dag_id, run_id, task_id, err.msg);
		return;
	}
	ti = run_find_ti(rc, task_id, map_index);
	if (ti < 0)
		goto out;
	r = &rc->rows[rc->ti_row[ti]];
	if (!dag_ti_state_is_active(rc->tis[ti].state) || r->try_number != try_number)
		goto out; /* stale: cleared or marked meanwhile */
	why[0] = '\0';
	if (success) {
		char *p = output_path(dm, rc->run.id, task_id, map_index, try_number);
		if (p && read_outputs(p, &outputs, why, sizeof why) < 0) {
			success = false;
			no_retry = false;
		}
		free(p);
		if (success && outputs)
			set_str(&r->outputs, outputs);
	}
	set_str(&r->reason, success ? "" : why[0] ? why : reason ? reason : "failed");
	if (job_started_at > 0 && !r->start_date)
		r->start_date = job_started_at;
	r->end_date = clock_now_ms();
	try_update(dm, r, success ? "success" : "failed", r->reason, true);
	ev.ti = (size_t)ti;
	ev.try_number = try_number;
	ev.success = success;
	ev.no_retry = no_retry;
	/* the decision writes the row (with the fields above) when it moves */
	if (dm_run_step(dm, rc, &ev, &err) < 0)
		log_error("DAG %s run %s task %s: %s", dag_id, run_id, task_id, err.msg);
out:
	free(outputs);
}

/* The job manager's end callback. */
static void on_job_end(void *arg, int64_t job_id, const char *state, int exit_code,
                       const char *reason)
{
	struct dag_manager *dm = arg;
	struct dag_ti_row r = {0};
	struct job_row job = {0};
	bool success = !strcmp(state, "succeeded");
	/* the server's timer or the launcher's (which reports it as the task's reason) */
	bool timed_out = reason && strstr(reason, "execution timeout");
	bool user_kill = !strcmp(state, "killed");
	char why[600];

	if (dag_store_ti_by_job(dm->ds, job_id, &r, NULL) < 0)
		return; /* not a DAG task's job */
	dm_begin(dm);
	store_job_get(dm->store, job_id, &job, NULL);
	if (success)
		why[0] = '\0';
	else if (timed_out)
		snprintf(why, sizeof why, "job %lld: %s (no retry)", (long long)job_id, reason);
	else if (exit_code >= 0)
		snprintf(why, sizeof why, "job %lld %s (exit %d)%s%s", (long long)job_id, state,
		         exit_code, reason && *reason ? ": " : "", reason ? reason : "");
	else
		snprintf(why, sizeof why, "job %lld %s%s%s", (long long)job_id, state,
		         reason && *reason ? ": " : "", reason ? reason : "");
	ti_ended(dm, r.dag_id, r.run_id, r.task_id, r.map_index, r.try_number, success,
	         timed_out || user_kill, why, job.started_at);
	job_row_release(&job);
	dag_ti_row_release(&r);
	dm_end(dm);
}

/* ---- starting runs and TIs ---- */

/* Queued runs leave the queue as max_active_runs allows (paused DAGs
 * wait). */
static void start_runs(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct dag_run_row *rows = NULL;
	size_t n = 0, i = 0;

	if (dag_store_runs_active(dm->ds, &rows, &n, &err) < 0) {
		log_error("DAG runs: %s", err.msg);
		return;
	}
	while (i < n) {
		size_t j = i, n_queued = 0, startable;
		int running = 0;
		struct dag_entry *e = dm_entry_by_id(dm, rows[i].dag_id);
		struct dag_row dr = {0};
		bool paused = false;

		while (j < n && !strcmp(rows[j].dag_id, rows[i].dag_id)) {
			if (!strcmp(rows[j].state, "running"))
				running++;
			else
				n_queued++;
			j++;
		}
		/* the DAG row carries the whole spec: read it only when a run waits */
		if (n_queued > 0 && dag_store_dag_get(dm->ds, rows[i].dag_id, &dr, NULL) == 0) {
			paused = dr.paused;
			dag_row_release(&dr);
		}
		if (e && !paused && n_queued > 0) {
			startable = dag_runs_startable(e->spec->max_active_runs, running, n_queued);
			for (size_t k = i; k < j && startable > 0; k++) {
				struct dag_event ev = {.kind = DAG_EV_START};
				if (strcmp(rows[k].state, "queued"))
					continue;
				startable--;
				if (dm_run_event(dm, rows[k].dag_id, rows[k].run_id, &ev, &err) < 0)
					log_error("DAG %s run %s: cannot start: %s", rows[k].dag_id,
					          rows[k].run_id, err.msg);
			}
		}
		i = j;
	}
	dag_run_rows_free(rows, n);
}

static struct dag_pool *pool_find(struct dag_manager *dm, const char *name)
{
	if (!name || !*name)
		name = DAG_DEFAULT_POOL;
	for (size_t i = 0; i < dm->n_pools; i++)
		if (!strcmp(dm->pools[i].name, name))
			return &dm->pools[i];
	return NULL;
}

/* Starts try + 1 of scheduled TI `ti` of a run read in this turn as a job;
 * a TI that cannot become a job fails that try (no retry: the same input
 * would fail again). */
static void start_ti(struct dag_manager *dm, struct run_ctx *rc, size_t ti)
{
	struct weir_error err = {0};
	struct dag_ti_row *r;
	struct job_spec *spec = NULL;
	char *command = NULL;
	int64_t job_id = 0;
	int try_number;

	if (rc->stale || rc->tis[ti].state != DAG_TI_SCHEDULED)
		return;
	r = &rc->rows[rc->ti_row[ti]];
	try_number = r->try_number + 1;
	spec = build_job(dm, rc, ti, try_number, &command, &err);
	if (spec && job_manager_submit_spec(dm->jm, spec, &job_id, &err) < 0)
		job_id = 0;
	r->try_number = try_number;
	set_state(r->state, "queued");
	r->job_id = job_id;
	r->queued_at = clock_now_ms();
	r->start_date = 0;
	r->end_date = 0;
	r->next_retry_at = 0;
	set_str(&r->rendered_command, command ? command : "");
	set_str(&r->outputs, "");
	set_str(&r->reason, job_id ? "" : err.msg);
	if (dag_store_ti_update(dm->ds, r, &err) < 0) {
		log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
		rc->stale = true;
		goto out;
	}
	rc->tis[ti].state = DAG_TI_QUEUED;
	rc->tis[ti].try_number = try_number;
	rc->tis[ti].next_retry_at = 0;
	try_update(dm, r, "queued", "", false);
	if (job_id) {
		log_info("DAG %s run %s task %s%s try %d: job %lld", r->dag_id, r->run_id,
		         r->task_id, r->map_index >= 0 ? " (instance)" : "", try_number,
		         (long long)job_id);
	} else {
		char why[WEIR_ERROR_MSG_MAX + 32];
		snprintf(why, sizeof why, "cannot start: %s", r->reason);
		log_warn("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, why);
		ti_ended(dm, r->dag_id, r->run_id, r->task_id, r->map_index, try_number, false,
		         true, why, 0);
	}
	dm->pass_again = true;
out:
	free(command);
	job_spec_destroy(spec);
}

/* A scheduled TI of a run read in this turn. */
struct pool_cand {
	struct run_ctx *rc;
	size_t ti;
};

/* Appends the scheduled TIs of running runs to *cands (the runs come from
 * this turn's copies, so the run a job's end just read costs nothing more).
 * Runs are ordered as the pool decision wants them: logical date, then the
 * run's row id and the TI's row order.  -1 with err. */
static int pool_candidates(struct dag_manager *dm, struct pool_cand **cands, size_t *n,
                           struct dag_candidate **cand, struct dag_limit **limits, size_t *nl,
                           struct weir_error *err)
{
	struct dag_run_row *runs = NULL;
	size_t n_runs = 0, cap = 0;
	int ret = -1;

	*cands = NULL;
	*cand = NULL;
	*limits = NULL;
	*n = *nl = 0;
	if (dag_store_runs_active(dm->ds, &runs, &n_runs, err) < 0)
		return -1;
	*limits = calloc(n_runs + 1, sizeof **limits);
	if (!*limits)
		goto oom;
	for (size_t k = 0; k < n_runs; k++) {
		struct weir_error e2 = {0};
		struct run_ctx *rc;
		size_t l;

		if (strcmp(runs[k].state, "running"))
			continue; /* a queued run has no scheduled TI yet */
		rc = dm_run_get(dm, runs[k].dag_id, runs[k].run_id, &e2);
		if (!rc)
			continue; /* its DAG is gone (recovery says so); it waits */
		for (l = 0; l < *nl; l++)
			if (!strcmp((*limits)[l].dag_id, rc->run.dag_id))
				break;
		if (l == *nl) {
			(*limits)[l].dag_id = rc->run.dag_id;
			(*limits)[l].max_active_tasks = rc->spec->max_active_tasks;
			(*nl)++;
		}
		for (size_t i = 0; i < rc->n_tis; i++) {
			const struct dag_ti_row *r = &rc->rows[rc->ti_row[i]];
			struct dag_candidate *c;
			if (rc->tis[i].state != DAG_TI_SCHEDULED)
				continue;
			if (*n == cap) {
				size_t nc = cap ? 2 * cap : 64;
				struct pool_cand *v = realloc(*cands, nc * sizeof *v);
				struct dag_candidate *w;
				if (!v)
					goto oom;
				*cands = v;
				w = realloc(*cand, nc * sizeof *w);
				if (!w)
					goto oom;
				*cand = w;
				cap = nc;
			}
			(*cands)[*n].rc = rc;
			(*cands)[*n].ti = i;
			c = &(*cand)[*n];
			memset(c, 0, sizeof *c);
			c->dag = l;
			c->priority = r->priority;
			c->pool = r->pool;
			c->pool_slots = r->pool_slots;
			c->run_order = rc->run.logical_date;
			c->ti_order = ((size_t)rc->run.id << 32) | rc->ti_row[i];
			(*n)++;
		}
	}
	ret = 0;
	goto out;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
out:
	dag_run_rows_free(runs, n_runs);
	return ret;
}

/* Scheduled TIs of every run become jobs as pools and max_active_tasks
 * allow.  Nothing to do unless something moved since the last pass: the
 * rounds of dm_work_pass() that follow a start need no second look. */
static void pool_pass(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct dag_ti_row *act = NULL;
	size_t ns = 0, na = 0, nl = 0;
	struct dag_limit *limits = NULL;
	struct pool_cand *cands = NULL;
	struct dag_candidate *cand = NULL;
	struct dag_pool_decision *dec = NULL;

	if (!dm->pool_dirty)
		return;
	dm->pool_dirty = false;
	if (pool_candidates(dm, &cands, &ns, &cand, &limits, &nl, &err) < 0 || ns == 0)
		goto out;
	dec = calloc(ns, sizeof *dec);
	if (!dec)
		goto out;
	for (size_t i = 0; i < dm->n_pools; i++)
		dm->pools[i].used = 0;
	/* what queued and running TIs hold (few: the pools bound them) */
	const char *active_states[] = {"queued", "running"};
	for (size_t s = 0; s < 2; s++) {
		if (dag_store_tis_in_state(dm->ds, active_states[s], &act, &na, &err) < 0)
			goto out;
		for (size_t i = 0; i < na; i++) {
			struct dag_pool *p = pool_find(dm, act[i].pool);
			if (p)
				p->used += act[i].pool_slots > 0 ? act[i].pool_slots : 1;
			for (size_t l = 0; l < nl; l++)
				if (!strcmp(limits[l].dag_id, act[i].dag_id))
					limits[l].active++;
		}
		dag_ti_rows_free(act, na);
		act = NULL;
		na = 0;
	}
	if (dag_pool_decide(cand, ns, limits, nl, dm->pools, dm->n_pools, dec, &err) < 0)
		goto out;
	for (size_t i = 0; i < ns; i++) {
		struct pool_cand *c = &cands[dec[i].candidate];
		struct dag_ti_row *r;
		if (c->rc->stale)
			continue;
		r = &c->rc->rows[c->rc->ti_row[c->ti]];
		if (dec[i].action == DAG_POOL_QUEUE) {
			start_ti(dm, c->rc, c->ti);
		} else if (strcmp(r->reason ? r->reason : "", dec[i].reason)) {
			set_str(&r->reason, dec[i].reason);
			if (dag_store_ti_update(dm->ds, r, &err) < 0) {
				log_error("DAG %s: %s", r->dag_id, err.msg);
				c->rc->stale = true;
			}
		}
	}
out:
	if (err.msg[0])
		log_error("DAG pools: %s", err.msg);
	dag_ti_rows_free(act, na);
	free(limits);
	free(cands);
	free(cand);
	free(dec);
}

/* ---- schedules and retries ---- */


/* Scheduled runs that are due now are created (paused DAGs make none). */
static void schedule_pass(struct dag_manager *dm)
{
	int64_t now = clock_now_ms();

	for (struct dag_entry *e = dm->entries; e; e = e->next) {
		const struct dag_spec *s = e->spec;
		struct dag_row dr = {0};
		bool paused = true;
		int64_t due[MAX_DUE_PER_PASS];
		size_t n;

		if (!e->present || !s || s->schedule.kind == CRON_NONE ||
		    dm_entry_by_id(dm, s->dag_id) != e)
			continue;
		if (dag_store_dag_get(dm->ds, s->dag_id, &dr, NULL) == 0) {
			paused = dr.paused;
			dag_row_release(&dr);
		}
		if (paused)
			continue;
		n = schedule_due_runs(&s->schedule, s->start_date_ms, s->end_date_ms, s->catchup,
		                      dm_last_scheduled(dm, e), now, due, MAX_DUE_PER_PASS);
		for (size_t i = 0; i < n; i++) {
			struct weir_error err = {0};
			char ts[48], id[80];
			snprintf(id, sizeof id, "scheduled__%s", dm_fmt_time(due[i], ts, sizeof ts));
			if (dm_create_run(dm, e, id, "scheduled", due[i], NULL, NULL, &err) < 0 &&
			    err.kind != WEIR_E_CONFLICT)
				log_error("DAG %s: scheduled run %s: %s", s->dag_id, id, err.msg);
			e->last_sched_ms = due[i];
			e->last_sched_known = true;
		}
		if (n == MAX_DUE_PER_PASS)
			dm->pass_again = true;
	}
}

/* Due retries become scheduled. */
static void retry_pass(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct dag_ti_row *rows = NULL;
	size_t n = 0;
	int64_t now = clock_now_ms();

	if (dag_store_tis_in_state(dm->ds, "up_for_retry", &rows, &n, &err) < 0) {
		log_error("DAG retries: %s", err.msg);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct dag_event ev = {.kind = DAG_EV_TIMER};
		bool seen = false;
		if (rows[i].next_retry_at > now) {
			wake_note(dm, rows[i].next_retry_at);
			continue;
		}
		for (size_t k = 0; k < i && !seen; k++)
			seen = rows[k].next_retry_at <= now &&
			       !strcmp(rows[k].dag_id, rows[i].dag_id) &&
			       !strcmp(rows[k].run_id, rows[i].run_id);
		if (seen)
			continue;
		if (dm_run_event(dm, rows[i].dag_id, rows[i].run_id, &ev, &err) < 0)
			log_error("DAG %s run %s: %s", rows[i].dag_id, rows[i].run_id, err.msg);
	}
	dag_ti_rows_free(rows, n);
}

/* Everything that follows from the turn's changes: due runs, retries,
 * runs that may start, TIs that may become jobs, until nothing moves. */
void dm_work_pass(struct dag_manager *dm)
{
	int rounds = 0;

	if (dm->in_pass) {
		dm->pass_again = true;
		return;
	}
	dm->in_pass = true;
	do {
		dm->pass_again = false;
		schedule_pass(dm);
		retry_pass(dm);
		start_runs(dm);
		pool_pass(dm);
	} while (dm->pass_again && ++rounds < 10000);
	dm->in_pass = false;
}

static void wake_note(struct dag_manager *dm, int64_t at)
{
	if (at > 0 && (dm->wake_at_ms == 0 || at < dm->wake_at_ms))
		dm->wake_at_ms = at;
}

static void on_wake(uv_timer_t *t)
{
	struct dag_manager *dm = t->data;

	dm_begin(dm);
	dm_end(dm);
	dm_arm_wake(dm);
}

/* The wake-up timer: the next scheduled run that becomes due, or the next
 * retry, whichever comes first. */
void dm_arm_wake(struct dag_manager *dm)
{
	int64_t now = clock_now_ms(), next = dm->wake_at_ms > 0 ? dm->wake_at_ms : CRON_NEVER;
	struct dag_ti_row *rows = NULL;
	size_t n = 0;

	if (dag_store_tis_in_state(dm->ds, "up_for_retry", &rows, &n, NULL) == 0) {
		for (size_t i = 0; i < n; i++)
			if (rows[i].next_retry_at > 0 &&
			    (next == CRON_NEVER || rows[i].next_retry_at < next))
				next = rows[i].next_retry_at;
		dag_ti_rows_free(rows, n);
	}
	dm->wake_at_ms = 0;
	for (struct dag_entry *e = dm->entries; e; e = e->next) {
		const struct dag_spec *s = e->spec;
		int64_t due;
		if (!e->present || !s || s->schedule.kind == CRON_NONE)
			continue;
		due = schedule_next_due(&s->schedule, s->start_date_ms, s->end_date_ms, s->catchup,
		                        dm_last_scheduled(dm, e), now);
		if (due != CRON_NEVER && (next == CRON_NEVER || due < next))
			next = due;
	}
	if (next == CRON_NEVER) {
		uv_timer_stop(&dm->wake_timer);
		return;
	}
	uv_timer_start(&dm->wake_timer, on_wake, (uint64_t)(next > now ? next - now : 0) + 5, 0);
}

/* ---- creating runs ---- */

int dm_check_run_id(const char *run_id, struct weir_error *err)
{
	size_t n = strlen(run_id);

	if (n == 0 || n > 250)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "dag_run_id: expected 1 to 250 characters");
	for (const char *c = run_id; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "dag_run_id: control characters are not allowed");
	return 0;
}

/* Creates a queued run with its TIs (foreach fanned out now, from the
 * run's params).  Templates are checked against the run's params.  *out
 * (may be NULL) gets the run row. */
int dm_create_run(struct dag_manager *dm, struct dag_entry *e, const char *run_id,
                      const char *run_type, int64_t logical, json_t *conf, struct dag_run_row *out,
                      struct weir_error *err)
{
	const struct dag_spec *spec = e->spec;
	struct schedule_interval iv = schedule_data_interval(&spec->schedule, logical);
	json_t *params = NULL, *c = conf ? json_incref(conf) : json_object();
	char *conf_text = NULL;
	struct dag_run_row row = {0};
	int rc = -1;

	params = dag_spec_run_params(spec, c, err);
	if (!params)
		goto out;
	/* a foreach over a param that a conf broke is the trigger's error */
	for (size_t i = 0; i < spec->n_tasks; i++) {
		const struct dag_task *t = &spec->tasks[i];
		json_t *items;
		if (!t->foreach_list && !t->foreach_param)
			continue;
		items = dag_task_foreach_items(spec, t, params, err);
		if (!items) {
			weir_error_prefix(err, "conf: task %s", t->task_id);
			err->kind = WEIR_E_INVALID;
			goto out;
		}
		json_decref(items);
	}
	conf_text = json_dumps(c, JSON_COMPACT);
	row.dag_id = spec->dag_id;
	row.run_id = (char *)run_id;
	set_state(row.state, "queued");
	set_state(row.run_type, run_type);
	row.logical_date = logical;
	row.data_interval_start = iv.start_ms;
	row.data_interval_end = iv.end_ms;
	row.conf = conf_text ? conf_text : "{}";
	row.reason = "";
	row.queued_at = clock_now_ms();
	if (dag_store_run_insert(dm->ds, &row, &row.id, err) < 0)
		goto out;
	for (size_t i = 0; i < spec->n_tasks; i++)
		if (insert_task_tis(dm, spec, run_id, &spec->tasks[i], params, err) < 0) {
			struct weir_error e2 = {0};
			dag_store_run_delete(dm->ds, spec->dag_id, run_id, &e2);
			goto out;
		}
	log_info("DAG %s run %s: queued (%s)", spec->dag_id, run_id, run_type);
	if (out && dag_store_run_get(dm->ds, spec->dag_id, run_id, out, err) < 0)
		goto out;
	dm->pass_again = true;
	rc = 0;
out:
	free(conf_text);
	json_decref(params);
	json_decref(c);
	return rc;
}

/* ---- start-up, recovery, lifetime ---- */

int dag_manager_load(struct dag_manager *dm, struct weir_error *err)
{
	struct dag_row *rows = NULL;
	size_t n = 0;

	dm_begin(dm);
	scan(dm);
	/* DAGs of files that went away while the server was down */
	if (dag_store_dag_list(dm->ds, true, &rows, &n, err) < 0) {
		job_manager_turn_end(dm->jm);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct dag_entry *e = dm_entry_by_id(dm, rows[i].dag_id);
		if (!e || !e->present) {
			struct weir_error e2 = {0};
			if (dag_store_dag_deactivate(dm->ds, rows[i].dag_id, &e2) < 0)
				log_error("DAG %s: %s", rows[i].dag_id, e2.msg);
		}
	}
	dag_rows_free(rows, n);
	/* no work pass yet: the job manager's recovery comes first */
	job_manager_turn_end(dm->jm);
	return 0;
}

int dag_manager_recover(struct dag_manager *dm, struct weir_error *err)
{
	struct dag_run_row *runs = NULL;
	size_t n = 0;

	dm_begin(dm);
	if (dag_store_runs_active(dm->ds, &runs, &n, err) < 0) {
		dm_end(dm);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct dag_ti_row *tis = NULL;
		size_t nt = 0;
		struct dag_event ev = {.kind = DAG_EV_EVALUATE};
		struct weir_error e2 = {0};

		if (!dm_entry_by_id(dm, runs[i].dag_id)) {
			log_warn("DAG %s run %s: the DAG's file is gone; the run waits for it",
			         runs[i].dag_id, runs[i].run_id);
			continue;
		}
		/* jobs that ended while the server was down settle their TIs */
		if (dag_store_tis_of_run(dm->ds, runs[i].dag_id, runs[i].run_id, &tis, &nt, &e2) ==
		    0) {
			for (size_t k = 0; k < nt; k++) {
				struct job_row job = {0};
				if ((strcmp(tis[k].state, "queued") &&
				     strcmp(tis[k].state, "running")) ||
				    tis[k].job_id <= 0)
					continue;
				if (store_job_get(dm->store, tis[k].job_id, &job, NULL) == 0 &&
				    (!strcmp(job.state, "succeeded") ||
				     !strcmp(job.state, "failed") || !strcmp(job.state, "killed")))
					on_job_end(dm, job.id, job.state, job.exit_code,
					           job.reason);
				job_row_release(&job);
			}
			dag_ti_rows_free(tis, nt);
		}
		if (dm_run_event(dm, runs[i].dag_id, runs[i].run_id, &ev, &e2) < 0)
			log_error("recovery: DAG %s run %s: %s", runs[i].dag_id, runs[i].run_id,
			          e2.msg);
	}
	dag_run_rows_free(runs, n);
	dm_end(dm);
	dm_arm_wake(dm);
	dm->last_pass_ms = clock_now_ms();
	return 0;
}

int64_t dag_manager_last_pass(const struct dag_manager *dm)
{
	return dm ? dm->last_pass_ms : 0;
}

void dag_manager_counts(struct dag_manager *dm, int *dags, int *import_errors, int *active_runs)
{
	struct dag_import_error_row *ie = NULL;
	struct dag_run_row *runs = NULL;
	size_t n = 0;

	*dags = 0;
	*import_errors = 0;
	*active_runs = 0;
	for (struct dag_entry *e = dm->entries; e; e = e->next)
		*dags += e->present && e->spec;
	if (dag_store_import_error_list(dm->ds, &ie, &n, NULL) == 0) {
		*import_errors = (int)n;
		dag_import_error_rows_free(ie, n);
	}
	if (dag_store_runs_active(dm->ds, &runs, &n, NULL) == 0) {
		*active_runs = (int)n;
		dag_run_rows_free(runs, n);
	}
}

struct dag_manager *dag_manager_create(uv_loop_t *loop, struct store *store, struct job_manager *jm,
                                       const char *home, const char *dags_dir,
                                       const struct server_pool *pools, size_t n_pools,
                                       struct weir_error *err)
{
	struct dag_manager *dm = calloc(1, sizeof *dm);
	bool have_default = false;

	if (!dm)
		goto oom;
	dm->loop = loop;
	dm->store = store;
	dm->jm = jm;
	dm->home = dm_xstrdup(home);
	dm->dir = dm_xstrdup(dags_dir);
	dm->pools = calloc(n_pools + 1, sizeof *dm->pools);
	dm->pool_queues = calloc(n_pools + 1, sizeof *dm->pool_queues);
	if (!dm->home || !dm->dir || !dm->pools || !dm->pool_queues)
		goto oom;
	for (size_t i = 0; i < n_pools; i++) {
		dm->pools[i].name = dm_xstrdup(pools[i].name);
		if (!dm->pools[i].name)
			goto oom;
		if (pools[i].queue && !(dm->pool_queues[i] = dm_xstrdup(pools[i].queue)))
			goto oom;
		dm->pools[i].slots = pools[i].slots;
		dm->n_pools++;
		have_default = have_default || !strcmp(pools[i].name, DAG_DEFAULT_POOL);
	}
	if (!have_default) {
		dm->pools[dm->n_pools].name = dm_xstrdup(DAG_DEFAULT_POOL);
		if (!dm->pools[dm->n_pools].name)
			goto oom;
		dm->pools[dm->n_pools++].slots = DEFAULT_POOL_SLOTS;
	}
	dm->ds = dag_store_create(store, err);
	if (!dm->ds)
		goto fail;
	if (fs_mkdir_p(dm->dir, 0755, err) < 0) {
		weir_error_prefix(err, "DAG folder");
		goto fail;
	}
	uv_timer_init(loop, &dm->scan_timer);
	dm->scan_timer.data = dm;
	uv_timer_init(loop, &dm->wake_timer);
	dm->wake_timer.data = dm;
	dm->open_handles = 2;
	uv_timer_start(&dm->scan_timer, on_scan_timer, RESCAN_MS, RESCAN_MS);
	if (uv_fs_event_init(loop, &dm->fsev) == 0) {
		dm->fsev.data = dm;
		dm->open_handles++;
		dm->fsev_on = uv_fs_event_start(&dm->fsev, on_fs_event, dm->dir, 0) == 0;
		if (!dm->fsev_on)
			log_warn("DAG folder %s: no change events; rescanning every %d ms", dm->dir,
			         RESCAN_MS);
	}
	job_manager_set_end_callback(jm, on_job_end, dm);
	return dm;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
fail:
	if (dm) {
		dag_store_destroy(dm->ds);
		for (size_t i = 0; i < dm->n_pools + 1 && dm->pools; i++)
			free((char *)dm->pools[i].name);
		for (size_t i = 0; i < dm->n_pools + 1 && dm->pool_queues; i++)
			free(dm->pool_queues[i]);
		free(dm->pools);
		free(dm->pool_queues);
		free(dm->home);
		free(dm->dir);
		free(dm);
	}
	return NULL;
}

static void dm_closed(uv_handle_t *h)
{
	struct dag_manager *dm = h->data;
	if (--dm->open_handles == 0)
		free(dm);
}

void dag_manager_destroy(struct dag_manager *dm)
{
	if (!dm)
		return;
	job_manager_set_end_callback(dm->jm, NULL, NULL);
	run_cache_drop(dm);
	free(dm->runs);
	dm->runs = NULL;
	dm->cap_runs = 0;
	while (dm->entries) {
		struct dag_entry *e = dm->entries;
		dm->entries = e->next;
		entry_free(e);
	}
	dag_store_destroy(dm->ds);
	dm->ds = NULL;
	for (size_t i = 0; i < dm->n_pools; i++) {
		free((char *)dm->pools[i].name);
		free(dm->pool_queues[i]);
	}
	free(dm->pools);
	free(dm->pool_queues);
	free(dm->home);
	free(dm->dir);
	uv_timer_stop(&dm->scan_timer);
	uv_timer_stop(&dm->wake_timer);
	uv_close((uv_handle_t *)&dm->scan_timer, dm_closed);
	uv_close((uv_handle_t *)&dm->wake_timer, dm_closed);
	if (dm->open_handles == 3) {
		uv_fs_event_stop(&dm->fsev);
		uv_close((uv_handle_t *)&dm->fsev, dm_closed);
	}
}
