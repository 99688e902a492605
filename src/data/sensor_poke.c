/* sensor_poke.c: one poke of each kind, and `weir task-sensor`
 * (sensor_poke.h). */
#include "data/sensor_poke.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "data/driver.h"
#include "data/task.h"
#include "lib/clock.h"
#include "lib/http_client.h"
#include "lib/strbuf.h"
#include "lib/tls.h"

static enum sensor_outcome say(enum sensor_outcome o, char *msg, size_t size, const char *fmt,
                               const char *a, const char *b)
{
	snprintf(msg, size, fmt, a ? a : "", b ? b : "");
	return o;
}

/* ---- file ---- */

/* Whether `path` (resolved) lies inside folder `root` (resolved). */
static bool inside(const char *root, const char *path)
{
	size_t n = strlen(root);

	return !strncmp(root, path, n) && (path[n] == '/' || path[n] == '\0' || n == 1);
}

static enum sensor_outcome poke_file(const struct dag_sensor *s, const struct connection *conn,
                                     char *msg, size_t size)
{
	const char *rel = json_string_value(json_object_get(s->what, "path"));
	const char *folder = json_string_value(json_object_get(s->what, "folder"));
	char *from_conn = NULL, pattern[PATH_MAX], root[PATH_MAX], real[PATH_MAX];
	enum sensor_outcome o = SENSOR_NOT_YET;
	glob_t g = {0};
	int rc;

	if (!folder) {
		if (!conn || conn->kind != CONN_FS || !(from_conn = connection_path(conn)))
			return say(SENSOR_ERROR, msg, size,
			           "file: conn %s%s is no fs connection with a path",
			           json_string_value(json_object_get(s->what, "conn")), NULL);
		folder = from_conn;
	}
	if (!realpath(folder, root)) {
		o = say(SENSOR_NOT_YET, msg, size, "folder %s: %s", folder, strerror(errno));
		goto out;
	}
	snprintf(pattern, sizeof pattern, "%s/%s", root, rel);
	rc = glob(pattern, GLOB_NOSORT, NULL, &g);
	if (rc == GLOB_NOMATCH || rc != 0) {
		o = say(SENSOR_NOT_YET, msg, size, "no file matches %s%s", rel, NULL);
		goto out;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		/* a link that leads out of the folder does not count */
		if (realpath(g.gl_pathv[i], real) && inside(root, real)) {
			o = say(SENSOR_MET, msg, size, "found %s%s",
			        g.gl_pathv[i] + strlen(root) + 1, NULL);
			goto out;
		}
	}
	o = say(SENSOR_NOT_YET, msg, size, "no file inside the folder matches %s%s", rel, NULL);
out:
	globfree(&g);
	free(from_conn);
	return o;
}

/* ---- time, delta ---- */

static int time_of_day_s(const char *t)
{
	int h = 0, m = 0, sec = 0;

	if (sscanf(t, "%d:%d:%d", &h, &m, &sec) < 2)
		return 0;
	return h * 3600 + m * 60 + sec;
}

static enum sensor_outcome poke_time(int64_t target, int64_t now_ms, char *msg, size_t size)
{
	char when[64];

	clock_format_iso(target, when, sizeof when);
	if (now_ms >= target)
		return say(SENSOR_MET, msg, size, "%s has passed%s", when, NULL);
	return say(SENSOR_NOT_YET, msg, size, "waiting until %s%s", when, NULL);
}

/* ---- http ---- */

