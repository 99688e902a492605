/* dag_spec_sensor.c: a DAG task's `sensor:` mapping (dag_spec_internal.h,
 * model/dag_spec.h): exactly one thing to wait for (file, external_task,
 * time, delta, http, sql) and the options of the wait (poke_interval,
 * timeout, soft_fail, exponential_backoff, max_wait, mode), checked; a
 * file sensor's folder made absolute; the connection it names added to
 * the task's list; and its templated fields (a file's path, an http
 * sensor's url, path and match, a sql sensor's parameter values, an
 * external_task's ids) rendered for a try and checked again.  What only a
 * poke can tell (a URL that answers, a query that runs) is learnt when it
 * pokes (data/sensor_poke.h).
 *
 * The same reader checks a DAG file's mapping (`templates`: a field that
 * holds "{{" is a template whose value decides, checked once rendered)
 * and a rendered one (every field checked as it is). */
#include "model/dag_spec_internal.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/connection.h"
#include "model/duration.h"
#include "model/states.h"
#include "model/template.h"

static const char *const kind_names[] = {
    [DAG_SENSOR_FILE] = "file",       [DAG_SENSOR_EXTERNAL_TASK] = "external_task",
    [DAG_SENSOR_TIME] = "time",       [DAG_SENSOR_DELTA] = "delta",
    [DAG_SENSOR_HTTP] = "http",       [DAG_SENSOR_SQL] = "sql",
    [DAG_SENSOR_COMMAND] = "command",
};
_Static_assert(sizeof kind_names / sizeof kind_names[0] == DAG_SENSOR_KIND_COUNT,
               "a name per sensor kind");

static const char *const sensor_keys[] = {
    "file",     "external_task", "time",    "delta",     "http",
    "sql",      "poke_interval", "timeout", "soft_fail", "exponential_backoff",
    "max_wait", "mode",          "command", NULL};
static const char *const file_keys[] = {"path", "folder", "conn", NULL};
static const char *const ext_keys[] = {
    "dag_id",        "task_id",        "task_ids",        "task_group_id",   "states",
    "failed_states", "skipped_states", "execution_delta", "check_existence", NULL};
static const char *const http_keys[] = {"url",   "conn",    "path",    "status",
                                        "match", "timeout", "ca_file", NULL};
static const char *const sql_keys[] = {"conn", "query", "parameters", NULL};

/* The fields of each kind that are templates (sql: the parameters' values). */
static const char *const file_templates[] = {"path", NULL};
static const char *const ext_templates[] = {"dag_id", "task_id", NULL};
static const char *const http_templates[] = {"url", "path", "match", NULL};

static bool has_braces(const char *s)
{
	return s && strstr(s, "{{");
}

const char *dag_sensor_kind_name(enum dag_sensor_kind k)
{
	return (unsigned)k < DAG_SENSOR_KIND_COUNT ? kind_names[k] : "?";
}

const char *dag_sensor_mode_name(enum dag_sensor_mode m)
{
	return m == DAG_SENSOR_RESCHEDULE ? "reschedule" : "poke";
}

void dag_sensor_free(struct dag_sensor *s)
{
	if (!s)
		return;
	json_decref(s->spec);
	free(s);
}

/* A non-empty string at obj.key; *out borrowed (NULL when absent and not
 * required). */
static int get_str(struct field_reader *r, json_t *obj, const char *prefix, const char *key,
                   bool required, const char **out)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	field_at(r, prefix, key, 0);
	if (!v)
		return required ? field_fail(r, "%s", "is required") : 0;
	if (field_get_string(r, v, out) < 0)
		return -1;
	return **out ? 0 : field_fail(r, "%s", "expected a non-empty string");
}

/* obj.conn (optional unless required): a connection id, added to the
 * task's connections when t is given. */
