/* test_call_store.c: a warm worker's calls in the store
 * (store/call_store.h) on a real SQLite file: a batch recorded and read
 * back in order, past a call id and within a limit; a running record
 * replaced by its end, an end never replaced (model/call.h's rule, the
 * upsert's WHERE); the counts by state; a job that does not exist; the
 * calls gone with their job. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "model/call.h"
#include "store/call_store.h"
#include "store/store.h"
#include "store/store_fixture.h"

static void sql(struct store *s, const char *text)
{
	char *msg = NULL;
	if (sqlite3_exec(store_db(s), text, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", text, msg ? msg : "?");
}

static int setup(void **state)
{
	struct store_fixture *f = store_fixture_open("weir-calls");

	if (!f)
		return -1;
	sql(f->s,
	    "INSERT INTO jobs (id, name, spec_json, state, submitted_at) VALUES"
	    " (1, 'warm-worker', '{}', 'running', 1), (2, 'warm-worker', '{}', 'running', 1)");
	*state = f;
	return 0;
}

static struct call_row row(int64_t id, enum call_state st, const char *error)
{
	struct call_row r = {0};

	r.call_id = id;
	r.name = (char *)"f";
	r.state = st;
	r.tries = 1;
	r.started_ms = 1000;
	r.ended_ms = call_state_final(st) ? 1500 : 0;
	r.error = (char *)error;
	return r;
}

static void test_batch_read_back_in_order(void **state)
{
	struct store_fixture *f = *state;
	struct weir_error err = {0};
	struct call_row batch[3] = {row(3, CALL_FAILED, "KeyError"), row(1, CALL_SUCCEEDED, NULL),
	                            row(2, CALL_RUNNING, NULL)};
	struct call_row *rows;
	size_t n, changed;

	assert_int_equal(store_calls_record(f->s, 1, batch, 3, &changed, &err), 0);
	assert_int_equal(changed, 3);
	assert_int_equal(store_calls_of_job(f->s, 1, 0, 10, &rows, &n, &err), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rows[i].call_id, (int64_t)i + 1);
	assert_int_equal(rows[0].state, CALL_SUCCEEDED);
	assert_int_equal(rows[0].ended_ms, 1500);
	assert_null(rows[0].error);
	assert_int_equal(rows[1].state, CALL_RUNNING);
	assert_int_equal(rows[1].ended_ms, 0);
	assert_string_equal(rows[2].error, "KeyError");
	assert_string_equal(rows[2].name, "f");
	call_rows_free(rows, n);
	/* past a call id, within a limit; another job's are apart */
	assert_int_equal(store_calls_of_job(f->s, 1, 1, 1, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].call_id, 2);
	call_rows_free(rows, n);
	assert_int_equal(store_calls_of_job(f->s, 2, 0, 10, &rows, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_null(rows);
}

static void test_an_end_never_changes(void **state)
{
	struct store_fixture *f = *state;
	struct weir_error err = {0};
	struct call_row r = row(1, CALL_RUNNING, NULL);
	struct call_row *rows;
	int64_t counts[CALL_STATE_COUNT];
	size_t n, changed;

	assert_int_equal(store_calls_record(f->s, 1, &r, 1, &changed, &err), 0);
	r = row(1, CALL_RUNNING, NULL);
	r.tries = 2; /* running again (a retry): replaced */
	assert_int_equal(store_calls_record(f->s, 1, &r, 1, &changed, &err), 0);
	assert_int_equal(changed, 1);
	r = row(1, CALL_CRASHED, "out of memory");
	r.tries = 2;
	assert_int_equal(store_calls_record(f->s, 1, &r, 1, &changed, &err), 0);
	assert_int_equal(changed, 1);
	/* a late record of the same call changes nothing, an end or not */
	r = row(1, CALL_RUNNING, NULL);
	assert_int_equal(store_calls_record(f->s, 1, &r, 1, &changed, &err), 0);
	assert_int_equal(changed, 0);
	r = row(1, CALL_SUCCEEDED, NULL);
	assert_int_equal(store_calls_record(f->s, 1, &r, 1, &changed, &err), 0);
	assert_int_equal(changed, 0);
	assert_int_equal(store_calls_of_job(f->s, 1, 0, 10, &rows, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].state, CALL_CRASHED);
	assert_int_equal(rows[0].tries, 2);
	assert_string_equal(rows[0].error, "out of memory");
	call_rows_free(rows, n);
	assert_false(call_state_may_move(CALL_CRASHED, CALL_RUNNING));
	assert_true(call_state_may_move(CALL_RUNNING, CALL_SUCCEEDED));
	assert_int_equal(store_call_counts(f->s, 1, counts, &err), 0);
	assert_int_equal(counts[CALL_CRASHED], 1);
	assert_int_equal(counts[CALL_RUNNING], 0);
}

static void test_no_job_and_the_jobs_deletion(void **state)
{
	struct store_fixture *f = *state;
	struct weir_error err = {0};
	struct call_row r = row(1, CALL_SUCCEEDED, NULL);
	struct call_row *rows;
	size_t n;

	assert_int_equal(store_calls_record(f->s, 99, &r, 1, NULL, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_non_null(strstr(err.msg, "job 99"));
	assert_int_equal(store_calls_record(f->s, 2, &r, 1, NULL, &err), 0);
	sql(f->s, "DELETE FROM jobs WHERE id = 2");
	assert_int_equal(store_calls_of_job(f->s, 2, 0, 10, &rows, &n, &err), 0);
	assert_int_equal(n, 0);
}

static void test_state_names(void **state)
{
	enum call_state s = CALL_RUNNING;

	(void)state;
	for (int i = 0; i < CALL_STATE_COUNT; i++) {
		assert_int_equal(call_state_from_name(call_state_name((enum call_state)i), &s), 0);
		assert_int_equal(s, i);
	}
	assert_int_equal(call_state_from_name("done", &s), -1);
	assert_int_equal(call_state_from_name(NULL, &s), -1);
	assert_string_equal(call_state_name((enum call_state)99), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_batch_read_back_in_order, setup,
	                                    store_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_an_end_never_changes, setup,
	                                    store_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_no_job_and_the_jobs_deletion, setup,
	                                    store_fixture_teardown),
	    cmocka_unit_test(test_state_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
