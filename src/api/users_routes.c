/* users_routes.c: weir's user and token routes (users_routes.h): bodies
 * read and checked field by field, the server's ops asked, answers in
 * weir's voice. */
#include "api/users_routes.h"

#include <string.h>

#include "api/basic_auth.h"
#include "api/person_token.h"
#include "api/reply.h"
#include "api/request.h"
#include "api/users_api.h"
#include "model/duration.h"

/* The ops, or false after a 503. */
static bool have_ops(const struct route_ctx *rc, struct http_request *req)
{
	if (rc->users_ops)
		return true;
	reply_status(req, 503, "this server keeps no users or tokens");
	return false;
}

/* Whether every field of `body` is one of `known` (a NULL-ended list
 * `names` spells out); else err. */
static bool only_known(json_t *body, const char *const *known, const char *names,
                       struct weir_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach(body, key, v)
	{
		bool ok = false;
		for (size_t i = 0; known[i]; i++)
			ok = ok || !strcmp(key, known[i]);
		if (!ok) {
			weir_error_set(err, WEIR_E_INVALID,
			               "body: unknown field \"%.60s\" (expected %s)", key, names);
			return false;
		}
	}
	return true;
}

/* A string field: its value, NULL when absent (*bad when present and not a
 * non-empty string, err set). */
static const char *str_field(json_t *body, const char *key, const char *expected, bool *bad,
                             struct weir_error *err)
{
	json_t *v = json_object_get(body, key);

	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v) || !json_string_length(v)) {
		weir_error_set(err, WEIR_E_INVALID, "body: %s: expected %s", key, expected);
		*bad = true;
		return NULL;
	}
	return json_string_value(v);
}

static bool role_field(json_t *body, enum weir_role *role, bool *bad, struct weir_error *err)
{
	const char *s = str_field(body, "role", "Viewer, User, Op or Admin", bad, err);

	if (!s)
		return false;
	if (role_from_name(s, role) < 0) {
		weir_error_set(err, WEIR_E_INVALID,
		               "body: role \"%.40s\": expected Viewer, User, Op or Admin", s);
		*bad = true;
		return false;
	}
	return true;
}

static bool hash_field(json_t *body, const char **hash, bool *bad, struct weir_error *err)
{
	*hash = str_field(body, "password_hash", "a password hash (weir hash-password)", bad, err);
	if (*hash && basic_auth_hash_valid(*hash, err) < 0) {
		*bad = true;
		return false;
	}
	return *hash != NULL;
}

void route_users_list(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m)
{
	struct weir_error err = {0};

	(void)m;
	if (have_ops(rc, req))
		reply_result(req, 200, rc->users_ops->user_list(rc->users_ctx, &err), &err);
}

void route_users_create(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m)
{
	static const char *const known[] = {
	    "username", "role", "password_hash", "email", "first_name", "last_name", NULL};
	struct weir_error err = {0};
	enum weir_role role = ROLE_NONE;
	const char *name, *hash = NULL, *email;
	json_t *body, *answer = NULL;
	bool bad = false;

	(void)m;
	if (!have_ops(rc, req))
		return;
	if (!(body = request_json_object(req, &err))) {
		reply_result(req, 400, NULL, &err);
		return;
	}
	if (!only_known(body, known, "username, role, password_hash, email", &err))
		goto out;
	name = str_field(body, "username", "a user name", &bad, &err);
	if (bad || person_name_check(name, "body: username", &err) < 0)
		goto out;
	if (!strcmp(name, "token")) { /* the event log's owner for the server's token */
		weir_error_set(&err, WEIR_E_INVALID,
		               "body: username \"token\" is reserved (the event log names the "
		               "server's token so)");
		goto out;
	}
	if (!role_field(body, &role, &bad, &err)) {
		if (!bad)
			weir_error_set(&err, WEIR_E_INVALID,
			               "body: role: required (Viewer, User, Op or Admin)");
		goto out;
	}
	if (!hash_field(body, &hash, &bad, &err)) {
		if (!bad)
			weir_error_set(
			    &err, WEIR_E_INVALID,
			    "body: password_hash: required (weir hash-password makes one)");
		goto out;
	}
	email = str_field(body, "email", "an e-mail address", &bad, &err);
	if (bad)
		goto out;
	answer = rc->users_ops->user_create(rc->users_ctx, name, email, role, hash, &err);
out:
	reply_result(req, 201, answer, &err);
	json_decref(body);
}

void route_users_patch(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m)
{
	static const char *const known[] = {"password_hash", "role", NULL};
	struct weir_error err = {0};
	enum weir_role role = ROLE_NONE;
	const char *name = route_match_param(m, "username"), *hash = NULL;
	json_t *body, *answer = NULL;
	bool bad = false, has_hash, has_role;

	if (!have_ops(rc, req))
		return;
	if (!(body = request_json_object(req, &err))) {
		reply_result(req, 400, NULL, &err);
		return;
	}
	if (!only_known(body, known, "password_hash, role", &err))
		goto out;
	has_hash = hash_field(body, &hash, &bad, &err);
	if (bad)
		goto out;
	has_role = role_field(body, &role, &bad, &err);
	if (bad)
		goto out;
	if (!has_hash && !has_role) {
		weir_error_set(&err, WEIR_E_INVALID, "body: expected password_hash, role or both");
		goto out;
	}
	answer = rc->users_ops->user_change(rc->users_ctx, name, hash, role, &err);
out:
	reply_result(req, 200, answer, &err);
	json_decref(body);
}

void route_users_delete(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m)
{
	struct weir_error err = {0};

	if (have_ops(rc, req))
		reply_result(req, 200,
		             rc->users_ops->user_delete(rc->users_ctx,
		                                        route_match_param(m, "username"), &err),
		             &err);
}

void route_tokens_list(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m)
{
	struct weir_error err = {0};

	(void)m;
	if (have_ops(rc, req))
		reply_result(req, 200, rc->users_ops->token_list(rc->users_ctx, &err), &err);
}

void route_tokens_create(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m)
{
	static const char *const known[] = {"user", "name", "expires", NULL};
	struct weir_error err = {0};
	const char *user, *name, *expires;
	int64_t expires_s = 0;
	json_t *body, *answer = NULL;
	bool bad = false;

	(void)m;
	if (!have_ops(rc, req))
		return;
	if (!(body = request_json_object(req, &err))) {
		reply_result(req, 400, NULL, &err);
		return;
	}
	if (!only_known(body, known, "user, name, expires", &err))
		goto out;
	user = str_field(body, "user", "a user name", &bad, &err);
	if (bad || person_name_check(user, "body: user", &err) < 0)
		goto out;
	name = str_field(body, "name", "a token name", &bad, &err);
	if (bad || person_name_check(name, "body: name", &err) < 0)
		goto out;
	expires = str_field(body, "expires", "a duration such as \"90d\" or \"12h\"", &bad, &err);
	if (bad || (expires && duration_parse_s(expires, "body: expires", &expires_s, &err) < 0))
		goto out;
	if (expires && expires_s <= 0) {
		weir_error_set(&err, WEIR_E_INVALID,
		               "body: expires \"%s\": expected a duration above 0", expires);
		goto out;
	}
	answer = rc->users_ops->token_create(rc->users_ctx, user, name, expires_s, &err);
out:
	reply_result(req, 201, answer, &err);
	json_decref(body);
}

void route_tokens_revoke(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m)
{
	struct weir_error err = {0};

	if (have_ops(rc, req))
		reply_result(req, 200,
		             rc->users_ops->token_revoke(rc->users_ctx,
		                                         route_match_param(m, "token_name"), &err),
		             &err);
}
