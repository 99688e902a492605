/* Tests of lib/gitglob: gitignore-style globs (Airflow's .airflowignore glob
 * syntax) matched as the ERE gitglob_to_ere() makes of them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <regex.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lib/gitglob.h"

/* Whether `pattern` matches `path` (a folder's path ends in '/'). */
static bool matches(const char *pattern, const char *path)
{
	bool negate, dir_only;
	char *ere = gitglob_to_ere(pattern, &negate, &dir_only);
	regex_t re;
	bool yes;

	assert_non_null(ere);
	assert_int_equal(regcomp(&re, ere, REG_EXTENDED | REG_NOSUB), 0);
	yes = regexec(&re, path, 0, NULL, 0) == 0;
	regfree(&re);
	free(ere);
	return yes;
}

static void test_a_name_matches_at_any_depth(void **state)
{
	(void)state;
	assert_true(matches("*.py", "a.py"));
	assert_true(matches("*.py", "team/deep/a.py"));
	assert_false(matches("*.py", "a.pyc"));
	assert_true(matches("scratch", "scratch"));
	assert_true(matches("scratch", "team/scratch"));
	assert_true(matches("scratch", "team/scratch/x.py")); /* a folder's contents too */
	assert_false(matches("scratch", "scratched.py"));
	assert_true(matches("a?.py", "ab.py"));
	assert_false(matches("a?.py", "a/.py"));
	assert_true(matches("[ab]x.py", "bx.py"));
	assert_false(matches("[!ab]x.py", "bx.py"));
	assert_true(matches("[!ab]x.py", "cx.py"));
	assert_true(matches("a.b", "a.b"));
	assert_false(matches("a.b", "axb")); /* '.' is no wildcard */
	assert_true(matches("\\*lit", "*lit"));
	assert_false(matches("\\*lit", "xlit"));
}

static void test_a_slash_anchors(void **state)
{
	(void)state;
	assert_true(matches("team/*.py", "team/a.py"));
	assert_false(matches("team/*.py", "x/team/a.py"));
	assert_false(matches("team/*.py", "team/sub/a.py")); /* '*' stays in a name */
	assert_true(matches("/top.py", "top.py"));
	assert_false(matches("/top.py", "team/top.py"));
}

static void test_double_stars(void **state)
{
	(void)state;
	assert_true(matches("**/old_*.py", "old_1.py"));
	assert_true(matches("**/old_*.py", "a/b/old_1.py"));
	assert_true(matches("team/**", "team/a.py"));
	assert_true(matches("team/**", "team/a/b.py"));
	assert_false(matches("team/**", "other/a.py"));
	assert_true(matches("a/**/z.py", "a/z.py"));
	assert_true(matches("a/**/z.py", "a/b/c/z.py"));
	assert_false(matches("a/**/z.py", "b/z.py"));
	assert_true(matches("**", "anything/at/all"));
}

static void test_negation_and_folders_only(void **state)
{
	(void)state;
	bool negate, dir_only;
	char *ere = gitglob_to_ere("!keep.py", &negate, &dir_only);
	assert_non_null(ere);
	assert_true(negate);
	assert_false(dir_only);
	free(ere);
	ere = gitglob_to_ere("build/", &negate, &dir_only);
	assert_non_null(ere);
	assert_false(negate);
	assert_true(dir_only);
	free(ere);
	assert_true(matches("build/", "build/"));
	assert_true(matches("build/", "x/build/"));
	assert_false(matches("build/", "build")); /* a file of that name */
	ere = gitglob_to_ere("\\!bang", &negate, &dir_only);
	assert_non_null(ere);
	assert_false(negate);
	free(ere);
	assert_true(matches("\\!bang", "!bang"));
	assert_null(gitglob_to_ere("", &negate, &dir_only));
	assert_null(gitglob_to_ere("!", &negate, &dir_only));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_name_matches_at_any_depth),
	    cmocka_unit_test(test_a_slash_anchors),
	    cmocka_unit_test(test_double_stars),
	    cmocka_unit_test(test_negation_and_folders_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
