/* connection.c: connection types, ids, the URI form (connection.h). */
#include "model/connection.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mask.h"
#include "lib/str.h"
#include "lib/strbuf.h"

static const struct {
	const char *name;
	const char *canonical;
	enum conn_kind kind;
} conn_types[] = {
    {"postgres", "postgres", CONN_POSTGRES},
    {"postgresql", "postgres", CONN_POSTGRES},
    {"mysql", "mysql", CONN_MYSQL},
    {"mariadb", "mysql", CONN_MYSQL},
    {"clickhouse", "clickhouse", CONN_CLICKHOUSE},
    {"redis", "redis", CONN_REDIS},
    {"sqlite", "sqlite", CONN_SQLITE},
    {"http", "http", CONN_HTTP},
    {"https", "https", CONN_HTTP},
    {"fs", "fs", CONN_FS},
    {"file", "fs", CONN_FS},
    {"smtp", "smtp", CONN_SMTP},
};

enum conn_kind connection_kind_of(const char *type, const char **canonical)
{
	if (canonical)
		*canonical = type;
	if (!type)
		return CONN_OTHER;
	for (size_t i = 0; i < sizeof(conn_types) / sizeof(conn_types[0]); i++) {
		if (strcasecmp(type, conn_types[i].name) == 0) {
			if (canonical)
				*canonical = conn_types[i].canonical;
			return conn_types[i].kind;
		}
	}
	return CONN_OTHER;
}

int connection_check_id(const char *id, struct weir_error *err)
{
	size_t n = id ? strlen(id) : 0;
	if (n == 0 || n > CONNECTION_ID_MAX)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "connection id: expected 1 to %d characters",
		                      CONNECTION_ID_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)id[i];
		if (!isalnum(ch) && ch != '_' && ch != '.' && ch != '-')
			return weir_error_set(err, WEIR_E_INVALID,
			                      "connection id \"%s\": character %zu is not a "
			                      "letter, digit, '_', '.' or '-'",
			                      id, i + 1);
	}
	return 0;
}

/* Percent-decodes s[0..n) (and '+' as a space when plus_space) into a new
 * string; NULL on a bad escape, an encoded NUL, or out of memory. */
static char *pct_decode(const char *s, size_t n, bool plus_space)
{
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%') {
			if (i + 2 >= n) {
				free(out);
				return NULL;
			}
			int a = str_hex_digit(s[i + 1]), b = str_hex_digit(s[i + 2]);
			if (a < 0 || b < 0 || (a == 0 && b == 0)) {
				free(out);
				return NULL;
			}
			out[o++] = (char)(a * 16 + b);
			i += 2;
		} else if (plus_space && s[i] == '+') {
			out[o++] = ' ';
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return out;
}

/* Decodes one part into *dst (NULL for an empty part). */
static int decode_part(const char *s, size_t n, bool plus_space, char **dst, const char *what,
                       struct weir_error *err)
{
	*dst = NULL;
	if (n == 0)
		return 0;
	*dst = pct_decode(s, n, plus_space);
	if (!*dst)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "connection URI: the %s has a bad %%-escape (expected %%XX, "
		                      "two hex digits, not %%00)",
		                      what);
	return 0;
}

static int parse_query(const char *q, struct connection *c, struct weir_error *err)
{
	json_t *extra = json_object();
	if (!extra)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	while (*q) {
		size_t n = strcspn(q, "&");
		const char *eq = memchr(q, '=', n);
		size_t kn = eq ? (size_t)(eq - q) : n;
		char *k = NULL, *v = NULL;
		if (kn == 0 && n > 0) {
			json_decref(extra);
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "connection URI: a query parameter has no name (expected NAME=VALUE)");
		}
		if (n > 0) {
			if (decode_part(q, kn, true, &k, "query", err) < 0 ||
			    (eq && decode_part(eq + 1, n - kn - 1, true, &v, "query", err) < 0)) {
				free(k);
				json_decref(extra);
				return -1;
			}
			if (strcmp(k, "__extra__") == 0) {
				json_error_t jerr;
				json_t *x = json_loads(v ? v : "", JSON_REJECT_DUPLICATES, &jerr);
				if (!x || !json_is_object(x)) {
					json_decref(x);
					free(k);
					free(v);
					json_decref(extra);
					return weir_error_set(
					    err, WEIR_E_INVALID,
					    "connection URI: __extra__ must be a JSON object");
				}
				json_object_update(extra, x);
				json_decref(x);
			} else {
				json_object_set_new(extra, k, json_string(v ? v : ""));
			}
			free(k);
			free(v);
		}
		q += n;
		if (*q == '&')
			q++;
	}
	if (json_object_size(extra) > 0)
		c->extra = extra;
	else
		json_decref(extra);
	return 0;
}

