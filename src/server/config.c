/* config.c: parsing `weir server` flags and the YAML configuration file. */
#include "server/config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/fs.h"
#include "lib/str.h"
#include "lib/strbuf.h"
#include "lib/yaml.h"
#include "model/duration.h"
#include "model/job_spec.h"

void server_config_init(struct server_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->listen_port = SERVER_DEFAULT_PORT;
	cfg->kill_grace_s = 5;
}

static void free_pools(struct server_config *cfg)
{
	for (size_t i = 0; i < cfg->n_pools; i++) {
		free(cfg->pools[i].name);
		free(cfg->pools[i].queue);
	}
	free(cfg->pools);
	cfg->pools = NULL;
	cfg->n_pools = 0;
}

static void free_users(struct server_config *cfg)
{
	for (size_t i = 0; i < cfg->n_users; i++) {
		free(cfg->users[i].name);
		free(cfg->users[i].password_hash);
	}
	free(cfg->users);
	cfg->users = NULL;
	cfg->n_users = 0;
}

static void free_gpus(struct server_config *cfg)
{
	for (size_t i = 0; i < cfg->n_gpus; i++)
		free(cfg->gpu_ids[i]);
	free(cfg->gpu_ids);
	cfg->gpu_ids = NULL;
	cfg->n_gpus = 0;
}

static void free_slurm(struct server_slurm *sl)
{
	for (size_t i = 0; i < sl->n_sbatch_options; i++)
		free(sl->sbatch_options[i]);
	free(sl->sbatch_options);
	free(sl->partition);
	free(sl->account);
	free(sl->qos);
	free(sl->time);
	free(sl->shared_dir);
	free(sl->node_cache_dir);
	memset(sl, 0, sizeof *sl);
}

static void free_queues(struct server_config *cfg)
{
	for (size_t i = 0; i < cfg->n_queues; i++) {
		free(cfg->queues[i].name);
		free_slurm(&cfg->queues[i].opt);
	}
	free(cfg->queues);
	cfg->queues = NULL;
	cfg->n_queues = 0;
}

static void free_secrets(struct server_config *cfg)
{
	connections_free(cfg->connections, cfg->n_connections);
	variables_free(cfg->variables, cfg->n_variables);
	cfg->connections = NULL;
	cfg->variables = NULL;
	cfg->n_connections = cfg->n_variables = 0;
}

void server_config_release(struct server_config *cfg)
{
	free_secrets(cfg);
	free_slurm(&cfg->slurm);
	free_queues(cfg);
	free(cfg->home);
	free(cfg->config_path);
	free(cfg->listen_host);
	free(cfg->dags_dir);
	free(cfg->task_user);
	free(cfg->sensitive_names);
	free(cfg->tls_cert);
	free(cfg->tls_key);
	free(cfg->tls_ca_file);
	free_pools(cfg);
	free_users(cfg);
	free_gpus(cfg);
	memset(cfg, 0, sizeof *cfg);
}

int server_config_parse_listen(const char *text, char **host, int *port, struct weir_error *err)
{
	const char *colon;
	char *end;
	long p;
	char *h;

	if (!text || !*text)
		goto bad;
	if (text[0] == '[') {
		const char *rb = strchr(text, ']');
		if (!rb || rb[1] != ':')
			goto bad;
		h = strndup(text + 1, (size_t)(rb - text - 1));
		colon = rb + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon) {
			h = strdup(SERVER_DEFAULT_HOST);
			colon = text - 1;
		} else if (colon == text) {
			h = strdup(SERVER_DEFAULT_HOST);
		} else {
			h = strndup(text, (size_t)(colon - text));
		}
	}
	if (!h)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 0 || p > 65535) {
		free(h);
		goto bad;
	}
	free(*host);
	*host = h;
	*port = (int)p;
	return 0;
bad:
	return weir_error_set(err, WEIR_E_INVALID,
	                      "listen: expected HOST:PORT (like 127.0.0.1:8270), got \"%s\"",
	                      text ? text : "");
}

static int take_value(int argc, char **argv, int *i, const char *flag, const char **val,
                      struct weir_error *err)
{
	size_t fl = strlen(flag);
	const char *a = argv[*i];

	if (!strncmp(a, flag, fl) && a[fl] == '=') {
		*val = a + fl + 1;
		return 1;
	}
	if (strcmp(a, flag))
		return 0;
	if (*i + 1 >= argc)
		return weir_error_set(err, WEIR_E_INVALID, "%s: expected a value after it", flag);
	*val = argv[++*i];
	return 1;
}

