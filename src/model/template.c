/* template.c: rendering and checking `{{ name }}` templates, with the
 * shell-quoting rules of template.h, and the variables of a task try (as
 * template values and as WEIR_* environment entries).
 *
 * Why a quoting tracker: quoting a value as '...' is only safe where the
 * shell reads it as plain text.  Written inside "..." it would end up as
 * '$(cmd)' within double quotes, where $(cmd) runs.  So the renderer reads
 * the literal parts of a command the way sh does (quotes, escapes, $(),
 * backticks, ${}, comments, here-documents) and quotes each value for the
 * place it lands in, or refuses where no quoting is safe.  The tests run
 * the results through /bin/sh to prove it.
 */
#include "model/template.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/shell.h"
#include "lib/strbuf.h"
#include "model/cron.h"
#include "model/shell_context.h"

/* ---- context ----------------------------------------------------------- */

int template_ctx_set(struct template_ctx *ctx, const char *name, const char *value,
                     enum template_trust trust, struct weir_error *err)
{
	char *v = strdup(value ? value : "");
	if (!v)
		return weir_error_oom(err);
	for (size_t i = 0; i < ctx->n; i++) {
		if (!strcmp(ctx->v[i].name, name)) {
			free(ctx->v[i].value);
			ctx->v[i].value = v;
			ctx->v[i].trust = trust;
			return 0;
		}
	}
	if (ALLOC_GROW(ctx->v, ctx->n + 1, ctx->cap) < 0) {
		free(v);
		return weir_error_oom(err);
	}
	char *n = strdup(name);
	if (!n) {
		free(v);
		return weir_error_oom(err);
	}
	ctx->v[ctx->n].name = n;
	ctx->v[ctx->n].value = v;
	ctx->v[ctx->n].trust = trust;
	ctx->n++;
	return 0;
}

const struct template_var *template_ctx_get(const struct template_ctx *ctx, const char *name)
{
	for (size_t i = 0; ctx && i < ctx->n; i++)
		if (!strcmp(ctx->v[i].name, name))
			return &ctx->v[i];
	return NULL;
}

void template_ctx_release(struct template_ctx *ctx)
{
	if (!ctx)
		return;
	for (size_t i = 0; i < ctx->n; i++) {
		free(ctx->v[i].name);
		free(ctx->v[i].value);
	}
	free(ctx->v);
	ctx->v = NULL;
	ctx->n = ctx->cap = 0;
}

static const char *const standard_names[] = {
    "ds",
    "ds_nodash",
    "ts",
    "logical_date",
    "data_interval_start",
    "data_interval_end",
    "run_id",
    "dag_id",
    "task_id",
    "try_number",
    NULL,
};

int template_known_standard(struct strvec *known)
{
	for (size_t i = 0; standard_names[i]; i++)
		if (strvec_push(known, standard_names[i]) < 0)
			return -1;
	return 0;
}

/* Whether nm is a var.* or conn.* name. */
static bool is_secret_ref(const char *nm)
{
	return !strncmp(nm, "var.", 4) || !strncmp(nm, "conn.", 5);
}

enum template_trust template_name_trust(const char *name)
{
	if (!strncmp(name, "params.", 7) || !strcmp(name, "item") || !strncmp(name, "item.", 5) ||
	    !strncmp(name, "outputs.", 8) || is_secret_ref(name))
		return TEMPLATE_OUTSIDE;
	return TEMPLATE_TRUSTED;
}

/* ---- the shell's quoting (model/shell_context.h) ---------------------- */

/* Inside '...' the value continues the open quote; inside "..." the
 * double quotes close around a single-quoted value and reopen after it. */
static void add_quoted(struct strbuf *b, const struct shell_ctx *sh, const char *v)
{
	switch (shell_ctx_quoting(sh)) {
	case SHELL_QUOTE_INNER:
		shell_quote_inner(b, v);
		break;
	case SHELL_QUOTE_REOPEN:
		strbuf_addch(b, '"');
		shell_quote(b, v);
		strbuf_addch(b, '"');
		break;
	case SHELL_QUOTE_WORD:
		shell_quote(b, v);
		break;
	}
}

