/* dag_job.h: the job of one try of a DAG task.
 *
 * Every try of a task instance runs as a job (model/job_spec.h):
 *  - a command task is a one-role job: role "task", one instance, the
 *    task's memory (512m when none is given), vcores (1) and gpus (0), its
 *    command rendered for the shell (after `cd CWD &&` when it has a cwd),
 *    its env values rendered raw, its execution timeout and the TI's
 *    priority;
 *  - a sql or transfer task is a command task whose command runs weir's
 *    own `task-sql` or `task-transfer` (data/task.h) with the task's
 *    mapping, its parameters rendered raw (values, never SQL text), as
 *    JSON in WEIR_DATA_SPEC; a sensor in mode poke likewise runs
 *    `task-sensor` with its mapping rendered for the try
 *    (dag_sensor_render(); a value its checks refuse is a try that cannot
 *    start);
 *  - a job task is its job (inline, or what the caller read from the task's
 *    spec file or tony.xml) with `params` and each role's command rendered
 *    for the shell; it keeps its own name unless that is the default
 *    ("job"), its own timeout unless the task sets one, and its own
 *    priority unless the TI has one.
 * Both get the try's environment (template_env(): WEIR_DS ..., WEIR_PARAM_X,
 * WEIR_ITEM) and WEIR_OUTPUT over their own, the name DAG.TASK (DAG.TASK.N
 * for foreach instance N), the task's queue over the job's (a job that
 * names none takes the pool's), and the task's `slurm:` in place of the
 * job's.  The result is validated as any submitted job is.
 *
 * Pure: no I/O.  The caller reads job files and tony.xml files, makes the
 * try's folder and picks the foreach item.
 */
#ifndef WEIR_MODEL_DAG_JOB_H
#define WEIR_MODEL_DAG_JOB_H

#include "lib/error.h"
#include "model/dag_spec.h"
#include "model/job_spec.h"
#include "model/template.h"

/* A command task's memory when neither it nor default_args gives one. */
#define DAG_JOB_DEFAULT_MEMORY_MB 512

/* Everything one try's job is made of.  All borrowed. */
struct dag_job_try {
	const struct dag_task *task;
	const struct template_run *run; /* the try's variables (dag_id, run_id, try_number,
	                                   params, outputs, item ...) */
	int map_index;                  /* the foreach instance; -1: none */
	int priority;                   /* the task instance's */
	const char *output_path;        /* the try's $WEIR_OUTPUT */
	const char *run_outputs_path;   /* the try's $WEIR_RUN_OUTPUTS; NULL: none */
	const char *inlet_events_path;  /* the try's $WEIR_INLET_EVENTS; NULL: none */
	const struct strvec *variables; /* the task's variables the server has, as
	                                   "KEY=value" (WEIR_VARIABLES, WEIR_VARIABLE_<i>);
	                                   NULL: none */
	const char *pool_queue;         /* the queue of the task's pool; NULL: none */
	const struct job_spec *job;     /* job tasks: the job before templating (task->job, or
	                                   the spec read from task->job_path or task->tony);
	                                   NULL for a command task */
	const char *weir_program;       /* sql and transfer tasks: the weir binary that runs
	                                   them; NULL: "weir" on the PATH */
	const struct template_source *secrets; /* var.* and conn.* of the templates; NULL:
	                                          they do not render */
	const struct dag_resources *resources; /* a foreach item's own (dag_item_resources()):
	                                          memory, vcores, gpus given (> 0, >= 0 for
	                                          gpus) replace every role's; NULL: none */
};

/* The try's job, validated (free with job_spec_destroy()), and *command:
 * what runs, as the API shows it (the command task's command, or one
 * "ROLE: command" line per role, the entry point for a role without one).
 * NULL with err and *command NULL: WEIR_E_INVALID for a template that does
 * not render ("command: ...", "cwd: ...", "env.X: ...", "job.params: ...",
 * "job.roles.R.command: ...") or a job that is not valid ("job: name: ...");
 * WEIR_E_INTERNAL for a job task without its job, or out of memory. */
struct job_spec *dag_job_build(const struct dag_job_try *t, char **command, struct weir_error *err);

#endif
