/* job_spec.c: the native job spec: JSON (and YAML through lib/yaml) in,
 * validation, JSON out.
 *
 * Readers record the path of the field they are looking at, so that an
 * error names it ("roles.worker.memory: ...") and a file parser can turn
 * that path into a line through yaml_lines_find().
 */
#include "model/job_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/json_util.h"
#include "lib/yaml.h"
#include "model/connection.h"
#include "model/field_reader.h"
#include "model/job_spec_edit.h"

static const char *const job_keys[] = {
    "name",
    "framework",
    "priority",
    "entry_point",
    "params",
    "python",
    "src_dir",
    "artifacts",
    "env",
    "success_policy",
    "fail_on_worker_failure",
    "restart",
    "timeouts",
    "roles",
    "queue",
    "slurm",
    "connections",
    "mask",
    NULL,
};
static const char *const slurm_keys[] = {"partition", "account",        "qos",
                                         "time",      "sbatch_options", NULL};
static const char *const role_keys[] = {
    "instances", "memory",    "vcores",          "gpus",    "command",
    "env",       "untracked", "stop_on_failure", "sidecar", NULL,
};
static const char *const artifact_keys[] = {"path", "name", "archive", NULL};
static const char *const restart_keys[] = {"max_restarts", "retry_exit_codes", NULL};
static const char *const timeout_keys[] = {"allocation", "registration", "execution", NULL};

static int read_memory(struct field_reader *r, json_t *v, uint64_t *out)
{
	if (json_is_integer(v)) {
		long long x;
		if (field_get_int(r, v, 1, (long long)JOB_SPEC_MAX_MEMORY_MB, &x) < 0)
			return -1;
		*out = (uint64_t)x;
		return 0;
	}
	if (json_is_string(v)) {
		const char *s;
		if (field_get_string(r, v, &s) < 0)
			return -1;
		return parse_memory_mb(s, r->path, out, r->err);
	}
	return field_fail(r, "expected an amount like 4g or 512m, got %s", field_type_name(v));
}

static int read_role(struct field_reader *r, struct job_spec *spec, const char *name, json_t *v)
{
	char prefix[FIELD_PATH_MAX];
	const char *key;
	json_t *val;
	long long x;
	bool untracked_set = false;

	snprintf(prefix, sizeof prefix, "roles.%s", name);
	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (!role_name_valid(name))
		return field_fail(r, "%s",
		                  "a role name must be [a-z][a-z0-9_-]* of at most 63 characters");
	if (json_is_null(v))
		v = NULL; /* "ps:" alone: a role with every default */
	else if (field_need_type(r, v, "a mapping of the role's fields", json_is_object(v)) < 0)
		return -1;
	if (v && field_check_keys(r, v, prefix, role_keys) < 0)
		return -1;
	struct role_spec *role = job_spec_add_role(spec, name, r->err);
	if (!role)
		return -1;
	if (!v)
		return 0;
	json_object_foreach(v, key, val)
	{
		field_at(r, prefix, key, 0);
		int rc = 0;
		if (!strcmp(key, "instances")) {
			rc = field_get_int(r, val, 1, JOB_SPEC_MAX_INSTANCES, &x);
			role->instances = (int)x;
		} else if (!strcmp(key, "memory")) {
			rc = read_memory(r, val, &role->memory_mb);
		} else if (!strcmp(key, "vcores")) {
			rc = field_get_int(r, val, 1, JOB_SPEC_MAX_VCORES, &x);
			role->vcores = (int)x;
		} else if (!strcmp(key, "gpus")) {
			rc = field_get_int(r, val, 0, JOB_SPEC_MAX_GPUS, &x);
			role->gpus = (int)x;
		} else if (!strcmp(key, "command")) {
			rc = field_dup_string(r, val, &role->command);
		} else if (!strcmp(key, "env")) {
			char env_prefix[FIELD_PATH_MAX];
			snprintf(env_prefix, sizeof env_prefix, "%s", r->path);
			rc = env_list_read(r, val, env_prefix, &role->env, &role->n_env);
		} else if (!strcmp(key, "untracked")) {
			rc = field_get_bool(r, val, &role->untracked);
			untracked_set = true;
		} else if (!strcmp(key, "stop_on_failure")) {
			rc = field_get_bool(r, val, &role->stop_on_failure);
		} else if (!strcmp(key, "sidecar")) {
			rc = field_get_bool(r, val, &role->sidecar);
		}
		if (rc < 0)
			return -1;
	}
	if (role->sidecar) {
		if (untracked_set && !role->untracked) {
			field_at(r, prefix, "untracked", 0);
			return field_fail(
			    r, "%s", "a sidecar role is always untracked; drop untracked: false");
		}
		role->untracked = true;
	}
	return 0;
}

