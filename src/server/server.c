/* server.c: `weir server`: start-up, the loop, and a clean stop.
 *
 * Owns the order things are made and unmade in: the job manager before the
 * API (the API calls it), the API before the HTTP listener (the listener
 * hands it requests), the executor once the port is known (launchers are
 * told where to call back).  Teardown is the reverse; no task is touched.
 * That assembly is server_parts_*, so that `weir dags test` (cli/cli_dag_test.c)
 * runs the very same parts rather than a copy of them.
 */
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "api/api.h"
#include "api/http.h"
#include "exec/local.h"
#include "exec/slurm.h"
#include "launch/cgroup.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/tls.h"
#include "sched/alloc.h"
#include "server/config.h"
#include "server/config_view.h"
#include "server/dag_manager.h"
#include "server/db_clean.h"
#include "server/job_manager.h"
#include "server/notifier.h"
#include "server/observe.h"
#include "server/resources.h"
#include "server/secrets_ops.h"
#include "server/task_user.h"
#include "server/token.h"
#include "server/users.h"
#include "store/store.h"

struct server {
	uv_loop_t loop;
	uv_signal_t sigterm, sigint;
	struct server_parts parts;
	bool stopping;
};

static void stop(struct server *s)
{
	if (s->stopping)
		return;
	s->stopping = true;
	log_info("stopping: tasks keep running and report when the server is back");
	server_parts_stop(&s->parts);
	uv_close((uv_handle_t *)&s->sigterm, NULL);
	uv_close((uv_handle_t *)&s->sigint, NULL);
}

static void on_signal(uv_signal_t *h, int signum)
{
	(void)signum;
	stop(h->data);
}

/* The address launchers call back on: loopback when listening on every
 * address or on loopback, else the address itself; https with tls:. */
static char *callback_url(const char *host, int port, bool tls)
{
	char *url = NULL;
	const char *h = host;

	if (!h || !*h || !strcmp(h, "0.0.0.0") || !strcmp(h, "::") || !strcmp(h, "localhost"))
		h = "127.0.0.1";
	if (asprintf(&url, strchr(h, ':') ? "%s://[%s]:%d" : "%s://%s:%d", tls ? "https" : "http",
	             h, port) < 0)
		return NULL;
	return url;
}

/* Whether a listen address reaches this machine only. */
static bool listen_is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (!strcmp(host, "localhost"))
		return true;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* tls: the certificate and key read and checked (lib/tls.h); a key others
 * may read, or a certificate out of date, said in the log. */
static int load_tls(const struct server_config *cfg, struct tls_server_keys *keys,
                    struct weir_error *err)
{
	struct stat st;

	if (tls_server_keys_load(cfg->tls_cert, cfg->tls_key, keys, err) < 0)
		return -1;
	if (stat(cfg->tls_key, &st) == 0 && (st.st_mode & 077))
		log_warn("tls.key %s: its group or others may read it (mode %04o): whoever reads "
		         "it can pose as this server; chmod 600 it",
		         cfg->tls_key, (unsigned)(st.st_mode & 07777));
	if (keys->not_after != (time_t)-1 && keys->not_after < time(NULL))
		log_warn("tls.cert %s: it expired (at %lld, seconds since 1970): clients refuse it",
		         cfg->tls_cert, (long long)keys->not_after);
	return 0;
}

int server_prepare_home(struct server_config *cfg, struct weir_error *err)
{
	char real[PATH_MAX];
	char *sub;
	bool fresh = !fs_exists(cfg->home);

	if (fs_mkdir_p(cfg->home, 0700, err) < 0)
		return -1;
	if (fresh)
		chmod(cfg->home, 0700);
	if (!realpath(cfg->home, real))
		return weir_error_set(err, WEIR_E_INTERNAL, "%s: %s", cfg->home, strerror(errno));
	free(cfg->home);
	cfg->home = strdup(real);
	if (!cfg->home)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	const char *subs[] = {"jobs", "cache"};
	for (size_t i = 0; i < 2; i++) {
		sub = fs_join(cfg->home, subs[i]);
		if (!sub)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		if (fs_mkdir_p(sub, 0755, err) < 0) {
			free(sub);
			return -1;
		}
		free(sub);
	}
	return 0;
}