static int read_conn(struct field_reader *r, struct dag_task *t, json_t *obj, const char *prefix,
                     bool required)
{
	const char *id;
	struct weir_error e = {0};

	if (get_str(r, obj, prefix, "conn", required, &id) < 0)
		return -1;
	if (!id)
		return 0;
	if (connection_check_id(id, &e) < 0)
		return field_fail(r, "%s", e.msg);
	if (!t)
		return 0;
	for (size_t i = 0; i < t->connections.n; i++)
		if (!strcmp(t->connections.v[i], id))
			return 0;
	return strvec_push(&t->connections, id) < 0 ? field_oom(r) : 0;
}

/* A duration in ms: whole seconds, a number with a fraction ("0.5") or a
 * duration text ("30s", "5m"). */
static int read_ms(struct field_reader *r, json_t *obj, const char *prefix, const char *key,
                   int64_t min_ms, int64_t *out)
{
	json_t *v = json_object_get(obj, key);
	int64_t s;

	if (!v)
		return 0;
	field_at(r, prefix, key, 0);
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (!(d * 1000 >= (double)min_ms) || d > (double)DURATION_MAX_S)
			return field_fail(r, "%s", "expected a duration within a year");
		*out = (int64_t)(d * 1000);
		return 0;
	}
	if (field_read_duration(r, v, &s) < 0)
		return -1;
	if (s * 1000 < min_ms)
		return field_fail(r, "%s", "expected a longer duration");
	*out = s * 1000;
	return 0;
}

/* A path below a folder: relative, no "..", no empty glob. */
static int check_rel_path(struct field_reader *r, const char *path)
{
	const char *p = path;

	if (path[0] == '/')
		return field_fail(r,
		                  "expected a path relative to the sensor's folder (folder: or "
		                  "conn:), got an absolute one: \"%s\"",
		                  path);
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 2 && !strncmp(p, "..", 2))
			return field_fail(
			    r, "expected a path inside the folder (no \"..\"), got \"%s\"", path);
		p += n;
		p += *p == '/';
	}
	return 0;
}

static int read_file(struct field_reader *r, struct dag_task *t, json_t *v, const char *prefix)
{
	const char *path;
	char *folder = NULL;
	json_t *f;

	if (get_str(r, v, prefix, "path", true, &path) < 0 || check_rel_path(r, path) < 0 ||
	    read_conn(r, t, v, prefix, false) < 0)
		return -1;
	f = json_object_get(v, "folder");
	if (f && json_object_get(v, "conn")) {
		field_at(r, prefix, "folder", 0);
		return field_fail(r, "%s", "expected a folder or an fs conn, not both");
	}
	if (json_object_get(v, "conn"))
		return 0;
	/* the DAG file's folder unless one is given (relative to it) */
	field_at(r, prefix, "folder", 0);
	if (f) {
		if (field_read_path(r, f, &folder) < 0)
			return -1;
	} else if (r->base_dir) {
		folder = strdup(r->base_dir);
	} else {
		return field_fail(r, "%s", "is required when the DAG has no folder of its own");
	}
	if (!folder || json_object_set_new(v, "folder", json_string(folder)) < 0) {
		free(folder);
		return field_oom(r);
	}
	free(folder);
	return 0;
}

/* A list of TI state names (or one name) at obj.key, stored back as a list. */
static int read_states(struct field_reader *r, json_t *obj, const char *prefix, const char *key,
                       const char *dflt)
{
	json_t *v = json_object_get(obj, key), *list, *x;
	size_t i;

	field_at(r, prefix, key, 0);
	if (!v) {
		if (!dflt)
			return 0;
		return json_object_set_new(obj, key, json_pack("[s]", dflt)) < 0 ? field_oom(r) : 0;
	}
	if (json_is_string(v)) {
		list = json_pack("[O]", v);
		if (!list || json_object_set_new(obj, key, list) < 0)
			return field_oom(r);
		v = list;
	}
	if (field_need_type(r, v, "a list of task-instance states", json_is_array(v)) < 0)
		return -1;
	json_array_foreach(v, i, x)
	{
		enum dag_ti_state s;
		field_at(r, prefix, key, i);
		snprintf(r->path, sizeof r->path, "%s.%s[%zu]", prefix, key, i);
		if (!json_is_string(x) || dag_ti_state_from_name(json_string_value(x), &s) < 0)
			return field_fail(r, "%s",
			                  "expected a task-instance state (success, failed, "
			                  "skipped, upstream_failed, ...)");
	}
	return 0;
}

