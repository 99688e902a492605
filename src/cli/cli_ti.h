/* cli_ti.h: a task instance (an Airflow taskInstance object) as the CLI
 * prints it: its state, its name, the lines of its changes.  `weir dags`,
 * `weir tasks` and `weir dags test` share them. */
#ifndef WEIR_CLI_TI_H
#define WEIR_CLI_TI_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* A task instance's state as text: "none" for Airflow's null. */
const char *cli_ti_state(json_t *ti);
/* success, failed, upstream_failed, skipped, removed: the TI will not run again on its own
 * (up_for_retry will). */
bool cli_ti_state_is_final(const char *state);
/* "task" or "task[2]" (a foreach instance) into buf; returns buf. */
char *cli_ti_name(json_t *ti, char *buf, size_t size);

/* Prints one line per task instance whose "state/try" differs from what
 * `seen` (an object by TI name, updated) holds: "HH:MM:SS [PREFIX ]NAME
 * STATE[ (try N)]"; a TI first seen still waiting (none, scheduled) is
 * recorded, not printed; the instances that ended are printed before the
 * others (what one look saw end came before what it saw start).  `prefix`
 * may be NULL.  `weir dags trigger --wait`
 * and `weir dags test` print runs so. */
void cli_ti_print_changes(json_t *seen, json_t *tis, const char *prefix);

#endif
