/* secrets_ops.h: what the connection and variable routes ask of the server
 * (api/secrets_api.h), answered from server/secrets.h.
 *
 * Reads (GET) show every source, each id as it resolves, with weir's field
 * "source" (config, store, environment, override) beside Airflow's; writes
 * (POST, PATCH, DELETE) change the store only: a connection defined in the
 * configuration or the environment is changed there (a PATCH or DELETE of
 * one answers 404 saying where it is).  A password is never in an answer;
 * an extra's fields whose names are secret-like (password, secret, token,
 * api_key, ...: connection_secret_name()) read "***", as Airflow
 * redacts them.
 */
#ifndef WEIR_SERVER_SECRETS_OPS_H
#define WEIR_SERVER_SECRETS_OPS_H

#include "api/secrets_api.h"
#include "server/secrets.h"

/* The table; its ctx is a struct secrets. */
const struct secrets_api_ops *secrets_api_ops(void);

#endif
