/* users.c: the server's users and person's tokens (users.h). */
#include "server/users.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/basic_auth.h"
#include "api/person_token.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "store/user_store.h"

struct users {
	struct store *store;
	struct api *api;
	struct dag_manager *dm;
	struct basic_user *cfg; /* the configuration's, copied */
	size_t n_cfg;
};

static const struct basic_user *configured(const struct users *u, const char *name)
{
	for (size_t i = 0; i < u->n_cfg; i++)
		if (!strcmp(u->cfg[i].name, name))
			return &u->cfg[i];
	return NULL;
}

/* The API's list: the configuration's users, then the store's whose names
 * the configuration does not hold.  `warn`: say which are left out. */
static int hand_over(struct users *u, bool warn, struct weir_error *err)
{
	struct user_row *rows = NULL;
	struct basic_user *all;
	size_t n = 0, k = 0;
	int rc;

	if (user_store_list(u->store, &rows, &n, err) < 0)
		return -1;
	all = calloc(u->n_cfg + n + 1, sizeof *all);
	if (!all) {
		user_rows_free(rows, n);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < u->n_cfg; i++)
		all[k++] = u->cfg[i];
	for (size_t i = 0; i < n; i++) {
		if (configured(u, rows[i].name)) {
			if (warn)
				log_warn("users: \"%s\" is both in the configuration and in the "
				         "store: the configuration's is used (`weir users delete "
				         "--username %s` removes the store's)",
				         rows[i].name, rows[i].name);
			continue;
		}
		all[k].name = rows[i].name;
		all[k].password_hash = rows[i].password_hash;
		all[k++].role = rows[i].role;
	}
	rc = api_set_users(u->api, all, k, err);
	if (rc == 0 && u->dm) {
		const char **names = calloc(k + 1, sizeof *names);
		for (size_t i = 0; names && i < k; i++)
			names[i] = all[i].name;
		if (!names || dag_manager_set_users(u->dm, names, k) < 0)
			rc = weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		free(names);
	}
	free(all);
	user_rows_free(rows, n);
	return rc;
}

static void free_cfg(struct users *u)
{
	for (size_t i = 0; i < u->n_cfg; i++) {
		free((char *)u->cfg[i].name);
		free((char *)u->cfg[i].password_hash);
	}
	free(u->cfg);
}