/* An owned setting replaced by a copy of v (never NULL here). */
static int set_str(char **dst, const char *v, struct weir_error *err)
{
	if (str_set(dst, v) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return 0;
}

/* --tls-cert or --tls-key: a file, kept as given (made absolute by
 * server_config_load()). */
static int set_tls_flag(struct server_config *cfg, char **dst, const char *flag, const char *v,
                        struct weir_error *err)
{
	if (!*v)
		return weir_error_set(err, WEIR_E_INVALID, "%s: expected a file", flag);
	cfg->tls_from_cli = true;
	return set_str(dst, v, err);
}

int server_config_parse_args(struct server_config *cfg, int argc, char **argv,
                             struct weir_error *err)
{
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		int r;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: weir server [--listen HOST:PORT] [--home DIR] [--config "
			       "FILE] [--dags DIR] [--tls-cert FILE --tls-key FILE]\n");
			return 1;
		}
		if ((r = take_value(argc, argv, &i, "--listen", &v, err)) != 0) {
			if (r < 0 || server_config_parse_listen(v, &cfg->listen_host,
			                                        &cfg->listen_port, err) < 0)
				return -1;
			cfg->listen_from_cli = true;
		} else if ((r = take_value(argc, argv, &i, "--home", &v, err)) != 0) {
			if (r < 0 || set_str(&cfg->home, v, err) < 0)
				return -1;
			if (!*v)
				return weir_error_set(err, WEIR_E_INVALID,
				                      "--home: expected a directory");
		} else if ((r = take_value(argc, argv, &i, "--config", &v, err)) != 0) {
			if (r < 0 || set_str(&cfg->config_path, v, err) < 0)
				return -1;
		} else if ((r = take_value(argc, argv, &i, "--dags", &v, err)) != 0) {
			if (r < 0 || set_str(&cfg->dags_dir, v, err) < 0)
				return -1;
			if (!*v)
				return weir_error_set(err, WEIR_E_INVALID,
				                      "--dags: expected a directory");
			cfg->dags_from_cli = true;
		} else if ((r = take_value(argc, argv, &i, "--tls-cert", &v, err)) != 0) {
			if (r < 0 || set_tls_flag(cfg, &cfg->tls_cert, "--tls-cert", v, err) < 0)
				return -1;
		} else if ((r = take_value(argc, argv, &i, "--tls-key", &v, err)) != 0) {
			if (r < 0 || set_tls_flag(cfg, &cfg->tls_key, "--tls-key", v, err) < 0)
				return -1;
		} else {
			return weir_error_set(err, WEIR_E_INVALID,
			                      "weir server: unknown argument \"%s\" (expected "
			                      "--listen HOST:PORT, --home DIR, --config FILE, "
			                      "--dags DIR, --tls-cert FILE or --tls-key FILE)",
			                      argv[i]);
		}
	}
	if (!cfg->tls_cert != !cfg->tls_key)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "--tls-cert and --tls-key go together (the certificate and "
		                      "its key); %s is missing",
		                      cfg->tls_cert ? "--tls-key" : "--tls-cert");
	return 0;
}

static int add_gpu(struct server_config *cfg, const char *id, struct weir_error *err)
{
	char **v = realloc(cfg->gpu_ids, (cfg->n_gpus + 1) * sizeof *v);
	if (!v)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	cfg->gpu_ids = v;
	v[cfg->n_gpus] = strdup(id);
	if (!v[cfg->n_gpus])
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	cfg->n_gpus++;
	return 0;
}

static int apply_gpus(struct server_config *cfg, json_t *g, const char *origin,
                      struct weir_error *err)
{
	free_gpus(cfg);
	cfg->gpus_set = true;
	if (json_is_integer(g)) {
		json_int_t n = json_integer_value(g);
		if (n < 0 || n > 1024)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s: resources.gpus: expected a count 0..1024, got %lld", origin,
			    (long long)n);
		for (json_int_t i = 0; i < n; i++) {
			char b[24];
			snprintf(b, sizeof b, "%lld", (long long)i);
			if (add_gpu(cfg, b, err) < 0)
				return -1;
		}
		return 0;
	}
	if (json_is_array(g)) {
		size_t i;
		json_t *e;
		json_array_foreach(g, i, e)
		{
			char b[24];
			const char *id;
			if (json_is_integer(e)) {
				snprintf(b, sizeof b, "%lld", (long long)json_integer_value(e));
				id = b;
			} else if (json_is_string(e) && json_string_length(e) > 0 &&
			           !strpbrk(json_string_value(e), ", \t")) {
				id = json_string_value(e);
			} else {
				return weir_error_set(err, WEIR_E_INVALID,
				                      "%s: resources.gpus[%zu]: expected a GPU id "
				                      "like \"0\" (no commas or spaces)",
				                      origin, i);
			}
			for (size_t k = 0; k < cfg->n_gpus; k++)
				if (!strcmp(cfg->gpu_ids[k], id))
					return weir_error_set(
					    err, WEIR_E_INVALID,
					    "%s: resources.gpus: id \"%s\" listed "
					    "twice",
					    origin, id);
			if (add_gpu(cfg, id, err) < 0)
				return -1;
		}
		return 0;
	}
	return weir_error_set(err, WEIR_E_INVALID,
	                      "%s: resources.gpus: expected a count (3) or a list of ids "
	                      "([\"0\",\"1\"])",
	                      origin);
}

