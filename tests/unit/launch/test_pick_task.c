/* test_pick_task.c: `weir launch --tasks LIST`: which task SLURM_PROCID
 * names in a list of ROLE:I and ROLE:I-J entries, and lists refused; and
 * `--host auto`'s address. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "launch/launch.h"

/* The task at SLURM_PROCID `procid` of `list` is role:index. */
static void picks(const char *list, int procid, const char *role, int index)
{
	char got[16];
	int got_index = -1;

	assert_int_equal(launch_pick_task(list, procid, got, sizeof got, &got_index), 0);
	assert_string_equal(got, role);
	assert_int_equal(got_index, index);
}

static void test_pick(void **state)
{
	char role[16];
	int index = -1;
	(void)state;

	picks("worker:0-3,ps:0,chief:0", 0, "worker", 0);
	picks("worker:0-3,ps:0,chief:0", 3, "worker", 3);
	picks("worker:0-3,ps:0,chief:0", 4, "ps", 0);
	picks("worker:0-3,ps:0,chief:0", 5, "chief", 0);
	picks("worker:2-3,worker:7", 2, "worker", 7);
	/* past the end, negative, malformed, a role too long for the buffer */
	assert_int_equal(launch_pick_task("worker:0-3", 4, role, sizeof role, &index), -1);
	assert_int_equal(launch_pick_task("worker:0-3", -1, role, sizeof role, &index), -1);
	assert_int_equal(launch_pick_task("worker", 0, role, sizeof role, &index), -1);
	assert_int_equal(launch_pick_task("worker:3-1", 0, role, sizeof role, &index), -1);
	assert_int_equal(launch_pick_task("worker:x", 0, role, sizeof role, &index), -1);
	assert_int_equal(launch_pick_task(":1", 0, role, sizeof role, &index), -1);
	assert_int_equal(launch_pick_task("a-very-long-role-name:0", 0, role, sizeof role, &index),
	                 -1);
}

/* --host auto: the first address `hostname -I` prints (when the machine has
 * the command and an address; else only that the answer is an address) */
static void test_first_address(void **state)
{
	char addr[64], want[256] = "";
	(void)state;

	FILE *p = popen("hostname -I 2>/dev/null", "r");
	if (p) {
		if (!fgets(want, sizeof want, p))
			want[0] = '\0';
		pclose(p);
	}
	want[strcspn(want, " \n")] = '\0';
	if (launch_first_address(addr, sizeof addr) < 0) {
		assert_string_equal(want, "");
		return;
	}
	unsigned char bin[16];
	assert_true(inet_pton(strchr(addr, ':') ? AF_INET6 : AF_INET, addr, bin) == 1);
	assert_true(strncmp(addr, "127.", 4) != 0 && strcmp(addr, "::1") != 0);
	if (want[0])
		assert_string_equal(addr, want);
	/* too small a buffer for any address: no answer, not a cut one */
	char tiny[4];
	assert_int_equal(launch_first_address(tiny, sizeof tiny), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pick),
	    cmocka_unit_test(test_first_address),
	};
	return cmocka_run_group_tests_name("launch/pick_task", tests, NULL, NULL);
}
