/* outputs.c: a try's files: the folder of a run's tries, the
 * $WEIR_OUTPUT a try may write (a small JSON object, read when the try
 * succeeds), and the outputs of a run's tasks for the templates of the
 * tasks downstream (outputs.TASK.KEY) and for a run_outputs task
 * ($WEIR_RUN_OUTPUTS).
 */
#include "server/dag_manager/dm_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/fs.h"
#include "lib/log.h"
#include "server/secrets.h"

/* The largest $WEIR_OUTPUT read; a larger one fails the try. */
#define OUTPUT_MAX (64 * 1024)

char *dm_try_dir(struct dag_manager *dm, int64_t run_row_id)
{
	char *p = NULL;
	if (asprintf(&p, "%s/dag_runs/%lld", dm->home, (long long)run_row_id) < 0)
		return NULL;
	return p;
}

/* A file of a try in its run's folder: TASK.MAP_INDEX.TRY.suffix.  Run ids
 * and task ids come from users: the name uses the run's row id and the
 * task id (checked to be [A-Za-z0-9_.-]: no slash; the map index and try,
 * read from the right, keep names apart).  One format, not the folder's and
 * then the file's: each start and end makes two or three of these. */
static char *try_file(struct dag_manager *dm, int64_t run_row_id, const char *task_id,
                      int map_index, int try_number, const char *suffix)
{
	char *p = NULL;

	if (asprintf(&p, "%s/dag_runs/%lld/%s.%d.%d.%s", dm->home, (long long)run_row_id, task_id,
	             map_index, try_number, suffix) < 0)
		return NULL;
	return p;
}

char *dm_output_path(struct dag_manager *dm, int64_t run_row_id, const char *task_id, int map_index,
                     int try_number)
{
	return try_file(dm, run_row_id, task_id, map_index, try_number, "output.json");
}

int dm_write_try_json(struct dag_manager *dm, const struct run_ctx *rc, const char *task_id,
                      int map_index, int try_number, const char *suffix, const json_t *v,
                      char **path, struct weir_error *err)
{
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
	int r = -1;

	*path = try_file(dm, rc->run.id, task_id, map_index, try_number, suffix);
	if (!text || !*path)
		r = weir_error_oom(err);
	else
		r = fs_write_file_atomic(*path, text, strlen(text), 0644, err);
	/* the task's user reads it, whatever the server's umask */
	if (r == 0 && chmod(*path, 0644) < 0)
		r = weir_error_set(err, WEIR_E_INTERNAL, "%s: chmod: %s", *path, strerror(errno));
	if (r < 0) {
		free(*path);
		*path = NULL;
	}
	free(text);
	return r;
}

int dm_write_run_outputs(struct dag_manager *dm, const struct run_ctx *rc, const char *task_id,
                         int map_index, int try_number, char **path, struct weir_error *err)
{
	json_t *all = json_object();
	int r = -1;

	*path = NULL;
	if (!all)
		goto oom;
	for (size_t k = 0; rc->has_outputs && k < rc->n_rows; k++) {
		const struct dag_ti_row *row = &rc->rows[k];
		json_t *v, *task;
		char idx[24];
		if (!row->outputs || !*row->outputs)
			continue;
		v = json_loads(row->outputs, 0, NULL);
		if (!json_is_object(v)) {
			json_decref(v);
			continue;
		}
		task = json_object_get(all, row->task_id);
		if (!task && json_object_set_new(all, row->task_id, task = json_object()) < 0) {
			json_decref(v);
			goto oom;
		}
		snprintf(idx, sizeof idx, "%d", row->map_index);
		if (json_object_set_new(task, idx, v) < 0)
			goto oom;
	}
	r = dm_write_try_json(dm, rc, task_id, map_index, try_number, "run_outputs.json", all, path,
	                      err);
	goto out;
oom:
	weir_error_oom(err);
out:
	json_decref(all);
	return r;
}

/* The output's key of a try's variable writes (run_task writes it). */
#define VARIABLE_WRITES "weir_set_variables"