static int apply_resources(struct server_config *cfg, json_t *r, const char *origin,
                           struct weir_error *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(r))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: resources: expected a mapping of vcores, memory, gpus",
		                      origin);
	json_object_foreach(r, key, v)
	{
		if (!strcmp(key, "vcores")) {
			if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > 1000000)
				return weir_error_set(
				    err, WEIR_E_INVALID,
				    "%s: resources.vcores: expected a whole number "
				    ">= 1",
				    origin);
			cfg->vcores = (int)json_integer_value(v);
		} else if (!strcmp(key, "memory")) {
			char buf[32];
			const char *text;
			if (json_is_integer(v) && json_integer_value(v) > 0) {
				snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
				text = buf;
			} else if (json_is_string(v)) {
				text = json_string_value(v);
			} else {
				return weir_error_set(
				    err, WEIR_E_INVALID,
				    "%s: resources.memory: expected an amount like "
				    "16g or 512m",
				    origin);
			}
			if (parse_memory_mb(text, "resources.memory", &cfg->memory_mb, err) < 0) {
				weir_error_prefix(err, "%s", origin);
				return -1;
			}
		} else if (!strcmp(key, "gpus")) {
			if (apply_gpus(cfg, v, origin, err) < 0)
				return -1;
		} else {
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: resources.%s: unknown key (expected vcores, "
			                      "memory or gpus)",
			                      origin, key);
		}
	}
	return 0;
}

static int apply_pools(struct server_config *cfg, json_t *p, const char *origin,
                       struct weir_error *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(p))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: pools: expected a mapping of pool names to slot counts "
		                      "({spark: 2})",
		                      origin);
	free_pools(cfg);
	cfg->pools = calloc(json_object_size(p) + 1, sizeof *cfg->pools);
	if (!cfg->pools)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	json_object_foreach(p, key, v)
	{
		bool ok = *key && strlen(key) <= 64;
		for (const char *c = key; *c && ok; c++)
			ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			     (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.';
		if (!ok)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: pools.%s: expected a name of [A-Za-z0-9_.-], at "
			                      "most 64 characters",
			                      origin, key);
		/* `name: SLOTS`, or `name: {slots: SLOTS, queue: QUEUE}` */
		json_t *slots = json_is_object(v) ? json_object_get(v, "slots") : v;
		json_t *queue = json_is_object(v) ? json_object_get(v, "queue") : NULL;
		if (json_is_object(v) &&
		    json_object_size(v) != (size_t)(slots != NULL) + (size_t)(queue != NULL))
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: pools.%s: expected slots and queue only", origin,
			                      key);
		if (!json_is_integer(slots) || json_integer_value(slots) < -1 ||
		    json_integer_value(slots) > 1000000)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: pools.%s: expected a slot count 0..1000000 (-1: "
			                      "unlimited)",
			                      origin, key);
		if (queue && (!json_is_string(queue) || !json_string_length(queue)))
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: pools.%s.queue: expected a queue name", origin,
			                      key);
		cfg->pools[cfg->n_pools].name = strdup(key);
		if (!cfg->pools[cfg->n_pools].name ||
		    (queue && !(cfg->pools[cfg->n_pools].queue = strdup(json_string_value(queue)))))
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		cfg->pools[cfg->n_pools].slots = (int)json_integer_value(slots);
		cfg->n_pools++;
	}
	return 0;
}

/* The keys of `slurm:` (also those of a Slurm queue) into `sl`; `where`
 * ("slurm", "queues.gpu") names them in errors.  A key `executor` is
 * skipped (the queue's reader took it). */
