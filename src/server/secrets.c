/* secrets.c: the sources of connections and variables and their
 * precedence (secrets.h).
 *
 * The configuration's entries and the overrides are copies kept here; the
 * store is read at each lookup (the API may have changed it); the
 * environment is read at each lookup too, so a test that sets it before
 * the server starts sees it, and nothing of it is kept.
 */
#include "server/secrets.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/log.h"
#include "lib/str.h"
#include "server/token.h"

extern char **environ;

#define CONN_ENV_PREFIX "WEIR_CONN_"
#define VAR_ENV_PREFIX "WEIR_VAR_"
#define AIRFLOW_CONN_ENV_PREFIX "AIRFLOW_CONN_"
#define AIRFLOW_VAR_ENV_PREFIX "AIRFLOW_VAR_"

struct secrets {
	struct secrets_store *ss;
	struct connection *cfg_conns, *over_conns;
	size_t n_cfg_conns, n_over_conns;
	struct variable *cfg_vars, *over_vars;
	size_t n_cfg_vars, n_over_vars;
	secrets_var_changed_fn var_changed; /* told of each variable written */
	void *var_changed_arg;
};

const char *secret_source_name(enum secret_source s)
{
	switch (s) {
	case SECRET_CONFIG:
		return "config";
	case SECRET_STORE:
		return "store";
	case SECRET_ENV:
		return "environment";
	case SECRET_OVERRIDE:
		return "override";
	}
	return "?";
}

static int scrub_clear_copies(struct secrets *s, struct store *store, const char *names,
                              struct weir_error *err);

struct secrets *secrets_create(struct store *store, const char *home,
                               const struct server_config *cfg, struct weir_error *err)
{
	uint8_t key[SEAL_KEY_SIZE];
	struct weir_error e2 = {0};
	struct secrets *s = calloc(1, sizeof *s);

	if (!s) {
		weir_error_oom(err);
		return NULL;
	}
	/* the configuration's sensitive names, for every part of this process */
	connection_secret_names_reset();
	if (cfg && connection_secret_names_add(cfg->sensitive_names, err) < 0)
		goto fail;
	if (server_key_load_or_create(home, key, err) < 0)
		goto fail;
	s->ss = secrets_store_create(store, key, err);
	memset(key, 0, sizeof key);
	if (!s->ss)
		goto fail;
	if (cfg && cfg->n_connections) {
		s->cfg_conns = calloc(cfg->n_connections, sizeof *s->cfg_conns);
		for (size_t i = 0; s->cfg_conns && i < cfg->n_connections; i++, s->n_cfg_conns++)
			if (connection_copy(&s->cfg_conns[i], &cfg->connections[i]) < 0)
				break;
		if (s->n_cfg_conns != cfg->n_connections) {
			weir_error_oom(err);
			goto fail;
		}
	}
	if (cfg && cfg->n_variables) {
		s->cfg_vars = calloc(cfg->n_variables, sizeof *s->cfg_vars);
		for (size_t i = 0; s->cfg_vars && i < cfg->n_variables; i++, s->n_cfg_vars++)
			if (variable_copy(&s->cfg_vars[i], &cfg->variables[i]) < 0)
				break;
		if (s->n_cfg_vars != cfg->n_variables) {
			weir_error_oom(err);
			goto fail;
		}
	}
	/* not fatal: a variable that does not open (another key) is an error
	 * of its own lookups; the masking is tried again at the next start */
	if (scrub_clear_copies(s, store, cfg ? cfg->sensitive_names : NULL, &e2) < 0)
		log_warn("%s", e2.msg);
	return s;
fail:
	secrets_destroy(s);
	return NULL;
}

void secrets_destroy(struct secrets *s)
{
	if (!s)
		return;
	secrets_store_destroy(s->ss);
	connections_free(s->cfg_conns, s->n_cfg_conns);
	connections_free(s->over_conns, s->n_over_conns);
	variables_free(s->cfg_vars, s->n_cfg_vars);
	variables_free(s->over_vars, s->n_over_vars);
	free(s);
}

struct secrets_store *secrets_store_of(struct secrets *s)
{
	return s->ss;
}

/* Whether two ids name the same environment variable (MY_DB). */
static bool same_env_name(const char *prefix, const char *a, const char *b)
{
	char *ea = connection_env_name_with(prefix, a), *eb = connection_env_name_with(prefix, b);
	bool same = ea && eb && !strcmp(ea, eb);
	free(ea);
	free(eb);
	return same;
}

