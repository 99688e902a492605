/* test_pick_task.c: `weir launch --tasks LIST`: which task SLURM_PROCID
 * names in a list of ROLE:I and ROLE:I-J entries, and lists refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "launch/launch.h"

static void test_pick(void **state)
{
	char role[16];
	int index = -1;
	(void)state;

	assert_int_equal(launch_pick_task("worker:0-3,ps:0,chief:0", 0, role, sizeof role, &index),
	                 0);
	assert_string_equal(role, "worker");
	assert_int_equal(index, 0);
	assert_int_equal(launch_pick_task("worker:0-3,ps:0,chief:0", 3, role, sizeof role, &index),
	                 0);
	assert_string_equal(role, "worker");
	assert_int_equal(index, 3);
	assert_int_equal(launch_pick_task("worker:0-3,ps:0,chief:0", 4, role, sizeof role, &index),
	                 0);
	assert_string_equal(role, "ps");
	assert_int_equal(index, 0);
	assert_int_equal(launch_pick_task("worker:0-3,ps:0,chief:0", 5, role, sizeof role, &index),
	                 0);
	assert_string_equal(role, "chief");
	assert_int_equal(launch_pick_task("worker:2-3,worker:7", 2, role, sizeof role, &index), 0);
	assert_int_equal(index, 7);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pick),
	};
	return cmocka_run_group_tests_name("launch/pick_task", tests, NULL, NULL);
}