static int parse_authority(const char *a, size_t n, struct connection *c, struct weir_error *err)
{
	/* userinfo is up to the last '@' (a password may hold an encoded one). */
	const char *at = NULL;
	for (size_t i = 0; i < n; i++)
		if (a[i] == '@')
			at = a + i;
	const char *h = a;
	size_t hn = n;
	if (at) {
		size_t un = (size_t)(at - a);
		const char *colon = memchr(a, ':', un);
		size_t ln = colon ? (size_t)(colon - a) : un;
		if (decode_part(a, ln, false, &c->login, "login", err) < 0)
			return -1;
		if (colon &&
		    decode_part(colon + 1, un - ln - 1, false, &c->password, "password", err) < 0)
			return -1;
		h = at + 1;
		hn = n - un - 1;
	}
	const char *port = NULL;
	size_t host_n = hn;
	if (hn > 0 && h[0] == '[') {
		const char *close = memchr(h, ']', hn);
		if (!close)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "connection URI: an IPv6 host opened with '[' has no ']'");
		host_n = (size_t)(close - h) + 1;
		if (host_n < hn) {
			if (h[host_n] != ':')
				return weir_error_set(
				    err, WEIR_E_INVALID,
				    "connection URI: expected ':PORT' after the IPv6 host");
			port = h + host_n + 1;
		}
	} else {
		const char *colon = memchr(h, ':', hn);
		if (colon) {
			host_n = (size_t)(colon - h);
			port = colon + 1;
		}
	}
	if (decode_part(h, host_n, false, &c->host, "host", err) < 0)
		return -1;
	if (port) {
		size_t pn = hn - (size_t)(port - h);
		char buf[8];
		int64_t v;
		if (pn == 0 || pn >= sizeof(buf))
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "connection URI: the port must be a number from 1 to 65535");
		memcpy(buf, port, pn);
		buf[pn] = '\0';
		if (str_to_int64(buf, 1, 65535, &v) < 0)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "connection URI: the port \"%s\" must be a number from 1 to 65535",
			    buf);
		c->port = (int)v;
	}
	return 0;
}

int connection_from_uri(const char *id, const char *uri, struct connection *out,
                        struct weir_error *err)
{
	memset(out, 0, sizeof(*out));
	if (connection_check_id(id, err) < 0)
		return -1;
	const char *sep = uri ? strstr(uri, "://") : NULL;
	if (!sep || sep == uri)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "connection %s: expected a URI "
		                      "TYPE://[LOGIN[:PASSWORD]@]HOST[:PORT][/SCHEMA][?EXTRA]",
		                      id);
	size_t tn = (size_t)(sep - uri);
	char scheme[64];
	if (tn >= sizeof(scheme))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "connection %s: the URI's type is too long", id);
	for (size_t i = 0; i < tn; i++) {
		unsigned char ch = (unsigned char)uri[i];
		if (!isalnum(ch) && ch != '-' && ch != '_' && ch != '+' && ch != '.')
			return weir_error_set(err, WEIR_E_INVALID,
			                      "connection %s: the URI's type may hold letters, "
			                      "digits, '-', '_', '+' and '.' only",
			                      id);
		scheme[i] = ch == '-' ? '_' : (char)tolower(ch);
	}
	scheme[tn] = '\0';
	const char *canonical;
	out->kind = connection_kind_of(scheme, &canonical);
	if (!(out->id = strdup(id)) || !(out->type = strdup(canonical))) {
		connection_release(out);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	const char *rest = sep + 3;
	size_t an = strcspn(rest, "/?#");
	if (parse_authority(rest, an, out, err) < 0)
		goto fail;
	rest += an;
	if (*rest == '/') {
		size_t pn = strcspn(rest + 1, "?#");
		if (decode_part(rest + 1, pn, false, &out->schema, "schema", err) < 0)
			goto fail;
		rest += 1 + pn;
	}
	if (*rest == '?') {
		size_t qn = strcspn(rest + 1, "#");
		char *q = strndup(rest + 1, qn);
		if (!q) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			goto fail;
		}
		int rc = parse_query(q, out, err);
		free(q);
		if (rc < 0)
			goto fail;
	}
	return 0;