static int read_artifact(struct field_reader *r, struct job_spec *spec, size_t i, json_t *v)
{
	char prefix[FIELD_PATH_MAX];
	char *path = NULL, *name = NULL;
	int archive = -1;
	int rc = -1;

	snprintf(prefix, sizeof prefix, "artifacts[%zu]", i);
	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (json_is_string(v)) {
		if (field_read_path(r, v, &path) < 0)
			goto out;
	} else if (json_is_object(v)) {
		json_t *p = json_object_get(v, "path");
		if (field_check_keys(r, v, prefix, artifact_keys) < 0)
			goto out;
		field_at(r, prefix, "path", 0);
		if (!p || json_is_null(p)) {
			field_fail(r, "%s", "missing; every artifact needs a path");
			goto out;
		}
		if (field_read_path(r, p, &path) < 0)
			goto out;
		json_t *n = json_object_get(v, "name");
		field_at(r, prefix, "name", 0);
		if (n && field_dup_string(r, n, &name) < 0)
			goto out;
		json_t *a = json_object_get(v, "archive");
		field_at(r, prefix, "archive", 0);
		if (a) {
			bool b;
			if (field_get_bool(r, a, &b) < 0)
				goto out;
			archive = b;
		}
	} else {
		field_fail(r, "expected a path or a mapping {path, name, archive}, got %s",
		           field_type_name(v));
		goto out;
	}
	rc = job_spec_add_artifact(spec, path, name, archive, r->err);
out:
	free(path);
	free(name);
	return rc;
}

static int read_restart(struct field_reader *r, struct job_spec *spec, json_t *v)
{
	const char *key;
	json_t *val;
	long long x;

	snprintf(r->path, sizeof r->path, "restart");
	if (field_need_type(r, v, "a mapping {max_restarts, retry_exit_codes}", json_is_object(v)) <
	        0 ||
	    field_check_keys(r, v, "restart", restart_keys) < 0)
		return -1;
	json_object_foreach(v, key, val)
	{
		field_at(r, "restart", key, 0);
		if (!strcmp(key, "max_restarts")) {
			if (field_get_int(r, val, 0, JOB_SPEC_MAX_RESTARTS, &x) < 0)
				return -1;
			spec->max_restarts = (int)x;
		} else if (json_is_integer(val)) {
			if (field_get_int(r, val, 0, 255, &x) < 0)
				return -1;
			spec->retry_exit_min = spec->retry_exit_max = (int)x;
		} else {
			const char *s;
			if (field_get_string(r, val, &s) < 0 ||
			    parse_exit_range(s, r->path, &spec->retry_exit_min,
			                     &spec->retry_exit_max, r->err) < 0)
				return -1;
		}
	}
	return 0;
}

static int read_timeouts(struct field_reader *r, struct job_spec *spec, json_t *v)
{
	const char *key;
	json_t *val;

	snprintf(r->path, sizeof r->path, "timeouts");
	if (field_need_type(r, v, "a mapping {allocation, registration, execution}",
	                    json_is_object(v)) < 0 ||
	    field_check_keys(r, v, "timeouts", timeout_keys) < 0)
		return -1;
	json_object_foreach(v, key, val)
	{
		field_at(r, "timeouts", key, 0);
		int64_t *field = !strcmp(key, "allocation")     ? &spec->allocation_timeout_s
		                 : !strcmp(key, "registration") ? &spec->registration_timeout_s
		                                                : &spec->execution_timeout_s;
		if (field_read_duration(r, val, field) < 0)
			return -1;
	}
	return 0;
}

/* `slurm: {partition, account, qos, time, sbatch_options: [...]}`; checked by
 * job_spec_validate. */
