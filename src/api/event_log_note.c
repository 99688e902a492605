/* event_log_note.c: recording a finished request in the event log
 * (event_log_note.h): its event by the route table, the ids of its path,
 * the names of its body's fields.
 */
#include "api/event_log_note.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/airflow/airflow_request.h"
#include "api/request.h"
#include "lib/clock.h"
#include "lib/json_util.h"
#include "lib/log.h"

/* Bodies larger than this are not parsed for their field names. */
#define FIELDS_BODY_MAX (256 * 1024)
#define FIELDS_MAX 64

static bool method_changes(const char *m)
{
	return m && (!strcasecmp(m, "POST") || !strcasecmp(m, "PUT") || !strcasecmp(m, "PATCH") ||
	             !strcasecmp(m, "DELETE"));
}

/* The event of a request, or NULL when the log does not keep it; `own`
 * receives a name made for a route without one. */
static const char *event_of(const char *method, const char *path, int route, char *own, size_t size)
{
	const char *e;

	if (!method_changes(method))
		return NULL;
	e = route_table_event(route, method);
	if (e)
		return *e ? e : NULL; /* "": a route that changes nothing (launch, batch lists) */
	if (strncmp(path, "/api/v1/", 8))
		return NULL;
	snprintf(own, size, "api.%s %s", method, route_table_template(route));
	return own;
}

/* A top-level string of `o` whose value is an identifier (never a secret). */
static const char *id_field(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s && *s && strlen(s) <= AIRFLOW_ID_MAX ? s : NULL;
}

/* extra's `fields`, and the identifiers the body names. */
static json_t *body_fields(struct http_request *req, json_t *extra, const char **run_id,
                           const struct route_match *m)
{
	size_t len;
	const char *body = http_request_body(req, &len);
	json_t *j, *names;
	const char *key;
	json_t *v;
	size_t n = 0;

	if (!len || len > FIELDS_BODY_MAX)
		return NULL;
	j = json_loadb(body, len, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	names = json_array();
	json_object_foreach(j, key, v)
	{
		if (n++ == FIELDS_MAX)
			break;
		json_array_append_new(names, json_string(key));
	}
	json_object_set_new(extra, "fields", names);
	if (!*run_id && id_field(j, "dag_run_id"))
		*run_id = id_field(j, "dag_run_id");
	if (id_field(j, "connection_id") && !route_match_param(m, "connection_id"))
		json_util_set_string(extra, "connection_id", id_field(j, "connection_id"));
	if (strstr(route_table_template(m->route), "/variables") && id_field(j, "key") &&
	    !route_match_param(m, "variable_key"))
		json_util_set_string(extra, "variable_key", id_field(j, "key"));
	/* weir users create, weir tokens create: whom and what */
	if (!strcmp(route_table_template(m->route), "/api/v1/weir/users") &&
	    id_field(j, "username"))
		json_util_set_string(extra, "username", id_field(j, "username"));
	if (!strcmp(route_table_template(m->route), "/api/v1/weir/tokens")) {
		if (id_field(j, "user"))
			json_util_set_string(extra, "username", id_field(j, "user"));
		if (id_field(j, "name"))
			json_util_set_string(extra, "token_name", id_field(j, "name"));
	}
	return j; /* the caller keeps it while *run_id points into it */
}

static bool param_int(const struct route_match *m, const char *name, int *out)
{
	const char *s = route_match_param(m, name);
	int64_t v;

	if (!s || api_parse_int(s, -1, 1000000000L, &v) < 0)
		return false;
	*out = (int)v;
	return true;
}

/* A path's id, "~" (every one) read as none. */
static const char *path_id(const struct route_match *m, const char *name)
{
	const char *s = route_match_param(m, name);

	return s && strcmp(s, "~") ? s : NULL;
}

void event_log_note(const struct observe_api_ops *ops, void *ctx, struct http_request *req,
                    const struct route_match *m, int status)
{
	struct event_log_row row = {0};
	struct weir_error err = {0};
	char own[200], peer[80];
	const char *method = http_request_method(req), *path = http_request_path(req);
	const char *event, *run_id, *user = http_request_user(req), *s;
	json_t *extra, *body = NULL, *answer = http_request_answer(req);
	int64_t job_id;

	if (!ops || !ops->event_record)
		return;
	event = event_of(method, path, m->route, own, sizeof own);
	if (!event)
		return;
	extra = json_object();
	if (!extra)
		return;
	run_id = path_id(m, "dag_run_id");
	json_util_set_string(extra, "method", method);
	json_util_set_string(extra, "path", path);
	json_util_set_string(extra, "route", route_table_template(m->route));
	json_object_set_new(extra, "status", json_integer(status));
	json_util_set_string(extra, "peer", http_request_peer(req, peer, sizeof peer));
	body = body_fields(req, extra, &run_id, m);
	/* what the answer names: a new job's id, a new run's id */
	if ((s = route_match_param(m, "job_id")) && api_parse_int(s, 1, INT64_MAX, &job_id) == 0)
		json_object_set_new(extra, "job_id", json_integer(job_id));
	else if (status < 300 && !strcmp(route_table_template(m->route), "/api/v1/jobs") &&
	         json_is_integer(json_object_get(answer, "id")))
		json_object_set(extra, "job_id", json_object_get(answer, "id"));
	if (!run_id && status < 300 && path_id(m, "dag_id"))
		run_id = id_field(answer, "dag_run_id");
	if ((s = route_match_param(m, "connection_id")))
		json_util_set_string(extra, "connection_id", s);
	if ((s = route_match_param(m, "variable_key")))
		json_util_set_string(extra, "variable_key", s);
	if ((s = route_match_param(m, "pool_name")))
		json_util_set_string(extra, "pool_name", s);
	if ((s = route_match_param(m, "username")))
		json_util_set_string(extra, "username", s);
	if ((s = route_match_param(m, "token_name")))
		json_util_set_string(extra, "token_name", s);
	/* a person's token: its name beside its user, the owner */
	if (*(s = http_request_token_name(req)))
		json_util_set_string(extra, "token", s);

	row.when_ms = clock_now_ms();
	row.event = (char *)event;
	row.owner = user && *user ? (char *)user : NULL;
	row.dag_id = (char *)path_id(m, "dag_id");
	row.task_id = (char *)path_id(m, "task_id");
	row.run_id = (char *)run_id;
	row.has_map_index = param_int(m, "map_index", &row.map_index);
	row.has_try_number = param_int(m, "task_try_number", &row.try_number);
	row.extra = json_dumps(extra, JSON_COMPACT | JSON_SORT_KEYS);
	if (!row.extra)
		log_warn("event log: out of memory recording %s %s", method, path);
	else if (ops->event_record(ctx, &row, &err) < 0 && err.kind != WEIR_E_UNAVAILABLE)
		/* unavailable: a full disk, which the store logs once, not at
		 * every request */
		log_warn("event log: %s %s not recorded: %s", method, path, err.msg);
	free(row.extra);
	json_decref(extra);
	json_decref(body);
}