static enum sensor_outcome poke_http(const struct dag_sensor *s, const struct connection *conn,
                                     char *msg, size_t size)
{
	const char *url = json_string_value(json_object_get(s->what, "url"));
	const char *path = json_string_value(json_object_get(s->what, "path"));
	const char *match = json_string_value(json_object_get(s->what, "match"));
	long want = (long)json_integer_value(json_object_get(s->what, "status"));
	double to_s = json_number_value(json_object_get(s->what, "timeout"));
	const char *ca_file = json_string_value(json_object_get(s->what, "ca_file"));
	char base[1024], *full = NULL;
	const char *p;
	struct http_client *c;
	struct http_response resp = {0};
	struct weir_error err = {0};
	struct strbuf from_conn = STRBUF_INIT;
	enum sensor_outcome o;

	if (!want)
		want = 200;
	if (!url) {
		if (!conn || !conn->host)
			return say(SENSOR_ERROR, msg, size, "http: conn %s%s has no host",
			           json_string_value(json_object_get(s->what, "conn")), NULL);
		if (connection_http_url(conn, &from_conn, &err) < 0) {
			strbuf_release(&from_conn);
			return say(SENSOR_ERROR, msg, size, "http: %s%s", err.msg, NULL);
		}
		url = from_conn.buf;
		if (!ca_file)
			ca_file = connection_ca_file(conn);
	}
	/* split http[s]://host:port/path into the client's base and the path;
	 * `path` goes after the URL's own */
	const char *slash = strchr(url + (strncmp(url, "https://", 8) ? 7 : 8), '/');
	snprintf(base, sizeof base, "%.*s", (int)(slash ? slash - url : (long)strlen(url)), url);
	p = slash ? slash : "/";
	if (path && asprintf(&full, "%s%s", strcmp(p, "/") ? p : "", path) > 0)
		p = full;
	c = http_client_create(base, NULL);
	if (!c || http_client_set_tls(c, &tls_http_ops, ca_file) < 0) {
		http_client_destroy(c);
		free(full);
		strbuf_release(&from_conn);
		return say(SENSOR_ERROR, msg, size, "out of memory%s%s", NULL, NULL);
	}
	if (http_client_request(c, "GET", p, NULL, to_s > 0 ? (long)(to_s * 1000) : 10000, &resp,
	                        &err) < 0) {
		o = say(SENSOR_NOT_YET, msg, size, "no answer: %s%s", err.msg, NULL);
	} else if (resp.status != want) {
		char st[32];
		snprintf(st, sizeof st, "%ld", resp.status);
		o = say(SENSOR_NOT_YET, msg, size, "HTTP %s%s", st, "");
	} else if (match) {
		regex_t re;
		if (regcomp(&re, match, REG_EXTENDED | REG_NOSUB) != 0) {
			o = say(SENSOR_ERROR, msg, size, "match: not a regular expression: %s%s",
			        match, NULL);
		} else {
			bool hit = resp.body && regexec(&re, resp.body, 0, NULL, 0) == 0;
			regfree(&re);
			o = hit ? say(SENSOR_MET, msg, size, "HTTP %s, the body matches%s", "ok",
			              NULL)
			        : say(SENSOR_NOT_YET, msg, size, "the body does not match %s%s",
			              match, NULL);
		}
	} else {
		o = say(SENSOR_MET, msg, size, "HTTP %s%s", "ok", NULL);
	}
	http_response_release(&resp);
	http_client_destroy(c);
	free(full);
	strbuf_release(&from_conn);
	return o;
}

/* ---- sql ---- */

struct first_cell {
	bool seen, truthy;
	char text[64];
};

static int on_row(void *arg, const struct data_row *row, struct weir_error *err)
{
	struct first_cell *f = arg;

	(void)err;
	if (f->seen)
		return 0;
	f->seen = true;
	if (row->n > 0 && row->v[0]) {
		size_t n = row->len[0] < sizeof f->text - 1 ? row->len[0] : sizeof f->text - 1;
		memcpy(f->text, row->v[0], n);
		f->text[n] = '\0';
		f->truthy = sensor_cell_truthy(f->text);
	} else {
		snprintf(f->text, sizeof f->text, "NULL");
	}
	return 0;
}

static enum sensor_outcome poke_sql(const struct dag_sensor *s, const struct connection *conn,
                                    char *msg, size_t size)
{
	const char *q = json_string_value(json_object_get(s->what, "query"));
	struct first_cell f = {0};
	struct data_rows_cb cb = {NULL, on_row, &f};
	struct data_params params = {0};
	struct weir_error err = {0};
	struct data_conn *dc;
	int64_t count = -1;
	enum sensor_outcome o;

	if (!conn)
		return say(SENSOR_ERROR, msg, size, "sql: no connection%s%s", NULL, NULL);
	if (data_params_from_json(json_object_get(s->what, "parameters"), &params, &err) < 0)
		return say(SENSOR_ERROR, msg, size, "%s%s", err.msg, NULL);
	dc = data_open_timed(conn, 10000, &err);
	if (!dc) {
		data_params_release(&params);
		return say(SENSOR_ERROR, msg, size, "%s%s", err.msg, NULL);
	}
	if (data_run(dc, q, &params, &cb, &count, &err) < 0)
		o = say(SENSOR_ERROR, msg, size, "%s%s", err.msg, NULL);
	else if (!f.seen)
		o = say(SENSOR_NOT_YET, msg, size, "the query returned no row%s%s", NULL, NULL);
	else if (f.truthy)
		o = say(SENSOR_MET, msg, size, "the query returned %s%s", f.text, NULL);
	else
		o = say(SENSOR_NOT_YET, msg, size, "the query returned %s%s", f.text, NULL);
	data_close(dc);
	data_params_release(&params);
	return o;
}

