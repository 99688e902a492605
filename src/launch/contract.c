/* contract.c: framework environments (TF_CONFIG, torch.distributed, DMLC,
 * Horovod, and weir's own) from the gang's cluster map.  Pure: no I/O. */
#include "launch/contract.h"

#include "lib/fs.h"
#include "lib/grow.h"
#include "lib/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One member of the framework's world, in rank order. */
struct member {
	const char *role;
	int index;
	char host[256];
	int port;
	int local_rank; /* among members on the same host */
};

struct env_list {
	struct env_var *v;
	size_t n, cap;
	int failed;
};

static void env_set(struct env_list *l, const char *name, const char *value)
{
	char *nv;

	if (l->failed)
		return;
	nv = strdup(value ? value : "");
	if (!nv) {
		l->failed = 1;
		return;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (!strcmp(l->v[i].name, name)) {
			free(l->v[i].value);
			l->v[i].value = nv;
			return;
		}
	}
	if (ALLOC_GROW(l->v, l->n + 1, l->cap) < 0) {
		free(nv);
		l->failed = 1;
		return;
	}
	l->v[l->n].name = strdup(name);
	l->v[l->n].value = nv;
	if (!l->v[l->n].name) {
		free(nv);
		l->failed = 1;
		return;
	}
	l->n++;
}

static void env_setf(struct env_list *l, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void env_setf(struct env_list *l, const char *name, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	env_set(l, name, buf);
}

static void env_list_free(struct env_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].value);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* "host:port" (or "[v6]:port") into its parts. */
static int split_address(const char *addr, char *host, size_t host_size, int *port)
{
	const char *colon = strrchr(addr, ':');
	char *end;
	long p;

	if (!colon || colon == addr)
		return -1;
	p = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || p <= 0 || p > 65535)
		return -1;
	const char *h = addr;
	size_t hl = (size_t)(colon - addr);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl >= host_size)
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (int)p;
	return 0;
}

static const struct contract_role *find_role(const struct contract_input *in, const char *name)
{
	for (size_t i = 0; i < in->n_roles; i++)
		if (!strcmp(in->roles[i].name, name))
			return &in->roles[i];
	return NULL;
}

/* Roles in rank order: chief, worker, then the rest as given; sidecars out. */
static size_t rank_order(const struct contract_input *in, const struct contract_role **out)
{
	size_t n = 0;
	const struct contract_role *r;

	if ((r = find_role(in, "chief")) && !r->sidecar)
		out[n++] = r;
	if ((r = find_role(in, "worker")) && !r->sidecar)
		out[n++] = r;
	for (size_t i = 0; i < in->n_roles; i++) {
		r = &in->roles[i];
		if (r->sidecar || !strcmp(r->name, "chief") || !strcmp(r->name, "worker"))
			continue;
		out[n++] = r;
	}
	return n;
}

static int is_server_role(const char *name)
{
	return !strcmp(name, "server") || !strcmp(name, "ps");
}

static int build_members(const struct contract_input *in, const struct contract_role **order,
                         size_t n_order, struct member **out, size_t *n_out, struct weir_error *err)
{
	size_t total = 0, k = 0;
	struct member *m;

	for (size_t i = 0; i < n_order; i++)
		total += (size_t)order[i]->instances;
	m = calloc(total ? total : 1, sizeof *m);
	if (!m)
		return weir_error_set(err, WEIR_E_INTERNAL, "contract: out of memory");
	for (size_t i = 0; i < n_order; i++) {
		const json_t *list = json_object_get(in->cluster, order[i]->name);
		if (!json_is_array(list) || json_array_size(list) != (size_t)order[i]->instances) {
			free(m);
			return weir_error_set(err, WEIR_E_INVALID,
			                      "cluster.%s: expected %d addresses, got %zu",
			                      order[i]->name, order[i]->instances,
			                      json_is_array(list) ? json_array_size(list) : 0);
		}
		for (int j = 0; j < order[i]->instances; j++, k++) {
			const char *a = json_string_value(json_array_get(list, (size_t)j));
			m[k].role = order[i]->name;
			m[k].index = j;
			if (!a || split_address(a, m[k].host, sizeof m[k].host, &m[k].port) < 0) {
				free(m);
				return weir_error_set(
				    err, WEIR_E_INVALID,
				    "cluster.%s[%d]: expected \"host:port\", got %s",
				    order[i]->name, j, a ? a : "a non-string");
			}
		}
	}
	for (size_t i = 0; i < total; i++) {
		int lr = 0;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(m[j].host, m[i].host))
				lr++;
		m[i].local_rank = lr;
	}
	*out = m;
	*n_out = total;
	return 0;
}

