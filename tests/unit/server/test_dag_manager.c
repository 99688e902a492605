/* test_dag_manager.c: the DAG manager on a real store and job manager, in
 * process: the folder (good and broken files, edits, removal), triggers and
 * their errors, a run carried to its end through the job manager's end
 * callback, clears, job tasks from spec files; and the configuration keys it
 * reads (dags, pools, users).
 *
 * No executor is given to the job manager, so every job's launcher fails to
 * start and the job fails at once, in the same loop turn: the real failure
 * path, which lets a run go from trigger to its result without processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/dag_answers.h"
#include "lib/clock.h"
#include "lib/fs.h"
#include "server/config.h"
#include "server/dag_manager.h"
#include "server/job_manager.h"
#include "store/store.h"

struct fixture {
	char dir[64];
	char *home, *dags;
	uv_loop_t loop;
	struct store *store;
	struct job_manager *jm;
	struct dag_manager *dm;
	const struct dag_api_ops *ops;
};

static void write_file(const char *dir, const char *name, const char *text)
{
	char *p = fs_join(dir, name);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static const char *const DIAMOND = "dag_id: diamond\n"
                                   "params: {items: [x, y]}\n"
                                   "tasks:\n"
                                   "  - task_id: a\n"
                                   "    command: echo a\n"
                                   "  - task_id: b\n"
                                   "    depends_on: [a]\n"
                                   "    foreach: \"{{ params.items }}\"\n"
                                   "    command: echo {{ item }}\n"
                                   "  - task_id: c\n"
                                   "    depends_on: [b]\n"
                                   "    command: echo c\n";

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	struct weir_error err = {0};
	struct node_resources node = {.vcores = 4, .memory_mb = 8192};
	char *db;

	snprintf(f->dir, sizeof f->dir, "/tmp/weir-test-dm-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->home = strdup(f->dir);
	f->dags = fs_join(f->dir, "dags");
	assert_int_equal(fs_mkdir_p(f->dags, 0755, &err), 0);
	db = fs_join(f->home, "weir.db");
	f->store = store_open(db, &err);
	free(db);
	assert_non_null(f->store);
	assert_int_equal(uv_loop_init(&f->loop), 0);
	f->jm = job_manager_create(&f->loop, f->store, &node, f->home, &err);
	assert_non_null(f->jm);
	write_file(f->dags, "diamond.yaml", DIAMOND);
	write_file(f->dags, "broken.yaml",
	           "dag_id: broken\ntasks:\n  - task_id: a\n    comand: x\n");
	write_file(f->dags, "notes.txt", "not a DAG file");
	f->dm = dag_manager_create(&f->loop, f->store, f->jm, f->home, f->dags, NULL, 0, &err);
	assert_non_null(f->dm);
	f->ops = dag_manager_api_ops();
	/* start-up as the server's: each step a turn of its own */
	assert_int_equal(dag_manager_load(f->dm, &err), 0);
	job_manager_turn_end(f->jm);
	assert_int_equal(job_manager_recover(f->jm, &err), 0);
	job_manager_turn_end(f->jm);
	assert_int_equal(dag_manager_recover(f->dm, &err), 0);
	job_manager_turn_end(f->jm);
	job_manager_open(f->jm);
	job_manager_turn_end(f->jm);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	dag_manager_destroy(f->dm);
	job_manager_destroy(f->jm);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	store_close(f->store);
	fs_remove_tree(f->dir);
	free(f->home);
	free(f->dags);
	free(f);
	return 0;
}

