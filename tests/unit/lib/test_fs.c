/* Tests of lib/fs's fs_mkdir_p: a folder whose parent is there, one whose
 * parents are not (made on the way), one that is there already, a file in
 * the way, and a path too long. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fs.h"

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_mkdir_p(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/weir-test-fs.XXXXXX";
	char *root = mkdtemp(tmpl), p[512], q[512], f[512];
	struct weir_error err = {0};
	FILE *fp;

	assert_non_null(root);
	snprintf(p, sizeof p, "%s/a", root);
	assert_int_equal(fs_mkdir_p(p, 0755, &err), 0);
	assert_true(is_dir(p));
	snprintf(q, sizeof q, "%s/b/c/d", root);
	assert_int_equal(fs_mkdir_p(q, 0755, &err), 0);
	assert_true(is_dir(q));
	assert_int_equal(fs_mkdir_p(q, 0755, &err), 0);

	snprintf(f, sizeof f, "%s/file", root);
	fp = fopen(f, "w");
	assert_non_null(fp);
	fclose(fp);
	snprintf(q, sizeof q, "%s/file/x/y", root);
	assert_int_equal(fs_mkdir_p(q, 0755, &err), -1);
	assert_non_null(strstr(err.msg, "cannot create directory"));

	char *longp = malloc(5000);
	assert_non_null(longp);
	memset(longp, 'a', 4999);
	longp[0] = '/';
	longp[4999] = '\0';
	assert_int_equal(fs_mkdir_p(longp, 0755, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	free(longp);

	unlink(f);
	snprintf(q, sizeof q, "rm -r '%s'", root);
	assert_int_equal(system(q), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mkdir_p),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
