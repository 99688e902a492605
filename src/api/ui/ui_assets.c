/* ui_assets.c: looks up and serves the embedded UI files (api/ui_assets.h).
 *
 * Request paths are only ever compared with the generated table's names,
 * never joined to a directory; "." and ".." segments are refused anyway, so
 * that such a request gets a clear 400 rather than a silent 404.
 */
#include "api/ui/ui_assets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_path(const void *key, const void *elem)
{
	return strcmp(key, ((const struct ui_asset *)elem)->path);
}

const struct ui_asset *ui_asset_find(const char *path)
{
	if (!path)
		return NULL;
	return bsearch(path, ui_asset_table, ui_asset_count, sizeof ui_asset_table[0], cmp_path);
}

static const struct {
	const char *ext;
	const char *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".woff2", "font/woff2"},
    {".txt", "text/plain; charset=utf-8"},
};

const char *ui_asset_content_type(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;

	if (dot && !strchr(dot, '/'))
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
			if (!strcmp(dot, types[i].ext))
				return types[i].type;
	return "application/octet-stream";
}

bool ui_asset_path_ok(const char *path)
{
	const char *seg = path;

	if (!path || !*path)
		return false;
	for (const char *c = path;; c++) {
		if (*c == '/' || *c == '\0') {
			size_t n = (size_t)(c - seg);
			if (n == 0 || (n == 1 && seg[0] == '.') ||
			    (n == 2 && seg[0] == '.' && seg[1] == '.'))
				return false;
			if (!*c)
				return true;
			seg = c + 1;
		} else if (*c == '\\' || (unsigned char)*c < 0x20 || *c == 0x7f) {
			return false;
		}
	}
}

bool ui_assets_owns(const char *path)
{
	return !strcmp(path, "/") || !strcmp(path, "/index.html") || !strncmp(path, "/ui/", 4);
}

void ui_add_security_headers(struct http_request *req)
{
	http_request_add_header(req, "Content-Security-Policy", UI_CSP);
	http_request_add_header(req, "X-Content-Type-Options", "nosniff");
	http_request_add_header(req, "Referrer-Policy", "no-referrer");
}

static void respond_plain(struct http_request *req, int status, const char *msg)
{
	/* a static string: the table of messages below lives for the program */
	http_request_respond_static(req, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* Whether an If-None-Match header lists `etag` (or is "*"). */
static bool etag_matches(const char *inm, const char *etag)
{
	size_t el = strlen(etag);

	if (!inm)
		return false;
	for (const char *p = inm; *p;) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!strncmp(p, "W/", 2))
			p += 2;
		if (*p == '*' ||
		    (!strncmp(p, etag, el) && (p[el] == '\0' || p[el] == ',' || p[el] == ' ')))
			return true;
		while (*p && *p != ',')
			p++;
	}
	return false;
}

void ui_assets_no_method(struct http_request *req)
{
	ui_add_security_headers(req);
	http_request_add_header(req, "Allow", "GET, HEAD");
	respond_plain(req, 405, "method not allowed: the UI's files take GET or HEAD\n");
}

void ui_assets_handle(struct http_request *req)
{
	const char *method = http_request_method(req);
	const char *path = http_request_path(req);
	const struct ui_asset *a;
	const char *rel;

	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		ui_assets_no_method(req);
		return;
	}
	ui_add_security_headers(req);
	if (!strcmp(path, "/") || !strcmp(path, "/index.html"))
		rel = "index.html";
	else
		rel = path + 4; /* after "/ui/" */
	if (!ui_asset_path_ok(rel)) {
		respond_plain(req, 400,
		              "bad path: expected /ui/ followed by a file's path, without empty, "
		              "\".\" or \"..\" segments\n");
		return;
	}
	a = ui_asset_find(rel);
	if (!a) {
		respond_plain(req, 404, "no such file in the UI\n");
		return;
	}
	http_request_add_header(req, "Cache-Control", "no-cache");
	http_request_add_header(req, "ETag", a->etag);
	if (etag_matches(http_request_header(req, "If-None-Match"), a->etag)) {
		http_request_respond_static(req, 304, ui_asset_content_type(a->path), "", 0);
		return;
	}
	http_request_respond_static(req, 200, ui_asset_content_type(a->path), a->data, a->len);
}