static void test_folder(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	json_t *r, *ie;
	int dags, errs, runs;

	r = dag_answer_list_dags(f->ops, f->dm,
	                         &(struct dag_list_query){.limit = 100, .paused = -1}, &err);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(r, "total_entries")), 1);
	json_t *d = json_array_get(json_object_get(r, "dags"), 0);
	assert_string_equal(json_string_value(json_object_get(d, "dag_id")), "diamond");
	assert_true(json_is_false(json_object_get(d, "is_paused")));
	assert_true(json_is_null(json_object_get(d, "schedule_interval")));
	json_decref(r);

	/* the broken file is an import error naming the file, line and field */
	r = dag_answer_import_errors(f->ops, f->dm, NULL, 100, 0, &err);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(r, "total_entries")), 1);
	ie = json_array_get(json_object_get(r, "import_errors"), 0);
	assert_non_null(strstr(json_string_value(json_object_get(ie, "filename")), "broken.yaml"));
	assert_non_null(strstr(json_string_value(json_object_get(ie, "stack_trace")),
	                       "broken.yaml:4: tasks[0].comand"));
	json_decref(r);

	dag_manager_counts(f->dm, &dags, &errs, &runs);
	assert_int_equal(dags, 1);
	assert_int_equal(errs, 1);
	assert_int_equal(runs, 0);

	r = dag_answer_get_dag(f->ops, f->dm, "nope", &err);
	assert_null(r);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
}

/* POST .../dagRuns, the turn left open (another entry point may follow in
 * it). */
static json_t *trigger_in_turn(struct fixture *f, const char *body_text, struct weir_error *err)
{
	json_t *body = json_loads(body_text, 0, NULL), *r;

	assert_non_null(body);
	r = dag_answer_trigger_run(f->ops, f->dm, "diamond", body, err);
	json_decref(body);
	return r;
}

/* POST .../dagRuns as the server answers it: the turn ends before the
 * answer leaves. */
static json_t *trigger(struct fixture *f, const char *body_text, struct weir_error *err)
{
	json_t *r = trigger_in_turn(f, body_text, err);

	job_manager_turn_end(f->jm);
	return r;
}

/* Triggers without a logical date in a row (a script's loop): each run gets
 * its own, later than the last, as Airflow's (in microseconds) do; ours are
 * in milliseconds, where two in one would collide. */
static void test_triggers_in_a_row(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	char last[64] = "";

	for (int i = 0; i < 5; i++) {
		json_t *r = trigger(f, "{}", &err);
		assert_non_null(r);
		const char *ld = json_string_value(json_object_get(r, "logical_date"));
		assert_non_null(ld);
		assert_true(strcmp(ld, last) > 0);
		snprintf(last, sizeof last, "%s", ld);
		json_decref(r);
	}
}

static json_t *ti(struct fixture *f, const char *run, const char *task, int map_index)
{
	struct weir_error err = {0};
	json_t *r = dag_answer_get_ti(f->ops, f->dm, "diamond", run, task, map_index, &err);
	assert_non_null(r);
	return r;
}

static void count_commit(void *ctx)
{
	(*(int *)ctx)++;
}

/* The turn has one owner: two DAG entry points inside one turn (one loop
 * iteration, as two requests of one wait bring them) commit once and arm
 * the wake-up timer once, at the turn's end, after their work pass; the
 * loop ends the turn by itself (its prepare and check handles). */
static void test_one_turn_end(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	int commits = 0;
	uint64_t arms = dag_manager_wake_arms(f->dm);
	const char *runs[] = {"one", "two", "three"};
	json_t *r;

	job_manager_set_observer(
	    f->jm, &(struct job_manager_observer){.jobs_changed = count_commit, .ctx = &commits});
	r = trigger_in_turn(f, "{\"dag_run_id\": \"one\", \"logical_date\": \"2024-03-01\"}", &err);
	assert_non_null(r);
	json_decref(r);
	r = trigger_in_turn(f, "{\"dag_run_id\": \"two\", \"logical_date\": \"2024-03-02\"}", &err);
	assert_non_null(r);
	json_decref(r);
	assert_int_equal(commits, 0);
	assert_true(dag_manager_wake_arms(f->dm) == arms);
	job_manager_turn_end(f->jm);
	assert_int_equal(commits, 1);
	assert_int_equal(dag_manager_wake_arms(f->dm), arms + 1);
	/* a turn of the loop's own */
	r = trigger_in_turn(f, "{\"dag_run_id\": \"three\", \"logical_date\": \"2024-03-03\"}",
	                    &err);
	assert_non_null(r);
	json_decref(r);
	assert_int_equal(commits, 1);
	uv_run(&f->loop, UV_RUN_NOWAIT);
	assert_int_equal(commits, 2);
	assert_true(dag_manager_wake_arms(f->dm) == arms + 2);
	/* the work pass ran: each run's first task became a job (which fails
	 * here: the fixture has no executor) */
	for (int i = 0; i < 3; i++) {
		json_t *t = ti(f, runs[i], "a", -1);
		assert_true(json_integer_value(json_object_get(t, "try_number")) >= 1);
		json_decref(t);
	}
	job_manager_set_observer(f->jm, NULL);
}

