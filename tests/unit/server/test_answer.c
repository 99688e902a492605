/* test_answer.c: the register answer and JSON strings written as text
 * (server/job_manager/answer.h, lib/json_util.h) parse to the tree that
 * jansson's json_pack of the same fields makes, for a few specs, strings
 * that need escaping among them; bytes that are not UTF-8 are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/json_util.h"
#include "lib/strbuf.h"
#include "model/framework.h"
#include "model/job_spec.h"
#include "server/job_manager/answer.h"

/* The tree the answer was built as before it was written as text. */
static json_t *answer_tree(const struct jm_answer *a)
{
	const struct job_spec *spec = a->spec;
	const struct role_spec *rs = a->rs;
	json_t *env = json_object(), *roles = json_array(), *arts = json_array(), *r;

	for (size_t i = 0; i < spec->n_env; i++)
		json_object_set_new(env, spec->env[i].name, json_string(spec->env[i].value));
	for (size_t i = 0; i < rs->n_env; i++)
		json_object_set_new(env, rs->env[i].name, json_string(rs->env[i].value));
	for (size_t i = 0; i < spec->n_roles; i++)
		json_array_append_new(
		    roles, json_pack("{s:s, s:i, s:b, s:b}", "name", spec->roles[i].name,
		                     "instances", spec->roles[i].instances, "untracked",
		                     spec->roles[i].untracked, "sidecar", spec->roles[i].sidecar));
	for (size_t i = 0; i < spec->n_artifacts; i++)
		json_array_append_new(
		    arts, json_pack("{s:s, s:s, s:b}", "path",
		                    a->artifact_paths && a->artifact_paths[i] ? a->artifact_paths[i]
		                                                              : spec->artifacts[i].path,
		                    "name", spec->artifacts[i].name, "archive",
		                    spec->artifacts[i].archive));
	r = json_pack("{s:I, s:s, s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:i, s:i, "
	              "s:o, s:o, s:o, s:o, s:I, s:I, s:s, s:b}",
	              "job", (json_int_t)a->job_id, "role", a->role, "index", a->index, "attempt",
	              a->attempt, "framework", framework_name(spec->framework), "command",
	              a->command, "workdir", a->workdir, "log", a->log, "cache_dir", a->cache_dir,
	              "env", env, "memory_mb", (json_int_t)rs->memory_mb, "vcores", rs->vcores,
	              "gpu_count", rs->gpus, "gpus",
	              a->gpus ? json_string(a->gpus) : json_null(), "roles", roles, "artifacts",
	              arts, "src_dir", spec->src_dir ? json_string(spec->src_dir) : json_null(),
	              "registration_timeout_s", (json_int_t)spec->registration_timeout_s,
	              "execution_timeout_s", (json_int_t)spec->execution_timeout_s,
	              "server_instance", a->server_instance, "cgroup", a->cgroup);
	assert_non_null(r);
	return r;
}

static struct job_spec *spec_of(const char *text)
{
	struct weir_error err = {0};
	struct job_spec *s = job_spec_parse_string(text, strlen(text), "test", "/", &err);

	if (!s)
		fail_msg("spec: %s", err.msg);
	return s;
}

/* Writes a's answer, parses it, and compares it with the tree. */
static void check(const struct jm_answer *a)
{
	struct strbuf sb = STRBUF_INIT;
	json_error_t je;
	json_t *got, *want = answer_tree(a);

	assert_int_equal(jm_answer_write(&sb, a), 0);
	got = json_loadb(sb.buf, sb.len, JSON_REJECT_DUPLICATES, &je);
	if (!got)
		fail_msg("not JSON (%s): %s", je.text, sb.buf);
	if (!json_equal(got, want)) {
		char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
		char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
		fail_msg("got %s\nwant %s", g, w);
	}
	json_decref(got);
	json_decref(want);
	strbuf_release(&sb);
}

static void test_plain(void **state)
{
	(void)state;
	struct job_spec *s = spec_of("{\"roles\": {\"worker\": {\"command\": \"true\"}}}");
	struct jm_answer a = {.spec = s,
	                      .rs = &s->roles[0],
	                      .job_id = 7,
	                      .role = "worker",
	                      .index = 0,
	                      .attempt = 1,
	                      .command = "true",
	                      .workdir = "/srv/weir/jobs/7/1/worker-0",
	                      .log = "/h/logs/7.log",
	                      .cache_dir = "/h/cache",
	                      .gpus = "",
	                      .server_instance = "00ff00ff00ff00ff",
	                      .cgroup = true};
	check(&a);
	a.gpus = NULL;
	a.cgroup = false;
	check(&a);
	job_spec_destroy(s);
}

