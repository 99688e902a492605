/* notify.c: the notification keys of a DAG file, `sla:`, and the event a
 * delivery carries: its JSON body, its line of text, the email subject's
 * template and a target as records show it (notify.h). */
#include "model/notify.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/strbuf.h"
#include "model/connection.h"

static const char *const event_keys[NOTIFY_N_EVENTS] = {"on_failure", "on_retry", "on_success",
                                                        "on_sla_miss"};
static const char *const target_keys[] = {"webhook",     "email",        "command", "retries",
                                          "retry_delay", "as_task_user", NULL};
static const char *const webhook_keys[] = {"url", "headers", "conn", NULL};
static const char *const email_keys[] = {"conn", "to", "subject", NULL};
static const char *const sla_keys[] = {"within", "from", NULL};

const char *notify_event_key(enum notify_event e)
{
	return (unsigned)e < NOTIFY_N_EVENTS ? event_keys[e] : "on_failure";
}

int notify_event_from_key(const char *name, enum notify_event *out)
{
	for (int i = 0; i < NOTIFY_N_EVENTS; i++)
		if (!strcmp(name, event_keys[i])) {
			*out = (enum notify_event)i;
			return 0;
		}
	return -1;
}

bool notify_is_key(const char *key)
{
	enum notify_event e;
	return notify_event_from_key(key, &e) == 0;
}

const char *notify_event_name(enum notify_event e, bool run_level)
{
	switch (e) {
	case NOTIFY_ON_FAILURE:
		return run_level ? "run_failure" : "task_failure";
	case NOTIFY_ON_RETRY:
		return "task_retry";
	case NOTIFY_ON_SUCCESS:
		return run_level ? "run_success" : "task_success";
	default:
		return "sla_miss";
	}
}

const char *notify_kind_name(enum notify_kind k)
{
	return k == NOTIFY_EMAIL ? "email" : k == NOTIFY_COMMAND ? "command" : "webhook";
}

/* ---- reading ---- */

static void target_release(struct notify_target *t)
{
	free(t->url);
	json_decref(t->headers);
	free(t->conn);
	strvec_release(&t->to);
	free(t->subject);
	free(t->command);
	memset(t, 0, sizeof *t);
}

static void list_release(struct notify_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		target_release(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void dag_notify_destroy(struct dag_notify *n)
{
	if (!n)
		return;
	for (int i = 0; i < NOTIFY_N_EVENTS; i++)
		list_release(&n->on[i]);
	json_decref(n->json);
	free(n);
}

/* A non-empty string at obj.key; *out borrowed, NULL when absent. */
static int opt_str(struct field_reader *r, json_t *obj, const char *prefix, const char *key,
                   const char **out)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v)
		return 0;
	field_at(r, prefix, key, 0);
	if (field_get_string(r, v, out) < 0)
		return -1;
	return **out ? 0 : field_fail(r, "%s", "expected a non-empty string");
}

static int read_conn_id(struct field_reader *r, json_t *obj, const char *prefix, bool required,
                        char **out)
{
	const char *id;
	struct weir_error e = {0};

	if (opt_str(r, obj, prefix, "conn", &id) < 0)
		return -1;
	if (!id) {
		if (!required)
			return 0;
		field_at(r, prefix, "conn", 0);
		return field_fail(r, "%s", "is required (the id of an smtp connection)");
	}
	if (connection_check_id(id, &e) < 0)
		return field_fail(r, "%s", e.msg);
	return field_set_string(r, out, id);
}

/* The length of "http://" or "https://" at the start of url; 0: neither. */
static size_t url_scheme_len(const char *url)
{
	return !strncmp(url, "http://", 7) ? 7 : !strncmp(url, "https://", 8) ? 8 : 0;
}

/* http[s]://HOST[:PORT][/PATH], or a /PATH under the connection's URL. */
static int check_url(struct field_reader *r, const char *url)
{
	size_t sl = url_scheme_len(url);

	if (url[0] == '/')
		return 0;
	if (!sl || !url[sl] || url[sl] == '/')
		return field_fail(r,
		                  "expected http[s]://HOST[:PORT]/PATH, or a /PATH under the "
		                  "connection's URL, got \"%s\"",
		                  url);
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return field_fail(r, "%s",
			                  "expected a URL without spaces or control characters");
	if (memchr(url + sl, '@', strcspn(url + sl, "/?#")))
		return field_fail(
		    r, "%s", "a login and password go in a connection (conn:), not in the URL");
	return 0;
}

