/* manager.c: the DAG manager itself (server/dag_manager.h): its lifetime,
 * the turns every entry point runs in, the work pass that follows a turn's
 * changes, the wake-up timer, and the small helpers its files share.
 *
 * Owns: the turn's context (dm->turn: the turns' depth, the work pass,
 * the wake-up timer: the earliest of the next due scheduled run and the
 * next retry), the pools copied from the configuration until pool_admin.c
 * takes the table's, and the handles' lifetime (the manager is freed when
 * the last one closes).  The folder, runs, TIs as jobs, pools, outputs and recovery
 * are the other files of this folder, one concern each.
 *
 * An active run is kept in memory between events (the run cache,
 * run_ctx.c), but only as a copy of its rows: each event asks sched/ on the
 * copy and writes the changes through it to the store, inside the job
 * manager's turn (one transaction).  So recovery is the live path run once
 * more: a restarted server reads the same rows and decides the same way.
 */
#include "server/dag_manager.h"
#include "server/dag_manager/dm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/str.h"
#include "model/cron.h"
#include "server/secrets.h"
#include "store/dag_store.h"
#include "store/dataset_store.h"

#define DEFAULT_POOL_SLOTS 128
/* ---- small helpers ---- */

char *dm_strdup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

void dm_set_str(char **dst, const char *v)
{
	str_set(dst, v ? v : "");
}

void dm_set_name(char *dst, const char *name)
{
	snprintf(dst, STORE_STATE_MAX, "%s", name);
}

/* ---- turns ---- */

/* An entry point's mark: the turn's end owes this manager its part (a
 * work pass, and a pool pass: whatever happened outside the manager, a
 * job's end or a new configuration, may have freed a slot).  The run cache
 * stays: every write goes through it. */
void dm_touch(struct dag_manager *dm)
{
	dm->pools.dirty = true;
	dm->turn.touched = true;
}

/* dm_touch() for start-up, before the job manager's recovery: the turn's
 * end skips the work pass and the wake-up timer. */
void dm_touch_no_pass(struct dag_manager *dm)
{
	dm_touch(dm);
	dm->turn.no_pass = true;
}

/* The turn's end (job_manager_turn_end()), before the commit, when an
 * entry point of this manager marked the turn: what follows from its
 * changes, then the TIs written behind. */
static void turn_before_commit(void *arg)
{
	struct dag_manager *dm = arg;

	if (!dm->turn.touched)
		return;
	if (!dm->turn.no_pass)
		dm_work_pass(dm);
	dm_ti_flush(dm);
}

/* After the commit (or its rollback): the copies of runs that ended, went
 * stale or were rolled back are dropped, and the wake-up timer is armed,
 * once a turn (a retry may be due). */
static void turn_after_commit(void *arg)
{
	struct dag_manager *dm = arg;
	bool no_pass = dm->turn.no_pass;

	if (!dm->turn.touched)
		return;
	dm->turn.touched = false;
	dm->turn.no_pass = false;
	dm_run_cache_check(dm); /* a failed commit rolled the turn back */
	dm_run_cache_trim(dm);
	if (!no_pass)
		dm_arm_wake(dm);
}

/* ---- times ---- */

/* A date as Airflow clients send it: what schedule_parse_time reads, also
 * with a fraction of a second. */
int dm_parse_date(const char *text, const char *field, int64_t *ms, struct weir_error *err)
{
	char buf[80];
	const char *dot;
	size_t nd;
	int frac = 0;

	/* the fraction is read here: schedule_parse_time works in whole seconds */
	dot = strchr(text, '.');
	if (!dot || strlen(text) >= sizeof buf)
		return schedule_parse_time(text, field, ms, err);
	nd = strspn(dot + 1, "0123456789");
	for (size_t i = 0; i < nd && i < 3; i++)
		frac = frac * 10 + (dot[1 + i] - '0');
	for (size_t i = nd; i < 3; i++)
		frac *= 10;
	snprintf(buf, sizeof buf, "%.*s%s", (int)(dot - text), text, dot + 1 + nd);
	if (schedule_parse_time(buf, field, ms, err) < 0)
		return -1;
	*ms += frac;
	return 0;
}

/* ---- the work pass and the wake-up timer ---- */

/* Everything that follows from the turn's changes: due runs, retries,
 * runs that may start, TIs that may become jobs, until nothing moves. */
void dm_work_pass(struct dag_manager *dm)
{
	int rounds = 0;

	if (dm->turn.in_pass) {
		dm->turn.pass_again = true;
		return;
	}
	dm->turn.in_pass = true;
	do {
		dm->turn.pass_again = false;
		dm_schedule_pass(dm);
		dm_retry_pass(dm);
		dm_timeout_pass(dm);
		dm_dataset_pass(dm);
		dm_trigger_pass(dm);
		dm_start_runs(dm);
		dm_past_pass(dm);
		dm_pool_pass(dm);
		dm_sla_pass(dm);
		dm_sensor_pass(dm);
	} while (dm->turn.pass_again && ++rounds < 10000);
	dm->turn.in_pass = false;
}

