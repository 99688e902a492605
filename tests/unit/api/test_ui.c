/* test_ui.c: the web UI's server parts that need no socket: the session
 * store (ids, CSRF tokens, idle expiry, the bound and its least recently
 * used victim), cookie parsing, the embedded file table and its path rules,
 * and tools/embed_assets run as a real process on files of the test's own
 * (the table it writes, and the inputs it refuses). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/ui/ui_assets.h"
#include "api/ui/ui_session.h"

static char tool[512]; /* BUILD/tools/embed_assets, found from argv[0] */

static void test_sessions(void **state)
{
	struct ui_sessions *s = ui_sessions_create();
	struct ui_session a, b, got;
	struct weir_error err = {0};
	int64_t t0 = 1000;

	(void)state;
	assert_non_null(s);
	assert_int_equal(ui_sessions_open(s, "alice", t0, &a, &err), 0);
	assert_int_equal(ui_sessions_open(s, "bob", t0, &b, &err), 0);
	assert_int_equal(strlen(a.id), UI_SESSION_ID_LEN);
	assert_int_equal(strspn(a.id, "0123456789abcdef"), UI_SESSION_ID_LEN);
	assert_int_equal(strspn(a.csrf, "0123456789abcdef"), UI_SESSION_ID_LEN);
	assert_string_not_equal(a.id, b.id);
	assert_string_not_equal(a.id, a.csrf);
	assert_true(ui_sessions_find(s, a.id, t0 + 1, &got));
	assert_string_equal(got.user, "alice");
	assert_string_equal(got.csrf, a.csrf);
	assert_true(ui_sessions_find(s, b.id, t0 + 1, &got));
	assert_string_equal(got.user, "bob");

	/* the csrf token is no session id, nor is a near miss or junk */
	assert_false(ui_sessions_find(s, a.csrf, t0, NULL));
	char near[UI_SESSION_ID_LEN + 1];
	snprintf(near, sizeof near, "%s", a.id);
	near[UI_SESSION_ID_LEN - 1] = near[UI_SESSION_ID_LEN - 1] == '0' ? '1' : '0';
	assert_false(ui_sessions_find(s, near, t0, NULL));
	near[UI_SESSION_ID_LEN - 1] = '\0';
	assert_false(ui_sessions_find(s, near, t0, NULL));
	assert_false(ui_sessions_find(s, "", t0, NULL));
	assert_false(ui_sessions_find(s, NULL, t0, NULL));

	/* CSRF: exactly the session's token */
	assert_true(ui_session_csrf_ok(&a, a.csrf));
	assert_false(ui_session_csrf_ok(&a, b.csrf));
	assert_false(ui_session_csrf_ok(&a, a.id));
	assert_false(ui_session_csrf_ok(&a, NULL));
	assert_false(ui_session_csrf_ok(&a, ""));
	assert_false(ui_session_csrf_ok(NULL, a.csrf));

	/* idle expiry: a use restarts the clock; 12 h without one ends it */
	int64_t t1 = t0 + UI_SESSION_IDLE_MS - 1;
	assert_true(ui_sessions_find(s, a.id, t1, NULL));
	assert_false(ui_sessions_find(s, b.id, t0 + 1 + UI_SESSION_IDLE_MS, NULL));
	assert_true(ui_sessions_find(s, a.id, t1 + UI_SESSION_IDLE_MS - 1, NULL));
	assert_int_equal(ui_sessions_count(s, t1 + UI_SESSION_IDLE_MS - 1), 1);
	assert_false(ui_sessions_find(s, a.id, t1 + 2 * UI_SESSION_IDLE_MS, NULL));
	assert_int_equal(ui_sessions_count(s, t1 + 2 * UI_SESSION_IDLE_MS), 0);

	/* logout */
	assert_int_equal(ui_sessions_open(s, "carol", t0, &a, &err), 0);
	assert_true(ui_sessions_close(s, a.id));
	assert_false(ui_sessions_close(s, a.id));
	assert_false(ui_sessions_find(s, a.id, t0, NULL));

	/* bad user names */
	assert_int_equal(ui_sessions_open(s, "", t0, &a, &err), -1);
	char longname[UI_SESSION_USER_MAX + 2];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	assert_int_equal(ui_sessions_open(s, longname, t0, &a, &err), -1);
	assert_non_null(strstr(err.msg, "session user"));
	ui_sessions_destroy(s);
}

