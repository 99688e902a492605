/* server.h: `weir server`: the one process that owns the store, the event
 * loop, the HTTP API and the local executor.
 *
 * Start-up: flags and config (server/config.h), the home (created 0700),
 * the token, the store, the HTTP listener, recovery, then the loop.
 * SIGTERM/SIGINT: stop accepting, leave running tasks running (their
 * launchers are detached and report when the server is back), close the
 * store, exit 0.
 *
 * The assembly of the parts (server_parts_*) is shared with `weir dags
 * test` (cli/cli_dag_test.h), which runs the same parts in its own process
 * on a temporary home.
 */
#ifndef WEIR_SERVER_SERVER_H
#define WEIR_SERVER_SERVER_H

#include <stddef.h>

#include <uv.h>

#include "api/api.h"
#include "api/http.h"
#include "exec/executor.h"
#include "lib/error.h"
#include "sched/alloc.h"
#include "server/config.h"
#include "server/dag_manager.h"
#include "server/job_manager.h"
#include "server/secrets.h"
#include "store/store.h"

/* argv[0] is "server".  Returns the process exit status: 0 after a clean
 * stop, 2 for bad flags or configuration, 1 when start-up fails. */
int server_main(int argc, char **argv);

/* Everything a server runs on one loop, made in this order: the node's
 * resources, the token, the store, the connections and variables (with the
 * store's key), the job manager, the DAG manager, the
 * API (with its Basic-auth users), the HTTP listener, the local executor
 * (told the listener's address).  Owned by the struct. */
struct db_clean;
struct users;

struct server_parts {
	struct node_resources node; /* gpu_ids: cfg's or `detected` */
	char **detected;
	size_t n_detected;
	char *token;
	struct store *store;
	struct secrets *secrets;   /* connections and variables (server/secrets.h) */
	struct notifier *notifier; /* notifications and SLA misses (server/notifier.h) */
	struct job_manager *jm;
	struct dag_manager *dm;
	struct api *api;
	struct http_server *http;
	struct observe *observe;    /* metrics' gauges, the loop's watch, the event log */
	struct db_clean *clean;     /* removing old history (server/db_clean.h) */
	struct users *users;        /* the users and person's tokens (server/users.h) */
	struct executor *exec;      /* the local backend */
	struct executor *exec_gang; /* Slurm, when `executor: slurm` or a queue uses it */
	char *url; /* where launchers call back, "http://127.0.0.1:PORT" ("https://" with tls:) */
	bool stopped;
};

/* Creates the home (0700 when new) and its folders; cfg->home becomes its
 * real path.  0, or -1 with err. */
int server_prepare_home(struct server_config *cfg, struct weir_error *err);

/* Makes the parts of `p` (zeroed by the call) from a prepared cfg (home,
 * dags_dir, listen host and port (0: any free port), resources, pools,
 * users, kill grace, tls), borrowed for the call.  0; -1 with err when a part
 * cannot be made; -2 with err for a bad configuration (users, the TLS
 * files).  On failure
 * the parts made are stopped: run the loop, then server_parts_release(). */
int server_parts_create(struct server_parts *p, uv_loop_t *loop, struct server_config *cfg,
                        struct weir_error *err);

/* The DAG folder's first read, the job manager's recovery, then the DAG
 * manager's (in that order: docs/internals/dag_manager.md).  0, or -1
 * with err (prefixed with the step). */
int server_parts_recover(struct server_parts *p, struct weir_error *err);

/* Unmakes what lives on the loop (API, listener, managers, executor);
 * running tasks keep running.  Their handles close on the next uv_run.
 * Idempotent. */
void server_parts_stop(struct server_parts *p);

/* After the loop has run down: closes the store and frees the rest. */
void server_parts_release(struct server_parts *p);

#endif