/* ---- the kinds together ---- */

static enum sensor_outcome poke_kind(const struct dag_sensor *s, int64_t logical_ms,
                                     const struct connection *conn, int64_t now_ms, char *msg,
                                     size_t msg_size)
{
	switch (s->kind) {
	case DAG_SENSOR_FILE:
		return poke_file(s, conn, msg, msg_size);
	case DAG_SENSOR_TIME:
		return poke_time(
		    sensor_time_target(logical_ms, time_of_day_s(json_string_value(s->what))),
		    now_ms, msg, msg_size);
	case DAG_SENSOR_DELTA:
		return poke_time(sensor_delta_target(logical_ms, json_integer_value(s->what)),
		                 now_ms, msg, msg_size);
	case DAG_SENSOR_HTTP:
		return poke_http(s, conn, msg, msg_size);
	case DAG_SENSOR_SQL:
		return poke_sql(s, conn, msg, msg_size);
	case DAG_SENSOR_EXTERNAL_TASK:
	case DAG_SENSOR_COMMAND:
		break;
	}
	return say(SENSOR_ERROR, msg, msg_size, "%s sensors are poked by the server%s",
	           dag_sensor_kind_name(s->kind), NULL);
}

enum sensor_outcome sensor_poke(const struct dag_sensor *s, int64_t logical_ms,
                                const struct connection *conn, int64_t now_ms, char *msg,
                                size_t msg_size)
{
	enum sensor_outcome o;
	char *masked;

	msg[0] = '\0';
	o = poke_kind(s, logical_ms, conn, now_ms, msg, msg_size);
	/* the poke's words become the TI's reason: a server's message about a
	 * failed login might hold the password */
	if (conn && conn->password && *conn->password) {
		masked = connection_mask_text(conn, msg);
		snprintf(msg, msg_size, "%s",
		         masked ? masked : "(the poke's message could not be masked)");
		free(masked);
	}
	return o;
}

static bool state_in(json_t *list, const char *state)
{
	size_t i;
	json_t *v;

	json_array_foreach(list, i,
	                   v) if (state && !strcmp(json_string_value(v), state)) return true;
	return false;
}

enum sensor_outcome sensor_external_outcome(const struct dag_sensor *s, const char *state,
                                            char *msg, size_t msg_size)
{
	const char *task = json_string_value(json_object_get(s->what, "task_id"));
	const char *dag = json_string_value(json_object_get(s->what, "dag_id"));

	if (!state)
		return say(SENSOR_NOT_YET, msg, msg_size, "no run of %s%s at that logical date",
		           dag, "");
	if (state_in(json_object_get(s->what, "states"), state))
		return say(SENSOR_MET, msg, msg_size, "%s is %s", task ? task : dag, state);
	if (state_in(json_object_get(s->what, "failed_states"), state))
		return say(SENSOR_FAILED_STATE, msg, msg_size, "%s is %s", task ? task : dag,
		           state);
	if (state_in(json_object_get(s->what, "skipped_states"), state))
		return say(SENSOR_SKIP_STATE, msg, msg_size, "%s is %s", task ? task : dag, state);
	return say(SENSOR_NOT_YET, msg, msg_size, "%s is %s", task ? task : dag, state);
}

bool sensor_external_is_many(const struct dag_sensor *s)
{
	return json_object_get(s->what, "task_ids") || json_object_get(s->what, "task_group_id");
}

/* Whether task `id` is one the sensor waits for: in its task_ids, or in its
 * task group (the id starts with the group's and a dot). */