static int read_webhook(struct field_reader *r, json_t *v, const char *prefix,
                        struct notify_target *t)
{
	const char *url;
	json_t *h;

	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping {url, headers, conn}", json_is_object(v)) < 0 ||
	    field_check_keys(r, v, prefix, webhook_keys) < 0)
		return -1;
	if (opt_str(r, v, prefix, "url", &url) < 0 || (url && check_url(r, url) < 0))
		return -1;
	if (url && field_set_string(r, &t->url, url) < 0)
		return -1;
	if (read_conn_id(r, v, prefix, false, &t->conn) < 0)
		return -1;
	if (!t->url && !t->conn) {
		snprintf(r->path, sizeof r->path, "%s", prefix);
		return field_fail(r, "%s", "expected a url, a conn (an http connection), or both");
	}
	if (t->url && t->url[0] == '/' && !t->conn) {
		field_at(r, prefix, "url", 0);
		return field_fail(r, "%s", "a /PATH needs a conn whose URL it goes under");
	}
	if ((h = json_object_get(v, "headers"))) {
		const char *name;
		json_t *val;
		field_at(r, prefix, "headers", 0);
		if (field_need_type(r, h, "a mapping of NAME: value", json_is_object(h)) < 0)
			return -1;
		json_object_foreach(h, name, val)
		{
			const char *s;
			field_at(r, prefix, "headers", 0);
			snprintf(r->path + strlen(r->path), sizeof r->path - strlen(r->path), ".%s",
			         name);
			if (!*name || strcspn(name, ":\r\n ") != strlen(name))
				return field_fail(r, "%s",
				                  "expected a header name without ':' or spaces");
			if (field_get_string(r, val, &s) < 0)
				return -1;
			if (strpbrk(s, "\r\n"))
				return field_fail(r, "%s", "expected a header value on one line");
		}
		t->headers = json_incref(h);
	}
	return 0;
}

static int read_email(struct field_reader *r, json_t *v, const char *prefix,
                      struct notify_target *t)
{
	const char *subject;
	json_t *to;
	size_t i;
	json_t *a;

	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping {conn, to, subject}", json_is_object(v)) < 0 ||
	    field_check_keys(r, v, prefix, email_keys) < 0)
		return -1;
	if (read_conn_id(r, v, prefix, true, &t->conn) < 0)
		return -1;
	field_at(r, prefix, "to", 0);
	to = json_object_get(v, "to");
	if (!to)
		return field_fail(r, "%s", "is required (a list of addresses)");
	if (json_is_string(to)) {
		a = to;
		to = json_array();
		json_array_append(to, a);
	} else {
		json_incref(to);
	}
	if (field_need_type(r, to, "a list of addresses",
	                    json_is_array(to) && json_array_size(to)) < 0)
		goto fail;
	json_array_foreach(to, i, a)
	{
		const char *s;
		field_at(r, prefix, "to", 0);
		snprintf(r->path + strlen(r->path), sizeof r->path - strlen(r->path), "[%zu]", i);
		if (field_get_string(r, a, &s) < 0)
			goto fail;
		/* it goes into RCPT TO:<...>: one line, one address */
		if (!strchr(s, '@') || strpbrk(s, "<>\r\n ,;"))
			goto bad;
		if (strvec_push(&t->to, s) < 0) {
			field_oom(r);
			goto fail;
		}
	}
	json_decref(to);
	if (opt_str(r, v, prefix, "subject", &subject) < 0)
		return -1;
	if (subject && strpbrk(subject, "\r\n"))
		return field_fail(r, "%s", "expected a subject on one line");
	return subject ? field_set_string(r, &t->subject, subject) : 0;
bad:
	field_fail(r, "%s", "expected an address like ops@example.com");
fail:
	json_decref(to);
	return -1;
}

static int read_target(struct field_reader *r, json_t *v, const char *prefix,
                       struct notify_target *t)
{
	char sub[FIELD_PATH_MAX];
	json_t *x;
	int kinds = 0;