/* An external_task's task_ids (a non-empty list of task ids, no template)
 * or task_group_id (a group's id: its tasks are those whose ids start with
 * it and a dot); at most one of them and task_id (has_task_id). */
static int read_task_ids(struct field_reader *r, json_t *v, const char *prefix, bool has_task_id)
{
	json_t *ids = json_object_get(v, "task_ids"), *x;
	const char *group;
	size_t i;

	if (get_str(r, v, prefix, "task_group_id", false, &group) < 0)
		return -1;
	if (group && !dag_id_valid(group, true))
		return field_fail(r, "expected a task group id, got \"%s\"", group);
	field_at(r, prefix, "task_ids", 0);
	if ((has_task_id + (ids != NULL) + (group != NULL)) > 1)
		return field_fail(r, "%s", "give one of task_id, task_ids and task_group_id");
	if (!ids)
		return 0;
	if (field_need_type(r, ids, "a non-empty list of task ids",
	                    json_is_array(ids) && json_array_size(ids) > 0) < 0)
		return -1;
	json_array_foreach(ids, i, x)
	{
		field_at(r, prefix, "task_ids", 0);
		snprintf(r->path, sizeof r->path, "%s.task_ids[%zu]", prefix, i);
		if (!json_is_string(x) || !dag_id_valid(json_string_value(x), true))
			return field_fail(r, "%s", "expected a task id");
	}
	return 0;
}

static int read_external(struct field_reader *r, json_t *v, const char *prefix, bool templates)
{
	const char *s;
	int64_t d = 0;

	if (get_str(r, v, prefix, "dag_id", true, &s) < 0)
		return -1;
	if (!(templates && has_braces(s)) && !dag_id_valid(s, true))
		return field_fail(r, "expected a DAG id, got \"%s\"", s);
	if (get_str(r, v, prefix, "task_id", false, &s) < 0)
		return -1;
	if (s && !(templates && has_braces(s)) && !dag_id_valid(s, true))
		return field_fail(r, "expected a task id, got \"%s\"", s);
	if (read_task_ids(r, v, prefix, s != NULL) < 0)
		return -1;
	if (read_states(r, v, prefix, "states", "success") < 0 ||
	    read_states(r, v, prefix, "failed_states", NULL) < 0 ||
	    read_states(r, v, prefix, "skipped_states", NULL) < 0)
		return -1;
	field_at(r, prefix, "check_existence", 0);
	if (json_object_get(v, "check_existence")) {
		bool b;
		if (field_get_bool(r, json_object_get(v, "check_existence"), &b) < 0)
			return -1;
	}
	field_at(r, prefix, "execution_delta", 0);
	if (json_object_get(v, "execution_delta")) {
		json_t *x = json_object_get(v, "execution_delta");
		/* a negative delta looks ahead: "-1h" */
		if (json_is_string(x) && json_string_value(x)[0] == '-') {
			json_t *pos = json_string(json_string_value(x) + 1);
			int rc = pos ? field_read_duration(r, pos, &d) : field_oom(r);
			json_decref(pos);
			if (rc < 0)
				return -1;
			d = -d;
		} else if (json_is_integer(x) && json_integer_value(x) < 0) {
			d = json_integer_value(x);
			if (d < -DURATION_MAX_S)
				return field_fail(r, "%s", "expected a duration within a year");
		} else if (field_read_duration(r, x, &d) < 0) {
			return -1;
		}
	}
	/* stored as seconds: what the poke subtracts from the logical date */
	return json_object_set_new(v, "execution_delta", json_integer(d)) < 0 ? field_oom(r) : 0;
}

