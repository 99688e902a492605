/* test_powercut.c: the store after a power cut.  Hundreds of rounds, each
 * on a fresh store: the store's own functions write what the server's turns
 * write (jobs submitted, their tasks and states, events, DAG runs, TIs and
 * their tries; one transaction a turn, some rolled back, a clean restart
 * or a checkpoint that truncates the log now and then), through wal_batch.c over a VFS that cuts
 * the power at a random write, truncation or sync (powercut_vfs.h).  Then the store is opened again
 * through store_open(), and:
 *
 * - PRAGMA integrity_check says "ok" and foreign_key_check finds nothing;
 * - the store is exactly as some turn's commit left it (a digest of every
 *   table, taken after each commit): no turn half there;
 * - that turn is no older than the promise allows.  With weir's
 *   synchronous=NORMAL: every turn whose commit returned before the WAL's
 *   last completed sync (a checkpoint's, or a clean close's); every turn
 *   whose commit returned when the disk kept every write (a process's death,
 *   not the power's), and every turn up to the last whose
 *   store_commit_durable() returned (a fifth of the turns commit so, as
 *   the turns the agent's acknowledgements wait on).  With
 *   synchronous=FULL: every turn whose commit returned;
 * - and no newer than the turn whose commit was under way;
 * - and it takes a commit again.
 *
 * The seed is printed; WEIR_POWERCUT_SEED=S replays from it, and
 * WEIR_POWERCUT_ROUNDS=N sets the count (make chaos runs more). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "powercut_vfs.h"
#include "store/dag_store.h"
#include "store/store.h"
#include "store_tmp.h"

#define TURNS_MAX 64
#define JOBS_MAX (3 * TURNS_MAX + 4) /* up to three a turn */
#define RUNS_MAX TURNS_MAX
#define TIS_MAX 12
#define ROUNDS_DEFAULT 200

/* What the workload knows of the committed store, to choose its next turn. */
struct model {
	struct {
		int64_t id;
		int tasks;
		enum job_state state;
	} jobs[JOBS_MAX];
	int n_jobs;
	struct {
		char run_id[32];
		int tis;
		enum dag_ti_state ti[TIS_MAX];
		int64_t ti_job[TIS_MAX];
	} runs[RUNS_MAX];
	int n_runs;
};

struct round {
	uint64_t seed, rng;
	char dir[256], path[300];
	struct store *s;
	struct dag_store *ds;
	bool full;            /* synchronous=FULL instead of weir's NORMAL */
	int autocheckpoint;   /* pages */
	struct model m, next; /* committed; and as the turn under way leaves it */
	uint64_t digest[TURNS_MAX + 1];
	uint64_t syncs_at_ack[TURNS_MAX + 1];
	int acked;   /* the last turn whose commit returned */
	int durable; /* the last turn whose store_commit_durable() returned */
	int started; /* the last turn whose writes began */
	int64_t now;
	int seq; /* names runs: never the same twice */
};

static uint64_t rnd(struct round *r, uint64_t n)
{
	return n ? pc_rand(&r->rng) % n : 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Every row of every table, in no order: the sum of the rows' hashes (each
 * mixed with its table's name), and the count. */
static uint64_t digest(sqlite3 *db)
{
	sqlite3_stmt *tables = NULL, *rows = NULL;
	uint64_t sum = 0, count = 0;
	char sql[256];

	assert_int_equal(sqlite3_prepare_v2(db,
	                                    "SELECT name FROM sqlite_master WHERE type = 'table' "
	                                    "ORDER BY name",
	                                    -1, &tables, NULL),
	                 SQLITE_OK);
	while (sqlite3_step(tables) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(tables, 0);
		snprintf(sql, sizeof sql, "SELECT * FROM \"%s\"", name);
		assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &rows, NULL), SQLITE_OK);
		while (sqlite3_step(rows) == SQLITE_ROW) {
			uint64_t h = fnv(0xcbf29ce484222325ull, name, strlen(name));
			for (int c = 0; c < sqlite3_column_count(rows); c++) {
				int type = sqlite3_column_type(rows, c);
				const void *v = sqlite3_column_blob(rows, c);
				h = fnv(h, &type, sizeof type);
				h = fnv(h, v ? v : "", (size_t)sqlite3_column_bytes(rows, c));
				h = fnv(h, "|", 1);
			}
			sum += pc_rand(&h);
			count++;
		}
		sqlite3_finalize(rows);
	}
	sqlite3_finalize(tables);
	return sum ^ (count * 0x9e3779b97f4a7c15ull);
}