	t->retries = NOTIFY_DEFAULT_RETRIES;
	t->retry_delay_s = NOTIFY_DEFAULT_RETRY_DELAY_S;
	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping with one of webhook, email and command",
	                    json_is_object(v)) < 0 ||
	    field_check_keys(r, v, prefix, target_keys) < 0)
		return -1;
	kinds = !!json_object_get(v, "webhook") + !!json_object_get(v, "email") +
	        !!json_object_get(v, "command");
	if (kinds != 1)
		return field_fail(r, "%s",
		                  kinds ? "expected one of webhook, email and command, got more"
		                        : "expected one of webhook, email and command");
	if ((x = json_object_get(v, "retries"))) {
		long long n;
		field_at(r, prefix, "retries", 0);
		if (field_get_int(r, x, 0, NOTIFY_MAX_RETRIES, &n) < 0)
			return -1;
		t->retries = (int)n;
	}
	if ((x = json_object_get(v, "retry_delay"))) {
		field_at(r, prefix, "retry_delay", 0);
		if (field_read_duration(r, x, &t->retry_delay_s) < 0)
			return -1;
		if (t->retry_delay_s < 1)
			return field_fail(r, "%s", "expected at least 1s");
	}
	if (json_object_get(v, "as_task_user") && !json_object_get(v, "command")) {
		field_at(r, prefix, "as_task_user", 0);
		return field_fail(r, "%s", "is for a command only");
	}
	if ((x = json_object_get(v, "webhook"))) {
		t->kind = NOTIFY_WEBHOOK;
		snprintf(sub, sizeof sub, "%s.webhook", prefix);
		return read_webhook(r, x, sub, t);
	}
	if ((x = json_object_get(v, "email"))) {
		t->kind = NOTIFY_EMAIL;
		snprintf(sub, sizeof sub, "%s.email", prefix);
		return read_email(r, x, sub, t);
	}
	const char *cmd;
	t->kind = NOTIFY_COMMAND;
	if ((x = json_object_get(v, "as_task_user"))) {
		field_at(r, prefix, "as_task_user", 0);
		if (field_need_type(r, x, "true or false", json_is_boolean(x)) < 0)
			return -1;
		t->as_task_user = json_is_true(x);
	}
	field_at(r, prefix, "command", 0);
	if (field_get_string(r, json_object_get(v, "command"), &cmd) < 0)
		return -1;
	if (!*cmd)
		return field_fail(r, "%s", "expected a command, got an empty string");
	return field_set_string(r, &t->command, cmd);
}

int notify_read_key(struct field_reader *r, const char *prefix, const char *key, json_t *val,
                    struct dag_notify **np)
{
	enum notify_event ev;
	char base[FIELD_PATH_MAX];
	struct notify_list l = {0};
	json_t *list = val;
	size_t i;
	json_t *item;

	if (notify_event_from_key(key, &ev) < 0)
		return field_fail(r, "%s", "is not a notification key");
	snprintf(base, sizeof base, "%s%s%s", prefix, *prefix ? "." : "", key);
	snprintf(r->path, sizeof r->path, "%s", base);
	if (json_is_object(val))
		list = json_pack("[O]", val);
	else
		json_incref(list);
	if (!list)
		return field_oom(r);
	if (field_need_type(r, list, "a list of deliveries (webhook, email or command)",
	                    json_is_array(list)) < 0)
		goto fail;
	if (json_array_size(list) > NOTIFY_MAX_TARGETS) {
		field_fail(r, "expected at most %s deliveries", "32");
		goto fail;
	}
	l.v = calloc(json_array_size(list) + 1, sizeof *l.v);
	if (!l.v) {
		field_oom(r);
		goto fail;
	}
	json_array_foreach(list, i, item)
	{
		char at[FIELD_PATH_MAX];
		snprintf(at, sizeof at, "%s[%zu]", base, i);
		l.n = i + 1;
		if (read_target(r, item, at, &l.v[i]) < 0)
			goto fail;
	}
	if (!*np && !(*np = calloc(1, sizeof **np))) {
		field_oom(r);
		goto fail;
	}
	if (!(*np)->json && !((*np)->json = json_object())) {
		field_oom(r);
		goto fail;
	}
	list_release(&(*np)->on[ev]);
	(*np)->on[ev] = l;
	(*np)->given[ev] = true;
	json_object_set((*np)->json, key, list);
	json_decref(list);
	return 0;
fail:
	list_release(&l);
	json_decref(list);
	return -1;
}