static void test_trigger_and_run(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	json_t *r, *t;

	/* a conf that breaks the foreach is the trigger's error */
	r = trigger(f, "{\"conf\": {\"items\": \"not a list\"}, \"dag_run_id\": \"bad\"}", &err);
	assert_null(r);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_null(dag_answer_get_run(f->ops, f->dm, "diamond", "bad", &err));
	r = trigger(f, "{\"conf\": [1]}", &err);
	assert_null(r);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	r = trigger(f, "{\"logical_date\": \"yesterday\"}", &err);
	assert_null(r);
	assert_int_equal(err.kind, WEIR_E_INVALID);

	/* without an executor a's job fails at once: the run ends in the trigger's
	 * own turn, through the job manager's end callback */
	r = trigger(f,
	            "{\"conf\": {\"items\": [1, 2, 3]}, \"dag_run_id\": \"r1\", "
	            "\"logical_date\": \"2024-03-01T00:00:00.250Z\"}",
	            &err);
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "dag_run_id")), "r1");
	assert_string_equal(json_string_value(json_object_get(r, "logical_date")),
	                    "2024-03-01T00:00:00.250000+00:00");
	assert_string_equal(json_string_value(json_object_get(r, "run_type")), "manual");
	json_decref(r);
	r = dag_answer_get_run(f->ops, f->dm, "diamond", "r1", &err);
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "state")), "failed");
	assert_non_null(strstr(json_string_value(json_object_get(r, "reason")), "task a failed"));
	json_decref(r);

	t = ti(f, "r1", "a", -1);
	assert_string_equal(json_string_value(json_object_get(t, "state")), "failed");
	assert_int_equal(json_integer_value(json_object_get(t, "try_number")), 1);
	assert_true(json_is_integer(json_object_get(t, "job_id")));
	assert_non_null(strstr(json_string_value(json_object_get(t, "reason")), "failed"));
	assert_string_equal(json_string_value(json_object_get(t, "rendered_command")), "echo a");
	json_decref(t);
	/* foreach from the conf: three instances, upstream_failed */
	for (int i = 0; i < 3; i++) {
		t = ti(f, "r1", "b", i);
		assert_string_equal(json_string_value(json_object_get(t, "state")),
		                    "upstream_failed");
		json_decref(t);
	}
	assert_null(dag_answer_get_ti(f->ops, f->dm, "diamond", "r1", "b", 3, &err));
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	/* the same run id again: a conflict */
	r = trigger(f, "{\"dag_run_id\": \"r1\"}", &err);
	assert_null(r);
	assert_int_equal(err.kind, WEIR_E_CONFLICT);

	/* a dry run clear lists and changes nothing; a real one runs a again */
	json_t *body = json_pack("{s:s, s:[s], s:b}", "dag_run_id", "r1", "task_ids", "a",
	                         "include_downstream", 1);
	r = dag_answer_clear_tis(f->ops, f->dm, "diamond", body, &err);
	assert_non_null(r);
	assert_int_equal(json_array_size(json_object_get(r, "task_instances")), 5);
	json_decref(r);
	t = ti(f, "r1", "a", -1);
	assert_int_equal(json_integer_value(json_object_get(t, "try_number")), 1);
	json_decref(t);
	json_object_set_new(body, "dry_run", json_false());
	r = dag_answer_clear_tis(f->ops, f->dm, "diamond", body, &err);
	job_manager_turn_end(f->jm); /* as before the answer leaves */
	assert_non_null(r);
	json_decref(r);
	json_decref(body);
	t = ti(f, "r1", "a", -1);
	assert_int_equal(json_integer_value(json_object_get(t, "try_number")), 2);
	assert_string_equal(json_string_value(json_object_get(t, "state")), "failed");
	json_decref(t);

	/* each try keeps its job: try 1's log is reachable, try 3 is not */
	char *path = NULL;
	bool ended = false;
	assert_int_equal(
	    f->ops->ti_log_locate(f->dm, "diamond", "r1", "a", -1, 3, &path, &ended, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	r = dag_answer_list_runs(f->ops, f->dm, "diamond",
	                         &(struct dag_run_list_query){.limit = 10}, &err);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(r, "total_entries")), 1);
	json_decref(r);
	r = dag_answer_list_runs(f->ops, f->dm, "diamond",
	                         &(struct dag_run_list_query){.order_by = "bogus"}, &err);
	assert_null(r);
	assert_int_equal(err.kind, WEIR_E_INVALID);
}