static void exec_ok(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg ? msg : "?");
}

static void close_store(struct round *r)
{
	dag_store_destroy(r->ds);
	store_close(r->s);
	r->ds = NULL;
	r->s = NULL;
}

/* The store as the server opens it, with the round's settings.  false
 * when the power is off. */
static bool open_store(struct round *r)
{
	struct weir_error err = {0};
	char sql[64];

	r->s = store_open(r->path, &err);
	if (!r->s) {
		if (pc.dead)
			return false;
		fail_msg("seed %" PRIu64 ": store_open: %s", r->seed, err.msg);
	}
	r->ds = dag_store_create(r->s, &err);
	if (!r->ds) {
		if (pc.dead) {
			close_store(r);
			return false;
		}
		fail_msg("seed %" PRIu64 ": dag_store_create: %s", r->seed, err.msg);
	}
	snprintf(sql, sizeof sql, "PRAGMA wal_autocheckpoint = %d", r->autocheckpoint);
	exec_ok(store_db(r->s), sql);
	if (r->full)
		exec_ok(store_db(r->s), "PRAGMA synchronous = FULL");
	return true;
}

/* ---- the turns: each returns 0, or -1 with err when a write failed ---- */

/* The DAG the runs belong to (a DAG file's scan writes it).  0, or -1 when
 * the power went off. */
static int put_dag(struct round *r)
{
	struct weir_error err = {0};
	struct dag_row d = {.dag_id = (char *)"etl",
	                    .file = (char *)"dags/etl.yaml",
	                    .active = true,
	                    .import_error = (char *)"",
	                    .spec_json = (char *)"{\"tasks\":[]}"};

	if (dag_store_dag_put(r->ds, &d, &err) == 0)
		return 0;
	if (!pc.dead)
		fail_msg("seed %" PRIu64 ": dag put: %s", r->seed, err.msg);
	return -1;
}

static char *spec_text(struct round *r, int turn)
{
	/* mostly a spec's size; now and then one larger than wal_batch's
	 * buffer, so that a commit goes out in pieces */
	size_t n = rnd(r, 20) == 0 ? 150000 + rnd(r, 60000) : 200 + rnd(r, 2000);
	char *s = malloc(n + 1);
	int k;

	assert_non_null(s);
	k = snprintf(s, n + 1, "{\"name\":\"t%d\",\"pad\":\"", turn);
	for (size_t i = (size_t)k; i + 2 < n; i++)
		s[i] = (char)('a' + rnd(r, 26));
	s[n - 2] = '"';
	s[n - 1] = '}';
	s[n] = '\0';
	return s;
}

static int submit(struct round *r, int turn, struct weir_error *err)
{
	char *spec = spec_text(r, turn);
	char name[32];
	int tasks = 1 + (int)rnd(r, 8);
	struct job_row j = {.name = name,
	                    .spec_json = spec,
	                    .framework = (char *)"generic",
	                    .state = JOB_QUEUED,
	                    .reason = (char *)"",
	                    .attempt = 1,
	                    .exit_code = -1,
	                    .submitted_at = r->now,
	                    .queued_at = r->now};
	int64_t id = 0;
	int rc;

	snprintf(name, sizeof name, "job-%d", turn);
	rc = store_job_insert(r->s, &j, &id, err);
	free(spec);
	if (rc < 0)
		return -1;
	for (int i = 0; i < tasks; i++) {
		struct task_row t = {.job_id = id,
		                     .attempt = 1,
		                     .role = (char *)"worker",
		                     .idx = i,
		                     .state = TASK_PENDING,
		                     .reason = (char *)"",
		                     .host = (char *)"",
		                     .gpus = (char *)"",
		                     .exit_code = -1};
		if (store_task_insert(r->s, &t, err) < 0)
			return -1;
	}
	struct event_row ev[2] = {
	    {.job_id = id, .time = r->now, .kind = (char *)"submitted", .message = name},
	    {.job_id = id, .time = r->now, .kind = (char *)"state", .message = (char *)"queued"}};
	if (store_events_add(r->s, ev, 2, err) < 0)
		return -1;
	r->next.jobs[r->next.n_jobs].id = id;
	r->next.jobs[r->next.n_jobs].tasks = tasks;
	r->next.jobs[r->next.n_jobs].state = JOB_QUEUED;
	r->next.n_jobs++;
	return 0;
}