static bool awaited(const struct dag_sensor *s, const char *id)
{
	const char *group = json_string_value(json_object_get(s->what, "task_group_id"));
	json_t *ids = json_object_get(s->what, "task_ids"), *v;
	size_t i, n;

	if (group) {
		n = strlen(group);
		return !strncmp(id, group, n) && id[n] == '.';
	}
	json_array_foreach(ids, i, v) if (!strcmp(json_string_value(v), id)) return true;
	return false;
}

enum sensor_outcome sensor_external_many(const struct dag_sensor *s,
                                         const struct sensor_ext_ti *tis, size_t n, bool run_found,
                                         char *msg, size_t msg_size)
{
	const char *dag = json_string_value(json_object_get(s->what, "dag_id"));
	const char *group = json_string_value(json_object_get(s->what, "task_group_id"));
	json_t *ids = json_object_get(s->what, "task_ids"), *v;
	const char *pending = NULL, *pending_state = NULL;
	size_t i, matched = 0;

	if (!run_found)
		return say(SENSOR_NOT_YET, msg, msg_size, "no run of %s at that logical date", dag,
		           NULL);
	/* Airflow's order: a failed one fails, then a skipped one skips, then
	 * every one in an allowed state is met */
	for (i = 0; i < n; i++)
		if (awaited(s, tis[i].task_id) &&
		    state_in(json_object_get(s->what, "failed_states"), tis[i].state))
			return say(SENSOR_FAILED_STATE, msg, msg_size, "%s is %s", tis[i].task_id,
			           tis[i].state);
	for (i = 0; i < n; i++)
		if (awaited(s, tis[i].task_id) &&
		    state_in(json_object_get(s->what, "skipped_states"), tis[i].state))
			return say(SENSOR_SKIP_STATE, msg, msg_size, "%s is %s", tis[i].task_id,
			           tis[i].state);
	for (i = 0; i < n; i++) {
		if (!awaited(s, tis[i].task_id))
			continue;
		matched++;
		if (!pending && !state_in(json_object_get(s->what, "states"), tis[i].state)) {
			pending = tis[i].task_id;
			pending_state = tis[i].state;
		}
	}
	if (pending)
		return say(SENSOR_NOT_YET, msg, msg_size, "%s is %s", pending, pending_state);
	if (group)
		return matched ? say(SENSOR_MET, msg, msg_size, "every task of %s is %s", group,
		                     json_string_value(
		                         json_array_get(json_object_get(s->what, "states"), 0)))
		               : say(SENSOR_NOT_YET, msg, msg_size,
		                     "no task of group %s in %s's run", group, dag);
	/* each id named must have a task instance */
	json_array_foreach(ids, i, v)
	{
		size_t k;
		for (k = 0; k < n && strcmp(tis[k].task_id, json_string_value(v)); k++)
			;
		if (k == n)
			return say(SENSOR_NOT_YET, msg, msg_size, "no task %s in %s's run",
			           json_string_value(v), dag);
	}
	snprintf(msg, msg_size, "%zu tasks met", json_array_size(ids));
	return SENSOR_MET;
}

int64_t sensor_external_date(const struct dag_sensor *s, int64_t logical_ms)
{
	return logical_ms - json_integer_value(json_object_get(s->what, "execution_delta")) * 1000;
}

/* ---- what a poke reads ---- */

int64_t sensor_time_target(int64_t logical_ms, int time_of_day_s)
{
	const int64_t day = 86400000;
	int64_t start = logical_ms - ((logical_ms % day) + day) % day;

	return start + (int64_t)time_of_day_s * 1000;
}

int64_t sensor_delta_target(int64_t logical_ms, int64_t delta_s)
{
	return logical_ms + delta_s * 1000;
}

bool sensor_cell_truthy(const char *cell)
{
	static const char *const falsy[] = {"0", "f", "false", "n", "no", "off", NULL};
	char *end;
	double d;

	if (!cell || !*cell)
		return false;
	for (size_t i = 0; falsy[i]; i++)
		if (!strcasecmp(cell, falsy[i]))
			return false;
	d = strtod(cell, &end);
	if (end != cell && !*end && d == 0)
		return false;
	return true;
}