/* A value weir made that needs no quoting anywhere. */
static bool safe_text(const char *v)
{
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.:+,=@%/-", *p))
			return false;
	return true;
}

/* ---- the template language --------------------------------------------- */

struct scan {
	const char *tmpl;
	enum template_mode mode;
	const struct template_ctx *ctx; /* render: values */
	const struct strvec *known;     /* check: names */
	struct strbuf *out;             /* NULL when checking */
	struct shell_ctx sh;
	struct strbuf pending; /* literal text the tracker has not read: literal
	                        * pieces ({{ 'x' }} too) are read together, as sh sees them */
	struct weir_error *err;
};

static void where(const char *tmpl, const char *at, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (const char *p = tmpl; p < at; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int scan_fail(struct scan *s, const char *at, const char *fmt, const char *arg)
{
	char msg[600];
	int line, col;
	snprintf(msg, sizeof msg, fmt, arg);
	where(s->tmpl, at, &line, &col);
	if (line > 1)
		return weir_error_set(s->err, WEIR_E_INVALID,
		                      "line %d, column %d of the template: %s", line, col, msg);
	return weir_error_set(s->err, WEIR_E_INVALID, "column %d of the template: %s", col, msg);
}

static bool known_has(const struct strvec *known, const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < known->n; i++) {
		const char *k = known->v[i];
		size_t kl = strlen(k);
		if (kl >= 2 && !strcmp(k + kl - 2, ".*")) {
			if (nl > kl - 1 && !strncmp(name, k, kl - 1))
				return true;
		} else if (!strcmp(k, name)) {
			return true;
		}
	}
	return false;
}

static void known_list(const struct scan *s, char *out, size_t size)
{
	out[0] = '\0';
	size_t used = 0;
	for (size_t i = 0; s->known && i < s->known->n; i++) {
		const char *k = s->known->v[i];
		size_t kl = strlen(k);
		int n = snprintf(out + used, size - used, "%s%.*s%s", i ? ", " : "",
		                 (int)(kl >= 2 && !strcmp(k + kl - 2, ".*") ? kl - 2 : kl), k,
		                 kl >= 2 && !strcmp(k + kl - 2, ".*") ? ".KEY" : "");
		if (n < 0 || (size_t)n >= size - used) {
			out[used] = '\0';
			snprintf(out + used, size - used, ", ...");
			return;
		}
		used += (size_t)n;
	}
	if (s->ctx) {
		for (size_t i = 0; i < s->ctx->n; i++) {
			int n = snprintf(out + used, size - used, "%s%s", used ? ", " : "",
			                 s->ctx->v[i].name);
			if (n < 0 || (size_t)n >= size - used) {
				out[used] = '\0';
				snprintf(out + used, size - used, ", ...");
				return;
			}
			used += (size_t)n;
		}
	}
}

static bool name_valid(const char *p, size_t len)
{
	if (len == 0 || !(isalpha((unsigned char)p[0]) || p[0] == '_'))
		return false;
	bool after_dot = false;
	for (size_t i = 0; i < len; i++) {
		char c = p[i];
		if (c == '.') {
			if (after_dot || i + 1 == len)
				return false;
			after_dot = true;
			continue;
		}
		if (!isalnum((unsigned char)c) && c != '_' &&
		    !(c == '-' && !after_dot && i > 0 && memchr(p, '.', i)))
			return false;
		after_dot = false;
	}
	return true;
}

/* Literal text: copied out, and kept for the quoting tracker. */
static void scan_literal(struct scan *s, const char *p, size_t len)
{
	if (s->out)
		strbuf_add(s->out, p, len);
	if (s->mode == TEMPLATE_SHELL)
		strbuf_add(&s->pending, p, len);
}

/* The tracker reads the literal text that stands before a value. */
static void scan_flush(struct scan *s)
{
	if (s->pending.failed)
		s->sh.overflow = true; /* out of memory: refuse values from here on */
	else
		shell_ctx_feed(&s->sh, s->pending.buf, s->pending.len);
	strbuf_reset(&s->pending);
}

/* ---- var.* and conn.* ------------------------------------------------- */

static const char *const conn_fields[] = {"host",      "port",        "login", "schema",
                                          "conn_type", "description", "extra", NULL};

/* The form of a var./conn. name, checked without values: 0, or -1 with a
 * message in msg. */
static int secret_ref_check(const char *nm, char *msg, size_t size)
{
	char copy[256], *seg[5] = {0}, *save = NULL;
	int n = 0;

	snprintf(copy, sizeof copy, "%s", nm);
	for (char *p = strtok_r(copy, ".", &save); p && n < 5; p = strtok_r(NULL, ".", &save))
		seg[n++] = p;
	if (!strcmp(seg[0], "var")) {
		if (n >= 3 && !strcmp(seg[1], "value") && n == 3)
			return 0;
		if (n >= 3 && !strcmp(seg[1], "json"))
			return 0;
		snprintf(msg, size,
		         "\"%s\": expected var.value.KEY or var.json.KEY (then .FIELD ...)", nm);
		return -1;
	}
	if (n >= 3 && !strcmp(seg[2], "password")) {
		snprintf(msg, size,
		         "\"%s\": a connection's password is never put into a template; list "
		         "the connection in the task's connections: and read $WEIR_CONN_<ID>",
		         nm);
		return -1;
	}
	if (n == 4 && !strcmp(seg[2], "extra")) {
		if (!connection_secret_name(seg[3]))
			return 0;
		snprintf(msg, size,
		         "\"%s\": \"%s\" reads as a secret and is never put into a template; "
		         "read it from $WEIR_CONN_<ID> in the task",
		         nm, seg[3]);
		return -1;
	}
	for (size_t i = 0; n == 3 && conn_fields[i]; i++)
		if (!strcmp(seg[2], conn_fields[i]))
			return 0;
	snprintf(msg, size,
	         "\"%s\": expected conn.ID.FIELD, FIELD one of host, port, login, schema, "
	         "conn_type, description, extra, or extra.KEY",
	         nm);
	return -1;
}

/* A field of a JSON value by a dotted path ("a.b.0"); NULL when absent. */
static json_t *json_path(json_t *v, const char *path)
{
	char copy[256], *save = NULL;

	snprintf(copy, sizeof copy, "%s", path);
	for (char *p = strtok_r(copy, ".", &save); p && v; p = strtok_r(NULL, ".", &save)) {
		if (json_is_object(v)) {
			v = json_object_get(v, p);
		} else if (json_is_array(v) && isdigit((unsigned char)p[0])) {
			v = json_array_get(v, (size_t)strtoul(p, NULL, 10));
		} else {
			v = NULL;
		}
	}
	return v;
}

static char *var_value(const struct template_source *src, const char *nm, struct weir_error *err)
{
	const char *key = nm + (nm[4] == 'v' ? 10 : 9); /* after var.value. / var.json. */
	char k[256], *text = NULL, *out;
	const char *dot = strchr(key, '.');
	json_t *j, *f;

	snprintf(k, sizeof k, "%.*s", dot ? (int)(dot - key) : (int)strlen(key), key);
	if (src->var(src->arg, k, &text, err) < 0)
		return NULL;
	if (nm[4] == 'v')
		return text;
	j = json_loads(text, JSON_DECODE_ANY, NULL);
	free(text);
	if (!j) {
		weir_error_set(err, WEIR_E_INVALID,
		               "variable \"%s\" is not JSON (var.json reads "
		               "it as JSON; var.value gives its text)",
		               k);
		return NULL;
	}
	f = dot ? json_path(j, dot + 1) : j;
	if (!f) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "variable \"%s\" has no field \"%s\"", k,
		               dot + 1);
		json_decref(j);
		return NULL;
	}
	out = template_value_text(f);
	json_decref(j);
	if (!out)
		weir_error_oom(err);
	return out;
}

