/* env_scrub.h: which of a process's environment variables a task's side
 * (the node's agent, its shims, a launcher, the program) must not inherit
 * from the server (docs/security.md, "The launch routes and a task's
 * environment").
 *
 * Dropped: the server's credentials (WEIR_TOKEN, WEIR_LAUNCH_SECRET: their
 * names hold TOKEN and SECRET, below), every
 * connection and variable the server's environment defines (WEIR_CONN_*,
 * WEIR_VAR_*, AIRFLOW_CONN_*, AIRFLOW_VAR_*: a task gets those it lists,
 * from its register answer), and any name that looks like a secret's
 * (PASSWORD, PASSWD, PASSPHRASE, SECRET, TOKEN, CREDENTIAL, API_KEY,
 * APIKEY, ACCESS_KEY, PRIVATE_KEY anywhere in it, any case).  Everything
 * else (PATH, HOME, LANG, the WEIR_* settings, ...) is kept.
 *
 * Pure: no I/O.
 */
#ifndef WEIR_LIB_ENV_SCRUB_H
#define WEIR_LIB_ENV_SCRUB_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the entry "NAME=VALUE" (or a bare NAME) is one to drop. */
bool env_scrub_drops(const char *entry);

/* How many entries of the NULL-terminated `env` env_scrub_drops. */
size_t env_scrub_count(char *const *env);

#endif
