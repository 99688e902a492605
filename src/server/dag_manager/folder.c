/* folder.c: the DAG folder: one entry per DAG file seen, the
 * scan that keeps the DAG tables in step with the files, import errors,
 * and the watch (a change event and a rescan timer).
 *
 * Owns dm->folder: the entries (a file's mtime, size and last good parse; the parse
 * of a removed file is kept so that its active runs can finish) and the
 * scan timer and change event.  The walk reads subfolders and honours
 * .airflowignore; Python files are parsed by pyfiles.c.  A broken file is an import error and
 * never stops the others; the last good version of a DAG keeps running.
 */
#include "server/dag_manager.h"
#include "server/dag_manager/dm_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/gitglob.h"
#include "lib/log.h"
#include "model/cron.h"
#include "sched/access.h"
#include "store/dag_store.h"

#define RESCAN_MS 2000
#define FS_EVENT_DELAY_MS 50

/* ---- DAG entries ---- */

struct dag_entry *dm_entry_by_id(struct dag_manager *dm, const char *dag_id)
{
	struct dag_entry *found = NULL;

	for (struct dag_entry *e = dm->folder.entries; e; e = e->next)
		if (e->spec && !strcmp(e->spec->dag_id, dag_id)) {
			if (e->present)
				return e;
			found = e;
		}
	return found;
}

static struct dag_entry *entry_by_file(struct dag_manager *dm, const char *file)
{
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next)
		if (!e->owner && !strcmp(e->file, file))
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
	strvec_release(&e->var_names);
	strvec_release(&e->var_read);
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
	       (n > 5 && !strcmp(name + n - 5, ".json")) || dm_py_file_name(name);
}

void dm_import_error(struct dag_manager *dm, struct dag_entry *e, const char *msg)
{
	struct weir_error err = {0};

	log_warn("DAG file %s: %s", e->file, msg);
	if (dag_store_import_error_set(dm->ds, e->file, clock_now_ms(), msg, &err) < 0)
		log_error("DAG file %s: %s", e->file, err.msg);
	/* the last good version keeps running; the DAG says why it is stale (a
	 * Python file's: each DAG it held) */
	for (struct dag_entry *d = e->py ? dm->folder.entries : e; d; d = e->py ? d->next : NULL) {
		struct dag_row row = {0};
		if ((e->py && d->owner != e) || !d->spec)
			continue;
		if (dag_store_dag_get(dm->ds, d->spec->dag_id, &row, NULL) == 0) {
			dm_set_str(&row.import_error, msg);
			if (dag_store_dag_put(dm->ds, &row, &err) < 0)
				log_error("DAG %s: %s", d->spec->dag_id, err.msg);
			dag_row_release(&row);
		}
	}
}

/* An access list's names that are neither a role nor a user of the
 * configuration: a warning (Airflow refuses an unknown role when it syncs a
 * DAG's permissions; here the entry lets nobody in). */
static void warn_access_names(struct dag_manager *dm, const struct dag_spec *spec)
{
	const struct strvec *users = &dm->folder.users;

	for (size_t i = 0; i < spec->access.n; i++) {
		const char *who = spec->access.v[i].who;
		bool known = access_names_role(who);
		for (size_t k = 0; k < users->n && !known; k++)
			known = !strcmp(users->v[k], who);
		if (!known)
			log_warn("DAG %s: access: %s is neither a role (Viewer, User, Op, Admin) "
			         "nor a user of the server: it lets nobody in",
			         spec->dag_id, who);
	}
}

