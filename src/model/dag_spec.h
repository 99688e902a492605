/* dag_spec.h: a workflow (DAG) file in memory.
 *
 * A DAG file is YAML (docs/dags.md lists every key): the DAG's id,
 * schedule, dates, concurrency limits, params and default_args, and its
 * tasks, each a shell `command`, a `job` (an inline job spec, the path of
 * a spec file, or a tony.xml with TonY's submit-flag fields), a `sql:`
 * statement or script on a connection, or a `transfer:` of rows between
 * connections and files, or a `trigger_dag:` of another DAG's run.  A task
 * may list dataset URIs it updates (`outlets`); a DAG may be scheduled on
 * datasets instead of a cron (model/dataset.h).  Parsing
 * validates everything that can be known from the file alone: keys, types,
 * unique task ids, dependencies that exist and form no cycle, and templates
 * that only use variables that will exist.  Errors read
 * "FILE:LINE: field.path: what was expected".
 *
 * Defaults are resolved at parse time: every task carries its effective
 * retries, delays, timeout, pool, priority and resources (default_args,
 * then the task's own keys), so the scheduler reads one place.
 *
 * Ownership: a dag_spec owns everything it points to; dag_spec_destroy()
 * frees it all.  Strings are NUL-terminated UTF-8; json_t members are
 * references the spec holds.
 */
#ifndef WEIR_MODEL_DAG_SPEC_H
#define WEIR_MODEL_DAG_SPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/strvec.h"
#include "model/cron.h"
#include "model/dag_access.h"
#include "model/job_spec.h"
#include "model/notify.h"

#define DAG_MAX_TASKS 4096
/* The most times an events schedule may list. */
#define DAG_MAX_EVENTS 10000
#define DAG_MAX_ID 250
#define DAG_DEFAULT_ACTIVE_RUNS 16
#define DAG_DEFAULT_ACTIVE_TASKS 16
#define DAG_DEFAULT_RETRY_DELAY_S 300
#define DAG_MAX_RETRIES 100
#define DAG_MAX_POOL_SLOTS 100000
/* The most a task's max_active_tis_per_dag(run) may say. */
#define DAG_MAX_ACTIVE_TIS 1000000

/* When a task may run, given its upstream tasks' states (Airflow's). */
enum trigger_rule {
	TRIGGER_ALL_SUCCESS = 0, /* default */
	TRIGGER_ALL_DONE,
	TRIGGER_ALL_FAILED,
	TRIGGER_ONE_SUCCESS,
	TRIGGER_ONE_FAILED,
	TRIGGER_NONE_FAILED,
	TRIGGER_NONE_SKIPPED,
	TRIGGER_ALWAYS,
	TRIGGER_NONE_FAILED_MIN_ONE_SUCCESS,
	TRIGGER_ALL_SKIPPED,
	TRIGGER_ONE_DONE,
	TRIGGER_ALL_DONE_SETUP_SUCCESS, /* a teardown's; the last: sched/dag_trigger.h
	                                 * counts the rules by it */
};

const char *trigger_rule_name(enum trigger_rule r);
/* -1 if `name` is not a trigger rule. */
int trigger_rule_from_name(const char *name, enum trigger_rule *out);

/* Resources of one command task (a job task has its roles').  0 / -1 in
 * default_args mean "not given". */
struct dag_resources {
	uint64_t memory_mb; /* 0: not given */
	int vcores;         /* 0: not given */
	int gpus;           /* -1: not given */
};

/* An upstream's output that a foreach fans out over: outputs.TASK.KEY.  A
 * TASK that fans out itself gives the concatenation of its instances'
 * lists, in map-index order. */
struct dag_output_ref {
	char *task;
	char *key;
	size_t upstream; /* TASK's index (an upstream of the task) */
};

/* How a task shapes its run's flow (model/dag_spec_flow.c; docs/dags.md,
 * "Branches, short circuits and the past"). */
