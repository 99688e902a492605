/* users_routes.h: weir's user and token routes (docs/api.md, "Users and
 * tokens"), in weir's own voice, Admin only (the route table's role
 * column): the body read and checked field by field, the server asked
 * (api/users_api.h).
 *
 *   GET    /api/v1/weir/users              every user (no password hashes)
 *   POST   /api/v1/weir/users              {"username", "role", "password_hash", "email"?}
 *   PATCH  /api/v1/weir/users/{username}   {"password_hash"?, "role"?}
 *   DELETE /api/v1/weir/users/{username}   the user, its tokens revoked
 *   GET    /api/v1/weir/tokens             every token (never the secret)
 *   POST   /api/v1/weir/tokens             {"user", "name", "expires"?: "90d"}: the token, once
 *   DELETE /api/v1/weir/tokens/{token_name}  revoked
 *
 * A password travels only as its hash (`weir users` hashes it where it is
 * typed, api/basic_auth.h): the server never sees it and hashes nothing
 * on its loop. */
#ifndef WEIR_API_USERS_ROUTES_H
#define WEIR_API_USERS_ROUTES_H

#include "api/route_ctx.h"
#include "api/route_match.h"

void route_users_list(const struct route_ctx *rc, struct http_request *req,
                      const struct route_match *m);
void route_users_create(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m);
void route_users_patch(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m);
void route_users_delete(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m);
void route_tokens_list(const struct route_ctx *rc, struct http_request *req,
                       const struct route_match *m);
void route_tokens_create(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m);
void route_tokens_revoke(const struct route_ctx *rc, struct http_request *req,
                         const struct route_match *m);

#endif