fail:
	weir_error_prefix(err, "connection %s", id);
	connection_release(out);
	return -1;
}

static int set_text_field(char **dst, const json_t *v, const char *key, struct weir_error *err)
{
	if (json_is_null(v)) {
		free(*dst);
		*dst = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return weir_error_set(err, WEIR_E_INVALID, "%s: expected a string or null", key);
	if (str_set(dst, json_string_value(v)) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return 0;
}

static int set_extra_field(struct connection *c, const json_t *v, struct weir_error *err)
{
	json_t *x = NULL;

	if (json_is_string(v) && json_string_length(v) > 0) {
		x = json_loads(json_string_value(v), 0, NULL);
		if (!json_is_object(x)) {
			json_decref(x);
			return weir_error_set(err, WEIR_E_INVALID,
			                      "extra: expected a JSON object (or its text)");
		}
	} else if (json_is_object(v)) {
		x = json_deep_copy(v);
		if (!x)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	} else if (!json_is_null(v) && !json_is_string(v)) {
		return weir_error_set(err, WEIR_E_INVALID,
		                      "extra: expected a JSON object (or its text)");
	}
	json_decref(c->extra);
	c->extra = x;
	return 0;
}

int connection_apply_json(struct connection *c, const json_t *obj, struct weir_error *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "expected a JSON object of a connection's fields");
	json_object_foreach((json_t *)obj, key, v)
	{
		if (!strcmp(key, "connection_id"))
			continue;
		if (!strcmp(key, "conn_type")) {
			const char *canonical;
			if (!json_is_string(v) || !json_string_length(v))
				return weir_error_set(
				    err, WEIR_E_INVALID,
				    "conn_type: expected a type like postgres, "
				    "mysql, redis, clickhouse, sqlite, http or fs");
			c->kind = connection_kind_of(json_string_value(v), &canonical);
			if (str_set(&c->type, canonical) < 0)
				return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		} else if (!strcmp(key, "port")) {
			if (json_is_null(v)) {
				c->port = 0;
			} else if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			           json_integer_value(v) > 65535) {
				return weir_error_set(err, WEIR_E_INVALID,
				                      "port: expected a number 0..65535 or null");
			} else {
				c->port = (int)json_integer_value(v);
			}
		} else if (!strcmp(key, "extra")) {
			if (set_extra_field(c, v, err) < 0)
				return -1;
		} else {
			char **dst = !strcmp(key, "description") ? &c->description
			             : !strcmp(key, "host")      ? &c->host
			             : !strcmp(key, "login")     ? &c->login
			             : !strcmp(key, "password")  ? &c->password
			             : !strcmp(key, "schema")    ? &c->schema
			                                         : NULL;
			if (!dst)
				return weir_error_set(err, WEIR_E_INVALID,
				                      "%s: unknown field (expected connection_id, "
				                      "conn_type, description, host, port, login, "
				                      "password, schema or extra)",
				                      key);
			if (set_text_field(dst, v, key, err) < 0)
				return -1;
		}
	}
	return 0;
}

int connection_from_json(const char *id, const json_t *obj, struct connection *out,
                         struct weir_error *err)
{
	memset(out, 0, sizeof *out);
	if (connection_check_id(id, err) < 0)
		return -1;
	if (!(out->id = strdup(id)))
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (connection_apply_json(out, obj, err) < 0)
		goto fail;
	if (!out->type) {
		weir_error_set(err, WEIR_E_INVALID, "conn_type: expected a type (it is required)");
		goto fail;
	}
	return 0;
fail:
	weir_error_prefix(err, "connection %s", id);
	connection_release(out);
	return -1;
}

/* Appends s percent-encoded: everything but unreserved characters (and
 * those in `keep`) as %XX. */
static void pct_encode(struct strbuf *sb, const char *s, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || strchr("-._~", *p) || (keep && strchr(keep, *p)))
			strbuf_addch(sb, (char)*p);
		else
			strbuf_addf(sb, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
}

