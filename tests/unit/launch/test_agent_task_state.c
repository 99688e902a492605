/* test_agent_task_state.c: the agent's task states (launch/agent_task_state.h)
 * and their one door, agent_task_set_state(): the legal moves go through,
 * an illegal one is refused, logged, and leaves the state as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "launch/agent_state.h"
#include "log_capture.h"

static void test_moves(void **state)
{
	(void)state;
	/* a task's life: spawned, signalled, its result acked, its shim gone */
	assert_true(agent_task_state_can_move(AGENT_TASK_NEW, AGENT_TASK_RUNNING));
	assert_true(agent_task_state_can_move(AGENT_TASK_RUNNING, AGENT_TASK_STOPPING));
	assert_true(agent_task_state_can_move(AGENT_TASK_STOPPING, AGENT_TASK_STOPPING));
	assert_true(agent_task_state_can_move(AGENT_TASK_STOPPING, AGENT_TASK_ACKED));
	assert_true(agent_task_state_can_move(AGENT_TASK_ACKED, AGENT_TASK_GONE));
	assert_true(agent_task_state_can_move(AGENT_TASK_NEW, AGENT_TASK_GONE)); /* adopted dead */
	assert_true(agent_task_state_can_move(AGENT_TASK_GONE, AGENT_TASK_RUNNING)); /* restart */
	assert_false(agent_task_state_can_move(AGENT_TASK_ACKED, AGENT_TASK_STOPPING));
	assert_false(agent_task_state_can_move(AGENT_TASK_ACKED, AGENT_TASK_RUNNING));
	assert_false(agent_task_state_can_move(AGENT_TASK_GONE, AGENT_TASK_ACKED));
	assert_false(agent_task_state_can_move(AGENT_TASK_NEW, AGENT_TASK_STOPPING));
	assert_false(agent_task_state_can_move(AGENT_TASK_RUNNING, AGENT_TASK_NEW));
	assert_false(agent_task_state_can_move(AGENT_TASK_STATE_COUNT, AGENT_TASK_NEW));
	assert_true(agent_task_state_alive(AGENT_TASK_ACKED));
	assert_false(agent_task_state_alive(AGENT_TASK_NEW));
	assert_false(agent_task_state_alive(AGENT_TASK_GONE));
	assert_string_equal(agent_task_state_name(AGENT_TASK_STOPPING), "stopping");
	assert_string_equal(agent_task_state_name(AGENT_TASK_STATE_COUNT), "?");
}

static void test_door_refuses(void **state)
{
	struct agent_task t = {.key = "1.main.0.1", .state = AGENT_TASK_NEW};

	(void)state;
	log_capture_start();
	assert_int_equal(agent_task_set_state(&t, AGENT_TASK_RUNNING), 0);
	assert_int_equal(agent_task_set_state(&t, AGENT_TASK_ACKED), 0);
	assert_string_equal(log_captured, "");
	/* acked: its result is the server's; a signal does not make it stopping */
	assert_int_equal(agent_task_set_state(&t, AGENT_TASK_STOPPING), -1);
	assert_int_equal(t.state, AGENT_TASK_ACKED);
	assert_non_null(strstr(log_captured, "task 1.main.0.1"));
	assert_non_null(strstr(log_captured, "acked -> stopping"));
	assert_int_equal(agent_task_set_state(&t, AGENT_TASK_GONE), 0);
	log_capture_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_moves),
	    cmocka_unit_test(test_door_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
