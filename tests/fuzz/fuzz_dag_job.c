/* fuzz_dag_job.c: DAG file text -> every task's try as a job
 * (dag_job_build), with the run's params, an output for each task and the
 * first foreach item.  A job built must be valid, carry $WEIR_OUTPUT and
 * its DAG's name or its own, and survive its JSON round trip; a failure
 * must say why and give no command.  Tasks whose job is in a file or a
 * tony.xml are built from a fixed job (reading files is the manager's). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/dag_job.h"
#include "model/job_spec_edit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_job(const struct dag_job_try *t)
{
	struct weir_error err = {0};
	char *cmd = NULL;
	struct job_spec *s = dag_job_build(t, &cmd, &err);
	bool has_output = false;

	if (!s) {
		if (cmd || !err.msg[0])
			abort();
		return;
	}
	if (!cmd || job_spec_validate(s, &err) < 0 || !s->name)
		abort();
	for (size_t i = 0; i < s->n_env; i++)
		has_output |= !strcmp(s->env[i].name, "WEIR_OUTPUT") &&
		              !strcmp(s->env[i].value, t->output_path);
	if (!has_output)
		abort();
	if (t->task->kind == DAG_TASK_COMMAND &&
	    (s->n_roles != 1 || strcmp(s->roles[0].command, cmd) || s->priority != t->priority))
		abort();
	json_t *j = job_spec_to_json(s);
	struct job_spec *back = j ? job_spec_from_json(j, &err) : NULL;
	json_t *k = back ? job_spec_to_json(back) : NULL;
	if (j && (!back || !json_equal(j, k)))
		abort(); /* a job we build must read back as itself */
	json_decref(j);
	json_decref(k);
	job_spec_destroy(back);
	job_spec_destroy(s);
	free(cmd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct weir_error err;
	struct dag_spec *d = dag_spec_parse_string((const char *)data, size, "fuzz", "/base", &err);
	struct job_spec *fixed;
	json_t *outputs;

	if (!d)
		return 0;
	fixed = job_spec_create();
	if (!fixed || !job_spec_add_role(fixed, "worker", &err))
		abort();
	if (job_spec_set_string(&fixed->roles[0].command, "run {{ ds }}", &err) < 0)
		abort();
	outputs = json_object();
	for (size_t i = 0; i < d->n_tasks; i++)
		json_object_set_new(outputs, d->tasks[i].task_id, json_pack("{s:s}", "k", "v'\""));
	for (size_t i = 0; i < d->n_tasks; i++) {
		const struct dag_task *task = &d->tasks[i];
		struct template_run run = {
			.dag_id = d->dag_id,
			.run_id = "manual__2024-01-31T06:00:00+00:00",
			.task_id = task->task_id,
			.logical_ms = 1706680800000LL,
			.interval_start_ms = 1706680800000LL,
			.interval_end_ms = 1706767200000LL,
			.try_number = 1,
			.params = d->params,
			.outputs = outputs,
		};
		struct dag_job_try t = {
			.task = task,
			.run = &run,
			.map_index = -1,
			.priority = task->priority,
			.output_path = "/home/dag_runs/1/t.-1.1.output.json",
			.pool_queue = i % 2 ? "pooled" : NULL,
			.job = task->kind == DAG_TASK_JOB ? task->job
			       : task->kind == DAG_TASK_COMMAND ? NULL
			                                        : fixed,
		};
		char *item = NULL;
		if (task->foreach_list || task->foreach_param) {
			json_t *items = dag_task_foreach_items(d, task, d->params, &err);
			if (json_array_size(items) > 0) {
				item = template_value_text(json_array_get(items, 0));
				run.item = item;
				t.map_index = 0;
			}
			json_decref(items);
			if (!item)
				continue;
		}
		check_job(&t);
		free(item);
	}
	json_decref(outputs);
	job_spec_destroy(fixed);
	dag_spec_destroy(d);
	return 0;
}