static int put_dag(struct dag_manager *dm, struct dag_entry *e, struct weir_error *err)
{
	json_t *j = dag_spec_to_json(e->spec);
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	struct dag_row row = {.dag_id = e->spec->dag_id,
	                      .file = e->file,
	                      .paused = dm->folder.paused_at_creation, /* a new DAG's */
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

int dag_manager_check_spec(struct dag_manager *dm, const struct dag_spec *spec, const char *file,
                           struct weir_error *err)
{
	/* a job file or tony.xml the server will read: inside the folder (one
	 * that is not there yet is looked for at each try) */
	for (size_t i = 0; i < spec->n_tasks; i++) {
		const struct dag_task *t = &spec->tasks[i];
		const char *p = t->kind == DAG_TASK_JOB_FILE ? t->job_path
		                : t->kind == DAG_TASK_JOB_TONY
		                    ? json_string_value(json_object_get(t->tony, "conf_file"))
		                    : NULL;
		struct weir_error e2 = {0};
		char *real = p ? dm_dag_named_file(dm, p, "job", &e2) : NULL;
		bool inside = real != NULL;
		free(real);
		if (inside || !p || e2.kind == WEIR_E_NOT_FOUND)
			continue;
		return weir_error_set(err, e2.kind, "%s: task %s: %s", file, t->task_id, e2.msg);
	}
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
		for (size_t k = 0; k < dm->pools.n; k++) {
			if (strcmp(dm->pools.list[k].name, pool) || dm->pools.list[k].slots < 0 ||
			    t->pool_slots <= dm->pools.list[k].slots)
				continue;
			int line =
			    t->pool_slots_at[0] ? dag_spec_line_of(file, t->pool_slots_at) : 0;
			char at[32] = "";
			if (line > 0)
				snprintf(at, sizeof at, ":%d", line);
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s%s: %s: task %s takes %d slots, but pool %s has %d", file, at,
			    t->pool_slots_at, t->task_id, t->pool_slots, pool,
			    dm->pools.list[k].slots);
		}
	}
	return 0;
}

/* `path`'s real path (every link resolved) when it lies below folder
 * `dir`'s; NULL otherwise (errno ENOENT when it does not exist). */
static char *real_path_inside(const char *dir, const char *path)
{
	char *real = realpath(path, NULL), *rdir = realpath(dir, NULL);
	size_t n = rdir ? strlen(rdir) : 0;
	int saved = errno;

	if (real && rdir && (strncmp(real, rdir, n) || real[n] != '/')) {
		free(real);
		real = NULL;
		saved = EACCES;
	}
	free(rdir);
	errno = real ? 0 : saved ? saved : EACCES;
	return real;
}

char *dm_dag_named_file(struct dag_manager *dm, const char *path, const char *what,
                        struct weir_error *err)
{
	const char *dir = dm->folder.paths_root ? dm->folder.paths_root : dm->folder.dir;
	char *real = real_path_inside(dir, path);

	if (!real)
		weir_error_set(err, errno == ENOENT ? WEIR_E_NOT_FOUND : WEIR_E_INVALID,
		               errno == ENOENT ? "%s: %s: no such file"
		                               : "%s: %s is not inside the DAG folder: the server "
		                                 "reads no file a DAG names outside it",
		               what, path);
	return real;
}

char *dm_dag_file_path(struct dag_manager *dm, const char *path, char *msg, size_t size)
{
	struct stat st;
	char *real = NULL;

	msg[0] = '\0';
	if (lstat(path, &st) < 0)
		return NULL;
	if (!S_ISLNK(st.st_mode))
		return strdup(path);
	if (dm->folder.symlinks_never) {
		snprintf(msg, size,
		         "%s: a symbolic link: not read (dag_folder_symlinks: never; "
		         "put the file itself in the DAG folder)",
		         path);
		return NULL;
	}
	/* the target as the kernel resolves it, every link on the way */
	real = real_path_inside(dm->folder.dir, path);
	if (!real && errno != ENOENT)
		snprintf(msg, size,
		         "%s: a symbolic link to a file outside the DAG folder: not read "
		         "(dag_folder_symlinks: inside)",
		         path);
	return real;
}

int dm_take_spec(struct dag_manager *dm, struct dag_entry *e, struct dag_spec *spec, char *msg,
                 size_t size)
{
	struct weir_error err = {0};
	struct dag_entry *other = dm_entry_by_id(dm, spec->dag_id);

	if (other && other != e && other->present) {
		snprintf(msg, size, "%s: dag_id: \"%s\" is already the DAG of %s", e->file,
		         spec->dag_id, other->file);
		dag_spec_destroy(spec);
		return -1;
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
		return 0;
	}
	log_info("DAG %s loaded from %s (%zu tasks)", spec->dag_id, e->file, spec->n_tasks);
	warn_access_names(dm, spec);
	return 0;
}

