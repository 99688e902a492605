/* job_spec_edit.c: defaults, small builders and the value parsers (memory,
 * durations, exit-code ranges) that every spec format shares. */
#include "model/job_spec_edit.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/field_reader.h"
#include "model/template.h"

struct job_spec *job_spec_create(void)
{
	struct job_spec *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->name = strdup(JOB_SPEC_DEFAULT_NAME);
	if (!s->name) {
		free(s);
		return NULL;
	}
	s->framework = FRAMEWORK_NONE;
	s->success = SUCCESS_CHIEF;
	s->retry_exit_min = JOB_SPEC_DEFAULT_RETRY_MIN;
	s->retry_exit_max = JOB_SPEC_DEFAULT_RETRY_MAX;
	s->registration_timeout_s = JOB_SPEC_DEFAULT_REGISTRATION_S;
	return s;
}

struct role_spec *job_spec_add_role(struct job_spec *spec, const char *name, struct weir_error *err)
{
	for (size_t i = 0; i < spec->n_roles; i++)
		if (!strcmp(spec->roles[i].name, name))
			return &spec->roles[i];
	char *copy = strdup(name);
	struct role_spec *nr = copy ? realloc(spec->roles, (spec->n_roles + 1) * sizeof *nr) : NULL;
	if (!nr) {
		free(copy);
		weir_error_oom(err);
		return NULL;
	}
	spec->roles = nr;
	struct role_spec *r = &nr[spec->n_roles++];
	memset(r, 0, sizeof *r);
	r->name = copy;
	r->instances = JOB_SPEC_DEFAULT_INSTANCES;
	r->memory_mb = JOB_SPEC_DEFAULT_MEMORY_MB;
	r->vcores = JOB_SPEC_DEFAULT_VCORES;
	r->gpus = JOB_SPEC_DEFAULT_GPUS;
	return r;
}

int env_list_set(struct env_var **env, size_t *n_env, const char *name, const char *value,
                 struct weir_error *err)
{
	char *v = strdup(value ? value : "");
	if (!v)
		return weir_error_oom(err);
	for (size_t i = 0; i < *n_env; i++) {
		if (!strcmp((*env)[i].name, name)) {
			free((*env)[i].value);
			(*env)[i].value = v;
			return 0;
		}
	}
	char *n = strdup(name);
	struct env_var *nv = n ? realloc(*env, (*n_env + 1) * sizeof *nv) : NULL;
	if (!nv) {
		free(n);
		free(v);
		return weir_error_oom(err);
	}
	*env = nv;
	nv[*n_env].name = n;
	nv[*n_env].value = v;
	(*n_env)++;
	return 0;
}

int job_spec_add_artifact(struct job_spec *spec, const char *path, const char *name, int archive,
                          struct weir_error *err)
{
	char *p = strdup(path);
	char *n = name ? strdup(name) : artifact_default_name(path);
	struct artifact *na =
	    p && n ? realloc(spec->artifacts, (spec->n_artifacts + 1) * sizeof *na) : NULL;
	if (!na) {
		free(p);
		free(n);
		return weir_error_oom(err);
	}
	spec->artifacts = na;
	na[spec->n_artifacts].path = p;
	na[spec->n_artifacts].name = n;
	na[spec->n_artifacts].archive = archive < 0 ? artifact_is_archive(path) : archive != 0;
	spec->n_artifacts++;
	return 0;
}

int job_spec_set_string(char **field, const char *value, struct weir_error *err)
{
	char *v = NULL;
	if (value && !(v = strdup(value)))
		return weir_error_oom(err);
	free(*field);
	*field = v;
	return 0;
}

static const char *const archive_exts[] = {
    ".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tbz2", ".txz", ".tar", ".zip", ".jar",
};

static size_t archive_ext_len(const char *path)
{
	size_t len = strlen(path);
	for (size_t i = 0; i < sizeof archive_exts / sizeof *archive_exts; i++) {
		size_t el = strlen(archive_exts[i]);
		if (len > el && !strcasecmp(path + len - el, archive_exts[i]))
			return el;
	}
	return 0;
}

bool artifact_is_archive(const char *path)
{
	return archive_ext_len(path) > 0;
}

char *artifact_default_name(const char *path)
{
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	size_t start = len;
	while (start > 0 && path[start - 1] != '/')
		start--;
	char *base = strndup(path + start, len - start);
	if (!base)
		return NULL;
	size_t el = archive_ext_len(base);
	if (el > 0)
		base[strlen(base) - el] = '\0';
	return base;
}