static int64_t total_of(json_t *r)
{
	int64_t n;

	assert_non_null(r);
	n = json_integer_value(json_object_get(r, "total_entries"));
	json_decref(r);
	return n;
}

/* The list filters as Airflow reads them: tags (any of), dag_id_pattern
 * (ilike "%p%"), paused, order; run and task instance filters by state,
 * date, pool and id, across every DAG and run with "~". */
static void test_list_filters(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	const char *ml[] = {"ml"}, *none[] = {"none-such"}, *failed[] = {"failed"},
	           *queued[] = {"queued"}, *task_a[] = {"a"}, *other[] = {"Nightly_ETL"},
	           *pool[] = {"default_pool"}, *no_pool[] = {"gpu"};
	json_t *r;

	write_file(f->dags, "tagged.yaml",
	           "dag_id: Nightly_ETL\ntags: [nightly, ml]\ntasks:\n"
	           "  - task_id: a\n    command: echo a\n");
	assert_int_equal(dag_manager_load(f->dm, &err), 0);
#define DAGS(...)                                                                                  \
	total_of(dag_answer_list_dags(f->ops, f->dm, &(struct dag_list_query){__VA_ARGS__}, &err))
	assert_int_equal(DAGS(.paused = -1), 2);
	assert_int_equal(DAGS(.paused = -1, .tags = {ml, 1}), 1);
	assert_int_equal(DAGS(.paused = -1, .tags = {none, 1}), 0);
	assert_int_equal(DAGS(.paused = -1, .dag_id_pattern = "etl"), 1);
	assert_int_equal(DAGS(.paused = -1, .dag_id_pattern = "dia%d"), 1);
	assert_int_equal(DAGS(.paused = -1, .dag_id_pattern = "d_a"), 1);
	assert_int_equal(DAGS(.paused = -1, .dag_id_pattern = "xyz"), 0);
	assert_int_equal(DAGS(.paused = 1), 0);
	assert_int_equal(DAGS(.paused = 0), 2);
#undef DAGS
	r = dag_answer_list_dags(f->ops, f->dm,
	                         &(struct dag_list_query){.paused = -1, .desc = true}, &err);
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(r, "dags"), 0), "dag_id")),
	                    "diamond");
	json_decref(r);
	/* a page counts what the filters keep */
	r = dag_answer_list_dags(
	    f->ops, f->dm, &(struct dag_list_query){.paused = -1, .limit = 1, .tags = {ml, 1}},
	    &err);
	assert_int_equal(json_array_size(json_object_get(r, "dags")), 1);
	assert_int_equal(total_of(r), 1);

	/* two runs of diamond, both failed at once (no executor) */
	json_decref(trigger(f, "{\"dag_run_id\": \"r1\", \"logical_date\": \"2024-03-01\"}", &err));
	json_decref(trigger(f, "{\"dag_run_id\": \"r2\", \"logical_date\": \"2024-03-05\"}", &err));