static int read_slurm(struct field_reader *r, struct job_slurm *sl, json_t *v)
{
	const char *key;
	json_t *val;

	if (field_need_type(r, v, "a mapping {partition, account, qos, time, sbatch_options}",
	                    json_is_object(v)) < 0 ||
	    field_check_keys(r, v, "slurm", slurm_keys) < 0)
		return -1;
	json_object_foreach(v, key, val)
	{
		field_at(r, "slurm", key, 0);
		if (!strcmp(key, "sbatch_options")) {
			size_t i;
			json_t *o;
			const char *text;
			if (field_need_type(r, val, "a list of options like --constraint=a100",
			                    json_is_array(val) && json_array_size(val) <= 64) < 0)
				return -1;
			sl->sbatch_options = calloc(json_array_size(val) + 1, sizeof(char *));
			if (!sl->sbatch_options)
				return field_oom(r);
			json_array_foreach(val, i, o)
			{
				field_at(r, "slurm.sbatch_options", NULL, i);
				if (field_get_string(r, o, &text) < 0)
					return -1;
				if (!(sl->sbatch_options[i] = strdup(text)))
					return field_oom(r);
				sl->n_sbatch_options++;
			}
		} else if (!strcmp(key, "time") && json_is_integer(val)) {
			/* minutes, as sbatch reads a bare number */
			char buf[32];
			snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(val));
			if (field_set_string(r, &sl->time, buf) < 0)
				return -1;
		} else {
			char **dst = !strcmp(key, "partition") ? &sl->partition
			             : !strcmp(key, "account") ? &sl->account
			             : !strcmp(key, "qos")     ? &sl->qos
			                                       : &sl->time;
			if (field_dup_string(r, val, dst) < 0)
				return -1;
		}
	}
	return 0;
}

static int read_job_field(struct field_reader *r, struct job_spec *spec, const char *key,
                          json_t *val)
{
	long long x;
	const char *s;

	field_at(r, "", key, 0);
	if (!strcmp(key, "name"))
		return json_is_null(val) ? 0 : field_dup_string(r, val, &spec->name);
	if (!strcmp(key, "framework")) {
		if (field_get_string(r, val, &s) < 0)
			return -1;
		if (framework_from_name(s, &spec->framework) < 0)
			return field_fail(
			    r, "expected tensorflow, pytorch, mxnet, horovod or none, got \"%s\"",
			    s);
		return 0;
	}
	if (!strcmp(key, "priority")) {
		if (field_get_int(r, val, -JOB_SPEC_MAX_PRIORITY, JOB_SPEC_MAX_PRIORITY, &x) < 0)
			return -1;
		spec->priority = (int)x;
		return 0;
	}
	if (!strcmp(key, "entry_point"))
		return field_dup_string(r, val, &spec->entry_point);
	if (!strcmp(key, "params"))
		return field_dup_string(r, val, &spec->params);
	if (!strcmp(key, "python"))
		return field_dup_string(r, val, &spec->python);
	if (!strcmp(key, "queue"))
		return field_dup_string(r, val, &spec->queue);
	if (!strcmp(key, "slurm"))
		return json_is_null(val) ? 0 : read_slurm(r, &spec->slurm, val);
	if (!strcmp(key, "src_dir"))
		return field_read_path(r, val, &spec->src_dir);
	if (!strcmp(key, "env"))
		return env_list_read(r, val, "env", &spec->env, &spec->n_env);
	if (!strcmp(key, "connections")) {
		struct weir_error e = {0};
		if (connection_list_read(&spec->connections, val, &e) < 0)
			return e.kind == WEIR_E_INVALID ? field_fail(r, "%s", e.msg) : field_oom(r);
		return 0;
	}
	if (!strcmp(key, "mask")) {
		size_t i;
		json_t *m;
		if (field_need_type(r, val, "a list of texts", json_is_array(val)) < 0)
			return -1;
		json_array_foreach(val, i, m)
		{
			if (!json_is_string(m))
				return field_fail(r, "%s", "expected a list of texts");
			if (!json_string_length(m))
				continue;
			if (strvec_push(&spec->mask, json_string_value(m)) < 0)
				return field_oom(r);
		}
		return 0;
	}
	if (!strcmp(key, "success_policy")) {
		if (field_get_string(r, val, &s) < 0)
			return -1;
		if (!strcmp(s, "chief"))
			spec->success = SUCCESS_CHIEF;
		else if (!strcmp(s, "all") || !strcmp(s, "all_workers"))
			spec->success = SUCCESS_ALL_WORKERS;
		else
			return field_fail(r, "expected chief or all, got \"%s\"", s);
		return 0;
	}
	if (!strcmp(key, "fail_on_worker_failure"))
		return field_get_bool(r, val, &spec->fail_on_worker_failure);
	if (!strcmp(key, "restart"))
		return read_restart(r, spec, val);
	if (!strcmp(key, "timeouts"))
		return read_timeouts(r, spec, val);
	if (!strcmp(key, "artifacts")) {
		size_t i;
		json_t *a;
		if (field_need_type(r, val, "a list of artifacts", json_is_array(val)) < 0)
			return -1;
		json_array_foreach(val, i, a) if (read_artifact(r, spec, i, a) < 0) return -1;
		return 0;
	}
	if (!strcmp(key, "roles")) {
		const char *name;
		json_t *role;
		if (field_need_type(r, val, "a mapping of role name to role", json_is_object(val)) <
		    0)
			return -1;
		json_object_foreach(val, name,
		                    role) if (read_role(r, spec, name, role) < 0) return -1;
		return 0;
	}
	return 0;
}