/* A job one step on: starting, running, then succeeded or failed, with its
 * tasks. */
static int progress(struct round *r, struct weir_error *err)
{
	int k = -1;
	struct job_row j;

	for (int tries = 0; tries < 8 && k < 0; tries++) {
		int i = (int)rnd(r, (uint64_t)r->next.n_jobs);
		if (r->next.n_jobs && !job_state_is_final(r->next.jobs[i].state))
			k = i;
	}
	if (k < 0)
		return 0;
	int64_t id = r->next.jobs[k].id;
	enum job_state to = r->next.jobs[k].state == JOB_QUEUED     ? JOB_STARTING
	                    : r->next.jobs[k].state == JOB_STARTING ? JOB_RUNNING
	                    : rnd(r, 4)                             ? JOB_SUCCEEDED
	                                                            : JOB_FAILED;
	for (int i = 0; i < r->next.jobs[k].tasks; i++) {
		struct task_row t;
		if (store_task_get(r->s, id, 1, "worker", i, &t, err) < 0)
			return -1;
		t.state = to == JOB_STARTING  ? TASK_STARTING
		          : to == JOB_RUNNING ? TASK_RUNNING
		          : to == JOB_FAILED  ? TASK_FAILED
		                              : TASK_SUCCEEDED;
		if (to == JOB_STARTING) {
			free(t.host);
			t.host = strdup("node-1");
			t.port = 20000 + i;
			t.launcher_pid = 1000 + i;
			t.registered_at = r->now;
		} else if (to == JOB_RUNNING) {
			t.pid = 2000 + i;
			t.started_at = r->now;
		} else {
			t.exit_code = to == JOB_FAILED ? 1 : 0;
			t.cause = END_CAUSE_EXITED;
			t.ended_at = r->now;
			t.cpu_time_ms = (int64_t)rnd(r, 100000);
		}
		int rc = t.host ? store_task_update(r->s, &t, err) : -1;
		task_row_release(&t);
		if (rc < 0)
			return -1;
	}
	if (store_job_get(r->s, id, &j, err) < 0)
		return -1;
	j.state = to;
	if (to == JOB_RUNNING)
		j.running_at = j.started_at = r->now;
	else if (job_state_is_final(to)) {
		j.ended_at = r->now;
		j.exit_code = to == JOB_FAILED ? 1 : 0;
		j.cause = END_CAUSE_EXITED;
	} else
		j.allocated_at = r->now;
	int rc = store_job_update(r->s, &j, err);
	job_row_release(&j);
	if (rc < 0 || store_event_add(r->s, id, r->now, "state", job_state_name(to), NULL, err) < 0)
		return -1;
	r->next.jobs[k].state = to;
	return 0;
}

static int new_run(struct round *r, struct weir_error *err)
{
	struct model *m = &r->next;
	char run_id[32];
	struct dag_run_row run = {.dag_id = (char *)"etl",
	                          .run_id = run_id,
	                          .state = DAG_RUN_RUNNING,
	                          .logical_date = r->now + r->seq,
	                          .data_interval_start = r->now,
	                          .data_interval_end = r->now + 86400000,
	                          .conf = (char *)"{}",
	                          .reason = (char *)"",
	                          .queued_at = r->now,
	                          .start_date = r->now};
	int n = 3 + (int)rnd(r, TIS_MAX - 2);

	if (m->n_runs == RUNS_MAX)
		return 0;
	snprintf(run_id, sizeof run_id, "scheduled__%d", r->seq++);
	snprintf(run.run_type, sizeof run.run_type, "scheduled");
	if (dag_store_run_insert(r->ds, &run, NULL, err) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char task[16];
		snprintf(task, sizeof task, "task_%d", i);
		struct dag_ti_row ti = {.dag_id = (char *)"etl",
		                        .run_id = run_id,
		                        .task_id = task,
		                        .map_index = -1,
		                        .state = DAG_TI_SCHEDULED,
		                        .max_tries = 2,
		                        .pool = (char *)"",
		                        .rendered_command = (char *)"",
		                        .outputs = (char *)"",
		                        .reason = (char *)""};
		if (dag_store_ti_insert(r->ds, &ti, err) < 0)
			return -1;
		m->runs[m->n_runs].ti[i] = DAG_TI_SCHEDULED;
		m->runs[m->n_runs].ti_job[i] = 0;
	}
	snprintf(m->runs[m->n_runs].run_id, sizeof m->runs[m->n_runs].run_id, "%s", run_id);
	m->runs[m->n_runs].tis = n;
	m->n_runs++;
	return 0;
}