static int read_slurm_keys(struct server_slurm *sl, json_t *m, const char *where,
                           const char *origin, struct weir_error *err)
{
	const char *key;
	json_t *v;
	char field[160];

	json_object_foreach(m, key, v)
	{
		char **dst = !strcmp(key, "partition")        ? &sl->partition
		             : !strcmp(key, "account")        ? &sl->account
		             : !strcmp(key, "qos")            ? &sl->qos
		             : !strcmp(key, "time")           ? &sl->time
		             : !strcmp(key, "shared_dir")     ? &sl->shared_dir
		             : !strcmp(key, "node_cache_dir") ? &sl->node_cache_dir
		                                              : NULL;
		snprintf(field, sizeof field, "%s.%s", where, key);
		if (!strcmp(key, "executor")) {
			continue;
		} else if (dst) {
			char num[32];
			const char *text = json_string_value(v);
			if (!strcmp(key, "time") && json_is_integer(v)) {
				snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
				text = num;
			}
			if (!text || !*text)
				return weir_error_set(err, WEIR_E_INVALID,
				                      "%s: %s: expected a non-empty string", origin,
				                      field);
			if ((dst == &sl->shared_dir || dst == &sl->node_cache_dir) &&
			    text[0] != '/')
				return weir_error_set(err, WEIR_E_INVALID,
				                      "%s: %s: expected an absolute path", origin,
				                      field);
			if (dst != &sl->shared_dir && dst != &sl->node_cache_dir &&
			    job_spec_check_slurm_value(field, text, false, dst == &sl->time, err) <
			        0) {
				weir_error_prefix(err, "%s", origin);
				return -1;
			}
			if (set_str(dst, text, err) < 0)
				return -1;
		} else if (!strcmp(key, "sbatch_options")) {
			size_t i;
			json_t *o;
			if (!json_is_array(v) || json_array_size(v) > 64)
				return weir_error_set(
				    err, WEIR_E_INVALID,
				    "%s: %s: expected a list of at most 64 options "
				    "(\"--constraint=a100\")",
				    origin, field);
			sl->sbatch_options = calloc(json_array_size(v) + 1, sizeof(char *));
			if (!sl->sbatch_options)
				return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			json_array_foreach(v, i, o)
			{
				snprintf(field, sizeof field, "%s.sbatch_options[%zu]", where, i);
				if (!json_is_string(o))
					return weir_error_set(err, WEIR_E_INVALID,
					                      "%s: %s: expected an option starting "
					                      "with -",
					                      origin, field);
				if (job_spec_check_slurm_value(field, json_string_value(o), true,
				                               false, err) < 0) {
					weir_error_prefix(err, "%s", origin);
					return -1;
				}
				sl->sbatch_options[i] = strdup(json_string_value(o));
				if (!sl->sbatch_options[i])
					return weir_error_set(err, WEIR_E_INTERNAL,
					                      "out of memory");
				sl->n_sbatch_options++;
			}
		} else {
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: %s: unknown key (expected partition, account, "
			                      "qos, time, sbatch_options, shared_dir or "
			                      "node_cache_dir)",
			                      origin, field);
		}
	}
	return 0;
}

/* `slurm: {partition, account, qos, time, sbatch_options: [...], shared_dir}` */
static int apply_slurm(struct server_config *cfg, json_t *m, const char *origin,
                       struct weir_error *err)
{
	if (!json_is_object(m))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: slurm: expected a mapping of partition, account, qos, "
		                      "time, sbatch_options, shared_dir",
		                      origin);
	free_slurm(&cfg->slurm);
	if (json_object_get(m, "executor"))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: slurm.executor: unknown key (executor is a top-level "
		                      "setting)",
		                      origin);
	return read_slurm_keys(&cfg->slurm, m, "slurm", origin, err);
}

/* `queues: {NAME: {executor: local|slurm, partition, account, ...}}` */
static int apply_queues(struct server_config *cfg, json_t *m, const char *origin,
                        struct weir_error *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(m) || json_object_size(m) > 256)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: queues: expected a mapping of queue name to {executor: "
		                      "local|slurm, ...}",
		                      origin);
	free_queues(cfg);
	cfg->queues = calloc(json_object_size(m) + 1, sizeof *cfg->queues);
	if (!cfg->queues)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	json_object_foreach(m, key, v)
	{
		struct server_queue *q = &cfg->queues[cfg->n_queues];
		const char *e = json_string_value(json_object_get(v, "executor"));
		char where[96];
		size_t kl = strlen(key);

		if (kl == 0 || kl > 64 ||
		    strspn(key,
		           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
		        kl)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s: queues.%s: expected a queue name of [A-Za-z0-9_.-], "
			    "at most 64 characters",
			    origin, key);
		if (!json_is_object(v) || !e || (strcmp(e, "local") && strcmp(e, "slurm")))
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s: queues.%s: expected a mapping with executor: local "
			    "or slurm",
			    origin, key);
		if (!(q->name = strdup(key)))
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		q->slurm = !strcmp(e, "slurm");
		cfg->n_queues++;
		snprintf(where, sizeof where, "queues.%s", key);
		if (!q->slurm && json_object_size(v) > 1)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s: %s: a local queue takes only executor (partition, "
			    "account, ... are for executor: slurm)",
			    origin, where);
		if (read_slurm_keys(&q->opt, v, where, origin, err) < 0)
			return -1;
	}
	return 0;
}