/* ---- the parts ---- */

static void detect_node(struct server_parts *p, const struct server_config *cfg)
{
	p->node.vcores = cfg->vcores > 0 ? cfg->vcores : resources_detect_vcores();
	p->node.memory_mb = cfg->memory_mb > 0 ? cfg->memory_mb : resources_detect_memory_mb();
	if (cfg->gpus_set) {
		p->node.gpu_ids = (const char *const *)cfg->gpu_ids;
		p->node.n_gpus = cfg->n_gpus;
	} else if (resources_detect_gpus(&p->detected, &p->n_detected) == 0) {
		p->node.gpu_ids = (const char *const *)p->detected;
		p->node.n_gpus = p->n_detected;
	}
}

static bool server_uses_slurm(const struct server_config *cfg)
{
	if (cfg->executor_slurm)
		return true;
	for (size_t i = 0; i < cfg->n_queues; i++)
		if (cfg->queues[i].slurm)
			return true;
	return false;
}

/* The config's queues to the job manager, with the backends. */
static int set_routes(struct server_parts *p, const struct server_config *cfg,
                      struct weir_error *err)
{
	struct job_manager_queue *q = calloc(cfg->n_queues + 1, sizeof *q);
	int rc;

	if (!q)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	for (size_t i = 0; i < cfg->n_queues; i++) {
		const struct server_queue *c = &cfg->queues[i];
		q[i].name = c->name;
		q[i].gang = c->slurm;
		q[i].place.partition = c->opt.partition;
		q[i].place.account = c->opt.account;
		q[i].place.qos = c->opt.qos;
		q[i].place.time = c->opt.time;
		q[i].place.options = (const char *const *)c->opt.sbatch_options;
		q[i].place.n_options = c->opt.n_sbatch_options;
		q[i].shared_dir = c->opt.shared_dir;
		q[i].node_cache_dir = c->opt.node_cache_dir;
	}
	job_manager_set_shipping(p->jm, cfg->slurm.shared_dir, cfg->slurm.node_cache_dir);
	for (size_t i = 0; i < cfg->n_pools; i++) {
		bool known = !cfg->pools[i].queue;
		for (size_t k = 0; !known && k < cfg->n_queues; k++)
			known = !strcmp(cfg->queues[k].name, cfg->pools[i].queue);
		if (!known) {
			free(q);
			return weir_error_set(err, WEIR_E_INVALID,
			                      "pools.%s.queue: no queue \"%s\" in queues:",
			                      cfg->pools[i].name, cfg->pools[i].queue);
		}
	}
	rc = job_manager_set_routes(p->jm, p->exec, p->exec_gang, cfg->executor_slurm, q,
	                            cfg->n_queues, err);
	free(q);
	return rc;
}

/* The job manager's observer: what it changed wakes the api's waiters. */
/* The turn's end before an answer leaves: what it promises is stored, or
 * a change is answered 503 (a full disk). */
static void turn_end_before_answer(struct http_request *req, void *jm)
{
	struct weir_error err = {0};

	if (job_manager_turn_end_stored(jm, &err) < 0)
		api_answer_unstored(req, &err);
}

/* The turn's end before the agent's reports are acknowledged: true when
 * what they said was stored; `durable` (right before the acknowledgements
 * leave: the agent then drops the results from its journal): stored so
 * that a power cut keeps it. */
static bool turn_end_before_ack(void *jm, bool durable)
{
	return (durable ? job_manager_turn_end_durable(jm, NULL)
	                : job_manager_turn_end_stored(jm, NULL)) == 0;
}

static void observe_cluster(void *api, int64_t job_id)
{
	api_notify_cluster(api, job_id);
}

static void observe_jobs(void *api)
{
	api_notify_jobs(api);
}

static void observe_logs(void *api, int64_t job_id)
{
	api_notify_logs(api, job_id);
}

