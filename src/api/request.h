/* request.h: reading a request: integers and names from the path or the
 * query, the path's segments, a JSON body.  Pure checks; nothing here
 * answers (the routes choose their dialect, api/reply.h).
 */
#ifndef WEIR_API_REQUEST_H
#define WEIR_API_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/http.h"
#include "lib/error.h"

/* A decimal integer in [min, max] with no junk, no '+', no leading space
 * and a '-' only when min < 0; 0 or -1. */
int api_parse_int(const char *s, int64_t min, int64_t max, int64_t *out);
/* [a-z][a-z0-9_-]*, at most 63 characters. */
bool api_role_name_ok(const char *s);

bool request_method_is(const struct http_request *req, const char *method);
/* Whether an Authorization header value is "Bearer TOKEN" with this
 * `token` (constant time in the token's length): the API's token, or a
 * launcher's secret (api/launch_routes.c). */
bool api_auth_ok(const char *authorization, const char *token);
/* Splits `path` (changed in place) at '/' into at most `max` non-empty
 * segments; the count, or -1 when there are more (seg[] then holds the
 * first `max`). */
int request_split_path(char *path, char **seg, int max);
/* The body as a JSON object (new reference), or NULL with a WEIR_E_INVALID
 * err saying what is wrong with it. */
json_t *request_json_object(const struct http_request *req, struct weir_error *err);

#endif