static int apply_users(struct server_config *cfg, json_t *u, const char *origin,
                       struct weir_error *err)
{
	size_t i;
	json_t *v;

	if (!json_is_array(u))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: users: expected a list of {name, password_hash, role}",
		                      origin);
	free_users(cfg);
	cfg->users = calloc(json_array_size(u) + 1, sizeof *cfg->users);
	if (!cfg->users)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	json_array_foreach(u, i, v)
	{
		const char *name = json_string_value(json_object_get(v, "name"));
		const char *hash = json_string_value(json_object_get(v, "password_hash"));
		json_t *role = json_object_get(v, "role");
		enum weir_role r = ROLE_ADMIN;
		if (!json_is_object(v) || !name || !*name || strchr(name, ':') || !hash ||
		    json_object_size(v) != 2u + (role != NULL))
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s: users[%zu]: expected {name, password_hash, role} (a name "
			    "without ':'; the hash from `weir hash-password`; role optional)",
			    origin, i);
		if (role && role_from_name(json_string_value(role), &r) < 0)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: users[%zu] (%s).role: expected Viewer, User, Op "
			                      "or Admin",
			                      origin, i, name);
		cfg->users[cfg->n_users].name = strdup(name);
		cfg->users[cfg->n_users].password_hash = strdup(hash);
		cfg->users[cfg->n_users].role = r;
		cfg->n_users++;
		if (!cfg->users[cfg->n_users - 1].name ||
		    !cfg->users[cfg->n_users - 1].password_hash)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	return 0;
}

/* `tls: {cert: PATH, key: PATH, ca_file: PATH}`; flags given win. */
static int apply_tls(struct server_config *cfg, json_t *t, const char *origin,
                     struct weir_error *err)
{
	const char *key;
	json_t *v;
	char *cert = NULL, *pkey = NULL, *ca = NULL;

	if (!json_is_object(t) || !json_object_get(t, "cert") || !json_object_get(t, "key"))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: tls: expected a mapping with cert (the certificate's "
		                      "PEM file) and key (its private key's), and optionally "
		                      "ca_file",
		                      origin);
	json_object_foreach(t, key, v)
	{
		char **dst = !strcmp(key, "cert")      ? &cert
		             : !strcmp(key, "key")     ? &pkey
		             : !strcmp(key, "ca_file") ? &ca
		                                       : NULL;
		if (!dst) {
			weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s: tls.%s: unknown setting (expected cert, key or ca_file)", origin,
			    key);
			goto fail;
		}
		if (!json_is_string(v) || !json_string_length(v)) {
			weir_error_set(err, WEIR_E_INVALID, "%s: tls.%s: expected a file's path",
			               origin, key);
			goto fail;
		}
		if (set_str(dst, json_string_value(v), err) < 0)
			goto fail;
	}
	if (!cfg->tls_from_cli) {
		free(cfg->tls_cert);
		free(cfg->tls_key);
		cfg->tls_cert = cert;
		cfg->tls_key = pkey;
		cert = pkey = NULL;
	}
	free(cfg->tls_ca_file);
	cfg->tls_ca_file = ca;
	free(cert);
	free(pkey);
	return 0;
fail:
	free(cert);
	free(pkey);
	free(ca);
	return -1;
}

/* `http: {header_timeout_seconds, body_timeout_seconds, idle_timeout_seconds,
 * max_pending_heads, secure_cookie}` */
/* retention: {older_than: 90d, every: 1d} */
static int apply_retention(struct server_config *cfg, json_t *r, const char *origin,
                           struct weir_error *err)
{
	const char *key;
	json_t *v;
	char field[64];

	if (!json_is_object(r) || !json_is_string(json_object_get(r, "older_than")))
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "%s: retention: expected a mapping with older_than (a duration "
		    "such as 90d) and optionally every (default 1d)",
		    origin);
	cfg->retention_every_s = 24 * 3600;
	json_object_foreach(r, key, v)
	{
		int64_t *out = !strcmp(key, "older_than") ? &cfg->retention_older_than_s
		               : !strcmp(key, "every")    ? &cfg->retention_every_s
		                                          : NULL;
		if (!out)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s: retention.%s: unknown setting (expected older_than "
			    "or every)",
			    origin, key);
		snprintf(field, sizeof field, "retention.%s", key);
		if (json_is_string(v) &&
		    duration_parse_s(json_string_value(v), field, out, err) < 0) {
			weir_error_prefix(err, "%s", origin);
			return -1;
		}
		if (!json_is_string(v) || *out <= 0)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s: retention.%s: expected a duration above 0 such as 1d", origin,
			    key);
	}
	return 0;
}