struct dag_task_flow {
	bool branch;              /* its output's `branch` names the downstream tasks that run */
	bool short_circuit;       /* a false `result` in its output skips all downstream */
	bool depends_on_past;     /* runs once the same task of the previous run succeeded
	                           * or was skipped */
	bool wait_for_downstream; /* and that task's direct downstream too (implies
	                           * depends_on_past) */
	bool past_given;          /* the task set depends_on_past or wait_for_downstream
	                           * itself (default_args do not apply then) */
	/* foreach over upstreams' outputs: "{{ outputs.TASK.KEY }}" (one
	 * ref), or {product: [...]} (several: the cross product of their
	 * lists); NULL otherwise */
	struct dag_output_ref *foreach_refs;
	size_t n_foreach_refs;
	size_t *mapped_by; /* the tasks whose foreach maps over this task's output:
	                    * indices, in file order (NULL when none); so a task's
	                    * end looks only at those */
	size_t n_mapped_by;
	/* exit statuses (1-255) of a try: skip_on_exit_code makes the task
	 * instance skipped, no_retry_on_exit_code failed without a retry; a
	 * bit per status */
	unsigned char skip_exit[32];
	unsigned char no_retry_exit[32];
	bool run_outputs;            /* its tries get $WEIR_RUN_OUTPUTS: every output of the run */
	bool setup;                  /* a setup task (all_done_setup_success below counts it) */
	bool teardown;               /* a teardown task: its failure does not fail the run ... */
	bool on_failure_fail_dagrun; /* ... unless this is set */
};

/* default_args: what a task has unless it says otherwise.  -1 (NULL for
 * pool) means "not given" here. */
struct dag_default_args {
	int retries;
	int64_t retry_delay_s;
	int retry_exponential_backoff; /* -1, 0 or 1 */
	int64_t max_retry_delay_s;
	int64_t execution_timeout_s;
	char *pool;
	int pool_slots; /* 0: not given */
	char *queue;    /* NULL: not given */
	int priority;
	bool priority_set;
	struct dag_resources resources;
	struct dag_notify *notify; /* on_failure, ... (model/notify.h); NULL: none */
	struct dag_sla sla;        /* within_s 0: not given */
	int depends_on_past;       /* -1: not given */
	int wait_for_downstream;   /* -1: not given */
};

enum dag_task_kind {
	DAG_TASK_COMMAND = 0, /* command (+ env, cwd) */
	DAG_TASK_JOB,         /* job: an inline job spec */
	DAG_TASK_JOB_FILE,    /* job: a path to a spec file, read by the server */
	DAG_TASK_JOB_TONY,    /* job: {conf_file: tony.xml, executes, ...} */
	DAG_TASK_SQL,         /* sql: a statement or script on a connection */
	DAG_TASK_TRANSFER,    /* transfer: rows from a query or file to a table, Redis or a file */
	DAG_TASK_TRIGGER_DAG, /* trigger_dag: starts a run of another DAG (model/dataset.h) */
	DAG_TASK_SENSOR,      /* sensor: waits for a file, another DAG's task, a time, an
	                       * HTTP answer or a SQL value (dag_spec_sensor.c) */
};

/* What a sensor waits for (the one key of its `sensor:` mapping). */
enum dag_sensor_kind {
	DAG_SENSOR_FILE = 0,      /* file: {path: GLOB, folder | conn} */
	DAG_SENSOR_EXTERNAL_TASK, /* external_task: {dag_id, task_id | task_ids | task_group_id,
	                           * states, failed_states, skipped_states,
	                           * execution_delta, check_existence} */
	DAG_SENSOR_TIME,          /* time: "HH:MM" on the logical date's day (UTC) */
	DAG_SENSOR_DELTA,         /* delta: a duration after the logical date */
	DAG_SENSOR_HTTP,          /* http: {url | conn, path, status, match} */
	DAG_SENSOR_SQL,           /* sql: {conn, query, parameters} */
	DAG_SENSOR_COMMAND,       /* the task's own command is the poke: a command task
	                           * with `sensor:` options (exit 0 met, 97 not yet); its
	                           * checked mapping holds "command": true */
};
#define DAG_SENSOR_KIND_COUNT (DAG_SENSOR_COMMAND + 1)