/* A TI one step on: queued with a job (and its try), running, success. */
static int ti_step(struct round *r, int turn, struct weir_error *err)
{
	struct model *m = &r->next;
	struct dag_ti_row ti;
	char task[16];
	int k, i;

	if (!m->n_runs)
		return 0;
	k = (int)rnd(r, (uint64_t)m->n_runs);
	i = (int)rnd(r, (uint64_t)m->runs[k].tis);
	if (m->runs[k].ti[i] == DAG_TI_SUCCESS)
		return 0;
	snprintf(task, sizeof task, "task_%d", i);
	if (dag_store_ti_get(r->ds, "etl", m->runs[k].run_id, task, -1, &ti, err) < 0)
		return -1;
	struct dag_try_row try = {.dag_id = ti.dag_id,
	                          .run_id = ti.run_id,
	                          .task_id = ti.task_id,
	                          .map_index = -1,
	                          .try_number = 1,
	                          .reason = (char *)""};
	int rc = 0;
	if (ti.state == DAG_TI_SCHEDULED) {
		/* the TI's job, the TI queued with it, its try: one turn */
		if (submit(r, turn, err) < 0) {
			dag_ti_row_release(&ti);
			return -1;
		}
		ti.job_id = m->jobs[m->n_jobs - 1].id;
		ti.state = DAG_TI_QUEUED;
		ti.try_number = 1;
		ti.queued_at = r->now;
		free(ti.rendered_command);
		ti.rendered_command = strdup("echo etl");
		try.job_id = ti.job_id;
		try.state = DAG_TI_QUEUED;
		rc = ti.rendered_command ? dag_store_ti_update(r->ds, &ti, err) : -1;
		if (rc == 0)
			rc = dag_store_try_put(r->ds, &try, err);
	} else {
		bool found = false;
		ti.state = ti.state == DAG_TI_QUEUED ? DAG_TI_RUNNING : DAG_TI_SUCCESS;
		if (ti.state == DAG_TI_RUNNING)
			ti.start_date = r->now;
		else
			ti.end_date = r->now;
		rc = dag_store_ti_set_state(r->ds, &ti, err);
		if (rc == 0 && ti.state == DAG_TI_SUCCESS)
			rc = dag_store_try_end(r->ds, &try, DAG_TI_SUCCESS, NULL, r->now, &found,
			                       err);
	}
	if (rc == 0)
		m->runs[k].ti[i] = ti.state;
	dag_ti_row_release(&ti);
	return rc;
}

/* Turn `turn`: a few of the above in one transaction, then the turn's
 * number in meta; committed, or rolled back when `rollback`.  0, or -1 when
 * the power went off (anything else fails the test). */
static int turn(struct round *r, int n, bool rollback)
{
	struct weir_error err = {0};
	char num[16];
	bool durable;
	int rc = 0;

	r->next = r->m;
	r->now += 1000;
	if (store_begin(r->s, &err) < 0)
		goto failed;
	if (!rollback)
		r->started = n;
	for (int ops = 1 + (int)rnd(r, 3); ops > 0 && rc == 0; ops--) {
		switch (rnd(r, 6)) {
		case 0:
			rc = submit(r, n, &err);
			break;
		case 1:
		case 2:
			rc = progress(r, &err);
			break;
		case 3:
			rc = new_run(r, &err);
			break;
		default:
			rc = ti_step(r, n, &err);
			break;
		}
	}
	snprintf(num, sizeof num, "%d", n);
	if (rc < 0 || store_meta_set(r->s, "powercut_turn", num, &err) < 0)
		goto failed;
	if (rollback) {
		if (store_rollback(r->s, &err) < 0)
			goto failed;
		return 0;
	}
	/* what the commit leaves, read inside the transaction: the turn may be
	 * on the disk even when its commit did not return */
	r->digest[n] = digest(store_db(r->s));
	durable = rnd(r, 5) == 0; /* as a turn whose end the agent's ack waits on */
	if ((durable ? store_commit_durable(r->s, &err) : store_commit(r->s, &err)) < 0)
		goto failed;
	r->m = r->next;
	r->acked = n;
	if (durable)
		r->durable = n;
	r->syncs_at_ack[n] = pc.wal_syncs;
	return 0;
failed:
	if (!pc.dead)
		fail_msg("seed %" PRIu64 ": turn %d: %s", r->seed, n, err.msg);
	(void)store_rollback(r->s, NULL);
	return -1;
}

