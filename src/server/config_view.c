/* config_view.c: the configuration as Airflow's Config (config_view.h). */
#include "server/config_view.h"

#include <stdio.h>
#include <string.h>

#include "api/http.h"

static void opt(json_t *options, const char *key, const char *value)
{
	if (value)
		json_array_append_new(options, json_pack("{s:s, s:s}", "key", key, "value", value));
}

static void opt_int(json_t *options, const char *key, long long v)
{
	char b[32];

	snprintf(b, sizeof b, "%lld", v);
	opt(options, key, b);
}

static json_t *section(json_t *sections, const char *name)
{
	json_t *options = json_array();

	json_array_append_new(sections, json_pack("{s:s, s:o}", "name", name, "options", options));
	return options;
}

static void slurm_opts(json_t *o, const struct server_slurm *s)
{
	opt(o, "partition", s->partition);
	opt(o, "account", s->account);
	opt(o, "qos", s->qos);
	opt(o, "time", s->time);
	opt(o, "shared_dir", s->shared_dir);
	opt(o, "node_cache_dir", s->node_cache_dir);
	for (size_t i = 0; i < s->n_sbatch_options; i++)
		opt(o, "sbatch_options", s->sbatch_options[i]);
}

json_t *server_config_view(const struct server_config *cfg)
{
	json_t *sections = json_array(), *o;
	char listen[300], gpus[1024] = "";

	if (!sections)
		return NULL;
	o = section(sections, "core");
	opt(o, "dags_folder", cfg->dags_dir);
	opt(o, "executor", cfg->executor_slurm ? "slurm" : "local");
	opt_int(o, "kill_grace_seconds", cfg->kill_grace_s);
	opt(o, "log_transport",
	    cfg->log_transport == SERVER_LOG_FILE   ? "file"
	    : cfg->log_transport == SERVER_LOG_HTTP ? "http"
	                                            : "default");
	opt(o, "home", cfg->home);
	o = section(sections, "api");
	snprintf(listen, sizeof listen,
	         strchr(cfg->listen_host ? cfg->listen_host : "", ':') ? "[%s]:%d" : "%s:%d",
	         cfg->listen_host ? cfg->listen_host : SERVER_DEFAULT_HOST, cfg->listen_port);
	opt(o, "listen", listen);
	opt(o, "auth_backends", cfg->n_users ? "bearer token, basic auth" : "bearer token");
	/* the HTTP server's limits (docs/security.md), a default where none is set */
	opt_int(o, "header_timeout_seconds",
	        cfg->http_header_timeout_s ? cfg->http_header_timeout_s
	                                   : HTTP_DEFAULT_HEADER_TIMEOUT_S);
	opt_int(o, "body_timeout_seconds",
	        cfg->http_body_timeout_s ? cfg->http_body_timeout_s : HTTP_DEFAULT_BODY_TIMEOUT_S);
	opt_int(o, "idle_timeout_seconds",
	        cfg->http_idle_timeout_s ? cfg->http_idle_timeout_s : HTTP_DEFAULT_IDLE_TIMEOUT_S);
	opt_int(o, "max_pending_heads",
	        cfg->http_max_pending_heads ? cfg->http_max_pending_heads
	                                    : HTTP_DEFAULT_MAX_PENDING_HEADS);
	opt(o, "secure_cookie", cfg->http_secure_cookie ? "true" : "false");
	o = section(sections, "resources");
	opt_int(o, "vcores", cfg->vcores);
	opt_int(o, "memory_mb", (long long)cfg->memory_mb);
	for (size_t i = 0; i < cfg->n_gpus; i++) {
		size_t l = strlen(gpus);
		snprintf(gpus + l, sizeof gpus - l, "%s%s", i ? "," : "", cfg->gpu_ids[i]);
	}
	opt(o, "gpus", gpus);
	o = section(sections, "pools");
	for (size_t i = 0; i < cfg->n_pools; i++)
		opt_int(o, cfg->pools[i].name, cfg->pools[i].slots);
	o = section(sections, "slurm");
	slurm_opts(o, &cfg->slurm);
	for (size_t i = 0; i < cfg->n_queues; i++) {
		char name[300];
		snprintf(name, sizeof name, "queue %s", cfg->queues[i].name);
		o = section(sections, name);
		opt(o, "executor", cfg->queues[i].slurm ? "slurm" : "local");
		if (cfg->queues[i].slurm)
			slurm_opts(o, &cfg->queues[i].opt);
	}
	return json_pack("{s:o}", "sections", sections);
}
