/* dag_spec.c: DAG files: YAML (through lib/yaml) or JSON in, validation
 * (keys, types, dependencies, cycles, templates), defaults resolved, JSON
 * out.
 *
 * As in job_spec.c, the reader keeps the path of the field it is looking
 * at ("tasks[2].depends_on[0]"), so an error names it and the file parser
 * turns it into a line with yaml_lines_find().  Inline job specs are read
 * by job_spec_from_json(); their errors' field paths are put under
 * "tasks[i].job." so the line is found the same way.
 */
#include "model/dag_spec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/str.h"
#include "lib/yaml.h"
#include "model/job_spec_edit.h"
#include "model/template.h"
#include "model/field_reader.h"


static const char *const dag_keys[] = {
	"dag_id",   "description", "schedule", "start_date",   "end_date",
	"catchup",  "max_active_runs", "max_active_tasks", "params", "tags",
	"default_args", "tasks", NULL,
};
static const char *const default_arg_keys[] = {
	"retries", "retry_delay", "retry_exponential_backoff", "max_retry_delay",
	"execution_timeout", "pool", "priority", "resources", "queue", NULL,
};
static const char *const task_keys[] = {
	"task_id", "depends_on", "trigger_rule", "command", "env", "cwd", "job", "retries",
	"retry_delay", "retry_exponential_backoff", "max_retry_delay", "execution_timeout",
	"pool", "priority", "resources", "foreach", "queue", "slurm", NULL,
};
static const char *const resource_keys[] = {"memory", "vcores", "gpus", NULL};
static const char *const tony_keys[] = {
	"conf_file", "executes", "task_params", "python_venv", "python_binary_path", "src_dir",
	"framework", "shell_env", "container_env", "conf", NULL,
};

static const char *const rule_names[] = {
	"all_success", "all_done", "all_failed", "one_success",
	"one_failed", "none_failed", "none_skipped", "always", NULL,
};

const char *trigger_rule_name(enum trigger_rule r)
{
	if ((unsigned)r >= sizeof rule_names / sizeof rule_names[0] - 1)
		return "all_success";
	return rule_names[r];
}

int trigger_rule_from_name(const char *name, enum trigger_rule *out)
{
	for (size_t i = 0; rule_names[i]; i++)
		if (!strcmp(rule_names[i], name)) {
			*out = (enum trigger_rule)i;
			return 0;
		}
	return -1;
}

/* ---- reading helpers ---------------------------------------------------- */

static bool id_valid(const char *s, bool dots)
{
	if (!*s || strlen(s) > DAG_MAX_ID)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && !(dots && *s == '.'))
			return false;
	return true;
}

