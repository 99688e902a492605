/* field_reader.c: field-by-field reading with errors that name the field. */
#include "model/field_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fs.h"
#include "lib/str.h"
#include "model/duration.h"

void field_at(struct field_reader *r, const char *prefix, const char *key, size_t index)
{
	/* A path cut at FIELD_PATH_MAX still names the field well enough. */
	int n = key ? snprintf(r->path, sizeof r->path, "%s%s%s", prefix, *prefix ? "." : "", key)
	            : snprintf(r->path, sizeof r->path, "%s[%zu]", prefix, index);
	if (n < 0)
		r->path[0] = '\0';
}

int field_fail(struct field_reader *r, const char *fmt, const char *arg)
{
	char msg[WEIR_ERROR_MSG_MAX - FIELD_PATH_MAX - 8];
	snprintf(msg, sizeof msg, fmt, arg);
	return weir_error_set(r->err, WEIR_E_INVALID, "%s: %s",
	                      r->path[0]   ? r->path
	                      : r->subject ? r->subject
	                                   : "input",
	                      msg);
}

int field_oom(struct field_reader *r)
{
	return weir_error_set(r->err, WEIR_E_INTERNAL, "out of memory");
}

const char *field_type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "a mapping";
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

int field_check_keys(struct field_reader *r, json_t *obj, const char *prefix,
                     const char *const *keys)
{
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v)
	{
		bool ok = false;
		for (size_t i = 0; keys[i]; i++)
			if (!strcmp(keys[i], key))
				ok = true;
		if (!ok) {
			char list[512] = "";
			for (size_t i = 0; keys[i]; i++) {
				str_append(list, sizeof list, keys[i]);
				if (keys[i + 1])
					str_append(list, sizeof list, ", ");
			}
			field_at(r, prefix, key, 0);
			return field_fail(r, "unknown key; expected one of: %s", list);
		}
	}
	return 0;
}

int field_need_type(struct field_reader *r, json_t *v, const char *what, bool ok)
{
	if (ok)
		return 0;
	char msg[160];
	snprintf(msg, sizeof msg, "expected %s, got %%s", what);
	return field_fail(r, msg, field_type_name(v));
}

int field_get_string(struct field_reader *r, json_t *v, const char **out)
{
	if (field_need_type(r, v, "a string", json_is_string(v)) < 0)
		return -1;
	if (strlen(json_string_value(v)) != json_string_length(v))
		return field_fail(r, "%s", "a string must not contain NUL characters");
	*out = json_string_value(v);
	return 0;
}

int field_set_string(struct field_reader *r, char **field, const char *s)
{
	char *c = s ? strdup(s) : NULL;
	if (s && !c)
		return field_oom(r);
	free(*field);
	*field = c;
	return 0;
}

int field_dup_string(struct field_reader *r, json_t *v, char **field)
{
	const char *s;
	if (json_is_null(v))
		return field_set_string(r, field, NULL);
	if (field_get_string(r, v, &s) < 0)
		return -1;
	return field_set_string(r, field, s);
}

int field_get_int(struct field_reader *r, json_t *v, long long min, long long max, long long *out)
{
	if (field_need_type(r, v, "an integer", json_is_integer(v)) < 0)
		return -1;
	long long x = json_integer_value(v);
	if (x < min || x > max) {
		char msg[160];
		snprintf(msg, sizeof msg, "expected an integer from %lld to %lld, got %lld", min,
		         max, x);
		return field_fail(r, "%s", msg);
	}
	*out = x;
	return 0;
}

int field_get_bool(struct field_reader *r, json_t *v, bool *out)
{
	if (field_need_type(r, v, "true or false", json_is_boolean(v)) < 0)
		return -1;
	*out = json_is_true(v);
	return 0;
}

int field_read_duration(struct field_reader *r, json_t *v, int64_t *out)
{
	if (json_is_integer(v)) {
		long long x;
		if (field_get_int(r, v, 0, DURATION_MAX_S, &x) < 0)
			return -1;
		*out = x;
		return 0;
	}
	if (json_is_string(v)) {
		const char *s;
		if (field_get_string(r, v, &s) < 0)
			return -1;
		return duration_parse_s(s, r->path, out, r->err);
	}
	return field_fail(r, "expected seconds or a duration like 30s, 5m or 1h, got %s",
	                  field_type_name(v));
}

int field_read_path(struct field_reader *r, json_t *v, char **field)
{
	const char *s;
	if (json_is_null(v))
		return field_set_string(r, field, NULL);
	if (field_get_string(r, v, &s) < 0)
		return -1;
	if (!*s)
		return field_fail(r, "%s", "expected a path, got an empty string");
	if (s[0] == '/' || !r->base_dir)
		return field_set_string(r, field, s);
	const char *rel = s;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	char *joined = *rel && strcmp(rel, ".") ? fs_join(r->base_dir, rel) : strdup(r->base_dir);
	if (!joined)
		return field_oom(r);
	free(*field);
	*field = joined;
	return 0;
}
