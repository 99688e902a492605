/* request.c: integers, names, path segments and JSON bodies of a request
 * (request.h). */
#include "api/request.h"

#include <string.h>
#include <strings.h>

#include "lib/str.h"

int api_parse_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	/* stricter than str_to_int64 at the start: no '+', and '-' only where
	 * negative numbers are allowed */
	if (!s || *s == '+' || (*s == '-' && min >= 0))
		return -1;
	return str_to_int64(s, min, max, out);
}

bool api_role_name_ok(const char *s)
{
	size_t n;

	if (!s || !(*s >= 'a' && *s <= 'z'))
		return false;
	n = strlen(s);
	if (n > 63)
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

bool request_method_is(const struct http_request *req, const char *method)
{
	return !strcmp(http_request_method(req), method);
}

int request_split_path(char *path, char **seg, int max)
{
	char *save = NULL;
	int n = 0;

	for (char *s = strtok_r(path, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
		if (n == max)
			return -1;
		seg[n++] = s;
	}
	return n;
}

json_t *request_json_object(const struct http_request *req, struct weir_error *err)
{
	size_t len;
	const char *body = http_request_body(req, &len);
	json_error_t je;
	json_t *j;

	if (len == 0) {
		weir_error_set(err, WEIR_E_INVALID,
		               "request body: expected a JSON object, got nothing");
		return NULL;
	}
	j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		weir_error_set(err, WEIR_E_INVALID, "request body: invalid JSON at line %d: %s",
		               je.line, je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		weir_error_set(err, WEIR_E_INVALID, "request body: expected a JSON object");
		return NULL;
	}
	return j;
}

bool api_auth_ok(const char *authorization, const char *token)
{
	const char *given;
	size_t gl, tl;
	unsigned char diff = 0;

	/* the scheme's name is case-insensitive (RFC 9110 11.1) */
	if (!authorization || !token || strncasecmp(authorization, "Bearer ", 7))
		return false;
	given = authorization + 7;
	while (*given == ' ')
		given++;
	gl = strlen(given);
	tl = strlen(token);
	/* the length is no secret; the bytes are compared without an early exit */
	for (size_t i = 0; i < tl; i++)
		diff |= (unsigned char)(token[i] ^ (i < gl ? given[i] : 0));
	return diff == 0 && gl == tl && tl > 0;
}
