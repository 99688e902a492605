/* test_job_manager.c: the job manager on a real store (SQLite in a temporary
 * home) and a real libuv loop, with an executor of the test's own that
 * starts no process: it records what the manager starts and stops and says
 * which launchers are alive, and the test plays the launchers through the
 * manager's public entry points (the launch protocol's api_ops, the
 * executor's exit and gang callbacks).
 *
 * Covered: a gang from submission to success; a failing task restarting the
 * gang (max_restarts) and then failing the job; a launcher that exits
 * without reporting (lost) and its restart; a kill of a running and of a
 * queued job; recovery after a restart of the server (a new manager on the
 * same store) with one launcher alive and one gone; the rows kept in
 * memory dropped when a turn rolls back; a gang backend's out-of-memory
 * verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/job_views.h"
#include "exec/launch_secret.h"
#include "lib/fs.h"
#include "server/job_manager.h"
#include "store/store.h"

/* ---- an in-process executor ---- */

#define MAX_LAUNCHERS 64

struct launcher {
	int64_t job_id;
	char role[32];
	int index, attempt, pid;
	bool alive;
};

struct stop {
	int64_t job_id;
	char role[32];
	int index, attempt, sig;
};

struct test_exec {
	struct executor base;
	struct launcher launchers[MAX_LAUNCHERS];
	int ports[MAX_LAUNCHERS]; /* the "port" of each launcher's answer, 0: none */
	size_t n_picks;           /* pick_port calls (answers mode) */
	size_t n_launchers;
	struct stop stops[MAX_LAUNCHERS];
	size_t n_stops;
	size_t n_gangs; /* start_gang calls (gang mode) */
};

static int te_start_task(struct executor *ex, const struct executor_task *task, int *pid,
                         struct weir_error *err)
{
	struct test_exec *te = (struct test_exec *)ex;
	struct launcher *l;

	if (te->n_launchers == MAX_LAUNCHERS)
		return weir_error_set(err, WEIR_E_INTERNAL, "test executor: full");
	l = &te->launchers[te->n_launchers++];
	l->job_id = task->job_id;
	snprintf(l->role, sizeof l->role, "%s", task->role);
	l->index = task->index;
	l->attempt = task->attempt;
	l->pid = 1000 + (int)te->n_launchers;
	l->alive = true;
	const char *port = task->answer ? strstr(task->answer, "\"port\":") : NULL;
	te->ports[te->n_launchers - 1] = port ? atoi(port + 7) : 0;
	*pid = l->pid;
	return 0;
}

static int te_start_gang(struct executor *ex, const struct executor_task *tasks, size_t n,
                         struct weir_error *err)
{
	struct test_exec *te = (struct test_exec *)ex;
	int pid;

	te->n_gangs++;
	for (size_t i = 0; i < n; i++)
		if (te_start_task(ex, &tasks[i], &pid, err) < 0)
			return -1;
	return 0;
}

static struct launcher *te_find(struct test_exec *te, int64_t job, const char *role, int index,
                                int attempt)
{
	for (size_t i = 0; i < te->n_launchers; i++) {
		struct launcher *l = &te->launchers[i];
		if (l->job_id == job && !strcmp(l->role, role) && l->index == index &&
		    l->attempt == attempt)
			return l;
	}
	return NULL;
}

static int te_stop_task(struct executor *ex, const struct executor_task *task, int sig,
                        struct weir_error *err)
{
	struct test_exec *te = (struct test_exec *)ex;
	struct stop *s;

	if (te->n_stops == MAX_LAUNCHERS)
		return weir_error_set(err, WEIR_E_INTERNAL, "test executor: full");
	s = &te->stops[te->n_stops++];
	s->job_id = task->job_id;
	snprintf(s->role, sizeof s->role, "%s", task->role);
	s->index = task->index;
	s->attempt = task->attempt;
	s->sig = sig;
	return 0;
}

static bool te_is_alive(struct executor *ex, const struct executor_task *task)
{
	struct launcher *l =
	    te_find((struct test_exec *)ex, task->job_id, task->role, task->index, task->attempt);
	return l && l->alive;
}

static void te_destroy(struct executor *ex)
{
	(void)ex;
}

static const struct executor_ops te_ops = {
    .name = "test",
    .start_task = te_start_task,
    .stop_task = te_stop_task,
    .is_alive = te_is_alive,
    .destroy = te_destroy,
};