static int read_time(struct field_reader *r, json_t *obj, const char *prefix)
{
	const char *s;
	int h, m, sec = 0, n = 0;

	if (get_str(r, obj, prefix, "time", true, &s) < 0)
		return -1;
	if ((sscanf(s, "%2d:%2d%n", &h, &m, &n) != 2 ||
	     (s[n] && sscanf(s + n, ":%2d%n", &sec, &n) != 1)) ||
	    h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59)
		return field_fail(r, "expected a time of day \"HH:MM\" (UTC), got \"%s\"", s);
	return 0;
}

/* Whether s holds a space or a control character (which would break the
 * request line, or add a header). */
static bool has_blank(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return true;
	return false;
}

static int read_http(struct field_reader *r, struct dag_task *t, json_t *v, const char *prefix,
                     bool templates)
{
	const char *url, *path, *match, *ca_file;
	json_t *st;
	long long status = 200;
	int64_t to = 10000;

	if (get_str(r, v, prefix, "url", false, &url) < 0 ||
	    read_conn(r, t, v, prefix, false) < 0 ||
	    get_str(r, v, prefix, "path", false, &path) < 0 ||
	    get_str(r, v, prefix, "match", false, &match) < 0 ||
	    get_str(r, v, prefix, "ca_file", false, &ca_file) < 0)
		return -1;
	if (!url == !json_object_get(v, "conn")) {
		snprintf(r->path, sizeof r->path, "%s", prefix);
		return field_fail(r, "%s",
		                  "expected exactly one of url and conn (an http connection)");
	}
	/* a template's value is checked once rendered (dag_sensor_render) */
	if (templates) {
		url = has_braces(url) ? NULL : url;
		path = has_braces(path) ? NULL : path;
		match = has_braces(match) ? NULL : match;
	}
	field_at(r, prefix, "url", 0);
	if (url && strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return field_fail(r, "expected a URL starting with http:// or https://, got \"%s\"",
		                  url);
	if (url && has_blank(url))
		return field_fail(
		    r, "expected a URL without spaces or control characters, got \"%s\"", url);
	if (url) {
		size_t sl = url[4] == 's' ? 8 : 7;
		if (!url[sl] || url[sl] == '/')
			return field_fail(r, "expected http[s]://HOST[:PORT][/PATH], got \"%s\"",
			                  url);
	}
	field_at(r, prefix, "ca_file", 0);
	if (ca_file && ca_file[0] != '/')
		return field_fail(r,
		                  "expected an absolute path to a PEM file of CA certificates, "
		                  "got \"%s\"",
		                  ca_file);
	field_at(r, prefix, "path", 0);
	if (path && path[0] != '/')
		return field_fail(r, "expected a path starting with '/', got \"%s\"", path);
	if (path && has_blank(path))
		return field_fail(
		    r, "expected a path without spaces or control characters, got \"%s\"", path);
	if (match) {
		regex_t re;
		field_at(r, prefix, "match", 0);
		if (regcomp(&re, match, REG_EXTENDED | REG_NOSUB) != 0)
			return field_fail(
			    r, "expected a regular expression (POSIX extended), got \"%s\"", match);
		regfree(&re);
	}
	if ((st = json_object_get(v, "status"))) {
		field_at(r, prefix, "status", 0);
		if (field_get_int(r, st, 100, 599, &status) < 0)
			return -1;
	}
	if (read_ms(r, v, prefix, "timeout", 100, &to) < 0)
		return -1;
	if (json_object_set_new(v, "status", json_integer(status)) < 0 ||
	    json_object_set_new(v, "timeout", json_real((double)to / 1000)) < 0)
		return field_oom(r);
	return 0;
}

static int read_sql(struct field_reader *r, struct dag_task *t, json_t *v, const char *prefix)
{
	const char *q;

	if (read_conn(r, t, v, prefix, true) < 0 || get_str(r, v, prefix, "query", true, &q) < 0)
		return -1;
	/* the query is fixed text, as a sql: task's statement; an Airflow file's
	 * '{{ ds }}' in it would silently never match */
	if (has_braces(q))
		return field_fail(
		    r, "%s",
		    "expected a fixed query, not a template: bind values as :name and "
		    "give them in parameters (parameters: {ds: \"{{ ds }}\"})");
	return dag_read_parameters(r, v, prefix);
}

/* The kind's value at spec[name], checked (and completed) in place. */
static int read_kind(struct field_reader *r, struct dag_task *t, json_t *spec, const char *prefix,
                     enum dag_sensor_kind kind, bool templates)
{
	char sub[FIELD_PATH_MAX];
	json_t *v = json_object_get(spec, kind_names[kind]);
	const char *const *keys = NULL;

	snprintf(sub, sizeof sub, "%s.%s", prefix, kind_names[kind]);
	snprintf(r->path, sizeof r->path, "%s", sub);
	switch (kind) {
	case DAG_SENSOR_COMMAND:
		/* the marker dag_read_sensor() sets on a command task's options */
		return field_need_type(r, v, "true (the task's command is the poke)",
		                       json_is_true(v));
	case DAG_SENSOR_TIME:
		return read_time(r, spec, prefix);
	case DAG_SENSOR_DELTA: {
		int64_t ms = 0;
		if (read_ms(r, spec, prefix, "delta", 0, &ms) < 0)
			return -1;
		return json_object_set_new(spec, "delta", json_integer(ms / 1000)) < 0
		           ? field_oom(r)
		           : 0;
	}
	case DAG_SENSOR_FILE:
		keys = file_keys;
		break;
	case DAG_SENSOR_EXTERNAL_TASK:
		keys = ext_keys;
		break;
	case DAG_SENSOR_HTTP:
		keys = http_keys;
		break;
	case DAG_SENSOR_SQL:
		keys = sql_keys;
		break;
	}
	if (field_need_type(r, v, "a mapping", json_is_object(v)) < 0 ||
	    field_check_keys(r, v, sub, keys) < 0)
		return -1;
	switch (kind) {
	case DAG_SENSOR_FILE:
		return read_file(r, t, v, sub);
	case DAG_SENSOR_EXTERNAL_TASK:
		return read_external(r, v, sub, templates);
	case DAG_SENSOR_HTTP:
		return read_http(r, t, v, sub, templates);
	case DAG_SENSOR_SQL:
		return read_sql(r, t, v, sub);
	default:
		return 0;
	}
}

/* The options, into s and back into spec with their defaults. */
static int read_options(struct field_reader *r, json_t *spec, const char *prefix,
                        struct dag_sensor *s)
{
	json_t *v;
	const char *mode;

	s->poke_interval_ms = DAG_SENSOR_DEFAULT_POKE_MS;
	s->timeout_ms = DAG_SENSOR_DEFAULT_TIMEOUT_MS;
	if (read_ms(r, spec, prefix, "poke_interval", 50, &s->poke_interval_ms) < 0 ||
	    read_ms(r, spec, prefix, "timeout", 1, &s->timeout_ms) < 0 ||
	    read_ms(r, spec, prefix, "max_wait", 50, &s->max_wait_ms) < 0)
		return -1;
	if ((v = json_object_get(spec, "soft_fail"))) {
		field_at(r, prefix, "soft_fail", 0);
		if (field_get_bool(r, v, &s->soft_fail) < 0)
			return -1;
	}
	if ((v = json_object_get(spec, "exponential_backoff"))) {
		field_at(r, prefix, "exponential_backoff", 0);
		if (field_get_bool(r, v, &s->exponential_backoff) < 0)
			return -1;
	}
	if (get_str(r, spec, prefix, "mode", false, &mode) < 0)
		return -1;
	if (mode && strcmp(mode, "poke") && strcmp(mode, "reschedule"))
		return field_fail(r, "expected poke or reschedule, got \"%s\"", mode);
	s->mode = mode && !strcmp(mode, "reschedule") ? DAG_SENSOR_RESCHEDULE : DAG_SENSOR_POKE;
	/* the checked form carries every option as a number of ms */
	if (json_object_set_new(spec, "poke_interval",
	                        json_real((double)s->poke_interval_ms / 1000)) < 0 ||
	    json_object_set_new(spec, "timeout", json_real((double)s->timeout_ms / 1000)) < 0 ||
	    json_object_set_new(spec, "soft_fail", json_boolean(s->soft_fail)) < 0 ||
	    json_object_set_new(spec, "exponential_backoff", json_boolean(s->exponential_backoff)) <
	        0 ||
	    json_object_set_new(spec, "mode", json_string(dag_sensor_mode_name(s->mode))) < 0 ||
	    (s->max_wait_ms &&
	     json_object_set_new(spec, "max_wait", json_real((double)s->max_wait_ms / 1000)) < 0))
		return field_oom(r);
	return 0;
}

/* Reads a `sensor:` mapping into a new dag_sensor (t, when given, gets the
 * connection it names; templates: a DAG file's mapping, not a rendered one). */
static struct dag_sensor *read_sensor(struct field_reader *r, struct dag_task *t,
                                      const char *prefix, const json_t *v, bool templates)
{
	struct dag_sensor *s;
	int found = -1;

	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, (json_t *)v,
	                    "a mapping: {file | external_task | time | delta | http | sql, ...}",
	                    json_is_object(v)) < 0 ||
	    field_check_keys(r, (json_t *)v, prefix, sensor_keys) < 0)
		return NULL;
	for (int k = 0; k < DAG_SENSOR_KIND_COUNT; k++) {
		if (!json_object_get(v, kind_names[k]))
			continue;
		if (found >= 0) {
			snprintf(r->path, sizeof r->path, "%s", prefix);
			field_fail(r, "%s",
			           "expected one of file, external_task, time, delta, http and "
			           "sql, got more");
			return NULL;
		}
		found = k;
	}
	if (found < 0) {
		snprintf(r->path, sizeof r->path, "%s", prefix);
		field_fail(r, "%s",
		           "expected one of file, external_task, time, delta, http and sql: what "
		           "it waits for");
		return NULL;
	}
	s = calloc(1, sizeof *s);
	if (!s || !(s->spec = json_deep_copy(v))) {
		free(s);
		field_oom(r);
		return NULL;
	}
	s->kind = (enum dag_sensor_kind)found;
	if (read_kind(r, t, s->spec, prefix, s->kind, templates) < 0 ||
	    read_options(r, s->spec, prefix, s) < 0) {
		dag_sensor_free(s);
		return NULL;
	}
	s->what = json_object_get(s->spec, kind_names[s->kind]);
	return s;
}

