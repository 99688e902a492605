/* ti_jobs.c: task instances as jobs: a scheduled TI's try
 * handed to the job manager, and a job's end back to its run.
 *
 * Owns the server's half of a try's job: what needs I/O (the try's folder,
 * a job task's spec file or tony.xml, the foreach item from the run's
 * params) is done here; what the job is made of is model/dag_job.h's.  A
 * job's end carries its state and reason; whether the try may be retried
 * is decided here from them (a timeout or a user's kill is not retried),
 * the rest by the run (sched/dag_run.h).  Whether a TI's job already
 * runs (dm_job_runs()) is here too, for the ops and the pools' table.
 */
#include "server/dag_manager/dm_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/json_util.h"
#include "lib/log.h"
#include "lib/mask.h"
#include "lib/proc.h"
#include "model/dag_job.h"
#include "model/job_spec_edit.h"
#include "model/template.h"
#include "model/tony.h"
#include "sched/dag_branch.h"
#include "sched/dag_states.h"
#include "server/observe_series.h"
#include "server/secrets.h"
#include "server/task_user.h"
#include "store/dag_store.h"

/* ---- turning a TI into a job ---- */

/* The job of a tony task: its tony.xml with the task's submit-flag fields
 * (and conf overrides) over it. */
static struct job_spec *tony_job(const json_t *tony, const char *cf, struct weir_error *err)
{
	struct tony_submit ts = {0};
	struct tony_conf *conf;
	struct job_spec *spec;
	json_t *v;
	size_t i;

