/* test_log_append.c: a shipped chunk lands only where it continues the
 * task's log: sent again it adds nothing, overlapping it adds its new tail,
 * beyond the end it is a gap and nothing is written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/logs/log_append.h"
#include "lib/fs.h"

static void read_all(const char *path, char *buf, size_t size, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	*len = fread(buf, 1, size, f);
	fclose(f);
}

static void test_append_at_offsets(void **state)
{
	char dir[] = "/tmp/weir-log-append-XXXXXX";
	char path[128], buf[64];
	struct weir_error err = {0};
	uint64_t size = 0;
	size_t len;
	(void)state;

	assert_non_null(mkdtemp(dir));
	/* the folder is made when missing */
	snprintf(path, sizeof path, "%s/logs/worker-0.1.log", dir);
	assert_int_equal(log_append_at(path, 0, "hello ", 6, &size, &err), 0);
	assert_int_equal(size, 6);
	assert_int_equal(log_append_at(path, 0, "hello ", 6, &size, &err), 0);
	assert_int_equal(size, 6);
	assert_int_equal(log_append_at(path, 3, "lo world", 8, &size, &err), 0);
	assert_int_equal(size, 11);
	assert_int_equal(log_append_at(path, 20, "gap", 3, &size, &err), 1);
	assert_int_equal(size, 11);
	assert_int_equal(log_append_at(path, 11, "", 0, &size, &err), 0);
	assert_int_equal(size, 11);
	read_all(path, buf, sizeof buf, &len);
	assert_int_equal(len, 11);
	assert_memory_equal(buf, "hello world", 11);
	/* a folder in the way: an error naming the file */
	snprintf(path, sizeof path, "%s/logs", dir);
	assert_int_equal(log_append_at(path, 0, "x", 1, &size, &err), -1);
	assert_non_null(strstr(err.msg, "cannot open the task's log"));
	snprintf(path, sizeof path, "%s/logs/worker-0.1.log", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/logs", dir);
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_append_at_offsets),
	};
	return cmocka_run_group_tests_name("api/log_append", tests, NULL, NULL);
}