#define RUNS(dag, ...)                                                                             \
	total_of(dag_answer_list_runs(f->ops, f->dm, dag,                                          \
	                              &(struct dag_run_list_query){__VA_ARGS__}, &err))
	assert_int_equal(RUNS("diamond", .states = {failed, 1}), 2);
	assert_int_equal(RUNS("diamond", .states = {queued, 1}), 0);
	assert_int_equal(RUNS("diamond", .execution_date = {.gte = "2024-03-02T00:00:00Z"}), 1);
	assert_int_equal(RUNS("diamond", .execution_date = {.lte = "2024-03-01T00:00:00+00:00"}),
	                 1);
	assert_int_equal(RUNS("diamond", .end_date = {.gte = "2000-01-01T00:00:00Z"}), 2);
	assert_int_equal(RUNS("diamond", .updated_at = {.gte = "2999-01-01T00:00:00Z"}), 0);
	assert_int_equal(RUNS("~", .dag_ids = {other, 1}), 0);
	assert_int_equal(RUNS("~"), 2);
#undef RUNS
	assert_null(dag_answer_list_runs(
	    f->ops, f->dm, "diamond", &(struct dag_run_list_query){.start_date = {.lte = "soon"}},
	    &err));
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_non_null(strstr(err.msg, "start_date_lte"));

#define TIS(dag, run, ...)                                                                         \
	total_of(dag_answer_list_tis(f->ops, f->dm, dag, run,                                      \
	                             &(struct dag_ti_list_query){__VA_ARGS__}, &err))
	assert_int_equal(TIS("diamond", "r1", .task_ids = {task_a, 1}), 1);
	assert_int_equal(TIS("diamond", "r1", .states = {failed, 1}), 1);
	assert_int_equal(TIS("~", "~", .task_ids = {task_a, 1}), 2);
	assert_int_equal(TIS("~", "~", .task_ids = {task_a, 1}, .pools = {pool, 1}), 2);
	assert_int_equal(TIS("~", "~", .pools = {no_pool, 1}), 0);
	assert_int_equal(TIS("~", "~", .dag_ids = {other, 1}), 0);
	assert_int_equal(TIS("diamond", "~", .task_ids = {task_a, 1},
	                     .execution_date = {.gte = "2024-03-02T00:00:00Z"}),
	                 1);
	assert_int_equal(TIS("diamond", "~", .task_ids = {task_a, 1}, .has_duration_gte = true,
	                     .duration_gte = 1e9),
	                 0);
#undef TIS
	r = dag_answer_list_tis(f->ops, f->dm, "diamond", "r1",
	                        &(struct dag_ti_list_query){.limit = 1, .offset = 1}, &err);
	assert_non_null(r);
	assert_int_equal(json_array_size(json_object_get(r, "task_instances")), 1);
	assert_true(total_of(r) > 1);
	assert_null(dag_answer_list_tis(f->ops, f->dm, "diamond", "nope",
	                                &(struct dag_ti_list_query){0}, &err));
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
}

/* pool_slots: a task instance holds that many slots of its pool; a task
 * larger than its pool is an import error naming the file, line, task and
 * key (default_pool has 128 slots here). */
