/* secrets_api.h: what the connection and variable routes (Airflow's
 * /api/v1/connections and /api/v1/variables, docs/api.md) ask of the
 * server.
 *
 * The routes (api/conn_routes.h) own the paths, methods, ids, paging
 * parameters, update_mask and the body's being a JSON object; the server
 * (server/secrets_ops.c) owns the fields and fills this table.  Each op
 * returns a new JSON reference in Airflow's shape (Connection,
 * ConnectionCollection, Variable, VariableCollection), never holding a
 * password, or NULL / -1 with err (WEIR_E_INVALID -> 400, WEIR_E_NOT_FOUND
 * -> 404, WEIR_E_CONFLICT -> 409).  Strings are borrowed for the call.
 */
#ifndef WEIR_API_SECRETS_API_H
#define WEIR_API_SECRETS_API_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <uv.h>

#include "lib/error.h"

struct secrets_list_query {
	int limit;            /* default 100 */
	int offset;           /* default 0 */
	const char *order_by; /* a field name, '-' before it for descending; NULL: by id */
};

/* update_mask: the fields a PATCH may change (n == 0: every field in the body). */
struct secrets_mask {
	const char *const *fields;
	size_t n;
};

/* A connection test's end, on the loop's thread: whether the connection
 * answered, and what happened (borrowed; never the password). */
typedef void (*secrets_test_done_fn)(void *arg, bool ok, const char *message);

struct secrets_api_ops {
	json_t *(*list_connections)(void *ctx, const struct secrets_list_query *q,
	                            struct weir_error *err);
	json_t *(*get_connection)(void *ctx, const char *id, struct weir_error *err);
	json_t *(*add_connection)(void *ctx, json_t *body, struct weir_error *err);
	json_t *(*patch_connection)(void *ctx, const char *id, json_t *body,
	                            const struct secrets_mask *mask, struct weir_error *err);
	int (*delete_connection)(void *ctx, const char *id, struct weir_error *err);
	/* POST /connections/test: starts testing the connection `body` names
	 * off the loop (a work item of `loop`); done(arg, ...) is called once,
	 * later, on the loop's thread.  0, or -1 with err (a bad body, an id
	 * that resolves nowhere) and done is never called. */
	int (*test_connection)(void *ctx, uv_loop_t *loop, json_t *body, secrets_test_done_fn done,
	                       void *arg, struct weir_error *err);

	json_t *(*list_variables)(void *ctx, const struct secrets_list_query *q,
	                          struct weir_error *err);
	json_t *(*get_variable)(void *ctx, const char *key, struct weir_error *err);
	json_t *(*set_variable)(void *ctx, json_t *body, struct weir_error *err);
	json_t *(*patch_variable)(void *ctx, const char *key, json_t *body,
	                          const struct secrets_mask *mask, struct weir_error *err);
	int (*delete_variable)(void *ctx, const char *key, struct weir_error *err);
};

#endif
