/* secrets_store.h: the store's connections and variables (tables of
 * migration 5, docs/internals/store.md).
 *
 * Connections are rows of model/connection.h's fields, variables of
 * model/variable.h's (a key, a value: text, JSON being text too, and a
 * description); and the specs of jobs that carry secrets, whole.  The secret columns
 * (a connection's password and extra, a variable's value) are sealed with
 * the server's key (store/seal.h) before they are written and opened when
 * read: the file never holds them in clear.  The rest (type, host, port,
 * login, schema, descriptions) is plain text, so a listing needs no key.
 *
 * Ids and keys are stored as given (case counts); this layer checks
 * nothing but what SQLite does: callers validate ids (connection_check_id)
 * and keys before.
 *
 * Errors: -1 with err: WEIR_E_NOT_FOUND (no such row), WEIR_E_CONFLICT (an
 * id added twice), WEIR_E_INVALID (a sealed value that does not open with
 * this key), WEIR_E_INTERNAL (SQLite, out of memory).  A failed call
 * changes nothing.  Rows returned are owned by the caller.
 */
#ifndef WEIR_STORE_SECRETS_STORE_H
#define WEIR_STORE_SECRETS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/connection.h"
#include "model/variable.h"
#include "store/seal.h"
#include "store/store.h"

struct secrets_store; /* opaque */

/* Prepares on the store's connection; `key` is copied.  NULL with err. */
struct secrets_store *secrets_store_create(struct store *s, const uint8_t key[SEAL_KEY_SIZE],
                                           struct weir_error *err);
void secrets_store_destroy(struct secrets_store *ss);

/* ---- connections ---- */

/* WEIR_E_CONFLICT when c->id is there already. */
int secrets_store_conn_add(struct secrets_store *ss, const struct connection *c,
                           struct weir_error *err);
/* Writes every field of the row c->id; WEIR_E_NOT_FOUND when absent. */
int secrets_store_conn_update(struct secrets_store *ss, const struct connection *c,
                              struct weir_error *err);
/* Fills *out (zeroed first; connection_release()). */
int secrets_store_conn_get(struct secrets_store *ss, const char *id, struct connection *out,
                           struct weir_error *err);
/* Every connection by id; *rows (NULL when none) freed with connections_free()
 * (model/connection.h). */
int secrets_store_conn_list(struct secrets_store *ss, struct connection **rows, size_t *n,
                            struct weir_error *err);
int secrets_store_conn_delete(struct secrets_store *ss, const char *id, struct weir_error *err);

/* ---- variables ---- */

/* Adds or replaces (Airflow's Variable.set). */
int secrets_store_var_set(struct secrets_store *ss, const struct variable *v,
                          struct weir_error *err);
int secrets_store_var_get(struct secrets_store *ss, const char *key, struct variable *out,
                          struct weir_error *err);
/* Every variable by key; freed with variables_free() (model/variable.h). */
int secrets_store_var_list(struct secrets_store *ss, struct variable **rows, size_t *n,
                           struct weir_error *err);
int secrets_store_var_delete(struct secrets_store *ss, const char *key, struct weir_error *err);

/* ---- jobs' specs with secrets (migration 13) ---- */

/* A job's spec as JSON text, sealed: the spec of a job whose `mask` is not
 * empty (model/job_spec.h), which the jobs table holds masked.  Adds or
 * replaces. */
int secrets_store_spec_put(struct secrets_store *ss, int64_t job_id, const char *text,
                           struct weir_error *err);
/* The text opened into *text (the caller frees it); WEIR_E_NOT_FOUND when
 * the job has none. */
int secrets_store_spec_get(struct secrets_store *ss, int64_t job_id, char **text,
                           struct weir_error *err);

/* Masks `texts` (the secret variables' values, model/variable.h's
 * variable_mask_add() forms) wherever a version before 13 wrote them in
 * clear: jobs' specs (an active job's spec sealed first, as above) and task
 * instances' rendered commands.  One transaction; 0, or -1 with err and
 * nothing changed. */
int secrets_store_scrub(struct secrets_store *ss, const struct strvec *texts,
                        struct weir_error *err);

#endif