/* A connection from its text in the environment or a flag: a URI, or
 * Airflow's JSON form ({"conn_type": ...}). */
static int conn_from_text(const char *id, const char *text, const char *where,
                          struct connection *out, struct weir_error *err)
{
	int rc;

	if (text[0] == '{') {
		json_t *j = json_loads(text, 0, NULL);
		rc = j ? connection_from_json(id, j, out, err)
		       : weir_error_set(err, WEIR_E_INVALID, "connection %s: not valid JSON", id);
		json_decref(j);
	} else {
		rc = connection_from_uri(id, text, out, err);
	}
	if (rc < 0)
		weir_error_prefix(err, "%s", where);
	return rc;
}

/* Airflow's name for weir's environment prefix: AIRFLOW_CONN_, AIRFLOW_VAR_. */
static const char *airflow_prefix(const char *prefix)
{
	return !strcmp(prefix, CONN_ENV_PREFIX) ? AIRFLOW_CONN_ENV_PREFIX : AIRFLOW_VAR_ENV_PREFIX;
}

/* An environment name less its "WEIR_" (CONN_MY_DB, for Airflow's name in a message). */
static const char *without_weir(const char *name)
{
	return strncmp(name, "WEIR_", 5) ? name : name + 5;
}

/* The environment's value for `id` under `prefix` (WEIR_CONN_MY_DB), else
 * under Airflow's (AIRFLOW_CONN_MY_DB, as an Airflow deployment sets them),
 * or NULL; `name` gets the name read (the first when neither is set). */
static const char *env_value(const char *prefix, const char *id, char *name, size_t size)
{
	const char *v = NULL;

	for (int i = 1; i >= 0 && !v; i--) {
		char *n = connection_env_name_with(i ? prefix : airflow_prefix(prefix), id);
		if (!n)
			return NULL;
		v = getenv(n);
		if (v || i)
			snprintf(name, size, "%s", n);
		free(n);
	}
	return v;
}

int secrets_conn_resolve(struct secrets *s, const char *id, struct connection *out,
                         enum secret_source *src, struct weir_error *err)
{
	char name[CONNECTION_ID_MAX + 16] = "";
	const char *env;
	struct weir_error e2 = {0};
	enum secret_source from;

	memset(out, 0, sizeof *out);
	if (connection_check_id(id, err) < 0)
		return -1;
	for (size_t i = s->n_over_conns; i-- > 0;) {
		if (same_env_name(CONN_ENV_PREFIX, s->over_conns[i].id, id)) {
			from = SECRET_OVERRIDE;
			if (connection_copy(out, &s->over_conns[i]) < 0)
				return weir_error_oom(err);
			goto found;
		}
	}
	env = env_value(CONN_ENV_PREFIX, id, name, sizeof name);
	if (env && *env) {
		char where[sizeof name + 40];
		snprintf(where, sizeof where, "the server's environment %s", name);
		if (conn_from_text(id, env, where, out, err) < 0)
			return -1;
		from = SECRET_ENV;
		goto found;
	}
	if (secrets_store_conn_get(s->ss, id, out, &e2) == 0) {
		from = SECRET_STORE;
		goto found;
	}
	if (e2.kind != WEIR_E_NOT_FOUND) {
		if (err)
			*err = e2;
		return -1;
	}
	for (size_t i = 0; i < s->n_cfg_conns; i++) {
		if (!strcmp(s->cfg_conns[i].id, id)) {
			from = SECRET_CONFIG;
			if (connection_copy(out, &s->cfg_conns[i]) < 0)
				return weir_error_oom(err);
			goto found;
		}
	}
	return weir_error_set(err, WEIR_E_NOT_FOUND,
	                      "connection \"%s\" is not defined (looked in the server's "
	                      "environment %s and AIRFLOW_%s, the store and the configuration)",
	                      id, name, without_weir(name));
found:
	/* the id as asked, whichever spelling the source used */
	if (strcmp(out->id, id) && str_set(&out->id, id) < 0) {
		connection_release(out);
		return weir_error_oom(err);
	}
	if (src)
		*src = from;
	return 0;
}

void secrets_on_var_changed(struct secrets *s, secrets_var_changed_fn fn, void *arg)
{
	s->var_changed = fn;
	s->var_changed_arg = arg;
}

int secrets_var_set(struct secrets *s, const struct variable *v, struct weir_error *err)
{
	if (secrets_store_var_set(s->ss, v, err) < 0)
		return -1;
	if (s->var_changed)
		s->var_changed(s->var_changed_arg, v->key);
	return 0;
}