/* The world as the distributed frameworks count it: rank, local rank and
 * size, node (group) rank and count, and horovod's cross rank/size. */
struct world {
	int rank, size;
	int local_rank, local_size;
	int group_rank, group_size;
	int cross_rank, cross_size;
};

static void compute_world(const struct member *m, size_t n, size_t me, struct world *w)
{
	memset(w, 0, sizeof *w);
	w->rank = (int)me;
	w->size = (int)n;
	w->local_rank = m[me].local_rank;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(m[i].host, m[me].host))
			w->local_size++;
		if (m[i].local_rank == 0) {
			/* first member of a host: a new node, numbered by first appearance */
			if (i < me && strcmp(m[i].host, m[me].host))
				w->group_rank++;
			w->group_size++;
		}
		if (m[i].local_rank == m[me].local_rank) {
			if (i < me)
				w->cross_rank++;
			w->cross_size++;
		}
	}
}

static char *tf_cluster_json(const struct contract_input *in)
{
	json_t *c = json_object();
	char *s;

	for (size_t i = 0; i < in->n_roles; i++) {
		const struct contract_role *r = &in->roles[i];
		if (r->sidecar)
			continue;
		json_object_set(c, r->name, json_object_get(in->cluster, r->name));
	}
	s = json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(c);
	return s;
}

/* What TonY's application master gives every container, whatever the
 * framework (docs/tony.md, "The task's environment"): the task's name and
 * index, the number of tracked tasks, the mode, the application's id and
 * session, and IS_CHIEF on the chief (chief:*, else worker:0). */
static void set_tony_common(const struct contract_input *in, struct env_list *l)
{
	int tracked = 0;

	for (size_t i = 0; i < in->n_roles; i++)
		if (!in->roles[i].untracked && !in->roles[i].sidecar)
			tracked += in->roles[i].instances;
	env_set(l, "JOB_NAME", in->role);
	env_setf(l, "TASK_INDEX", "%d", in->index);
	env_setf(l, "TASK_NUM", "%d", tracked);
	env_set(l, "DISTRIBUTED_MODE", "GANG");
	env_setf(l, "JOB_ID", "%lld", (long long)in->job_id);
	env_setf(l, "APPID", "%lld", (long long)in->job_id);
	env_setf(l, "SESSION_ID", "%d", in->attempt > 0 ? in->attempt - 1 : 0);
	if (!strcmp(in->role, "chief") ||
	    (!find_role(in, "chief") && !strcmp(in->role, "worker") && in->index == 0))
		env_set(l, "IS_CHIEF", "true");
}

/* CLUSTER_SPEC: TonY's {"role": ["host:port", ...]} of the tracked world. */
static int set_cluster_spec(const struct contract_input *in, struct env_list *l)
{
	char *cluster = tf_cluster_json(in);

	if (!cluster)
		return -1;
	env_set(l, "CLUSTER_SPEC", cluster);
	free(cluster);
	return 0;
}

static int set_tensorflow(const struct contract_input *in, const struct contract_role *mine,
                          struct env_list *l)
{
	char *cluster = tf_cluster_json(in);

	if (!cluster)
		return -1;
	env_set(l, "CLUSTER_SPEC", cluster);
	if (!mine->sidecar) {
		/* A sidecar is not in the cluster, so a TF_CONFIG naming it would be
		 * one TensorFlow refuses: it gets the TonY variables only. */
		json_t *role = json_string(in->role);
		char *quoted = role ? json_dumps(role, JSON_ENCODE_ANY) : NULL;
		size_t n = strlen(cluster) + (quoted ? strlen(quoted) : 0) + 64;
		char *tf = quoted ? malloc(n) : NULL;
		if (tf) {
			snprintf(tf, n, "{\"cluster\":%s,\"task\":{\"type\":%s,\"index\":%d}}",
			         cluster, quoted, in->index);
			env_set(l, "TF_CONFIG", tf);
		} else {
			l->failed = 1;
		}
		free(tf);
		free(quoted);
		json_decref(role);
	}
	free(cluster);
	return 0;
}