/* Reads and validates; on error r->path names the field. */
static struct job_spec *read_spec(struct field_reader *r, json_t *json)
{
	const char *key;
	json_t *val;
	struct job_spec *spec = NULL;

	r->path[0] = '\0';
	if (!json || !json_is_object(json)) {
		field_fail(r, "expected a mapping of job fields, got %s",
		           json ? field_type_name(json) : "nothing");
		return NULL;
	}
	if (field_check_keys(r, json, "", job_keys) < 0)
		return NULL;
	spec = job_spec_create();
	if (!spec) {
		weir_error_set(r->err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	json_object_foreach(json, key, val) if (read_job_field(r, spec, key, val) < 0) goto fail;
	r->path[0] = '\0';
	if (job_spec_validate(spec, r->err) < 0) {
		/* validate's messages start with the field path */
		size_t n = r->err ? strcspn(r->err->msg, " ") : 0;
		if (n > 1 && n < sizeof r->path && r->err->msg[n - 1] == ':')
			snprintf(r->path, sizeof r->path, "%.*s", (int)(n - 1), r->err->msg);
		goto fail;
	}
	return spec;
fail:
	job_spec_destroy(spec);
	return NULL;
}

struct job_spec *job_spec_from_json(json_t *json, struct weir_error *err)
{
	struct field_reader r = {.subject = "spec", .err = err};
	return read_spec(&r, json);
}

struct job_spec *job_spec_parse_string(const char *text, size_t len, const char *origin,
                                       const char *base_dir, struct weir_error *err)
{
	struct yaml_lines *lines = NULL;
	struct field_reader r = {.base_dir = base_dir, .subject = "spec", .err = err};
	struct weir_error local;
	if (!err)
		r.err = err = &local;
	if (!origin)
		origin = "<spec>";
	json_t *json = yaml_parse(text, len, origin, &lines, err);
	if (!json)
		return NULL;
	struct job_spec *spec = read_spec(&r, json);
	if (!spec && err->kind == WEIR_E_INVALID) {
		int line = yaml_lines_find(lines, r.path);
		if (line > 0)
			weir_error_prefix(err, "%s:%d", origin, line);
		else
			weir_error_prefix(err, "%s", origin);
	}
	json_decref(json);
	yaml_lines_destroy(lines);
	return spec;
}

struct job_spec *job_spec_parse_file(const char *path, struct weir_error *err)
{
	size_t len;
	char *text = fs_read_file(path, &len, err);
	struct job_spec *spec = NULL;

	if (!text)
		return NULL;
	/* Relative paths in the file are relative to the file's folder. */
	char *base = fs_abs_dirname(path);
	if (base)
		spec = job_spec_parse_string(text, len, path, base, err);
	else
		weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot find the file's folder", path);
	free(text);
	free(base);
	return spec;
}

/* The writer of the native form: members through lib/json_util.h's
 * writers, in the layout's order. */

static void put_env(struct strbuf *sb, const struct env_var *env, size_t n, int *rc)
{
	json_util_write_key(sb, "env");
	strbuf_addch(sb, '{');
	for (size_t i = 0; i < n; i++)
		*rc |= json_util_write_field(sb, env[i].name, env[i].value);
	strbuf_addch(sb, '}');
}

/* A list of strings as an array value. */
static void put_strings(struct strbuf *sb, const char *key, char *const *v, size_t n, int *rc)
{
	json_util_write_key(sb, key);
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addch(sb, ',');
		*rc |= json_util_write_string(sb, v[i]);
	}
	strbuf_addch(sb, ']');
}

static void put_role(struct strbuf *sb, const struct role_spec *ro, int *rc)
{
	char buf[64];

	*rc |= json_util_write_key(sb, ro->name);
	strbuf_addch(sb, '{');
	json_util_write_int_field(sb, "instances", ro->instances);
	*rc |=
	    json_util_write_field(sb, "memory", format_memory_mb(ro->memory_mb, buf, sizeof buf));
	json_util_write_int_field(sb, "vcores", ro->vcores);
	json_util_write_int_field(sb, "gpus", ro->gpus);
	*rc |= json_util_write_field(sb, "command", ro->command);
	put_env(sb, ro->env, ro->n_env, rc);
	json_util_write_bool_field(sb, "untracked", ro->untracked || ro->sidecar);
	json_util_write_bool_field(sb, "stop_on_failure", ro->stop_on_failure);
	json_util_write_bool_field(sb, "sidecar", ro->sidecar);
	strbuf_addch(sb, '}');
}

static void put_slurm(struct strbuf *sb, const struct job_slurm *sl, int *rc)
{
	if (!sl->partition && !sl->account && !sl->qos && !sl->time && !sl->n_sbatch_options)
		return;
	json_util_write_key(sb, "slurm");
	strbuf_addch(sb, '{');
	if (sl->partition)
		*rc |= json_util_write_field(sb, "partition", sl->partition);
	if (sl->account)
		*rc |= json_util_write_field(sb, "account", sl->account);
	if (sl->qos)
		*rc |= json_util_write_field(sb, "qos", sl->qos);
	if (sl->time)
		*rc |= json_util_write_field(sb, "time", sl->time);
	if (sl->n_sbatch_options)
		put_strings(sb, "sbatch_options", sl->sbatch_options, sl->n_sbatch_options, rc);
	strbuf_addch(sb, '}');
}

int job_spec_write_json(struct strbuf *sb, const struct job_spec *spec)
{
	char buf[64];
	int rc = 0;

	strbuf_grow(sb, 1024); /* a spec's usual size: few reallocations */
	strbuf_addch(sb, '{');
	rc |= json_util_write_field(sb, "name", spec->name);
	rc |= json_util_write_field(sb, "framework", framework_name(spec->framework));
	json_util_write_int_field(sb, "priority", spec->priority);
	rc |= json_util_write_field(sb, "entry_point", spec->entry_point);
	rc |= json_util_write_field(sb, "params", spec->params);
	rc |= json_util_write_field(sb, "python", spec->python);
	rc |= json_util_write_field(sb, "src_dir", spec->src_dir);
	json_util_write_key(sb, "artifacts");
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < spec->n_artifacts; i++) {
		const struct artifact *a = &spec->artifacts[i];
		if (i)
			strbuf_addch(sb, ',');
		strbuf_addch(sb, '{');
		rc |= json_util_write_field(sb, "path", a->path);
		rc |= json_util_write_field(sb, "name", a->name);
		json_util_write_bool_field(sb, "archive", a->archive);
		strbuf_addch(sb, '}');
	}
	strbuf_addch(sb, ']');
	put_env(sb, spec->env, spec->n_env, &rc);
	rc |= json_util_write_field(sb, "success_policy",
	                            spec->success == SUCCESS_ALL_WORKERS ? "all" : "chief");
	json_util_write_bool_field(sb, "fail_on_worker_failure", spec->fail_on_worker_failure);
	if (spec->retry_exit_min == spec->retry_exit_max)
		snprintf(buf, sizeof buf, "%d", spec->retry_exit_min);
	else
		snprintf(buf, sizeof buf, "%d-%d", spec->retry_exit_min, spec->retry_exit_max);
	json_util_write_key(sb, "restart");
	strbuf_addch(sb, '{');
	json_util_write_int_field(sb, "max_restarts", spec->max_restarts);
	rc |= json_util_write_field(sb, "retry_exit_codes", buf);
	strbuf_addch(sb, '}');
	json_util_write_key(sb, "timeouts");
	strbuf_addch(sb, '{');
	json_util_write_int_field(sb, "allocation", spec->allocation_timeout_s);
	json_util_write_int_field(sb, "registration", spec->registration_timeout_s);
	json_util_write_int_field(sb, "execution", spec->execution_timeout_s);
	strbuf_addch(sb, '}');
	json_util_write_key(sb, "roles");
	strbuf_addch(sb, '{');
	for (size_t i = 0; i < spec->n_roles; i++)
		put_role(sb, &spec->roles[i], &rc);
	strbuf_addch(sb, '}');
	/* only when given: specs without them read as before */
	if (spec->connections.n)
		put_strings(sb, "connections", spec->connections.v, spec->connections.n, &rc);
	if (spec->mask.n)
		put_strings(sb, "mask", spec->mask.v, spec->mask.n, &rc);
	if (spec->queue)
		rc |= json_util_write_field(sb, "queue", spec->queue);
	put_slurm(sb, &spec->slurm, &rc);
	strbuf_addch(sb, '}');
	return rc || sb->failed ? -1 : 0;
}