static bool task_lists(const struct dag_task *t, const char *key)
{
	for (size_t i = 0; i < t->variables.n; i++)
		if (!strcmp(t->variables.v[i], key))
			return true;
	return false;
}

int dm_take_variable_writes(struct dag_manager *dm, const struct dag_task *t, const char *path,
                            char **outputs, char *why, size_t why_size)
{
	json_t *out, *writes, *v;
	const char *key;
	char *text = NULL;
	struct weir_error err = {0};
	int r = -1;

	if (!*outputs || !**outputs || !strstr(*outputs, VARIABLE_WRITES))
		return 0;
	out = json_loads(*outputs, 0, NULL);
	writes = json_object_get(out, VARIABLE_WRITES);
	if (!writes) {
		json_decref(out);
		return 0;
	}
	if (!json_is_object(writes)) {
		snprintf(why, why_size, "$WEIR_OUTPUT: %s: expected a mapping of keys to values",
		         VARIABLE_WRITES);
		goto out;
	}
	/* every key checked before any is written */
	json_object_foreach(writes, key, v)
	{
		if (variable_check_key(key, &err) < 0) {
			snprintf(why, why_size, "Variable.set: %s", err.msg);
			goto out;
		}
		if (!task_lists(t, key)) {
			snprintf(
			    why, why_size,
			    "Variable.set(%.250s): task %s may set the variables its DAG file "
			    "names (Variable.get, .set, .delete with the key written out), not "
			    "this one",
			    key, t->task_id);
			goto out;
		}
		if (!json_is_string(v) && !json_is_null(v)) {
			snprintf(why, why_size, "Variable.set(%.250s): expected text or null", key);
			goto out;
		}
	}
	if (!dm->secrets) {
		snprintf(why, why_size, "Variable.set: the server keeps no variables here");
		goto out;
	}
	json_object_foreach(writes, key, v)
	{
		int w;
		memset(&err, 0, sizeof err);
		if (json_is_null(v)) {
			w = secrets_var_delete(dm->secrets, key, &err);
			if (w < 0 && err.kind == WEIR_E_NOT_FOUND)
				w = 0;
		} else {
			struct variable var = {.key = (char *)key,
			                       .value = (char *)json_string_value(v)};
			w = secrets_var_set(dm->secrets, &var, &err);
		}
		if (w < 0) {
			snprintf(why, why_size, "Variable.set(%.250s): %s", key, err.msg);
			goto out;
		}
		log_info("task %s: variable %s %s by the task", t->task_id, key,
		         json_is_null(v) ? "deleted" : "set");
	}
	/* the values leave the outputs (the store, the API) and the file */
	json_object_del(out, VARIABLE_WRITES);
	text = json_object_size(out) ? json_dumps(out, JSON_COMPACT) : strdup("");
	if (!text) {
		snprintf(why, why_size, "out of memory");
		goto out;
	}
	if (fs_write_file_atomic(path, text, strlen(text), 0600, &err) < 0)
		log_error("%s: %s", path, err.msg);
	free(*outputs);
	*outputs = text;
	text = NULL;
	r = 0;
out:
	free(text);
	json_decref(out);
	return r;
}

char *dm_start_log_path(struct dag_manager *dm, int64_t run_row_id, const char *task_id,
                        int map_index, int try_number)
{
	return try_file(dm, run_row_id, task_id, map_index, try_number, "start.log");
}

int dm_read_outputs(const char *path, char **out, char *why, size_t why_size)
{
	struct stat st;
	char *text;
	size_t len = 0;
	json_t *j;
	json_error_t je;

	*out = NULL;
	if (stat(path, &st) < 0) {
		*out = dm_strdup_or_empty("");
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
		*out = dm_strdup_or_empty("");
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

json_t *dm_run_outputs(const struct run_ctx *rc)
{
	json_t *o = json_object();

	/* most runs write none: no walk over their TIs at every start */
	for (size_t k = 0; rc->has_outputs && k < rc->n_rows; k++) {
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