static char *conn_value(const struct template_source *src, const char *nm, struct weir_error *err)
{
	char id[256], field[64];
	const char *p = nm + 5, *dot = strchr(p, '.'), *rest;
	struct connection c;
	char *out = NULL, buf[16];

	snprintf(id, sizeof id, "%.*s", (int)(dot - p), p);
	rest = dot + 1;
	snprintf(field, sizeof field, "%.*s", (int)strcspn(rest, "."), rest);
	if (src->conn(src->arg, id, &c, err) < 0)
		return NULL;
	if (!strcmp(field, "extra") && strchr(rest, '.')) {
		json_t *v = json_object_get(c.extra, strchr(rest, '.') + 1);
		if (!v)
			weir_error_set(err, WEIR_E_NOT_FOUND,
			               "connection \"%s\" has no extra field "
			               "\"%s\"",
			               id, strchr(rest, '.') + 1);
		else if (!(out = template_value_text(v)))
			weir_error_oom(err);
		connection_release(&c);
		return out;
	}
	const char *v = !strcmp(field, "host")          ? c.host
	                : !strcmp(field, "login")       ? c.login
	                : !strcmp(field, "schema")      ? c.schema
	                : !strcmp(field, "conn_type")   ? c.type
	                : !strcmp(field, "description") ? c.description
	                                                : NULL;
	if (!strcmp(field, "port")) {
		snprintf(buf, sizeof buf, "%d", c.port);
		v = c.port ? buf : "";
	}
	if (!strcmp(field, "extra")) {
		out = connection_extra_masked(&c);
		if (!out)
			out = strdup("");
	} else {
		out = strdup(v ? v : "");
	}
	if (!out)
		weir_error_oom(err);
	connection_release(&c);
	return out;
}

