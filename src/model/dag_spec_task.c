/* dag_spec_task.c: reading one task of a DAG file, and default_args: the
 * keys a task may have, readers per group of them (what the task is and
 * what it waits for, what it runs, where and how often it runs, the keys it
 * shares with default_args), its job (inline, a path, or a tony.xml), and
 * its defaults resolved (dag_spec_internal.h). */
#include "model/dag_spec_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fs.h"
#include "model/connection.h"
#include "model/job_spec_edit.h"
#include "model/template.h"
#include "model/variable.h"

static const char *const default_arg_keys[] = {
    "retries",
    "retry_delay",
    "retry_exponential_backoff",
    "max_retry_delay",
    "execution_timeout",
    "pool",
    "pool_slots",
    "priority",
    "resources",
    "queue",
    "depends_on_past",
    "wait_for_downstream",
    "on_failure",
    "on_retry",
    "on_success",
    "on_sla_miss",
    "sla",
    NULL,
};
static const char *const task_keys[] = {
    "task_id",
    "depends_on",
    "trigger_rule",
    "command",
    "env",
    "cwd",
    "job",
    "retries",
    "retry_delay",
    "retry_exponential_backoff",
    "max_retry_delay",
    "execution_timeout",
    "pool",
    "pool_slots",
    "priority",
    "resources",
    "foreach",
    "queue",
    "slurm",
    "sql",
    "transfer",
    "connections",
    "variables",
    "run_outputs",
    "setup",
    "teardown",
    "on_failure_fail_dagrun",
    "branch",
    "short_circuit",
    "depends_on_past",
    "wait_for_downstream",
    "skip_on_exit_code",
    "no_retry_on_exit_code",
    "sensor",
    "outlets",
    "inlets",
    "trigger_dag",
    "on_failure",
    "on_retry",
    "on_success",
    "on_sla_miss",
    "sla",
    "operator",
    "doc_md",
    "marker",
    "max_active_tis_per_dag",
    "max_active_tis_per_dagrun",
    NULL,
};
static const char *const resource_keys[] = {"memory", "vcores", "gpus", NULL};
static const char *const tony_keys[] = {
    "conf_file",          "executes", "task_params", "python_venv",
    "python_binary_path", "src_dir",  "framework",   "shell_env",
    "container_env",      "conf",     NULL,
};

/* ---- reading helpers ---------------------------------------------------- */

bool dag_id_valid(const char *s, bool dots)
{
	if (!*s || strlen(s) > DAG_MAX_ID)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && !(dots && *s == '.'))
			return false;
	return true;
}