static void set_pytorch(const struct contract_input *in, const struct member *m, size_t n,
                        size_t me, const struct contract_role *mine, struct env_list *l)
{
	struct world w;

	compute_world(m, n, me, &w);
	env_set(l, "MASTER_ADDR", m[0].host);
	env_setf(l, "MASTER_PORT", "%d", m[0].port);
	env_setf(l, "INIT_METHOD", "tcp://%s:%d", m[0].host, m[0].port);
	env_setf(l, "RANK", "%d", w.rank);
	env_setf(l, "WORLD_SIZE", "%d", w.size);
	env_setf(l, "WORLD", "%d", w.size); /* TonY's name for it */
	env_setf(l, "LOCAL_RANK", "%d", w.local_rank);
	env_setf(l, "LOCAL_WORLD_SIZE", "%d", w.local_size);
	env_setf(l, "GROUP_RANK", "%d", w.group_rank);
	env_setf(l, "GROUP_WORLD_SIZE", "%d", w.group_size);
	env_set(l, "ROLE_NAME", in->role);
	env_setf(l, "ROLE_RANK", "%d", in->index);
	env_setf(l, "ROLE_WORLD_SIZE", "%d", mine->instances);
}

static void set_mxnet(const struct contract_input *in, const struct member *m, size_t n,
                      struct env_list *l)
{
	int servers = 0, workers = 0;
	const struct member *root = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(m[i].role, "scheduler")) {
			if (!root)
				root = &m[i];
		} else if (is_server_role(m[i].role)) {
			servers++;
		} else {
			workers++;
		}
	}
	/* No scheduler role: the first server (then rank 0) plays the root. */
	for (size_t i = 0; !root && i < n; i++)
		if (is_server_role(m[i].role))
			root = &m[i];
	if (!root && n > 0)
		root = &m[0];
	if (!strcmp(in->role, "scheduler"))
		env_set(l, "DMLC_ROLE", "scheduler");
	else if (is_server_role(in->role))
		env_set(l, "DMLC_ROLE", "server");
	else
		env_set(l, "DMLC_ROLE", "worker");
	if (root) {
		env_set(l, "DMLC_PS_ROOT_URI", root->host);
		env_setf(l, "DMLC_PS_ROOT_PORT", "%d", root->port);
	}
	env_setf(l, "DMLC_NUM_SERVER", "%d", servers);
	env_setf(l, "DMLC_NUM_WORKER", "%d", workers);
	env_setf(l, "DMLC_TASK_ID", "%d", in->index);
	env_set(l, "DMLC_LOCAL", "0"); /* distributed, as TonY says */
}

static int set_horovod(const struct contract_input *in, const struct member *m, size_t n, size_t me,
                       struct env_list *l, struct contract *out)
{
	struct world w;
	struct strbuf text = STRBUF_INIT;

