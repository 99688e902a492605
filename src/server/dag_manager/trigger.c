/* trigger.c: trigger_dag tasks (dm_internal.h): a try starts a run of
 * another DAG through the path the API's trigger takes (dm_create_run():
 * the conf checked against that DAG's params, a foreach over a param
 * checked), with no job and no process.  Without wait_for_completion the
 * try succeeds at once; with it the TI stays running and a row of the
 * store's dag_run_triggers says which run it waits for.  A run that ends
 * marks the waits dirty (dm->triggers, raised by run_ctx.c), and the
 * trigger pass ends the tries whose run ended: success when its state is
 * allowed (sched/dataset_due.h decides).
 *
 * A try's output is {"dag_id", "run_id"} of the run it started (downstream
 * templates read outputs.TASK.run_id); its log says what it did.
 */
#include "server/dag_manager/dm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "model/dataset.h"
#include "model/template.h"
#include "sched/dataset_due.h"
#include "store/dataset_store.h"

/* A copy of `v` with every string rendered (TEMPLATE_RAW); NULL with err
 * naming the field ("conf.size: ..."). */
static json_t *render_json(const json_t *v, const struct template_ctx *ctx, const char *path,
                           struct weir_error *err)
{
	const char *k;
	json_t *x, *out;
	size_t i;
	char sub[256];

