/* timeouts.c: sched's timeouts.  Owns the timeouts context: the due table
 * (each active job's next timeout), the jobs a turn changed (whatever
 * writes a job's row or result notes it), and one libuv timer for the
 * earliest.  A turn's end looks again at the noted jobs and at those whose
 * time has come (timers_check on the job's row), instead of reading every
 * active job from the store on every turn; an expired one goes to
 * job_progress_decide as a PROGRESS_TIMEOUT.
 */
#include "server/job_manager/jm_internal.h"

#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/log.h"
#include "sched/due_table.h"
#include "sched/timers.h"

struct jm_timeouts {
	struct job_manager *jm;
	uv_timer_t timer;
	struct due_table dues;
	int64_t *touched;
	size_t n_touched, cap_touched;
	bool all; /* look at every active job (at start, or when a note could not be kept) */
};

/* A due timeout: the turn's end checks the timers (jm_timers_check()). */
static void on_timeout_timer(uv_timer_t *t)
{
	(void)t;
}

struct jm_timeouts *jm_timeouts_create(struct job_manager *jm, struct weir_error *err)
{
	struct jm_timeouts *tc = calloc(1, sizeof *tc);

	if (!tc) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	tc->jm = jm;
	tc->all = true;
	uv_timer_init(jm->loop, &tc->timer);
	tc->timer.data = tc;
	return tc;
}

static void timeouts_closed(uv_handle_t *h)
{
	free(h->data);
}

void jm_timeouts_destroy(struct jm_timeouts *tc)
{
	if (!tc)
		return;
	due_table_clear(&tc->dues);
	free(tc->touched);
	tc->touched = NULL;
	uv_timer_stop(&tc->timer);
	uv_close((uv_handle_t *)&tc->timer, timeouts_closed);
}

void jm_timers_touch(struct job_manager *jm, int64_t job_id)
{
	struct jm_timeouts *tc = jm->timeouts;

	if (ALLOC_GROW(tc->touched, tc->n_touched + 1, tc->cap_touched) < 0) {
		tc->all = true;
		return;
	}
	tc->touched[tc->n_touched++] = job_id;
}

void jm_timers_forget(struct job_manager *jm, int64_t job_id)
{
	struct jm_timeouts *tc = jm->timeouts;
	size_t k = 0;

	/* a final job has no timeout: nothing to read it again for */
	for (size_t i = 0; i < tc->n_touched; i++)
		if (tc->touched[i] != job_id)
			tc->touched[k++] = tc->touched[i];
	tc->n_touched = k;
	if (due_table_set(&tc->dues, job_id, TIMER_NEVER) < 0)
		tc->all = true;
}

/* Reads the job again: files its next timeout, or acts on one that expired. */
static void review(struct job_manager *jm, int64_t job_id, int64_t now)
{
	struct jm_timeouts *tc = jm->timeouts;
	struct weir_error err = {0};
	struct job_row job = {0};
	struct timer_job tj = {0};
	struct timer_result tr = {.expired = TIMER_NONE, .next_due_ms = TIMER_NEVER};

	if (jm_job_load(jm, job_id, &job, &err) == 0 && !jm_winding(jm, &job) &&
	    (tj.spec = jm_spec_of(jm, &job, &err))) {
		tj.state = job.state;
		tj.queued_at_ms = job.queued_at;
		tj.allocated_at_ms = job.allocated_at;
		tj.running_at_ms = job.running_at;
		timers_check(&tj, now, &tr);
	}
	job_row_release(&job);
	if (due_table_set(&tc->dues, job_id, tr.next_due_ms) < 0)
		tc->all = true;
	if (tr.expired != TIMER_NONE) {
		struct progress_event ev = {
		    .kind = PROGRESS_TIMEOUT, .timer = tr.expired, .reason = tr.reason};
		jm_event(jm, job_id, "timeout", "%s", tr.reason);
		jm_progress(jm, job_id, &ev);
	}
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Looks again at the noted jobs, each once. */
static void review_touched(struct job_manager *jm, int64_t now)
{
	struct jm_timeouts *tc = jm->timeouts;
	int64_t *ids = tc->touched;
	size_t n = tc->n_touched;

	if (n == 0)
		return;
	tc->touched = NULL;
	tc->n_touched = tc->cap_touched = 0;
	qsort(ids, n, sizeof *ids, cmp_id);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || ids[i] != ids[i - 1])
			review(jm, ids[i], now);
	free(ids);
}

void jm_timers_check(struct job_manager *jm)
{
	struct jm_timeouts *tc = jm->timeouts;
	int64_t now = clock_now_ms(), next;
	int64_t *due;
	size_t n = 0;

	if (tc->all) {
		struct weir_error err = {0};
		struct job_row *rows = NULL;

		tc->all = false;
		due_table_clear(&tc->dues);
		jm_rows_flush(jm);
		if (store_jobs_active(jm->store, &rows, &n, &err) < 0) {
			log_error("timers: %s", err.msg);
			tc->all = true;
		}
		for (size_t i = 0; i < n; i++)
			jm_timers_touch(jm, rows[i].id);
		job_rows_free(rows, n);
	}
	review_touched(jm, now);
	due = due_table_due(&tc->dues, now, &n);
	for (size_t i = 0; i < n; i++)
		review(jm, due[i], now);
	free(due);
	/* what the expired ones changed */
	review_touched(jm, now);
	next = due_table_earliest(&tc->dues);
	if (next == TIMER_NEVER)
		uv_timer_stop(&tc->timer);
	else
		uv_timer_start(&tc->timer, on_timeout_timer,
		               (uint64_t)(next > now ? next - now : 0) + 5, 0);
}