/* The file is new or changed: parse it; a good parse replaces the DAG. */
static void load_file(struct dag_manager *dm, struct dag_entry *e)
{
	struct weir_error err = {0};
	struct dag_spec *spec = NULL;
	char msg[WEIR_ERROR_MSG_MAX + 64];
	char *read = dm_dag_file_path(dm, e->file, msg, sizeof msg);

	if (!read) {
		dm_import_error(dm, e, msg[0] ? msg : "the file is gone");
		return;
	}
	/* a link's target is read by its real path, checked just now */
	spec = dag_spec_parse_file(read, &err);
	if (!spec) {
		free(read);
		dm_import_error(dm, e, err.msg);
		return;
	}
	/* a queue this server does not have, a task larger than its pool: an import
	 * error at its line */
	if (dag_manager_check_spec(dm, spec, read, &err) < 0) {
		free(read);
		dag_spec_destroy(spec);
		dm_import_error(dm, e, err.msg);
		return;
	}
	free(read);
	if (dm_take_spec(dm, e, spec, msg, sizeof msg) < 0) {
		dm_import_error(dm, e, msg);
		return;
	}
	if (dag_store_import_error_clear(dm->ds, e->file, &err) < 0)
		log_error("DAG file %s: %s", e->file, err.msg);
}

void dm_file_gone(struct dag_manager *dm, struct dag_entry *e)
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

/* ---- the walk: subfolders and .airflowignore ---- */

/* The .airflowignore patterns in effect in a folder: its own and its
 * parents'.  Airflow's regexp syntax (the default): each line a regular
 * expression, searched in the path relative to the DAG folder; a match
 * ignores.  Its glob syntax (`dag_ignore_file_syntax: glob`): each line a
 * gitignore-style glob (lib/gitglob.h) matched against the path relative to
 * the folder of its .airflowignore, the last line that matches deciding
 * (`!`: kept).  `#` starts a comment in both. */
struct ignore_rule {
	regex_t re;
	size_t base;   /* glob: the length of its folder's path in the DAG folder */
	bool negate;   /* glob `!pattern`: a match keeps the path */
	bool dir_only; /* glob `pattern/`: a folder's path is matched with a '/' */
};

struct ignores {
	struct ignore_rule *r;
	size_t n;
	bool glob;
};

/* The rules of the .airflowignore of folder `dir` (`rel` its path in the
 * DAG folder) added to ig. */
static void ignores_add_file(struct ignores *ig, const char *dir, const char *rel)
{
	char *path = fs_join(dir, ".airflowignore");
	char *text = path ? fs_read_file(path, NULL, NULL) : NULL;
	char *save = NULL;

	for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');
		size_t n;
		struct ignore_rule *grown, *rule;
		char *ere = NULL;
		if (hash)
			*hash = '\0';
		n = strlen(line);
		while (n && strchr(" \t\r", line[n - 1]))
			line[--n] = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line)
			continue;
		grown = realloc(ig->r, (ig->n + 1) * sizeof *grown);
		if (!grown)
			break;
		ig->r = grown;
		rule = &ig->r[ig->n];
		memset(rule, 0, sizeof *rule);
		if (ig->glob) {
			ere = gitglob_to_ere(line, &rule->negate, &rule->dir_only);
			rule->base = strlen(rel);
		}
		if ((!ig->glob || ere) &&
		    regcomp(&rule->re, ere ? ere : line, REG_EXTENDED | REG_NOSUB) == 0)
			ig->n++;
		else
			log_warn("%s: pattern \"%s\" does not compile; not used", path, line);
		free(ere);
	}
	free(text);
	free(path);
}

/* Whether the path `rel` (relative to the DAG folder; `dir`: a folder) is
 * ignored. */
static bool ignored(const struct ignores *ig, const char *rel, bool dir)
{
	bool matched = false;

	for (size_t i = 0; i < ig->n; i++) {
		const struct ignore_rule *r = &ig->r[i];
		if (!ig->glob) {
			if (regexec(&r->re, rel, 0, NULL, 0) == 0)
				return true;
			continue;
		}
		/* the rule's folder is above the path: the path below it */
		const char *below = rel + r->base + (r->base ? 1 : 0);
		char *with_slash = NULL;
		if (r->dir_only && dir && asprintf(&with_slash, "%s/", below) < 0)
			continue;
		if (regexec(&r->re, with_slash ? with_slash : below, 0, NULL, 0) == 0)
			matched = !r->negate;
		free(with_slash);
	}
	return matched;
}

/* Whether `text` has `dag_id` as a mapping key: the word (not the end of
 * a longer name, nor `dag.dag_id`), an optional closing quote, blanks,
 * then ':'.  A template kept below the DAGs that only mentions it
 * (`{{ dag.dag_id }}`) is no DAG file. */
static bool has_dag_id_key(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while ((p = memmem(p, (size_t)(end - p), "dag_id", 6)) != NULL) {
		const char *q = p + 6;
		bool word =
		    p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.');
		if (q < end && (*q == '"' || *q == '\''))
			q++;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (word && q < end && *q == ':')
			return true;
		p += 6;
	}
	return false;
}

