/* placement.c: where work goes.  Owns the placement context: the local and the
 * gang backend (borrowed), the server's queues (copied), the server-wide
 * shipping folders; answers, per job, which backend it runs on (its route,
 * stored at submission), where a gang job's archives are shipped, and where
 * its gang is placed.
 */
#include "server/job_manager/jm_internal.h"

#include <stdio.h>

#include "exec/artifact.h"
#include "lib/fs.h"

/* A queue of the server's (job_manager_set_routes), copied. */
struct route_queue {
	char *name;
	bool gang;
	char *shared_dir, *node_cache_dir; /* NULL: the server's */
	struct executor_placement place;   /* strings owned (const only for the type) */
};

struct jm_placement {
	struct executor *exec;      /* the local backend; NULL without one */
	struct executor *gang_exec; /* the gang backend (Slurm); NULL without one */
	bool default_gang;          /* work that names no queue goes to gang_exec */
	struct route_queue *queues;
	size_t n_queues;
	char *shared_dir, *node_cache_dir; /* gang work's, server-wide; NULL: none */
};

struct jm_placement *jm_placement_create(struct weir_error *err)
{
	struct jm_placement *r = calloc(1, sizeof *r);

	if (!r)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return r;
}

static void queues_free(struct jm_placement *r)
{
	for (size_t i = 0; i < r->n_queues; i++) {
		struct route_queue *q = &r->queues[i];
		free(q->name);
		free(q->shared_dir);
		free(q->node_cache_dir);
		free((void *)q->place.partition);
		free((void *)q->place.account);
		free((void *)q->place.qos);
		free((void *)q->place.time);
		for (size_t k = 0; k < q->place.n_options; k++)
			free((void *)q->place.options[k]);
		free((void *)q->place.options);
	}
	free(r->queues);
	r->queues = NULL;
	r->n_queues = 0;
}

void jm_placement_destroy(struct jm_placement *r)
{
	if (!r)
		return;
	queues_free(r);
	free(r->shared_dir);
	free(r->node_cache_dir);
	free(r);
}

static const struct route_queue *queue_find(const struct jm_placement *r, const char *name)
{
	for (size_t i = 0; name && i < r->n_queues; i++)
		if (!strcmp(r->queues[i].name, name))
			return &r->queues[i];
	return NULL;
}

bool job_manager_has_queue(struct job_manager *jm, const char *name, char *names, size_t size)
{
	const struct jm_placement *r = jm->placement;
	size_t off = 0;

	names[0] = '\0';
	for (size_t i = 0; i < r->n_queues && off < size - 1; i++)
		off += (size_t)snprintf(names + off, size - off, "%s%s", i ? ", " : "",
		                        r->queues[i].name);
	return queue_find(r, name) != NULL;
}

int job_manager_set_routes(struct job_manager *jm, struct executor *local, struct executor *gang,
                           bool default_gang, const struct job_manager_queue *queues, size_t n,
                           struct weir_error *err)
{
	struct jm_placement *r = jm->placement;

	queues_free(r);
	r->exec = local;
	r->gang_exec = gang;
	r->default_gang = default_gang && gang;
	if (gang && jm_queue_want_gang(jm, err) < 0)
		return -1;
	if (n == 0)
		return 0;
	r->queues = calloc(n, sizeof *r->queues);
	if (!r->queues)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		struct route_queue *q = &r->queues[i];
		const struct executor_placement *p = &queues[i].place;
		char **opts = calloc(p->n_options + 1, sizeof *opts);
		r->n_queues++;
		q->gang = queues[i].gang;
		q->name = strdup(queues[i].name);
		q->place.partition = str_dup_or_null(p->partition);
		q->place.account = str_dup_or_null(p->account);
		q->place.qos = str_dup_or_null(p->qos);
		q->place.time = str_dup_or_null(p->time);
		q->shared_dir = str_dup_or_null(queues[i].shared_dir);
		q->node_cache_dir = str_dup_or_null(queues[i].node_cache_dir);
		q->place.options = (const char *const *)opts;
		if (!q->name || !opts)
			goto oom;
		for (size_t k = 0; k < p->n_options; k++) {
			if (!(opts[k] = strdup(p->options[k])))
				goto oom;
			q->place.n_options++;
		}
	}
	return 0;
oom:
	queues_free(r);
	return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
}

void job_manager_set_executor(struct job_manager *jm, struct executor *ex)
{
	if (ex && ex->ops->start_gang)
		job_manager_set_routes(jm, NULL, ex, true, NULL, 0, NULL);
	else
		job_manager_set_routes(jm, ex, NULL, false, NULL, 0, NULL);
}