void dm_wake_note(struct dag_manager *dm, int64_t at)
{
	if (at > 0 && (dm->turn.wake_at_ms == 0 || at < dm->turn.wake_at_ms))
		dm->turn.wake_at_ms = at;
}

static void on_wake(uv_timer_t *t)
{
	dm_touch(t->data);
}

/* The wake-up timer: the next scheduled run that becomes due, or the next
 * retry, whichever comes first. */
void dm_arm_wake(struct dag_manager *dm)
{
	int64_t now = clock_now_ms(),
	        next = dm->turn.wake_at_ms > 0 ? dm->turn.wake_at_ms : CRON_NEVER;
	struct dag_ti_row *rows = NULL;
	size_t n = 0;

	dm->turn.arms++;
	if (!dm->retries.none &&
	    dag_store_tis_in_state(dm->ds, DAG_TI_UP_FOR_RETRY, &rows, &n, NULL) == 0) {
		dm->retries.none = n == 0;
		for (size_t i = 0; i < n; i++)
			if (rows[i].next_retry_at > 0 &&
			    (next == CRON_NEVER || rows[i].next_retry_at < next))
				next = rows[i].next_retry_at;
		dag_ti_rows_free(rows, n);
	}
	dm->turn.wake_at_ms = 0;
	{
		int64_t poke = dm_sensor_next_due(dm);
		if (poke != CRON_NEVER && (next == CRON_NEVER || poke < next))
			next = poke;
	}
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next) {
		const struct dag_spec *s = e->spec;
		int64_t due;
		if (!e->present || !s || s->schedule.kind == CRON_NONE)
			continue;
		due = schedule_next_due(&s->schedule, s->start_date_ms, s->end_date_ms, s->catchup,
		                        dm_last_scheduled(dm, e), now);
		if (due != CRON_NEVER && (next == CRON_NEVER || due < next))
			next = due;
	}
	if (next == CRON_NEVER) {
		uv_timer_stop(&dm->turn.wake_timer);
		return;
	}
	uv_timer_start(&dm->turn.wake_timer, on_wake, (uint64_t)(next > now ? next - now : 0) + 5,
	               0);
}

/* ---- lifetime ---- */

uint64_t dag_manager_wake_arms(const struct dag_manager *dm)
{
	return dm ? dm->turn.arms : 0;
}

int64_t dag_manager_last_pass(const struct dag_manager *dm)
{
	return dm ? dm->turn.last_pass_ms : 0;
}

void dag_manager_forget_runs(struct dag_manager *dm)
{
	dm_run_cache_drop(dm);
}

void dag_manager_counts(struct dag_manager *dm, int *dags, int *import_errors, int *active_runs)
{
	struct dag_import_error_row *ie = NULL;
	struct dag_run_row *runs = NULL;
	size_t n = 0;

	*dags = 0;
	*import_errors = 0;
	*active_runs = 0;
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next)
		*dags += e->present && e->spec;
	if (dag_store_import_error_list(dm->ds, &ie, &n, NULL) == 0) {
		*import_errors = (int)n;
		dag_import_error_rows_free(ie, n);
	}
	if (dag_store_runs_active(dm->ds, &runs, &n, NULL) == 0) {
		*active_runs = (int)n;
		dag_run_rows_free(runs, n);
	}
}

static void on_variable_changed(void *arg, const char *key)
{
	dag_manager_variable_changed(arg, key);
}

void dag_manager_set_secrets(struct dag_manager *dm, struct secrets *secrets)
{
	if (dm->secrets && dm->secrets != secrets)
		secrets_on_var_changed(dm->secrets, NULL, NULL);
	dm->secrets = secrets;
	if (secrets) /* a variable a file's parse read changes: the file is parsed again */
		secrets_on_var_changed(secrets, on_variable_changed, dm);
}

void dag_manager_set_symlinks_never(struct dag_manager *dm, bool never)
{
	dm->folder.symlinks_never = never;
}

int dag_manager_set_users(struct dag_manager *dm, const char *const *names, size_t n)
{
	strvec_release(&dm->folder.users);
	for (size_t i = 0; i < n; i++)
		if (strvec_push(&dm->folder.users, names[i]) < 0)
			return -1;
	return 0;
}

void dag_manager_set_paused_at_creation(struct dag_manager *dm, bool paused)
{
	dm->folder.paused_at_creation = paused;
}

void dag_manager_set_paths_root(struct dag_manager *dm, const char *dir)
{
	free(dm->folder.paths_root);
	dm->folder.paths_root = dir ? strdup(dir) : NULL;
}

void dag_manager_set_notifier(struct dag_manager *dm, struct notifier *n)
{
	dm->notifier = n;
	dm->sla.dirty = true;
}