json_t *job_spec_to_json(const struct job_spec *spec)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j = NULL;

	/* the tree is the text read back: one place knows the layout */
	if (job_spec_write_json(&sb, spec) == 0)
		j = json_loadb(sb.buf, sb.len, 0, NULL);
	strbuf_release(&sb);
	return j;
}

static int vfail(struct weir_error *err, const char *path, const char *fmt, const char *arg)
{
	char msg[WEIR_ERROR_MSG_MAX - FIELD_PATH_MAX - 8];
	snprintf(msg, sizeof msg, fmt, arg);
	return weir_error_set(err, WEIR_E_INVALID, "%s: %s", path, msg);
}

int job_spec_check_slurm_value(const char *field, const char *v, bool option, bool time,
                               struct weir_error *err)
{
	size_t n = v ? strlen(v) : 0;

	if (n == 0 || n > 256)
		return vfail(err, field, "%s", "expected a value of 1 to 256 characters");
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return vfail(err, field, "%s",
			             "expected no control characters (no newline); it becomes one "
			             "argument of sbatch");
	if (option && v[0] != '-')
		return vfail(err, field, "expected an option starting with -, got \"%s\"", v);
	if (time && strspn(v, "0123456789:-") != n)
		return vfail(err, field,
		             "expected a Slurm time like 90, 2:00:00 or 1-12, got \"%s\"", v);
	return 0;
}

