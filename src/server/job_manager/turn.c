/* turn.c: the loop turn, owned here and ended in one place
 * (job_manager_turn_end()).
 *
 * A turn is what the server does between two waits of its loop: the
 * events of one loop iteration.  Entry points (an HTTP request, a report
 * of the agent, a launcher's call, a timer, a child's exit) just do their
 * work; the writes go into the store's open transaction, or wait in the
 * rows written behind (rows.c, the journal, the DAG manager's TIs).  The
 * turn ends, as redis's beforeSleep does, when the loop is about to wait
 * again (a uv_prepare handle) and once its events are in (a uv_check
 * handle), and earlier whenever something is about to leave the process:
 * an HTTP answer and a message to the agent wait for the commit of what
 * they report (the server wires both to job_manager_turn_end()).  Ending
 * a turn with nothing in it costs a few checks.
 *
 * Owns: the two handles, the jobs that ended in the turn (told to end_fn
 * at its end) and the turn's other party's hooks (the DAG manager).
 */
#include "server/job_manager/jm_internal.h"

#include "lib/log.h"
#include "server/observe_series.h"

struct jm_turn {
	struct job_manager *jm;
	uv_prepare_t prepare; /* before the loop waits */
	uv_check_t check;     /* after the events of a wait */
	int open_handles;
	bool ending;  /* inside job_manager_turn_end() */
	bool durable; /* its end was asked durable (job_manager_turn_end_durable()) */
};

static void on_prepare(uv_prepare_t *h)
{
	struct jm_turn *t = h->data;
	job_manager_turn_end(t->jm);
}

static void on_check(uv_check_t *h)
{
	struct jm_turn *t = h->data;
	job_manager_turn_end(t->jm);
}

/* The turn is open from the start: the store's transaction begins at its
 * first write (store_begin()). */
static void turn_open(struct job_manager *jm)
{
	struct weir_error err = {0};

	if (!store_in_transaction(jm->store) && store_begin(jm->store, &err) < 0)
		log_error("store: %s", err.msg);
}

struct jm_turn *jm_turn_create(struct job_manager *jm, struct weir_error *err)
{
	struct jm_turn *t = calloc(1, sizeof *t);

	if (!t) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	t->jm = jm;
	uv_prepare_init(jm->loop, &t->prepare);
	uv_check_init(jm->loop, &t->check);
	t->prepare.data = t->check.data = t;
	t->open_handles = 2;
	uv_prepare_start(&t->prepare, on_prepare);
	uv_check_start(&t->check, on_check);
	/* the handles keep no loop alive: a loop with nothing else to do ends */
	uv_unref((uv_handle_t *)&t->prepare);
	uv_unref((uv_handle_t *)&t->check);
	turn_open(jm);
	return t;
}

static void turn_closed(uv_handle_t *h)
{
	struct jm_turn *t = h->data;

	if (--t->open_handles == 0)
		free(t);
}

/* Tells end_fn of every job that ended in this turn; what it does (new
 * submissions that fail at once, kills) may end more, so until none is left. */
static void ended_flush(struct job_manager *jm, bool tell)
{
	while (jm->ended) {
		struct jm_ended_job *e = jm->ended;
		jm->ended = e->next;
		if (tell && jm->end_fn) {
			/* what it reads of the job is in the store */
			jm_rows_flush(jm);
			jm->end_fn(jm->end_arg, e->job_id, e->state, e->cause, e->exit_code,
			           e->reason, e->started_at);
		}
		free(e->reason);
		free(e);
	}
}

void jm_turn_destroy(struct job_manager *jm)
{
	struct jm_turn *t = jm->turn;
	struct weir_error err = {0};

	if (!t)
		return;
	/* the last turn's writes, without its other party (gone by now) */
	ended_flush(jm, false);
	jm_settle(jm);
	if (store_in_transaction(jm->store) && store_commit(jm->store, &err) < 0) {
		log_error("store: commit failed: %s", err.msg);
		store_rollback(jm->store, NULL);
	}
	uv_prepare_stop(&t->prepare);
	uv_check_stop(&t->check);
	uv_close((uv_handle_t *)&t->prepare, turn_closed);
	uv_close((uv_handle_t *)&t->check, turn_closed);
	jm->turn = NULL;
}

void jm_ended_add(struct job_manager *jm, const struct job_row *job)
{
	struct jm_ended_job *e, **tail;

	observe_series_time_ms(OBSERVE_JOB_RUN, job->running_at, job->ended_at);
	if (!jm->end_fn)
		return;
	e = calloc(1, sizeof *e);
	if (!e || !(e->reason = strdup(job->reason ? job->reason : ""))) {
		free(e);
		log_error("job %lld: out of memory noting its end", (long long)job->id);
		return;
	}
	e->job_id = job->id;
	e->state = job->state;
	e->cause = job->cause;
	e->exit_code = job->exit_code;
	e->started_at = job->started_at;
	for (tail = &jm->ended; *tail; tail = &(*tail)->next)
		;
	*tail = e;
}

/* What the turn took outside the store follows its transaction: the
 * backends send what it asked of them, or drop it when it was rolled back
 * (a full disk), and the queue gives back what its starts took then. */
static void transaction_ended(struct job_manager *jm, bool stored)
{
	jm_backends_turn_end(jm, stored);
	jm_queue_turn_end(jm, stored);
}

int job_manager_turn_end_stored(struct job_manager *jm, struct weir_error *err)
{
	struct weir_error e = {0};
	bool wrote, durable, stored = true;

	if (!jm->turn || jm->turn->ending)
		return 0; /* called again from within: the outer end commits */
	jm->turn->ending = true;
	/* until nothing more ends: the DAG manager's work pass (and its rows
	 * written behind) may submit or kill jobs, a timer end them */
	do {
		ended_flush(jm, true);
		if (jm->hooks.before_commit)
			jm->hooks.before_commit(jm->hooks.ctx);
		jm_timers_check(jm);
	} while (jm->ended);
	/* what the turn wrote behind, before its commit */
	jm_settle(jm);
	wrote = store_tx_wrote(jm->store);
	durable = jm->turn->durable;
	jm->turn->durable = false;
	if (durable ? store_commit_durable(jm->store, &e) < 0
	            : store_in_transaction(jm->store) && store_commit(jm->store, &e) < 0) {
		/* a full disk is logged by the store, once, not every turn */
		if (!store_disk_full(jm->store))
			log_error("store: commit failed: %s", e.msg);
		store_rollback(jm->store, NULL);
		stored = false;
		if (err)
			*err = e;
	}
	turn_open(jm); /* the next turn's writes have their transaction */
	transaction_ended(jm, stored);
	/* After the commit: clients waiting on a job see what was stored. */
	if (wrote && jm->observer.jobs_changed)
		jm->observer.jobs_changed(jm->observer.ctx);
	if (jm->hooks.after_commit)
		jm->hooks.after_commit(jm->hooks.ctx);
	jm->turn->ending = false;
	return stored ? 0 : -1;
}

void job_manager_turn_end(struct job_manager *jm)
{
	job_manager_turn_end_stored(jm, NULL);
}

int job_manager_turn_end_durable(struct job_manager *jm, struct weir_error *err)
{
	if (!jm->turn)
		return 0;
	/* called from within its own end: the outer end's commit, if still
	 * ahead, is durable */
	jm->turn->durable = true;
	return job_manager_turn_end_stored(jm, err);
}

void job_manager_set_turn_hooks(struct job_manager *jm, const struct job_manager_turn_hooks *h)
{
	jm->hooks = h ? *h : (struct job_manager_turn_hooks){0};
}