/* GET /health: a query on the store (the schema version's row of its meta
 * table) and the DAG manager's last periodic pass. */
static void parts_health(void *ctx, struct api_health *out)
{
	struct server_parts *p = ctx;
	struct weir_error err = {0};
	char *v = NULL;

	out->db_ok = store_meta_get(p->store, "schema_version", &v, &err) >= 0;
	if (!out->db_ok)
		log_warn("health: %s", err.msg);
	free(v);
	out->last_pass_ms = dag_manager_last_pass(p->dm);
}

int server_parts_create(struct server_parts *p, uv_loop_t *loop, struct server_config *cfg,
                        struct weir_error *err)
{
	char *db = NULL;
	struct tls_server_keys keys = {0};
	int rc = -1;

	memset(p, 0, sizeof *p);
	detect_node(p, cfg);
	p->token = server_token_load_or_create(cfg->home, err);
	if (!p->token) {
		weir_error_prefix(err, "token");
		goto out;
	}
	db = fs_join(cfg->home, "weir.db");
	if (!db) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	p->store = store_open(db, err);
	if (!p->store) {
		weir_error_prefix(err, "store %s", db);
		goto out;
	}
	p->secrets = secrets_create(p->store, cfg->home, cfg, err);
	if (!p->secrets) {
		weir_error_prefix(err, "connections and variables");
		goto out;
	}
	p->notifier = notifier_create(loop, p->store, p->secrets, err);
	if (!p->notifier) {
		weir_error_prefix(err, "notifications");
		goto out;
	}
	p->observe = observe_create(loop, p->store, err);
	if (!p->observe)
		goto out;
	p->jm = job_manager_create(loop, p->store, &p->node, cfg->home, err);
	if (!p->jm)
		goto out;
	job_manager_set_secrets(p->jm, p->secrets);
	job_manager_set_read_key(p->jm, p->token);
	p->dm = dag_manager_create(loop, p->store, p->jm, cfg->home, cfg->dags_dir, cfg->pools,
	                           cfg->n_pools, err);
	if (!p->dm) {
		weir_error_prefix(err, "DAGs");
		goto out;
	}
	p->clean = db_clean_create(loop, p->store, p->jm, p->dm, cfg->home, err);
	if (!p->clean)
		goto out;
	p->api = api_create(loop, p->token, job_manager_api_ops(), p->jm);
	if (!p->api) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	dag_manager_set_secrets(p->dm, p->secrets);
	dag_manager_set_symlinks_never(p->dm, cfg->dag_symlinks_never);
	dag_manager_set_paused_at_creation(p->dm, cfg->dags_paused_at_creation);
	if (cfg->dagbag_import_timeout > 0)
		dag_manager_set_import_timeout(p->dm, cfg->dagbag_import_timeout);
	dag_manager_set_ignore_glob(p->dm, cfg->dag_ignore_glob);
	dag_manager_set_notifier(p->dm, p->notifier);
	api_set_dag_ops(p->api, dag_manager_api_ops(), p->dm);
	api_set_notification_ops(p->api, notifier_api_ops(), p->notifier);
	api_set_secrets_ops(p->api, secrets_api_ops(), p->secrets);
	api_set_dataset_ops(p->api, dag_manager_dataset_ops(), p->dm);
	api_set_health(p->api, parts_health, p);
	api_set_config_view(p->api, server_config_view(cfg));
	api_set_observe_ops(p->api, observe_api_ops(), p->observe);
	api_set_db_clean_ops(p->api, db_clean_api_ops(), p->clean);
	db_clean_set_retention(p->clean, cfg->retention_older_than_s, cfg->retention_every_s);
	p->users = users_create(p->store, p->api, p->dm, cfg->users, cfg->n_users, err);
	if (!p->users) {
		weir_error_prefix(err, "users");
		rc = -2;
		goto out;
	}
	api_set_users_ops(p->api, users_api_ops(), p->users);
	api_set_secure_cookie(p->api, cfg->http_secure_cookie);
	if (cfg->tls_cert && load_tls(cfg, &keys, err) < 0) {
		rc = -2;
		goto out;
	}
	{
		struct http_tls_keys tls = {keys.cert_pem, keys.key_pem};
		struct http_limits lim = {
		    .header_timeout_s = cfg->http_header_timeout_s,
		    .body_timeout_s = cfg->http_body_timeout_s,
		    .idle_timeout_s = cfg->http_idle_timeout_s,
		    .max_pending_heads = cfg->http_max_pending_heads,
		};
		unsigned long nofile = http_raise_nofile_limit();

		p->http =
		    http_server_create_with(loop, cfg->listen_host, cfg->listen_port, &lim,
		                            cfg->tls_cert ? &tls : NULL, api_handle, p->api, err);
		tls_server_keys_release(&keys);
		if (!p->http)
			goto out;
		log_info("HTTP: at most %u connections (open files: %lu)",
		         http_server_connection_limit(p->http), nofile);
	}
	http_server_set_done(p->http, api_request_done, p->api);
	/* nothing leaves before its turn is stored (job_manager_turn_end()) */
	http_server_set_before_answer(p->http, turn_end_before_answer, p->jm);
	p->url = callback_url(cfg->listen_host, http_server_port(p->http), cfg->tls_cert != NULL);
	if (!p->url || notifier_set_base_url(p->notifier, p->url) < 0) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto out;
	}
	p->exec = local_executor_create(loop, NULL, p->url, p->token, cfg->kill_grace_s,
	                                job_manager_on_launcher_exit, p->jm, err);
	if (!p->exec || local_executor_set_task_user(p->exec, task_user_current(), err) < 0)
		goto out;
	/* local tasks as shims of the node's agent (docs/internals/launch.md);
	 * WEIR_AGENT=0 (or cfg->no_agent) keeps a launcher process per task */
	const char *use_agent = getenv("WEIR_AGENT");
	if (!cfg->no_agent && (!use_agent || strcmp(use_agent, "0"))) {
		struct weir_error e2 = {0};
		if (local_executor_use_agent(p->exec, cfg->home, job_manager_on_agent_reports,
		                             &e2) < 0)
			log_warn("the node's agent: %s; starting a launcher per task instead",
			         e2.msg);
		else {
			local_executor_set_end_turn(p->exec, turn_end_before_ack, p->jm);
			local_executor_set_known(p->exec, job_manager_knows_nonce, p->jm);
		}
	}
	if (server_uses_slurm(cfg)) {
		struct slurm_options so = {
		    .partition = cfg->slurm.partition,
		    .account = cfg->slurm.account,
		    .qos = cfg->slurm.qos,
		    .time = cfg->slurm.time,
		    .sbatch_options = (const char *const *)cfg->slurm.sbatch_options,
		    .n_sbatch_options = cfg->slurm.n_sbatch_options,
		};
		p->exec_gang = slurm_executor_create(loop, &so, NULL, p->url, p->token,
		                                     job_manager_on_gang_event, p->jm, err);
		if (!p->exec_gang)
			goto out;
	}
	/* the log's way: file for local work and http for Slurm's, unless set */
	p->exec->log_to_server = cfg->log_transport == SERVER_LOG_HTTP;
	if (p->exec_gang)
		p->exec_gang->log_to_server = cfg->log_transport != SERVER_LOG_FILE;
	if (set_routes(p, cfg, err) < 0) {
		if (err->kind == WEIR_E_INVALID)
			rc = -2; /* a bad configuration */
		goto out;
	}
	job_manager_set_observer(p->jm, &(struct job_manager_observer){
	                                    .cluster_changed = observe_cluster,
	                                    .jobs_changed = observe_jobs,
	                                    .logs_changed = observe_logs,
	                                    .ctx = p->api,
	                                });
	rc = 0;