void job_manager_set_shipping(struct job_manager *jm, const char *shared_dir,
                              const char *node_cache_dir)
{
	struct jm_placement *r = jm->placement;

	free(r->shared_dir);
	free(r->node_cache_dir);
	r->shared_dir = str_dup_or_null(shared_dir);
	r->node_cache_dir = str_dup_or_null(node_cache_dir);
}

/* ---- a job's route ---- */

int jm_route_choose(struct job_manager *jm, const char *queue, bool *gang, struct weir_error *err)
{
	const struct jm_placement *r = jm->placement;

	*gang = r->default_gang;
	if (queue) {
		const struct route_queue *q = queue_find(r, queue);
		if (!q) {
			char names[512];
			job_manager_has_queue(jm, queue, names, sizeof names);
			return weir_error_set(
			    err, WEIR_E_UNFIT, "queue: no queue \"%s\" on this server (%s%s)",
			    queue, r->n_queues ? "its queues: " : "it has no queues", names);
		}
		*gang = q->gang;
	}
	if (*gang && !r->gang_exec)
		return weir_error_set(err, WEIR_E_UNFIT, "queue: this server has no Slurm backend");
	return 0;
}

void jm_route_get(struct job_manager *jm, int64_t job_id, struct jm_route *r)
{
	enum job_route route = JOB_ROUTE_UNSET;

	if (jm_rows_route(jm, job_id, r))
		return;
	r->gang = jm->placement->default_gang;
	r->queue[0] = '\0';
	if (store_job_route_get(jm->store, job_id, &route, r->queue, sizeof r->queue, NULL) < 0)
		return;
	if (route != JOB_ROUTE_UNSET)
		r->gang = route == JOB_ROUTE_GANG;
	jm_rows_keep_route(jm, job_id, r, false);
}

struct executor *jm_exec_of(struct job_manager *jm, int64_t job_id)
{
	struct jm_route r;
	jm_route_get(jm, job_id, &r);
	return r.gang ? jm->placement->gang_exec : jm->placement->exec;
}

struct executor *jm_local_exec(struct job_manager *jm)
{
	return jm->placement->exec;
}

struct executor *jm_gang_exec(struct job_manager *jm)
{
	return jm->placement->gang_exec;
}

void jm_backends_turn_end(struct job_manager *jm, bool stored)
{
	struct executor *ex[2] = {jm->placement->exec, jm->placement->gang_exec};

	for (size_t i = 0; i < 2; i++)
		if (ex[i] && ex[i]->ops->turn_end)
			ex[i]->ops->turn_end(ex[i], stored);
}

const char *jm_gang_name(struct job_manager *jm, const char *none)
{
	return jm->placement->gang_exec ? jm->placement->gang_exec->ops->name : none;
}

/* ---- shipping and placement of gang work ---- */

void jm_job_shipping(struct job_manager *jm, int64_t job_id, const char **shared, char **node_cache)
{
	const struct jm_placement *r = jm->placement;
	struct jm_route rt;
	const struct route_queue *q;
	const char *nc;

	*shared = NULL;
	*node_cache = NULL;
	jm_route_get(jm, job_id, &rt);
	if (!rt.gang)
		return;
	q = queue_find(r, rt.queue);
	*shared = q && q->shared_dir ? q->shared_dir : r->shared_dir;
	if (!*shared)
		return;
	nc = q && q->node_cache_dir ? q->node_cache_dir : r->node_cache_dir;
	if (nc)
		*node_cache = strdup(nc);
	else if (asprintf(node_cache, "%s/nodes/%%n", *shared) < 0)
		*node_cache = NULL;
}

char *jm_shipped_path(struct job_manager *jm, const char *shared, const char *archive,
                      struct weir_error *err)
{
	char *dir = fs_join(shared, "artifacts"), *memo = fs_join(jm->home, "cache"), *out = NULL;

	if (!dir || !memo)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	else
		artifact_ship(archive, dir, memo, &out, err);
	free(dir);
	free(memo);
	return out;
}

int jm_job_placement(struct job_manager *jm, int64_t job_id, const struct job_spec *spec,
                     struct executor_placement *place)
{
	struct jm_route rt;
	const struct route_queue *q;
	struct executor_placement own = {
	    .partition = spec->slurm.partition,
	    .account = spec->slurm.account,
	    .qos = spec->slurm.qos,
	    .time = spec->slurm.time,
	    .options = (const char *const *)spec->slurm.sbatch_options,
	    .n_options = spec->slurm.n_sbatch_options,
	};

	jm_route_get(jm, job_id, &rt);
	q = queue_find(jm->placement, rt.queue);
	return executor_placement_merge(q ? &q->place : NULL, &own, place);
}
