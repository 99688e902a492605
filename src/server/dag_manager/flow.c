/* flow.c: the server's side of a run's flow (sched/dag_branch.h decides):
 * a branch's or a short circuit's skips and a foreach over an upstream's
 * output expanded, both when the upstream's try succeeds; a try's exit
 * status that skips its task or fails it without a retry; depends_on_past
 * and wait_for_downstream as holds on the run's tasks, read from the
 * previous run when the run is read and again when a run of a DAG with
 * such tasks moves (the past pass; its dirty flag is dm->past).
 *
 * An expansion replaces the mapped task's instances (the placeholder with
 * map_index -1 that waited for the upstream, or instances a clear reset)
 * by one per item, in the same turn as the end of the last TI it reads (its
 * upstreams' every instance succeeded), and reads the
 * run again: its graph has other counts.  An empty list keeps the
 * placeholder and skips it (Airflow's mapped task over nothing).
 */
#include "server/dag_manager/dm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "sched/dag_branch.h"
#include "store/flow_store.h"

bool dm_spec_has_past(const struct dag_spec *spec)
{
	for (size_t i = 0; i < spec->n_tasks; i++)
		if (spec->tasks[i].flow.depends_on_past)
			return true;
	return false;
}

/* ---- foreach over an output ---- */

/* {"TASK": output} of each task whose output task `t`'s foreach reads (a
 * task that fans out: the list of its instances' outputs in map-index
 * order, null where one wrote none), TI `ending` (-1: none) with `out`,
 * the output its ending try wrote, in place of its row's.  New reference;
 * NULL when out of memory. */
static json_t *ref_outputs(const struct run_ctx *rc, const struct dag_task *t, long ending,
                           const json_t *out)
{
	json_t *o = json_object();

	for (size_t j = 0; o && j < t->flow.n_foreach_refs; j++) {
		size_t up = t->flow.foreach_refs[j].upstream;
		size_t first = rc->book.base[up], end = rc->book.base[up + 1];
		bool many = dag_task_is_mapped(&rc->spec->tasks[up]);
		json_t *list = many ? json_array() : NULL, *v = NULL;

		if (many && !list)
			goto oom;
		for (size_t ti = first; ti < end; ti++) {
			const struct dag_ti_row *r = &rc->rows[rc->ti_row[ti]];
			if ((long)ti == ending)
				v = out ? json_incref((json_t *)out) : json_null();
			else
				v = r->outputs && *r->outputs ? json_loads(r->outputs, 0, NULL)
				                              : json_null();
			if (!v)
				v = json_null();
			if (!many)
				break;
			if (r->map_index < 0) { /* a placeholder: no instance yet */
				json_decref(v);
				continue;
			}
			while (json_array_size(list) < (size_t)r->map_index)
				if (json_array_append_new(list, json_null()) < 0)
					goto oom_v;
			if (json_array_size(list) == (size_t)r->map_index
			        ? json_array_append_new(list, v) < 0
			        : json_array_set_new(list, (size_t)r->map_index, v) < 0)
				goto oom_list;
			v = NULL;
		}
		if (json_object_set_new(o, rc->spec->tasks[up].task_id,
		                        many ? list
		                        : v  ? v
		                             : json_null()) < 0)
			goto oom;
		continue;
	oom_v:
		json_decref(v);
	oom_list:
		json_decref(list);
		goto oom;
	}
	return o;
oom:
	json_decref(o);
	return NULL;
}

/* Whether every TI of each task that task `t`'s foreach reads succeeded
 * (TI `ending`, whose success is being decided, counts as succeeded): its
 * lists are all there. */
static bool refs_done(const struct run_ctx *rc, const struct dag_task *t, long ending)
{
	for (size_t j = 0; j < t->flow.n_foreach_refs; j++) {
		size_t up = t->flow.foreach_refs[j].upstream;
		for (size_t ti = rc->book.base[up]; ti < rc->book.base[up + 1]; ti++)
			if ((long)ti != ending && rc->book.st[ti] != DAG_TI_SUCCESS)
				return false;
	}
	return true;
}

json_t *dm_foreach_items(const struct run_ctx *rc, const struct dag_task *t, struct weir_error *err)
{
	json_t *outputs, *items;

	if (!t->flow.n_foreach_refs)
		return dag_task_foreach_items(rc->spec, t, rc->params, err);
	outputs = ref_outputs(rc, t, -1, NULL);
	if (!outputs) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	items = dag_task_output_items(t, outputs, err);
	json_decref(outputs);
	return items;
}

/* Task `m`'s instances replaced by `n` (none: the placeholder). */
static int expand(struct dag_manager *dm, struct run_ctx *rc, const struct dag_task *m, size_t n,
                  struct weir_error *err)
{
	dm_ti_flush(dm); /* no write waits for a row this deletes */
	if (flow_store_task_tis_delete(dm->store, rc->run.dag_id, rc->run.run_id, m->task_id, err) <
	    0)
		return -1;
	if (n == 0)
		return dm_insert_task_tis(dm, rc->spec, rc->run.run_id, m, rc->params, err);
	for (size_t k = 0; k < n; k++) {
		struct dag_ti_row r = {0};
		dm_fill_ti_row(&r, rc->spec, rc->run.run_id, m, (int)k);
		if (dag_store_ti_insert(dm->ds, &r, err) < 0)
			return -1;
	}
	log_info("DAG %s run %s task %s: %zu mapped instances", rc->run.dag_id, rc->run.run_id,
	         m->task_id, n);
	return 0;
}