	if (json_is_string(v)) {
		char *s = template_render(json_string_value(v), ctx, TEMPLATE_RAW, err);
		if (!s) {
			weir_error_prefix(err, "%s", path);
			return NULL;
		}
		out = json_string(s);
		free(s);
		return out;
	}
	if (json_is_object(v)) {
		out = json_object();
		json_object_foreach((json_t *)v, k, x)
		{
			snprintf(sub, sizeof sub, "%s.%s", path, k);
			json_t *r = render_json(x, ctx, sub, err);
			if (!r || json_object_set_new(out, k, r) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	}
	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, x)
		{
			snprintf(sub, sizeof sub, "%s[%zu]", path, i);
			json_t *r = render_json(x, ctx, sub, err);
			if (!r || json_array_append_new(out, r) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	}
	return json_deep_copy(v);
}

/* Starts the run: 0 with its id in *run_id, or -1 with err (the words the
 * API's trigger would answer). */
static int trigger_run(struct dag_manager *dm, const struct run_ctx *rc, size_t ti, int try_number,
                       char **run_id, struct weir_error *err)
{
	const struct dag_trigger *tg = rc->spec->tasks[rc->ti_task[ti]].trigger;
	struct dag_entry *e = dm_entry_by_id(dm, tg->dag_id);
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct template_run tr;
	json_t *outputs = NULL, *items = NULL, *conf = NULL;
	char *item = NULL, ts[48];
	int64_t now = clock_now_ms();
	int rc_ = -1;

	*run_id = NULL;
	if (!e || !e->present || !e->spec) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "trigger_dag: DAG %s: no such DAG",
		               tg->dag_id);
		goto out;
	}
	if (dm_try_template_run(rc, ti, try_number, &tr, &outputs, &items, &item, err) < 0 ||
	    template_ctx_fill(&ctx, &tr, err) < 0)
		goto out;
	conf = render_json(tg->conf, &ctx, "trigger_dag.conf", err);
	if (!conf)
		goto out;
	if (tg->run_id) {
		*run_id = template_render(tg->run_id, &ctx, TEMPLATE_RAW, err);
		if (!*run_id) {
			weir_error_prefix(err, "trigger_dag.run_id");
			goto out;
		}
	} else if (asprintf(run_id, "manual__%s", clock_format_airflow(now, ts, sizeof ts)) < 0) {
		*run_id = NULL;
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	if (dm_check_run_id(*run_id, err) < 0)
		goto out;
	if (dm_create_run(dm, e, *run_id, "manual", now, conf, NULL, err) < 0) {
		if (err->kind == WEIR_E_CONFLICT)
			weir_error_set(
			    err, WEIR_E_CONFLICT,
			    "DAG %s already has a run with dag_run_id %s or this logical date",
			    tg->dag_id, *run_id);
		weir_error_prefix(err, "trigger_dag: DAG %s", tg->dag_id);
		goto out;
	}
	rc_ = 0;
out:
	template_ctx_release(&ctx);
	json_decref(outputs);
	json_decref(items);
	json_decref(conf);
	free(item);
	return rc_;
}

/* The try's log and its output ({"dag_id", "run_id"} when a run started). */
static void write_try_files(struct dag_manager *dm, const struct run_ctx *rc,
                            const struct dag_ti_row *r, int try_number, const char *line,
                            const char *dag_id, const char *run_id)
{
	char *dir = dm_try_dir(dm, rc->run.id);
	char *lp = dm_start_log_path(dm, rc->run.id, r->task_id, r->map_index, try_number);
	char *op = dm_output_path(dm, rc->run.id, r->task_id, r->map_index, try_number);
	char buf[1200];
	int n;

	if (dir && lp && op && fs_mkdir_p(dir, 0755, NULL) == 0) {
		n = snprintf(buf, sizeof buf, "weir: try %d of task %s: %s\n", try_number,
		             r->task_id, line);
		fs_write_file_atomic(lp, buf, (size_t)(n < 0 ? 0 : n), 0644, NULL);
		if (run_id) {
			json_t *o = json_pack("{s:s, s:s}", "dag_id", dag_id, "run_id", run_id);
			char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
			if (text)
				fs_write_file_atomic(op, text, strlen(text), 0644, NULL);
			free(text);
			json_decref(o);
		}
	}
	free(dir);
	free(lp);
	free(op);
}

void dm_trigger_start(struct dag_manager *dm, struct run_ctx *rc, size_t ti)
{
	struct weir_error err = {0};
	struct dag_ti_row *r;
	const struct dag_trigger *tg;
	char *run_id = NULL, what[600];
	int try_number;

	if (rc->stale || rc->book.tis[ti].state != DAG_TI_SCHEDULED)
		return;
	r = &rc->rows[rc->ti_row[ti]];
	tg = rc->spec->tasks[rc->ti_task[ti]].trigger;
	try_number = r->try_number + 1;
	if (dm_ti_set_state(r, DAG_TI_RUNNING) < 0)
		return; /* refused (logged): the row as it was */
	r->try_number = try_number;
	r->job_id = 0;
	r->queued_at = r->start_date = clock_now_ms();
	r->end_date = 0;
	r->next_retry_at = 0;
	dm_set_str(&r->outputs, "");
	dm_set_str(&r->reason, "");
	snprintf(what, sizeof what, "trigger_dag %s", tg->dag_id);
	dm_set_str(&r->rendered_command, what);
	if (dm_ti_save(dm, rc, r, &err) < 0) {
		log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
		rc->stale = true;
		return;
	}
	dm_book_started(rc, ti, DAG_TI_RUNNING, try_number);
	dm_try_update(dm, r, DAG_TI_RUNNING, "", false);
	dm->turn.pass_again = true;
	if (trigger_run(dm, rc, ti, try_number, &run_id, &err) < 0) {
		/* a DAG not there yet may be by the next try; a refused conf stays refused */
		write_try_files(dm, rc, r, try_number, err.msg, NULL, NULL);
		log_warn("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
		dm_ti_ended(dm, r->dag_id, r->run_id, r->task_id, r->map_index, try_number, false,
		            err.kind != WEIR_E_NOT_FOUND, false, err.msg, 0);
		free(run_id);
		return;
	}
	snprintf(what, sizeof what, "trigger_dag %s run %s", tg->dag_id, run_id);
	dm_set_str(&r->rendered_command, what);
	snprintf(what, sizeof what, "started run %s of DAG %s%s", run_id, tg->dag_id,
	         tg->wait ? "; waiting for its end" : "");
	write_try_files(dm, rc, r, try_number, what, tg->dag_id, run_id);
	log_info("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, what);
	if (!tg->wait) {
		dm_ti_ended(dm, r->dag_id, r->run_id, r->task_id, r->map_index, try_number, true,
		            false, false, NULL, 0);
	} else {
		struct dag_trigger_wait_row w = {
		    .dag_id = r->dag_id,
		    .run_id = r->run_id,
		    .task_id = r->task_id,
		    .map_index = r->map_index,
		    .try_number = try_number,
		    .target_dag_id = tg->dag_id,
		    .target_run_id = run_id,
		};
		if (dm_ti_save(dm, rc, r, &err) < 0 ||
		    dataset_store_wait_add(dm->datasets.store, &w, clock_now_ms(), &err) < 0) {
			log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id,
			          err.msg);
			dm_ti_ended(dm, r->dag_id, r->run_id, r->task_id, r->map_index, try_number,
			            false, false, false, err.msg, 0);
		}
	}
	free(run_id);
}

void dm_trigger_pass(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct dag_trigger_wait_row *w = NULL;
	size_t n = 0;

	if (!dm->triggers.dirty)
		return;
	dm->triggers.dirty = false;
	if (dataset_store_waits_ended(dm->datasets.store, &w, &n, &err) < 0) {
		log_error("trigger_dag waits: %s", err.msg);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dag_spec *s = dm_spec_of(dm, w[i].dag_id, NULL);
		const struct dag_task *t = s ? dag_spec_find_task(s, w[i].task_id) : NULL;
		unsigned allowed = 1u << DAG_RUN_SUCCESS, failed = 1u << DAG_RUN_FAILED;
		char why[700];
		bool ok;

		if (t && t->trigger) {
			allowed = t->trigger->allowed;
			failed = t->trigger->failed;
		}
		ok = dataset_trigger_outcome(allowed, failed, w[i].target_state);
		snprintf(why, sizeof why, "run %s of DAG %s ended %s%s", w[i].target_run_id,
		         w[i].target_dag_id, dag_run_state_name(w[i].target_state),
		         ok                                     ? ""
		         : (failed & (1u << w[i].target_state)) ? " (one of failed_states)"
		                                                : " (not one of allowed_states)");
		if (dataset_store_wait_delete(dm->datasets.store, &w[i], &err) < 0) {
			log_error("trigger_dag wait: %s", err.msg);
			continue;
		}
		log_info("DAG %s run %s task %s: %s", w[i].dag_id, w[i].run_id, w[i].task_id, why);
		dm_ti_ended(dm, w[i].dag_id, w[i].run_id, w[i].task_id, w[i].map_index,
		            w[i].try_number, ok, false, false, ok ? NULL : why, 0);
	}
	dag_trigger_wait_rows_free(w, n);
}