int dag_read_sensor(struct field_reader *r, struct dag_task *t, const char *prefix, json_t *v)
{
	struct dag_sensor *s = read_sensor(r, t, prefix, v, true);

	if (!s)
		return -1;
	if (s->kind == DAG_SENSOR_COMMAND) {
		snprintf(r->path, sizeof r->path, "%s.command", prefix);
		dag_sensor_free(s);
		return field_fail(r, "%s",
		                  "a sensor whose poke is a command: write the task's command: "
		                  "and its sensor: options beside it");
	}
	dag_sensor_free(t->sensor);
	t->sensor = s;
	t->kind = DAG_TASK_SENSOR;
	return 0;
}

int dag_read_command_sensor(struct field_reader *r, struct dag_task *t, const char *prefix,
                            json_t *v)
{
	json_t *opts;
	struct dag_sensor *s;

	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping of sensor options (poke_interval, timeout, ...)",
	                    json_is_object(v)) < 0)
		return -1;
	/* (its own "command": true, written back by dag_spec_json.c, reads again) */
	for (int k = 0; k < DAG_SENSOR_KIND_COUNT; k++)
		if (k != DAG_SENSOR_COMMAND && json_object_get(v, kind_names[k])) {
			snprintf(r->path, sizeof r->path, "%s.%s", prefix, kind_names[k]);
			return field_fail(
			    r, "%s",
			    "a command task's sensor: holds options only (its command "
			    "is the poke)");
		}
	if (!(opts = json_deep_copy(v)) || json_object_set_new(opts, "command", json_true()) < 0) {
		json_decref(opts);
		return field_oom(r);
	}
	s = read_sensor(r, t, prefix, opts, true);
	json_decref(opts);
	if (!s)
		return -1;
	dag_sensor_free(t->sensor);
	t->sensor = s;
	return 0;
}