/* A full store makes room by ending the least recently used session. */
static void test_sessions_bound(void **state)
{
	struct ui_sessions *s = ui_sessions_create();
	struct ui_session first, second, extra;
	struct weir_error err = {0};

	(void)state;
	assert_int_equal(ui_sessions_open(s, "u", 0, &first, &err), 0);
	assert_int_equal(ui_sessions_open(s, "u", 1, &second, &err), 0);
	for (int i = 2; i < UI_SESSION_MAX; i++)
		assert_int_equal(ui_sessions_open(s, "u", 10 + i, NULL, &err), 0);
	assert_int_equal(ui_sessions_count(s, 5000), UI_SESSION_MAX);
	/* first is used again, so second is now the least recently used */
	assert_true(ui_sessions_find(s, first.id, 5000, NULL));
	assert_int_equal(ui_sessions_open(s, "u", 5001, &extra, &err), 0);
	assert_int_equal(ui_sessions_count(s, 5001), UI_SESSION_MAX);
	assert_true(ui_sessions_find(s, first.id, 5002, NULL));
	assert_false(ui_sessions_find(s, second.id, 5002, NULL));
	assert_true(ui_sessions_find(s, extra.id, 5002, NULL));
	ui_sessions_destroy(s);
	ui_sessions_destroy(NULL);
}

static void test_cookie_value(void **state)
{
	char v[70];

	(void)state;
	assert_true(ui_cookie_value("weir_session=abc", "weir_session", v, sizeof v));
	assert_string_equal(v, "abc");
	assert_true(ui_cookie_value("a=1; weir_session=xyz ; b=2", "weir_session", v, sizeof v));
	assert_string_equal(v, "xyz");
	assert_true(ui_cookie_value("x_weir_session=no;weir_session=yes", "weir_session", v,
	                            sizeof v));
	assert_string_equal(v, "yes");
	assert_false(ui_cookie_value("weir_sessions=abc", "weir_session", v, sizeof v));
	assert_false(ui_cookie_value("weir_session=", "weir_session", v, sizeof v));
	assert_false(ui_cookie_value("a=1", "weir_session", v, sizeof v));
	assert_false(ui_cookie_value(NULL, "weir_session", v, sizeof v));
	char big[200] = "weir_session=";
	memset(big + 13, 'a', 100);
	assert_false(ui_cookie_value(big, "weir_session", v, sizeof v));
}

static void test_asset_table(void **state)
{
	const struct ui_asset *shell = ui_asset_find("index.html");

	(void)state;
	/* the build embeds the repository's ui/ folder */
	assert_non_null(shell);
	assert_true(shell->len > 0);
	assert_memory_equal(shell->data, "<!doctype html>", 15);
	for (size_t i = 0; i < ui_asset_count; i++) {
		const struct ui_asset *a = &ui_asset_table[i];
		assert_true(ui_asset_path_ok(a->path));
		assert_ptr_equal(ui_asset_find(a->path), a);
		assert_int_equal(strlen(a->etag), 18);
		assert_int_equal(a->etag[0], '"');
		if (i)
			assert_true(strcmp(ui_asset_table[i - 1].path, a->path) < 0);
	}
	assert_null(ui_asset_find("no/such.js"));
	assert_null(ui_asset_find(""));
	assert_null(ui_asset_find(NULL));

	assert_true(ui_asset_path_ok("js/core.js"));
	assert_true(ui_asset_path_ok(".well-known/x"));
	assert_false(ui_asset_path_ok(""));
	assert_false(ui_asset_path_ok("../token"));
	assert_false(ui_asset_path_ok("js/../../token"));
	assert_false(ui_asset_path_ok("js/.."));
	assert_false(ui_asset_path_ok("./index.html"));
	assert_false(ui_asset_path_ok("js//core.js"));
	assert_false(ui_asset_path_ok("js/"));
	assert_false(ui_asset_path_ok("js\\core.js"));
	assert_false(ui_asset_path_ok("js/\ncore.js"));

	assert_string_equal(ui_asset_content_type("index.html"), "text/html; charset=utf-8");
	assert_string_equal(ui_asset_content_type("js/core.js"),
	                    "text/javascript; charset=utf-8");
	assert_string_equal(ui_asset_content_type("css/weir.css"), "text/css; charset=utf-8");
	assert_string_equal(ui_asset_content_type("img/x.svg"), "image/svg+xml");
	assert_string_equal(ui_asset_content_type("a.tar.gz"), "application/octet-stream");
	assert_string_equal(ui_asset_content_type("v1.0/README"), "application/octet-stream");

	assert_true(ui_assets_owns("/"));
	assert_true(ui_assets_owns("/index.html"));
	assert_true(ui_assets_owns("/ui/js/core.js"));
	assert_false(ui_assets_owns("/api/v1/jobs"));
	assert_false(ui_assets_owns("/uix"));
}

