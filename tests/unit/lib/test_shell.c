/* Tests of lib/shell: quoting for /bin/sh, checked both as text and by
 * letting sh read the quoted word back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shell.h"

static void test_text(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(shell_quote(&sb, "plain"), 0);
	assert_string_equal(sb.buf, "'plain'");
	strbuf_reset(&sb);
	assert_int_equal(shell_quote(&sb, ""), 0);
	assert_string_equal(sb.buf, "''");
	strbuf_reset(&sb);
	assert_int_equal(shell_quote(&sb, "it's"), 0);
	assert_string_equal(sb.buf, "'it'\\''s'");
	strbuf_reset(&sb);
	assert_int_equal(shell_quote(&sb, "''"), 0);
	assert_string_equal(sb.buf, "''\\'''\\'''");
	strbuf_reset(&sb);
	/* appends: what was there stays */
	strbuf_addstr(&sb, "echo ");
	assert_int_equal(shell_quote_inner(&sb, "a'b"), 0);
	assert_string_equal(sb.buf, "echo a'\\''b");
	strbuf_release(&sb);

	char *q = shell_quoted("$(rm -rf /) `x` \"y\" \\ ;|&");
	assert_string_equal(q, "'$(rm -rf /) `x` \"y\" \\ ;|&'");
	free(q);
}

/* sh reads the quoted word back as exactly the original. */
static void test_round_trip(void **state)
{
	(void)state;
	const char *values[] = {"", "a b", "it's", "'", "''x''", "$HOME", "a\nb", "*", "-n",
				"\\'\\", "\"$(id)\"", NULL};
	for (int i = 0; values[i]; i++) {
		struct strbuf cmd = STRBUF_INIT;
		strbuf_addstr(&cmd, "printf '%s' ");
		shell_quote(&cmd, values[i]);
		FILE *p = popen(cmd.buf, "r");
		assert_non_null(p);
		char out[256];
		size_t n = fread(out, 1, sizeof out - 1, p);
		out[n] = '\0';
		assert_int_equal(pclose(p), 0);
		assert_string_equal(out, values[i]);
		strbuf_release(&cmd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