/* Ports as a kernel may hand out ports let go: the same one again. */
static int te_pick_port(struct executor *ex, struct weir_error *err)
{
	static const int seq[] = {7001, 7001, 7002, 7001, 7002, 7003};
	struct test_exec *te = (struct test_exec *)ex;

	(void)err;
	return seq[te->n_picks++ % (sizeof seq / sizeof seq[0])];
}

static const struct executor_ops te_answer_ops = {
    .name = "testanswer",
    .start_task = te_start_task,
    .stop_task = te_stop_task,
    .is_alive = te_is_alive,
    .pick_port = te_pick_port,
    .destroy = te_destroy,
};

static const struct executor_ops te_gang_ops = {
    .name = "testgang",
    .start_task = te_start_task,
    .start_gang = te_start_gang,
    .stop_task = te_stop_task,
    .is_alive = te_is_alive,
    .destroy = te_destroy,
};

/* ---- fixture ---- */

struct fixture {
	char dir[64];
	uv_loop_t loop;
	struct store *store;
	struct job_manager *jm;
	struct test_exec ex;
	const struct api_ops *ops;
};

static void manager_up(struct fixture *f)
{
	struct weir_error err = {0};
	struct node_resources node = {.vcores = 4, .memory_mb = 8192};

	f->jm = job_manager_create(&f->loop, f->store, &node, f->dir, &err);
	assert_non_null(f->jm);
	job_manager_set_executor(f->jm, &f->ex.base);
}

/* The manager goes as at a server's stop: its handles closed, launchers
 * left running. */
static void manager_down(struct fixture *f)
{
	job_manager_destroy(f->jm);
	f->jm = NULL;
	uv_run(&f->loop, UV_RUN_NOWAIT);
}

static int setup_with(void **state, const struct executor_ops *ops)
{
	struct fixture *f = calloc(1, sizeof *f);
	struct weir_error err = {0};
	char *db;

	assert_non_null(f);
	snprintf(f->dir, sizeof f->dir, "/tmp/weir-test-jm-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	db = fs_join(f->dir, "weir.db");
	f->store = store_open(db, &err);
	free(db);
	assert_non_null(f->store);
	assert_int_equal(uv_loop_init(&f->loop), 0);
	f->ex.base.ops = ops;
	f->ops = job_manager_api_ops();
	manager_up(f);
	job_manager_open(f->jm);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, &te_ops);
}

static int setup_answer(void **state)
{
	int rc = setup_with(state, &te_answer_ops);
	struct fixture *f = *state;

	f->ex.base.takes_answer = true;
	return rc;
}

