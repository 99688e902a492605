/* config.h: the server's settings: command line, then HOME/weir.yaml (or
 * --config FILE), then detected defaults.  docs/configuration.md lists
 * every key.
 *
 * Precedence: a command-line flag wins over the file; the file wins over
 * detection.  Ownership: a server_config owns its strings and arrays;
 * server_config_release() frees them.
 */
#ifndef WEIR_SERVER_CONFIG_H
#define WEIR_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"
#include "model/connection.h"
#include "model/role.h"
#include "model/variable.h"

#define SERVER_DEFAULT_HOST "127.0.0.1"
#define SERVER_DEFAULT_PORT 8270

/* Where and how Slurm work is submitted (`slurm:` and each Slurm queue). */
struct server_slurm {
	char *partition, *account, *qos; /* NULL: Slurm's defaults */
	char *time;                      /* sbatch --time as written; NULL: from the timeout */
	char **sbatch_options;           /* added to every sbatch as they are */
	size_t n_sbatch_options;
	char *shared_dir;     /* read by every node: archives are shipped there */
	char *node_cache_dir; /* where a node unpacks them ("%n": its name); NULL:
	                       * shared_dir/nodes/%n */
};

/* A named route for jobs and DAG tasks (a job's `queue:`). */
struct server_queue {
	char *name;
	bool slurm;              /* executor: slurm, else local */
	struct server_slurm opt; /* Slurm queues only; over `slurm:` */
};

struct server_config {
	char *home;        /* absolute or as given; default $HOME/.weir */
	char *config_path; /* NULL: HOME/weir.yaml if it exists */
	char *listen_host; /* default 127.0.0.1 */
	int listen_port;   /* default 8270 */
	bool listen_from_cli;

	int vcores;         /* 0: detect */
	uint64_t memory_mb; /* 0: detect */
	bool gpus_set;      /* the file declared gpus (maybe zero of them) */
	char **gpu_ids;     /* owned */
	size_t n_gpus;

	int kill_grace_s; /* default 5 */

	char *dags_dir; /* the DAG folder; default HOME/dags (filled by server_config_load) */
	bool dags_from_cli;
	struct server_pool *pools; /* `pools: {name: slots}`; default_pool is added by the
	                            * DAG manager when absent */
	size_t n_pools;
	struct server_user *users; /* `users: [{name, password_hash, role?}]`: HTTP Basic auth */
	size_t n_users;

