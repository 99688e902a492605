/* folder.h: the DAG folder (folder.c): one entry per DAG file, kept in
 * step with the folder by a watch and a rescan timer.
 */
#ifndef WEIR_SERVER_DAG_MANAGER_FOLDER_H
#define WEIR_SERVER_DAG_MANAGER_FOLDER_H

#include "server/dag_internal.h"

/* Reads the folder: new and changed files are parsed (a broken one is an
 * import error), missing ones deactivate their DAG.  Inside a turn; drops
 * the turn's run copies (a new parse replaces the spec they point at). */
void dm_scan(struct dag_manager *dm);

/* Starts watching the folder: the scan timer (every RESCAN_MS) and, where
 * the platform has one, a change event.  Each handle started counts in
 * dm->open_handles (scan timer, then the event). */
void dm_folder_watch(struct dag_manager *dm);

/* Frees every entry (their parsed DAGs too). */
void dm_entries_free(struct dag_manager *dm);

#endif