static int setup_gang(void **state)
{
	return setup_with(state, &te_gang_ops);
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	if (f->jm)
		manager_down(f);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	store_close(f->store);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* ---- helpers ---- */

/* What the job routes answer for an op's job: the Job in full. */
static json_t *job_json(int rc, struct job_view *v)
{
	json_t *j = rc == 0 ? job_view_job(&v->row, &v->place, v->tasks, v->n_tasks) : NULL;

	job_view_release(v);
	return j;
}

/* What GET /jobs/{id}/events answers: {"events":[...]}. */
static json_t *events_json(struct fixture *f, int64_t id, struct weir_error *err)
{
	struct event_row *rows = NULL;
	size_t n = 0;
	json_t *r;

	if (f->ops->events(f->jm, id, &rows, &n, err) < 0)
		return NULL;
	r = job_view_collection("events", job_view_events(rows, n));
	event_rows_free(rows, n);
	return r;
}

/* Submits `workers` worker tasks through POST /jobs's op; the job's id. */
static int64_t submit(struct fixture *f, int workers, int vcores, int max_restarts)
{
	struct weir_error err = {0};
	json_t *body = json_pack("{s:s, s:{s:{s:i, s:s, s:i, s:s}}, s:{s:i}}", "name", "t", "roles",
	                         "worker", "instances", workers, "memory", "256m", "vcores", vcores,
	                         "command", "true", "restart", "max_restarts", max_restarts);
	struct job_view v = {0};
	json_t *r = job_json(f->ops->submit(f->jm, body, &v, &err), &v);
	int64_t id;

	job_manager_turn_end(f->jm); /* as before the answer leaves */
	if (!r)
		fail_msg("submit: %s", err.msg);
	id = json_integer_value(json_object_get(r, "id"));
	assert_true(id > 0);
	json_decref(r);
	json_decref(body);
	return id;
}

static json_t *get_job(struct fixture *f, int64_t id)
{
	struct weir_error err = {0};
	struct job_view v = {0};
	json_t *j = job_json(f->ops->get_job(f->jm, id, &v, &err), &v);
	if (!j)
		fail_msg("get job %lld: %s", (long long)id, err.msg);
	return j;
}

static void expect_job(struct fixture *f, int64_t id, const char *state, const char *reason)
{
	json_t *j = get_job(f, id);
	const char *s = json_string_value(json_object_get(j, "state"));
	const char *r = json_string_value(json_object_get(j, "reason"));

	if (strcmp(s, state) || (reason && strcmp(r, reason)))
		fail_msg("job %lld: %s \"%s\", expected %s \"%s\"", (long long)id, s, r, state,
		         reason ? reason : "*");
	json_decref(j);
}

static int job_attempt(struct fixture *f, int64_t id)
{
	json_t *j = get_job(f, id);
	int a = (int)json_integer_value(json_object_get(j, "attempt"));
	json_decref(j);
	return a;
}

static void expect_task(struct fixture *f, int64_t id, int index, int attempt, const char *state,
                        const char *reason)
{
	struct task_row t = {0};
	struct weir_error err = {0};

	job_manager_turn_end(f->jm); /* the store as another reader sees it */
	assert_int_equal(store_task_get(f->store, id, attempt, "worker", index, &t, &err), 0);
	if (strcmp(task_state_name(t.state), state) || (reason && strcmp(t.reason, reason)))
		fail_msg("task %d.%d: %s \"%s\", expected %s \"%s\"", index, attempt,
		         task_state_name(t.state), t.reason, state, reason ? reason : "*");
	task_row_release(&t);
}

static json_t *key(int64_t id, int index, int attempt)
{
	return json_pack("{s:I, s:s, s:i, s:i}", "job", (json_int_t)id, "role", "worker", "index",
	                 index, "attempt", attempt);
}

/* A launcher's call; expect_kind 0: it must succeed, else the error it gets. */
/* Whether call() ends the turn after the op, as the server does before
 * the answer leaves (false: the turn stays open for the test). */
static bool call_ends_turn = true;

static void call(struct fixture *f, json_t *(*op)(void *, json_t *, struct weir_error *),
                 json_t *body, enum weir_error_kind expect_kind)
{
	struct weir_error err = {0};
	json_t *r = op(f->jm, body, &err);

	if (call_ends_turn)
		job_manager_turn_end(f->jm);
	if (expect_kind == 0 && !r)
		fail_msg("launch call: %s", err.msg);
	if (expect_kind != 0) {
		assert_null(r);
		assert_int_equal(err.kind, expect_kind);
	}
	json_decref(r);
	json_decref(body);
}

static void do_register(struct fixture *f, int64_t id, int index, int attempt)
{
	json_t *b = key(id, index, attempt);
	struct launcher *l = te_find(&f->ex, id, "worker", index, attempt);

	assert_non_null(l);
	json_object_set_new(b, "host", json_string("127.0.0.1"));
	json_object_set_new(b, "port", json_integer(20000 + index));
	json_object_set_new(b, "pid", json_integer(l->pid));
	call(f, f->ops->launch_register, b, 0);
}

static void do_started(struct fixture *f, int64_t id, int index, int attempt)
{
	json_t *b = key(id, index, attempt);
	json_object_set_new(b, "pid", json_integer(5000 + index));
	call(f, f->ops->launch_started, b, 0);
}

/* The task's launcher reports the program's end, then exits. */
static void do_exited(struct fixture *f, int64_t id, int index, int attempt, int code, int sig)
{
	json_t *b = key(id, index, attempt);
	struct launcher *l = te_find(&f->ex, id, "worker", index, attempt);

	json_object_set_new(b, "exit_code", code >= 0 ? json_integer(code) : json_null());
	json_object_set_new(b, "signal", json_integer(sig));
	call(f, f->ops->launch_exited, b, 0);
	if (l)
		l->alive = false;
}

/* Every task of the attempt registers and starts. */
static void run_gang(struct fixture *f, int64_t id, int n, int attempt)
{
	bool ready = true;
	struct weir_error err = {0};
	json_t *c;

	for (int i = 0; i < n; i++) {
		c = f->ops->launch_cluster(f->jm, id, attempt, &ready, &err);
		assert_false(ready); /* not before every task registered */
		json_decref(c);
		do_register(f, id, i, attempt);
	}
	expect_job(f, id, "running", "");
	c = f->ops->launch_cluster(f->jm, id, attempt, &ready, &err);
	assert_true(ready);
	assert_int_equal(json_array_size(json_object_get(json_object_get(c, "cluster"), "worker")),
	                 (size_t)n);
	if (n > 1)
		assert_string_equal(
		    json_string_value(json_array_get(
		        json_object_get(json_object_get(c, "cluster"), "worker"), 1)),
		    "127.0.0.1:20001");
	json_decref(c);
	for (int i = 0; i < n; i++)
		do_started(f, id, i, attempt);
	expect_task(f, id, 0, attempt, "running", NULL);
}

static size_t stops_of(struct fixture *f, int64_t id, int attempt)
{
	size_t n = 0;
	for (size_t i = 0; i < f->ex.n_stops; i++)
		if (f->ex.stops[i].job_id == id && f->ex.stops[i].attempt == attempt) {
			assert_int_equal(f->ex.stops[i].sig, SIGTERM);
			n++;
		}
	return n;
}

static size_t launchers_of(struct fixture *f, int64_t id, int attempt)
{
	size_t n = 0;
	for (size_t i = 0; i < f->ex.n_launchers; i++)
		n += f->ex.launchers[i].job_id == id && f->ex.launchers[i].attempt == attempt;
	return n;
}

static void on_stop_timer(uv_timer_t *t)
{
	uv_stop(t->loop);
}

/* Runs the loop for `ms` (the housekeeping tick and the timeout timer). */
static void run_for(struct fixture *f, uint64_t ms)
{
	uv_timer_t t;

	uv_timer_init(&f->loop, &t);
	uv_timer_start(&t, on_stop_timer, ms, 0);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(&f->loop, UV_RUN_NOWAIT);
}

/* ---- tests ---- */

static void test_gang_succeeds(void **state)
{
	struct fixture *f = *state;
	int64_t id = submit(f, 2, 1, 0);
	int jobs = 0, tasks = 0;

	/* the queue pass started the gang at once: rows, then launchers */
	expect_job(f, id, "starting", "");
	assert_int_equal(launchers_of(f, id, 1), 2);
	expect_task(f, id, 1, 1, "pending", "");
	run_gang(f, id, 2, 1);
	job_manager_counts(f->jm, &jobs, &tasks);
	assert_int_equal(jobs, 1);
	assert_int_equal(tasks, 2);

	do_exited(f, id, 0, 1, 0, 0);
	expect_job(f, id, "running", NULL);
	do_exited(f, id, 1, 1, 0, 0);
	expect_job(f, id, "succeeded", "");
	expect_task(f, id, 1, 1, "succeeded", "");
	assert_int_equal(stops_of(f, id, 1), 0);
	/* a repeated report is answered and changes nothing */
	do_exited(f, id, 1, 1, 3, 0);
	expect_task(f, id, 1, 1, "succeeded", "");
	/* a late registration of an ended job is gone */
	call(f, f->ops->launch_register, key(id, 0, 1), WEIR_E_GONE);
	job_manager_counts(f->jm, &jobs, &tasks);
	assert_int_equal(jobs, 0);
	assert_int_equal(tasks, 0);
}

static void test_failure_restarts_then_fails(void **state)
{
	struct fixture *f = *state;
	int64_t id = submit(f, 2, 1, 1);

	run_gang(f, id, 2, 1);
	/* worker 1 failing decides nothing under the chief policy (worker 0
	 * decides) */
	do_exited(f, id, 1, 1, 1, 0);
	expect_job(f, id, "running", "");
	assert_int_equal(stops_of(f, id, 1), 0);
	/* worker 0: 137 is in the retry range and a restart is left */
	do_exited(f, id, 0, 1, 137, 0);
	expect_task(f, id, 0, 1, "failed", "exited 137");
	/* every task of attempt 1 ended: attempt 2 starts at once */
	assert_int_equal(job_attempt(f, id), 2);
	expect_job(f, id, "starting", "");
	assert_int_equal(launchers_of(f, id, 2), 2);

	{
		/* the event of the restart */
		struct weir_error err = {0};
		json_t *ev = events_json(f, id, &err);
		bool found = false;
		for (size_t i = 0; i < json_array_size(json_object_get(ev, "events")); i++)
			found |= !strcmp(
			    json_string_value(json_object_get(
			        json_array_get(json_object_get(ev, "events"), i), "message")),
			    "restarting the gang after attempt 1: worker:0 exited 137");
		assert_true(found);
		json_decref(ev);
	}
	/* the old attempt's launchers are told to go */
	call(f, f->ops->launch_register, key(id, 0, 1), WEIR_E_GONE);

	run_gang(f, id, 2, 2);
	/* no restart left: the same failure fails the job once the other task,
	 * stopped, has ended */
	do_exited(f, id, 0, 2, -1, SIGKILL);
	expect_job(f, id, "running", "stopping: worker:0 killed by signal 9");
	assert_int_equal(stops_of(f, id, 2), 1);
	do_exited(f, id, 1, 2, 143, SIGTERM);
	expect_job(f, id, "failed", "worker:0 killed by signal 9");
	assert_int_equal(job_attempt(f, id), 2);
}

static void test_restart_waits_for_the_gang(void **state)
{
	struct fixture *f = *state;
	int64_t id = submit(f, 2, 1, 1);

	run_gang(f, id, 2, 1);
	do_exited(f, id, 0, 1, -1, SIGKILL);
	expect_job(f, id, "running", "restarting: worker:0 killed by signal 9");
	assert_int_equal(stops_of(f, id, 1), 1);
	assert_int_equal(launchers_of(f, id, 2), 0);
	call(f, f->ops->launch_register, key(id, 1, 1), WEIR_E_GONE);
	do_exited(f, id, 1, 1, 143, SIGTERM);
	expect_task(f, id, 1, 1, "killed", "stopped");
	assert_int_equal(job_attempt(f, id), 2);
	expect_job(f, id, "starting", "");
	assert_int_equal(launchers_of(f, id, 2), 2);

	run_gang(f, id, 2, 2);
	do_exited(f, id, 0, 2, 1, 0);
	expect_job(f, id, "running", "stopping: worker:0 exited 1");
	assert_int_equal(stops_of(f, id, 2), 1);
	do_exited(f, id, 1, 2, -1, SIGTERM);
	expect_job(f, id, "failed", "worker:0 exited 1");
	{
		json_t *j = get_job(f, id);
		assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 1);
		json_decref(j);
	}
}