static int apply_http(struct server_config *cfg, json_t *h, const char *origin,
                      struct weir_error *err)
{
	static const struct {
		const char *key;
		long long max;
		size_t off;
	} nums[] = {
	    {"header_timeout_seconds", 3600, offsetof(struct server_config, http_header_timeout_s)},
	    {"body_timeout_seconds", 86400, offsetof(struct server_config, http_body_timeout_s)},
	    {"idle_timeout_seconds", 86400, offsetof(struct server_config, http_idle_timeout_s)},
	    {"max_pending_heads", 1000000, offsetof(struct server_config, http_max_pending_heads)},
	};
	const char *key;
	json_t *v;

	if (!json_is_object(h))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: http: expected a mapping of header_timeout_seconds, "
		                      "body_timeout_seconds, idle_timeout_seconds, "
		                      "max_pending_heads, secure_cookie",
		                      origin);
	json_object_foreach(h, key, v)
	{
		size_t i;

		if (!strcmp(key, "secure_cookie")) {
			if (!json_is_boolean(v))
				return weir_error_set(
				    err, WEIR_E_INVALID,
				    "%s: http.secure_cookie: expected true or false", origin);
			cfg->http_secure_cookie = json_is_true(v);
			continue;
		}
		for (i = 0; i < sizeof nums / sizeof nums[0] && strcmp(key, nums[i].key); i++)
			;
		if (i == sizeof nums / sizeof nums[0])
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: http.%s: unknown setting (expected "
			                      "header_timeout_seconds, body_timeout_seconds, "
			                      "idle_timeout_seconds, max_pending_heads or "
			                      "secure_cookie)",
			                      origin, key);
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > nums[i].max)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: http.%s: expected a whole number from 1 to %lld",
			                      origin, key, nums[i].max);
		*(unsigned *)((char *)cfg + nums[i].off) = (unsigned)json_integer_value(v);
	}
	return 0;
}

/* `connections: {ID: URI | {conn_type, host, port, ...}}` */
static int apply_connections(struct server_config *cfg, json_t *m, const char *origin,
                             struct weir_error *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(m))
		return weir_error_set(
		    err, WEIR_E_INVALID,
		    "%s: connections: expected a mapping of connection id to a "
		    "URI or {conn_type, host, port, login, password, schema, extra}",
		    origin);
	connections_free(cfg->connections, cfg->n_connections);
	cfg->n_connections = 0;
	cfg->connections = calloc(json_object_size(m) + 1, sizeof *cfg->connections);
	if (!cfg->connections)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	json_object_foreach(m, key, v)
	{
		struct connection *c = &cfg->connections[cfg->n_connections];
		int rc = json_is_string(v) ? connection_from_uri(key, json_string_value(v), c, err)
		                           : connection_from_json(key, v, c, err);
		if (rc < 0) {
			weir_error_prefix(err, "%s: connections.%s", origin, key);
			return -1;
		}
		cfg->n_connections++;
	}
	return 0;
}

/* `sensitive_var_conn_names`: a list of names or Airflow's comma-separated
 * text, kept as one comma-separated text (connection_secret_names_add()). */
static int apply_sensitive_names(struct server_config *cfg, json_t *v, const char *origin,
                                 struct weir_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	json_t *name;

	if (json_is_string(v))
		return set_str(&cfg->sensitive_names, json_string_value(v), err);
	if (!json_is_array(v))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: sensitive_var_conn_names: expected a list of names "
		                      "(or a comma-separated text)",
		                      origin);
	json_array_foreach(v, i, name)
	{
		const char *s = json_string_value(name);
		if (!s || !*s || strchr(s, ',')) {
			strbuf_release(&sb);
			return weir_error_set(err, WEIR_E_INVALID,
			                      "%s: sensitive_var_conn_names[%zu]: expected a name "
			                      "(text without a comma)",
			                      origin, i);
		}
		strbuf_addf(&sb, "%s%s", i ? "," : "", s);
	}
	free(cfg->sensitive_names);
	cfg->sensitive_names = strbuf_detach(&sb, NULL);
	return 0;
}