static int validate_slurm(const struct job_spec *spec, struct weir_error *err)
{
	const struct job_slurm *sl = &spec->slurm;
	char path[64];

	if (spec->queue) {
		size_t n = strlen(spec->queue);
		if (n == 0 || n > 64 ||
		    strspn(spec->queue, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		                        "0123456789_.-") != n)
			return vfail(err, "queue",
			             "expected a queue name ([A-Za-z0-9_.-], at most "
			             "64), got \"%s\"",
			             spec->queue);
	}
	if ((sl->partition &&
	     job_spec_check_slurm_value("slurm.partition", sl->partition, false, false, err) < 0) ||
	    (sl->account &&
	     job_spec_check_slurm_value("slurm.account", sl->account, false, false, err) < 0) ||
	    (sl->qos && job_spec_check_slurm_value("slurm.qos", sl->qos, false, false, err) < 0) ||
	    (sl->time && job_spec_check_slurm_value("slurm.time", sl->time, false, true, err) < 0))
		return -1;
	for (size_t i = 0; i < sl->n_sbatch_options; i++) {
		snprintf(path, sizeof path, "slurm.sbatch_options[%zu]", i);
		if (job_spec_check_slurm_value(path, sl->sbatch_options[i], true, false, err) < 0)
			return -1;
	}
	return 0;
}

/* env[i]'s error, its path written only now (a spec is validated at each
 * DAG task's start: a path a variable was most of the cost). */
static int env_fail(const struct env_var *env, size_t i, const char *prefix, const char *msg,
                    struct weir_error *err)
{
	char path[FIELD_PATH_MAX];

	snprintf(path, sizeof path, "%s.%s", prefix, env[i].name ? env[i].name : "?");
	return vfail(err, path, "%s", msg);
}

static int validate_env(const struct env_var *env, size_t n, const char *prefix,
                        struct weir_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (!env[i].name || !env_name_valid(env[i].name))
			return env_fail(env, i, prefix,
			                "expected an environment variable name like "
			                "[A-Za-z_][A-Za-z0-9_]*",
			                err);
		if (!env[i].value)
			return env_fail(env, i, prefix, "expected a value", err);
		for (size_t j = 0; j < i; j++)
			if (env[i].name[0] == env[j].name[0] && !strcmp(env[i].name, env[j].name))
				return env_fail(env, i, prefix, "set twice", err);
	}
	return 0;
}

static int validate_role(const struct job_spec *spec, const struct role_spec *ro,
                         struct weir_error *err)
{
	char path[FIELD_PATH_MAX];
	char num[160];

