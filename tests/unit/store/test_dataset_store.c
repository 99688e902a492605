/* test_dataset_store.c: the datasets tables against a real SQLite file in a
 * temporary directory: datasets made once, listed, filtered, paged and
 * ordered; events and what a DAG's next run consumes; the queue; the
 * trigger_dag waits whose run ended. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/dag_store.h"
#include "store/dataset_store.h"
#include "store/store.h"
#include "store_tmp.h"

struct fixture {
	char dir[256];
	char path[300];
	struct store *s;
	struct dag_store *dags;
	struct dataset_store *ds;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct weir_error err = {0};
	if (store_tmp_make(f->dir, sizeof f->dir, f->path, sizeof f->path, "weir-dataset-store") < 0)
		return -1;
	f->s = store_open(f->path, &err);
	if (!f->s)
		fail_msg("store_open: %s", err.msg);
	f->dags = dag_store_create(f->s, &err);
	f->ds = dataset_store_create(f->s, &err);
	if (!f->dags || !f->ds)
		fail_msg("create: %s", err.msg);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	dataset_store_destroy(f->ds);
	dag_store_destroy(f->dags);
	store_close(f->s);
	store_tmp_remove(f->dir, f->path);
	free(f);
	return 0;
}

static int64_t add_run(struct fixture *f, const char *dag, const char *run, enum dag_run_state st,
		       int64_t logical)
{
	struct weir_error err = {0};
	struct dag_row d = {.dag_id = (char *)dag, .file = (char *)"x.yaml", .active = true,
			    .last_parsed_at = 1, .import_error = (char *)"",
			    .spec_json = (char *)"{}"};
	struct dag_run_row r = {.dag_id = (char *)dag, .run_id = (char *)run, .state = st,
				.logical_date = logical, .conf = (char *)"{}", .reason = (char *)""};
	int64_t id = 0;

	if (dag_store_dag_put(f->dags, &d, &err) != 0)
		fail_msg("dag put: %s", err.msg);
	snprintf(r.run_type, sizeof r.run_type, "manual");
	if (dag_store_run_insert(f->dags, &r, &id, &err) != 0)
		fail_msg("run insert: %s", err.msg);
	return id;
}

static int64_t add_event(struct fixture *f, int64_t dataset, int64_t ts, const char *dag)
{
	struct weir_error err = {0};
	struct dataset_event_row ev = {.dataset_id = dataset, .extra = (char *)"{\"k\":1}",
				       .timestamp = ts, .has_source = dag != NULL,
				       .source_dag_id = (char *)dag, .source_task_id = (char *)"t",
				       .source_run_id = (char *)"r1", .source_map_index = -1};
	int64_t id = 0;

	assert_int_equal(dataset_store_event_add(f->ds, &ev, &id, &err), 0);
	return id;
}

static void test_datasets_made_once_listed_and_filtered(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct dataset_row *rows = NULL, one = {0};
	size_t n = 0;
	int64_t a = 0, a2 = 0, b = 0, total = 0;

	assert_int_equal(dataset_store_ensure(f->ds, "s3://b/a", 10, &a, &err), 0);
	assert_int_equal(dataset_store_ensure(f->ds, "s3://b/a", 20, &a2, &err), 0);
	assert_int_equal(dataset_store_ensure(f->ds, "file:///c", 30, &b, &err), 0);
	assert_true(a == a2 && a != b);
	assert_int_equal(dataset_store_get(f->ds, "s3://b/a", &one, &err), 0);
	assert_int_equal(one.created_at, 10); /* made once: the first time stays */
	assert_string_equal(one.extra, "{}");
	dataset_row_release(&one);
	assert_int_equal(dataset_store_get(f->ds, "s3://none", &one, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	struct dataset_query q = {.order_by = "-uri", .limit = 1, .offset = 0};
	assert_int_equal(dataset_store_list(f->ds, &q, &rows, &n, &total, &err), 0);
	assert_int_equal(total, 2);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].uri, "s3://b/a");
	dataset_rows_free(rows, n);
	struct dataset_query pat = {.uri_pattern = "file", .limit = 10};
	assert_int_equal(dataset_store_list(f->ds, &pat, &rows, &n, &total, &err), 0);
	assert_true(n == 1 && total == 1 && !strcmp(rows[0].uri, "file:///c"));
	dataset_rows_free(rows, n);
	struct dataset_query only = {.uris_json = "[\"s3://b/a\", \"s3://zz\"]", .limit = 10};
	assert_int_equal(dataset_store_list(f->ds, &only, &rows, &n, &total, &err), 0);
	assert_true(n == 1 && !strcmp(rows[0].uri, "s3://b/a"));
	dataset_rows_free(rows, n);
	/* an order that is no column: refused, never pasted into SQL */
	struct dataset_query bad = {.order_by = "uri; DROP TABLE datasets", .limit = 10};
	assert_int_equal(dataset_store_list(f->ds, &bad, &rows, &n, &total, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
}

/* Events added through an alias link it to their datasets: a DAG on the
 * alias consumes those datasets' events from the first linked one on (an
 * earlier event of the dataset is not its), and the alias's events list. */
static void test_alias_links_and_pending(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct dataset_event_row *ev = NULL;
	struct dataset_alias_link_row *links = NULL;
	size_t n = 0;
	int64_t a = 0, b = 0, total = 0;

	dataset_store_ensure(f->ds, "s3://b/a", 1, &a, &err);
	dataset_store_ensure(f->ds, "file:///c", 1, &b, &err);
	add_event(f, a, 100, "producer"); /* before the alias named it */
	assert_int_equal(dataset_store_alias_links(f->ds, NULL, &links, &n, &err), 0);
	assert_int_equal(n, 0);
	dataset_alias_link_rows_free(links, n);
	assert_int_equal(
	    dataset_store_events_pending(f->ds, "on_alias", "[]", "[\"out\"]", &ev, &n, &err), 0);
	assert_int_equal(n, 0);
	dataset_event_rows_free(ev, n);

	int64_t e2 = add_event(f, a, 110, "producer");
	assert_int_equal(dataset_store_alias_event_add(f->ds, "out", e2, &err), 0);
	assert_int_equal(dataset_store_alias_event_add(f->ds, "out", e2, &err), 0); /* once */
	int64_t e3 = add_event(f, a, 120, NULL); /* not through the alias: still linked */
	add_event(f, b, 130, NULL);              /* another dataset: not linked */
	assert_int_equal(dataset_store_alias_links(f->ds, NULL, &links, &n, &err), 0);
	assert_true(n == 1 && !strcmp(links[0].alias, "out") && !strcmp(links[0].uri, "s3://b/a"));
	dataset_alias_link_rows_free(links, n);
	assert_int_equal(dataset_store_alias_links(f->ds, "file:///c", &links, &n, &err), 0);
	assert_int_equal(n, 0);
	dataset_alias_link_rows_free(links, n);
	assert_int_equal(
	    dataset_store_events_pending(f->ds, "on_alias", "[]", "[\"out\"]", &ev, &n, &err), 0);
	assert_true(n == 2 && ev[0].id == e2 && ev[1].id == e3);
	dataset_event_rows_free(ev, n);
	assert_int_equal(
	    dataset_store_events_pending(f->ds, "on_alias", "[]", "[\"other\"]", &ev, &n, &err), 0);
	assert_int_equal(n, 0);
	dataset_event_rows_free(ev, n);

	/* the alias's own events: those added through it */
	struct dataset_event_query q = {.alias = "out", .order_by = "-id", .limit = 10};
	assert_int_equal(dataset_store_events(f->ds, &q, &ev, &n, &total, &err), 0);
	assert_true(n == 1 && total == 1 && ev[0].id == e2);
	dataset_event_rows_free(ev, n);
}

static void test_events_pending_consumed_and_listed(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct dataset_event_row *ev = NULL;
	struct dataset_run_ref *refs = NULL;
	size_t n = 0;
	int64_t a = 0, b = 0, total = 0;
	const char *uris = "[\"s3://b/a\", \"file:///c\"]";

	dataset_store_ensure(f->ds, "s3://b/a", 1, &a, &err);
	dataset_store_ensure(f->ds, "file:///c", 1, &b, &err);
	int64_t e1 = add_event(f, a, 100, "producer");
	add_event(f, b, 110, NULL);
	int64_t run = add_run(f, "consumer", "dataset_triggered__1", DAG_RUN_RUNNING, 120);
	assert_int_equal(dataset_store_events_pending(f->ds, "consumer", uris, NULL, &ev, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ev[0].id, e1);
	assert_true(ev[0].has_source && !strcmp(ev[0].source_dag_id, "producer"));
	assert_false(ev[1].has_source);
	assert_int_equal(ev[1].source_map_index, -1);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(dataset_store_consume(f->ds, run, ev[i].id, &err), 0);
	dataset_event_rows_free(ev, n);
	/* consumed: nothing pending until a new event */
	assert_int_equal(dataset_store_events_pending(f->ds, "consumer", uris, NULL, &ev, &n, &err), 0);
	assert_int_equal(n, 0);
	dataset_event_rows_free(ev, n);
	int64_t e3 = add_event(f, a, 200, "producer");
	assert_int_equal(dataset_store_events_pending(f->ds, "consumer", uris, NULL, &ev, &n, &err), 0);
	assert_true(n == 1 && ev[0].id == e3);
	dataset_event_rows_free(ev, n);

	/* the run's events; an event's runs */
	struct dataset_event_query byrun = {.run_row_id = run, .limit = 100};
	assert_int_equal(dataset_store_events(f->ds, &byrun, &ev, &n, &total, &err), 0);
	assert_true(n == 2 && total == 2);
	dataset_event_rows_free(ev, n);
	assert_int_equal(dataset_store_event_runs(f->ds, e1, &refs, &n, &err), 0);
	assert_true(n == 1 && !strcmp(refs[0].run_id, "dataset_triggered__1"));
	assert_int_equal(refs[0].state, DAG_RUN_RUNNING);
	dataset_run_refs_free(refs, n);
	/* filters and the order */
	struct dataset_event_query src = {.source_dag_id = "producer", .order_by = "-timestamp",
					  .limit = 100};
	assert_int_equal(dataset_store_events(f->ds, &src, &ev, &n, &total, &err), 0);
	assert_true(n == 2 && ev[0].id == e3 && total == 2);
	dataset_event_rows_free(ev, n);
	struct dataset_event_query mi = {.has_map_index = true, .source_map_index = 3, .limit = 9};
	assert_int_equal(dataset_store_events(f->ds, &mi, &ev, &n, &total, &err), 0);
	assert_int_equal(n, 0);
	dataset_event_rows_free(ev, n);
}

static void test_the_queue_one_row_per_dag_and_uri(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct dataset_queue_row *q = NULL;
	size_t n = 0, deleted = 0;
	int64_t a = 0, b = 0;

	dataset_store_ensure(f->ds, "s3://b/a", 1, &a, &err);
	dataset_store_ensure(f->ds, "file:///c", 1, &b, &err);
	assert_int_equal(dataset_store_queue_add(f->ds, a, "both", 100, &err), 0);
	assert_int_equal(dataset_store_queue_add(f->ds, a, "both", 200, &err), 0);
	assert_int_equal(dataset_store_queue_add(f->ds, a, "one", 150, &err), 0);
	assert_int_equal(dataset_store_queue_add(f->ds, b, "both", 300, &err), 0);
	assert_int_equal(dataset_store_queue_list(f->ds, "both", NULL, 0, &q, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(q[1].created_at, 100); /* the first event's time stays */
	dataset_queue_rows_free(q, n);
	assert_int_equal(dataset_store_queue_list(f->ds, NULL, "s3://b/a", 0, &q, &n, &err), 0);
	assert_int_equal(n, 2);
	dataset_queue_rows_free(q, n);
	assert_int_equal(dataset_store_queue_list(f->ds, NULL, NULL, 200, &q, &n, &err), 0);
	assert_int_equal(n, 2); /* before 200: both's a (100) and one's a (150) */
	dataset_queue_rows_free(q, n);
	assert_int_equal(dataset_store_queue_delete(f->ds, "both", NULL, 0, &deleted, &err), 0);
	assert_int_equal(deleted, 2);
	assert_int_equal(dataset_store_queue_list(f->ds, NULL, NULL, 0, &q, &n, &err), 0);
	assert_true(n == 1 && !strcmp(q[0].dag_id, "one"));
	dataset_queue_rows_free(q, n);
}

static void test_waits_end_with_their_run(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct dag_trigger_wait_row *w = NULL;
	size_t n = 0;
	struct dag_trigger_wait_row a = {.dag_id = (char *)"parent", .run_id = (char *)"p1",
					 .task_id = (char *)"kick", .map_index = -1, .try_number = 1,
					 .target_dag_id = (char *)"child", .target_run_id = (char *)"c1"};
	struct dag_trigger_wait_row b = a;

	b.task_id = (char *)"kick2";
	b.target_run_id = (char *)"gone";
	add_run(f, "child", "c1", DAG_RUN_RUNNING, 10);
	assert_int_equal(dataset_store_wait_add(f->ds, &a, 1, &err), 0);
	assert_int_equal(dataset_store_wait_add(f->ds, &b, 1, &err), 0);
	/* c1 runs: only the wait for a run that is not there has ended (as failed) */
	assert_int_equal(dataset_store_waits_ended(f->ds, &w, &n, &err), 0);
	assert_true(n == 1 && !strcmp(w[0].task_id, "kick2"));
	assert_int_equal(w[0].target_state, DAG_RUN_FAILED);
	assert_int_equal(dataset_store_wait_delete(f->ds, &w[0], &err), 0);
	dag_trigger_wait_rows_free(w, n);
	struct dag_run_row r = {0};
	assert_int_equal(dag_store_run_get(f->dags, "child", "c1", &r, &err), 0);
	r.state = DAG_RUN_SUCCESS;
	r.end_date = 20;
	assert_int_equal(dag_store_run_update(f->dags, &r, &err), 0);
	dag_run_row_release(&r);
	assert_int_equal(dataset_store_waits_ended(f->ds, &w, &n, &err), 0);
	assert_true(n == 1 && !strcmp(w[0].task_id, "kick") && w[0].try_number == 1);
	assert_int_equal(w[0].target_state, DAG_RUN_SUCCESS);
	dag_trigger_wait_rows_free(w, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_datasets_made_once_listed_and_filtered, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_events_pending_consumed_and_listed, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_the_queue_one_row_per_dag_and_uri, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_alias_links_and_pending, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_waits_end_with_their_run, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
