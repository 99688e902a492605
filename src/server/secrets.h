/* secrets.h: where connections and variables come from, and the one call
 * that resolves each by id.
 *
 * Four sources, lowest first (docs/connections.md):
 *   config       the server's configuration (`connections:`, `variables:`)
 *   store        what the REST API and the CLI wrote (store/secrets_store.h)
 *   environment  the server's own WEIR_CONN_<ID>=URI (or Airflow's JSON form)
 *                and WEIR_VAR_<KEY>=value, read at each lookup
 *   override     `weir dags test --conn ID=URI --var K=V`
 * The highest source that has an id wins, whole (fields are not merged
 * across sources).  The environment and the overrides match an id by its
 * environment name (connection_env_name(): upper-cased, '.' and '-' as
 * '_'), so WEIR_CONN_MY_DB serves my_db, My_Db and my-db; listed on its own
 * it is named by its suffix lower-cased (Airflow's rule).
 *
 * Everything returned is the caller's (connection_release(),
 * variable_release(), secret_*_list_free()).  Errors: -1 with err:
 * WEIR_E_NOT_FOUND naming every place looked, WEIR_E_INVALID for a value
 * that does not read (a bad URI in the environment names the variable,
 * never its value), or the store's own.
 */
#ifndef WEIR_SERVER_SECRETS_H
#define WEIR_SERVER_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "lib/error.h"
#include "lib/strvec.h"
#include "model/connection.h"
#include "model/variable.h"
#include "server/config.h"
#include "store/secrets_store.h"
#include "store/store.h"

enum secret_source {
	SECRET_CONFIG = 1,
	SECRET_STORE,
	SECRET_ENV,
	SECRET_OVERRIDE,
};

/* "config", "store", "environment", "override". */
const char *secret_source_name(enum secret_source s);

struct secrets; /* opaque */

/* The key from HOME/secret.key (made when absent), the store's tables, and
 * copies of the configuration's connections and variables.  NULL with err. */
struct secrets *secrets_create(struct store *store, const char *home,
                               const struct server_config *cfg, struct weir_error *err);
void secrets_destroy(struct secrets *s);

/* The store's tables, for the writes of the API (server/secrets_ops.c). */
struct secrets_store *secrets_store_of(struct secrets *s);

/* Connection `id` from the highest source that has it, into *out (with the
 * password); *src (may be NULL) says which.  The call everything that needs
 * a connection makes: a task's WEIR_CONN_<ID>, templates, the drivers. */
int secrets_conn_resolve(struct secrets *s, const char *id, struct connection *out,
                         enum secret_source *src, struct weir_error *err);
/* Variable `key` likewise. */
int secrets_var_resolve(struct secrets *s, const char *key, struct variable *out,
                        enum secret_source *src, struct weir_error *err);

/* What a task that lists `ids` gets: for each, env[WEIR_CONN_<ID>] = its
 * URI with the password (connection_to_uri()), and in `mask` (a JSON array)
 * every text its output must never show: the password (as written and as
 * the URI encodes it), the URI itself, and the extra's secret-like values
 * (connection_secret_name()).  0, or -1 with err: the first id that does not
 * resolve (env and mask may hold the ones before). */
int secrets_task_env(struct secrets *s, const struct strvec *ids, json_t *env, json_t *mask,
                     struct weir_error *err);

/* Variable `v` (or `key`) written into, or deleted from, the store, as
 * secrets_store_var_set()/_delete() do (WEIR_E_NOT_FOUND for a delete of
 * none), then the listener told: every write of a variable goes through
 * these (the API's, a task's Variable.set).  0, or -1 with err. */
int secrets_var_set(struct secrets *s, const struct variable *v, struct weir_error *err);
int secrets_var_delete(struct secrets *s, const char *key, struct weir_error *err);
/* The listener of those writes (one; NULL: none): the DAG manager, whose
 * Python files that read the variable at their parse are parsed again. */
typedef void (*secrets_var_changed_fn)(void *arg, const char *key);
void secrets_on_var_changed(struct secrets *s, secrets_var_changed_fn fn, void *arg);

/* Every connection (each id once, as it resolves) by id. */
struct secret_conn {
	struct connection c;
	enum secret_source source;
};
int secrets_conn_list(struct secrets *s, struct secret_conn **rows, size_t *n,
                      struct weir_error *err);
void secret_conn_list_free(struct secret_conn *rows, size_t n);

struct secret_var {
	struct variable v;
	enum secret_source source;
};
int secrets_var_list(struct secrets *s, struct secret_var **rows, size_t *n,
                     struct weir_error *err);
void secret_var_list_free(struct secret_var *rows, size_t n);

/* Overrides over every source: "ID=URI" (or ID={JSON}) and "KEY=VALUE", as
 * `weir dags test` takes them.  0, or -1 with err (WEIR_E_INVALID) naming
 * the flag's value by its id, never its password. */
int secrets_override_conn(struct secrets *s, const char *id_eq_uri, struct weir_error *err);
int secrets_override_var(struct secrets *s, const char *key_eq_value, struct weir_error *err);

#endif