int secrets_var_delete(struct secrets *s, const char *key, struct weir_error *err)
{
	if (secrets_store_var_delete(s->ss, key, err) < 0)
		return -1;
	if (s->var_changed)
		s->var_changed(s->var_changed_arg, key);
	return 0;
}

int secrets_var_resolve(struct secrets *s, const char *key, struct variable *out,
                        enum secret_source *src, struct weir_error *err)
{
	char name[VARIABLE_KEY_MAX + 16] = "";
	const char *env;
	struct weir_error e2 = {0};
	const struct variable *v = NULL;
	enum secret_source from = SECRET_CONFIG;

	memset(out, 0, sizeof *out);
	if (variable_check_key(key, err) < 0)
		return -1;
	for (size_t i = s->n_over_vars; i-- > 0 && !v;)
		if (same_env_name(VAR_ENV_PREFIX, s->over_vars[i].key, key)) {
			v = &s->over_vars[i];
			from = SECRET_OVERRIDE;
		}
	env = v ? NULL : env_value(VAR_ENV_PREFIX, key, name, sizeof name);
	if (env) {
		struct variable ev = {.key = (char *)key, .value = (char *)env};
		if (variable_copy(out, &ev) < 0)
			return weir_error_oom(err);
		from = SECRET_ENV;
		goto found;
	}
	if (!v) {
		if (secrets_store_var_get(s->ss, key, out, &e2) == 0) {
			from = SECRET_STORE;
			goto found;
		}
		if (e2.kind != WEIR_E_NOT_FOUND) {
			if (err)
				*err = e2;
			return -1;
		}
		for (size_t i = 0; i < s->n_cfg_vars && !v; i++)
			if (!strcmp(s->cfg_vars[i].key, key))
				v = &s->cfg_vars[i];
	}
	if (!v) {
		return weir_error_set(
		    err, WEIR_E_NOT_FOUND,
		    "variable \"%s\" is not set (looked in the server's "
		    "environment %s and AIRFLOW_%s, the store and the configuration)",
		    key, name, without_weir(name));
	}
	if (variable_copy(out, v) < 0)
		return weir_error_oom(err);
	if (strcmp(out->key, key) && str_set(&out->key, key) < 0) {
		variable_release(out);
		return weir_error_oom(err);
	}
found:
	if (src)
		*src = from;
	return 0;
}

/* ---- what a task gets ---- */

static void mask_add(json_t *mask, const char *s)
{
	if (s && *s)
		json_array_append_new(mask, json_string(s));
}

/* The password as the URI writes it (percent-encoded), when that differs. */
static void mask_add_encoded(json_t *mask, const struct connection *c)
{
	struct connection only = {
	    .id = c->id, .type = c->type, .password = c->password, .login = (char *)"u"};
	char *uri = connection_to_uri(&only, true);
	const char *colon = uri ? strstr(uri, "://u:") : NULL;

	if (colon) {
		char *at = strrchr(colon, '@');
		if (at) {
			*at = '\0';
			if (strcmp(colon + 5, c->password))
				mask_add(mask, colon + 5);
		}
	}
	free(uri);
}

int secrets_task_env(struct secrets *s, const struct strvec *ids, json_t *env, json_t *mask,
                     struct weir_error *err)
{
	for (size_t i = 0; i < ids->n; i++) {
		struct connection c;
		char *name, *uri;
		const char *key;
		json_t *v;

		if (secrets_conn_resolve(s, ids->v[i], &c, NULL, err) < 0)
			return -1;
		name = connection_env_name(c.id);
		uri = connection_to_uri(&c, true);
		if (!name || !uri) {
			free(name);
			free(uri);
			connection_release(&c);
			return weir_error_oom(err);
		}
		json_object_set_new(env, name, json_string(uri));
		mask_add(mask, uri);
		mask_add(mask, c.password);
		if (c.password && *c.password)
			mask_add_encoded(mask, &c);
		json_object_foreach(c.extra, key,
		                    v) if (connection_secret_name(key) && json_is_string(v))
		    mask_add(mask, json_string_value(v));
		free(name);
		free(uri);
		connection_release(&c);
	}
	return 0;
}

/* What versions before 13 (or before a name was added to
 * sensitive_var_conn_names) wrote in clear, masked once per list of names:
 * the meta row "secrets_masked_names" says which list the store was last
 * masked for. */