	conf = tony_conf_parse_file(cf, err);
	if (!conf)
		return NULL;
#define TONY_STR(f)                                                                                \
	if ((v = json_object_get(tony, #f)) && json_is_string(v))                                  \
		ts.f = dm_strdup_or_empty(json_string_value(v));
	TONY_STR(conf_file)
	TONY_STR(src_dir)
	TONY_STR(executes)
	TONY_STR(task_params)
	TONY_STR(python_venv)
	TONY_STR(python_binary_path)
	TONY_STR(framework)
#undef TONY_STR
	json_array_foreach(json_object_get(tony, "shell_env"), i, v)
	    strvec_push(&ts.shell_env, json_string_value(v));
	json_array_foreach(json_object_get(tony, "container_env"), i, v)
	    strvec_push(&ts.container_env, json_string_value(v));
	json_array_foreach(json_object_get(tony, "conf"), i, v)
	{
		const char *kv = json_string_value(v), *eq = kv ? strchr(kv, '=') : NULL;
		char *name;
		strvec_push(&ts.conf, kv);
		if (!eq)
			continue;
		name = strndup(kv, (size_t)(eq - kv));
		if (name)
			tony_conf_set(conf, name, eq + 1, "conf", 0, NULL);
		free(name);
	}
	spec = tony_to_spec(conf, &ts, NULL, err);
	tony_conf_destroy(conf);
	tony_submit_release(&ts);
	return spec;
}

/* A job task's job as its file says, before templating: read now, so that
 * an edit of the file reaches the next try; the file by its real path, which
 * must be inside the DAG folder (checked again now: a link may have been
 * turned).  NULL with err. */
static struct job_spec *read_task_job(struct dag_manager *dm, const struct dag_task *t,
                                      struct weir_error *err)
{
	const char *named = t->kind == DAG_TASK_JOB_FILE
	                        ? t->job_path
	                        : json_string_value(json_object_get(t->tony, "conf_file"));
	char *real = named ? dm_dag_named_file(dm, named, "job", err) : NULL;
	struct job_spec *spec = NULL;

	if (!real)
		return NULL;
	switch (t->kind) {
	case DAG_TASK_JOB_FILE:
		spec = job_spec_parse_file(real, err);
		break;
	case DAG_TASK_JOB_TONY:
		spec = tony_job(t->tony, real, err);
		break;
	default:
		weir_error_set(err, WEIR_E_INTERNAL, "not a job task");
		break;
	}
	free(real);
	return spec;
}

/* The queue of pool `name` (the configuration's), or NULL. */
static const char *pool_queue(const struct dag_manager *dm, const char *name)
{
	const char *q = NULL;

	for (size_t i = 0; name && i < dm->pools.n; i++)
		if (dm->pools.queues[i] && !strcmp(dm->pools.list[i].name, name))
			q = dm->pools.queues[i];
	return q;
}

/* ---- var.* and conn.* in templates (server/secrets.h) ---- */

static int source_var(void *arg, const char *key, char **value, struct weir_error *err)
{
	struct variable v;

	if (secrets_var_resolve(arg, key, &v, NULL, err) < 0)
		return -1;
	*value = v.value;
	v.value = NULL;
	variable_release(&v);
	return 0;
}

static int source_conn(void *arg, const char *id, struct connection *out, struct weir_error *err)
{
	return secrets_conn_resolve(arg, id, out, NULL, err);
}

/* A try's templates' variables, the secret ones noted: their values join
 * the job's `mask` (model/job_spec.h). */
struct noted_vars {
	struct secrets *secrets;
	struct strvec *mask;
};

static int source_var_noted(void *arg, const char *key, char **value, struct weir_error *err)
{
	struct noted_vars *nv = arg;

	if (source_var(nv->secrets, key, value, err) < 0)
		return -1;
	if (variable_is_secret(key) && variable_mask_add(nv->mask, *value) < 0) {
		free(*value);
		*value = NULL;
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	return 0;
}

static int source_conn_noted(void *arg, const char *id, struct connection *out,
                             struct weir_error *err)
{
	return source_conn(((struct noted_vars *)arg)->secrets, id, out, err);
}

/* The task's `variables` the server has, as "KEY=value" into *out (the
 * secret ones noted for the mask); a key it does not have is left out. */
static int task_variables(struct noted_vars *noted, const struct dag_task *t, struct strvec *out,
                          struct weir_error *err)
{
	for (size_t i = 0; noted->secrets && i < t->variables.n; i++) {
		struct weir_error e = {0};
		char *value = NULL;
		int rc;
		if (source_var_noted(noted, t->variables.v[i], &value, &e) < 0) {
			if (e.kind == WEIR_E_NOT_FOUND)
				continue;
			*err = e;
			return -1;
		}
		rc = strvec_push_kv(out, "", t->variables.v[i], value);
		free(value);
		if (rc < 0)
			return weir_error_oom(err);
	}
	return 0;
}

/* Every connection the job lists resolves now, so that a try whose
 * connection is missing fails here, saying which (the launcher resolves
 * them again when it registers). */
static int check_connections(struct dag_manager *dm, const struct job_spec *spec,
                             struct weir_error *err)
{
	for (size_t i = 0; i < spec->connections.n; i++) {
		struct connection c;
		if (!dm->secrets)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "connections: this server resolves none");
		if (secrets_conn_resolve(dm->secrets, spec->connections.v[i], &c, NULL, err) < 0) {
			weir_error_prefix(err, "connections");
			return -1;
		}
		connection_release(&c);
	}
	return 0;
}

/* The command as the TI shows it, with the secrets of the job's connections
 * (a password written into the DAG file itself) and its `mask` (the secret
 * variables its templates used) masked; *command replaced. */
static void mask_command(struct dag_manager *dm, const struct job_spec *spec, char **command)
{
	json_t *env = json_object(), *list = json_array();
	const char **v = NULL;
	struct mask *m = NULL;
	size_t n;

	if ((!spec->connections.n && !spec->mask.n) || !*command || !env || !list ||
	    (spec->connections.n &&
	     secrets_task_env(dm->secrets, &spec->connections, env, list, NULL) < 0))
		goto out;
	for (size_t i = 0; i < spec->mask.n; i++)
		json_array_append_new(list, json_string(spec->mask.v[i]));
	n = json_array_size(list);
	v = calloc(n + 1, sizeof *v);
	for (size_t i = 0; v && i < n; i++)
		v[i] = json_string_value(json_array_get(list, i));
	if (v && (m = mask_create(v, n))) {
		char *masked = mask_string(m, *command);
		if (masked) {
			free(*command);
			*command = masked;
		}
	}
out:
	mask_destroy(m);
	free(v);
	json_decref(env);
	json_decref(list);
}

/* This program's path: what a sql or transfer task runs (model/dag_job.h). */
static const char *weir_program(void)
{
	static char self[4096];

	if (!self[0] && proc_self_path(self, sizeof self) < 0)
		self[0] = '\0';
	return self[0] ? self : NULL;
}

int dm_try_template_run(const struct run_ctx *rc, size_t ti, int try_number,
                        struct template_run *tr, json_t **outputs, json_t **items, char **item,
                        struct weir_error *err)
{
	const struct dag_ti_row *r = &rc->rows[rc->ti_row[ti]];
	const struct dag_task *t = &rc->spec->tasks[rc->ti_task[ti]];

	*outputs = NULL;
	*items = NULL;
	*item = NULL;
	memset(tr, 0, sizeof *tr);
	if (r->map_index >= 0) {
		*items = dm_foreach_items(rc, t, err);
		if (!*items)
			return -1;
		if ((size_t)r->map_index >= json_array_size(*items)) {
			weir_error_set(err, WEIR_E_INVALID,
			               "foreach: no item %d (the list has %zu)", r->map_index,
			               json_array_size(*items));
			json_decref(*items);
			*items = NULL;
			return -1;
		}
		*item = template_value_text(json_array_get(*items, (size_t)r->map_index));
		/* an object item: item.KEY (and its own resources, for a job) */
		tr->item_value = json_array_get(*items, (size_t)r->map_index);
	}
	*outputs = dm_run_outputs(rc);
	tr->dag_id = rc->spec->dag_id;
	tr->run_id = rc->run.run_id;
	tr->task_id = t->task_id;
	tr->logical_ms = rc->run.logical_date;
	tr->interval_start_ms = rc->run.data_interval_start;
	tr->interval_end_ms = rc->run.data_interval_end;
	tr->try_number = try_number;
	tr->params = rc->params;
	tr->outputs = *outputs;
	tr->item = *item;
	return 0;
}

int dm_try_template_ctx(struct dag_manager *dm, const struct run_ctx *rc, size_t ti, int try_number,
                        struct template_source *src, struct template_ctx *ctx,
                        struct weir_error *err)
{
	struct template_run tr;
	json_t *outputs = NULL, *items = NULL;
	char *item = NULL;
	int rc_ = -1;

	*src = (struct template_source){.var = source_var, .conn = source_conn, .arg = dm->secrets};
	ctx->src = dm->secrets ? src : NULL;
	if (dm_try_template_run(rc, ti, try_number, &tr, &outputs, &items, &item, err) == 0 &&
	    template_ctx_fill(ctx, &tr, err) == 0)
		rc_ = 0;
	json_decref(outputs);
	json_decref(items);
	free(item);
	return rc_;
}

/* A task that reads the run's outputs (a Python DAG file's) gets the DAG's
 * latest successful run before this one (Airflow's prev_*_success):
 * WEIR_PREV_SUCCESS_LOGICAL_DATE, _DATA_INTERVAL_START, _DATA_INTERVAL_END,
 * _START_DATE, _END_DATE; none when there is no such run.  0, or -1 with
 * err. */
static int prev_success_env(struct dag_manager *dm, const struct run_ctx *rc, struct job_spec *spec,
                            struct weir_error *err)
{
	struct dag_run_row prev;
	bool found = false;
	int rc_ = 0;

	if (dag_store_run_prev_success(dm->ds, rc->run.dag_id, rc->run.logical_date, &prev, &found,
	                               err) < 0)
		return -1;
	if (!found)
		return 0;
	const char *names[] = {"WEIR_PREV_SUCCESS_LOGICAL_DATE",
	                       "WEIR_PREV_SUCCESS_DATA_INTERVAL_START",
	                       "WEIR_PREV_SUCCESS_DATA_INTERVAL_END",
	                       "WEIR_PREV_SUCCESS_START_DATE", "WEIR_PREV_SUCCESS_END_DATE"};
	int64_t ms[] = {prev.logical_date, prev.data_interval_start, prev.data_interval_end,
	                prev.start_date, prev.end_date};
	for (size_t i = 0; i < sizeof names / sizeof names[0] && rc_ == 0; i++) {
		json_t *ts = ms[i] ? json_util_time_airflow(ms[i]) : NULL;
		if (ts && json_is_string(ts))
			rc_ = env_list_set(&spec->env, &spec->n_env, names[i],
			                   json_string_value(ts), err);
		json_decref(ts);
	}
	dag_run_row_release(&prev);
	return rc_;
}

/* The job of try `try_number` of TI `ti`: its folder made, its job read
 * and built (model/dag_job.h).  *command gets what runs.  NULL with err:
 * the try fails with that reason. */
static struct job_spec *build_job(struct dag_manager *dm, struct run_ctx *rc, size_t ti,
                                  int try_number, char **command, struct weir_error *err)
{
	const struct dag_ti_row *r = &rc->rows[rc->ti_row[ti]];
	const struct dag_task *t = &rc->spec->tasks[rc->ti_task[ti]];
	struct template_run tr = {0};
	struct dag_job_try jt = {0};
	json_t *outputs = NULL, *items = NULL;
	char *item = NULL, *out_path = NULL, *dir = NULL;
	struct job_spec *read = NULL, *spec = NULL;
	struct strvec secret_values = STRVEC_INIT;
	struct noted_vars noted = {.secrets = dm->secrets, .mask = &secret_values};
	struct template_source src = {
	    .var = source_var_noted, .conn = source_conn_noted, .arg = &noted};
	struct dag_resources item_res = {.gpus = -1};
	bool item_res_given = false;
	char *run_outputs = NULL, *inlet_events = NULL;
	struct strvec vars = STRVEC_INIT;

	*command = NULL;
	if (dm_try_template_run(rc, ti, try_number, &tr, &outputs, &items, &item, err) < 0 ||
	    (tr.item_value &&
	     dag_item_resources(tr.item_value, &item_res, &item_res_given, err) < 0))
		goto out;
	dir = dm_try_dir(dm, rc->run.id);
	out_path = dm_output_path(dm, rc->run.id, t->task_id, r->map_index, try_number);
	/* the folder once per copy of the run, not at each start */
	if (!dir || !out_path || (!rc->dir_made && fs_mkdir_p(dir, 0755, err) < 0)) {
		if (!err->msg[0])
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	rc->dir_made = true;
	unlink(out_path);
	/* a task of another user cannot make files in the run's folder: its
	 * $WEIR_OUTPUT is made for it, empty (no outputs) until it writes */
	if (task_user_make_file(out_path) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s: cannot make it for the task's user: %s",
		               out_path, strerror(errno));
		goto out;
	}
	if (t->kind == DAG_TASK_JOB_FILE || t->kind == DAG_TASK_JOB_TONY) {
		read = read_task_job(dm, t, err);
		if (!read)
			goto out;
	}
	if (t->flow.run_outputs && dm_write_run_outputs(dm, rc, t->task_id, r->map_index,
	                                                try_number, &run_outputs, err) < 0)
		goto out;
	if ((t->inlets.n || t->inlet_aliases.n) &&
	    dm_write_inlet_events(dm, rc, ti, try_number, &inlet_events, err) < 0)
		goto out;
	if (task_variables(&noted, t, &vars, err) < 0)
		goto out;
	jt.run_outputs_path = run_outputs;
	jt.inlet_events_path = inlet_events;
	jt.variables = &vars;
	jt.task = t;
	jt.run = &tr;
	jt.map_index = r->map_index;
	jt.priority = r->priority;
	jt.output_path = out_path;
	jt.pool_queue = pool_queue(dm, r->pool);
	jt.job = read ? read : t->job;
	jt.secrets = dm->secrets ? &src : NULL;
	jt.weir_program = weir_program();
	jt.resources = item_res_given ? &item_res : NULL;
	spec = dag_job_build(&jt, command, err);
	for (size_t i = 0; spec && i < secret_values.n; i++)
		if (variable_mask_add(&spec->mask, secret_values.v[i]) < 0) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			job_spec_destroy(spec);
			spec = NULL;
			free(*command);
			*command = NULL;
		}
	if (spec && t->flow.run_outputs && prev_success_env(dm, rc, spec, err) < 0) {
		job_spec_destroy(spec);
		spec = NULL;
		free(*command);
		*command = NULL;
	}
	if (spec && check_connections(dm, spec, err) < 0) {
		job_spec_destroy(spec);
		spec = NULL;
		free(*command);
		*command = NULL;
	}
	if (spec)
		mask_command(dm, spec, command);
out:
	strvec_release(&secret_values);
	strvec_release(&vars);
	free(run_outputs);
	free(inlet_events);
	json_decref(outputs);
	json_decref(items);
	job_spec_destroy(read);
	free(item);
	free(out_path);
	free(dir);
	return spec;
}

/* ---- task ends ---- */

void dm_ti_ended(struct dag_manager *dm, const char *dag_id, const char *run_id,
                 const char *task_id, int map_index, int try_number, bool success, bool no_retry,
                 bool skipped, const char *reason, int64_t job_started_at)
{
	struct weir_error err = {0};
	struct run_ctx *rc;
	struct dag_event ev = {.kind = DAG_EV_TI_ENDED};
	struct dag_ti_row *r;
	long ti;
	char why[WEIR_ERROR_MSG_MAX];
	char *outputs = NULL;
	struct dag_skip skip = {0};

	rc = dm_run_get(dm, dag_id, run_id, &err);
	if (!rc) {
		log_error("DAG %s run %s task %s: %s", dag_id, run_id, task_id, err.msg);
		return;
	}
	ti = dm_run_find_ti(rc, task_id, map_index);
	if (ti < 0)
		goto out;
	r = &rc->rows[rc->ti_row[ti]];
	if ((!dag_ti_state_is_active(rc->book.tis[ti].state) &&
	     rc->book.tis[ti].state != DAG_TI_UP_FOR_RESCHEDULE) ||
	    r->try_number != try_number)
		goto out; /* stale: cleared or marked meanwhile */
	why[0] = '\0';
	if (success) {
		char *p = dm_output_path(dm, rc->run.id, task_id, map_index, try_number);
		if (p && dm_read_outputs(p, &outputs, why, sizeof why) < 0) {
			success = false;
			no_retry = false;
		}
		/* Variable.set of a Python task: written, then out of its outputs */
		if (success && p &&
		    dm_take_variable_writes(dm, &rc->spec->tasks[rc->ti_task[ti]], p, &outputs, why,
		                            sizeof why) < 0) {
			success = false;
			no_retry = false;
		}
		free(p);
		/* a branch's choice, a short circuit, an expansion (flow.c) */
		if (success && dm_flow_success(dm, &rc, &ti, outputs, &skip, why, sizeof why) < 0) {
			success = false;
			no_retry = false;
		}
		if (!rc || ti < 0)
			goto out;
		r = &rc->rows[rc->ti_row[ti]];
		if (success && outputs && *outputs) {
			dm_set_str(&r->outputs, outputs);
			rc->has_outputs = true;
		}
	}
	dm_set_str(&r->reason, success ? "" : why[0] ? why : reason ? reason : "failed");
	if (job_started_at > 0 && !r->start_date)
		r->start_date = job_started_at;
	r->end_date = clock_now_ms();
	observe_series_time_ms(OBSERVE_TI_QUEUE_WAIT, r->queued_at, r->start_date);
	observe_series_time_ms(OBSERVE_TI_RUN, r->start_date, r->end_date);
	ev.ti = (size_t)ti;
	ev.try_number = try_number;
	ev.success = success;
	ev.no_retry = no_retry;
	ev.skip = skip.tasks;
	ev.n_skip = skip.n;
	ev.skipped = skipped && !success;
	/* the decision writes the row (with the fields above) and the try's end
	 * when it moves; a TI it left active still has its try recorded */
	if (dm_run_step(dm, rc, &ev, &err) < 0)
		log_error("DAG %s run %s task %s: %s", dag_id, run_id, task_id, err.msg);
	else if (dag_ti_state_is_active(rc->book.tis[ti].state))
		dm_try_update(dm, r,
		              success      ? DAG_TI_SUCCESS
		              : ev.skipped ? DAG_TI_SKIPPED
		                           : DAG_TI_FAILED,
		              r->reason, true);
out:
	dag_skip_release(&skip);
	free(outputs);
}

/* The TI whose current try runs as job_id, its key and try into *r (the
 * strings its own): from the run's copy when one holds it, else the store;
 * -1 when none does. */
static int ti_of_job(struct dag_manager *dm, int64_t job_id, struct dag_ti_row *r)
{
	int64_t ignored;
	size_t k;
	const struct run_ctx *rc = dm_run_by_job(dm, job_id, &k);

	if (!rc)
		return dag_store_ti_key_by_job(dm->ds, job_id, r, &ignored, NULL);
	memset(r, 0, sizeof *r);
	r->dag_id = strdup(rc->rows[k].dag_id);
	r->run_id = strdup(rc->rows[k].run_id);
	r->task_id = strdup(rc->rows[k].task_id);
	r->map_index = rc->rows[k].map_index;
	r->try_number = rc->rows[k].try_number;
	if (!r->dag_id || !r->run_id || !r->task_id) {
		dag_ti_row_release(r);
		return dag_store_ti_key_by_job(dm->ds, job_id, r, &ignored, NULL);
	}
	return 0;
}

void dm_on_job_end(void *arg, int64_t job_id, enum job_state state, enum end_cause cause,
                   int exit_code, const char *reason, int64_t started_at)
{
	struct dag_manager *dm = arg;
	struct dag_ti_row r = {0};
	bool success = state == JOB_SUCCEEDED;
	/* the server's timer or the launcher's: a timeout is not retried */
	bool timed_out = cause == END_CAUSE_EXEC_TIMEOUT;
	bool user_kill = state == JOB_KILLED;
	char why[600];

	if (ti_of_job(dm, job_id, &r) < 0)
		return; /* not a DAG task's job */
	dm_touch(dm);
	/* a command sensor's poke that said "not yet": the TI waits again */
	if (dm_sensor_job_end(dm, r.dag_id, r.run_id, r.task_id, r.map_index, r.try_number,
	                      success ? 0 : exit_code)) {
		dag_ti_row_release(&r);
		return;
	}
	if (success)
		why[0] = '\0';
	else if (timed_out)
		snprintf(why, sizeof why, "job %lld: %s (no retry)", (long long)job_id, reason);
	else if (exit_code >= 0)
		snprintf(why, sizeof why, "job %lld %s (exit %d)%s%s", (long long)job_id,
		         job_state_name(state), exit_code, reason && *reason ? ": " : "",
		         reason ? reason : "");
	else
		snprintf(why, sizeof why, "job %lld %s%s%s", (long long)job_id,
		         job_state_name(state), reason && *reason ? ": " : "",
		         reason ? reason : "");
	{
		/* a sensor's process says a timeout by its exit status (data/sensor_poke.h) */
		bool skip = false, was = dm->turn.in_job_end;
		if (!success &&
		    dm_sensor_exit(dm, r.dag_id, r.task_id, exit_code, &skip, why, sizeof why))
			timed_out = true;
		else if (!success && !timed_out && !user_kill &&
		         dm_flow_exit(dm, r.dag_id, r.task_id, exit_code, &skip, &timed_out, why,
		                      sizeof why))
			timed_out = timed_out || skip;
		/* nothing reads the TIs' rows before this turn's pool pass: the
		 * downstream it schedules are written once, at their start */
		dm->turn.in_job_end = true;
		dm_ti_ended(dm, r.dag_id, r.run_id, r.task_id, r.map_index, r.try_number, success,
		            timed_out || user_kill, skip, why, started_at);
		dm->turn.in_job_end = was;
	}
	dag_ti_row_release(&r);
}

/* ---- starting a try ---- */

/* A try the server could not start for a fault of its own is tried again
 * this long after (no try spent). */
#define START_AGAIN_MS 1000

void dm_start_ti(struct dag_manager *dm, struct run_ctx *rc, size_t ti)
{
	struct weir_error err = {0};
	struct dag_ti_row *r;
	struct job_spec *spec = NULL;
	char *command = NULL;
	int64_t job_id = 0;
	int try_number;

	if (rc->stale || rc->book.tis[ti].state != DAG_TI_SCHEDULED)
		return;
	if (rc->spec->tasks[rc->ti_task[ti]].kind == DAG_TASK_TRIGGER_DAG) {
		dm_trigger_start(dm, rc, ti); /* no job (trigger.c) */
		return;
	}
	if (dm_sensor_start(dm, rc, ti))
		return; /* a sensor the server pokes: no job */
	r = &rc->rows[rc->ti_row[ti]];
	try_number = r->try_number + 1;
	spec = build_job(dm, rc, ti, try_number, &command, &err);
	/* the spec is the job's from here (job_manager_submit_valid takes it;
	 * dag_job_build validated it) */
	if (spec && job_manager_submit_valid(dm->jm, spec, &job_id, &err) < 0)
		job_id = 0;
	spec = NULL;
	if (!job_id && dag_start_fault_of(err.kind) == DAG_START_WAIT) {
		/* the server's own fault: no try spent; the TI stays scheduled and
		 * the wake-up timer brings a pass back */
		log_warn("DAG %s run %s task %s: cannot start it now: %s; trying again", r->dag_id,
		         r->run_id, r->task_id, err.msg);
		dm_wake_note(dm, clock_now_ms() + START_AGAIN_MS);
		goto out;
	}
	if (dm_ti_set_state(r, DAG_TI_QUEUED) < 0) {
		rc->stale = true; /* the row and the book disagree (logged): read again */
		goto out;
	}
	r->try_number = try_number;
	r->job_id = job_id;
	dm_run_note_job(rc, rc->ti_row[ti]);
	r->queued_at = clock_now_ms();
	r->start_date = 0;
	r->end_date = 0;
	r->next_retry_at = 0;
	dm_set_str(&r->rendered_command, command ? command : "");
	dm_set_str(&r->outputs, "");
	dm_set_str(&r->reason, job_id ? "" : err.msg);
	if (dm_ti_save(dm, rc, r, &err) < 0) {
		log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
		rc->stale = true;
		goto out;
	}
	dm_book_started(rc, ti, DAG_TI_QUEUED, try_number);
	dm_try_update(dm, r, DAG_TI_QUEUED, "", false);
	if (job_id) {
		log_info("DAG %s run %s task %s%s try %d: job %lld", r->dag_id, r->run_id,
		         r->task_id, r->map_index >= 0 ? " (instance)" : "", try_number,
		         (long long)job_id);
	} else {
		char why[WEIR_ERROR_MSG_MAX + 32];
		char *lp = dm_start_log_path(dm, rc->run.id, r->task_id, r->map_index, try_number);
		snprintf(why, sizeof why, "cannot start: %s", r->reason);
		log_warn("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, why);
		/* the try's log says why, as a task's own would */
		if (lp) {
			char line[sizeof why + 64];
			int n = snprintf(line, sizeof line, "weir: try %d of task %s %s\n",
			                 try_number, r->task_id, why);
			fs_write_file_atomic(lp, line, (size_t)(n < 0 ? 0 : n), 0644, NULL);
			free(lp);
		}
		/* a variable or connection not defined yet may be by the next try
		 * (Airflow retries such a task); a bad template stays bad */
		dm_ti_ended(dm, r->dag_id, r->run_id, r->task_id, r->map_index, try_number, false,
		            dag_start_fault_of(err.kind) != DAG_START_RETRY, false, why, 0);
	}
	dm->turn.pass_again = true;
out:
	free(command);
	job_spec_destroy(spec);
}

int dm_poke_job_start(struct dag_manager *dm, struct run_ctx *rc, size_t ti, char *msg, size_t size)
{
	struct weir_error err = {0};
	struct dag_ti_row *r = &rc->rows[rc->ti_row[ti]];
	struct job_spec *spec;
	char *command = NULL;
	int64_t job_id = 0;

	spec = build_job(dm, rc, ti, r->try_number, &command, &err);
	/* the spec is the job manager's from here, as in dm_start_ti() */
	if (spec && job_manager_submit_valid(dm->jm, spec, &job_id, &err) < 0)
		job_id = 0;
	if (!job_id) {
		snprintf(msg, size, "cannot start the poke: %s", err.msg);
		free(command);
		return dag_start_fault_of(err.kind) == DAG_START_WAIT ? 1 : -1;
	}
	r->job_id = job_id;
	dm_run_note_job(rc, rc->ti_row[ti]);
	dm_set_str(&r->rendered_command, command ? command : "");
	free(command);
	if (dm_ti_save(dm, rc, r, &err) < 0) {
		log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id, err.msg);
		rc->stale = true;
	} else {
		/* the try's job is its latest poke's: its log is the try's */
		struct dag_try_row t = {.dag_id = r->dag_id,
		                        .run_id = r->run_id,
		                        .task_id = r->task_id,
		                        .map_index = r->map_index,
		                        .try_number = r->try_number,
		                        .state = DAG_TI_UP_FOR_RESCHEDULE,
		                        .job_id = job_id,
		                        .start_date = r->start_date,
		                        .reason = (char *)""};
		if (dag_store_try_put(dm->ds, &t, &err) < 0)
			log_error("DAG %s run %s task %s: %s", r->dag_id, r->run_id, r->task_id,
			          err.msg);
	}
	log_info("DAG %s run %s task %s try %d: poke as job %lld", r->dag_id, r->run_id, r->task_id,
	         r->try_number, (long long)job_id);
	return 0;
}

bool dm_job_runs(const struct job_row *job)
{
	return job->state == JOB_RUNNING;
}