int dag_notify_to_json(const struct dag_notify *n, json_t *out)
{
	const char *key;
	json_t *list;

	if (!n || !n->json)
		return 0;
	json_object_foreach(n->json, key, list)
	{
		json_t *copy = json_deep_copy(list);
		size_t i;
		json_t *item;
		if (!copy)
			return -1;
		json_array_foreach(copy, i, item)
		{
			json_t *h = json_object_get(json_object_get(item, "webhook"), "headers");
			const char *name;
			json_t *v;
			json_object_foreach(h, name, v)
			    json_object_set_new(h, name, json_string("***"));
		}
		if (json_object_set_new(out, key, copy) < 0)
			return -1;
	}
	return 0;
}

/* ---- SLAs ---- */

int notify_read_sla(struct field_reader *r, const char *prefix, json_t *val, struct dag_sla *out)
{
	char base[FIELD_PATH_MAX];
	json_t *x;

	snprintf(base, sizeof base, "%s%ssla", prefix, *prefix ? "." : "");
	snprintf(r->path, sizeof r->path, "%s", base);
	out->from = SLA_FROM_LOGICAL_DATE;
	if (!json_is_object(val)) {
		if (field_read_duration(r, val, &out->within_s) < 0)
			return -1;
		return out->within_s > 0 ? 0 : field_fail(r, "%s", "expected at least 1s");
	}
	if (field_check_keys(r, val, base, sla_keys) < 0)
		return -1;
	field_at(r, base, "within", 0);
	if (!(x = json_object_get(val, "within")))
		return field_fail(r, "%s", "is required (a duration like 30m)");
	if (field_read_duration(r, x, &out->within_s) < 0)
		return -1;
	if (out->within_s < 1)
		return field_fail(r, "%s", "expected at least 1s");
	if ((x = json_object_get(val, "from"))) {
		const char *s;
		field_at(r, base, "from", 0);
		if (field_get_string(r, x, &s) < 0)
			return -1;
		if (!strcmp(s, "run_start"))
			out->from = SLA_FROM_RUN_START;
		else if (strcmp(s, "logical_date"))
			return field_fail(r, "expected logical_date or run_start, got \"%s\"", s);
	}
	return 0;
}

json_t *notify_sla_to_json(const struct dag_sla *sla)
{
	if (!sla || sla->within_s <= 0)
		return NULL;
	return json_pack("{s:I, s:s}", "within", (json_int_t)sla->within_s, "from",
	                 sla->from == SLA_FROM_RUN_START ? "run_start" : "logical_date");
}

/* ---- the event ---- */

static const char *nz(const char *s)
{
	return s ? s : "";
}

char *notify_payload_text(const struct notify_payload *p)
{
	char *out = NULL;
	const char *what;
	char ti[320] = "";

	switch (p->event) {
	case NOTIFY_ON_FAILURE:
		what = "failed";
		break;
	case NOTIFY_ON_RETRY:
		what = "failed, up for retry";
		break;
	case NOTIFY_ON_SUCCESS:
		what = "succeeded";
		break;
	default:
		what = "missed its SLA";
		break;
	}
	if (!p->run_level) {
		if (p->map_index >= 0)
			snprintf(ti, sizeof ti, " task %s[%d]", nz(p->task_id), p->map_index);
		else
			snprintf(ti, sizeof ti, " task %s", nz(p->task_id));
		if (p->try_number > 0)
			snprintf(ti + strlen(ti), sizeof ti - strlen(ti), " (try %d)",
			         p->try_number);
	}
	if (asprintf(&out, "weir: DAG %s run %s%s %s%s%s%s%s", nz(p->dag_id), nz(p->run_id), ti,
	             what, p->reason && *p->reason ? ": " : "", nz(p->reason),
	             p->log_url && *p->log_url ? " - " : "", nz(p->log_url)) < 0)
		return NULL;
	return out;
}