static void test_lost_launcher(void **state)
{
	struct fixture *f = *state;
	int64_t id = submit(f, 1, 1, 1);
	struct launcher *l;

	run_gang(f, id, 1, 1);
	/* the launcher exits without a report: the task is lost a second later
	 * (a report may still be in flight), which restarts the gang */
	l = te_find(&f->ex, id, "worker", 0, 1);
	l->alive = false;
	job_manager_on_launcher_exit(f->jm, id, "worker", 0, 1, l->pid, 1, 0);
	expect_task(f, id, 0, 1, "running", NULL);
	run_for(f, 1600);
	expect_task(f, id, 0, 1, "lost", "launcher exited 1 without reporting");
	assert_int_equal(job_attempt(f, id), 2);
	assert_int_equal(launchers_of(f, id, 2), 1);

	/* the next one is lost too, with no restart left: the job fails */
	run_gang(f, id, 1, 2);
	l = te_find(&f->ex, id, "worker", 0, 2);
	l->alive = false;
	job_manager_on_launcher_exit(f->jm, id, "worker", 0, 2, l->pid, 0, SIGKILL);
	run_for(f, 1600);
	expect_task(f, id, 0, 2, "lost", "launcher killed by signal 9 without reporting");
	expect_job(f, id, "failed", "worker:0 lost (its launcher vanished)");
}

