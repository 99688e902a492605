/* users.h: the server's users and person's tokens (`weir users`, `weir
 * tokens`; docs/security.md, "Users" and "Tokens"): the ops of
 * api/users_api.h over the store's tables (store/user_store.h), and the
 * API's list of users who may log in, the configuration's `users:` and the
 * store's together, handed over again at every change.
 *
 * A name in both: the configuration's wins; the store refuses to create
 * it (409), and one created before the same name was configured is left
 * out of the list (a warning at the start) until one is removed.
 */
#ifndef WEIR_SERVER_USERS_H
#define WEIR_SERVER_USERS_H

#include "api/api.h"
#include "api/users_api.h"
#include "lib/error.h"
#include "server/config.h"
#include "server/dag_manager.h"
#include "store/store.h"

/* Refresh a token's last_used at most this often (it is a write). */
#define USERS_TOKEN_TOUCH_MS (60 * 1000)

struct users; /* opaque */

/* Over `store`, `api` and `dm` (all outlive it), the configuration's users
 * copied; the API's list of users set, and their names given to the DAG
 * manager (its check of DAGs' access lists), again at every change.  NULL
 * with err (a configured or stored hash that is malformed, out of memory). */
struct users *users_create(struct store *store, struct api *api, struct dag_manager *dm,
                           const struct server_user *cfg, size_t n_cfg, struct weir_error *err);
void users_destroy(struct users *u);

/* The ops table for api_set_users_ops(p->api, users_api_ops(), u). */
const struct users_api_ops *users_api_ops(void);

#endif
