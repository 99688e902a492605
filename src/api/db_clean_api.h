/* db_clean_api.h: what POST and GET /api/v1/weir/dbClean (weir db clean,
 * api/db_clean_routes.h) ask of the server (server/db_clean.c fills the
 * table).
 *
 * Values passed in are borrowed for the call; bodies handed back are the
 * caller's.  Errors: NULL with err (WEIR_E_INVALID -> 400,
 * WEIR_E_CONFLICT -> 409: a clean is under way).
 */
#ifndef WEIR_API_DB_CLEAN_API_H
#define WEIR_API_DB_CLEAN_API_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/error.h"

struct db_clean_request {
	int64_t older_than_s;  /* what ended more than this long ago */
	bool dry_run;          /* count only */
	const char *dags_json; /* a JSON array of DAG ids; NULL: all, and the jobs of none */
};

struct db_clean_api_ops {
	/* A dry run's counts, or a clean begun (it goes on in batches, one a
	 * loop turn): what it will remove. */
	json_t *(*start)(void *ctx, const struct db_clean_request *r, struct weir_error *err);
	/* The clean under way or the last one: its state and counts. */
	json_t *(*status)(void *ctx);
};

#endif