out:
	if (rc < 0)
		server_parts_stop(p);
	tls_server_keys_release(&keys);
	free(db);
	return rc;
}

int server_parts_recover(struct server_parts *p, struct weir_error *err)
{
	/* the DAGs first, so that jobs the job manager's recovery settles find
	 * their task instances' DAGs; then the runs */
	if (notifier_recover(p->notifier, err) < 0) {
		weir_error_prefix(err, "notifications");
		return -1;
	}
	if (dag_manager_load(p->dm, err) < 0) {
		weir_error_prefix(err, "DAGs");
		return -1;
	}
	job_manager_turn_end(p->jm);
	if (job_manager_recover(p->jm, err) < 0) {
		weir_error_prefix(err, "recovery");
		return -1;
	}
	job_manager_turn_end(p->jm);
	if (dag_manager_recover(p->dm, err) < 0) {
		weir_error_prefix(err, "DAG recovery");
		return -1;
	}
	job_manager_turn_end(p->jm);
	/* the server has started: work is handed out from here, and the
	 * backends tell what they heard meanwhile (docs/internals/recovery.md) */
	job_manager_open(p->jm);
	job_manager_turn_end(p->jm);
	return 0;
}

void server_parts_stop(struct server_parts *p)
{
	if (p->stopped)
		return;
	p->stopped = true;
	/* what the last turn did, stored while its parties are all here */
	if (p->jm)
		job_manager_turn_end(p->jm);
	/* answers given while stopping reach no api */
	if (p->http)
		http_server_set_done(p->http, NULL, NULL);
	api_destroy(p->api);
	p->api = NULL;
	http_server_destroy(p->http);
	p->http = NULL;
	observe_destroy(p->observe);
	p->observe = NULL;
	db_clean_destroy(p->clean);
	p->clean = NULL;
	users_destroy(p->users);
	p->users = NULL;
	dag_manager_destroy(p->dm);
	p->dm = NULL;
	notifier_stop(p->notifier);
	p->notifier = NULL;
	job_manager_destroy(p->jm);
	p->jm = NULL;
	if (p->exec)
		p->exec->ops->destroy(p->exec);
	p->exec = NULL;
	if (p->exec_gang)
		p->exec_gang->ops->destroy(p->exec_gang);
	p->exec_gang = NULL;
}