/* The value of a var./conn. name (render), newly allocated; NULL with err. */
static char *secret_ref_value(const struct scan *s, const char *nm)
{
	const struct template_source *src = s->ctx ? s->ctx->src : NULL;

	if (!src || !src->var || !src->conn) {
		weir_error_set(s->err, WEIR_E_INVALID,
		               "{{ %s }}: no variables or connections are read here", nm);
		return NULL;
	}
	return nm[0] == 'v' ? var_value(src, nm, s->err) : conn_value(src, nm, s->err);
}

/* One `{{ ... }}` starting at `open`; *next is set past its `}}`. */
static int scan_expr(struct scan *s, const char *open, const char **next)
{
	const char *p = open + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\'' || *p == '"') {
		const char *q = strchr(p + 1, *p);
		if (!q)
			return scan_fail(s, open, "%s", "a quoted literal in {{ }} is not closed");
		const char *lit = p + 1;
		size_t lit_len = (size_t)(q - lit);
		p = q + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		if (p[0] != '}' || p[1] != '}')
			return scan_fail(s, open, "%s", "expected }} after the quoted literal");
		*next = p + 2;
		scan_literal(s, lit, lit_len);
		return 0;
	}
	const char *name = p;
	while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '-'))
		p++;
	size_t name_len = (size_t)(p - name);
	while (*p == ' ' || *p == '\t')
		p++;
	if (p[0] != '}' || p[1] != '}') {
		const char *close = strstr(open + 2, "}}");
		if (!close)
			return scan_fail(s, open, "%s", "{{ without a closing }}");
		char got[80];
		snprintf(got, sizeof got, "%.*s",
		         (int)(close - open - 2 > 60 ? 60 : close - open - 2), open + 2);
		return scan_fail(s, open,
		                 "expected a variable name like ds or params.NAME inside {{ }} "
		                 "(no filters or expressions), got \"%s\"",
		                 got);
	}
	*next = p + 2;
	char nm[256];
	if (!name_valid(name, name_len) || name_len >= sizeof nm)
		return scan_fail(s, open,
		                 "expected a variable name like ds or params.NAME inside {{ }}, "
		                 "got \"%.60s\"",
		                 name_len ? name : "");
	memcpy(nm, name, name_len);
	nm[name_len] = '\0';

	const struct template_var *var = NULL;
	char *secret = NULL;
	bool found;
	if (is_secret_ref(nm)) {
		char msg[400];
		if (secret_ref_check(nm, msg, sizeof msg) < 0)
			return scan_fail(s, open, "%s", msg);
		if (s->ctx && !(secret = secret_ref_value(s, nm))) {
			/* keep the source's kind (not found: the try may be retried) */
			enum weir_error_kind kind = s->err ? s->err->kind : WEIR_E_INVALID;
			char why[WEIR_ERROR_MSG_MAX];
			snprintf(why, sizeof why, "{{ %s }}: %s", nm, s->err ? s->err->msg : "");
			scan_fail(s, open, "%s", why);
			if (s->err)
				s->err->kind = kind;
			return -1;
		}
		found = true;
	} else {
		found =
		    s->ctx ? (var = template_ctx_get(s->ctx, nm)) != NULL : known_has(s->known, nm);
	}
	if (!found) {
		char list[400], msg[560];
		known_list(s, list, sizeof list);
		snprintf(msg, sizeof msg, "unknown variable \"%s\"; known here: %s", nm, list);
		return scan_fail(s, open, "%s", msg);
	}
	enum template_trust trust = secret ? TEMPLATE_OUTSIDE
	                            : var  ? var->trust
	                                   : template_name_trust(nm);
	const char *value = secret ? secret : var ? var->value : "";
	if (s->mode == TEMPLATE_SHELL && trust == TEMPLATE_TRUSTED && var && !safe_text(value))
		trust = TEMPLATE_OUTSIDE;
	if (s->mode == TEMPLATE_SHELL)
		scan_flush(s);
	if (s->mode == TEMPLATE_SHELL && trust == TEMPLATE_OUTSIDE) {
		const char *why = shell_ctx_unsafe(&s->sh);
		if (why) {
			char msg[800];
			snprintf(msg, sizeof msg,
			         "{{ %s }} comes from outside and cannot be quoted safely %s", nm,
			         why);
			free(secret);
			return scan_fail(s, open, "%s", msg);
		}
		if (s->out)
			add_quoted(s->out, &s->sh, value);
	} else if (s->out) {
		strbuf_addstr(s->out, value);
	}
	if (s->mode == TEMPLATE_SHELL)
		shell_ctx_value(&s->sh);
	free(secret);
	return 0;
}

