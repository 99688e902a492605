/* server.c: `weir server`: start-up, the loop, and a clean stop.
 *
 * Owns the order things are made and unmade in: the job manager before the
 * API (the API calls it), the API before the HTTP listener (the listener
 * hands it requests), the executor once the port is known (launchers are
 * told where to call back).  Teardown is the reverse; no task is touched.
 */
#include "server/server.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <uv.h>

#include "api/api.h"
#include "api/http.h"
#include "exec/cgroup.h"
#include "exec/local.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "sched/alloc.h"
#include "server/config.h"
#include "server/dag_manager.h"
#include "server/job_manager.h"
#include "server/resources.h"
#include "server/token.h"
#include "store/store.h"

struct server {
	uv_loop_t loop;
	uv_signal_t sigterm, sigint;
	struct store *store;
	struct job_manager *jm;
	struct dag_manager *dm;
	struct api *api;
	struct http_server *http;
	struct executor *exec;
	bool stopping;
};

static void stop(struct server *s)
{
	if (s->stopping)
		return;
	s->stopping = true;
	log_info("stopping: tasks keep running and report when the server is back");
	api_destroy(s->api);
	s->api = NULL;
	http_server_destroy(s->http);
	s->http = NULL;
	dag_manager_destroy(s->dm);
	s->dm = NULL;
	job_manager_destroy(s->jm);
	s->jm = NULL;
	if (s->exec)
		s->exec->ops->destroy(s->exec);
	s->exec = NULL;
	uv_close((uv_handle_t *)&s->sigterm, NULL);
	uv_close((uv_handle_t *)&s->sigint, NULL);
}

static void on_signal(uv_signal_t *h, int signum)
{
	(void)signum;
	stop(h->data);
}

/* The address launchers call back on: loopback when listening on every
 * address or on loopback, else the address itself. */
static char *callback_url(const char *host, int port)
{
	char *url = NULL;
	const char *h = host;

	if (!h || !*h || !strcmp(h, "0.0.0.0") || !strcmp(h, "::") || !strcmp(h, "localhost"))
		h = "127.0.0.1";
	if (asprintf(&url, strchr(h, ':') ? "http://[%s]:%d" : "http://%s:%d", h, port) < 0)
		return NULL;
	return url;
}

static int prepare_home(struct server_config *cfg, struct weir_error *err)
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