/* poke: a process holds the slot and pokes; reschedule: the server pokes
 * and the TI holds nothing in between (up_for_reschedule). */
enum dag_sensor_mode {
	DAG_SENSOR_POKE = 0,
	DAG_SENSOR_RESCHEDULE,
};

#define DAG_SENSOR_DEFAULT_POKE_MS 60000LL
#define DAG_SENSOR_DEFAULT_TIMEOUT_MS (7LL * 24 * 3600 * 1000)

/* What one poke found (data/sensor_poke.h pokes, sched/sensor.h decides). */
enum sensor_outcome {
	SENSOR_MET = 0,      /* what it waits for is there */
	SENSOR_NOT_YET,      /* not yet: poke again */
	SENSOR_ERROR,        /* the poke could not be made (the try fails; retries apply) */
	SENSOR_FAILED_STATE, /* the awaited task ended in a failed state: fail, no retry
	                      * (skipped with soft_fail, as Airflow's) */
	SENSOR_SKIP_STATE,   /* the awaited task ended in one of skipped_states: skip */
};

/* A sensor task's settings, checked (dag_spec_sensor.c). */
struct dag_sensor {
	enum dag_sensor_kind kind;
	enum dag_sensor_mode mode;
	int64_t poke_interval_ms; /* > 0 */
	int64_t timeout_ms;       /* > 0: from the try's first poke */
	int64_t max_wait_ms;      /* the longest wait between pokes with backoff; 0: timeout */
	bool soft_fail;           /* a timeout skips the TI instead of failing it */
	bool exponential_backoff;
	json_t *spec; /* the `sensor:` mapping as checked: paths absolute, defaults filled */
	json_t *what; /* borrowed from spec: the kind's value (spec[kind name]) */
};

/* "file", "external_task", "time", "delta", "http", "sql", "command"; "?" out
 * of range. */
const char *dag_sensor_kind_name(enum dag_sensor_kind k);
/* "poke", "reschedule". */
const char *dag_sensor_mode_name(enum dag_sensor_mode m);
/* A sensor's settings from its checked mapping (what dag_sensor.spec holds,
 * what `weir task-sensor` reads).  NULL with err. */
struct dag_sensor *dag_sensor_from_spec(const json_t *spec, struct weir_error *err);
void dag_sensor_free(struct dag_sensor *s);

struct template_ctx; /* model/template.h */
/* The sensor of one try: a copy of `s` with its templated fields (a file's
 * path, an http sensor's url, path and match, a sql sensor's string
 * parameter values, an external_task's dag_id and task_id) rendered raw
 * from ctx (the try's variables, model/template.h), then checked as a
 * DAG file's values are: a path still relative and without "..", a URL
 * still http://, no space or control character in a URL or path, ids
 * still ids.  A sql sensor's query is never rendered.  NULL with err
 * naming the field ("sensor.file.path: ..."): WEIR_E_NOT_FOUND for a
 * variable or connection not defined (a later try may find it),
 * WEIR_E_INVALID for a value the checks refuse. */
struct dag_sensor *dag_sensor_render(const struct dag_sensor *s, const struct template_ctx *ctx,
                                     struct weir_error *err);

struct dag_trigger; /* model/dataset.h */

struct dag_task {
	char *task_id;            /* [A-Za-z0-9_.-]+ (a task group's prefix is
	                           * GROUP.; outputs.TASK.KEY: the key has no dot) */
	char *operator_class;     /* `operator`: the class an Airflow DAG file's task is, a
	                           * dotted path ("airflow.operators.python.PythonOperator");
	                           * NULL: weir's own kinds (dag_task_class) */
	char *doc_md;             /* `doc_md`: the task's documentation (Markdown); may be NULL */
	struct strvec depends_on; /* as written */
	size_t *upstream;         /* indices into dag_spec.tasks, one per depends_on */
	size_t n_upstream;
	enum trigger_rule trigger_rule;