static int scan_run(struct scan *s)
{
	const char *p = s->tmpl;
	int rc = 0;
	shell_ctx_init(&s->sh);
	strbuf_init(&s->pending);
	for (;;) {
		const char *open = strstr(p, "{{");
		if (!open) {
			scan_literal(s, p, strlen(p));
			break;
		}
		scan_literal(s, p, (size_t)(open - p));
		if (scan_expr(s, open, &p) < 0) {
			rc = -1;
			break;
		}
	}
	strbuf_release(&s->pending);
	if (rc == 0 && s->out && s->out->failed)
		return weir_error_oom(s->err);
	return rc;
}

char *template_render(const char *tmpl, const struct template_ctx *ctx, enum template_mode mode,
                      struct weir_error *err)
{
	static const struct template_ctx empty = TEMPLATE_CTX_INIT;
	struct strbuf out = STRBUF_INIT;
	struct scan s = {
	    .tmpl = tmpl, .mode = mode, .ctx = ctx ? ctx : &empty, .out = &out, .err = err};
	if (scan_run(&s) < 0) {
		strbuf_release(&out);
		return NULL;
	}
	char *text = strbuf_detach(&out, NULL);
	if (!text)
		weir_error_oom(err);
	return text;
}

int template_check(const char *tmpl, const struct strvec *known, enum template_mode mode,
                   struct weir_error *err)
{
	static const struct strvec none = STRVEC_INIT;
	struct scan s = {.tmpl = tmpl, .mode = mode, .known = known ? known : &none, .err = err};
	return scan_run(&s);
}

/* ---- the variables of a task try --------------------------------------- */

char *template_value_text(const json_t *v)
{
	char buf[64];
	switch (json_typeof(v)) {
	case JSON_STRING:
		return strndup(json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return strdup(buf);
	case JSON_REAL:
		/* the shortest text that reads back as the same number (0.1, not
		 * 0.10000000000000001) */
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, sizeof buf, "%.*g", prec, json_real_value(v));
			if (strtod(buf, NULL) == json_real_value(v))
				break;
		}
		return strdup(buf);
	case JSON_TRUE:
		return strdup("true");
	case JSON_FALSE:
		return strdup("false");
	case JSON_NULL:
		return strdup("");
	default:
		return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	}
}