void server_parts_release(struct server_parts *p)
{
	server_parts_stop(p);
	secrets_destroy(p->secrets);
	p->secrets = NULL;
	store_close(p->store);
	p->store = NULL;
	resources_free_ids(p->detected, p->n_detected);
	p->detected = NULL;
	p->n_detected = 0;
	free(p->url);
	p->url = NULL;
	free(p->token);
	p->token = NULL;
}

/* ---- weir server ---- */

int server_main(int argc, char **argv)
{
	struct server s;
	struct server_config cfg;
	struct weir_error err = {0};
	struct server_parts *p = &s.parts;
	char mem[32], cg_line[512], tu_line[512];
	struct task_user tu;
	struct cgroup_support cg;
	int rc = 1, r;
	const char *scheme;

	memset(&s, 0, sizeof s);
	server_config_init(&cfg);
	signal(SIGPIPE, SIG_IGN);
	r = server_config_parse_args(&cfg, argc, argv, &err);
	if (r != 0) {
		rc = r > 0 ? 0 : 2;
		if (r < 0)
			log_error("%s", err.msg);
		goto out;
	}
	/* the home first (the config file lives there), then the config */
	if (server_config_load(&cfg, &err) < 0) {
		log_error("%s", err.msg);
		rc = 2;
		goto out;
	}
	/* the server's own launchers and tasks verify its certificate with
	 * this file (lib/tls.h): set before any thread reads the environment */
	if (cfg.tls_cert &&
	    setenv("WEIR_CA_FILE", cfg.tls_ca_file ? cfg.tls_ca_file : cfg.tls_cert, 1) < 0) {
		log_error("WEIR_CA_FILE: %s", strerror(errno));
		goto out;
	}
	/* what the server makes is its own (folders 0711, files 0600); a task
	 * gets umask 022 of its own (supervise.c) */
	umask(066);
	if (task_user_decide(cfg.task_user, geteuid(), &tu, &err) < 0) {
		log_error("%s", err.msg);
		rc = 2;
		goto out;
	}
	task_user_set_current(&tu);
	if (server_prepare_home(&cfg, &err) < 0 ||
	    task_user_tighten_home(cfg.home, &tu, &err) < 0) {
		log_error("home: %s", err.msg);
		goto out;
	}
	if (uv_loop_init(&s.loop) != 0) {
		log_error("cannot create the event loop");
		goto out;
	}
	r = server_parts_create(p, &s.loop, &cfg, &err);
	if (r < 0) {
		log_error("%s", err.msg);
		rc = r == -2 ? 2 : 1;
		goto out_loop;
	}
	scheme = cfg.tls_cert ? "https" : "http";

	if (!cfg.tls_cert && !listen_is_loopback(cfg.listen_host))
		log_warn("listening on %s without TLS: tokens and passwords cross the network in "
		         "clear, readable by anyone on the path; give tls: {cert, key} "
		         "(docs/security.md)",
		         cfg.listen_host);
	if (cfg.executor_slurm) {
		printf("weir server: listening on %s://%s%s%s:%d, home %s, executor: slurm "
		       "(resources: Slurm's)\n",
		       scheme, strchr(cfg.listen_host, ':') ? "[" : "", cfg.listen_host,
		       strchr(cfg.listen_host, ':') ? "]" : "", http_server_port(p->http),
		       cfg.home);
		fflush(stdout);
	} else {
		char gpus[512] = "";
		size_t off = 0;
		for (size_t i = 0; i < p->node.n_gpus && off < sizeof gpus - 2; i++)
			off += (size_t)snprintf(gpus + off, sizeof gpus - off, "%s%s", i ? "," : "",
			                        p->node.gpu_ids[i]);
		printf("weir server: listening on %s://%s%s%s:%d, home %s, resources: %d vcores, "
		       "%s memory, %zu gpus%s%s%s\n",
		       scheme, strchr(cfg.listen_host, ':') ? "[" : "", cfg.listen_host,
		       strchr(cfg.listen_host, ':') ? "]" : "", http_server_port(p->http), cfg.home,
		       p->node.vcores, alloc_format_memory(p->node.memory_mb, mem, sizeof mem),
		       p->node.n_gpus, p->node.n_gpus ? " (" : "", gpus, p->node.n_gpus ? ")" : "");
		cgroup_detect(&cg);
		printf("weir server: memory limits: %s\n",
		       cgroup_describe(&cg, cg_line, sizeof cg_line));
	}
	task_user_describe(&tu, tu_line, sizeof tu_line);
	printf("%s\n", tu_line);
	fflush(stdout);

	if (server_parts_recover(p, &err) < 0) {
		log_error("%s", err.msg);
		goto out_loop;
	}
	{
		int dags, errs, runs;
		dag_manager_counts(p->dm, &dags, &errs, &runs);
		log_info("DAG folder %s: %d DAGs, %d import errors, %d active runs", cfg.dags_dir,
		         dags, errs, runs);
	}
	{
		int jobs, tasks;
		job_manager_counts(p->jm, &jobs, &tasks);
		if (jobs > 0)
			log_info("recovered %d active jobs, %d tasks not ended", jobs, tasks);
	}

	uv_signal_init(&s.loop, &s.sigterm);
	uv_signal_init(&s.loop, &s.sigint);
	s.sigterm.data = &s;
	s.sigint.data = &s;
	uv_signal_start(&s.sigterm, on_signal, SIGTERM);
	uv_signal_start(&s.sigint, on_signal, SIGINT);

	uv_run(&s.loop, UV_RUN_DEFAULT);
	rc = 0;
out_loop:
	/* start-up failed part way: unmake what was made (a no-op after stop()) */
	server_parts_stop(p);
	uv_run(&s.loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&s.loop) != 0)
		log_warn("event loop closed with handles still open");
out:
	server_parts_release(p);
	server_config_release(&cfg);
	return rc;
}