bool dag_ident_valid(const char *s)
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
	json_object_foreach(v, key, val)
	{
		field_at(r, prefix, key, 0);
		if (!strcmp(key, "memory")) {
			if (json_is_integer(val)) {
				if (field_get_int(r, val, 1, (long long)JOB_SPEC_MAX_MEMORY_MB,
				                  &x) < 0)
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
					return field_fail(
					    r,
					    "expected a memory amount from 1m to 16t, got \"%s\"",
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
                           int64_t *timeout, char **pool, bool *pool_set, int *pool_slots,
                           int *priority, bool *priority_set)
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
		if (!dag_id_valid(s, true))
			return field_fail(r, "expected a pool name of [A-Za-z0-9_.-], got \"%s\"",
			                  s);
		if (field_set_string(r, pool, s) < 0)
			return -1;
	} else if (!strcmp(key, "pool_slots")) {
		/* Airflow's: the slots of its pool one instance holds while it runs */
		if (field_get_int(r, val, 1, DAG_MAX_POOL_SLOTS, &x) < 0)
			return -1;
		*pool_slots = (int)x;
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
	if (!dag_id_valid(s, true) || strlen(s) > 64)
		return field_fail(
		    r, "expected a queue name of [A-Za-z0-9_.-] (at most 64), got \"%s\"", s);
	return field_set_string(r, out, s);
}

/* A task's `slurm:`, checked as a job spec would check it. */
static int read_task_slurm(struct field_reader *r, json_t *val, json_t **out)
{
	struct weir_error e = {0};
	json_t *probe =
	    json_pack("{s:{s:{s:s}}, s:O}", "roles", "t", "command", "true", "slurm", val);
	struct job_spec *spec = probe ? job_spec_from_json(probe, &e) : NULL;

	json_decref(probe);
	if (!spec)
		return e.msg[0] ? field_fail(r, "%s", e.msg) : field_oom(r);
	job_spec_destroy(spec);
	json_decref(*out);
	*out = json_incref(val);
	return 0;
}

int dag_read_default_args(struct field_reader *r, json_t *v, struct dag_default_args *d)
{
	const char *key;
	json_t *val;
	snprintf(r->path, sizeof r->path, "default_args");
	if (field_need_type(r, v, "a mapping", json_is_object(v)) < 0)
		return -1;
	if (field_check_keys(r, v, "default_args", default_arg_keys) < 0)
		return -1;
	json_object_foreach(v, key, val)
	{
		bool pool_set = false;
		field_at(r, "default_args", key, 0);
		if (!strcmp(key, "resources")) {
			if (read_resources(r, val, "default_args.resources", &d->resources) < 0)
				return -1;
			continue;
		}
		if (dag_flow_is_key(key)) {
			if (dag_read_flow_default(r, key, val, d) < 0)
				return -1;
			continue;
		}
		if (!strcmp(key, "queue")) {
			if (read_queue(r, val, &d->queue) < 0)
				return -1;
			continue;
		}
		if (notify_is_key(key)) {
			if (notify_read_key(r, "default_args", key, val, &d->notify) < 0)
				return -1;
			continue;
		}
		if (!strcmp(key, "sla")) {
			if (notify_read_sla(r, "default_args", val, &d->sla) < 0)
				return -1;
			continue;
		}
		if (read_shared_arg(r, key, val, &d->retries, &d->retry_delay_s,
		                    &d->retry_exponential_backoff, &d->max_retry_delay_s,
		                    &d->execution_timeout_s, &d->pool, &pool_set, &d->pool_slots,
		                    &d->priority, &d->priority_set) < 0)
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
	json_array_foreach(arts, i, a)
	{
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

static int read_inline_job(struct field_reader *r, struct dag_task *t, json_t *v,
                           const char *prefix)
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
		json_object_foreach(v, key, val)
		{
			field_at(r, base, key, 0);
			if (json_is_object(val) || json_is_array(val) || json_is_null(val)) {
				json_decref(list);
				return field_fail(r, "expected a string value, got %s",
				                  field_type_name(val));
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
		json_array_foreach(v, i, val)
		{
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
	json_object_foreach(v, key, val)
	{
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
	if (field_need_type(
	        r, v,
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
	int pool_slots; /* 0: not given */
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
		json_array_foreach(v, i, item)
		{
			if (json_is_array(item) || json_is_object(item) || json_is_null(item)) {
				field_at(r, base, NULL, i);
				return field_fail(r, "expected a string or a number, got %s",
				                  field_type_name(item));
			}
		}
		t->foreach_list = json_incref(v);
		return 0;
	}
	if (json_is_object(v))
		return dag_read_foreach_product(r, t, v);
	const char *s;
	if (json_is_string(v) && field_get_string(r, v, &s) == 0) {
		const char *p = s;
		int out = dag_read_foreach_output(r, t, s);
		if (out != 0)
			return out < 0 ? -1 : 0;
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
	return field_fail(
	    r, "%s",
	    "expected a list of items, \"{{ params.NAME }}\" naming a list param or "
	    "\"{{ outputs.TASK.KEY }}\" naming an upstream task's output (or {product: "
	    "[several]})");
}

/* One task being read: where it is, and what its keys said so far. */
struct task_read {
	struct dag_task *t;
	char prefix[64]; /* "tasks[i]" */
	struct task_given *given;
	/* the keys that decide between a command task and a job task */
	json_t *command, *job, *env, *cwd, *sql, *transfer, *sensor, *trigger;
};

typedef int (*task_key_fn)(struct field_reader *r, struct task_read *tr, json_t *val);

/* ---- what the task is and what it waits for ---- */

static int read_task_id(struct field_reader *r, struct task_read *tr, json_t *val)
{
	const char *s;

	if (field_get_string(r, val, &s) < 0)
		return -1;
	if (!dag_id_valid(s, true))
		return field_fail(r,
		                  "expected a task id of letters, digits, '_', '-' and '.' "
		                  "(at most 250), got \"%s\"",
		                  s);
	return field_set_string(r, &tr->t->task_id, s);
}

static int read_depends_on(struct field_reader *r, struct task_read *tr, json_t *val)
{
	struct dag_task *t = tr->t;
	size_t i;
	json_t *d;

	if (json_is_string(val)) { /* one name: a list of one */
		if (strvec_push(&t->depends_on, json_string_value(val)) < 0)
			return field_oom(r);
		return 0;
	}
	if (field_need_type(r, val, "a list of task ids", json_is_array(val)) < 0)
		return -1;
	json_array_foreach(val, i, d)
	{
		const char *s;
		char base[80];
		snprintf(base, sizeof base, "%s.depends_on", tr->prefix);
		field_at(r, base, NULL, i);
		if (field_get_string(r, d, &s) < 0)
			return -1;
		for (size_t j = 0; j < t->depends_on.n; j++)
			if (!strcmp(t->depends_on.v[j], s))
				return field_fail(r, "\"%s\" is listed twice", s);
		if (strvec_push(&t->depends_on, s) < 0)
			return field_oom(r);
	}
	return 0;
}

static int read_trigger_rule(struct field_reader *r, struct task_read *tr, json_t *val)
{
	const char *s;

	if (field_get_string(r, val, &s) < 0)
		return -1;
	if (trigger_rule_from_name(s, &tr->t->trigger_rule) < 0)
		return field_fail(r,
		                  "expected all_success, all_done, all_failed, "
		                  "one_success, one_failed, none_failed, none_skipped, "
		                  "none_failed_min_one_success, all_skipped, one_done, "
		                  "all_done_setup_success or always, "
		                  "got \"%s\"",
		                  s);
	return 0;
}

/* ---- what it runs: a command (with env, cwd, resources) or a job ---- */

static int read_command(struct field_reader *r, struct task_read *tr, json_t *val)
{
	const char *s;

	tr->command = val;
	if (field_get_string(r, val, &s) < 0)
		return -1;
	if (!*s)
		return field_fail(r, "%s", "expected a shell command, got an empty string");
	return field_set_string(r, &tr->t->command, s);
}

static int read_task_env(struct field_reader *r, struct task_read *tr, json_t *val)
{
	char base[80];

	tr->env = val;
	snprintf(base, sizeof base, "%s.env", tr->prefix);
	return env_list_read(r, val, base, &tr->t->env, &tr->t->n_env);
}

/* `operator`: a dotted path of Python names (the class of an Airflow task). */
static int read_operator(struct field_reader *r, struct task_read *tr, json_t *val)
{
	const char *s = json_string_value(val);
	size_t n = s ? strlen(s) : 0;
	bool start = true;

	if (!s || n == 0 || n > 200)
		return field_fail(r,
		                  "expected a class's dotted path (at most 200 characters), such "
		                  "as %s",
		                  "airflow.operators.python.PythonOperator");
	for (const char *c = s; *c; c++) {
		bool alpha = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || *c == '_';
		bool ok = *c == '.' ? !start && c[1] : alpha || (!start && *c >= '0' && *c <= '9');
		if (!ok)
			return field_fail(
			    r, "expected a class's dotted path of Python names, such as %s",
			    "airflow.operators.python.PythonOperator");
		start = *c == '.';
	}
	return field_dup_string(r, val, &tr->t->operator_class);
}

static int read_task_doc(struct field_reader *r, struct task_read *tr, json_t *val)
{
	return field_dup_string(r, val, &tr->t->doc_md);
}

static int read_cwd(struct field_reader *r, struct task_read *tr, json_t *val)
{
	tr->cwd = val;
	return field_read_path(r, val, &tr->t->cwd);
}

/* Read once every key is known (check_task_kind): env and cwd decide
 * whether a job may stand here. */
static int note_job(struct field_reader *r, struct task_read *tr, json_t *val)
{
	(void)r;
	tr->job = val;
	return 0;
}

static int note_sql(struct field_reader *r, struct task_read *tr, json_t *val)
{
	(void)r;
	tr->sql = val;
	return 0;
}

static int note_transfer(struct field_reader *r, struct task_read *tr, json_t *val)
{
	(void)r;
	tr->transfer = val;
	return 0;
}

static int note_sensor(struct field_reader *r, struct task_read *tr, json_t *val)
{
	(void)r;
	tr->sensor = val;
	return 0;
}

static int note_trigger(struct field_reader *r, struct task_read *tr, json_t *val)
{
	(void)r;
	tr->trigger = val;
	return 0;
}

static int read_task_outlets(struct field_reader *r, struct task_read *tr, json_t *val)
{
	return dag_read_outlets(r, tr->t, val);
}

static int read_task_inlets(struct field_reader *r, struct task_read *tr, json_t *val)
{
	return dag_read_inlets(r, tr->t, val);
}

/* marker: {dag_id, task_id, recursion_depth (default 10)}: the task of another DAG
 * that a recursive clear of this one clears too. */
static int read_task_marker(struct field_reader *r, struct task_read *tr, json_t *val)
{
	static const char *const keys[] = {"dag_id", "task_id", "recursion_depth", NULL};
	char base[80];
	json_t *v;
	long long depth = 10;

	snprintf(base, sizeof base, "%s.marker", tr->prefix);
	field_at(r, tr->prefix, "marker", 0);
	if (field_need_type(r, val, "a mapping {dag_id, task_id, recursion_depth}",
	                    json_is_object(val)) < 0 ||
	    field_check_keys(r, val, base, keys) < 0)
		return -1;
	for (const char *const *k = keys; k < keys + 2; k++) {
		v = json_object_get(val, *k);
		field_at(r, base, *k, 0);
		if (!json_is_string(v) || !dag_id_valid(json_string_value(v), true))
			return field_fail(r, "expected %s", k == keys ? "a DAG id" : "a task id");
	}
	field_at(r, base, "recursion_depth", 0);
	if ((v = json_object_get(val, "recursion_depth")) &&
	    field_get_int(r, v, 1, 1000, &depth) < 0)
		return -1;
	json_decref(tr->t->marker);
	tr->t->marker =
	    json_pack("{s:O, s:O, s:I}", "dag_id", json_object_get(val, "dag_id"), "task_id",
	              json_object_get(val, "task_id"), "recursion_depth", (json_int_t)depth);
	return tr->t->marker ? 0 : field_oom(r);
}

static int read_task_resources(struct field_reader *r, struct task_read *tr, json_t *val)
{
	char base[80];

	snprintf(base, sizeof base, "%s.resources", tr->prefix);
	tr->given->resources = true;
	tr->t->resources.gpus = -1;
	return read_resources(r, val, base, &tr->t->resources);
}

/* ---- how often and where: foreach, queue, slurm ---- */

static int read_task_foreach(struct field_reader *r, struct task_read *tr, json_t *val)
{
	return read_foreach(r, tr->t, val);
}

static int read_task_queue(struct field_reader *r, struct task_read *tr, json_t *val)
{
	if (read_queue(r, val, &tr->t->queue) < 0)
		return -1;
	snprintf(tr->t->queue_at, sizeof tr->t->queue_at, "%s.queue", tr->prefix);
	return 0;
}

/* max_active_tis_per_dag, max_active_tis_per_dagrun: how many instances
 * of the task may be queued or running at once across the DAG's runs, or
 * in one run (Airflow's; sched/dag_pool.h applies them). */
static int read_task_tis_cap(struct field_reader *r, int *out, json_t *val)
{
	long long x;

	if (field_get_int(r, val, 1, DAG_MAX_ACTIVE_TIS, &x) < 0)
		return -1;
	*out = (int)x;
	return 0;
}

static int read_task_tis_per_dag(struct field_reader *r, struct task_read *tr, json_t *val)
{
	return read_task_tis_cap(r, &tr->t->max_active_tis_per_dag, val);
}

static int read_task_tis_per_run(struct field_reader *r, struct task_read *tr, json_t *val)
{
	return read_task_tis_cap(r, &tr->t->max_active_tis_per_dagrun, val);
}

static int read_task_slurm_key(struct field_reader *r, struct task_read *tr, json_t *val)
{
	return read_task_slurm(r, val, &tr->t->slurm);
}

static int read_task_connections(struct field_reader *r, struct task_read *tr, json_t *val)
{
	struct weir_error e = {0};

	if (connection_list_read(&tr->t->connections, val, &e) < 0)
		return e.kind == WEIR_E_INVALID ? field_fail(r, "%s", e.msg) : field_oom(r);
	return 0;
}

/* `variables: [KEY, ...]`: the variables the task's tries get (none
 * resolved here: a key the server does not have is left out at the try). */
static int read_task_variables(struct field_reader *r, struct task_read *tr, json_t *val)
{
	size_t i;
	json_t *v;

	if (!json_is_array(val))
		return field_fail(r, "%s",
		                  "expected a list of variable keys, like [env, threshold]");
	json_array_foreach(val, i, v)
	{
		struct weir_error e = {0};
		if (!json_is_string(v) || variable_check_key(json_string_value(v), &e) < 0) {
			size_t at = strlen(r->path);
			snprintf(r->path + at, sizeof r->path - at, "[%zu]", i);
			return field_fail(r, "%s",
			                  json_is_string(v) ? e.msg : "expected a variable key");
		}
		if (strvec_push(&tr->t->variables, json_string_value(v)) < 0)
			return field_oom(r);
	}
	return 0;
}

static const struct {
	const char *key;
	task_key_fn read;
} task_readers[] = {
    {"task_id", read_task_id},
    {"operator", read_operator},
    {"doc_md", read_task_doc},
    {"depends_on", read_depends_on},
    {"trigger_rule", read_trigger_rule},
    {"command", read_command},
    {"env", read_task_env},
    {"cwd", read_cwd},
    {"job", note_job},
    {"sql", note_sql},
    {"transfer", note_transfer},
    {"sensor", note_sensor},
    {"resources", read_task_resources},
    {"foreach", read_task_foreach},
    {"queue", read_task_queue},
    {"slurm", read_task_slurm_key},
    {"connections", read_task_connections},
    {"variables", read_task_variables},
    {"trigger_dag", note_trigger},
    {"outlets", read_task_outlets},
    {"inlets", read_task_inlets},
    {"marker", read_task_marker},
    {"max_active_tis_per_dag", read_task_tis_per_dag},
    {"max_active_tis_per_dagrun", read_task_tis_per_run},
};

/* ---- the keys it shares with default_args ---- */

static int read_task_shared(struct field_reader *r, struct task_read *tr, const char *key,
                            json_t *val)
{
	struct task_given *g = tr->given;
	bool prio_set = false;

	if (read_shared_arg(r, key, val, &g->retries, &g->retry_delay, &g->exp_backoff,
	                    &g->max_delay, &g->timeout, &tr->t->pool, &g->pool, &g->pool_slots,
	                    &tr->t->priority, &prio_set) < 0)
		return -1;
	g->priority |= prio_set;
	return 0;
}

static int read_task_key(struct field_reader *r, struct task_read *tr, const char *key, json_t *val)
{
	if (notify_is_key(key))
		return notify_read_key(r, tr->prefix, key, val, &tr->t->notify);
	if (!strcmp(key, "sla"))
		return notify_read_sla(r, tr->prefix, val, &tr->t->sla);
	if (dag_flow_is_key(key))
		return dag_read_flow_key(r, tr->t, key, val);
	for (size_t i = 0; i < sizeof task_readers / sizeof task_readers[0]; i++)
		if (!strcmp(key, task_readers[i].key))
			return task_readers[i].read(r, tr, val);
	return read_task_shared(r, tr, key, val);
}

/* What the keys say together: a task_id, exactly one of command and job,
 * and a job task without the keys of a command; then the job itself. */
static int check_task_kind(struct field_reader *r, struct task_read *tr)
{
	const char *prefix = tr->prefix;

	if (!tr->t->task_id) {
		snprintf(r->path, sizeof r->path, "%s", prefix);
		return field_fail(r, "%s", "expected a task_id");
	}
	/* a command with sensor: options is a sensor whose poke is the command */
	bool command_sensor = tr->command && tr->sensor;

	if (!!tr->command + !!tr->job + !!tr->sql + !!tr->transfer +
	        (!!tr->sensor && !command_sensor) + !!tr->trigger !=
	    1) {
		snprintf(r->path, sizeof r->path, "%s", prefix);
		return field_fail(
		    r, "%s",
		    tr->command || tr->job || tr->sql || tr->transfer || tr->sensor || tr->trigger
		        ? "expected exactly one of command, job, sql, transfer, sensor and "
		          "trigger_dag, got more"
		        : "expected exactly one of command (a shell command), job "
		          "(a job spec, its path, or a tony.xml), sql, transfer, sensor and "
		          "trigger_dag");
	}
	if (command_sensor) {
		char base[80];
		snprintf(base, sizeof base, "%s.sensor", prefix);
		if (dag_read_command_sensor(r, tr->t, base, tr->sensor) < 0)
			return -1;
	} else if (tr->sensor) {
		char base[80];
		if (tr->env || tr->cwd) {
			field_at(r, prefix, tr->env ? "env" : "cwd", 0);
			return field_fail(r, "%s", "env and cwd go with command");
		}
		snprintf(base, sizeof base, "%s.sensor", prefix);
		return dag_read_sensor(r, tr->t, base, tr->sensor);
	}
	if (tr->trigger) {
		char base[80];
		if (tr->env || tr->cwd || tr->given->resources) {
			field_at(r, prefix, tr->env ? "env" : tr->cwd ? "cwd" : "resources", 0);
			return field_fail(r, "%s", "env, cwd and resources go with command");
		}
		tr->t->kind = DAG_TASK_TRIGGER_DAG;
		snprintf(base, sizeof base, "%s.trigger_dag", prefix);
		return dag_read_trigger(r, tr->t, base, tr->trigger);
	}
	if (tr->sql || tr->transfer) {
		char base[80];
		if (tr->env || tr->cwd) {
			field_at(r, prefix, tr->env ? "env" : "cwd", 0);
			return field_fail(r, "%s", "env and cwd go with command");
		}
		tr->t->kind = tr->sql ? DAG_TASK_SQL : DAG_TASK_TRANSFER;
		snprintf(base, sizeof base, "%s.%s", prefix, tr->sql ? "sql" : "transfer");
		return dag_read_data(r, tr->t, base, tr->sql ? tr->sql : tr->transfer);
	}
	if (!tr->job)
		return 0;
	if (tr->env || tr->cwd) {
		field_at(r, prefix, tr->env ? "env" : "cwd", 0);
		return field_fail(r, "%s",
		                  "env and cwd go with command; a job task sets them in its spec");
	}
	if (tr->given->resources) {
		field_at(r, prefix, "resources", 0);
		return field_fail(r, "%s",
		                  "a job task has the resources of its roles; resources go with "
		                  "command");
	}
	char base[80];
	snprintf(base, sizeof base, "%s.job", prefix);
	field_at(r, prefix, "job", 0);
	return read_job(r, tr->t, tr->job, base);
}

static int read_task(struct field_reader *r, struct dag_spec *dag, size_t idx, json_t *v,
                     struct task_given *given)
{
	struct task_read tr = {.t = &dag->tasks[idx], .given = given};
	const char *key;
	json_t *val;

	snprintf(tr.prefix, sizeof tr.prefix, "tasks[%zu]", idx);
	snprintf(r->path, sizeof r->path, "%s", tr.prefix);
	if (field_need_type(r, v, "a mapping with task_id and command or job", json_is_object(v)) <
	    0)
		return -1;
	if (field_check_keys(r, v, tr.prefix, task_keys) < 0)
		return -1;
	given->retries = -1;
	given->exp_backoff = -1;
	given->retry_delay = given->max_delay = given->timeout = -1;
	tr.t->resources.gpus = -1;

	json_object_foreach(v, key, val)
	{
		field_at(r, tr.prefix, key, 0);
		if (read_task_key(r, &tr, key, val) < 0)
			return -1;
	}
	if (given->pool_slots)
		snprintf(tr.t->pool_slots_at, sizeof tr.t->pool_slots_at, "%s.pool_slots",
		         tr.prefix);
	return check_task_kind(r, &tr);
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
	t->retry_exponential_backoff =
	    g->exp_backoff >= 0 ? g->exp_backoff : d->retry_exponential_backoff > 0;
	t->max_retry_delay_s = g->max_delay >= 0           ? g->max_delay
	                       : d->max_retry_delay_s >= 0 ? d->max_retry_delay_s
	                                                   : 0;
	t->execution_timeout_s = g->timeout >= 0               ? g->timeout
	                         : d->execution_timeout_s >= 0 ? d->execution_timeout_s
	                                                       : 0;
	if (!g->pool && d->pool && field_set_string(r, &t->pool, d->pool) < 0)
		return -1;
	t->pool_slots = g->pool_slots ? g->pool_slots : d->pool_slots ? d->pool_slots : 1;
	if (!g->pool_slots && d->pool_slots)
		snprintf(t->pool_slots_at, sizeof t->pool_slots_at, "default_args.pool_slots");
	if (!t->queue && d->queue) {
		if (field_set_string(r, &t->queue, d->queue) < 0)
			return -1;
		snprintf(t->queue_at, sizeof t->queue_at, "default_args.queue");
	}
	if (!g->priority && d->priority_set)
		t->priority = d->priority;
	for (int e = 0; e < NOTIFY_N_EVENTS; e++) {
		const struct dag_notify *own = t->notify, *def = d->notify;
		t->on[e] = own && own->given[e]   ? &own->on[e]
		           : def && def->given[e] ? &def->on[e]
		                                  : NULL;
	}
	/* the DAG's on_sla_miss stands in for a task that has none */
	if (!t->on[NOTIFY_ON_SLA_MISS] && dag->notify && dag->notify->given[NOTIFY_ON_SLA_MISS])
		t->on[NOTIFY_ON_SLA_MISS] = &dag->notify->on[NOTIFY_ON_SLA_MISS];
	if (t->sla.within_s <= 0)
		t->sla = d->sla;
	if (t->kind == DAG_TASK_COMMAND || t->kind == DAG_TASK_SQL ||
	    t->kind == DAG_TASK_TRANSFER) {
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

int dag_read_task(struct field_reader *r, struct dag_spec *dag, size_t idx, json_t *v)
{
	struct task_given given = {0};

	if (read_task(r, dag, idx, v, &given) < 0)
		return -1;
	dag_flow_resolve(&dag->tasks[idx], &dag->default_args);
	return resolve_defaults(r, dag, &dag->tasks[idx], &given);
}