static void test_pool_slots(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	json_t *r, *ie, *t;
	bool found = false;
	size_t i;

	write_file(f->dags, "wide.yaml",
	           "dag_id: wide\ntasks:\n  - task_id: a\n    command: echo a\n"
	           "    pool_slots: 3\n");
	write_file(f->dags, "huge.yaml",
	           "dag_id: huge\ntasks:\n  - task_id: a\n    command: echo a\n"
	           "  - task_id: big\n    command: echo b\n    pool_slots: 200\n");
	assert_int_equal(dag_manager_load(f->dm, &err), 0);
	r = dag_answer_import_errors(f->ops, f->dm, NULL, 100, 0, &err);
	assert_non_null(r);
	json_array_foreach(json_object_get(r, "import_errors"), i, ie)
	{
		const char *msg = json_string_value(json_object_get(ie, "stack_trace"));
		if (strstr(msg, "huge.yaml")) {
			found = true;
			assert_non_null(strstr(msg,
			                       "huge.yaml:7: tasks[1].pool_slots: task big takes "
			                       "200 slots, but pool default_pool has 128"));
		}
	}
	assert_true(found);
	json_decref(r);
	assert_null(dag_answer_get_dag(f->ops, f->dm, "huge", &err));

	json_t *body = json_pack("{s:s}", "dag_run_id", "w1");
	r = dag_answer_trigger_run(f->ops, f->dm, "wide", body, &err);
	json_decref(body);
	assert_non_null(r);
	json_decref(r);
	t = dag_answer_get_ti(f->ops, f->dm, "wide", "w1", "a", -1, &err);
	assert_non_null(t);
	assert_int_equal(json_integer_value(json_object_get(t, "pool_slots")), 3);
	json_decref(t);
	r = dag_answer_dag_tasks(f->ops, f->dm, "wide", &err);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(
	                     json_array_get(json_object_get(r, "tasks"), 0), "pool_slots")),
	                 3);
	json_decref(r);
}

/* The scheduler's heartbeat: set by recovery, then by each periodic pass. */
static void test_last_pass(void **state)
{
	struct fixture *f = *state;
	int64_t first = dag_manager_last_pass(f->dm);

	assert_true(first > 0);
	assert_true(first <= clock_now_ms());
	/* the rescan timer (every 2 s) passes once: its heartbeat is the time
	 * of that pass, later than any moment before it */
	int64_t before = clock_now_ms();
	int64_t deadline = clock_mono_ms() + 30 * 1000;
	while (dag_manager_last_pass(f->dm) == first && clock_mono_ms() < deadline)
		uv_run(&f->loop, UV_RUN_ONCE);
	assert_true(dag_manager_last_pass(f->dm) > first);
	assert_true(dag_manager_last_pass(f->dm) >= before);
	assert_int_equal(dag_manager_last_pass(NULL), 0);
}

static void test_pause(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	json_t *body = json_pack("{s:b}", "is_paused", 1), *r;

	r = dag_answer_patch_dag(f->ops, f->dm, "diamond", body, &err);
	json_decref(body);
	assert_non_null(r);
	assert_true(json_is_true(json_object_get(r, "is_paused")));
	json_decref(r);
	/* a paused DAG's triggered run waits in the queue */
	r = trigger(f, "{\"dag_run_id\": \"waits\"}", &err);
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "state")), "queued");
	json_decref(r);
}

/* Job tasks: a spec file read when the try starts, rendered; a file that
 * does not parse fails the try at once, naming the file, without a job. */
