/* manager.h: the DAG manager's own helpers, shared by its files
 * (server/dag_manager/): the small string setters of its rows and the
 * wake-up note.  The manager's struct and its turns are in
 * server/dag_internal.h; its public face is server/dag_manager.h.
 */
#ifndef WEIR_SERVER_DAG_MANAGER_MANAGER_H
#define WEIR_SERVER_DAG_MANAGER_MANAGER_H

#include <stdint.h>

#include "server/dag_internal.h"

/* *dst = a copy of v ("" for NULL), the old value freed (lib/str.h); left as it was
 * when out of memory. */
void dm_set_str(char **dst, const char *v);

/* A state name into a row's fixed field (STORE_STATE_MAX). */
void dm_set_state(char *dst, const char *name);

/* Something is due at `at` (epoch ms; <= 0: nothing): the wake-up timer,
 * armed at the end of the turn, fires no later. */
void dm_wake_note(struct dag_manager *dm, int64_t at);

#endif
