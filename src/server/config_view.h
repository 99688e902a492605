/* config_view.h: the server's configuration as Airflow's GET /config shows
 * it (api_set_config_view()): sections of key = value text, every value a
 * setting the server runs with.  No secret is in it: users (their password
 * hashes), connections and variables are left out whole; Slurm's options
 * and the queues are shown as written.
 */
#ifndef WEIR_SERVER_CONFIG_VIEW_H
#define WEIR_SERVER_CONFIG_VIEW_H

#include <jansson.h>

#include "server/config.h"

/* {"sections":[{"name","options":[{"key","value"}]}]}: core (dags_folder,
 * executor, kill_grace_seconds, log_transport, home), api (listen),
 * resources (vcores, memory_mb, gpus as detected or configured), pools
 * (each configured pool's slots, as weir.yaml seeds them), slurm, and one
 * section per queue ("queue NAME").  New reference; NULL out of memory. */
json_t *server_config_view(const struct server_config *cfg);

#endif