static bool ident_valid(const char *s)
{
	if ((!isalpha((unsigned char)*s) && *s != '_') || strlen(s) > 128)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* A path: absolute against base_dir when there is one. */
static char *resolve(const char *base_dir, const char *s)
{
	if (s[0] == '/' || !base_dir)
		return strdup(s);
	const char *rel = s;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	return *rel && strcmp(rel, ".") ? fs_join(base_dir, rel) : strdup(base_dir);
}

/* Env values may be numbers or booleans in YAML: the variable is their text. */
static int read_env(struct field_reader *r, json_t *v, const char *prefix, struct env_var **env,
		    size_t *n_env)
{
	const char *key;
	json_t *val;
	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping of NAME: value", json_is_object(v)) < 0)
		return -1;
	json_object_foreach (v, key, val) {
		field_at(r, prefix, key, 0);
		if (!env_name_valid(key))
			return field_fail(r, "%s",
				    "expected an environment variable name like [A-Za-z_][A-Za-z0-9_]*");
		if (json_is_object(val) || json_is_array(val) || json_is_null(val))
			return field_fail(r, "expected a string value, got %s", field_type_name(val));
		if (json_is_string(val)) {
			const char *s;
			if (field_get_string(r, val, &s) < 0)
				return -1;
		}
		char *text = template_value_text(val);
		if (!text)
			return field_oom(r);
		int rc = env_list_set(env, n_env, key, text, r->err);
		free(text);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int read_resources(struct field_reader *r, json_t *v, const char *prefix,
			  struct dag_resources *res)
{
	const char *key;
	json_t *val;
	long long x;
	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping {memory, vcores, gpus}", json_is_object(v)) < 0)
		return -1;
	if (field_check_keys(r, v, prefix, resource_keys) < 0)
		return -1;
	json_object_foreach (v, key, val) {
		field_at(r, prefix, key, 0);
		if (!strcmp(key, "memory")) {
			if (json_is_integer(val)) {
				if (field_get_int(r, val, 1, (long long)JOB_SPEC_MAX_MEMORY_MB, &x) < 0)
					return -1;
				res->memory_mb = (uint64_t)x;
			} else {
				const char *s;
				struct weir_error e;
				if (field_get_string(r, val, &s) < 0)
					return -1;
				if (parse_memory_mb(s, r->path, &res->memory_mb, &e) < 0)
					return weir_error_set(r->err, WEIR_E_INVALID, "%s", e.msg);
				if (res->memory_mb == 0 || res->memory_mb > JOB_SPEC_MAX_MEMORY_MB)
					return field_fail(r, "expected a memory amount from 1m to 16t, got \"%s\"",
						    s);
			}
		} else if (!strcmp(key, "vcores")) {
			if (field_get_int(r, val, 1, JOB_SPEC_MAX_VCORES, &x) < 0)
				return -1;
			res->vcores = (int)x;
		} else {
			if (field_get_int(r, val, 0, JOB_SPEC_MAX_GPUS, &x) < 0)
				return -1;
			res->gpus = (int)x;
		}
	}
	return 0;
}

/* The keys a task and default_args share.  1 if `key` was one of them. */
static int read_shared_arg(struct field_reader *r, const char *key, json_t *val, int *retries,
			   int64_t *retry_delay, int *exp_backoff, int64_t *max_delay,
			   int64_t *timeout, char **pool, bool *pool_set, int *priority,
			   bool *priority_set)
{
	long long x;
	bool b;
	if (!strcmp(key, "retries")) {
		if (field_get_int(r, val, 0, DAG_MAX_RETRIES, &x) < 0)
			return -1;
		*retries = (int)x;
	} else if (!strcmp(key, "retry_delay")) {
		if (field_read_duration(r, val, retry_delay) < 0)
			return -1;
	} else if (!strcmp(key, "retry_exponential_backoff")) {
		if (field_get_bool(r, val, &b) < 0)
			return -1;
		*exp_backoff = b;
	} else if (!strcmp(key, "max_retry_delay")) {
		if (field_read_duration(r, val, max_delay) < 0)
			return -1;
	} else if (!strcmp(key, "execution_timeout")) {
		if (field_read_duration(r, val, timeout) < 0)
			return -1;
	} else if (!strcmp(key, "pool")) {
		*pool_set = true;
		if (json_is_null(val))
			return field_set_string(r, pool, NULL) < 0 ? -1 : 1;
		const char *s;
		if (field_get_string(r, val, &s) < 0)
			return -1;
		if (!id_valid(s, true))
			return field_fail(r, "expected a pool name of [A-Za-z0-9_.-], got \"%s\"", s);
		if (field_set_string(r, pool, s) < 0)
			return -1;
	} else if (!strcmp(key, "priority")) {
		if (field_get_int(r, val, -JOB_SPEC_MAX_PRIORITY, JOB_SPEC_MAX_PRIORITY, &x) < 0)
			return -1;
		*priority = (int)x;
		*priority_set = true;
	} else {
		return 0;
	}
	return 1;
}

/* A queue name (as a job's `queue:`), into *out. */
static int read_queue(struct field_reader *r, json_t *val, char **out)
{
	const char *s;
	if (field_get_string(r, val, &s) < 0)
		return -1;
	if (!id_valid(s, true) || strlen(s) > 64)
		return field_fail(r, "expected a queue name of [A-Za-z0-9_.-] (at most 64), got \"%s\"",
				  s);
	return field_set_string(r, out, s);
}

/* A task's `slurm:`, checked as a job spec would check it. */
static int read_task_slurm(struct field_reader *r, json_t *val, json_t **out)
{
	struct weir_error e = {0};
	json_t *probe = json_pack("{s:{s:{s:s}}, s:O}", "roles", "t", "command", "true", "slurm",
				  val);
	struct job_spec *spec = probe ? job_spec_from_json(probe, &e) : NULL;

	json_decref(probe);
	if (!spec)
		return e.msg[0] ? field_fail(r, "%s", e.msg) : field_oom(r);
	job_spec_destroy(spec);
	json_decref(*out);
	*out = json_incref(val);
	return 0;
}

static int read_default_args(struct field_reader *r, json_t *v, struct dag_default_args *d)
{
	const char *key;
	json_t *val;
	snprintf(r->path, sizeof r->path, "default_args");
	if (field_need_type(r, v, "a mapping", json_is_object(v)) < 0)
		return -1;
	if (field_check_keys(r, v, "default_args", default_arg_keys) < 0)
		return -1;
	json_object_foreach (v, key, val) {
		bool pool_set = false;
		field_at(r, "default_args", key, 0);
		if (!strcmp(key, "resources")) {
			if (read_resources(r, val, "default_args.resources", &d->resources) < 0)
				return -1;
			continue;
		}
		if (!strcmp(key, "queue")) {
			if (read_queue(r, val, &d->queue) < 0)
				return -1;
			continue;
		}
		if (read_shared_arg(r, key, val, &d->retries, &d->retry_delay_s,
				    &d->retry_exponential_backoff, &d->max_retry_delay_s,
				    &d->execution_timeout_s, &d->pool, &pool_set, &d->priority,
				    &d->priority_set) < 0)
			return -1;
	}
	return 0;
}

/* ---- jobs --------------------------------------------------------------- */

/* Relative paths of an inline job spec are relative to the DAG file. */
static int resolve_job_paths(struct field_reader *r, json_t *job)
{
	json_t *v = json_object_get(job, "src_dir");
	if (r->base_dir && json_is_string(v) && json_string_value(v)[0] != '/' &&
	    json_string_value(v)[0]) {
		char *p = resolve(r->base_dir, json_string_value(v));
		if (!p || json_object_set_new(job, "src_dir", json_string(p)) < 0) {
			free(p);
			return field_oom(r);
		}
		free(p);
	}
	json_t *arts = json_object_get(job, "artifacts");
	size_t i;
	json_t *a;
	json_array_foreach (arts, i, a) {
		json_t *holder = json_is_object(a) ? a : NULL;
		json_t *pv = holder ? json_object_get(a, "path") : a;
		if (!r->base_dir || !json_is_string(pv) || !json_string_value(pv)[0] ||
		    json_string_value(pv)[0] == '/')
			continue;
		char *p = resolve(r->base_dir, json_string_value(pv));
		int rc = p ? 0 : -1;
		if (p && holder)
			rc = json_object_set_new(holder, "path", json_string(p));
		else if (p)
			rc = json_array_set_new(arts, i, json_string(p));
		free(p);
		if (rc < 0)
			return field_oom(r);
	}
	return 0;
}

static int read_inline_job(struct field_reader *r, struct dag_task *t, json_t *v, const char *prefix)
{
	json_t *copy = json_deep_copy(v);
	struct weir_error e;
	if (!copy)
		return field_oom(r);
	if (resolve_job_paths(r, copy) < 0) {
		json_decref(copy);
		return -1;
	}
	t->job = job_spec_from_json(copy, &e);
	json_decref(copy);
	if (t->job)
		return 0;
	if (e.kind != WEIR_E_INVALID)
		return weir_error_set(r->err, e.kind, "%s: %s", prefix, e.msg);
	/* "roles.worker.memory: expected ..." -> under tasks[i].job */
	const char *colon = strstr(e.msg, ": ");
	if (colon && strncmp(e.msg, "spec: ", 6) != 0) {
		snprintf(r->path, sizeof r->path, "%s.%.*s", prefix, (int)(colon - e.msg), e.msg);
		return weir_error_set(r->err, WEIR_E_INVALID, "%s.%s", prefix, e.msg);
	}
	snprintf(r->path, sizeof r->path, "%s", prefix);
	return weir_error_set(r->err, WEIR_E_INVALID, "%s: %s", prefix,
			      colon && !strncmp(e.msg, "spec: ", 6) ? e.msg + 6 : e.msg);
}

/* TonY's submit flags as data: "K=V" lists from a list or a mapping. */
static int read_kv_list(struct field_reader *r, json_t *v, json_t **out)
{
	json_t *list = json_array();
	const char *key;
	json_t *val;
	size_t i;
	char base[FIELD_PATH_MAX];
	snprintf(base, sizeof base, "%s", r->path);
	if (!list)
		return field_oom(r);
	if (json_is_object(v)) {
		json_object_foreach (v, key, val) {
			field_at(r, base, key, 0);
			if (json_is_object(val) || json_is_array(val) || json_is_null(val)) {
				json_decref(list);
				return field_fail(r, "expected a string value, got %s", field_type_name(val));
			}
			char *text = template_value_text(val);
			char *kv = NULL;
			if (text && asprintf(&kv, "%s=%s", key, text) < 0)
				kv = NULL;
			free(text);
			if (!kv || json_array_append_new(list, json_string(kv)) < 0) {
				free(kv);
				json_decref(list);
				return field_oom(r);
			}
			free(kv);
		}
	} else if (json_is_array(v)) {
		json_array_foreach (v, i, val) {
			const char *s;
			field_at(r, base, NULL, i);
			if (field_get_string(r, val, &s) < 0) {
				json_decref(list);
				return -1;
			}
			if (!strchr(s, '=') || s[0] == '=') {
				json_decref(list);
				return field_fail(r, "expected NAME=value, got \"%s\"", s);
			}
			if (json_array_append(list, val) < 0) {
				json_decref(list);
				return field_oom(r);
			}
		}
	} else {
		json_decref(list);
		return field_need_type(r, v, "a mapping or a list of NAME=value", false);
	}
	*out = list;
	return 0;
}

static int read_tony(struct field_reader *r, struct dag_task *t, json_t *v, const char *prefix)
{
	const char *key;
	json_t *val;
	if (field_check_keys(r, v, prefix, tony_keys) < 0)
		return -1;
	t->tony = json_object();
	if (!t->tony)
		return field_oom(r);
	json_object_foreach (v, key, val) {
		json_t *out = NULL;
		field_at(r, prefix, key, 0);
		if (!strcmp(key, "shell_env") || !strcmp(key, "container_env") ||
		    !strcmp(key, "conf")) {
			if (read_kv_list(r, val, &out) < 0)
				return -1;
		} else if (!strcmp(key, "conf_file") || !strcmp(key, "python_venv") ||
			   !strcmp(key, "src_dir")) {
			char *p = NULL;
			if (json_is_null(val))
				return field_need_type(r, val, "a path", false);
			if (field_read_path(r, val, &p) < 0)
				return -1;
			out = json_string(p);
			free(p);
		} else {
			const char *s;
			if (field_get_string(r, val, &s) < 0)
				return -1;
			out = json_string(s);
		}
		if (!out || json_object_set_new(t->tony, key, out) < 0)
			return field_oom(r);
	}
	if (!json_object_get(t->tony, "conf_file")) {
		snprintf(r->path, sizeof r->path, "%s", prefix);
		return field_fail(r, "%s", "expected conf_file (the tony.xml) in a TonY job");
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static int read_job(struct field_reader *r, struct dag_task *t, json_t *v, const char *prefix)
{
	if (json_is_string(v)) {
		char *p = NULL;
		if (field_read_path(r, v, &p) < 0)
			return -1;
		if (ends_with(p, ".xml")) {
			t->kind = DAG_TASK_JOB_TONY;
			t->tony = json_pack("{s:s}", "conf_file", p);
			free(p);
			return t->tony ? 0 : field_oom(r);
		}
		t->kind = DAG_TASK_JOB_FILE;
		t->job_path = p;
		return 0;
	}
	if (field_need_type(r, v,
		      "an inline job spec (a mapping with roles), the path of a spec file, or "
		      "{conf_file: tony.xml, executes, ...}",
		      json_is_object(v)) < 0)
		return -1;
	if (json_object_get(v, "conf_file")) {
		t->kind = DAG_TASK_JOB_TONY;
		return read_tony(r, t, v, prefix);
	}
	t->kind = DAG_TASK_JOB;
	return read_inline_job(r, t, v, prefix);
}

/* ---- tasks -------------------------------------------------------------- */

struct task_given {
	bool resources;
	bool pool;
	bool priority;
	int retries;
	int exp_backoff;
	int64_t retry_delay, max_delay, timeout;
};

static int read_foreach(struct field_reader *r, struct dag_task *t, json_t *v)
{
	if (json_is_array(v)) {
		size_t i;
		json_t *item;
		char base[FIELD_PATH_MAX];
		snprintf(base, sizeof base, "%s", r->path);
		json_array_foreach (v, i, item) {
			if (json_is_array(item) || json_is_object(item) || json_is_null(item)) {
				field_at(r, base, NULL, i);
				return field_fail(r, "expected a string or a number, got %s",
					    field_type_name(item));
			}
		}
		t->foreach_list = json_incref(v);
		return 0;
	}
	const char *s;
	if (json_is_string(v) && field_get_string(r, v, &s) == 0) {
		const char *p = s;
		while (*p == ' ')
			p++;
		if (!strncmp(p, "{{", 2)) {
			p += 2;
			while (*p == ' ')
				p++;
			if (!strncmp(p, "params.", 7)) {
				p += 7;
				const char *e = p;
				while (isalnum((unsigned char)*e) || *e == '_')
					e++;
				const char *q = e;
				while (*q == ' ')
					q++;
				if (e > p && !strncmp(q, "}}", 2)) {
					q += 2;
					while (*q == ' ')
						q++;
					if (!*q) {
						t->foreach_param = strndup(p, (size_t)(e - p));
						return t->foreach_param ? 0 : field_oom(r);
					}
				}
			}
		}
	}
	return field_fail(r, "%s", "expected a list of items or \"{{ params.NAME }}\" naming a list param");
}

static int read_task(struct field_reader *r, struct dag_spec *dag, size_t idx, json_t *v,
		     struct task_given *given)
{
	char prefix[64];
	const char *key;
	json_t *val;
	struct dag_task *t = &dag->tasks[idx];
	json_t *command = NULL, *job = NULL, *env = NULL, *cwd = NULL;

	snprintf(prefix, sizeof prefix, "tasks[%zu]", idx);
	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping with task_id and command or job", json_is_object(v)) < 0)
		return -1;
	if (field_check_keys(r, v, prefix, task_keys) < 0)
		return -1;
	given->retries = -1;
	given->exp_backoff = -1;
	given->retry_delay = given->max_delay = given->timeout = -1;
	t->resources.gpus = -1;

	json_object_foreach (v, key, val) {
		field_at(r, prefix, key, 0);
		if (!strcmp(key, "task_id")) {
			const char *s;
			if (field_get_string(r, val, &s) < 0)
				return -1;
			if (!id_valid(s, false))
				return field_fail(r,
					    "expected a task id of letters, digits, '_' and '-' (at "
					    "most 250), got \"%s\"",
					    s);
			if (field_set_string(r, &t->task_id, s) < 0)
				return -1;
		} else if (!strcmp(key, "depends_on")) {
			size_t i;
			json_t *d;
			if (json_is_string(val)) { /* one name: a list of one */
				if (strvec_push(&t->depends_on, json_string_value(val)) < 0)
					return field_oom(r);
				continue;
			}
			if (field_need_type(r, val, "a list of task ids", json_is_array(val)) < 0)
				return -1;
			json_array_foreach (val, i, d) {
				const char *s;
				char base[64];
				snprintf(base, sizeof base, "%s.depends_on", prefix);
				field_at(r, base, NULL, i);
				if (field_get_string(r, d, &s) < 0)
					return -1;
				for (size_t j = 0; j < t->depends_on.n; j++)
					if (!strcmp(t->depends_on.v[j], s))
						return field_fail(r, "\"%s\" is listed twice", s);
				if (strvec_push(&t->depends_on, s) < 0)
					return field_oom(r);
			}
		} else if (!strcmp(key, "trigger_rule")) {
			const char *s;
			if (field_get_string(r, val, &s) < 0)
				return -1;
			if (trigger_rule_from_name(s, &t->trigger_rule) < 0)
				return field_fail(r,
					    "expected all_success, all_done, all_failed, "
					    "one_success, one_failed, none_failed, none_skipped or "
					    "always, got \"%s\"",
					    s);
		} else if (!strcmp(key, "command")) {
			command = val;
			const char *s;
			if (field_get_string(r, val, &s) < 0)
				return -1;
			if (!*s)
				return field_fail(r, "%s", "expected a shell command, got an empty string");
			if (field_set_string(r, &t->command, s) < 0)
				return -1;
		} else if (!strcmp(key, "env")) {
			env = val;
			char base[64];
			snprintf(base, sizeof base, "%s.env", prefix);
			if (read_env(r, val, base, &t->env, &t->n_env) < 0)
				return -1;
		} else if (!strcmp(key, "cwd")) {
			cwd = val;
			if (field_read_path(r, val, &t->cwd) < 0)
				return -1;
		} else if (!strcmp(key, "job")) {
			job = val;
		} else if (!strcmp(key, "resources")) {
			char base[64];
			snprintf(base, sizeof base, "%s.resources", prefix);
			given->resources = true;
			t->resources.gpus = -1;
			if (read_resources(r, val, base, &t->resources) < 0)
				return -1;
		} else if (!strcmp(key, "foreach")) {
			if (read_foreach(r, t, val) < 0)
				return -1;
		} else if (!strcmp(key, "queue")) {
			if (read_queue(r, val, &t->queue) < 0)
				return -1;
			snprintf(t->queue_at, sizeof t->queue_at, "%s.queue", prefix);
		} else if (!strcmp(key, "slurm")) {
			if (read_task_slurm(r, val, &t->slurm) < 0)
				return -1;
		} else {
			bool prio_set = false;
			int rc = read_shared_arg(r, key, val, &given->retries, &given->retry_delay,
						 &given->exp_backoff, &given->max_delay,
						 &given->timeout, &t->pool, &given->pool, &t->priority,
						 &prio_set);
			if (rc < 0)
				return -1;
			given->priority |= prio_set;
		}
	}
	if (!t->task_id) {
		snprintf(r->path, sizeof r->path, "%s", prefix);
		return field_fail(r, "%s", "expected a task_id");
	}
	if (!command == !job) {
		snprintf(r->path, sizeof r->path, "%s", prefix);
		return field_fail(r, "%s",
			    command ? "expected exactly one of command and job, got both"
				    : "expected exactly one of command (a shell command) and job "
				      "(a job spec, its path, or a tony.xml)");
	}
	if (job) {
		if (env || cwd) {
			field_at(r, prefix, env ? "env" : "cwd", 0);
			return field_fail(r, "%s",
				    "env and cwd go with command; a job task sets them in its spec");
		}
		if (given->resources) {
			field_at(r, prefix, "resources", 0);
			return field_fail(r, "%s",
				    "a job task has the resources of its roles; resources go with "
				    "command");
		}
		char base[64];
		snprintf(base, sizeof base, "%s.job", prefix);
		field_at(r, prefix, "job", 0);
		if (read_job(r, t, job, base) < 0)
			return -1;
	}
	return 0;
}

/* default_args, then the task's own keys, then weir's defaults. */
static int resolve_defaults(struct field_reader *r, struct dag_spec *dag, struct dag_task *t,
			    const struct task_given *g)
{
	const struct dag_default_args *d = &dag->default_args;
	t->retries = g->retries >= 0 ? g->retries : d->retries >= 0 ? d->retries : 0;
	t->retry_delay_s = g->retry_delay >= 0     ? g->retry_delay
			   : d->retry_delay_s >= 0 ? d->retry_delay_s
						   : DAG_DEFAULT_RETRY_DELAY_S;
	t->retry_exponential_backoff = g->exp_backoff >= 0 ? g->exp_backoff
							   : d->retry_exponential_backoff > 0;
	t->max_retry_delay_s = g->max_delay >= 0	 ? g->max_delay
			       : d->max_retry_delay_s >= 0 ? d->max_retry_delay_s
							   : 0;
	t->execution_timeout_s = g->timeout >= 0	   ? g->timeout
				 : d->execution_timeout_s >= 0 ? d->execution_timeout_s
							       : 0;
	if (!g->pool && d->pool && field_set_string(r, &t->pool, d->pool) < 0)
		return -1;
	if (!t->queue && d->queue) {
		if (field_set_string(r, &t->queue, d->queue) < 0)
			return -1;
		snprintf(t->queue_at, sizeof t->queue_at, "default_args.queue");
	}
	if (!g->priority && d->priority_set)
		t->priority = d->priority;
	if (t->kind == DAG_TASK_COMMAND) {
		struct dag_resources *res = &t->resources;
		if (res->memory_mb == 0)
			res->memory_mb = d->resources.memory_mb ? d->resources.memory_mb
								: JOB_SPEC_DEFAULT_MEMORY_MB;
		if (res->vcores == 0)
			res->vcores = d->resources.vcores ? d->resources.vcores : 1;
		if (res->gpus < 0)
			res->gpus = d->resources.gpus >= 0 ? d->resources.gpus : 0;
	} else {
		t->resources.memory_mb = 0;
		t->resources.vcores = 0;
		t->resources.gpus = 0;
	}
	return 0;
}

/* ---- graph -------------------------------------------------------------- */

static int link_tasks(struct field_reader *r, struct dag_spec *dag)
{
	for (size_t i = 0; i < dag->n_tasks; i++) {
		struct dag_task *t = &dag->tasks[i];
		for (size_t j = 0; j < i; j++)
			if (!strcmp(dag->tasks[j].task_id, t->task_id)) {
				snprintf(r->path, sizeof r->path, "tasks[%zu].task_id", i);
				char msg[400];
				snprintf(msg, sizeof msg,
					 "\"%s\" is already the id of tasks[%zu]; expected unique "
					 "task ids",
					 t->task_id, j);
				return field_fail(r, "%s", msg);
			}
	}
	for (size_t i = 0; i < dag->n_tasks; i++) {
		struct dag_task *t = &dag->tasks[i];
		if (t->depends_on.n == 0)
			continue;
		t->upstream = calloc(t->depends_on.n, sizeof *t->upstream);
		if (!t->upstream)
			return field_oom(r);
		for (size_t k = 0; k < t->depends_on.n; k++) {
			long u = dag_spec_task_index(dag, t->depends_on.v[k]);
			if (u < 0) {
				snprintf(r->path, sizeof r->path, "tasks[%zu].depends_on[%zu]", i, k);
				return field_fail(r, "\"%s\" is not a task of this DAG", t->depends_on.v[k]);
			}
			t->upstream[t->n_upstream++] = (size_t)u;
		}
	}
	return 0;
}

/* Kahn's algorithm (ready tasks in file order first); on a cycle, walks it
 * to name it. */
static int order_tasks(struct field_reader *r, struct dag_spec *dag)
{
	size_t n = dag->n_tasks, edges = 0;
	for (size_t i = 0; i < n; i++)
		edges += dag->tasks[i].n_upstream;
	size_t *pending = calloc(n, sizeof *pending); /* upstream not yet placed */
	size_t *first = calloc(n + 1, sizeof *first);  /* downstream of i: down[first[i]..] */
	size_t *down = calloc(edges + 1, sizeof *down);
	size_t *fill = calloc(n + 1, sizeof *fill);
	bool *placed = calloc(n, sizeof *placed);
	size_t *walk = NULL;
	int rc = -1;
	dag->topo = calloc(n, sizeof *dag->topo);
	if (!pending || !first || !down || !fill || !placed || !dag->topo) {
		field_oom(r);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < dag->tasks[i].n_upstream; k++)
			first[dag->tasks[i].upstream[k] + 1]++;
	for (size_t i = 0; i < n; i++)
		first[i + 1] += first[i];
	for (size_t i = 0; i < n; i++) {
		pending[i] = dag->tasks[i].n_upstream;
		for (size_t k = 0; k < dag->tasks[i].n_upstream; k++) {
			size_t u = dag->tasks[i].upstream[k];
			down[first[u] + fill[u]++] = i;
		}
	}
	/* topo doubles as the queue: [head, done) are placed, not yet expanded */
	size_t done = 0;
	for (size_t i = 0; i < n; i++)
		if (pending[i] == 0) {
			placed[i] = true;
			dag->topo[done++] = i;
		}
	for (size_t head = 0; head < done; head++) {
		size_t u = dag->topo[head];
		for (size_t k = first[u]; k < first[u + 1]; k++)
			if (--pending[down[k]] == 0) {
				placed[down[k]] = true;
				dag->topo[done++] = down[k];
			}
	}
	if (done == n) {
		rc = 0;
		goto out;
	}
	/* Every task left has an upstream task left: follow them until one repeats. */
	walk = calloc(n + 1, sizeof *walk);
	bool *on_walk = calloc(n, sizeof *on_walk);
	if (!walk || !on_walk) {
		free(on_walk);
		field_oom(r);
		goto out;
	}
	size_t cur = 0;
	while (placed[cur])
		cur++;
	size_t len = 0;
	while (!on_walk[cur]) {
		on_walk[cur] = true;
		walk[len++] = cur;
		const struct dag_task *t = &dag->tasks[cur];
		for (size_t k = 0; k < t->n_upstream; k++)
			if (!placed[t->upstream[k]]) {
				cur = t->upstream[k];
				break;
			}
	}
	free(on_walk);
	size_t seen_at = 0;
	while (walk[seen_at] != cur)
		seen_at++;
	char msg[700] = "";
	for (size_t k = seen_at; k < len; k++) {
		str_append(msg, sizeof msg, dag->tasks[walk[k]].task_id);
		str_append(msg, sizeof msg, " -> ");
	}
	str_append(msg, sizeof msg, dag->tasks[cur].task_id);
	snprintf(r->path, sizeof r->path, "tasks[%zu].depends_on", cur);
	char full[800];
	snprintf(full, sizeof full,
		 "a dependency cycle: %s (each depends on the next); expected a DAG", msg);
	field_fail(r, "%s", full);
out:
	free(pending);
	free(first);
	free(down);
	free(fill);
	free(placed);
	free(walk);
	return rc;
}

/* The variables a task's templates may use: the standard ones, params,
 * item for foreach tasks, outputs of upstream tasks (not foreach ones:
 * several instances have no single output). */
static int known_names(const struct dag_spec *dag, size_t idx, struct strvec *known)
{
	const char *key;
	json_t *v;
	if (template_known_standard(known) < 0)
		return -1;
	json_object_foreach (dag->params, key, v)
		if (strvec_pushf(known, "params.%s", key) < 0)
			return -1;
	if ((dag->tasks[idx].foreach_list || dag->tasks[idx].foreach_param) &&
	    strvec_push(known, "item") < 0)
		return -1;
	bool *seen = calloc(dag->n_tasks, sizeof *seen);
	size_t *stack = calloc(dag->n_tasks + 1, sizeof *stack);
	int rc = -1;
	if (!seen || !stack)
		goto out;
	size_t sp = 0;
	stack[sp++] = idx;
	while (sp > 0) {
		const struct dag_task *t = &dag->tasks[stack[--sp]];
		for (size_t k = 0; k < t->n_upstream; k++) {
			size_t u = t->upstream[k];
			if (seen[u])
				continue;
			seen[u] = true;
			stack[sp++] = u;
			const struct dag_task *ut = &dag->tasks[u];
			if (!ut->foreach_list && !ut->foreach_param &&
			    strvec_pushf(known, "outputs.%s.*", ut->task_id) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(seen);
	free(stack);
	return rc;
}

static int check_template(struct field_reader *r, const char *text, const struct strvec *known,
			  enum template_mode mode)
{
	struct weir_error e;
	if (!text || template_check(text, known, mode, &e) == 0)
		return 0;
	if (e.kind != WEIR_E_INVALID)
		return weir_error_set(r->err, e.kind, "%s", e.msg);
	return field_fail(r, "%s", e.msg);
}

static bool has_braces(const char *s)
{
	return s && strstr(s, "{{");
}

static bool task_has_templates(const struct dag_task *t)
{
	if (has_braces(t->command) || has_braces(t->cwd))
		return true;
	for (size_t k = 0; k < t->n_env; k++)
		if (has_braces(t->env[k].value))
			return true;
	if (t->job) {
		if (has_braces(t->job->params))
			return true;
		for (size_t k = 0; k < t->job->n_roles; k++)
			if (has_braces(t->job->roles[k].command))
				return true;
	}
	return t->tony && (has_braces(json_string_value(json_object_get(t->tony, "executes"))) ||
			   has_braces(json_string_value(json_object_get(t->tony, "task_params"))));
}

static int check_templates(struct field_reader *r, struct dag_spec *dag)
{
	for (size_t i = 0; i < dag->n_tasks; i++) {
		struct dag_task *t = &dag->tasks[i];
		struct strvec known = STRVEC_INIT;
		char prefix[64];
		int rc = -1;
		snprintf(prefix, sizeof prefix, "tasks[%zu]", i);
		if (!task_has_templates(t)) {
			rc = 0;
			goto foreach;
		}
		if (known_names(dag, i, &known) < 0) {
			field_oom(r);
			goto next;
		}
		field_at(r, prefix, "command", 0);
		if (check_template(r, t->command, &known, TEMPLATE_SHELL) < 0)
			goto next;
		field_at(r, prefix, "cwd", 0);
		if (check_template(r, t->cwd, &known, TEMPLATE_RAW) < 0)
			goto next;
		for (size_t k = 0; k < t->n_env; k++) {
			char base[64];
			snprintf(base, sizeof base, "%s.env", prefix);
			field_at(r, base, t->env[k].name, 0);
			if (check_template(r, t->env[k].value, &known, TEMPLATE_RAW) < 0)
				goto next;
		}
		if (t->job) {
			char base[64];
			snprintf(base, sizeof base, "%s.job", prefix);
			field_at(r, base, "params", 0);
			if (check_template(r, t->job->params, &known, TEMPLATE_SHELL) < 0)
				goto next;
			for (size_t k = 0; k < t->job->n_roles; k++) {
				char rb[160];
				snprintf(rb, sizeof rb, "%s.roles.%s", base, t->job->roles[k].name);
				field_at(r, rb, "command", 0);
				if (check_template(r, t->job->roles[k].command, &known,
						   TEMPLATE_SHELL) < 0)
					goto next;
			}
		}
		if (t->tony) {
			char base[64];
			snprintf(base, sizeof base, "%s.job", prefix);
			field_at(r, base, "executes", 0);
			if (check_template(r, json_string_value(json_object_get(t->tony, "executes")),
					   &known, TEMPLATE_SHELL) < 0)
				goto next;
			field_at(r, base, "task_params", 0);
			if (check_template(r,
					   json_string_value(json_object_get(t->tony, "task_params")),
					   &known, TEMPLATE_SHELL) < 0)
				goto next;
		}
foreach:
		if (t->foreach_param) {
			rc = -1;
			json_t *p = json_object_get(dag->params, t->foreach_param);
			field_at(r, prefix, "foreach", 0);
			if (!p) {
				rc = field_fail(r, "\"%s\" is not in params", t->foreach_param);
				goto next;
			}
			if (!json_is_array(p)) {
				rc = field_fail(r, "params.%s: expected a list to fan out over",
					  t->foreach_param);
				goto next;
			}
		}
		rc = 0;
next:
		strvec_release(&known);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- the DAG ------------------------------------------------------------ */

static int read_time(struct field_reader *r, json_t *v, int64_t *out)
{
	if (json_is_null(v)) {
		*out = CRON_NEVER;
		return 0;
	}
	if (json_is_integer(v)) {
		long long x;
		if (field_get_int(r, v, 0, 253402300799LL, &x) < 0)
			return -1;
		*out = x * 1000;
		return 0;
	}
	const char *s;
	if (field_need_type(r, v, "a date like 2024-01-31 or 2024-01-31T06:00:00Z",
		      json_is_string(v)) < 0 ||
	    field_get_string(r, v, &s) < 0)
		return -1;
	struct weir_error e;
	if (schedule_parse_time(s, r->path, out, &e) < 0)
		return weir_error_set(r->err, WEIR_E_INVALID, "%s", e.msg);
	return 0;
}

static int read_params(struct field_reader *r, struct dag_spec *dag, json_t *v)
{
	const char *key;
	json_t *val;
	if (field_need_type(r, v, "a mapping of NAME: default value", json_is_object(v)) < 0)
		return -1;
	json_object_foreach (v, key, val) {
		field_at(r, "params", key, 0);
		if (!ident_valid(key))
			return field_fail(r, "%s",
				    "expected a param name like [A-Za-z_][A-Za-z0-9_]* (it becomes "
				    "WEIR_PARAM_<NAME>)");
	}
	json_decref(dag->params);
	dag->params = json_deep_copy(v);
	return dag->params ? 0 : field_oom(r);
}

static int read_dag_field(struct field_reader *r, struct dag_spec *dag, const char *key, json_t *val,
			  json_t **tasks)
{
	long long x;
	field_at(r, "", key, 0);
	if (!strcmp(key, "dag_id")) {
		const char *s;
		if (field_get_string(r, val, &s) < 0)
			return -1;
		if (!id_valid(s, true))
			return field_fail(r,
				    "expected an id of letters, digits, '_', '.' and '-' (at most "
				    "250), got \"%s\"",
				    s);
		return field_set_string(r, &dag->dag_id, s);
	}
	if (!strcmp(key, "description"))
		return field_dup_string(r, val, &dag->description);
	if (!strcmp(key, "schedule")) {
		const char *s = NULL;
		struct weir_error e;
		if (!json_is_null(val) && field_get_string(r, val, &s) < 0)
			return -1;
		if (cron_parse(s, &dag->schedule, &e) < 0)
			return field_fail(r, "%s", e.msg);
		return 0;
	}
	if (!strcmp(key, "start_date"))
		return read_time(r, val, &dag->start_date_ms);
	if (!strcmp(key, "end_date"))
		return read_time(r, val, &dag->end_date_ms);
	if (!strcmp(key, "catchup"))
		return field_get_bool(r, val, &dag->catchup);
	if (!strcmp(key, "max_active_runs") || !strcmp(key, "max_active_tasks")) {
		if (field_get_int(r, val, 1, 10000, &x) < 0)
			return -1;
		*(key[11] == 'r' ? &dag->max_active_runs : &dag->max_active_tasks) = (int)x;
		return 0;
	}
	if (!strcmp(key, "params"))
		return read_params(r, dag, val);
	if (!strcmp(key, "tags")) {
		size_t i;
		json_t *tag;
		if (field_need_type(r, val, "a list of strings", json_is_array(val)) < 0)
			return -1;
		json_array_foreach (val, i, tag) {
			const char *s;
			field_at(r, "tags", NULL, i);
			if (field_get_string(r, tag, &s) < 0)
				return -1;
			if (strvec_push(&dag->tags, s) < 0)
				return field_oom(r);
		}
		return 0;
	}
	if (!strcmp(key, "default_args"))
		return read_default_args(r, val, &dag->default_args);
	/* tasks: read once everything else is known */
	if (field_need_type(r, val, "a list of tasks", json_is_array(val)) < 0)
		return -1;
	*tasks = val;
	return 0;
}

static struct dag_spec *dag_create(void)
{
	struct dag_spec *dag = calloc(1, sizeof *dag);
	if (!dag)
		return NULL;
	dag->start_date_ms = CRON_NEVER;
	dag->end_date_ms = CRON_NEVER;
	dag->max_active_runs = DAG_DEFAULT_ACTIVE_RUNS;
	dag->max_active_tasks = DAG_DEFAULT_ACTIVE_TASKS;
	dag->params = json_object();
	cron_parse(NULL, &dag->schedule, NULL); /* no schedule: "none" */
	struct dag_default_args *d = &dag->default_args;
	d->retries = -1;
	d->retry_delay_s = d->max_retry_delay_s = d->execution_timeout_s = -1;
	d->retry_exponential_backoff = -1;
	d->resources.gpus = -1;
	if (!dag->params) {
		free(dag);
		return NULL;
	}
	return dag;
}

static struct dag_spec *read_dag(struct field_reader *r, json_t *json, const char *origin)
{
	struct dag_spec *dag = dag_create();
	struct task_given *given = NULL;
	json_t *tasks = NULL;
	const char *key;
	json_t *val;

	r->path[0] = '\0';
	if (!dag) {
		field_oom(r);
		return NULL;
	}
	if (origin && field_set_string(r, &dag->file, origin) < 0)
		goto fail;
	if (field_need_type(r, json, "a mapping with dag_id and tasks", json_is_object(json)) < 0)
		goto fail;
	if (field_check_keys(r, json, "", dag_keys) < 0)
		goto fail;
	json_object_foreach (json, key, val)
		if (read_dag_field(r, dag, key, val, &tasks) < 0)
			goto fail;
	r->path[0] = '\0';
	if (!dag->dag_id) {
		field_fail(r, "%s", "expected a dag_id");
		goto fail;
	}
	if (!tasks || json_array_size(tasks) == 0) {
		snprintf(r->path, sizeof r->path, "tasks");
		field_fail(r, "%s", "expected a list of at least one task");
		goto fail;
	}
	if (json_array_size(tasks) > DAG_MAX_TASKS) {
		snprintf(r->path, sizeof r->path, "tasks");
		field_fail(r, "expected at most %s tasks", "4096");
		goto fail;
	}
	if (dag->schedule.kind != CRON_NONE && dag->start_date_ms == CRON_NEVER) {
		snprintf(r->path, sizeof r->path, "%s", "schedule");
		field_fail(r, "%s", "a scheduled DAG needs a start_date (add start_date: 2024-01-01)");
		goto fail;
	}
	if (dag->end_date_ms != CRON_NEVER && dag->start_date_ms != CRON_NEVER &&
	    dag->end_date_ms < dag->start_date_ms) {
		snprintf(r->path, sizeof r->path, "%s", "end_date");
		field_fail(r, "%s", "expected a date at or after start_date");
		goto fail;
	}
	size_t n = json_array_size(tasks);
	dag->tasks = calloc(n, sizeof *dag->tasks);
	given = calloc(n, sizeof *given);
	if (!dag->tasks || !given) {
		field_oom(r);
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		dag->n_tasks = i + 1;
		if (read_task(r, dag, i, json_array_get(tasks, i), &given[i]) < 0)
			goto fail;
		if (resolve_defaults(r, dag, &dag->tasks[i], &given[i]) < 0)
			goto fail;
	}
	if (link_tasks(r, dag) < 0 || order_tasks(r, dag) < 0 || check_templates(r, dag) < 0)
		goto fail;
	free(given);
	return dag;
fail:
	free(given);
	dag_spec_destroy(dag);
	return NULL;
}

struct dag_spec *dag_spec_from_json(json_t *json, const char *origin, const char *base_dir,
				    struct weir_error *err)
{
	struct weir_error local;
	struct field_reader r = {.base_dir = base_dir, .subject = "dag", .err = err ? err : &local};
	return read_dag(&r, json, origin);
}

struct dag_spec *dag_spec_parse_string(const char *text, size_t len, const char *origin,
				       const char *base_dir, struct weir_error *err)
{
	struct yaml_lines *lines = NULL;
	struct weir_error local;
	struct field_reader r = {.base_dir = base_dir, .subject = "dag", .err = err ? err : &local};
	if (!origin)
		origin = "<dag>";
	json_t *json = yaml_parse(text, len, origin, &lines, r.err);
	if (!json)
		return NULL;
	struct dag_spec *dag = read_dag(&r, json, origin);
	if (!dag && r.err->kind == WEIR_E_INVALID) {
		int line = yaml_lines_find(lines, r.path);
		if (line > 0)
			weir_error_prefix(r.err, "%s:%d", origin, line);
		else
			weir_error_prefix(r.err, "%s", origin);
	}
	json_decref(json);
	yaml_lines_destroy(lines);
	return dag;
}

int dag_spec_line_of(const char *file, const char *path)
{
	struct yaml_lines *lines = NULL;
	size_t len;
	char *text = fs_read_file(file, &len, NULL);
	json_t *json = text ? yaml_parse(text, len, file, &lines, NULL) : NULL;
	int line = json ? yaml_lines_find(lines, path) : 0;

	json_decref(json);
	yaml_lines_destroy(lines);
	free(text);
	return line > 0 ? line : 0;
}

struct dag_spec *dag_spec_parse_file(const char *path, struct weir_error *err)
{
	size_t len;
	char *text = fs_read_file(path, &len, err);
	struct dag_spec *dag = NULL;

	if (!text)
		return NULL;
	/* Relative paths in the file are relative to the file's folder. */
	char *base = fs_abs_dirname(path);
	if (base)
		dag = dag_spec_parse_string(text, len, path, base, err);
	else
		weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot find the file's folder", path);
	free(text);
	free(base);
	return dag;
}

/* ---- out ---------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *time_json(int64_t ms)
{
	char buf[40];
	return ms == CRON_NEVER ? json_null() : json_string(schedule_format_ts(ms, buf, sizeof buf));
}

static json_t *resources_json(const struct dag_resources *res)
{
	json_t *o = json_object();
	char buf[40];
	if (!o)
		return NULL;
	int rc = 0;
	if (res->memory_mb)
		rc |= json_object_set_new(o, "memory",
					  json_string(format_memory_mb(res->memory_mb, buf, sizeof buf)));
	if (res->vcores)
		rc |= json_object_set_new(o, "vcores", json_integer(res->vcores));
	if (res->gpus >= 0)
		rc |= json_object_set_new(o, "gpus", json_integer(res->gpus));
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *strvec_json(const struct strvec *sv)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < sv->n; i++)
		if (json_array_append_new(a, json_string(sv->v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *task_json(const struct dag_task *t)
{
	json_t *o = json_object();
	int rc = 0;
	if (!o)
		return NULL;
	rc |= json_object_set_new(o, "task_id", json_string(t->task_id));
	rc |= json_object_set_new(o, "depends_on", strvec_json(&t->depends_on));
	rc |= json_object_set_new(o, "trigger_rule", json_string(trigger_rule_name(t->trigger_rule)));
	switch (t->kind) {
	case DAG_TASK_COMMAND: {
		json_t *env = json_object();
		for (size_t i = 0; env && i < t->n_env; i++)
			rc |= json_object_set_new(env, t->env[i].name, json_string(t->env[i].value));
		rc |= json_object_set_new(o, "command", json_string(t->command));
		rc |= json_object_set_new(o, "env", env);
		rc |= json_object_set_new(o, "cwd", str_or_null(t->cwd));
		rc |= json_object_set_new(o, "resources", resources_json(&t->resources));
		break;
	}
	case DAG_TASK_JOB: rc |= json_object_set_new(o, "job", job_spec_to_json(t->job)); break;
	case DAG_TASK_JOB_FILE: rc |= json_object_set_new(o, "job", json_string(t->job_path)); break;
	case DAG_TASK_JOB_TONY: rc |= json_object_set(o, "job", t->tony); break;
	}
	rc |= json_object_set_new(o, "retries", json_integer(t->retries));
	rc |= json_object_set_new(o, "retry_delay", json_integer(t->retry_delay_s));
	rc |= json_object_set_new(o, "retry_exponential_backoff",
				  json_boolean(t->retry_exponential_backoff));
	rc |= json_object_set_new(o, "max_retry_delay", json_integer(t->max_retry_delay_s));
	rc |= json_object_set_new(o, "execution_timeout", json_integer(t->execution_timeout_s));
	rc |= json_object_set_new(o, "pool", str_or_null(t->pool));
	if (t->queue)
		rc |= json_object_set_new(o, "queue", json_string(t->queue));
	if (t->slurm)
		rc |= json_object_set(o, "slurm", t->slurm);
	rc |= json_object_set_new(o, "priority", json_integer(t->priority));
	if (t->foreach_list) {
		rc |= json_object_set(o, "foreach", t->foreach_list);
	} else if (t->foreach_param) {
		char *s = NULL;
		if (asprintf(&s, "{{ params.%s }}", t->foreach_param) < 0)
			s = NULL;
		rc |= json_object_set_new(o, "foreach", s ? json_string(s) : NULL);
		free(s);
	}
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *dag_spec_to_json(const struct dag_spec *dag)
{
	json_t *o = json_object();
	json_t *tasks = json_array();
	json_t *da = json_object();
	const struct dag_default_args *d = &dag->default_args;
	int rc = 0;
	if (!o || !tasks || !da)
		goto fail;
	rc |= json_object_set_new(o, "dag_id", json_string(dag->dag_id));
	rc |= json_object_set_new(o, "description", str_or_null(dag->description));
	rc |= json_object_set_new(o, "schedule", json_string(dag->schedule.text));
	rc |= json_object_set_new(o, "start_date", time_json(dag->start_date_ms));
	rc |= json_object_set_new(o, "end_date", time_json(dag->end_date_ms));
	rc |= json_object_set_new(o, "catchup", json_boolean(dag->catchup));
	rc |= json_object_set_new(o, "max_active_runs", json_integer(dag->max_active_runs));
	rc |= json_object_set_new(o, "max_active_tasks", json_integer(dag->max_active_tasks));
	rc |= json_object_set(o, "params", dag->params);
	rc |= json_object_set_new(o, "tags", strvec_json(&dag->tags));
	if (d->retries >= 0)
		rc |= json_object_set_new(da, "retries", json_integer(d->retries));
	if (d->retry_delay_s >= 0)
		rc |= json_object_set_new(da, "retry_delay", json_integer(d->retry_delay_s));
	if (d->retry_exponential_backoff >= 0)
		rc |= json_object_set_new(da, "retry_exponential_backoff",
					  json_boolean(d->retry_exponential_backoff));
	if (d->max_retry_delay_s >= 0)
		rc |= json_object_set_new(da, "max_retry_delay", json_integer(d->max_retry_delay_s));
	if (d->execution_timeout_s >= 0)
		rc |= json_object_set_new(da, "execution_timeout",
					  json_integer(d->execution_timeout_s));
	if (d->pool)
		rc |= json_object_set_new(da, "pool", json_string(d->pool));
	if (d->queue)
		rc |= json_object_set_new(da, "queue", json_string(d->queue));
	if (d->priority_set)
		rc |= json_object_set_new(da, "priority", json_integer(d->priority));
	if (d->resources.memory_mb || d->resources.vcores || d->resources.gpus >= 0)
		rc |= json_object_set_new(da, "resources", resources_json(&d->resources));
	rc |= json_object_set_new(o, "default_args", da);
	da = NULL;
	for (size_t i = 0; i < dag->n_tasks; i++)
		rc |= json_array_append_new(tasks, task_json(&dag->tasks[i]));
	rc |= json_object_set_new(o, "tasks", tasks);
	tasks = NULL;
	if (rc)
		goto fail;
	return o;
fail:
	json_decref(o);
	json_decref(tasks);
	json_decref(da);
	return NULL;
}

/* ---- the rest ----------------------------------------------------------- */

static void task_release(struct dag_task *t)
{
	free(t->task_id);
	strvec_release(&t->depends_on);
	free(t->upstream);
	free(t->command);
	for (size_t i = 0; i < t->n_env; i++) {
		free(t->env[i].name);
		free(t->env[i].value);
	}
	free(t->env);
	free(t->cwd);
	job_spec_destroy(t->job);
	free(t->job_path);
	json_decref(t->tony);
	free(t->pool);
	free(t->queue);
	json_decref(t->slurm);
	json_decref(t->foreach_list);
	free(t->foreach_param);
}

void dag_spec_destroy(struct dag_spec *dag)
{
	if (!dag)
		return;
	for (size_t i = 0; i < dag->n_tasks; i++)
		task_release(&dag->tasks[i]);
	free(dag->tasks);
	free(dag->topo);
	free(dag->dag_id);
	free(dag->description);
	free(dag->file);
	json_decref(dag->params);
	strvec_release(&dag->tags);
	free(dag->default_args.pool);
	free(dag->default_args.queue);
	free(dag);
}

long dag_spec_task_index(const struct dag_spec *dag, const char *task_id)
{
	for (size_t i = 0; i < dag->n_tasks; i++)
		if (dag->tasks[i].task_id && !strcmp(dag->tasks[i].task_id, task_id))
			return (long)i;
	return -1;
}

const struct dag_task *dag_spec_find_task(const struct dag_spec *dag, const char *task_id)
{
	long i = dag_spec_task_index(dag, task_id);
	return i < 0 ? NULL : &dag->tasks[i];
}

json_t *dag_spec_run_params(const struct dag_spec *dag, const json_t *conf,
			    struct weir_error *err)
{
	if (conf && !json_is_null(conf) && !json_is_object(conf)) {
		weir_error_set(err, WEIR_E_INVALID, "conf: expected a mapping of param: value");
		return NULL;
	}
	json_t *p = json_deep_copy(dag->params);
	if (!p || (conf && json_is_object(conf) && json_object_update(p, (json_t *)conf) < 0)) {
		json_decref(p);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	return p;
}

json_t *dag_task_foreach_items(const struct dag_spec *dag, const struct dag_task *task,
			       const json_t *params, struct weir_error *err)
{
	if (task->foreach_list)
		return json_incref(task->foreach_list);
	if (!task->foreach_param) {
		weir_error_set(err, WEIR_E_INVALID, "task %s: not a foreach task", task->task_id);
		return NULL;
	}
	json_t *v = json_object_get(params ? params : dag->params, task->foreach_param);
	if (!json_is_array(v)) {
		weir_error_set(err, WEIR_E_INVALID,
			       "params.%s: task %s fans out over it; expected a list, got %s",
			       task->foreach_param, task->task_id, v ? field_type_name(v) : "nothing");
		return NULL;
	}
	size_t i;
	json_t *item;
	json_array_foreach (v, i, item)
		if (json_is_array(item) || json_is_object(item) || json_is_null(item)) {
			weir_error_set(err, WEIR_E_INVALID,
				       "params.%s[%zu]: expected a string or a number, got %s",
				       task->foreach_param, i, field_type_name(item));
			return NULL;
		}
	return json_incref(v);
}
