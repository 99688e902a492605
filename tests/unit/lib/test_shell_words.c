/* test_shell_words.c: which commands run without a shell, and their words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "lib/shell.h"

static void test_plain_words_run_directly(void **state)
{
	struct strvec w = STRVEC_INIT;

	(void)state;
	assert_int_equal(shell_words("  python3   train.py --lr 0.1\t-v ", &w), 0);
	assert_int_equal(w.n, 5);
	assert_string_equal(w.v[0], "python3");
	assert_string_equal(w.v[1], "train.py");
	assert_string_equal(w.v[2], "--lr");
	assert_string_equal(w.v[3], "0.1");
	assert_string_equal(w.v[4], "-v");
	assert_null(w.v[5]);
	strvec_release(&w);
	assert_false(shell_needed("true"));
	assert_false(shell_needed("/usr/bin/env python3 -c print"));
	assert_false(shell_needed("sleep 300"));
	assert_false(shell_needed("echo done."));
	assert_false(shell_needed("exporter --x")); /* a keyword only as a whole word */
}

static void test_shell_syntax_needs_the_shell(void **state)
{
	static const char *const cases[] = {
	    "a; b", "a & b", "a | b", "a > f", "a < f", "(a)", "echo $HOME", "echo `date`",
	    "echo a\\ b", "echo \"x\"", "echo 'x'", "ls *.py", "ls ?", "ls [ab]", "a # c",
	    "cd ~", "X=1 a", "date +%s", "a\nb", "a && b",
	};
	struct strvec w = STRVEC_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (!shell_needed(cases[i]))
			fail_msg("%s: expected the shell", cases[i]);
		assert_int_equal(shell_words(cases[i], &w), 1);
		assert_int_equal(w.n, 0);
	}
}

static void test_keywords_and_builtins_need_the_shell(void **state)
{
	static const char *const cases[] = {
	    "if true", "for x in a", "while true", "{ a", "! true", "cd /tmp", "exit 3",
	    "export A", "exec sleep 1", ". ./env", ": nothing", "wait", "ulimit -n 10",
	    "  trap x TERM",
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (!shell_needed(cases[i]))
			fail_msg("%s: expected the shell", cases[i]);
}

static void test_empty_command_goes_to_the_shell(void **state)
{
	(void)state;
	assert_true(shell_needed(""));
	assert_true(shell_needed("  \t "));
	assert_true(shell_needed(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_words_run_directly),
	    cmocka_unit_test(test_shell_syntax_needs_the_shell),
	    cmocka_unit_test(test_keywords_and_builtins_need_the_shell),
	    cmocka_unit_test(test_empty_command_goes_to_the_shell),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