struct dag_manager *dag_manager_create(uv_loop_t *loop, struct store *store, struct job_manager *jm,
                                       const char *home, const char *dags_dir,
                                       const struct server_pool *pools, size_t n_pools,
                                       struct weir_error *err)
{
	struct dag_manager *dm = calloc(1, sizeof *dm);
	bool have_default = false;

	if (!dm)
		goto oom;
	dm->loop = loop;
	dm->timeouts.dirty = true; /* recovery: deadlines that passed while it was down */
	dm->store = store;
	dm->jm = jm;
	dm->home = dm_strdup_or_empty(home);
	dm->folder.dir = dm_strdup_or_empty(dags_dir);
	dm->pools.list = calloc(n_pools + 1, sizeof *dm->pools.list);
	dm->pools.queues = calloc(n_pools + 1, sizeof *dm->pools.queues);
	if (!dm->home || !dm->folder.dir || !dm->pools.list || !dm->pools.queues)
		goto oom;
	for (size_t i = 0; i < n_pools; i++) {
		dm->pools.list[i].name = dm_strdup_or_empty(pools[i].name);
		if (!dm->pools.list[i].name)
			goto oom;
		if (pools[i].queue && !(dm->pools.queues[i] = dm_strdup_or_empty(pools[i].queue)))
			goto oom;
		dm->pools.list[i].slots = pools[i].slots;
		dm->pools.n++;
		have_default = have_default || !strcmp(pools[i].name, DAG_DEFAULT_POOL);
	}
	if (!have_default) {
		dm->pools.list[dm->pools.n].name = dm_strdup_or_empty(DAG_DEFAULT_POOL);
		if (!dm->pools.list[dm->pools.n].name)
			goto oom;
		dm->pools.list[dm->pools.n++].slots = DEFAULT_POOL_SLOTS;
	}
	dm->ds = dag_store_create(store, err);
	if (!dm->ds)
		goto fail;
	if (dm_pools_load(dm, err) < 0)
		goto fail;
	dm->datasets.store = dataset_store_create(store, err);
	if (!dm->datasets.store)
		goto fail;
	dm->triggers.dirty = true; /* runs that ended while the server was down */
	if (fs_mkdir_p(dm->folder.dir, 0755, err) < 0) {
		weir_error_prefix(err, "DAG folder");
		goto fail;
	}
	uv_timer_init(loop, &dm->turn.wake_timer);
	dm->turn.wake_timer.data = dm;
	dm->open_handles = 1;
	dm->folder.import_timeout_ms = 30000;
	dm_folder_watch(dm);
	job_manager_set_end_callback(jm, dm_on_job_end, dm);
	job_manager_set_turn_hooks(
	    jm, &(struct job_manager_turn_hooks){.before_commit = turn_before_commit,
	                                         .after_commit = turn_after_commit,
	                                         .ctx = dm});
	return dm;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
fail:
	if (dm) {
		dag_store_destroy(dm->ds);
		dataset_store_destroy(dm->datasets.store);
		for (size_t i = 0; i < dm->pools.n + 1 && dm->pools.list; i++)
			free((char *)dm->pools.list[i].name);
		for (size_t i = 0; i < dm->pools.n + 1 && dm->pools.queues; i++)
			free(dm->pools.queues[i]);
		free(dm->pools.list);
		free(dm->pools.queues);
		free(dm->home);
		free(dm->folder.dir);
		free(dm);
	}
	return NULL;
}

static void dm_closed(uv_handle_t *h)
{
	struct dag_manager *dm = h->data;
	if (--dm->open_handles == 0)
		free(dm);
}

void dag_manager_destroy(struct dag_manager *dm)
{
	if (!dm)
		return;
	job_manager_set_end_callback(dm->jm, NULL, NULL);
	job_manager_set_turn_hooks(dm->jm, NULL);
	if (dm->secrets) /* they outlive the manager */
		secrets_on_var_changed(dm->secrets, NULL, NULL);
	dm_sensors_free(dm);
	dm_run_cache_drop(dm);
	free(dm->cache.runs);
	dm->cache.runs = NULL;
	dm->cache.cap = 0;
	dm_entries_free(dm);
	dag_store_destroy(dm->ds);
	dataset_store_destroy(dm->datasets.store);
	dm->ds = NULL;
	for (size_t i = 0; i < dm->pools.n; i++) {
		free((char *)dm->pools.list[i].name);
		free(dm->pools.queues[i]);
	}
	free(dm->pools.list);
	free(dm->pools.queues);
	free(dm->home);
	free(dm->folder.dir);
	strvec_release(&dm->folder.users);
	free(dm->folder.paths_root);
	uv_timer_stop(&dm->folder.scan_timer);
	uv_timer_stop(&dm->turn.wake_timer);
	uv_close((uv_handle_t *)&dm->folder.scan_timer, dm_closed);
	uv_close((uv_handle_t *)&dm->turn.wake_timer, dm_closed);
	if (dm->open_handles == 3) {
		uv_fs_event_stop(&dm->folder.fsev);
		uv_close((uv_handle_t *)&dm->folder.fsev, dm_closed);
	}
}