struct dag_sensor *dag_sensor_from_spec(const json_t *spec, struct weir_error *err)
{
	struct field_reader r = {.subject = "sensor", .err = err};

	return read_sensor(&r, NULL, "sensor", spec, false);
}

/* ---- templates ---- */

static int each_template(json_t *what, enum dag_sensor_kind kind, dag_sensor_template_fn fn,
                         void *arg)
{
	const char *const *keys = kind == DAG_SENSOR_FILE            ? file_templates
	                          : kind == DAG_SENSOR_EXTERNAL_TASK ? ext_templates
	                          : kind == DAG_SENSOR_HTTP          ? http_templates
	                                                             : NULL;
	char field[FIELD_PATH_MAX];
	const char *k;
	json_t *v;
	int rc;

	for (size_t i = 0; keys && keys[i]; i++) {
		v = json_object_get(what, keys[i]);
		if (!has_braces(json_string_value(v)))
			continue;
		snprintf(field, sizeof field, "%s.%s", kind_names[kind], keys[i]);
		if ((rc = fn(arg, field, v)) != 0)
			return rc;
	}
	if (kind != DAG_SENSOR_SQL)
		return 0;
	json_object_foreach(json_object_get(what, "parameters"), k, v)
	{
		if (!has_braces(json_string_value(v)))
			continue;
		snprintf(field, sizeof field, "sql.parameters.%s", k);
		if ((rc = fn(arg, field, v)) != 0)
			return rc;
	}
	return 0;
}

