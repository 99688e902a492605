/* admin_store.h: the pools table (what Airflow's /pools routes change) and
 * a DAG's removal with everything it recorded.
 *
 * Pools: the configuration seeds them (a name the table never had is
 * added; one the API deleted stays deleted: its row is kept, marked, so a
 * restart does not bring it back); the API changes them, and the table is
 * what the server uses from then on.  Calls run inside the caller's
 * transaction (store.h's turn); errors are WEIR_E_INTERNAL unless said.
 */
#ifndef WEIR_STORE_ADMIN_STORE_H
#define WEIR_STORE_ADMIN_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"
#include "store/store.h"

struct pool_row {
	char *name;
	int slots;         /* -1: unlimited */
	char *description; /* NULL: none */
	char *queue;       /* the queue of its tasks that name none (weir.yaml); NULL: none */
};

/* Adds the pool unless the table has (or had) that name; the queue, which
 * only the configuration sets, is written either way. */
int admin_pool_seed(struct store *s, const struct pool_row *p, struct weir_error *err);
/* The pools not deleted, by name. */
int admin_pool_list(struct store *s, struct pool_row **rows, size_t *n, struct weir_error *err);
/* Adds the pool (WEIR_E_CONFLICT when one of that name exists), or with
 * `replace` writes it over the one named `old_name` (WEIR_E_NOT_FOUND when
 * there is none; WEIR_E_CONFLICT when a rename takes a name in use). */
int admin_pool_put(struct store *s, const char *old_name, const struct pool_row *p, bool replace,
                   struct weir_error *err);
/* Deletes the pool (kept as a marked row); WEIR_E_NOT_FOUND when there is none. */
int admin_pool_delete(struct store *s, const char *name, struct weir_error *err);
void pool_row_release(struct pool_row *p);
void pool_rows_free(struct pool_row *rows, size_t n);

/* Deletes the DAG's row and with it (the tables' cascades) its runs, task
 * instances and tries.  WEIR_E_NOT_FOUND when there is no such DAG. */
int admin_dag_delete(struct store *s, const char *dag_id, struct weir_error *err);

#endif