static bool in_skip(const struct dag_skip *skip, size_t t)
{
	for (size_t i = 0; i < skip->n; i++)
		if (skip->tasks[i] == t)
			return true;
	return false;
}

/* The tasks mapped over TI `ti`'s output (its task's flow's mapped_by, so
 * a task nobody maps over costs nothing): once every task a mapped task
 * reads has succeeded (all instances of one that fans out), its list is
 * checked (a bad list fails this try) and the task expanded when due;
 * *reload when rows changed. */
static int expand_mapped(struct dag_manager *dm, struct run_ctx *rc, long ti, json_t *output,
                         struct dag_skip *skip, bool *reload, char *why, size_t why_size)
{
	const struct dag_spec *spec = rc->spec;
	const struct dag_task_flow *f = &spec->tasks[rc->ti_task[ti]].flow;

	for (size_t k = 0; k < f->n_mapped_by; k++) {
		size_t m = f->mapped_by[k];
		const struct dag_task *mt = &spec->tasks[m];
		struct weir_error err = {0};
		size_t first = rc->book.base[m], end = rc->book.base[m + 1], n;
		json_t *items, *outputs;
		bool placeholder;

		/* a branch not chosen, or below a false short circuit: its
		 * placeholder is skipped, whatever the output holds */
		if (in_skip(skip, m) || !refs_done(rc, mt, ti))
			continue;
		outputs = ref_outputs(rc, mt, ti, output);
		if (!outputs) {
			snprintf(why, why_size, "out of memory");
			return -1;
		}
		items = dag_task_output_items(mt, outputs, &err);
		json_decref(outputs);
		if (!items) {
			snprintf(why, why_size, "%s", err.msg);
			return -1;
		}
		n = json_array_size(items);
		json_decref(items);
		if (!dag_expand_due(rc->book.st + first, end - first))
			continue;
		placeholder = end - first == 1 && rc->rows[rc->ti_row[first]].map_index < 0;
		if (n == 0 && dag_skip_add(skip, m) < 0) {
			snprintf(why, why_size, "out of memory");
			return -1;
		}
		if (n == 0 && placeholder)
			continue; /* the placeholder is skipped */
		if (expand(dm, rc, mt, n, &err) < 0) {
			snprintf(why, why_size, "foreach of task %s: %s", mt->task_id, err.msg);
			return -1;
		}
		*reload = true;
	}
	return 0;
}

int dm_flow_success(struct dag_manager *dm, struct run_ctx **rcp, long *ti, const char *outputs,
                    struct dag_skip *skip, char *why, size_t why_size)
{
	struct run_ctx *rc = *rcp;
	size_t task = rc->ti_task[*ti];
	const struct dag_task *t = &rc->spec->tasks[task];
	struct dag_ti_row *r = &rc->rows[rc->ti_row[*ti]];
	int map_index = r->map_index; /* an instance of a mapped task may end too */
	json_t *out = outputs && *outputs ? json_loads(outputs, 0, NULL) : NULL;
	struct weir_error err = {0};
	bool reload = false;
	int ret = -1;

	memset(skip, 0, sizeof *skip);
	if (t->flow.branch && dag_branch_skips(&rc->g, task, out, skip, why, why_size) < 0)
		goto out;
	if (t->flow.short_circuit && dag_short_circuit_skips(&rc->g, task, out, skip) < 0) {
		snprintf(why, why_size, "out of memory");
		goto out;
	}
	if (expand_mapped(dm, rc, *ti, out, skip, &reload, why, why_size) < 0)
		goto out;
	if (reload) {
		/* the ending TI's row as it stands, then the run read again */
		dm_set_str(&r->outputs, outputs);
		if (dm_ti_save(dm, rc, r, &err) < 0) {
			snprintf(why, why_size, "%s", err.msg);
			goto out;
		}
		rc->stale = true;
		*rcp = dm_run_get(dm, r->dag_id, r->run_id, &err);
		if (!*rcp) {
			log_error("DAG %s run %s: %s", r->dag_id, r->run_id, err.msg);
			ret = 0;
			goto out;
		}
		*ti = dm_run_find_ti(*rcp, t->task_id, map_index);
	}
	ret = 0;
out:
	if (ret < 0)
		dag_skip_release(skip);
	json_decref(out);
	return ret;
}

/* ---- exit statuses ---- */

