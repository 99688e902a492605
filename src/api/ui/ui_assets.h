/* ui_assets.h: the web UI's files, compiled into the binary, and the routes
 * that serve them: GET/HEAD "/", "/index.html" (the shell, ui/index.html)
 * and "/ui/PATH" (ui/PATH).
 *
 * The table is generated at build time by tools/embed_assets.c from every
 * file under ui/ (docs/internals/ui.md); nothing is read from disk at run
 * time.  Every answer carries the UI's Content-Security-Policy, nosniff,
 * "Cache-Control: no-cache" and an ETag (a hash of the content), and a
 * matching If-None-Match gets 304.  The shell and assets hold no data, so
 * they need no login.
 */
#ifndef WEIR_API_UI_ASSETS_H
#define WEIR_API_UI_ASSETS_H

#include <stdbool.h>
#include <stddef.h>

#include "api/http.h"

#define UI_CSP                                                                                     \
	"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "          \
	"connect-src 'self'; frame-ancestors 'none'"

/* One embedded file.  path is relative to ui/ ("js/core.js"); etag is quoted. */
struct ui_asset {
	const char *path;
	const unsigned char *data;
	size_t len;
	const char *etag;
};

/* The generated table, sorted by path (strcmp order). */
extern const struct ui_asset ui_asset_table[];
extern const size_t ui_asset_count;

/* The asset at `path` (relative to ui/), or NULL. */
const struct ui_asset *ui_asset_find(const char *path);
/* The Content-Type for a file name, by its extension (text types with
 * charset=utf-8; application/octet-stream when unknown). */
const char *ui_asset_content_type(const char *path);
/* Whether a path under ui/ is one we may look up: no empty, "." or ".."
 * segment, no backslash, no control character. */
bool ui_asset_path_ok(const char *path);

/* Whether the request path is the UI's: "/", "/index.html" or "/ui/...". */
bool ui_assets_owns(const char *path);
/* Answers a request for which ui_assets_owns() holds (but not the session
 * routes of api/ui_auth.h): the file, 304, 400 for a bad path, 404, 405. */
void ui_assets_handle(struct http_request *req);
/* The 405 of the UI's files: plain text, with an Allow header. */
void ui_assets_no_method(struct http_request *req);
/* Adds the UI's security headers (CSP, nosniff, Referrer-Policy) to the
 * answer still to be sent. */
void ui_add_security_headers(struct http_request *req);

#endif