static void test_kill(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	int64_t id = submit(f, 2, 2, 0);     /* takes the node's 4 vcores */
	int64_t queued = submit(f, 1, 1, 0); /* waits for them */
	json_t *r;

	run_gang(f, id, 2, 1);
	expect_job(f, queued, "queued", "waiting: 1 vcore");
	assert_int_equal(launchers_of(f, queued, 1), 0);

	/* a queued job ends at once */
	assert_int_equal(job_manager_kill(f->jm, queued, &err), 0);
	expect_job(f, queued, "killed", "killed by the user");

	/* a running one is stopped, and ends when its last task has */
	{
		struct job_view v = {0};
		r = job_json(f->ops->kill_job(f->jm, id, &v, &err), &v);
	}
	assert_non_null(r);
	json_decref(r);
	expect_job(f, id, "running", "stopping: killed by user");
	assert_int_equal(stops_of(f, id, 1), 2);
	do_exited(f, id, 0, 1, 143, SIGTERM);
	expect_job(f, id, "running", NULL);
	do_exited(f, id, 1, 1, 0, 0); /* it finished as it was told to stop */
	expect_task(f, id, 0, 1, "killed", "stopped");
	expect_task(f, id, 1, 1, "succeeded", "");
	expect_job(f, id, "killed", "killed by user");

	/* ended jobs cannot be killed again; unknown ones are not found */
	assert_int_equal(job_manager_kill(f->jm, id, &err), -1);
	assert_int_equal(err.kind, WEIR_E_CONFLICT);
	assert_int_equal(job_manager_kill(f->jm, 999, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
}

static void test_recovery(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	int64_t alive = submit(f, 1, 1, 0);
	int64_t half = submit(f, 2, 1, 0);
	int64_t queued = submit(f, 1, 2, 0); /* waits: 3 of 4 vcores are taken */
	size_t spawned;

	run_gang(f, alive, 1, 1);
	run_gang(f, half, 2, 1);
	expect_job(f, queued, "queued", "waiting: 1 vcore");

	/* the server stops; one of job `half`'s launchers dies meanwhile */
	manager_down(f);
	te_find(&f->ex, half, "worker", 0, 1)->alive = false;
	spawned = f->ex.n_launchers;
	manager_up(f);
	assert_int_equal(job_manager_recover(f->jm, &err), 0);
	job_manager_open(f->jm);

	/* nothing with a row is started again; the dead launcher's task is
	 * lost, which fails its job (no restarts) and stops the other task */
	assert_int_equal(f->ex.n_launchers, spawned);
	expect_task(f, half, 0, 1, "lost", "launcher gone while the server was down");
	expect_task(f, alive, 0, 1, "running", NULL);
	expect_job(f, half, "running", "stopping: worker:0 lost (its launcher vanished)");
	assert_int_equal(stops_of(f, half, 1), 1);
	/* the resources of what runs were taken back: the queued job still waits */
	expect_job(f, queued, "queued", NULL);
	assert_int_equal(launchers_of(f, queued, 1), 0);

	/* launchers still alive report to the new manager */
	do_exited(f, half, 1, 1, 143, SIGTERM);
	expect_job(f, half, "failed", "worker:0 lost (its launcher vanished)");
	/* job `half`'s two vcores are free: the queued job starts */
	assert_int_equal(launchers_of(f, queued, 1), 1);
	do_exited(f, alive, 0, 1, 0, 0);
	expect_job(f, alive, "succeeded", "");

	/* a launcher alive at recovery that then vanishes is lost */
	run_gang(f, queued, 1, 1);
	manager_down(f);
	manager_up(f);
	assert_int_equal(job_manager_recover(f->jm, &err), 0);
	job_manager_open(f->jm);
	expect_task(f, queued, 0, 1, "running", NULL);
	te_find(&f->ex, queued, "worker", 0, 1)->alive = false;
	run_for(f, 600);
	expect_task(f, queued, 0, 1, "lost", "launcher vanished without reporting");
	expect_job(f, queued, "failed", "worker:0 lost (its launcher vanished)");
}

/* A manager still starting hands nothing out: a job submitted (or found
 * queued by recovery) before job_manager_open() waits, without a launcher,
 * and the open starts it. */
static void test_nothing_starts_before_open(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	int64_t early, queued;

	manager_down(f);
	manager_up(f);
	early = submit(f, 1, 1, 0);
	expect_job(f, early, "queued", NULL);
	assert_int_equal(launchers_of(f, early, 1), 0);
	assert_int_equal(job_manager_recover(f->jm, &err), 0);
	expect_job(f, early, "queued", NULL);
	assert_int_equal(launchers_of(f, early, 1), 0);

	/* a restart before the open: the queued job is still only queued */
	manager_down(f);
	manager_up(f);
	queued = submit(f, 1, 1, 0);
	assert_int_equal(job_manager_recover(f->jm, &err), 0);
	assert_int_equal(launchers_of(f, early, 1) + launchers_of(f, queued, 1), 0);
	job_manager_open(f->jm);
	assert_int_equal(launchers_of(f, early, 1), 1);
	assert_int_equal(launchers_of(f, queued, 1), 1);
	expect_job(f, early, "starting", NULL);
}

/* The rows kept in memory follow the store: a turn rolled back after a
 * registration leaves the job starting and its task pending, in the store
 * and in what the manager answers next; the registration done again is
 * kept. */
static void test_rollback_drops_kept_rows(void **state)
{
	struct fixture *f = *state;
	int64_t id = submit(f, 1, 1, 0);
	struct weir_error err = {0};
	bool ready = true;
	json_t *c;

	expect_job(f, id, "starting", "");
	call_ends_turn = false;
	do_register(f, id, 0, 1);
	call_ends_turn = true;
	expect_job(f, id, "running", "");
	assert_int_equal(store_rollback(f->store, &err), 0);
	job_manager_turn_end(f->jm);
	expect_job(f, id, "starting", "");
	expect_task(f, id, 0, 1, "pending", "");
	c = f->ops->launch_cluster(f->jm, id, 1, &ready, &err);
	assert_false(ready);
	json_decref(c);
	run_gang(f, id, 1, 1);
	do_exited(f, id, 0, 1, 0, 0);
	expect_job(f, id, "succeeded", "");
}

static void test_gang_backend_verdict(void **state)
{
	struct fixture *f = *state;
	int64_t id = submit(f, 2, 1, 0);
	json_t *ev;
	struct weir_error err = {0};
	bool found = false;

	/* the gang went to the backend whole */
	assert_int_equal(f->ex.n_gangs, 1);
	job_manager_on_gang_event(f->jm, id, 1, EXECUTOR_GANG_SUBMITTED, "77", "");
	job_manager_on_gang_event(f->jm, id, 1, EXECUTOR_GANG_PENDING, NULL, "Resources");
	expect_job(f, id, "starting", "pending in testgang: Resources");
	job_manager_on_gang_event(f->jm, id, 1, EXECUTOR_GANG_RUNNING, NULL, "");
	expect_job(f, id, "starting", "");
	run_gang(f, id, 2, 1);

	/* task 0 reported a SIGKILL; the backend then says: out of memory */
	do_exited(f, id, 0, 1, -1, SIGKILL);
	expect_job(f, id, "running", "stopping: worker:0 killed by signal 9");
	job_manager_on_gang_event(f->jm, id, 1, EXECUTOR_GANG_OOM, NULL, "out of memory");
	run_for(f, 1600);
	expect_task(f, id, 0, 1, "failed", "out of memory");
	expect_task(f, id, 1, 1, "killed", "stopped");
	expect_job(f, id, "failed", "worker:0 out of memory");
	{
		struct task_row t = {0};
		assert_int_equal(store_task_get(f->store, id, 1, "worker", 0, &t, &err), 0);
		assert_true(t.oom_killed);
		task_row_release(&t);
	}
	ev = events_json(f, id, &err);
	assert_non_null(ev);
	for (size_t i = 0; i < json_array_size(json_object_get(ev, "events")); i++) {
		json_t *e = json_array_get(json_object_get(ev, "events"), i);
		if (strstr(json_string_value(json_object_get(e, "message")),
		           "testgang job 77 submitted"))
			found = true;
	}
	assert_true(found);
	json_decref(ev);
}

/* A gang registered by the server: each task its own port, though the
 * picker hands out one it gave before. */
/* A backend that keeps its tasks (the agent) and does not hold one after a
 * restart that never reported `started`: its start never reached the
 * backend (the server stopped between the commit and the write).  It is
 * started again, not lost: a gang's task with the port and cluster its
 * first answer had, a one-task job's registered again; nothing counts as
 * an attempt.  A task that did report `started` and is gone is lost. */
static void test_start_that_never_reached_the_backend(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	int64_t gang = submit(f, 3, 1, 0), one = submit(f, 1, 1, 0);
	size_t spawned = f->ex.n_launchers;
	int port1 = f->ex.ports[1];

	f->ex.base.keeps_tasks = true;
	assert_int_equal(spawned, 4);
	expect_job(f, gang, "running", NULL);
	do_started(f, gang, 2, 1);
	/* the server dies; the backend never got worker:1's and the one-task
	 * job's starts, and worker:2, which had started, is gone too */
	manager_down(f);
	te_find(&f->ex, gang, "worker", 1, 1)->alive = false;
	te_find(&f->ex, one, "worker", 0, 1)->alive = false;
	te_find(&f->ex, gang, "worker", 2, 1)->alive = false;
	manager_up(f);
	assert_int_equal(job_manager_recover(f->jm, &err), 0);
	job_manager_open(f->jm);

	assert_int_equal(f->ex.n_launchers, spawned + 2);
	assert_int_equal(f->ex.launchers[spawned].job_id, gang);
	assert_int_equal(f->ex.launchers[spawned].index, 1);
	assert_int_equal(f->ex.ports[spawned], port1);
	assert_int_equal(f->ex.launchers[spawned + 1].job_id, one);
	expect_task(f, one, 0, 1, "starting", NULL);
	expect_job(f, one, "running", NULL);
	assert_int_equal(job_attempt(f, one), 1);
	expect_task(f, gang, 2, 1, "lost", "launcher gone while the server was down");
	expect_task(f, gang, 1, 1, "starting", NULL);
}

/* A power cut lost the turns that recorded a task's registration and
 * start (with synchronous=NORMAL the last acknowledged turns may go,
 * recovery.md "A power cut"): after the restart the store says the job is
 * starting and its task pending, and the launcher, whose end report was not
 * answered, reports the program's end.  The job ends with it; it does not
 * stay starting for ever. */
static void test_end_of_a_task_whose_start_was_lost(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	int64_t ok = submit(f, 1, 1, 0), bad = submit(f, 1, 1, 0);

	expect_job(f, ok, "starting", NULL);
	manager_down(f);
	manager_up(f);
	assert_int_equal(job_manager_recover(f->jm, &err), 0);
	job_manager_open(f->jm);
	do_exited(f, ok, 0, 1, 0, 0);
	expect_task(f, ok, 0, 1, "succeeded", NULL);
	expect_job(f, ok, "succeeded", "");
	do_exited(f, bad, 0, 1, 3, 0);
	expect_job(f, bad, "failed", NULL);
}

static void test_gang_ports_apart(void **state)
{
	struct fixture *f = *state;

	submit(f, 3, 1, 0);
	assert_int_equal(f->ex.n_launchers, 3);
	assert_int_equal(f->ex.ports[0], 7001);
	assert_int_equal(f->ex.ports[1], 7002);
	assert_int_equal(f->ex.ports[2], 7003);
	assert_int_equal(f->ex.n_picks, 6);
}

/* A task whose environment asks for a read key (WEIR_TASK_READS=dag_runs)
 * gets its own in the register answer's env and mask; a task that does
 * not ask gets none. */
static void test_read_key_only_when_asked(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct job_view v = {0};
	char want[LAUNCH_SECRET_HEX + 1];

	job_manager_set_read_key(f->jm, "tok");
	for (int asks = 0; asks < 2; asks++) {
		json_t *body =
		    json_pack("{s:s, s:{s:{s:i, s:s, s:s}}, s:{s:s}}", "name", "t", "roles",
		              "worker", "instances", 1, "memory", "256m", "command", "true", "env",
		              "WEIR_TASK_READS", asks ? "dag_runs" : "no");
		json_t *r = job_json(f->ops->submit(f->jm, body, &v, &err), &v);
		job_manager_turn_end(f->jm);
		if (!r)
			fail_msg("submit: %s", err.msg);
		int64_t id = json_integer_value(json_object_get(r, "id"));
		json_decref(r);
		json_decref(body);
		json_t *k = key(id, 0, 1);
		json_t *a = f->ops->launch_register(f->jm, k, &err);
		json_decref(k);
		job_manager_turn_end(f->jm);
		if (!a)
			fail_msg("register: %s", err.msg);
		const char *got = json_string_value(
		    json_object_get(json_object_get(a, "env"), "WEIR_TASK_READ_KEY"));
		if (!asks) {
			assert_null(got);
		} else {
			launch_secret_read("tok", id, "worker", 0, 1, want);
			assert_non_null(got);
			assert_string_equal(got, want);
			assert_string_equal(
			    json_string_value(json_array_get(json_object_get(a, "mask"), 0)), want);
		}
		json_decref(a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_gang_succeeds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nothing_starts_before_open, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failure_restarts_then_fails, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_restart_waits_for_the_gang, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_lost_launcher, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_kill, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_recovery, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rollback_drops_kept_rows, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gang_backend_verdict, setup_gang, teardown),
	    cmocka_unit_test_setup_teardown(test_end_of_a_task_whose_start_was_lost, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_gang_ports_apart, setup_answer, teardown),
	    cmocka_unit_test_setup_teardown(test_read_key_only_when_asked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_start_that_never_reached_the_backend, setup_answer,
	                                    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