static void test_escapes(void **state)
{
	(void)state;
	struct job_spec *s = spec_of(
	    "{\"name\": \"q\\\"uote\", \"src_dir\": \"/src/d\\\\ir\","
	    " \"env\": {\"A\": \"line\\none\\ttab\\u0001\", \"SHARED\": \"job\"},"
	    " \"artifacts\": [{\"path\": \"/data/\\u00e9t\\u00e9.tar\", \"name\": \"d\","
	    " \"archive\": true}, {\"path\": \"/x/y\", \"name\": \"y\"}],"
	    " \"roles\": {\"ps\": {\"command\": \"sleep 1\", \"sidecar\": true},"
	    " \"worker\": {\"instances\": 3, \"memory\": \"2g\", \"vcores\": 2, \"gpus\": 1,"
	    " \"command\": \"echo \\\"$X\\\" \\\\ \\u2603 </tag>\","
	    " \"env\": {\"SHARED\": \"role\", \"B\": \"\\r\\b\\f\\u001f/\"}}}}");
	const char *paths[] = {"/shared/7/d.tar", NULL};
	struct jm_answer a = {.spec = s,
	                      .rs = job_spec_find_role(s, "worker"),
	                      .job_id = 123456789012LL,
	                      .role = "worker",
	                      .index = 2,
	                      .attempt = 3,
	                      .command = job_spec_find_role(s, "worker")->command,
	                      .workdir = "/h/work dir/\"7\"",
	                      .log = "/h/logs/7\\worker.log",
	                      .cache_dir = "/h/cache\x7f",
	                      .gpus = "0,1",
	                      .artifact_paths = paths,
	                      .server_instance = "0123456789abcdef",
	                      .cgroup = true};
	assert_non_null(a.rs);
	check(&a);
	job_spec_destroy(s);
}

static void test_string_escaper(void **state)
{
	(void)state;
	const char *cases[] = {"", "plain", "\"\\/", "\x01\x1f\x7f", "caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80",
	                       "a\nb\rc\td\be\ff"};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct strbuf sb = STRBUF_INIT;
		json_t *js = json_string(cases[i]);
		char *want = json_dumps(js, JSON_ENCODE_ANY);
		json_decref(js);
		assert_int_equal(json_util_write_string(&sb, cases[i]), 0);
		assert_string_equal(sb.buf, want); /* byte for byte as jansson writes it */
		free(want);
		strbuf_release(&sb);
	}
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(json_util_write_string(&sb, NULL), 0);
	assert_string_equal(sb.buf, "null");
	/* not UTF-8: a lone continuation byte, an overlong form, a surrogate, cut short */
	const char *bad[] = {"\x80", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x98", "\xf5\x80\x80\x80"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		strbuf_reset(&sb);
		assert_int_equal(json_util_write_string(&sb, bad[i]), -1);
	}
	strbuf_release(&sb);
}

/* An object's members written one after the other: the comma only between
 * them, plain keys copied, others escaped as strings are; the text reads as
 * the tree jansson would write. */
static void test_members(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;

	strbuf_addch(&sb, '{');
	assert_int_equal(json_util_write_field(&sb, "name", "a\"b"), 0);
	json_util_write_int_field(&sb, "n", -42);
	json_util_write_bool_field(&sb, "ok", true);
	assert_int_equal(json_util_write_key(&sb, "k\"ey\n\xc3\xa9"), 0);
	strbuf_addch(&sb, '{');
	assert_int_equal(json_util_write_field(&sb, "inner", NULL), 0);
	strbuf_addstr(&sb, "}}");
	assert_string_equal(sb.buf, "{\"name\":\"a\\\"b\",\"n\":-42,\"ok\":true,"
	                            "\"k\\\"ey\\n\xc3\xa9\":{\"inner\":null}}");
	json_t *j = json_loads(sb.buf, 0, NULL);
	assert_non_null(j);
	char *back = json_dumps(j, JSON_COMPACT);
	assert_string_equal(back, sb.buf);
	free(back);
	json_decref(j);
	/* a key that is not UTF-8 is refused, as a string is */
	strbuf_reset(&sb);
	assert_int_equal(json_util_write_key(&sb, "\x80"), -1);
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain),
	    cmocka_unit_test(test_escapes),
	    cmocka_unit_test(test_string_escaper),
	    cmocka_unit_test(test_members),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