bool dm_flow_exit(struct dag_manager *dm, const char *dag_id, const char *task_id, int exit_code,
                  bool *skip, bool *no_retry, char *why, size_t why_size)
{
	const struct dag_spec *spec;
	const struct dag_task *t;

	if (exit_code <= 0)
		return false;
	spec = dm_spec_of(dm, dag_id, NULL);
	t = spec ? dag_spec_find_task(spec, task_id) : NULL;
	if (!t)
		return false;
	if (dag_flow_exit_has(t->flow.skip_exit, exit_code)) {
		*skip = true;
		snprintf(why, why_size, "skipped: exit %d is in the task's skip_on_exit_code",
		         exit_code);
		return true;
	}
	if (dag_flow_exit_has(t->flow.no_retry_exit, exit_code)) {
		*no_retry = true;
		snprintf(why, why_size,
		         "failed without a retry: exit %d is in the task's "
		         "no_retry_on_exit_code",
		         exit_code);
		return true;
	}
	return false;
}

/* ---- the past ---- */

/* The state task `task_id` shows in the previous run's rows (a foreach
 * task: its group state); false when it has none there. */
static bool prev_state(const struct dag_ti_row *rows, size_t n, const char *task_id,
                       enum dag_ti_state *out)
{
	enum dag_ti_state *st = calloc(n ? n : 1, sizeof *st);
	size_t k = 0;

	if (!st) {
		*out = DAG_TI_NONE; /* held: decided again at the next pass */
		return true;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].task_id, task_id))
			st[k++] = rows[i].state;
	if (k)
		*out = k == 1 ? st[0] : dag_trigger_group_state(st, (int)k);
	free(st);
	return k > 0;
}

int dm_flow_holds(struct dag_manager *dm, struct run_ctx *rc, bool *changed)
{
	const struct dag_spec *spec = rc->spec;
	struct weir_error err = {0};
	struct dag_ti_row *rows = NULL;
	size_t n = 0;
	char *prev = NULL;
	enum dag_ti_state *down = NULL;
	int ret = 0;

	if (changed)
		*changed = false;
	if (!rc->has_past)
		return 0;
	dm_ti_flush(dm); /* the previous run's rows as they stand */
	if (flow_store_previous_run(dm->store, rc->run.dag_id, rc->run.logical_date, &prev, &err) <
	        0 ||
	    (prev && dag_store_tis_of_run(dm->ds, rc->run.dag_id, prev, &rows, &n, &err) < 0)) {
		log_error("DAG %s run %s: depends_on_past: %s", rc->run.dag_id, rc->run.run_id,
		          err.msg);
		ret = -1;
	}
	down = calloc(spec->n_tasks ? spec->n_tasks : 1, sizeof *down);
	for (size_t t = 0; t < spec->n_tasks; t++) {
		const struct dag_task *task = &spec->tasks[t];
		struct dag_past p = {.down = down};
		bool held;

		if (!task->flow.depends_on_past)
			continue;
		if (ret < 0 || !down) {
			held = true; /* unknown: wait, and look again */
		} else {
			p.found = prev && prev_state(rows, n, task->task_id, &p.state);
			for (size_t d = 0; p.found && d < spec->n_tasks; d++)
				for (size_t u = 0; u < spec->tasks[d].n_upstream; u++)
					if (spec->tasks[d].upstream[u] == t &&
					    prev_state(rows, n, spec->tasks[d].task_id,
					               &down[p.n_down]))
						p.n_down++;
			held = !dag_past_allows(task->flow.wait_for_downstream, &p);
		}
		if (rc->nodes[t].held != held) {
			rc->nodes[t].held = held;
			if (changed)
				*changed = true;
			rc->book.settled = false; /* a waiting TI may now decide otherwise */
		}
	}
	free(down);
	free(prev);
	dag_ti_rows_free(rows, n);
	return ret;
}

void dm_flow_note(struct dag_manager *dm, const struct run_ctx *rc,
                  const struct dag_run_decision *d)
{
	if (dm->past.dirty || !rc->has_past)
		return;
	if (d->run_to != d->run_from) {
		dm->past.dirty = true;
		return;
	}
	for (size_t i = 0; i < d->n_changes; i++)
		if (dag_ti_state_is_final(d->changes[i].to) !=
		    dag_ti_state_is_final(d->changes[i].from))
			dm->past.dirty = true;
}

void dm_past_pass(struct dag_manager *dm)
{
	struct dag_run_row *runs = NULL;
	struct weir_error err = {0};
	size_t n = 0;

	if (!dm->past.dirty)
		return;
	dm->past.dirty = false;
	if (dag_store_runs_active(dm->ds, &runs, &n, &err) < 0) {
		log_error("depends_on_past: %s", err.msg);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct dag_spec *spec;
		struct run_ctx *rc;
		struct dag_event ev = {.kind = DAG_EV_EVALUATE};
		bool changed = false;

		if (runs[i].state != DAG_RUN_RUNNING)
			continue;
		spec = dm_spec_of(dm, runs[i].dag_id, NULL);
		if (!spec || !dm_spec_has_past(spec))
			continue;
		rc = dm_run_get(dm, runs[i].dag_id, runs[i].run_id, &err);
		if (!rc || dm_flow_holds(dm, rc, &changed) < 0 || !changed)
			continue;
		if (dm_run_step(dm, rc, &ev, &err) < 0)
			log_error("DAG %s run %s: %s", runs[i].dag_id, runs[i].run_id, err.msg);
	}
	dag_run_rows_free(runs, n);
}
