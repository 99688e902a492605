/* variable.h: a variable (Airflow's Variable): a key, a value (text; a JSON
 * value is its text) and a description.
 *
 * Keys are [A-Za-z0-9_.-], 1..VARIABLE_KEY_MAX characters, case kept; the
 * environment's WEIR_VAR_<KEY> names the key upper-cased
 * (variable_env_name()).  Ownership: a struct variable owns its strings;
 * variable_release() frees them (and wipes the value).
 */
#ifndef WEIR_MODEL_VARIABLE_H
#define WEIR_MODEL_VARIABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"
#include "lib/strvec.h"

struct variable {
	char *key;
	char *value;       /* never NULL in a filled variable */
	char *description; /* may be NULL */
};

/* Longest variable key (Airflow's ID_LEN). */
#define VARIABLE_KEY_MAX 250

/* 0 if `key` is a valid variable key, else -1 with err saying why. */
int variable_check_key(const char *key, struct weir_error *err);
/* "WEIR_VAR_" and the key upper-cased, '.' and '-' as '_'.  Newly
 * allocated; NULL when out of memory. */
char *variable_env_name(const char *key);
/* Whether the value of variable `key` is a secret: the key holds one of
 * the sensitive names (connection_secret_name(): Airflow's list and the
 * configuration's sensitive_var_conn_names), any case.  Such a value is
 * "***" in every answer, log and rendered command (docs/security.md). */
bool variable_is_secret(const char *key);
/* Adds a secret variable's value to a job's `mask` (model/job_spec.h), and
 * the value as a shell template writes it between quotes (each ' as '\'')
 * when that differs; each once, empty values never.  0, or -1 (out of
 * memory). */
int variable_mask_add(struct strvec *mask, const char *value);

/* JSON text with every string in it (at any depth) masked: each text of
 * `mask` as "***".  Newly allocated compact JSON; NULL when the text is not
 * JSON or out of memory. */
char *variable_mask_json(const char *json_text, const struct strvec *mask);

/* A deep copy; 0 or -1 when out of memory. */
int variable_copy(struct variable *dst, const struct variable *src);
void variable_release(struct variable *v);
void variables_free(struct variable *rows, size_t n);

#endif