int parse_exit_range(const char *text, const char *field, int *min, int *max,
                     struct weir_error *err)
{
	char *end;
	long a, b;

	errno = 0;
	if (!isdigit((unsigned char)text[0]))
		goto bad;
	a = strtol(text, &end, 10);
	if (errno)
		goto bad;
	if (*end == '\0') {
		b = a;
	} else if (*end == '-' && isdigit((unsigned char)end[1])) {
		b = strtol(end + 1, &end, 10);
		if (errno || *end)
			goto bad;
	} else {
		goto bad;
	}
	if (a < 0 || b > 255 || a > b)
		goto bad;
	*min = (int)a;
	*max = (int)b;
	return 0;
bad:
	return weir_error_set(err, WEIR_E_INVALID,
	                      "%s: expected an exit code or a range like 128-255 within 0-255, "
	                      "got \"%s\"",
	                      field, text);
}

char *format_memory_mb(uint64_t mb, char *buf, size_t size)
{
	if (mb > 0 && mb % (1024ull * 1024) == 0)
		snprintf(buf, size, "%llut", (unsigned long long)(mb / (1024ull * 1024)));
	else if (mb > 0 && mb % 1024 == 0)
		snprintf(buf, size, "%llug", (unsigned long long)(mb / 1024));
	else
		snprintf(buf, size, "%llum", (unsigned long long)mb);
	return buf;
}

int parse_memory_mb(const char *text, const char *field, uint64_t *out, struct weir_error *err)
{
	const char *p = text;
	char *end;
	double v;
	double mult;

	if (!isdigit((unsigned char)*p) && *p != '.')
		goto bad;
	errno = 0;
	v = strtod(p, &end);
	if (errno || end == p || !isfinite(v))
		goto bad;
	/* strtod also reads hex and exponents; an amount is plain decimal. */
	for (const char *q = p; q < end; q++)
		if (!isdigit((unsigned char)*q) && *q != '.')
			goto bad;
	switch (tolower((unsigned char)*end)) {
	case '\0':
		mult = 1;
		break; /* MiB, as TonY */
	case 'k':
		mult = 1.0 / 1024;
		end++;
		break;
	case 'm':
		mult = 1;
		end++;
		break;
	case 'g':
		mult = 1024;
		end++;
		break;
	case 't':
		mult = 1024.0 * 1024;
		end++;
		break;
	default:
		goto bad;
	}
	if (mult != 1 || end[-1] == 'm' || end[-1] == 'M') {
		/* Allow "4gb", "4GiB", "4Gi". */
		if (tolower((unsigned char)*end) == 'i')
			end++;
		if (tolower((unsigned char)*end) == 'b')
			end++;
	}
	if (*end)
		goto bad;
	double mb = ceil(v * mult);
	if (mb < 1 || mb > (double)JOB_SPEC_MAX_MEMORY_MB)
		goto bad;
	*out = (uint64_t)mb;
	return 0;
bad:
	return weir_error_set(err, WEIR_E_INVALID,
	                      "%s: expected an amount like 4g or 512m (a plain number is MiB; "
	                      "1m to 16t), got \"%s\"",
	                      field, text);
}

bool role_name_valid(const char *name)
{
	size_t len = strlen(name);
	if (len < 1 || len > 63 || !(name[0] >= 'a' && name[0] <= 'z'))
		return false;
	for (size_t i = 1; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

bool env_name_valid(const char *name)
{
	if (!name[0] || isdigit((unsigned char)name[0]))
		return false;
	for (const char *p = name; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

int env_list_read(struct field_reader *r, json_t *v, const char *prefix, struct env_var **env,
                  size_t *n_env)
{
	const char *key;
	json_t *val;

	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping of NAME: value", json_is_object(v)) < 0)
		return -1;
	json_object_foreach(v, key, val)
	{
		field_at(r, prefix, key, 0);
		if (!env_name_valid(key))
			return field_fail(
			    r, "%s",
			    "expected an environment variable name like [A-Za-z_][A-Za-z0-9_]*");
		if (json_is_object(val) || json_is_array(val) || json_is_null(val))
			return field_fail(r, "expected a string value, got %s",
			                  field_type_name(val));
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
