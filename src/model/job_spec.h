/* job_spec.h: the job a user asks for, in memory.
 *
 * A job is a set of roles (chief, worker, ps, evaluator, or any lowercase
 * name); each role has a number of instances and the resources of one
 * instance.  All instances of all roles start together (a gang).
 *
 * Every input format (native YAML/JSON, tony.xml, TonY's submit flags) ends
 * up as a struct job_spec that passed job_spec_validate().  The JSON form
 * produced by job_spec_to_json() is the native format, the body of
 * POST /api/v1/jobs and what the store keeps; job_spec_from_json() reads it
 * back.  See docs/jobs.md for every field.
 *
 * Ownership: a job_spec owns every string and array it points to;
 * job_spec_destroy() frees them all.  Strings are NUL-terminated UTF-8.
 */
#ifndef WEIR_MODEL_JOB_SPEC_H
#define WEIR_MODEL_JOB_SPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "model/framework.h"

/* Who decides a job's result.
 * SUCCESS_CHIEF: the chief's task 0, or worker 0 when there is no chief
 *   (TonY's and Kubeflow's default).
 * SUCCESS_ALL_WORKERS: every task of every tracked role must succeed. */
enum success_policy {
	SUCCESS_CHIEF = 0,
	SUCCESS_ALL_WORKERS,
};

struct env_var {
	char *name;
	char *value;
};

struct role_spec {
	char *name;          /* [a-z][a-z0-9_-]*, at most 63 characters */
	int instances;       /* >= 1 */
	uint64_t memory_mb;  /* per instance, MiB; > 0 */
	int vcores;          /* per instance; >= 1 */
	int gpus;            /* per instance; >= 0 */
	char *command;       /* shell command; NULL: the job's entry point + params */
	struct env_var *env; /* role-level environment, applied after the job's */
	size_t n_env;
	bool untracked;       /* like TonY's ps: killed when the tracked roles finish */
	bool stop_on_failure; /* a failed instance fails the whole job at once */
	bool sidecar;         /* a helper (e.g. tensorboard): untracked, and left out of the
	                       * framework's cluster (TF_CONFIG); TonY's sidecar.jobtypes */
};

/* Something placed in every task's working directory.
 * archive: a zip or tar(.gz|.bz2|.xz) unpacked once per content hash into
 *   the home's cache and linked read-only as `name` (e.g. "venv");
 * otherwise `path` is a directory (or file) linked as `name`. */
struct artifact {
	char *path; /* absolute on the machine that runs the task */
	char *name; /* one path component, no '/', not "." or ".." */
	bool archive;
};

/* Slurm settings of one job (`slurm:`), over its queue's; NULL / empty:
 * the queue's.  Ignored when the job runs locally. */
struct job_slurm {
	char *partition, *account, *qos;
	char *time;            /* sbatch --time as written ("90", "2:00:00", "1-12") */
	char **sbatch_options; /* each starts with '-'; added after the queue's */
	size_t n_sbatch_options;
};

struct job_spec {
	char *name;  /* defaults to "job" */
	char *queue; /* the server's queue it is routed by; NULL: the server's executor */
	struct job_slurm slurm;
	enum framework framework;
	int priority; /* higher runs first; default 0 */

	struct role_spec *roles;
	size_t n_roles;

	struct artifact *artifacts;
	size_t n_artifacts;

	char *src_dir;     /* absolute; its entries appear in the working dir; may be NULL */
	char *entry_point; /* e.g. "train.py"; may be NULL when every role has a command */
	char *params;      /* appended to the entry point's command line; may be NULL */
	char *python; /* interpreter for the entry point, e.g. "venv/bin/python"; may be NULL */

	struct env_var *env; /* job-level environment of every task */
	size_t n_env;
	/* `connections: [ID, ...]`: each task gets WEIR_CONN_<ID> (the URI,
	 * password included), resolved when it registers (docs/connections.md);
	 * no other connection.  Ids only: the spec never holds a secret. */
	struct strvec connections;
	/* `mask: [text, ...]`: texts no output or view of the job shows (the
	 * task's log masks them, like its connections' passwords): the values
	 * of the secret variables a DAG task's templates put into it.  A spec
	 * that has them is stored sealed, and shown with them as "***"
	 * (docs/security.md). */
	struct strvec mask;

	enum success_policy success;
	bool fail_on_worker_failure; /* TonY's fail-on-worker-failure-enabled */

	int max_restarts;   /* gang restarts; default 0 */
	int retry_exit_min; /* exit codes in [min, max] are retryable; */
	int retry_exit_max; /*   default 128..255 (signals, OOM) */

	/* seconds; 0 means no limit */
	int64_t allocation_timeout_s;
	int64_t registration_timeout_s; /* default 300 */
	int64_t execution_timeout_s;
};

/* Reads the native format from a parsed JSON value (also the API body).
 * Unknown keys are errors.  Validates.  NULL on error, with err naming the
 * field ("roles.worker.memory: expected ...").  */
struct job_spec *job_spec_from_json(json_t *json, struct weir_error *err);

/* Parses a native spec from a file: YAML or JSON (JSON is YAML).  Relative
 * paths in the file (src_dir, artifacts) are resolved against the file's
 * directory.  Errors name the file and, where known, the line. */
struct job_spec *job_spec_parse_file(const char *path, struct weir_error *err);

/* Same, from a string; `origin` names it in errors; `base_dir` resolves
 * relative paths (NULL: leave them as they are). */
struct job_spec *job_spec_parse_string(const char *text, size_t len, const char *origin,
                                       const char *base_dir, struct weir_error *err);

/* Appends the native JSON form to sb, compact (what json_dumps(tree,
 * JSON_COMPACT) writes: no spaces, keys in their fixed order): the one
 * place that knows the layout, so the text stored for a job is written
 * without a tree.  0, or -1 when out of memory or a string is not UTF-8. */
int job_spec_write_json(struct strbuf *sb, const struct job_spec *spec);

/* The native JSON form as a tree (job_spec_write_json()'s text read back).
 * New reference; NULL only when out of memory. */
json_t *job_spec_to_json(const struct job_spec *spec);

/* Checks every rule docs/jobs.md states.  0, or -1 with err. */
int job_spec_validate(const struct job_spec *spec, struct weir_error *err);

void job_spec_destroy(struct job_spec *spec);

/* The shell command one instance of `role` runs: the role's command, or
 * "[python ]entry_point[ params]".  Newly allocated; NULL if neither is set. */
char *job_spec_role_command(const struct job_spec *spec, const struct role_spec *role);

/* The role that decides the job's result under SUCCESS_CHIEF: "chief" if
 * present, else "worker", else the first tracked role.  NULL if none. */
const struct role_spec *job_spec_deciding_role(const struct job_spec *spec);

const struct role_spec *job_spec_find_role(const struct job_spec *spec, const char *name);

/* Total instances over all roles. */
int job_spec_task_count(const struct job_spec *spec);

/* A Slurm value as weir accepts it: non-empty, at most 256 bytes, no control
 * characters (no newline); an option (`option`) starts with '-'; a time
 * (`time`) is digits, ':' and '-' only.  `field` names it in err.  0 or -1. */
int job_spec_check_slurm_value(const char *field, const char *v, bool option, bool time,
                               struct weir_error *err);

/* Parses a memory amount: "4g", "512m", "1.5g", "2048" (MiB, as TonY), "1t".
 * 0 or -1 with err (mentioning `field`). */
int parse_memory_mb(const char *text, const char *field, uint64_t *out, struct weir_error *err);

#endif