/* `variables: {KEY: value}`: text as it is, other values as their JSON. */
static int apply_variables(struct server_config *cfg, json_t *m, const char *origin,
                           struct weir_error *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(m))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: variables: expected a mapping of key to value", origin);
	variables_free(cfg->variables, cfg->n_variables);
	cfg->n_variables = 0;
	cfg->variables = calloc(json_object_size(m) + 1, sizeof *cfg->variables);
	if (!cfg->variables)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	json_object_foreach(m, key, v)
	{
		struct variable *var = &cfg->variables[cfg->n_variables];
		if (variable_check_key(key, err) < 0) {
			weir_error_prefix(err, "%s: variables.%s", origin, key);
			return -1;
		}
		var->key = strdup(key);
		var->value = json_is_string(v) ? strdup(json_string_value(v))
		                               : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		cfg->n_variables++;
		if (!var->key || !var->value)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	return 0;
}

int server_config_apply_yaml(struct server_config *cfg, const char *text, size_t len,
                             const char *origin, struct weir_error *err)
{
	json_t *root;
	const char *key;
	json_t *v;
	int rc = -1;

	/* an empty file (or only comments) is no settings, not an error */
	{
		const char *p = text, *e = text + len;
		bool blank = true;
		while (p < e && blank) {
			p += strspn(p, " \t\r\n");
			if (p < e && *p == '#')
				p += strcspn(p, "\n");
			else if (p < e && *p)
				blank = false;
			else
				break;
		}
		if (blank)
			return 0;
	}
	root = yaml_parse(text, len, origin, NULL, err);
	if (!root)
		return -1;
	if (!json_is_object(root)) {
		weir_error_set(err, WEIR_E_INVALID, "%s: expected a mapping of settings", origin);
		goto out;
	}
	json_object_foreach(root, key, v)
	{
		if (!strcmp(key, "listen")) {
			char buf[32];
			const char *s = json_string_value(v);
			if (json_is_integer(v)) {
				snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
				s = buf;
			}
			if (!s) {
				weir_error_set(err, WEIR_E_INVALID,
				               "%s: listen: expected HOST:PORT", origin);
				goto out;
			}
			if (cfg->listen_from_cli)
				continue;
			if (server_config_parse_listen(s, &cfg->listen_host, &cfg->listen_port,
			                               err) < 0) {
				weir_error_prefix(err, "%s", origin);
				goto out;
			}
		} else if (!strcmp(key, "resources")) {
			if (apply_resources(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "kill_grace_seconds")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > 3600) {
				weir_error_set(err, WEIR_E_INVALID,
				               "%s: kill_grace_seconds: expected seconds 0..3600",
				               origin);
				goto out;
			}
			cfg->kill_grace_s = (int)json_integer_value(v);
		} else if (!strcmp(key, "dags")) {
			if (!json_is_string(v) || json_string_length(v) == 0) {
				weir_error_set(err, WEIR_E_INVALID,
				               "%s: dags: expected the DAG folder's path", origin);
				goto out;
			}
			if (cfg->dags_from_cli)
				continue;
			if (set_str(&cfg->dags_dir, json_string_value(v), err) < 0)
				goto out;
		} else if (!strcmp(key, "pools")) {
			if (apply_pools(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "users")) {
			if (apply_users(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "http")) {
			if (apply_http(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "tls")) {
			if (apply_tls(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "retention")) {
			if (apply_retention(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "executor")) {
			const char *e = json_string_value(v);
			if (!e || (strcmp(e, "local") && strcmp(e, "slurm"))) {
				weir_error_set(err, WEIR_E_INVALID,
				               "%s: executor: expected local or slurm", origin);
				goto out;
			}
			cfg->executor_slurm = !strcmp(e, "slurm");
		} else if (!strcmp(key, "task_user")) {
			if (!json_is_string(v) || json_string_length(v) == 0) {
				weir_error_set(err, WEIR_E_INVALID,
				               "%s: task_user: expected a user's name", origin);
				goto out;
			}
			if (set_str(&cfg->task_user, json_string_value(v), err) < 0)
				goto out;
		} else if (!strcmp(key, "log_transport")) {
			const char *e = json_string_value(v);
			if (!e || (strcmp(e, "file") && strcmp(e, "http"))) {
				weir_error_set(err, WEIR_E_INVALID,
				               "%s: log_transport: expected file or http", origin);
				goto out;
			}
			cfg->log_transport = !strcmp(e, "http") ? SERVER_LOG_HTTP : SERVER_LOG_FILE;
		} else if (!strcmp(key, "slurm")) {
			if (apply_slurm(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "queues")) {
			if (apply_queues(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "connections")) {
			if (apply_connections(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "variables")) {
			if (apply_variables(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "sensitive_var_conn_names")) {
			if (apply_sensitive_names(cfg, v, origin, err) < 0)
				goto out;
		} else if (!strcmp(key, "dag_folder_symlinks")) {
			const char *e = json_string_value(v);
			if (!e || (strcmp(e, "inside") && strcmp(e, "never"))) {
				weir_error_set(err, WEIR_E_INVALID,
				               "%s: dag_folder_symlinks: expected inside or never",
				               origin);
				goto out;
			}
			cfg->dag_symlinks_never = !strcmp(e, "never");
		} else if (!strcmp(key, "dagbag_import_timeout")) {
			double t = json_number_value(v);
			if (!json_is_number(v) || !(t > 0) || t > 86400) {
				weir_error_set(
				    err, WEIR_E_INVALID,
				    "%s: dagbag_import_timeout: expected seconds, more than "
				    "0 and at most 86400",
				    origin);
				goto out;
			}
			cfg->dagbag_import_timeout = t;
		} else if (!strcmp(key, "dag_ignore_file_syntax")) {
			const char *x = json_string_value(v);
			if (!x || (strcmp(x, "regexp") && strcmp(x, "glob"))) {
				weir_error_set(
				    err, WEIR_E_INVALID,
				    "%s: dag_ignore_file_syntax: expected regexp or glob", origin);
				goto out;
			}
			cfg->dag_ignore_glob = !strcmp(x, "glob");
		} else if (!strcmp(key, "dags_are_paused_at_creation")) {
			if (!json_is_boolean(v)) {
				weir_error_set(
				    err, WEIR_E_INVALID,
				    "%s: dags_are_paused_at_creation: expected true or false",
				    origin);
				goto out;
			}
			cfg->dags_paused_at_creation = json_is_true(v);
		} else {
			weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s: %s: unknown setting (expected listen, resources, "
			    "kill_grace_seconds, dags, pools, users, http, tls, executor, "
			    "log_transport, task_user, slurm, queues, connections, variables, "
			    "sensitive_var_conn_names, dag_folder_symlinks, "
			    "dagbag_import_timeout, dag_ignore_file_syntax or "
			    "dags_are_paused_at_creation)",
			    origin, key);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

/* A TLS path made absolute: against `base` (the home for the file's
 * paths; the current folder for the flags'). */
static int path_absolute(char **p, const char *base, struct weir_error *err)
{
	char *abs;

	if (!*p || (*p)[0] == '/')
		return 0;
	if (!(abs = fs_join(base, *p)))
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	free(*p);
	*p = abs;
	return 0;
}

static int tls_paths_absolute(struct server_config *cfg, struct weir_error *err)
{
	char cwd[4096];
	const char *flags_base = getcwd(cwd, sizeof cwd) ? cwd : ".";
	const char *cert_base = cfg->tls_from_cli ? flags_base : cfg->home;

	if (path_absolute(&cfg->tls_cert, cert_base, err) < 0 ||
	    path_absolute(&cfg->tls_key, cert_base, err) < 0 ||
	    path_absolute(&cfg->tls_ca_file, cfg->home, err) < 0)
		return -1;
	return 0;
}

int server_config_load(struct server_config *cfg, struct weir_error *err)
{
	char *path = NULL, *text = NULL;
	size_t len = 0;
	int rc = -1;
	bool must_exist = cfg->config_path != NULL;

	if (!cfg->home) {
		const char *h = getenv("HOME");
		if (!h || !*h)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "no home: HOME is not set; pass --home DIR");
		cfg->home = fs_join(h, ".weir");
		if (!cfg->home)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	if (!cfg->listen_host && set_str(&cfg->listen_host, SERVER_DEFAULT_HOST, err) < 0)
		return -1;
	path = must_exist ? strdup(cfg->config_path) : fs_join(cfg->home, "weir.yaml");
	if (!path)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (!must_exist && !fs_exists(path)) {
		rc = 0;
		goto out;
	}
	text = fs_read_file(path, &len, err);
	if (!text)
		goto out;
	if (server_config_apply_yaml(cfg, text, len, path, err) < 0)
		goto out;
	rc = 0;
out:
	/* the DAG folder: relative to the home when it came from the file or
	 * was not given; as given (relative to the cwd) on the command line */
	if (rc == 0 && (!cfg->dags_dir || (!cfg->dags_from_cli && cfg->dags_dir[0] != '/'))) {
		char *d = fs_join(cfg->home, cfg->dags_dir ? cfg->dags_dir : "dags");
		if (!d) {
			rc = weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		} else {
			free(cfg->dags_dir);
			cfg->dags_dir = d;
		}
	}
	if (rc == 0)
		rc = tls_paths_absolute(cfg, err);
	free(text);
	free(path);
	return rc;
}
