/* db_clean.c: a clean of old history, batch by batch (db_clean.h).
 *
 * Owns: the timer that runs one batch a loop turn, what the clean was
 * asked, what it counted at its start and what it removed so far.  The
 * rows go through store/clean_store.h inside the turn the timer's callback
 * is part of (job_manager/turn.c commits it); before a batch the DAG
 * manager drops its copies of runs, and after it the job manager forgets
 * the removed jobs and their files go.
 */
#include "server/db_clean.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "store/clean_store.h"

enum clean_state { CLEAN_IDLE, CLEAN_RUNNING, CLEAN_DONE, CLEAN_FAILED };
static const char *const state_names[] = {"idle", "running", "done", "failed"};

struct db_clean {
	uv_timer_t timer;     /* the next batch */
	uv_timer_t retention; /* the next clean of `retention:` */
	int open_handles;
	int64_t keep_s;
	struct store *store;
	struct job_manager *jm;
	struct dag_manager *dm;
	char *home;
	enum clean_state state;
	struct store_clean_query q;
	char *dags_json; /* q.dags_json's copy */
	int64_t older_than_s;
	struct store_clean_counts would, removed;
	int64_t started_at, ended_at; /* epoch ms */
	int batches;
	char error[256];
};

struct db_clean *db_clean_create(uv_loop_t *loop, struct store *store, struct job_manager *jm,
                                 struct dag_manager *dm, const char *home, struct weir_error *err)
{
	struct db_clean *c = calloc(1, sizeof *c);

	if (!c || !(c->home = strdup(home))) {
		free(c);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	c->store = store;
	c->jm = jm;
	c->dm = dm;
	uv_timer_init(loop, &c->timer);
	uv_timer_init(loop, &c->retention);
	c->timer.data = c->retention.data = c;
	c->open_handles = 2;
	return c;
}

static void on_closed(uv_handle_t *h)
{
	struct db_clean *c = h->data;
	if (--c->open_handles > 0)
		return;
	free(c->dags_json);
	free(c->home);
	free(c);
}

void db_clean_destroy(struct db_clean *c)
{
	if (!c)
		return;
	uv_close((uv_handle_t *)&c->timer, on_closed);
	uv_close((uv_handle_t *)&c->retention, on_closed);
}

static json_t *counts_json(const struct store_clean_counts *n)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "dag_runs", (json_int_t)n->dag_runs,
	                 "task_instances", (json_int_t)n->task_instances, "jobs",
	                 (json_int_t)n->jobs, "tasks", (json_int_t)n->tasks, "events",
	                 (json_int_t)n->events, "event_log", (json_int_t)n->event_log);
}

static json_t *time_json(int64_t ms)
{
	char buf[64];
	return ms ? json_string(clock_format_iso(ms, buf, sizeof buf)) : json_null();
}

/* What a clean (or a dry run: no removed) was asked and counted. */
static json_t *asked_json(const char *state, int64_t older_than_s,
                          const struct store_clean_query *q, const struct store_clean_counts *would)
{
	json_t *o = json_object();
	json_t *dags = q->dags_json ? json_loads(q->dags_json, 0, NULL) : NULL;

	json_object_set_new(o, "state", json_string(state));
	json_object_set_new(o, "older_than_s", json_integer(older_than_s));
	json_object_set_new(o, "before", time_json(q->before_ms));
	json_object_set_new(o, "dag_ids", dags ? dags : json_null());
	json_object_set_new(o, "would_remove", counts_json(would));
	return o;
}

/* The clean's state and counts (what the routes answer). */
static json_t *status_json(struct db_clean *c)
{
	json_t *o = asked_json(state_names[c->state], c->older_than_s, &c->q, &c->would);

	{
		json_object_set_new(o, "removed", counts_json(&c->removed));
		json_object_set_new(o, "batches", json_integer(c->batches));
		json_object_set_new(o, "started_at", time_json(c->started_at));
		json_object_set_new(o, "ended_at", time_json(c->ended_at));
		if (c->state == CLEAN_FAILED)
			json_object_set_new(o, "error", json_string(c->error));
	}
	return o;
}

static void finish(struct db_clean *c, enum clean_state st)
{
	c->state = st;
	c->ended_at = clock_now_ms();
	uv_timer_stop(&c->timer);
	log_info("db clean %s: %" PRId64 " runs, %" PRId64 " task instances, %" PRId64
	         " jobs, %" PRId64 " event log records removed in %d batches%s%s",
	         st == CLEAN_DONE ? "done" : "stopped", c->removed.dag_runs,
	         c->removed.task_instances, c->removed.jobs, c->removed.event_log, c->batches,
	         st == CLEAN_FAILED ? ": " : "", st == CLEAN_FAILED ? c->error : "");
}