/* Whether a YAML or JSON file below the top of the folder is a DAG file:
 * it has a `dag_id` key (a job's spec or a template kept beside the DAGs
 * does not), as Airflow's heuristic reads a Python file's text. */
bool dag_manager_names_dag_id(const char *path)
{
	size_t len = 0;
	char *text = fs_read_file(path, &len, NULL);
	bool yes = text && has_dag_id_key(text, len);

	free(text);
	return yes;
}

/* One DAG file seen by the walk: new or changed, it is parsed (a Python
 * file by its processor, later).  `top`: in the folder itself, not a
 * subfolder. */
static void scan_file(struct dag_manager *dm, char *path, bool top, bool *changed)
{
	struct stat st;
	char msg[WEIR_ERROR_MSG_MAX];
	char *read;
	bool refused;
	struct dag_entry *e;
	int64_t mt;
	const char *base = strrchr(path, '/');
	bool py = dm_py_file_name(base ? base + 1 : path);

	/* a symbolic link that may not be read: an import error (once per
	 * change of the link), its target never opened */
	read = dm_dag_file_path(dm, path, msg, sizeof msg);
	refused = !read && msg[0];
	if (refused ? lstat(path, &st) < 0 : !read || stat(read, &st) < 0 || !S_ISREG(st.st_mode)) {
		free(read);
		free(path);
		return;
	}
	/* read through the link's checked target, never an outside one */
	if (!top && !py && !refused && !dag_manager_names_dag_id(read)) {
		free(read);
		free(path);
		return;
	}
	free(read);
	mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	e = entry_by_file(dm, path);
	if (!e) {
		e = calloc(1, sizeof *e);
		if (!e) {
			free(path);
			return;
		}
		e->file = path;
		path = NULL;
		e->py = py;
		e->next = dm->folder.entries;
		dm->folder.entries = e;
	}
	free(path);
	e->seen = true;
	if ((e->present || e->refused) && e->refused == refused && e->mtime_ns == mt &&
	    e->size == (int64_t)st.st_size)
		return;
	e->mtime_ns = mt;
	e->size = (int64_t)st.st_size;
	e->refused = refused;
	if (refused) {
		/* the last good version (if any) keeps running, as for a
		 * broken file */
		e->present = e->spec != NULL;
		dm_import_error(dm, e, msg);
		return;
	}
	e->present = true;
	if (e->py) {
		dm_py_want(dm, e); /* its DAGs change when its processor answers */
		return;
	}
	if (!*changed) {
		/* a new parse replaces the spec the cached runs point at */
		dm_run_cache_drop(dm);
		*changed = true;
	}
	load_file(dm, e);
}

#define WALK_DEPTH_MAX 32

/* The DAG files of folder `dir` (`rel` its path in the DAG folder, "" at
 * the top) and of its subfolders, each given to visit() (which takes the
 * path); symbolic links to folders are not followed, hidden folders and
 * __pycache__ are not read. */
static void walk_dir(const char *dir, const char *rel, const struct ignores *parent, int depth,
                     void (*visit)(void *arg, char *path, bool top), void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct ignores ig = {.glob = parent->glob};

	if (!d) {
		log_warn("DAG folder %s: %s", dir, strerror(errno));
		return;
	}
	ig.r = parent->n ? malloc(parent->n * sizeof *ig.r) : NULL;
	if (ig.r) {
		memcpy(ig.r, parent->r, parent->n * sizeof *ig.r);
		ig.n = parent->n;
	}
	size_t inherited = ig.n;
	ignores_add_file(&ig, dir, rel);
	while ((de = readdir(d))) {
		char *path, *relpath = NULL;
		struct stat st;
		bool is_dir;
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "__pycache__"))
			continue;
		path = fs_join(dir, de->d_name);
		if (!path || asprintf(&relpath, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) < 0) {
			free(path);
			continue;
		}
		is_dir = lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
		if (ignored(&ig, relpath, is_dir)) {
			free(path);
			free(relpath);
			continue;
		}
		if (is_dir) {
			if (depth < WALK_DEPTH_MAX)
				walk_dir(path, relpath, &ig, depth + 1, visit, arg);
			free(path);
		} else if (dag_file_name(de->d_name)) {
			visit(arg, path, depth == 0); /* takes path */
		} else {
			free(path);
		}
		free(relpath);
	}
	closedir(d);
	for (size_t i = inherited; i < ig.n; i++)
		regfree(&ig.r[i].re);
	free(ig.r);
}