	enum dag_task_kind kind;
	char *command;       /* DAG_TASK_COMMAND: a template */
	struct env_var *env; /* values are templates (raw mode) */
	size_t n_env;
	char *cwd;                 /* NULL: the task's working directory */
	struct job_spec *job;      /* DAG_TASK_JOB */
	char *job_path;            /* DAG_TASK_JOB_FILE: absolute when the file's folder is known */
	json_t *tony;              /* DAG_TASK_JOB_TONY: the submit-flag fields, paths resolved */
	json_t *data;              /* DAG_TASK_SQL, DAG_TASK_TRANSFER: the `sql:` or `transfer:`
	                            * mapping, checked, file paths resolved (dag_spec_data.c) */
	struct dag_sensor *sensor; /* DAG_TASK_SENSOR: its settings; NULL otherwise */
	struct strvec connections; /* the connection ids the task's environment gets
	                            * (WEIR_CONN_<ID>); a sql or transfer task's own are added */
	struct strvec variables;   /* the variable keys whose values its tries get
	                            * (WEIR_VARIABLES, WEIR_VARIABLE_<i>): no others */
	struct dag_trigger *trigger; /* DAG_TASK_TRIGGER_DAG */
	struct strvec outlets;       /* dataset URIs its success updates (model/dataset.h) */
	struct strvec inlets;        /* `inlets`: dataset URIs whose latest events its tries
	                              * get in $WEIR_INLET_EVENTS */
	struct strvec inlet_aliases; /* `inlets`' {alias: NAME}: DatasetAliases, likewise */
	json_t *marker;              /* `marker: {dag_id, task_id, recursion_depth}` (Airflow's
	                              * ExternalTaskMarker): clearing this task recursively clears
	                              * that task of that DAG's run of the same logical date, with
	                              * its downstream (server/dag_manager/markers.c); NULL: none */

	/* effective values */
	int retries;
	int64_t retry_delay_s;
	bool retry_exponential_backoff;
	int64_t max_retry_delay_s;   /* 0: no cap */
	int64_t execution_timeout_s; /* 0: none */
	char *pool;                  /* NULL: no pool */
	int pool_slots;              /* the slots of its pool an instance holds (>= 1) */
	char pool_slots_at[48];      /* the field that gave it ("tasks[2].pool_slots"); "" when
	                              * it is the default 1 */
	char *queue;                 /* the server's queue its job goes to; NULL: the job's own */
	char queue_at[48];           /* the field that gave it ("tasks[2].queue"), for errors */
	json_t *slurm; /* the job's `slurm:` settings (checked); NULL: the job's own */
	int priority;
	struct dag_resources resources; /* command tasks: memory, vcores (1), gpus (0) */

	/* Airflow's task concurrency (sched/dag_pool.h): how many of its
	 * instances may be queued or running at once across the DAG's runs,
	 * and within one run (mapped instances count each); 0: no limit */
	int max_active_tis_per_dag;
	int max_active_tis_per_dagrun;

	/* foreach: one instance per item of a list, or of a list param */
	json_t *foreach_list; /* NULL unless a literal list was given */
	char *foreach_param;  /* NULL unless "{{ params.X }}" was given */

	/* notifications (model/notify.h): the task's own keys; and the lists in
	 * effect, its own or default_args' (borrowed; NULL: none) */
	struct dag_notify *notify;
	const struct notify_list *on[NOTIFY_N_EVENTS];
	struct dag_sla sla; /* its own, else default_args'; within_s 0: none */
	/* branch, short_circuit, the past, foreach over an upstream's output */
	struct dag_task_flow flow;
};