/* HOME/WHAT/ID and what it holds (a job's logs and work folders, a run's
 * outputs), when there. */
static void remove_dir(struct db_clean *c, const char *what, int64_t id)
{
	char dir[4096];

	snprintf(dir, sizeof dir, "%s/%s/%" PRId64, c->home, what, id);
	if (fs_remove_tree(dir) < 0)
		log_warn("db clean: cannot remove %s", dir);
}

/* One batch, in this loop turn. */
static void on_batch(uv_timer_t *t)
{
	struct db_clean *c = t->data;
	struct weir_error err = {0};
	struct store_clean_ids ids = {0};
	bool more = false;

	if (c->dm)
		dag_manager_forget_runs(c->dm);
	if (store_clean_batch(c->store, &c->q, DB_CLEAN_BATCH, &c->removed, &ids, &more, &err) <
	    0) {
		snprintf(c->error, sizeof c->error, "%s", err.msg);
		finish(c, CLEAN_FAILED);
		store_clean_ids_release(&ids);
		return;
	}
	c->batches++;
	for (size_t i = 0; i < ids.n_jobs; i++) {
		job_manager_forget_ended(c->jm, ids.jobs[i]);
		remove_dir(c, "jobs", ids.jobs[i]);
	}
	for (size_t i = 0; i < ids.n_runs; i++)
		remove_dir(c, "dag_runs", ids.runs[i]);
	store_clean_ids_release(&ids);
	if (!more)
		finish(c, CLEAN_DONE);
	/* else the timer fires again in the next loop turn */
}

static json_t *op_start(void *ctx, const struct db_clean_request *r, struct weir_error *err)
{
	struct db_clean *c = ctx;
	char *dags = NULL;

	if (c->state == CLEAN_RUNNING) {
		weir_error_set(
		    err, WEIR_E_CONFLICT,
		    "a clean is under way (GET /api/v1/weir/dbClean tells its progress)");
		return NULL;
	}
	if (r->dry_run) {
		struct store_clean_query q = {.before_ms = clock_now_ms() - r->older_than_s * 1000,
		                              .dags_json = r->dags_json};
		struct store_clean_counts would;
		if (c->dm)
			dag_manager_forget_runs(c->dm);
		if (store_clean_count(c->store, &q, &would, err) < 0)
			return NULL;
		return asked_json("dry_run", r->older_than_s, &q, &would);
	}
	if (r->dags_json && !(dags = strdup(r->dags_json))) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	free(c->dags_json);
	c->dags_json = dags;
	c->older_than_s = r->older_than_s;
	c->q = (struct store_clean_query){.before_ms = clock_now_ms() - r->older_than_s * 1000,
	                                  .dags_json = c->dags_json};
	c->removed = (struct store_clean_counts){0};
	c->batches = 0;
	c->error[0] = '\0';
	c->ended_at = 0;
	if (c->dm)
		dag_manager_forget_runs(c->dm);
	if (store_clean_count(c->store, &c->q, &c->would, err) < 0)
		return NULL;
	c->state = CLEAN_RUNNING;
	c->started_at = clock_now_ms();
	uv_timer_start(&c->timer, on_batch, 0, 1);
	log_info("db clean: removing what ended before %" PRId64 " (%" PRId64 " runs, %" PRId64
	         " jobs)",
	         c->q.before_ms, c->would.dag_runs, c->would.jobs);
	return status_json(c);
}

static void on_retention(uv_timer_t *t)
{
	struct db_clean *c = t->data;
	struct weir_error err = {0};
	struct db_clean_request r = {.older_than_s = c->keep_s};
	json_t *answer;

	if (c->state == CLEAN_RUNNING)
		return; /* the one under way is enough; the next comes at its time */
	if (!(answer = op_start(c, &r, &err)))
		log_warn("retention: no clean: %s", err.msg);
	json_decref(answer);
}

void db_clean_set_retention(struct db_clean *c, int64_t older_than_s, int64_t every_s)
{
	uint64_t every_ms = (uint64_t)every_s * 1000;

	uv_timer_stop(&c->retention);
	c->keep_s = older_than_s;
	if (older_than_s <= 0 || every_s <= 0)
		return;
	uv_timer_start(&c->retention, on_retention,
	               every_ms < DB_CLEAN_RETENTION_FIRST_MS ? every_ms
	                                                      : DB_CLEAN_RETENTION_FIRST_MS,
	               every_ms);
}

static json_t *op_status(void *ctx)
{
	return status_json(ctx);
}

const struct db_clean_api_ops *db_clean_api_ops(void)
{
	static const struct db_clean_api_ops ops = {.start = op_start, .status = op_status};
	return &ops;
}
