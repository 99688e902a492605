/* dag_spec_data.c: a DAG task's `sql:` or `transfer:` mapping
 * (dag_spec_internal.h): its keys and their types checked, its file paths
 * made absolute against the DAG file's folder, and the connections it
 * names added to the task's list.  What only the store can tell (a table
 * that exists, a column a key template names) is checked when it runs
 * (src/data/). */
#include "model/dag_spec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/connection.h"

static const char *const sql_keys[] = {"conn",     "statement",   "file", "parameters",
                                       "max_rows", "return_rows", NULL};
static const char *const transfer_keys[] = {"from", "to", "batch", NULL};
static const char *const from_keys[] = {"conn", "query", "parameters", "file", "format", NULL};
static const char *const to_keys[] = {"conn",   "table",  "mode",   "key",   "redis",
                                      "fields", "value",  "member", "score", "ttl",
                                      "file",   "format", NULL};

/* A string at obj.key (required or not); *out borrowed. */
static int get_str(struct field_reader *r, json_t *obj, const char *prefix, const char *key,
                   bool required, const char **out)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	field_at(r, prefix, key, 0);
	if (!v) {
		if (required)
			return field_fail(r, "%s", "is required");
		return 0;
	}
	if (field_get_string(r, v, out) < 0)
		return -1;
	if (!**out)
		return field_fail(r, "%s", "expected a non-empty string");
	return 0;
}

/* obj.conn: a connection id, added to the task's connections. */
static int read_conn(struct field_reader *r, struct dag_task *t, json_t *obj, const char *prefix)
{
	const char *id;
	struct weir_error e = {0};

	if (get_str(r, obj, prefix, "conn", true, &id) < 0)
		return -1;
	if (connection_check_id(id, &e) < 0)
		return field_fail(r, "%s", e.msg);
	for (size_t i = 0; i < t->connections.n; i++)
		if (!strcmp(t->connections.v[i], id))
			return 0;
	return strvec_push(&t->connections, id) < 0 ? field_oom(r) : 0;
}

/* obj.file made absolute in place.  A transfer's file may start with a
 * template ("{{ params.dir }}/x.csv"): its value decides, so it is kept as
 * written and must render to an absolute path (model/dag_job.c). */
static int read_file(struct field_reader *r, json_t *obj, const char *prefix, bool templated)
{
	char *path = NULL;
	const char *s = json_string_value(json_object_get(obj, "file"));
	int rc;

	field_at(r, prefix, "file", 0);
	if (templated && s && !strncmp(s, "{{", 2))
		return 0;
	if (field_read_path(r, json_object_get(obj, "file"), &path) < 0)
		return -1;
	rc = json_object_set_new(obj, "file", json_string(path));
	free(path);
	return rc < 0 ? field_oom(r) : 0;
}

static int read_format(struct field_reader *r, json_t *obj, const char *prefix)
{
	const char *f;

	if (get_str(r, obj, prefix, "format", false, &f) < 0)
		return -1;
	if (f && strcmp(f, "csv") && strcmp(f, "jsonl") && strcmp(f, "json") && strcmp(f, "ndjson"))
		return field_fail(r, "expected csv or jsonl, got \"%s\"", f);
	return 0;
}

int dag_read_parameters(struct field_reader *r, json_t *obj, const char *prefix)
{
	json_t *p = json_object_get(obj, "parameters"), *v;
	char base[FIELD_PATH_MAX];
	const char *k;

	if (!p)
		return 0;
	field_at(r, prefix, "parameters", 0);
	if (field_need_type(r, p, "a mapping of NAME: value", json_is_object(p)) < 0)
		return -1;
	snprintf(base, sizeof base, "%s.parameters", prefix);
	json_object_foreach(p, k, v)
	{
		field_at(r, base, k, 0);
		if (!dag_ident_valid(k))
			return field_fail(
			    r, "%s",
			    "expected a name of letters, digits and '_' (:NAME in the SQL)");
		if (json_is_object(v) || json_is_array(v))
			return field_fail(r, "expected a string, number, boolean or null, got %s",
			                  field_type_name(v));
	}
	return 0;
}

static int read_int(struct field_reader *r, json_t *obj, const char *prefix, const char *key,
                    long long min, long long max)
{
	json_t *v = json_object_get(obj, key);
	long long x;

	if (!v)
		return 0;
	field_at(r, prefix, key, 0);
	return field_get_int(r, v, min, max, &x);
}

static int read_sql(struct field_reader *r, struct dag_task *t, const char *prefix, json_t *v)
{
	const char *st, *file;

	if (read_conn(r, t, v, prefix) < 0 || get_str(r, v, prefix, "statement", false, &st) < 0 ||
	    get_str(r, v, prefix, "file", false, &file) < 0)
		return -1;
	if (!st == !file) {
		snprintf(r->path, sizeof r->path, "%s", prefix);
		return field_fail(r, "%s", "expected exactly one of statement and file");
	}
	if (file && read_file(r, v, prefix, false) < 0)
		return -1;
	if (json_object_get(v, "return_rows")) {
		bool b;
		field_at(r, prefix, "return_rows", 0);
		if (field_get_bool(r, json_object_get(v, "return_rows"), &b) < 0)
			return -1;
	}
	return dag_read_parameters(r, v, prefix) < 0 ? -1
	                                             : read_int(r, v, prefix, "max_rows", 0, 10000);
}

