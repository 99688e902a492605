/* test_event_log_store.c: the event log's table (store/event_log_store.h)
 * on a real SQLite file: insert and read back, filters, order, paging,
 * pruning by age and by count, the counts by state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/event_log_store.h"
#include "store/store.h"
#include "store_tmp.h"

struct fixture {
	char dir[256];
	char path[300];
	struct store *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	struct weir_error err = {0};
	if (store_tmp_make(f->dir, sizeof f->dir, f->path, sizeof f->path, "weir-evlog") < 0)
		return -1;
	f->s = store_open(f->path, &err);
	if (!f->s)
		fail_msg("store_open: %s", err.msg);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	store_close(f->s);
	store_tmp_remove(f->dir, f->path);
	free(f);
	return 0;
}

static int64_t add(struct store *s, int64_t when, const char *dag, const char *run,
                   const char *event, const char *owner)
{
	struct weir_error err = {0};
	struct event_log_row r = {.when_ms = when,
	                          .dag_id = (char *)dag,
	                          .run_id = (char *)run,
	                          .event = (char *)event,
	                          .owner = (char *)owner,
	                          .extra = (char *)"{\"status\":200}"};

	assert_int_equal(event_log_insert(s, &r, &err), 0);
	assert_true(r.id > 0);
	return r.id;
}

static void test_insert_list_get(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct event_log_row *rows, one;
	size_t n;
	int64_t total, id;
	const char *inc[] = {"api.patch_dag", "api.delete_job"};
	struct event_log_query q = {.limit = 100};

	id = add(f->s, 1000, "etl", "r1", "api.post_dag_run", "ops");
	add(f->s, 2000, "etl", "r2", "api.post_dag_run", "token");
	add(f->s, 3000, "etl", NULL, "api.patch_dag", "ops");
	add(f->s, 4000, NULL, NULL, "api.delete_job", "token");

	assert_int_equal(event_log_list(f->s, &q, &rows, &n, &total, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(total, 4);
	assert_int_equal(rows[0].id, id);
	assert_string_equal(rows[0].run_id, "r1");
	assert_false(rows[0].has_map_index);
	assert_false(rows[0].has_execution_date); /* no such run in the store */
	assert_null(rows[3].dag_id);
	event_log_rows_free(rows, n);

	q.dag_id = "etl";
	q.owner = "ops";
	assert_int_equal(event_log_list(f->s, &q, &rows, &n, &total, &err), 0);
	assert_int_equal(total, 2);
	event_log_rows_free(rows, n);

	q = (struct event_log_query){.limit = 1, .offset = 1, .order_by = "-when"};
	assert_int_equal(event_log_list(f->s, &q, &rows, &n, &total, &err), 0);
	assert_int_equal(total, 4);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].event, "api.patch_dag");
	event_log_rows_free(rows, n);

	q = (struct event_log_query){
	    .limit = 10, .included = inc, .n_included = 2, .after_ms = 2500};
	assert_int_equal(event_log_list(f->s, &q, &rows, &n, &total, &err), 0);
	assert_int_equal(total, 2);
	event_log_rows_free(rows, n);
	q = (struct event_log_query){
	    .limit = 10, .excluded = inc, .n_excluded = 2, .before_ms = 2000};
	assert_int_equal(event_log_list(f->s, &q, &rows, &n, &total, &err), 0);
	assert_int_equal(total, 1);
	event_log_rows_free(rows, n);

	q = (struct event_log_query){.limit = 10, .order_by = "id; DROP TABLE event_log"};
	assert_int_equal(event_log_list(f->s, &q, &rows, &n, &total, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);

	assert_int_equal(event_log_get(f->s, id, &one, &err), 0);
	assert_string_equal(one.owner, "ops");
	assert_string_equal(one.extra, "{\"status\":200}");
	event_log_row_release(&one);
	assert_int_equal(event_log_get(f->s, 999, &one, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
}

static void test_prune(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct event_log_row *rows;
	struct event_log_query q = {.limit = 100};
	size_t n;
	int64_t total, removed;

	for (int i = 1; i <= 10; i++)
		add(f->s, i * 1000, "etl", NULL, "api.patch_dag", "ops");
	assert_int_equal(event_log_prune(f->s, 3500, 0, &removed, &err), 0);
	assert_int_equal(removed, 3);
	assert_int_equal(event_log_prune(f->s, 0, 4, &removed, &err), 0);
	assert_int_equal(removed, 3);
	assert_int_equal(event_log_list(f->s, &q, &rows, &n, &total, &err), 0);
	assert_int_equal(total, 4);
	assert_int_equal(rows[0].when_ms, 7000);
	event_log_rows_free(rows, n);
	assert_int_equal(event_log_prune(f->s, 0, 4, &removed, &err), 0);
	assert_int_equal(removed, 0);
}

static void count(void *arg, const char *state, int64_t n)
{
	if (!strcmp(state, "queued"))
		*(int64_t *)arg += n;
}

static void test_counts(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	int64_t queued = 0;

	for (int t = STATE_COUNT_JOBS; t <= STATE_COUNT_TASK_INSTANCES; t++)
		assert_int_equal(
		    store_count_by_state(f->s, (enum state_count_table)t, count, &queued, &err), 0);
	assert_int_equal(queued, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_insert_list_get, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_prune, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_counts, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