static bool extra_all_strings(const json_t *extra)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)extra, k, v)
	{
		if (!json_is_string(v) || strcmp(k, "__extra__") == 0)
			return false;
	}
	return true;
}

char *connection_to_uri(const struct connection *c, bool with_password)
{
	struct strbuf sb = STRBUF_INIT;
	const char *scheme = c->kind == CONN_POSTGRES ? "postgresql" : c->type ? c->type : "";
	for (const char *p = scheme; *p; p++)
		strbuf_addch(&sb, *p == '_' ? '-' : *p);
	strbuf_addstr(&sb, "://");
	bool pw = with_password && c->password && *c->password;
	if ((c->login && *c->login) || pw) {
		pct_encode(&sb, c->login ? c->login : "", NULL);
		if (pw) {
			strbuf_addch(&sb, ':');
			pct_encode(&sb, c->password, NULL);
		}
		strbuf_addch(&sb, '@');
	}
	if (c->host) {
		if (strchr(c->host, ':') && c->host[0] != '[')
			pct_encode(&sb, c->host,
			           NULL); /* a path (sqlite) or a bare IPv6: keep it one part */
		else
			pct_encode(&sb, c->host, "[]:");
	}
	if (c->port > 0)
		strbuf_addf(&sb, ":%d", c->port);
	if (c->schema && *c->schema) {
		strbuf_addch(&sb, '/');
		pct_encode(&sb, c->schema, "/");
	}
	if (c->extra && json_object_size(c->extra) > 0) {
		strbuf_addch(&sb, '?');
		if (extra_all_strings(c->extra)) {
			const char *k;
			json_t *v;
			bool first = true;
			json_object_foreach(c->extra, k, v)
			{
				if (!first)
					strbuf_addch(&sb, '&');
				first = false;
				pct_encode(&sb, k, NULL);
				strbuf_addch(&sb, '=');
				pct_encode(&sb, json_string_value(v), NULL);
			}
		} else {
			char *js = json_dumps(c->extra, JSON_COMPACT | JSON_SORT_KEYS);
			strbuf_addstr(&sb, "__extra__=");
			if (js)
				pct_encode(&sb, js, NULL);
			else
				sb.failed = true;
			free(js);
		}
	}
	if (sb.failed) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

int connection_copy(struct connection *dst, const struct connection *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->kind = src->kind;
	dst->port = src->port;
	const char *from[] = {src->id,    src->type,     src->description, src->host,
	                      src->login, src->password, src->schema};
	char **to[] = {&dst->id,    &dst->type,     &dst->description, &dst->host,
	               &dst->login, &dst->password, &dst->schema};
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		if (from[i] && !(*to[i] = strdup(from[i]))) {
			connection_release(dst);
			return -1;
		}
	}
	if (src->extra && !(dst->extra = json_deep_copy(src->extra))) {
		connection_release(dst);
		return -1;
	}
	return 0;
}

char *connection_path(const struct connection *c)
{
	if (c->host && *c->host)
		return strdup(c->host);
	if (!c->schema || !*c->schema)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	if (c->schema[0] != '/')
		strbuf_addch(&sb, '/');
	strbuf_addstr(&sb, c->schema);
	if (sb.failed) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

char *connection_env_name(const char *id)
{
	return connection_env_name_with("WEIR_CONN_", id);
}

char *connection_env_name_with(const char *prefix, const char *id)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, prefix);
	for (const char *p = id; *p; p++)
		strbuf_addch(&sb,
		             (*p == '.' || *p == '-') ? '_' : (char)toupper((unsigned char)*p));
	if (sb.failed) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

void connection_id_of_env(const char *suffix, char *out, size_t size)
{
	size_t i;
	for (i = 0; suffix[i] && i + 1 < size; i++)
		out[i] = (char)tolower((unsigned char)suffix[i]);
	if (size)
		out[i] = '\0';
}

/* Airflow's DEFAULT_SENSITIVE_FIELDS. */
static const char *const secret_names[] = {
    "access_token", "api_key",     "apikey", "authorization", "passphrase",   "passwd",
    "password",     "private_key", "secret", "token",         "keyfile_dict", "service_account",
};

/* The names the configuration adds (sensitive_var_conn_names), set once at
 * the server's start, before any thread reads them. */
static struct strvec extra_secret_names = STRVEC_INIT;