struct dag_spec {
	char *dag_id;      /* [A-Za-z0-9_.-]+ */
	char *description; /* may be NULL */
	char *doc_md;      /* `doc_md`: the DAG's documentation (Markdown); may be NULL */
	char *file;        /* where it was read from (origin); may be NULL */
	struct cron schedule;
	struct strvec dataset_schedule;     /* schedule: [URI, ...]: runs when each was updated
	                                     * since its last such run (schedule is then none);
	                                     * with a condition, every URI it names, once */
	int64_t *schedule_events;           /* `schedule: {events: [...]}`: the times, sorted, each
	                                     * once; schedule.events points here (NULL: none) */
	struct schedule_run *schedule_runs; /* `schedule: {runs: [...]}` (a custom
	                                     * timetable's, as the DAG processor lists
	                                     * them); schedule.runs points here */
	char *timetable_description;        /* `schedule: {description: ...}` of runs:
	                                     * the API's timetable_description; NULL */
	int64_t runs_after_ms;         /* `schedule: {after: T}`: the latest scheduled run's logical
	                                * date the list was made after (CRON_NEVER: none) */
	bool runs_more;                /* `schedule: {more: true}`: the timetable has runs past
	                                * the list (a parse of the file lists them) */
	json_t *dataset_condition;     /* NULL: all of dataset_schedule; else the condition
	                                * of `datasets: {any|all: [...]}`: a URI string or
	                                * {"any"|"all": [COND, ...]} or {"alias": NAME}
	                                * (sched/dataset_due.h) */
	struct strvec dataset_aliases; /* the DatasetAlias names the condition holds, once */
	int64_t start_date_ms;         /* CRON_NEVER: not given (required with a schedule) */
	int64_t end_date_ms;           /* CRON_NEVER: none */
	bool catchup;                  /* default false */
	/* `manual_interval:` (written by the Airflow DAG processor): a manual run's
	 * data interval is the period that ends at or before its logical date, as
	 * Airflow's infer_manual_data_interval (model/cron.h's
	 * schedule_manual_interval_ending), not weir's; before_ms > 0: the
	 * timedelta of a timedelta schedule ([D - before, D]) */
	bool manual_ending;
	int64_t manual_before_ms;
	int max_active_runs;
	int max_active_tasks;
	int64_t dagrun_timeout_s; /* `dagrun_timeout`: a running run older than this (from
	                           * its start) times out (sched/dag_run.h); 0: none */
	json_t *params;           /* object: name -> default value (null: none) */
	json_t *param_schemas;    /* object: name -> schema as written (model/param_schema.h),
	                           * for the params given as one */
	struct strvec tags;
	struct dag_default_args default_args;
	struct dag_notify *notify; /* the runs' on_failure, on_success; on_sla_miss for tasks
	                            * without one; NULL: none */
	struct dag_access access;  /* `access:`: who may read it and act on it (unset: the
	                            * roles alone decide; sched/access.h) */
	struct dag_task *tasks;    /* in file order */
	size_t n_tasks;
	size_t *topo; /* a topological order: indices, upstream first */
};

/* The line of `path` (a field path as errors name them, "tasks[2].queue")
 * in the YAML file `file`; 0 when unknown. */
int dag_spec_line_of(const char *file, const char *path);

/* Parses a DAG file.  Relative paths (cwd, job files, src_dir, tony
 * files) are resolved against the file's folder.  NULL with err
 * ("FILE:LINE: tasks[2].depends_on[0]: ...") on any error. */
struct dag_spec *dag_spec_parse_file(const char *path, struct weir_error *err);

/* Same from a string; `origin` names it in errors and becomes spec->file;
 * `base_dir` resolves relative paths (NULL: kept as written). */
struct dag_spec *dag_spec_parse_string(const char *text, size_t len, const char *origin,
                                       const char *base_dir, struct weir_error *err);

/* Reads a parsed document (the JSON form, also what dag_spec_to_json
 * writes).  Errors name field paths without lines. */
struct dag_spec *dag_spec_from_json(json_t *json, const char *origin, const char *base_dir,
                                    struct weir_error *err);

/* A JSON document of the same keys as the file, with every default
 * resolved (dag_spec_from_json reads it back to an equal spec).  New
 * reference; NULL only when out of memory. */
json_t *dag_spec_to_json(const struct dag_spec *dag);

/* Whether the DAG is scheduled on datasets (URIs or aliases). */
bool dag_on_datasets(const struct dag_spec *dag);