static int scrub_clear_copies(struct secrets *s, struct store *store, const char *names,
                              struct weir_error *err)
{
	struct strvec texts = STRVEC_INIT;
	struct secret_var *rows = NULL;
	char *done = NULL;
	size_t n = 0;
	int rc = -1;

	if (!names)
		names = "";
	if (store_meta_get(store, "secrets_masked_names", &done, NULL) == 0 && done &&
	    !strcmp(done, names)) {
		free(done);
		return 0;
	}
	free(done);
	if (secrets_var_list(s, &rows, &n, err) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (variable_is_secret(rows[i].v.key) &&
		    variable_mask_add(&texts, rows[i].v.value) < 0) {
			weir_error_oom(err);
			goto out;
		}
	if (secrets_store_scrub(s->ss, &texts, err) < 0 ||
	    store_meta_set(store, "secrets_masked_names", names, err) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0)
		weir_error_prefix(err,
		                  "masking the secret variables a version before wrote in clear");
	for (size_t i = 0; i < texts.n; i++)
		memset(texts.v[i], 0, strlen(texts.v[i]));
	strvec_release(&texts);
	secret_var_list_free(rows, n);
	return rc;
}

/* ---- lists ---- */

void secret_conn_list_free(struct secret_conn *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		connection_release(&rows[i].c);
	free(rows);
}

void secret_var_list_free(struct secret_var *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		variable_release(&rows[i].v);
	free(rows);
}

/* An id list with each id once (by its environment name), in no order. */
struct ids {
	char **v;
	size_t n, cap;
};

static int ids_add(struct ids *ids, const char *prefix, const char *id)
{
	for (size_t i = 0; i < ids->n; i++)
		if (same_env_name(prefix, ids->v[i], id))
			return 0;
	if (ALLOC_GROW(ids->v, ids->n + 1, ids->cap) < 0)
		return -1;
	if (!(ids->v[ids->n] = strdup(id)))
		return -1;
	ids->n++;
	return 0;
}

static void ids_release(struct ids *ids)
{
	for (size_t i = 0; i < ids->n; i++)
		free(ids->v[i]);
	free(ids->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The environment's ids under `prefix` (lower-cased), after those known. */
static int ids_from_env(struct ids *ids, const char *prefix)
{
	size_t pl = strlen(prefix);

	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char id[CONNECTION_ID_MAX + 1], suffix[CONNECTION_ID_MAX + 1];
		size_t nl = eq ? (size_t)(eq - *e) : 0;
		if (!eq || nl <= pl || nl - pl > CONNECTION_ID_MAX || strncmp(*e, prefix, pl) ||
		    !eq[1])
			continue;
		memcpy(suffix, *e + pl, nl - pl);
		suffix[nl - pl] = '\0';
		connection_id_of_env(suffix, id, sizeof id);
		if (connection_check_id(id, NULL) == 0 && ids_add(ids, prefix, id) < 0)
			return -1;
	}
	return 0;
}

/* Adds the ids at `offset` in n rows of `stride` bytes (a connection's id, a
 * variable's key). */
static int ids_add_rows(struct ids *ids, const char *prefix, const void *rows, size_t n,
                        size_t stride, size_t offset)
{
	for (size_t i = 0; i < n; i++) {
		const char *id = *(char *const *)((const char *)rows + i * stride + offset);
		if (ids_add(ids, prefix, id) < 0)
			return -1;
	}
	return 0;
}

/* Every id of connections (conns) or variables, sorted: the overrides',
 * the store's rows, the configuration's and the environment's. */
static int gather_ids(struct secrets *s, bool conns, const void *store_rows, size_t n_store,
                      struct ids *ids)
{
	const char *prefix = conns ? CONN_ENV_PREFIX : VAR_ENV_PREFIX;
	size_t cs = sizeof(struct connection), co = offsetof(struct connection, id);
	size_t vs = sizeof(struct variable), vo = offsetof(struct variable, key);
	int rc = conns ? ids_add_rows(ids, prefix, s->over_conns, s->n_over_conns, cs, co) |
	                     ids_add_rows(ids, prefix, store_rows, n_store, cs, co) |
	                     ids_add_rows(ids, prefix, s->cfg_conns, s->n_cfg_conns, cs, co)
	               : ids_add_rows(ids, prefix, s->over_vars, s->n_over_vars, vs, vo) |
	                     ids_add_rows(ids, prefix, store_rows, n_store, vs, vo) |
	                     ids_add_rows(ids, prefix, s->cfg_vars, s->n_cfg_vars, vs, vo);

	if (rc < 0 || ids_from_env(ids, prefix) < 0 ||
	    ids_from_env(ids, airflow_prefix(prefix)) < 0)
		return -1;
	if (ids->n > 1) /* none: v is NULL, which qsort may not take */
		qsort(ids->v, ids->n, sizeof *ids->v, cmp_str);
	return 0;
}

int secrets_conn_list(struct secrets *s, struct secret_conn **rows, size_t *n,
                      struct weir_error *err)
{
	struct ids ids = {0};
	struct connection *st = NULL;
	size_t n_st = 0, len = 0;
	struct secret_conn *out = NULL;
	int rc = -1;

	*rows = NULL;
	*n = 0;
	if (secrets_store_conn_list(s->ss, &st, &n_st, err) < 0)
		return -1;
	if (gather_ids(s, true, st, n_st, &ids) < 0 || !(out = calloc(ids.n + 1, sizeof *out))) {
		weir_error_oom(err);
		goto out;
	}
	for (; len < ids.n; len++)
		if (secrets_conn_resolve(s, ids.v[len], &out[len].c, &out[len].source, err) < 0)
			goto out;
	*rows = out;
	*n = len;
	out = NULL;
	rc = 0;
out:
	secret_conn_list_free(out, len);
	connections_free(st, n_st);
	ids_release(&ids);
	return rc;
}

int secrets_var_list(struct secrets *s, struct secret_var **rows, size_t *n, struct weir_error *err)
{
	struct ids ids = {0};
	struct variable *st = NULL;
	size_t n_st = 0, len = 0;
	struct secret_var *out = NULL;
	int rc = -1;

	*rows = NULL;
	*n = 0;
	if (secrets_store_var_list(s->ss, &st, &n_st, err) < 0)
		return -1;
	if (gather_ids(s, false, st, n_st, &ids) < 0 || !(out = calloc(ids.n + 1, sizeof *out))) {
		weir_error_oom(err);
		goto out;
	}
	for (; len < ids.n; len++)
		if (secrets_var_resolve(s, ids.v[len], &out[len].v, &out[len].source, err) < 0)
			goto out;
	*rows = out;
	*n = len;
	out = NULL;
	rc = 0;
out:
	secret_var_list_free(out, len);
	variables_free(st, n_st);
	ids_release(&ids);
	return rc;
}

/* ---- overrides ---- */

/* Splits "ID=VALUE" at the first '=' into id (size bytes); NULL when none. */
static const char *split_eq(const char *text, char *id, size_t size)
{
	const char *eq = text ? strchr(text, '=') : NULL;

	if (!eq || eq == text || (size_t)(eq - text) >= size)
		return NULL;
	memcpy(id, text, (size_t)(eq - text));
	id[eq - text] = '\0';
	return eq + 1;
}

int secrets_override_conn(struct secrets *s, const char *id_eq_uri, struct weir_error *err)
{
	char id[CONNECTION_ID_MAX + 1];
	const char *uri = split_eq(id_eq_uri, id, sizeof id);
	struct connection c;
	struct connection *nv;

	if (!uri)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "--conn: expected ID=URI (like "
		                      "pg=postgresql://user:pw@127.0.0.1:5432/db)");
	if (conn_from_text(id, uri, "--conn", &c, err) < 0)
		return -1;
	nv = realloc(s->over_conns, (s->n_over_conns + 1) * sizeof *nv);
	if (!nv) {
		connection_release(&c);
		return weir_error_oom(err);
	}
	s->over_conns = nv;
	s->over_conns[s->n_over_conns++] = c;
	return 0;
}

int secrets_override_var(struct secrets *s, const char *key_eq_value, struct weir_error *err)
{
	char key[VARIABLE_KEY_MAX + 1];
	const char *value = split_eq(key_eq_value, key, sizeof key);
	struct variable v = {0}, *nv;

	if (!value)
		return weir_error_set(err, WEIR_E_INVALID, "--var: expected KEY=VALUE");
	if (variable_check_key(key, err) < 0) {
		weir_error_prefix(err, "--var");
		return -1;
	}
	struct variable src = {.key = key, .value = (char *)value};
	if (variable_copy(&v, &src) < 0)
		return weir_error_oom(err);
	nv = realloc(s->over_vars, (s->n_over_vars + 1) * sizeof *nv);
	if (!nv) {
		variable_release(&v);
		return weir_error_oom(err);
	}
	s->over_vars = nv;
	s->over_vars[s->n_over_vars++] = v;
	return 0;
}