void dag_manager_set_ignore_glob(struct dag_manager *dm, bool glob)
{
	dm->folder.ignore_glob = glob;
}

void dag_manager_walk(const char *dir, bool glob, void (*visit)(void *arg, char *path, bool top),
                      void *arg)
{
	struct ignores none = {.glob = glob};

	walk_dir(dir, "", &none, 0, visit, arg);
}

struct scan {
	struct dag_manager *dm;
	bool changed;
};

static void scan_visit(void *arg, char *path, bool top)
{
	struct scan *sc = arg;

	scan_file(sc->dm, path, top, &sc->changed);
}

void dm_specs_changed(struct dag_manager *dm)
{
	/* runs that waited for their DAG: the jobs that ended meanwhile end
	 * their TIs now (recovery.c) */
	if (dm->recovery.wait_dag) {
		struct weir_error err = {0};
		if (dm_settle_runs(dm, &err) < 0)
			log_error("DAG folder %s: %s", dm->folder.dir, err.msg);
	}
	dm_datasets_scanned(dm, true);
	dm->timeouts.dirty = true; /* a dagrun_timeout may have changed (runs.c) */
}

void dm_scan(struct dag_manager *dm)
{
	struct stat st;
	struct scan sc = {.dm = dm};

	if (stat(dm->folder.dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_warn("DAG folder %s: %s", dm->folder.dir,
		         errno ? strerror(errno) : "not a folder");
		return;
	}
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next)
		e->seen = false;
	dag_manager_walk(dm->folder.dir, dm->folder.ignore_glob, scan_visit, &sc);
	bool changed = sc.changed;
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next) {
		struct weir_error err = {0};
		if (e->owner)
			continue; /* a Python file's DAG: its file says */
		if (e->refused && !e->seen) {
			/* a refused link gone: so is its import error */
			e->refused = false;
			if (!e->present && dag_store_import_error_clear(dm->ds, e->file, &err) < 0)
				log_error("DAG file %s: %s", e->file, err.msg);
		}
		if (e->present && !e->seen) {
			if (!changed) {
				dm_run_cache_drop(dm);
				changed = true;
			}
			if (e->py)
				dm_py_gone(dm, e);
			dm_file_gone(dm, e);
		}
	}
	if (changed)
		dm_specs_changed(dm);
	else
		dm_datasets_scanned(dm, false);
}

static void on_scan_timer(uv_timer_t *t)
{
	struct dag_manager *dm = t->data;

	dm_touch(dm);
	dm_scan(dm);
	dm->turn.last_pass_ms = clock_now_ms();
}

static void on_fs_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	struct dag_manager *dm = h->data;

	(void)filename;
	(void)events;
	(void)status;
	/* editors write in steps: look a moment later, then every RESCAN_MS */
	uv_timer_start(&dm->folder.scan_timer, on_scan_timer, FS_EVENT_DELAY_MS, RESCAN_MS);
}

void dm_folder_watch(struct dag_manager *dm)
{
	uv_timer_init(dm->loop, &dm->folder.scan_timer);
	dm->folder.scan_timer.data = dm;
	dm->open_handles++;
	uv_timer_start(&dm->folder.scan_timer, on_scan_timer, RESCAN_MS, RESCAN_MS);
	if (uv_fs_event_init(dm->loop, &dm->folder.fsev) == 0) {
		dm->folder.fsev.data = dm;
		dm->open_handles++;
		dm->folder.fsev_on =
		    uv_fs_event_start(&dm->folder.fsev, on_fs_event, dm->folder.dir, 0) == 0;
		if (!dm->folder.fsev_on)
			log_warn("DAG folder %s: no change events; rescanning every %d ms",
			         dm->folder.dir, RESCAN_MS);
	}
}

void dm_entries_free(struct dag_manager *dm)
{
	dm_py_stop_all(dm);
	while (dm->folder.entries) {
		struct dag_entry *e = dm->folder.entries;
		dm->folder.entries = e->next;
		entry_free(e);
	}
}

/* ---- start-up ---- */

int dag_manager_load(struct dag_manager *dm, struct weir_error *err)
{
	struct dag_row *rows = NULL;
	size_t n = 0;

	dm_touch_no_pass(dm); /* the job manager's recovery comes first */
	dm_scan(dm);
	/* DAGs of files that went away while the server was down */
	if (dag_store_dag_list(dm->ds, true, &rows, &n, err) < 0)
		return -1;
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
	return 0;
}