/* Airflow 2.9's dataset_expression of the DAG: its condition ({"any"|"all":
 * [...]}), a list of URIs as {"all": [...]}, or JSON null when it runs on no
 * datasets.  New reference; NULL only when out of memory. */
json_t *dag_spec_dataset_expression(const struct dag_spec *dag);

void dag_spec_destroy(struct dag_spec *dag);

/* The task of that id, or NULL. */
const struct dag_task *dag_spec_find_task(const struct dag_spec *dag, const char *task_id);
/* Its index, or -1. */
long dag_spec_task_index(const struct dag_spec *dag, const char *task_id);

/* The class a task is, as Airflow's API names it (a task's class_ref, a task
 * instance's operator): its `operator`'s last name and the module before it,
 * else weir's own kinds ("WeirCommand", "WeirJob", "TriggerDagRunOperator" in
 * module "weir").  *name and *module point into the task or static text. */
void dag_task_class(const struct dag_task *t, const char **name, const char **module,
                    size_t *module_len);

/* The items a foreach task fans out over, with `params` the run's params
 * (the DAG's with the trigger's conf over them; NULL: the DAG's).  A new
 * reference to a list; NULL with err when the param is missing or not a
 * list, or for a task without foreach. */
json_t *dag_task_foreach_items(const struct dag_spec *dag, const struct dag_task *task,
                               const json_t *params, struct weir_error *err);

/* The tasks a clear of the tasks in[] (true: chosen) touches, into in[]
 * (spec->n_tasks entries), as Airflow 2's clear picks them: with
 * `downstream` every task below a chosen one; then, for each chosen task
 * that is neither setup nor teardown (and each task added below one, with
 * `downstream`), its relevant setups (an upstream setup, at any depth, with
 * no teardown or with a teardown below the task) and their teardowns; a
 * chosen setup's teardowns when not `downstream`.  -1 when out of memory
 * (in[] then as it was, or widened in part). */
int dag_clear_tasks(const struct dag_spec *spec, bool *in, bool downstream);

/* Whether the task fans out (foreach over a list, a param or an output). */
bool dag_task_is_mapped(const struct dag_task *task);

/* Whether exit status `status` is in a task's set of them (its flow's
 * skip_exit or no_retry_exit). */
bool dag_flow_exit_has(const unsigned char *set, int status);

/* The items a task mapped over upstreams' outputs fans out over, with
 * `outputs` the run's {"TASK": {...}} (a TASK that fans out: the list of
 * its instances' outputs in map-index order, null where one wrote none):
 * a new reference to the list outputs.TASK.KEY (a TASK that fans out: its
 * instances' lists one after the other), whose items are strings,
 * numbers, or objects (an object's `resources` checked:
 * dag_item_resources()); with several refs ({product: [...]}) their cross
 * product, each item the list of one item of each, the last ref varying
 * fastest.  NULL with err ("outputs.prepare.models: expected a list to
 * fan out over, got an object") otherwise. */
json_t *dag_task_output_items(const struct dag_task *task, const json_t *outputs,
                              struct weir_error *err);

/* The resources a foreach item asks for: an object item's `resources`
 * mapping {cpus (or vcores), memory ("4g" or MB), gpus}, each key optional.
 * 0 with *given false when the item has none; 0 with the given keys set
 * in *res (the others left as they are) and *given true; -1 with err
 * ("resources.cpus: expected ...") for a bad mapping. */
int dag_item_resources(const json_t *item, struct dag_resources *res, bool *given,
                       struct weir_error *err);

/* The run's params: the DAG's defaults with `conf`'s keys over them (conf
 * may be NULL).  New reference; NULL with err when conf is not a mapping. */
json_t *dag_spec_run_params(const struct dag_spec *dag, const json_t *conf, struct weir_error *err);

/* Checks a run's params (dag_spec_run_params()'s) against the DAG's param
 * schemas: a param with a schema and no default must be given.  0, or -1
 * with err (WEIR_E_INVALID) "params.NAME: expected ..., got ...". */
int dag_spec_check_run_params(const struct dag_spec *dag, const json_t *params,
                              struct weir_error *err);

#endif