static int read_from(struct field_reader *r, struct dag_task *t, const char *prefix, json_t *v)
{
	const char *q;

	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping: {conn, query} or {file}", json_is_object(v)) < 0 ||
	    field_check_keys(r, v, prefix, from_keys) < 0)
		return -1;
	if (json_object_get(v, "file")) {
		if (json_object_get(v, "conn") || json_object_get(v, "query")) {
			snprintf(r->path, sizeof r->path, "%s", prefix);
			return field_fail(r, "%s",
			                  "expected a file or a conn with a query, not both");
		}
		return read_file(r, v, prefix, true) < 0 ? -1 : read_format(r, v, prefix);
	}
	if (read_conn(r, t, v, prefix) < 0 || get_str(r, v, prefix, "query", true, &q) < 0)
		return -1;
	return dag_read_parameters(r, v, prefix);
}

static int read_to(struct field_reader *r, struct dag_task *t, const char *prefix, json_t *v)
{
	const char *mode, *kind, *s;

	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping: {conn, table}, {conn, redis, key} or {file}",
	                    json_is_object(v)) < 0 ||
	    field_check_keys(r, v, prefix, to_keys) < 0)
		return -1;
	if (json_object_get(v, "file"))
		return read_file(r, v, prefix, true) < 0 ? -1 : read_format(r, v, prefix);
	if (read_conn(r, t, v, prefix) < 0 || get_str(r, v, prefix, "mode", false, &mode) < 0 ||
	    get_str(r, v, prefix, "redis", false, &kind) < 0)
		return -1;
	if (kind) {
		field_at(r, prefix, "redis", 0);
		if (strcmp(kind, "hash") && strcmp(kind, "string") && strcmp(kind, "zset"))
			return field_fail(r, "expected hash, string or zset, got \"%s\"", kind);
		if (get_str(r, v, prefix, "key", true, &s) < 0)
			return -1;
		field_at(r, prefix, "mode", 0);
		if (mode && strcmp(mode, "replace") && strcmp(mode, "append"))
			return field_fail(r, "expected replace or append, got \"%s\"", mode);
		if (!strcmp(kind, "zset") && (get_str(r, v, prefix, "member", true, &s) < 0 ||
		                              get_str(r, v, prefix, "score", true, &s) < 0))
			return -1;
		return read_int(r, v, prefix, "ttl", 0, 100LL * 365 * 86400);
	}
	if (get_str(r, v, prefix, "table", true, &s) < 0)
		return -1;
	field_at(r, prefix, "mode", 0);
	if (mode && strcmp(mode, "append") && strcmp(mode, "create") && strcmp(mode, "replace") &&
	    strcmp(mode, "upsert"))
		return field_fail(r, "expected create, replace, append or upsert, got \"%s\"",
		                  mode);
	if (mode && !strcmp(mode, "upsert") && !json_object_get(v, "key")) {
		field_at(r, prefix, "key", 0);
		return field_fail(r, "%s", "upsert needs a key: a column or a list of them");
	}
	return 0;
}

int dag_read_data(struct field_reader *r, struct dag_task *t, const char *prefix, json_t *v)
{
	char sub[FIELD_PATH_MAX];
	json_t *copy;

	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping", json_is_object(v)) < 0 ||
	    field_check_keys(r, v, prefix, t->kind == DAG_TASK_SQL ? sql_keys : transfer_keys) < 0)
		return -1;
	copy = json_deep_copy(v);
	if (!copy)
		return field_oom(r);
	json_decref(t->data);
	t->data = copy;
	if (t->kind == DAG_TASK_SQL)
		return read_sql(r, t, prefix, copy);
	snprintf(sub, sizeof sub, "%s.from", prefix);
	if (!json_object_get(copy, "from") || !json_object_get(copy, "to")) {
		field_at(r, prefix, json_object_get(copy, "from") ? "to" : "from", 0);
		return field_fail(r, "%s", "is required");
	}
	if (read_from(r, t, sub, json_object_get(copy, "from")) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s.to", prefix);
	if (read_to(r, t, sub, json_object_get(copy, "to")) < 0)
		return -1;
	return read_int(r, copy, prefix, "batch", 1, 1000000);
}

json_t *dag_data_parameters(const struct dag_task *t)
{
	if (!t->data)
		return NULL;
	if (t->kind == DAG_TASK_SQL)
		return json_object_get(t->data, "parameters");
	return json_object_get(json_object_get(t->data, "from"), "parameters");
}

const char *dag_data_file(const struct dag_task *t, const char *side)
{
	if (!t->data || t->kind != DAG_TASK_TRANSFER)
		return NULL;
	return json_string_value(json_object_get(json_object_get(t->data, side), "file"));
}