	compute_world(m, n, me, &w);
	env_setf(l, "HOROVOD_RANK", "%d", w.rank);
	env_setf(l, "HOROVOD_SIZE", "%d", w.size);
	env_setf(l, "HOROVOD_LOCAL_RANK", "%d", w.local_rank);
	env_setf(l, "HOROVOD_LOCAL_SIZE", "%d", w.local_size);
	env_setf(l, "HOROVOD_CROSS_RANK", "%d", w.cross_rank);
	env_setf(l, "HOROVOD_CROSS_SIZE", "%d", w.cross_size);
	env_set(l, "HOROVOD_HOSTNAME", m[me].host);
	/* One "host:slots" line per host, in order of first appearance. */
	for (size_t i = 0; i < n; i++) {
		int slots = 0;
		if (m[i].local_rank != 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (!strcmp(m[j].host, m[i].host))
				slots++;
		strbuf_addf(&text, "%s:%d\n", m[i].host, slots);
	}
	out->hostfile = strbuf_detach(&text, NULL);
	if (!out->hostfile)
		return -1;
	out->hostfile_path = fs_join(in->workdir ? in->workdir : ".", "hostfile");
	if (!out->hostfile_path)
		return -1;
	env_set(l, "WEIR_HOSTFILE", out->hostfile_path);
	return 0;
}

int contract_build(const struct contract_input *in, struct contract *out, struct weir_error *err)
{
	const struct contract_role **order = NULL;
	const struct contract_role *mine;
	struct member *m = NULL;
	struct env_list l = {0};
	size_t n_order, n = 0, me = 0;
	int rc = -1;

	memset(out, 0, sizeof *out);
	mine = find_role(in, in->role);
	if (!mine)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "contract: role %s is not in the job's roles", in->role);
	if (in->index < 0 || in->index >= mine->instances)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "contract: %s:%d: index out of range (role has %d instances)",
		                      in->role, in->index, mine->instances);
	order = calloc(in->n_roles ? in->n_roles : 1, sizeof *order);
	if (!order)
		return weir_error_set(err, WEIR_E_INTERNAL, "contract: out of memory");
	n_order = rank_order(in, order);
	if (in->framework != FRAMEWORK_NONE) {
		if (!json_is_object(in->cluster)) {
			weir_error_set(err, WEIR_E_INVALID,
			               "contract: cluster: expected an object");
			goto out;
		}
		if (build_members(in, order, n_order, &m, &n, err) < 0)
			goto out;
		for (me = 0; me < n; me++)
			if (!strcmp(m[me].role, in->role) && m[me].index == in->index)
				break;
	}

	/* TonY's horovod settings are defaults: a job that runs horovodrun
	 * with MPI sets its own. */
	if (in->framework == FRAMEWORK_HOROVOD) {
		env_set(&l, "HOROVOD_CONTROLLER", "gloo");
		env_set(&l, "HOROVOD_CPU_OPERATIONS", "gloo");
		env_set(&l, "HOROVOD_GLOO_TIMEOUT_SECONDS", "2000");
	}
	/* The user's env next, so the contract wins where both set a name. */
	if (json_is_object(in->env)) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)in->env, k, v)
		{
			if (json_is_string(v))
				env_set(&l, k, json_string_value(v));
		}
	}
	env_setf(&l, "WEIR_JOB_ID", "%lld", (long long)in->job_id);
	env_set(&l, "WEIR_ROLE", in->role);
	env_setf(&l, "WEIR_TASK_INDEX", "%d", in->index);
	env_setf(&l, "WEIR_ATTEMPT", "%d", in->attempt);
	env_set(&l, "CUDA_VISIBLE_DEVICES", in->gpus ? in->gpus : "");
	set_tony_common(in, &l);

	switch (in->framework) {
	case FRAMEWORK_TENSORFLOW:
		if (set_tensorflow(in, mine, &l) < 0)
			l.failed = 1;
		break;
	case FRAMEWORK_PYTORCH:
		/* A sidecar is outside the process group: it gets no rank. */
		if (!mine->sidecar && n > 0)
			set_pytorch(in, m, n, me, mine, &l);
		break;
	case FRAMEWORK_MXNET:
		set_mxnet(in, m, n, &l);
		break;
	case FRAMEWORK_HOROVOD:
		if (set_cluster_spec(in, &l) < 0 ||
		    (!mine->sidecar && n > 0 && set_horovod(in, m, n, me, &l, out) < 0))
			l.failed = 1;
		break;
	case FRAMEWORK_NONE:
		break;
	}
	if (l.failed) {
		weir_error_set(err, WEIR_E_INTERNAL, "contract: out of memory");
		goto out;
	}
	out->env = l.v;
	out->n_env = l.n;
	memset(&l, 0, sizeof l);
	rc = 0;
out:
	if (rc < 0) {
		free(out->hostfile);
		free(out->hostfile_path);
		memset(out, 0, sizeof *out);
	}
	env_list_free(&l);
	free(m);
	free(order);
	return rc;
}

void contract_release(struct contract *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_env; i++) {
		free(c->env[i].name);
		free(c->env[i].value);
	}
	free(c->env);
	free(c->hostfile);
	free(c->hostfile_path);
	memset(c, 0, sizeof *c);
}

const char *contract_get(const struct contract *c, const char *name)
{
	for (size_t i = 0; i < c->n_env; i++)
		if (!strcmp(c->env[i].name, name))
			return c->env[i].value;
	return NULL;
}
