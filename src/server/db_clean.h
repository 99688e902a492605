/* db_clean.h: removing old history while the server runs (`weir db clean`,
 * POST /api/v1/weir/dbClean; docs/internals/store.md, "Removing old
 * history").
 *
 * A clean counts what it will remove, then removes it in batches of
 * DB_CLEAN_BATCH rows (store/clean_store.h), one batch a loop turn on a
 * timer, so requests and reports are answered in between; each batch is
 * committed with its turn.  The files of each job removed (HOME/jobs/ID:
 * its logs and work directories) are removed after its rows.  One clean
 * at a time.
 */
#ifndef WEIR_SERVER_DB_CLEAN_H
#define WEIR_SERVER_DB_CLEAN_H

#include <uv.h>

#include "api/db_clean_api.h"
#include "lib/error.h"
#include "server/dag_manager.h"
#include "server/job_manager.h"
#include "store/store.h"

#define DB_CLEAN_BATCH 200
/* `retention:`'s first clean comes this long after the start (or after
 * `every`, when shorter), then every `every` */
#define DB_CLEAN_RETENTION_FIRST_MS (60 * 1000)

struct db_clean; /* opaque */

/* `store`, `jm`, `dm` (NULL: none) and `home` (copied) must outlive it.
 * NULL with err. */
struct db_clean *db_clean_create(uv_loop_t *loop, struct store *store, struct job_manager *jm,
                                 struct dag_manager *dm, const char *home, struct weir_error *err);
/* Stops a clean under way (what was removed stays removed) and closes its
 * timer (run the loop once more to finish); frees itself then.  NULL is a
 * no-op. */
void db_clean_destroy(struct db_clean *c);

/* `retention: {older_than, every}` (server/config.h): a clean of what
 * ended more than older_than_s ago, every every_s (the first one
 * DB_CLEAN_RETENTION_FIRST_MS after this call, or every_s when shorter),
 * skipped while a clean is under way; 0: none. */
void db_clean_set_retention(struct db_clean *c, int64_t older_than_s, int64_t every_s);

/* The table to give api_set_db_clean_ops() with the clean as ctx. */
const struct db_clean_api_ops *db_clean_api_ops(void);

#endif