	bool executor_slurm; /* `executor: slurm` (default local): work that names no queue */
	/* local tasks each get a launcher process, no node agent: a throwaway
	 * home (weir dags test) wants nothing that outlives it */
	bool no_agent;
	/* `log_transport: file|http`: how a task's output reaches its log; the
	 * default (0) is file for local work, http for Slurm work */
	enum { SERVER_LOG_DEFAULT = 0, SERVER_LOG_FILE, SERVER_LOG_HTTP } log_transport;
	/* `task_user: NAME`: the user local tasks run as; NULL: `nobody` when
	 * the server runs as root, else the server's own (server/task_user.h) */
	char *task_user;
	struct server_slurm slurm;   /* defaults of all Slurm work (a queue's keys win) */
	struct server_queue *queues; /* `queues: {name: {executor, partition, ...}}` */
	size_t n_queues;
	/* `connections: {id: URI | {conn_type, host, ...}}` and `variables: {key:
	 * value}`: the lowest of the three sources (docs/connections.md) */
	struct connection *connections;
	size_t n_connections;
	struct variable *variables;
	size_t n_variables;
	/* `sensitive_var_conn_names: [name, ...]` (or "a,b"): names added to
	 * the sensitive ones (model/connection.h), as one comma-separated text;
	 * NULL: none */
	char *sensitive_names;
	/* `dag_folder_symlinks: inside|never`: a DAG file that is a symbolic
	 * link is read when its target is inside the DAG folder (default), or
	 * never */
	bool dag_symlinks_never;
	/* `dagbag_import_timeout: SECONDS`: the time a Python DAG file's import
	 * may take (Airflow's key); 0: the default, 30 */
	double dagbag_import_timeout;
	/* `dag_ignore_file_syntax: regexp|glob` (Airflow's key; default
	 * regexp): the syntax of the DAG folder's .airflowignore files */
	bool dag_ignore_glob;
	/* `dags_are_paused_at_creation: true|false` (Airflow's key; default
	 * false, weir's): a DAG the server sees for the first time is paused */
	bool dags_paused_at_creation;
	/* `http: {header_timeout_seconds, body_timeout_seconds,
	 * idle_timeout_seconds, max_pending_heads, secure_cookie}`: the HTTP
	 * server's limits (api/http.h; 0: its defaults) and whether the UI's
	 * cookie always says Secure */
	unsigned http_header_timeout_s, http_body_timeout_s, http_idle_timeout_s;
	unsigned http_max_pending_heads;
	bool http_secure_cookie;
	/* `tls: {cert, key, ca_file}` (or --tls-cert, --tls-key): the server
	 * speaks HTTPS only, with this certificate (PEM, then any
	 * intermediates) and its key (PEM, no passphrase); ca_file: what the
	 * server's own launchers and tasks verify it with (their
	 * WEIR_CA_FILE), default the certificate file itself.  Absolute after
	 * server_config_load() (a file's relative path is the home's, a
	 * flag's the current folder's); NULL: plain HTTP. */
	char *tls_cert, *tls_key, *tls_ca_file;
	bool tls_from_cli;
	/* `retention: {older_than, every}`: a clean of what ended more than
	 * older_than seconds ago (server/db_clean.h), every `every` seconds
	 * (default a day) from the start; 0: none */
	int64_t retention_older_than_s, retention_every_s;
};

/* A user of HTTP Basic auth; the hash is checked by the API (api_set_users). */
struct server_user {
	char *name;
	char *password_hash;
	enum weir_role role; /* `role:`, Admin when not given (docs/security.md, "Roles") */
};

/* A named slot count for DAG tasks (sched/dag_pool.h); slots < 0: unlimited. */
struct server_pool {
	char *name;
	int slots;
	char *queue; /* the queue of its tasks that name none; NULL: none */
};

void server_config_init(struct server_config *cfg);
void server_config_release(struct server_config *cfg);

/* Reads `weir server` flags (argv[0] is "server"): --listen HOST:PORT,
 * --home DIR, --config FILE, --dags DIR, --tls-cert FILE, --tls-key FILE
 * (also --flag=value; the two TLS flags go together).  -1 with err
 * (WEIR_E_INVALID) naming the flag.  Returns 1 (and prints usage) for
 * --help. */
int server_config_parse_args(struct server_config *cfg, int argc, char **argv,
                             struct weir_error *err);

/* "HOST:PORT", ":PORT", "[v6]:PORT" or "PORT".  0 or -1 with err. */
int server_config_parse_listen(const char *text, char **host, int *port, struct weir_error *err);

/* Applies a YAML configuration text (keys: listen, resources {vcores,
 * memory, gpus}, kill_grace_seconds, dags (a folder, relative to the home),
 * pools {name: slots}, users [{name, password_hash, role?}], executor (local or slurm),
 * log_transport (file or http),
 * slurm {partition, account, qos, time, sbatch_options [...], shared_dir},
 * queues {name: {executor, and for slurm the keys of slurm}},
 * connections {id: URI or {conn_type, host, port, login, password, schema,
 * extra, description}}, variables {key: text, or any YAML value, kept as
 * its JSON text}, tls {cert, key, ca_file}).  Unknown keys
 * are errors.  A listen or dags given on
 * the command line is kept.  `origin` names the file in errors. */
int server_config_apply_yaml(struct server_config *cfg, const char *text, size_t len,
                             const char *origin, struct weir_error *err);

/* Fills the home default and loads the config file when there is one
 * (--config must exist; HOME/weir.yaml may be absent); makes the TLS
 * paths absolute. */
int server_config_load(struct server_config *cfg, struct weir_error *err);

#endif