/* Runs the generator; its exit status. */
static int run_tool(const char *out, const char *root, const char *f1, const char *f2,
                    const char *f3)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execl(tool, tool, out, root, f1, f2, f3, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_generator(void **state)
{
	char dir[] = "/tmp/weir-embed-XXXXXX";
	char root[128], sub[160], a[160], b[160], e[160], out[160], bad[160];
	char *text;

	(void)state;
	if (access(tool, X_OK) != 0)
		fail_msg("no generator at %s (make builds it with the unit tests)", tool);
	assert_non_null(mkdtemp(dir));
	snprintf(root, sizeof root, "%s/ui", dir);
	snprintf(sub, sizeof sub, "%s/ui/js", dir);
	assert_int_equal(mkdir(root, 0700), 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(a, sizeof a, "%s/ui/js/z.js", dir);
	snprintf(b, sizeof b, "%s/ui/a.css", dir);
	snprintf(e, sizeof e, "%s/ui/empty.txt", dir);
	snprintf(out, sizeof out, "%s/out.c", dir);
	put(a, "x");
	put(b, "AB");
	put(e, "");

	assert_int_equal(run_tool(out, root, a, b, e), 0);
	text = slurp(out);
	assert_non_null(text);
	/* sorted by path below the root; the bytes, the length without the
	 * trailing NUL, and FNV-1a 64 of the bytes as the ETag */
	char *pa = strstr(text, "{\"a.css\", asset_0, 2, \"\\\"");
	char *pe = strstr(text, "{\"empty.txt\", asset_1, 0, \"\\\"cbf29ce484222325\\\"\"}");
	char *pz = strstr(text, "{\"js/z.js\", asset_2, 1, \"\\\"af63f54c86021707\\\"\"}");
	assert_non_null(pa);
	assert_non_null(pe);
	assert_non_null(pz);
	assert_true(pa < pe && pe < pz);
	assert_non_null(strstr(text, "asset_0[] = {\n\t65,66,0\n};"));
	assert_non_null(strstr(text, "const size_t ui_asset_count = 3;"));
	free(text);

	/* refused: a file outside the root, a ".." in its path, an odd name;
	 * nothing is left behind */
	assert_int_equal(unlink(out), 0);
	snprintf(bad, sizeof bad, "%s/ui/../ui/a.css", dir);
	assert_int_not_equal(run_tool(out, root, bad, a, e), 0);
	snprintf(bad, sizeof bad, "%s/other.js", dir);
	put(bad, "y");
	assert_int_not_equal(run_tool(out, root, bad, a, e), 0);
	unlink(bad);
	snprintf(bad, sizeof bad, "%s/ui/has space.js", dir);
	put(bad, "y");
	assert_int_not_equal(run_tool(out, root, bad, a, e), 0);
	unlink(bad);
	assert_int_not_equal(run_tool(out, root, a, a, e), 0); /* given twice */
	snprintf(bad, sizeof bad, "%s/ui/missing.js", dir);
	assert_int_not_equal(run_tool(out, root, bad, a, e), 0);
	assert_int_not_equal(access(out, F_OK), 0);

	unlink(a);
	unlink(b);
	unlink(e);
	rmdir(sub);
	rmdir(root);
	{
		char tmp[200];
		snprintf(tmp, sizeof tmp, "%s.tmp", out);
		unlink(tmp);
	}
	assert_int_equal(rmdir(dir), 0);
}

int main(int argc, char **argv)
{
	const char *self = argc > 0 ? argv[0] : "";
	const char *cut = strstr(self, "/tests/unit/");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sessions),   cmocka_unit_test(test_sessions_bound),
	    cmocka_unit_test(test_cookie_value), cmocka_unit_test(test_asset_table),
	    cmocka_unit_test(test_generator),
	};

	/* the binary is BUILD/tests/unit/api/test_ui; the tool BUILD/tools/embed_assets */
	if (cut)
		snprintf(tool, sizeof tool, "%.*s/tools/embed_assets", (int)(cut - self), self);
	else
		snprintf(tool, sizeof tool, "build/tools/embed_assets");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