static void test_job_tasks(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	/* inside the DAG folder (the server reads no file a DAG names outside
	 * it), in a folder of their own that the scan does not read */
	char *specs = fs_join(f->dags, "specs");
	char *good = fs_join(specs, "job.yaml"), *bad = fs_join(specs, "bad.yaml");
	char dag[512];
	json_t *r, *t, *body;

	assert_int_equal(mkdir(specs, 0755), 0);
	write_file(specs, "job.yaml", "roles: {worker: {command: \"run {{ ds }}\"}}\n");
	write_file(specs, "bad.yaml", "roles: {worker: {instances: many}}\n");
	snprintf(dag, sizeof dag,
	         "dag_id: jobs\n"
	         "tasks:\n"
	         "  - {task_id: good, job: %s}\n"
	         "  - {task_id: bad, job: %s}\n",
	         good, bad);
	write_file(f->dags, "jobs.yaml", dag);
	/* the folder's watch picks the new file up */
	for (int i = 0; i < 200 && !(r = dag_answer_get_dag(f->ops, f->dm, "jobs", &err)); i++) {
		uv_run(&f->loop, UV_RUN_NOWAIT);
		usleep(10000);
	}
	assert_non_null(r);
	json_decref(r);

	body = json_pack("{s:s, s:s}", "dag_run_id", "j1", "logical_date", "2024-03-01T00:00:00Z");
	r = dag_answer_trigger_run(f->ops, f->dm, "jobs", body, &err);
	json_decref(body);
	assert_non_null(r);
	json_decref(r);
	t = dag_answer_get_ti(f->ops, f->dm, "jobs", "j1", "good", -1, &err);
	assert_non_null(t);
	assert_string_equal(json_string_value(json_object_get(t, "rendered_command")),
	                    "worker: run 2024-03-01");
	assert_true(json_is_integer(json_object_get(t, "job_id")));
	json_decref(t);
	t = dag_answer_get_ti(f->ops, f->dm, "jobs", "j1", "bad", -1, &err);
	assert_non_null(t);
	assert_string_equal(json_string_value(json_object_get(t, "state")), "failed");
	assert_int_equal(json_integer_value(json_object_get(t, "try_number")), 1);
	assert_true(json_is_null(json_object_get(t, "job_id")));
	assert_non_null(strstr(json_string_value(json_object_get(t, "reason")), "cannot start: "));
	assert_non_null(strstr(json_string_value(json_object_get(t, "reason")), "bad.yaml:1"));
	json_decref(t);
	free(good);
	free(specs);
	free(bad);
}

static void test_config_keys(void **state)
{
	struct server_config cfg;
	struct weir_error err = {0};
	const char *good = "dags: flows\npools: {spark: 2, default_pool: -1}\n"
	                   "users:\n  - {name: ops, password_hash: \"x\"}\n";

	(void)state;
	server_config_init(&cfg);
	assert_int_equal(server_config_apply_yaml(&cfg, good, strlen(good), "w.yaml", &err), 0);
	assert_string_equal(cfg.dags_dir, "flows");
	assert_int_equal(cfg.n_pools, 2);
	assert_string_equal(cfg.pools[0].name, "spark");
	assert_int_equal(cfg.pools[0].slots, 2);
	assert_int_equal(cfg.pools[1].slots, -1);
	assert_int_equal(cfg.n_users, 1);
	assert_string_equal(cfg.users[0].name, "ops");
	server_config_release(&cfg);

	server_config_init(&cfg);
	assert_int_equal(server_config_apply_yaml(&cfg, "pools: {a: x}\n", 14, "w.yaml", &err), -1);
	assert_non_null(strstr(err.msg, "pools.a: expected a slot count"));
	assert_int_equal(server_config_apply_yaml(&cfg, "users: [{name: a}]\n", 19, "w.yaml", &err),
	                 -1);
	assert_non_null(strstr(err.msg, "users[0]"));
	server_config_release(&cfg);

	/* --dags wins over the file */
	char *argv[] = {"server", "--dags", "/srv/dags"};
	server_config_init(&cfg);
	assert_int_equal(server_config_parse_args(&cfg, 3, argv, &err), 0);
	assert_int_equal(server_config_apply_yaml(&cfg, "dags: other\n", 12, "w.yaml", &err), 0);
	assert_string_equal(cfg.dags_dir, "/srv/dags");
	server_config_release(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_folder, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_trigger_and_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_triggers_in_a_row, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_one_turn_end, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pause, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_list_filters, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_last_pass, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pool_slots, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_job_tasks, setup, teardown),
	    cmocka_unit_test(test_config_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