static int64_t meta_turn(struct store *s)
{
	struct weir_error err = {0};
	char *v = NULL;
	int64_t n;

	int rc = store_meta_get(s, "powercut_turn", &v, &err);
	if (rc < 0)
		fail_msg("meta: %s", err.msg);
	if (rc == 1)
		return 0;
	n = strtoll(v, NULL, 10);
	free(v);
	return n;
}

static void check_clean(sqlite3 *db, uint64_t seed)
{
	sqlite3_stmt *st = NULL;

	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
	                 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	if (strcmp((const char *)sqlite3_column_text(st, 0), "ok"))
		fail_msg("seed %" PRIu64 ": integrity_check: %s", seed, sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &st, NULL),
	                 SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		fail_msg("seed %" PRIu64 ": foreign_key_check: a row of %s", seed,
		         sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

struct tally {
	int rounds, modes[PC_MODES], full, between; /* cut: how, and where */
	int durable; /* NORMAL rounds where a sync had made acknowledged turns durable */
	int lost;    /* rounds that lost an acknowledged turn (as NORMAL allows) */
	int made;    /* stores cut while made */
};

/* One round; `events` 0: no cut (counts the round's events). */
static uint64_t one_round(uint64_t seed, uint64_t events, struct tally *t)
{
	struct round *r = calloc(1, sizeof *r);
	bool no_psow;
	int turns;

	assert_non_null(r);
	r->seed = r->rng = seed;
	r->now = 1700000000000;
	r->full = rnd(r, 4) == 0;
	r->autocheckpoint = rnd(r, 4) == 0 ? 1000 : 4 + (int)rnd(r, 60);
	turns = 16 + (int)rnd(r, TURNS_MAX - 16);
	no_psow = rnd(r, 2) == 0;
	assert_int_equal(
	    store_tmp_make(r->dir, sizeof r->dir, r->path, sizeof r->path, "weir-powercut"), 0);

	/* a store that was in use: made, a DAG in it, closed cleanly */
	pc_reset();
	pcv.no_psow = no_psow; /* the disk's, for the whole round */
	assert_true(open_store(r));
	assert_int_equal(put_dag(r), 0);
	close_store(r);
	pc_reset();
	assert_true(open_store(r));
	r->digest[0] = digest(store_db(r->s));

	/* drawn in the count too, so that both runs make the same turns; past
	 * the count's last event: the cut comes between turns */
	uint64_t pick = pc_rand(&r->rng);
	uint64_t cut_at = events ? 1 + pick % (events + events / 8) : 0;
	enum pc_mode mode = (enum pc_mode)rnd(r, PC_MODES);
	pc_arm(cut_at, mode, pc_rand(&r->rng));
	bool alive = true;
	for (int n = 1; n <= turns && alive; n++) {
		if (rnd(r, 10) == 0 && turn(r, n, true) < 0)
			alive = false;
		else if (alive && turn(r, n, false) < 0)
			alive = false;
		else if (alive && rnd(r, 25) == 0) {
			/* the server stopped and started again */
			close_store(r);
			alive = !pc.dead && open_store(r);
		} else if (alive && rnd(r, 30) == 0) {
			/* the log emptied and truncated, as the secrets' scrub does at a
			 * start (server/secrets.c) */
			int rc = sqlite3_exec(store_db(r->s), "PRAGMA wal_checkpoint(TRUNCATE)",
			                      NULL, NULL, NULL);
			if (rc != SQLITE_OK && !pc.dead)
				fail_msg("seed %" PRIu64 ": checkpoint: %s", seed,
				         sqlite3_errmsg(store_db(r->s)));
			alive = !pc.dead;
		}
	}
	uint64_t used = pc.events;
	if (!events) {
		/* the count: nothing may be cut */
		assert_true(alive);
		close_store(r);
		pc_reset();
		store_tmp_remove(r->dir, r->path);
		free(r);
		return used;
	}
	if (!pc.dead) {
		t->between++;
		pc_cut();
	}
	uint64_t syncs = pc.wal_syncs;
	if (r->s)
		close_store(r);
	pc_reset();

	/* after the reboot */
	int required = r->acked;
	if (!r->full && mode != PC_KEEP_ALL)
		while (required > 0 && r->syncs_at_ack[required] >= syncs)
			required--;
	/* a durable commit survives every cut, with every turn before it */
	if (required < r->durable)
		required = r->durable;
	assert_true(open_store(r));
	check_clean(store_db(r->s), seed);
	int64_t k = meta_turn(r->s);
	if (k < required || k > r->started)
		fail_msg(
		    "seed %" PRIu64 ": the store holds turn %" PRId64 ", the promise is %d to %d"
		    " (synchronous=%s, disk mode %d, cut at event %" PRIu64 "; store left in %s)",
		    seed, k, required, r->started, r->full ? "FULL" : "NORMAL", (int)mode, cut_at,
		    r->dir);
	if (digest(store_db(r->s)) != r->digest[k])
		fail_msg("seed %" PRIu64 ": the store is not as turn %" PRId64
		         "'s commit left it (store left in %s)",
		         seed, k, r->dir);
	/* it takes a commit again */
	int acked = r->acked;
	r->m.n_jobs = r->m.n_runs = 0;
	r->acked = (int)k;
	assert_int_equal(turn(r, (int)k + 1, false), 0);
	close_store(r);
	store_tmp_remove(r->dir, r->path);
	t->rounds++;
	t->lost += k < acked;
	t->durable += !r->full && mode != PC_KEEP_ALL && required > 0;
	t->modes[mode]++;
	t->full += r->full;
	free(r);
	return used;
}

/* A new store, made (every migration), given a DAG and closed, with the
 * power cut at `cut_at` (0: never).  The events it took. */
static uint64_t make_store(struct round *r, uint64_t cut_at)
{
	uint64_t used;

	assert_int_equal(
	    store_tmp_make(r->dir, sizeof r->dir, r->path, sizeof r->path, "weir-powercut"), 0);
	pc_reset();
	pc_arm(cut_at, (enum pc_mode)rnd(r, PC_MODES), pc_rand(&r->rng));
	if (open_store(r) && put_dag(r) == 0)
		close_store(r);
	else if (r->s)
		close_store(r);
	used = pc.events;
	if (!pc.dead)
		pc_cut();
	pc_reset();
	return used;
}

/* The power cut while the store is made: the next start migrates what the
 * disk kept, and the store is whole. */
static void made_round(uint64_t seed, struct tally *t)
{
	struct round *r = calloc(1, sizeof *r);
	uint64_t events;

	assert_non_null(r);
	r->seed = r->rng = seed;
	r->autocheckpoint = 1000;
	pcv.no_psow = false;
	events = make_store(r, 0);
	store_tmp_remove(r->dir, r->path);
	r->rng = seed;
	make_store(r, 1 + pc_rand(&r->rng) % events);
	assert_true(open_store(r));
	check_clean(store_db(r->s), seed);
	assert_int_equal(store_schema_version(r->s), STORE_SCHEMA_VERSION);
	assert_int_equal(put_dag(r), 0); /* again: it may be lost */
	assert_int_equal(turn(r, 1, false), 0);
	close_store(r);
	store_tmp_remove(r->dir, r->path);
	t->made++;
	free(r);
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 10) : dflt;
}

static void test_power_cuts(void **state)
{
	uint64_t seed = env_u64("WEIR_POWERCUT_SEED", (uint64_t)time(NULL));
	uint64_t rounds = env_u64("WEIR_POWERCUT_ROUNDS", ROUNDS_DEFAULT);
	struct tally t = {0};

	(void)state;
	printf("powercut: seed %" PRIu64 ", %" PRIu64
	       " rounds (WEIR_POWERCUT_SEED, WEIR_POWERCUT_ROUNDS)\n",
	       seed, rounds);
	fflush(stdout);
	for (uint64_t i = 0; i < rounds; i++) {
		/* the round's seed, with no cut: how many events its workload makes */
		uint64_t events = one_round(seed + i, 0, &t);
		one_round(seed + i, events, &t);
		if (i % 4 == 0)
			made_round(seed + i, &t);
	}
	printf("powercut: %d rounds cut (%d with synchronous=FULL; %d between turns); the disk "
	       "kept none/a torn prefix/random sectors/all of the unsynced writes %d/%d/%d/%d "
	       "times; %d NORMAL rounds had acknowledged turns a sync made durable; %d rounds "
	       "lost acknowledged turns (NORMAL, not synced yet); %d stores cut while made\n",
	       t.rounds, t.full, t.between, t.modes[0], t.modes[1], t.modes[2], t.modes[3],
	       t.durable, t.lost, t.made);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_power_cuts),
	};
	if (pc_install() < 0) {
		fprintf(stderr, "powercut: cannot register the VFS\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