struct users *users_create(struct store *store, struct api *api, struct dag_manager *dm,
                           const struct server_user *cfg, size_t n_cfg, struct weir_error *err)
{
	struct users *u = calloc(1, sizeof *u);

	if (!u || !(u->cfg = calloc(n_cfg + 1, sizeof *u->cfg))) {
		free(u);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	u->store = store;
	u->api = api;
	u->dm = dm;
	for (size_t i = 0; i < n_cfg; i++, u->n_cfg++) {
		u->cfg[i].name = strdup(cfg[i].name);
		u->cfg[i].password_hash = strdup(cfg[i].password_hash);
		u->cfg[i].role = cfg[i].role;
		if (!u->cfg[i].name || !u->cfg[i].password_hash) {
			u->n_cfg++;
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			users_destroy(u);
			return NULL;
		}
	}
	if (hand_over(u, true, err) < 0) {
		users_destroy(u);
		return NULL;
	}
	return u;
}

void users_destroy(struct users *u)
{
	if (!u)
		return;
	free_cfg(u);
	free(u);
}

/* ---- JSON ---- */

static void set_time(json_t *o, const char *key, int64_t ms)
{
	char buf[64];

	json_object_set_new(
	    o, key, ms > 0 ? json_string(clock_format_iso(ms, buf, sizeof buf)) : json_null());
}

static json_t *user_json(const char *name, const char *email, enum weir_role role,
                         const char *source, int64_t created, int64_t changed)
{
	json_t *o = json_pack("{s:s, s:s, s:s}", "username", name, "role", role_name(role),
	                      "source", source);

	if (!o)
		return NULL;
	json_object_set_new(o, "email", email ? json_string(email) : json_null());
	set_time(o, "created", created);
	set_time(o, "changed", changed);
	return o;
}

static const char *token_state(const struct token_row *t, int64_t now)
{
	if (t->revoked_ms)
		return "revoked";
	if (t->expires_ms && t->expires_ms <= now)
		return "expired";
	return "active";
}

static json_t *token_json(const struct token_row *t, int64_t now)
{
	json_t *o = json_pack("{s:s, s:s, s:s}", "name", t->name, "user", t->user, "state",
	                      token_state(t, now));

	if (!o)
		return NULL;
	set_time(o, "created", t->created_ms);
	set_time(o, "expires", t->expires_ms);
	set_time(o, "revoked", t->revoked_ms);
	set_time(o, "last_used", t->last_used_ms);
	return o;
}

static json_t *oom(struct weir_error *err)
{
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return NULL;
}

/* ---- the ops ---- */

static int op_token_lookup(void *ctx, const char *hash, char *user, char *name, size_t size)
{
	struct users *u = ctx;
	struct weir_error err = {0};
	struct token_row t;
	int64_t now = clock_now_ms();
	int rc = -1;

	if (token_store_find(u->store, hash, &t, &err) < 0) {
		if (err.kind != WEIR_E_NOT_FOUND)
			log_warn("tokens: %s", err.msg);
		return -1;
	}
	if (!strcmp(token_state(&t, now), "active")) {
		snprintf(user, size, "%s", t.user);
		snprintf(name, size, "%s", t.name);
		rc = 0;
		if (now - t.last_used_ms >= USERS_TOKEN_TOUCH_MS &&
		    token_store_touch(u->store, t.name, now, &err) < 0)
			log_warn("tokens: %s", err.msg);
	}
	token_row_release(&t);
	return rc;
}

static json_t *op_user_list(void *ctx, struct weir_error *err)
{
	struct users *u = ctx;
	struct user_row *rows = NULL;
	size_t n = 0;
	json_t *list = json_array(), *o;

	if (!list || user_store_list(u->store, &rows, &n, err) < 0) {
		json_decref(list);
		return list ? NULL : oom(err);
	}
	for (size_t i = 0; i < u->n_cfg; i++)
		json_array_append_new(
		    list, user_json(u->cfg[i].name, NULL,
		                    u->cfg[i].role == ROLE_NONE ? ROLE_ADMIN : u->cfg[i].role,
		                    "configuration", 0, 0));
	for (size_t i = 0; i < n; i++) {
		if (configured(u, rows[i].name))
			continue; /* the configuration's wins */
		json_array_append_new(list,
		                      user_json(rows[i].name, rows[i].email, rows[i].role, "store",
		                                rows[i].created_ms, rows[i].changed_ms));
	}
	user_rows_free(rows, n);
	o = json_pack("{s:o, s:I}", "users", list, "total_entries",
	              (json_int_t)json_array_size(list));
	return o ? o : oom(err);
}

/* A user of the configuration is changed there, not here: err, NULL. */
static json_t *refuse_configured(const char *name, const char *what, struct weir_error *err)
{
	weir_error_set(err, WEIR_E_CONFLICT,
	               "user \"%s\" is in the server's configuration (users:): %s", name, what);
	return NULL;
}

static json_t *op_user_create(void *ctx, const char *name, const char *email, enum weir_role role,
                              const char *password_hash, struct weir_error *err)
{
	struct users *u = ctx;
	int64_t now = clock_now_ms();
	struct user_row row = {.name = (char *)name,
	                       .email = (char *)email,
	                       .role = role,
	                       .password_hash = (char *)password_hash,
	                       .created_ms = now,
	                       .changed_ms = now};

	if (configured(u, name))
		return refuse_configured(
		    name, "the store refuses the same name (the configuration's would win)", err);
	if (user_store_insert(u->store, &row, err) < 0 || hand_over(u, false, err) < 0)
		return NULL;
	log_info("users: \"%s\" created (%s)", name, role_name(role));
	return user_json(name, email, role, "store", now, now);
}

static json_t *op_user_change(void *ctx, const char *name, const char *password_hash,
                              enum weir_role role, struct weir_error *err)
{
	struct users *u = ctx;
	struct user_row row;
	json_t *o;

	if (configured(u, name))
		return refuse_configured(name, "change it there, not with weir users", err);
	if (user_store_update(u->store, name, password_hash, role, clock_now_ms(), err) < 0 ||
	    hand_over(u, false, err) < 0 || user_store_get(u->store, name, &row, err) < 0)
		return NULL;
	log_info("users: \"%s\" changed (%s%s)", name, password_hash ? "password" : "",
	         role != ROLE_NONE ? (password_hash ? ", role" : "role") : "");
	o = user_json(row.name, row.email, row.role, "store", row.created_ms, row.changed_ms);
	user_row_release(&row);
	return o ? o : oom(err);
}

static json_t *op_user_delete(void *ctx, const char *name, struct weir_error *err)
{
	struct users *u = ctx;
	int revoked = 0;

	/* the store's, even under a configured name (left out at the start) */
	if (user_store_delete(u->store, name, clock_now_ms(), &revoked, err) < 0) {
		if (err->kind == WEIR_E_NOT_FOUND && configured(u, name))
			return refuse_configured(name, "remove it there, not with weir users", err);
		return NULL;
	}
	if (hand_over(u, false, err) < 0)
		return NULL;
	log_info("users: \"%s\" deleted, %d token(s) revoked", name, revoked);
	return json_pack("{s:s, s:b, s:i}", "username", name, "deleted", 1, "tokens_revoked",
	                 revoked);
}

static json_t *op_token_list(void *ctx, struct weir_error *err)
{
	struct users *u = ctx;
	struct token_row *rows = NULL;
	size_t n = 0;
	int64_t now = clock_now_ms();
	json_t *list = json_array(), *o;

	if (!list || token_store_list(u->store, &rows, &n, err) < 0) {
		json_decref(list);
		return list ? NULL : oom(err);
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, token_json(&rows[i], now));
	token_rows_free(rows, n);
	o = json_pack("{s:o, s:I}", "tokens", list, "total_entries", (json_int_t)n);
	return o ? o : oom(err);
}

static bool user_known(struct users *u, const char *name, struct weir_error *err)
{
	struct user_row row;

	if (configured(u, name))
		return true;
	if (user_store_get(u->store, name, &row, err) < 0)
		return false;
	user_row_release(&row);
	return true;
}

static json_t *op_token_create(void *ctx, const char *user, const char *name, int64_t expires_in_s,
                               struct weir_error *err)
{
	struct users *u = ctx;
	char token[PERSON_TOKEN_LEN + 1], hash[PERSON_TOKEN_HASH_LEN + 1];
	int64_t now = clock_now_ms();
	struct token_row row = {.name = (char *)name,
	                        .user = (char *)user,
	                        .hash = hash,
	                        .created_ms = now,
	                        .expires_ms = expires_in_s > 0 ? now + expires_in_s * 1000 : 0};
	json_t *o;

	if (!user_known(u, user, err))
		return NULL;
	if (person_token_new(token, hash, err) < 0 || token_store_insert(u->store, &row, err) < 0)
		return NULL;
	log_info("tokens: \"%s\" created for \"%s\"", name, user);
	o = token_json(&row, now);
	if (o)
		json_object_set_new(o, "token", json_string(token));
	memset(token, 0, sizeof token);
	return o ? o : oom(err);
}

static json_t *op_token_revoke(void *ctx, const char *name, struct weir_error *err)
{
	struct users *u = ctx;

	if (token_store_revoke(u->store, name, clock_now_ms(), err) < 0)
		return NULL;
	log_info("tokens: \"%s\" revoked", name);
	return json_pack("{s:s, s:s}", "name", name, "state", "revoked");
}

static const struct users_api_ops ops = {
    .token_lookup = op_token_lookup,
    .user_list = op_user_list,
    .user_create = op_user_create,
    .user_change = op_user_change,
    .user_delete = op_user_delete,
    .token_list = op_token_list,
    .token_create = op_token_create,
    .token_revoke = op_token_revoke,
};

const struct users_api_ops *users_api_ops(void)
{
	return &ops;
}