	snprintf(path, sizeof path, "roles.%s", ro->name);
	if (!role_name_valid(ro->name))
		return vfail(err, path, "%s",
		             "a role name must be [a-z][a-z0-9_-]* of at most 63 characters");
#define RANGE(field, key, lo, hi)                                                                  \
	if ((field) < (lo) || (field) > (hi)) {                                                    \
		snprintf(path, sizeof path, "roles.%s.%s", ro->name, key);                         \
		snprintf(num, sizeof num, "expected an integer from %lld to %lld, got %lld",       \
		         (long long)(lo), (long long)(hi), (long long)(field));                    \
		return vfail(err, path, "%s", num);                                                \
	}
	RANGE(ro->instances, "instances", 1, JOB_SPEC_MAX_INSTANCES);
	RANGE(ro->vcores, "vcores", 1, JOB_SPEC_MAX_VCORES);
	RANGE(ro->gpus, "gpus", 0, JOB_SPEC_MAX_GPUS);
#undef RANGE
	if (ro->memory_mb < 1 || ro->memory_mb > JOB_SPEC_MAX_MEMORY_MB) {
		snprintf(path, sizeof path, "roles.%s.memory", ro->name);
		return vfail(err, path, "%s", "expected an amount from 1m to 16t");
	}
	if ((!ro->command || !*ro->command) && (!spec->entry_point || !*spec->entry_point)) {
		snprintf(path, sizeof path, "roles.%s.command", ro->name);
		return vfail(err, path, "%s",
		             "missing; give the role a command or the job an entry_point");
	}
	snprintf(path, sizeof path, "roles.%s.env", ro->name);
	return validate_env(ro->env, ro->n_env, path, err);
}

int job_spec_validate(const struct job_spec *spec, struct weir_error *err)
{
	char num[160];

	if (!spec->name || !*spec->name || strlen(spec->name) > JOB_SPEC_MAX_NAME)
		return vfail(err, "name", "%s", "expected a name of 1 to 128 characters");
	for (const char *p = spec->name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return vfail(err, "name", "%s",
			             "expected no control characters in the name");
	if ((int)spec->framework < FRAMEWORK_NONE || spec->framework > FRAMEWORK_HOROVOD)
		return vfail(err, "framework", "%s",
		             "expected tensorflow, pytorch, mxnet, horovod or none");
	if (spec->priority < -JOB_SPEC_MAX_PRIORITY || spec->priority > JOB_SPEC_MAX_PRIORITY) {
		snprintf(num, sizeof num, "expected an integer from %d to %d, got %d",
		         -JOB_SPEC_MAX_PRIORITY, JOB_SPEC_MAX_PRIORITY, spec->priority);
		return vfail(err, "priority", "%s", num);
	}
	if (spec->n_roles == 0)
		return vfail(err, "roles", "%s",
		             "missing; a job needs at least one role, e.g. roles: {worker: "
		             "{instances: 2}}");
	if (spec->n_roles > JOB_SPEC_MAX_ROLES)
		return vfail(err, "roles", "%s", "more than 64 roles");
	bool tracked = false;
	for (size_t i = 0; i < spec->n_roles; i++) {
		const struct role_spec *ro = &spec->roles[i];
		if (!ro->name)
			return vfail(err, "roles", "%s", "a role has no name");
		if (validate_role(spec, ro, err) < 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(spec->roles[j].name, ro->name))
				return vfail(err, "roles", "role \"%s\" is given twice", ro->name);
		if (!ro->untracked && !ro->sidecar)
			tracked = true;
	}
	if (!tracked)
		return vfail(err, "roles", "%s",
		             "every role is untracked or a sidecar; at least one role must be "
		             "tracked (its result decides the job's)");
	if (spec->src_dir && spec->src_dir[0] != '/')
		return vfail(err, "src_dir", "expected an absolute path, got \"%s\"",
		             spec->src_dir);
	for (size_t i = 0; i < spec->n_artifacts; i++) {
		const struct artifact *a = &spec->artifacts[i];
		char path[64];
		snprintf(path, sizeof path, "artifacts[%zu].path", i);
		if (!a->path || a->path[0] != '/')
			return vfail(err, path, "expected an absolute path, got \"%s\"",
			             a->path ? a->path : "");
		snprintf(path, sizeof path, "artifacts[%zu].name", i);
		if (!a->name || !*a->name || strchr(a->name, '/') || !strcmp(a->name, ".") ||
		    !strcmp(a->name, ".."))
			return vfail(
			    err, path,
			    "expected one path component (not \".\" or \"..\"), got \"%s\"",
			    a->name ? a->name : "");
		for (size_t j = 0; j < i; j++)
			if (!strcmp(spec->artifacts[j].name, a->name))
				return vfail(err, path, "\"%s\" is used by another artifact",
				             a->name);
	}
	if (validate_env(spec->env, spec->n_env, "env", err) < 0)
		return -1;
	if ((int)spec->success < SUCCESS_CHIEF || spec->success > SUCCESS_ALL_WORKERS)
		return vfail(err, "success_policy", "%s", "expected chief or all");
	if (spec->max_restarts < 0 || spec->max_restarts > JOB_SPEC_MAX_RESTARTS) {
		snprintf(num, sizeof num, "expected an integer from 0 to %d, got %d",
		         JOB_SPEC_MAX_RESTARTS, spec->max_restarts);
		return vfail(err, "restart.max_restarts", "%s", num);
	}
	if (spec->retry_exit_min < 0 || spec->retry_exit_max > 255 ||
	    spec->retry_exit_min > spec->retry_exit_max)
		return vfail(err, "restart.retry_exit_codes", "%s",
		             "expected a range like 128-255 within 0-255");
	const int64_t t[3] = {spec->allocation_timeout_s, spec->registration_timeout_s,
	                      spec->execution_timeout_s};
	const char *tn[3] = {"timeouts.allocation", "timeouts.registration", "timeouts.execution"};
	for (int i = 0; i < 3; i++)
		if (t[i] < 0 || t[i] > JOB_SPEC_MAX_TIMEOUT_S)
			return vfail(err, tn[i], "%s",
			             "expected 0 (no limit) to a year of seconds");
	return validate_slurm(spec, err);
}

static void env_free(struct env_var *env, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(env[i].name);
		free(env[i].value);
	}
	free(env);
}