json_t *notify_payload_json(const struct notify_payload *p)
{
	char date[40] = "";
	char *text = notify_payload_text(p);
	json_t *o;

	if (!text)
		return NULL;
	if (p->logical_date_ms > 0)
		clock_format_airflow(p->logical_date_ms, date, sizeof date);
	o = json_pack("{s:s, s:s, s:s, s:s*, s:i, s:i, s:s, s:s, s:s?, s:s, s:s}", "event",
	              notify_event_name(p->event, p->run_level), "dag_id", nz(p->dag_id), "run_id",
	              nz(p->run_id), "task_id", p->run_level ? NULL : nz(p->task_id), "map_index",
	              p->map_index, "try_number", p->try_number, "state", nz(p->state), "reason",
	              nz(p->reason), "logical_date", date[0] ? date : NULL, "log_url",
	              nz(p->log_url), "text", text);
	free(text);
	return o;
}

char *notify_render(const char *tmpl, const struct notify_payload *p)
{
	struct strbuf b = STRBUF_INIT;
	const char *s = tmpl;

	while (*s) {
		const char *open = strstr(s, "{{");
		const char *close = open ? strstr(open + 2, "}}") : NULL;
		if (!open || !close) {
			strbuf_add(&b, s, strlen(s));
			break;
		}
		strbuf_add(&b, s, (size_t)(open - s));
		const char *a = open + 2, *z = close;
		while (a < z && isspace((unsigned char)*a))
			a++;
		while (z > a && isspace((unsigned char)z[-1]))
			z--;
		char name[32] = "";
		char num[24];
		const char *v = NULL;
		if ((size_t)(z - a) < sizeof name)
			memcpy(name, a, (size_t)(z - a));
		if (!strcmp(name, "dag_id"))
			v = nz(p->dag_id);
		else if (!strcmp(name, "run_id"))
			v = nz(p->run_id);
		else if (!strcmp(name, "task_id"))
			v = nz(p->task_id);
		else if (!strcmp(name, "state"))
			v = nz(p->state);
		else if (!strcmp(name, "reason"))
			v = nz(p->reason);
		else if (!strcmp(name, "event"))
			v = notify_event_name(p->event, p->run_level);
		else if (!strcmp(name, "try_number")) {
			snprintf(num, sizeof num, "%d", p->try_number);
			v = num;
		}
		if (v)
			strbuf_add(&b, v, strlen(v));
		else
			strbuf_add(&b, open, (size_t)(close + 2 - open));
		s = close + 2;
	}
	return strbuf_detach(&b, NULL);
}

char *notify_target_masked(const struct notify_target *t)
{
	char *out = NULL;
	int rc = -1;

	if (t->kind == NOTIFY_WEBHOOK) {
		const char *u = t->url ? t->url : "";
		size_t sl = url_scheme_len(u);
		if (sl) {
			const char *host = u + sl;
			size_t hl = strcspn(host, "/?#");
			const char *at = memchr(host, '@', hl); /* user:password@ */
			if (at) {
				hl -= (size_t)(at + 1 - host);
				host = at + 1;
			}
			rc = asprintf(&out, "%.*s%.*s/%s%s%s", (int)sl, u, (int)hl, host,
			              host[hl] && host[hl + 1] ? "***" : "",
			              t->conn ? " conn " : "", t->conn ? t->conn : "");
		} else {
			rc = asprintf(&out, "conn %s%s", t->conn ? t->conn : "",
			              u[0] ? " /***" : "");
		}
	} else if (t->kind == NOTIFY_EMAIL) {
		struct strbuf b = STRBUF_INIT;
		strbuf_add(&b, "smtp conn ", 10);
		strbuf_add(&b, t->conn, strlen(t->conn));
		strbuf_add(&b, " to ", 4);
		for (size_t i = 0; i < t->to.n; i++) {
			if (i)
				strbuf_add(&b, ", ", 2);
			strbuf_add(&b, t->to.v[i], strlen(t->to.v[i]));
		}
		return strbuf_detach(&b, NULL);
	} else {
		const char *c = t->command;
		while (*c == ' ' || *c == '\t')
			c++;
		size_t n = strcspn(c, " \t\n;|&<>$`'\"");
		rc = asprintf(&out, "%.*s%s", (int)n, c, c[n] ? " …" : "");
	}
	return rc < 0 ? NULL : out;
}
