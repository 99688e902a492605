/* job_spec_edit.h: building and changing a struct job_spec in code.
 *
 * The parsers (native JSON/YAML, tony.xml, submit flags) and the CLI's
 * overrides (--name, --priority) share these so that defaults live in one
 * place.  Nothing here validates a whole spec: call job_spec_validate() when
 * done.  Functions that allocate return 0, or -1 with err (WEIR_E_INTERNAL)
 * when out of memory, leaving the spec as it was.
 */
#ifndef WEIR_MODEL_JOB_SPEC_EDIT_H
#define WEIR_MODEL_JOB_SPEC_EDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/duration.h"
#include "model/job_spec.h"

/* Defaults of docs/jobs.md. */
#define JOB_SPEC_DEFAULT_NAME "job"
#define JOB_SPEC_DEFAULT_INSTANCES 1
#define JOB_SPEC_DEFAULT_MEMORY_MB 2048
#define JOB_SPEC_DEFAULT_VCORES 1
#define JOB_SPEC_DEFAULT_GPUS 0
#define JOB_SPEC_DEFAULT_RETRY_MIN 128
#define JOB_SPEC_DEFAULT_RETRY_MAX 255
#define JOB_SPEC_DEFAULT_REGISTRATION_S 300

/* Limits job_spec_validate() enforces. */
#define JOB_SPEC_MAX_INSTANCES 1024
#define JOB_SPEC_MAX_VCORES 1024
#define JOB_SPEC_MAX_GPUS 64
#define JOB_SPEC_MAX_ROLES 64
#define JOB_SPEC_MAX_MEMORY_MB (16ull * 1024 * 1024) /* 16 TiB */
#define JOB_SPEC_MAX_PRIORITY 1000000
#define JOB_SPEC_MAX_RESTARTS 1000
#define JOB_SPEC_MAX_TIMEOUT_S DURATION_MAX_S
#define JOB_SPEC_MAX_NAME 128

/* A spec with every default set and no roles.  NULL when out of memory.
 * Free with job_spec_destroy(). */
struct job_spec *job_spec_create(void);

/* Appends a role named `name` with the default resources and returns it
 * (valid until the next role is added), or the existing role of that name.
 * NULL with err when out of memory. */
struct role_spec *job_spec_add_role(struct job_spec *spec, const char *name,
                                    struct weir_error *err);

/* Sets `name` to `value` in an env list: replaces an existing entry of that
 * name, else appends.  0 or -1 with err. */
int env_list_set(struct env_var **env, size_t *n_env, const char *name, const char *value,
                 struct weir_error *err);

/* Appends an artifact.  `name` NULL: artifact_default_name(path).
 * `archive` < 0: artifact_is_archive(path).  0 or -1 with err. */
int job_spec_add_artifact(struct job_spec *spec, const char *path, const char *name, int archive,
                          struct weir_error *err);

/* Replaces a string field (e.g. &spec->name), copying `value` (NULL clears). */
int job_spec_set_string(char **field, const char *value, struct weir_error *err);

/* true if `path` ends in .zip .tar .tar.gz .tgz .tar.bz2 .tbz2 .tar.xz .txz .jar */
bool artifact_is_archive(const char *path);

/* The last path component without an archive extension ("/a/venv.zip" ->
 * "venv").  Newly allocated; NULL when out of memory. */
char *artifact_default_name(const char *path);

/* "128-255" or "137" -> [min, max] within 0..255.  0 or -1 with err. */
int parse_exit_range(const char *text, const char *field, int *min, int *max,
                     struct weir_error *err);

/* The memory amount as written in the native JSON: "4g" when a whole number
 * of GiB, else "1536m".  Writes into buf (at least 32 bytes); returns buf. */
char *format_memory_mb(uint64_t mb, char *buf, size_t size);

/* Role names: [a-z][a-z0-9_-]{0,62}.  Env names: [A-Za-z_][A-Za-z0-9_]*. */
bool role_name_valid(const char *name);
bool env_name_valid(const char *name);

struct field_reader; /* model/field_reader.h */
/* An `env:` mapping of NAME: value at `prefix` (a job's, a role's, a DAG
 * task's), each set into env/n_env (env_list_set: a name again replaces).
 * A value may be a string, a number or a boolean (YAML writes them bare):
 * the variable is its text as template_value_text() writes it (0.1, not
 * 0.10000000000000001).  -1 with r->err naming the entry: not a mapping, a
 * bad name, a list, mapping or null value; out of memory. */
int env_list_read(struct field_reader *r, json_t *v, const char *prefix, struct env_var **env,
                  size_t *n_env);

#endif