void job_spec_destroy(struct job_spec *spec)
{
	if (!spec)
		return;
	for (size_t i = 0; i < spec->n_roles; i++) {
		free(spec->roles[i].name);
		free(spec->roles[i].command);
		env_free(spec->roles[i].env, spec->roles[i].n_env);
	}
	free(spec->roles);
	for (size_t i = 0; i < spec->n_artifacts; i++) {
		free(spec->artifacts[i].path);
		free(spec->artifacts[i].name);
	}
	free(spec->artifacts);
	env_free(spec->env, spec->n_env);
	strvec_release(&spec->connections);
	strvec_release(&spec->mask);
	free(spec->name);
	free(spec->src_dir);
	free(spec->entry_point);
	free(spec->params);
	free(spec->python);
	free(spec->queue);
	free(spec->slurm.partition);
	free(spec->slurm.account);
	free(spec->slurm.qos);
	free(spec->slurm.time);
	for (size_t i = 0; i < spec->slurm.n_sbatch_options; i++)
		free(spec->slurm.sbatch_options[i]);
	free(spec->slurm.sbatch_options);
	free(spec);
}

char *job_spec_role_command(const struct job_spec *spec, const struct role_spec *role)
{
	char *out = NULL;
	if (role && role->command && *role->command)
		return strdup(role->command);
	if (!spec->entry_point || !*spec->entry_point)
		return NULL;
	bool py = spec->python && *spec->python;
	bool par = spec->params && *spec->params;
	if (asprintf(&out, "%s%s%s%s%s", py ? spec->python : "", py ? " " : "", spec->entry_point,
	             par ? " " : "", par ? spec->params : "") < 0)
		return NULL;
	return out;
}

const struct role_spec *job_spec_find_role(const struct job_spec *spec, const char *name)
{
	for (size_t i = 0; i < spec->n_roles; i++)
		if (!strcmp(spec->roles[i].name, name))
			return &spec->roles[i];
	return NULL;
}

const struct role_spec *job_spec_deciding_role(const struct job_spec *spec)
{
	const struct role_spec *r = job_spec_find_role(spec, "chief");
	if (r && !r->untracked && !r->sidecar)
		return r;
	r = job_spec_find_role(spec, "worker");
	if (r && !r->untracked && !r->sidecar)
		return r;
	for (size_t i = 0; i < spec->n_roles; i++)
		if (!spec->roles[i].untracked && !spec->roles[i].sidecar)
			return &spec->roles[i];
	return NULL;
}

int job_spec_task_count(const struct job_spec *spec)
{
	int n = 0;
	for (size_t i = 0; i < spec->n_roles; i++)
		n += spec->roles[i].instances;
	return n;
}