static int set_json(struct template_ctx *ctx, const char *name, const json_t *v,
                    struct weir_error *err)
{
	char *text = template_value_text(v);
	if (!text)
		return weir_error_oom(err);
	int rc = template_ctx_set(ctx, name, text, TEMPLATE_OUTSIDE, err);
	free(text);
	return rc;
}

int template_ctx_fill(struct template_ctx *ctx, const struct template_run *run,
                      struct weir_error *err)
{
	char ds[32], nodash[32], ts[40], start[40], end[40], tryn[24];
	const char *key, *task;
	const json_t *v, *obj;

	schedule_format_ds(run->logical_ms, false, ds, sizeof ds);
	schedule_format_ds(run->logical_ms, true, nodash, sizeof nodash);
	schedule_format_ts(run->logical_ms, ts, sizeof ts);
	schedule_format_ts(run->interval_start_ms, start, sizeof start);
	schedule_format_ts(run->interval_end_ms, end, sizeof end);
	snprintf(tryn, sizeof tryn, "%d", run->try_number);
	const char *values[] = {ds,  nodash,      ts,          ts,           start,
	                        end, run->run_id, run->dag_id, run->task_id, tryn};
	for (size_t i = 0; standard_names[i]; i++)
		if (template_ctx_set(ctx, standard_names[i], values[i], TEMPLATE_TRUSTED, err) < 0)
			return -1;
	if (run->params && json_is_object(run->params)) {
		json_object_foreach((json_t *)run->params, key, v)
		{
			char name[300];
			snprintf(name, sizeof name, "params.%s", key);
			if (set_json(ctx, name, v, err) < 0)
				return -1;
		}
	}
	if (run->outputs && json_is_object(run->outputs)) {
		json_object_foreach((json_t *)run->outputs, task, obj)
		{
			if (!json_is_object(obj))
				continue;
			json_object_foreach((json_t *)obj, key, v)
			{
				char name[600];
				snprintf(name, sizeof name, "outputs.%s.%s", task, key);
				if (set_json(ctx, name, v, err) < 0)
					return -1;
			}
		}
	}
	if (run->item && template_ctx_set(ctx, "item", run->item, TEMPLATE_OUTSIDE, err) < 0)
		return -1;
	if (json_is_object(run->item_value)) {
		json_object_foreach((json_t *)run->item_value, key, v)
		{
			char name[300];
			snprintf(name, sizeof name, "item.%s", key);
			if (set_json(ctx, name, v, err) < 0)
				return -1;
		}
	}
	return 0;
}

int template_ctx_env(const struct template_ctx *ctx, struct strvec *out, struct weir_error *err)
{
	for (size_t i = 0; i < ctx->n; i++) {
		const char *name = ctx->v[i].name;
		int prc;
		if (!strncmp(name, "item.", 5))
			continue; /* WEIR_ITEM holds the whole item */
		if (!strncmp(name, "outputs.", 8))
			continue; /* not in the environment: $WEIR_OUTPUT files carry them */
		if (!strncmp(name, "params.", 7)) {
			prc = strvec_push_kv(out, "WEIR_PARAM_", name + 7, ctx->v[i].value);
		} else {
			char upper[64];
			size_t j;
			for (j = 0; name[j] && j + 1 < sizeof upper; j++)
				upper[j] = (char)toupper((unsigned char)name[j]);
			upper[j] = '\0';
			prc = strvec_push_kv(out, "WEIR_", upper, ctx->v[i].value);
		}
		if (prc < 0)
			return weir_error_oom(err);
	}
	return 0;
}

int template_env(const struct template_run *run, struct strvec *out, struct weir_error *err)
{
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct template_run r = *run;
	int rc;

	r.outputs = NULL; /* not read: the environment leaves them out */
	rc = template_ctx_fill(&ctx, &r, err) < 0 ? -1 : template_ctx_env(&ctx, out, err);
	template_ctx_release(&ctx);
	return rc;
}