int dag_sensor_each_template(const struct dag_sensor *s, dag_sensor_template_fn fn, void *arg)
{
	return each_template(s->what, s->kind, fn, arg);
}

struct render_arg {
	const struct template_ctx *ctx;
	struct weir_error *err;
};

static int render_field(void *arg, const char *field, json_t *str)
{
	struct render_arg *a = arg;
	char *s = template_render(json_string_value(str), a->ctx, TEMPLATE_RAW, a->err);
	int rc;

	if (!s) {
		weir_error_prefix(a->err, "sensor.%s", field);
		return -1;
	}
	rc = json_string_set(str, s);
	free(s);
	if (rc < 0)
		return weir_error_set(a->err, WEIR_E_INVALID,
		                      "sensor.%s: the rendered value is not valid UTF-8", field);
	return 0;
}

struct dag_sensor *dag_sensor_render(const struct dag_sensor *s, const struct template_ctx *ctx,
                                     struct weir_error *err)
{
	struct render_arg a = {ctx, err};
	json_t *spec = json_deep_copy(s->spec);
	struct dag_sensor *out = NULL;

	if (!spec) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	/* rendered, the mapping is read again as a rendered one: every check
	 * of a DAG file's field (a path inside the folder, an http URL, ids)
	 * applies to the values */
	if (each_template(json_object_get(spec, kind_names[s->kind]), s->kind, render_field, &a) ==
	    0)
		out = dag_sensor_from_spec(spec, err);
	json_decref(spec);
	return out;
}
