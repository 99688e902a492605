/* test_states.c: every state and cause has one name, each name turns back
 * into its value, and what is not a name is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "model/end_cause.h"
#include "model/states.h"

/* Each value of [0, count) has a name other than "?", distinct from the
 * others, that reads back as the value; count itself is out of range. */
#define ROUND_TRIP(type, count, name_fn, from_fn)                                                  \
	do {                                                                                       \
		for (int i = 0; i < (count); i++) {                                                \
			const char *n = name_fn((type)i);                                          \
			type back;                                                                 \
			assert_non_null(n);                                                        \
			assert_string_not_equal(n, "?");                                           \
			assert_int_equal(from_fn(n, &back), 0);                                    \
			assert_int_equal(back, i);                                                 \
			for (int k = 0; k < i; k++)                                                \
				assert_string_not_equal(n, name_fn((type)k));                      \
		}                                                                                  \
		assert_string_equal(name_fn((type)(count)), "?");                                  \
		assert_string_equal(name_fn((type)-1), "?");                                       \
	} while (0)

static void test_round_trips(void **state)
{
	(void)state;
	ROUND_TRIP(enum job_state, JOB_STATE_COUNT, job_state_name, job_state_from_name);
	ROUND_TRIP(enum task_state, TASK_STATE_COUNT, task_state_name, task_state_from_name);
	ROUND_TRIP(enum dag_ti_state, DAG_TI_STATE_COUNT, dag_ti_state_name,
	           dag_ti_state_from_name);
	ROUND_TRIP(enum dag_run_state, DAG_RUN_STATE_COUNT, dag_run_state_name,
	           dag_run_state_from_name);
	ROUND_TRIP(enum end_cause, END_CAUSE_COUNT, end_cause_name, end_cause_from_name);
}

static void test_names_are_the_apis(void **state)
{
	(void)state;
	assert_string_equal(job_state_name(JOB_SUCCEEDED), "succeeded");
	assert_string_equal(task_state_name(TASK_LOST), "lost");
	assert_string_equal(dag_ti_state_name(DAG_TI_UP_FOR_RETRY), "up_for_retry");
	assert_string_equal(dag_ti_state_name(DAG_TI_NONE), "none");
	assert_string_equal(dag_run_state_name(DAG_RUN_SUCCESS), "success");
	assert_string_equal(end_cause_name(END_CAUSE_EXEC_TIMEOUT), "execution_timeout");
	assert_string_equal(end_cause_name(END_CAUSE_NONE), "none");
}

static void test_not_names(void **state)
{
	(void)state;
	enum job_state js = JOB_RUNNING;
	enum dag_ti_state ts = DAG_TI_RUNNING;
	enum end_cause c = END_CAUSE_OOM;

	assert_int_equal(job_state_from_name(NULL, &js), -1);
	assert_int_equal(job_state_from_name("", &js), -1);
	assert_int_equal(job_state_from_name("success", &js), -1); /* a DAG name, not a job's */
	assert_int_equal(job_state_from_name("Queued", &js), -1);
	assert_int_equal(js, JOB_RUNNING); /* unchanged */
	assert_int_equal(dag_ti_state_from_name("succeeded", &ts), -1);
	assert_int_equal(ts, DAG_TI_RUNNING);
	assert_int_equal(end_cause_from_name("OOMKilled", &c), -1);
	assert_int_equal(c, END_CAUSE_OOM);
}

static void test_what_a_state_is(void **state)
{
	(void)state;
	int final = 0, active = 0;
	for (int i = 0; i < JOB_STATE_COUNT; i++) {
		final += job_state_is_final((enum job_state)i);
		active += job_state_is_active((enum job_state)i);
		/* a job is either on its way or ended */
		assert_true(job_state_is_final((enum job_state)i) !=
		            job_state_is_active((enum job_state)i));
	}
	assert_int_equal(final, 3);
	assert_int_equal(active, 3);
	assert_true(task_state_is_final(TASK_LOST));
	assert_false(task_state_is_final(TASK_STARTING));
	assert_false(dag_ti_state_is_final(DAG_TI_UP_FOR_RETRY)); /* it runs again */
	assert_true(dag_ti_state_is_final(DAG_TI_REMOVED));
	assert_true(dag_ti_state_is_active(DAG_TI_QUEUED));
	assert_false(dag_ti_state_is_active(DAG_TI_SCHEDULED));
	assert_true(dag_ti_state_is_failure(DAG_TI_UPSTREAM_FAILED));
	assert_false(dag_ti_state_is_failure(DAG_TI_SKIPPED));
	assert_true(dag_run_state_is_final(DAG_RUN_FAILED));
	assert_false(dag_run_state_is_final(DAG_RUN_RUNNING));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trips),
	    cmocka_unit_test(test_names_are_the_apis),
	    cmocka_unit_test(test_not_names),
	    cmocka_unit_test(test_what_a_state_is),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