int server_main(int argc, char **argv)
{
	struct server s;
	struct server_config cfg;
	struct weir_error err = {0};
	struct node_resources node = {0};
	char **detected = NULL;
	size_t n_detected = 0;
	char *token = NULL, *db = NULL, *url = NULL;
	char mem[32], cg_line[512];
	struct cgroup_support cg;
	int rc = 1, r;

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
	if (prepare_home(&cfg, &err) < 0) {
		log_error("home: %s", err.msg);
		goto out;
	}
	token = server_token_load_or_create(cfg.home, &err);
	if (!token) {
		log_error("token: %s", err.msg);
		goto out;
	}

	node.vcores = cfg.vcores > 0 ? cfg.vcores : resources_detect_vcores();
	node.memory_mb = cfg.memory_mb > 0 ? cfg.memory_mb : resources_detect_memory_mb();
	if (cfg.gpus_set) {
		node.gpu_ids = (const char *const *)cfg.gpu_ids;
		node.n_gpus = cfg.n_gpus;
	} else if (resources_detect_gpus(&detected, &n_detected) == 0) {
		node.gpu_ids = (const char *const *)detected;
		node.n_gpus = n_detected;
	}

	db = fs_join(cfg.home, "weir.db");
	if (!db)
		goto out;
	s.store = store_open(db, &err);
	if (!s.store) {
		log_error("store %s: %s", db, err.msg);
		goto out;
	}
	if (uv_loop_init(&s.loop) != 0) {
		log_error("cannot create the event loop");
		goto out;
	}
	s.jm = job_manager_create(&s.loop, s.store, &node, cfg.home, &err);
	if (!s.jm) {
		log_error("%s", err.msg);
		goto out_loop;
	}
	s.dm = dag_manager_create(&s.loop, s.store, s.jm, cfg.home, cfg.dags_dir, cfg.pools,
	                          cfg.n_pools, &err);
	if (!s.dm) {
		log_error("DAGs: %s", err.msg);
		goto out_loop;
	}
	s.api = api_create(&s.loop, token, job_manager_api_ops(), s.jm);
	if (!s.api) {
		log_error("out of memory");
		goto out_loop;
	}
	api_set_dag_ops(s.api, dag_manager_api_ops(), s.dm);
	if (cfg.n_users > 0) {
		struct basic_user *users = calloc(cfg.n_users, sizeof *users);
		int ur;
		for (size_t i = 0; users && i < cfg.n_users; i++) {
			users[i].name = cfg.users[i].name;
			users[i].password_hash = cfg.users[i].password_hash;
		}
		ur = users ? api_set_users(s.api, users, cfg.n_users, &err)
		           : weir_error_set(&err, WEIR_E_INTERNAL, "out of memory");
		free(users);
		if (ur < 0) {
			log_error("users: %s", err.msg);
			rc = 2;
			goto out_loop;
		}
	}
	s.http =
	    http_server_create(&s.loop, cfg.listen_host, cfg.listen_port, api_handle, s.api, &err);
	if (!s.http) {
		log_error("%s", err.msg);
		goto out_loop;
	}
	url = callback_url(cfg.listen_host, http_server_port(s.http));
	s.exec = local_executor_create(&s.loop, NULL, url, token, cfg.kill_grace_s,
	                               job_manager_on_launcher_exit, s.jm, &err);
	if (!s.exec) {
		log_error("%s", err.msg);
		goto out_loop;
	}
	job_manager_set_executor(s.jm, s.exec);
	job_manager_set_api(s.jm, s.api);

	{
		char gpus[512] = "";
		size_t off = 0;
		for (size_t i = 0; i < node.n_gpus && off < sizeof gpus - 2; i++)
			off += (size_t)snprintf(gpus + off, sizeof gpus - off, "%s%s", i ? "," : "",
			                        node.gpu_ids[i]);
		printf("weir server: listening on http://%s%s%s:%d, home %s, resources: %d vcores, "
		       "%s memory, %zu gpus%s%s%s\n",
		       strchr(cfg.listen_host, ':') ? "[" : "", cfg.listen_host,
		       strchr(cfg.listen_host, ':') ? "]" : "", http_server_port(s.http), cfg.home,
		       node.vcores, alloc_format_memory(node.memory_mb, mem, sizeof mem),
		       node.n_gpus, node.n_gpus ? " (" : "", gpus, node.n_gpus ? ")" : "");
		cgroup_detect(&cg);
		printf("weir server: memory limits: %s\n",
		       cgroup_describe(&cg, cg_line, sizeof cg_line));
		fflush(stdout);
	}

	/* the DAGs first, so that jobs the job manager's recovery settles find
	 * their task instances' DAGs; then the runs */
	if (dag_manager_load(s.dm, &err) < 0) {
		log_error("DAGs: %s", err.msg);
		goto out_loop;
	}
	if (job_manager_recover(s.jm, &err) < 0) {
		log_error("recovery: %s", err.msg);
		goto out_loop;
	}
	if (dag_manager_recover(s.dm, &err) < 0) {
		log_error("DAG recovery: %s", err.msg);
		goto out_loop;
	}
	{
		int dags, errs, runs;
		dag_manager_counts(s.dm, &dags, &errs, &runs);
		log_info("DAG folder %s: %d DAGs, %d import errors, %d active runs", cfg.dags_dir,
		         dags, errs, runs);
	}
	{
		int jobs, tasks;
		job_manager_counts(s.jm, &jobs, &tasks);
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
	if (!s.stopping) {
		/* start-up failed part way: unmake what was made */
		api_destroy(s.api);
		http_server_destroy(s.http);
		dag_manager_destroy(s.dm);
		job_manager_destroy(s.jm);
		if (s.exec)
			s.exec->ops->destroy(s.exec);
	}
	uv_run(&s.loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&s.loop) != 0)
		log_warn("event loop closed with handles still open");
out:
	store_close(s.store);
	resources_free_ids(detected, n_detected);
	free(url);
	free(db);
	free(token);
	server_config_release(&cfg);
	return rc;
}