int connection_secret_names_add(const char *names, struct weir_error *err)
{
	const char *p = names ? names : "";

	while (*p) {
		size_t n;
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		n = strcspn(p, ",");
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n && strvec_pushf(&extra_secret_names, "%.*s", (int)n, p) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		p += strcspn(p, ",");
	}
	return 0;
}

void connection_secret_names_reset(void)
{
	strvec_release(&extra_secret_names);
}

bool connection_secret_name(const char *name)
{
	for (size_t i = 0; name && i < sizeof secret_names / sizeof secret_names[0]; i++)
		if (strcasestr(name, secret_names[i]))
			return true;
	for (size_t i = 0; name && i < extra_secret_names.n; i++)
		if (strcasestr(name, extra_secret_names.v[i]))
			return true;
	return false;
}

char *connection_mask_text(const struct connection *c, const char *text)
{
	const char *secret = c->password;
	struct mask *m;
	char *out;

	if (!secret || !*secret)
		return strdup(text ? text : "");
	m = mask_create(&secret, 1);
	out = m ? mask_string(m, text ? text : "") : NULL;
	mask_destroy(m);
	return out;
}

char *connection_extra_masked(const struct connection *c)
{
	json_t *copy, *v;
	const char *key;
	char *text;

	if (!c->extra || !json_object_size(c->extra))
		return NULL;
	if (!(copy = json_deep_copy(c->extra)))
		return NULL;
	json_object_foreach(copy, key, v) if (connection_secret_name(key))
	    json_object_set_new(copy, key, json_string("***"));
	text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(copy);
	return text;
}

int connection_list_add(struct strvec *ids, const char *id, struct weir_error *err)
{
	char *mine;

	if (connection_check_id(id, err) < 0)
		return -1;
	mine = connection_env_name(id);
	if (!mine)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	for (size_t i = 0; i < ids->n; i++) {
		char *other = connection_env_name(ids->v[i]);
		bool same = other && !strcmp(other, mine);
		free(other);
		if (same) {
			free(mine);
			return 0;
		}
	}
	free(mine);
	if (strvec_push(ids, id) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return 0;
}

int connection_list_read(struct strvec *ids, const json_t *list, struct weir_error *err)
{
	size_t i;
	json_t *v;

	if (!json_is_array(list))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "expected a list of connection ids, like [warehouse, cache]");
	json_array_foreach((json_t *)list, i, v)
	{
		if (!json_is_string(v))
			return weir_error_set(err, WEIR_E_INVALID,
			                      "[%zu]: expected a connection id (a string)", i);
		if (connection_list_add(ids, json_string_value(v), err) < 0) {
			weir_error_prefix(err, "[%zu]", i);
			return -1;
		}
	}
	return 0;
}

int connection_http_url(const struct connection *c, struct strbuf *url, struct weir_error *err)
{
	const char *h = c->host ? c->host : "";
	bool https = (c->schema && !strcmp(c->schema, "https")) ||
	             (c->type && !strcmp(c->type, "https")) || !strncmp(h, "https://", 8);

	if (!strncmp(h, "http://", 7))
		h += 7;
	else if (!strncmp(h, "https://", 8))
		h += 8;
	if (!*h || *h == '/')
		return weir_error_set(err, WEIR_E_INVALID, "connection %s: no host", c->id);
	size_t hl = strcspn(h, "/");
	strbuf_addf(url, "%s://%.*s", https ? "https" : "http", (int)hl, h);
	if (c->port > 0 && !memchr(h, ':', hl))
		strbuf_addf(url, ":%d", c->port);
	strbuf_add(url, h + hl, strlen(h + hl));
	return url->failed ? weir_error_set(err, WEIR_E_INTERNAL, "%s", "out of memory") : 0;
}

const char *connection_ca_file(const struct connection *c)
{
	return json_string_value(json_object_get(c->extra, "ca_file"));
}

void connection_release(struct connection *c)
{
	if (!c)
		return;
	free(c->id);
	free(c->type);
	free(c->description);
	free(c->host);
	free(c->login);
	if (c->password) {
		/* a password does not linger in freed memory */
		volatile char *p = c->password;
		while (*p)
			*p++ = '\0';
	}
	free(c->password);
	free(c->schema);
	json_decref(c->extra);
	memset(c, 0, sizeof(*c));
}

void connections_free(struct connection *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		connection_release(&rows[i]);
	free(rows);
}
