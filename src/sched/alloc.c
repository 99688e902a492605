/* alloc.c: node resources and gang allocation (alloc.h).
 *
 * The state is a node's capacity, what each holding job took, and the
 * owner of each GPU id.  Nodes have at most a few dozen GPUs and the server
 * holds at most a few hundred jobs, so plain arrays and linear scans are
 * simpler than anything cleverer and fast enough.
 */
#include "sched/alloc.h"

#include "lib/grow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

struct holding {
	int64_t job_id;
	int64_t vcores;
	int64_t memory_mb;
	size_t n_gpus;
};

struct alloc_state {
	int64_t vcores;
	int64_t memory_mb;
	char **gpu_ids;
	size_t n_gpus;
	int64_t *gpu_owner; /* job id, 0 when free (job ids start at 1) */

	int64_t used_vcores;
	int64_t used_memory_mb;
	size_t used_gpus;

	struct holding *holds;
	size_t n_holds;
	size_t cap_holds;
};

struct gang_totals {
	int64_t vcores;
	int64_t memory_mb;
	int64_t gpus;
};

static void gang_totals(const struct job_spec *spec, struct gang_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < spec->n_roles; i++) {
		const struct role_spec *r = &spec->roles[i];
		int64_t n = r->instances > 0 ? r->instances : 0;
		t->vcores += n * r->vcores;
		t->memory_mb += n * (int64_t)r->memory_mb;
		t->gpus += n * r->gpus;
	}
}

char *alloc_format_memory(uint64_t mb, char *buf, size_t size)
{
	if (mb % 1024 == 0)
		snprintf(buf, size, "%" PRIu64 "g", mb / 1024);
	else
		snprintf(buf, size, "%" PRIu64 "m", mb);
	return buf;
}

static const char *plural(int64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void job_alloc_release(struct job_alloc *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_tasks; i++) {
		free(a->tasks[i].role);
		free(a->tasks[i].gpus);
	}
	free(a->tasks);
	a->tasks = NULL;
	a->n_tasks = 0;
}

struct alloc_state *alloc_state_create(const struct node_resources *node, struct weir_error *err)
{
	struct alloc_state *st = calloc(1, sizeof(*st));
	if (!st)
		goto oom;
	st->vcores = node->vcores;
	st->memory_mb = (int64_t)node->memory_mb;
	if (node->n_gpus > 0) {
		st->gpu_ids = calloc(node->n_gpus, sizeof(*st->gpu_ids));
		st->gpu_owner = calloc(node->n_gpus, sizeof(*st->gpu_owner));
		if (!st->gpu_ids || !st->gpu_owner)
			goto oom;
		st->n_gpus = node->n_gpus;
		for (size_t i = 0; i < node->n_gpus; i++) {
			st->gpu_ids[i] = strdup(node->gpu_ids[i] ? node->gpu_ids[i] : "");
			if (!st->gpu_ids[i])
				goto oom;
		}
	}
	return st;
oom:
	alloc_state_destroy(st);
	weir_error_set(err, WEIR_E_INTERNAL, "allocation state: out of memory");
	return NULL;
}

void alloc_state_destroy(struct alloc_state *st)
{
	if (!st)
		return;
	if (st->gpu_ids) {
		for (size_t i = 0; i < st->n_gpus; i++)
			free(st->gpu_ids[i]);
	}
	free(st->gpu_ids);
	free(st->gpu_owner);
	free(st->holds);
	free(st);
}

enum resource { RES_MEMORY, RES_GPUS, RES_VCORES };

/* The order shortfalls are named in: memory first, as users size it first. */
static const enum resource resource_order[] = {RES_MEMORY, RES_GPUS, RES_VCORES};

static int64_t role_amount(const struct role_spec *r, enum resource res)
{
	switch (res) {
	case RES_MEMORY:
		return (int64_t)r->memory_mb;
	case RES_GPUS:
		return r->gpus;
	case RES_VCORES:
		return r->vcores;
	}
	return 0;
}

/* "4g memory", "1 gpu", "3 vcores" */
static char *format_amount(enum resource res, int64_t n, char *buf, size_t size)
{
	char m[32];
	switch (res) {
	case RES_MEMORY:
		snprintf(buf, size, "%s memory",
		         alloc_format_memory(n > 0 ? (uint64_t)n : 0, m, sizeof(m)));
		break;
	case RES_GPUS:
		snprintf(buf, size, "%" PRId64 " %s", n, plural(n, "gpu", "gpus"));
		break;
	case RES_VCORES:
		snprintf(buf, size, "%" PRId64 " %s", n, plural(n, "vcore", "vcores"));
		break;
	}
	return buf;
}

/* "4g", "2", "3": an amount without its unit, for "(4g per worker x 2, ...)" */
static char *format_bare(enum resource res, int64_t n, char *buf, size_t size)
{
	if (res == RES_MEMORY)
		return alloc_format_memory((uint64_t)n, buf, size);
	snprintf(buf, size, "%" PRId64, n);
	return buf;
}

static const char *resource_noun(enum resource res)
{
	return res == RES_MEMORY ? "memory" : res == RES_GPUS ? "gpus" : "vcores";
}

/* A role whose single instance is larger than the node, or the gang's total. */
static int check_fits(int64_t node_vcores, int64_t node_mem, int64_t node_gpus,
                      const struct job_spec *spec, struct weir_error *err)
{
	const int64_t have[] = {
	    [RES_MEMORY] = node_mem, [RES_GPUS] = node_gpus, [RES_VCORES] = node_vcores};
	char need_s[64], have_s[64];

	for (size_t i = 0; i < spec->n_roles; i++) {
		const struct role_spec *r = &spec->roles[i];
		for (size_t k = 0; k < 3; k++) {
			enum resource res = resource_order[k];
			int64_t per = role_amount(r, res);
			if (per > have[res])
				return weir_error_set(
				    err, WEIR_E_UNFIT, "%s needs %s per instance; this node has %s",
				    r->name, format_amount(res, per, need_s, sizeof(need_s)),
				    format_amount(res, have[res], have_s, sizeof(have_s)));
		}
	}

	for (size_t k = 0; k < 3; k++) {
		enum resource res = resource_order[k];
		int64_t total = 0;
		size_t n_using = 0;
		const struct role_spec *only = NULL;
		for (size_t i = 0; i < spec->n_roles; i++) {
			const struct role_spec *r = &spec->roles[i];
			int64_t per = role_amount(r, res);
			if (per <= 0 || r->instances <= 0)
				continue;
			total += per * r->instances;
			n_using++;
			only = r;
		}
		if (total <= have[res])
			continue;
		format_amount(res, have[res], have_s, sizeof(have_s));
		if (n_using == 1)
			return weir_error_set(
			    err, WEIR_E_UNFIT, "job needs %s per %s x %d; this node has %s",
			    format_amount(res, role_amount(only, res), need_s, sizeof(need_s)),
			    only->name, only->instances, have_s);
		/* several roles use it: the total, then each role's share */
		char detail[512];
		size_t len = 0;
		detail[0] = '\0';
		for (size_t i = 0; i < spec->n_roles && len < sizeof(detail); i++) {
			const struct role_spec *r = &spec->roles[i];
			int64_t per = role_amount(r, res);
			char bare[32];
			if (per <= 0 || r->instances <= 0)
				continue;
			len += (size_t)snprintf(
			    detail + len, sizeof(detail) - len, "%s%s per %s x %d", len ? ", " : "",
			    format_bare(res, per, bare, sizeof(bare)), r->name, r->instances);
		}
		char total_s[32];
		return weir_error_set(err, WEIR_E_UNFIT,
		                      "job needs %s %s in all (%s); this node has %s",
		                      format_bare(res, total, total_s, sizeof(total_s)),
		                      resource_noun(res), detail, have_s);
	}
	return 0;
}

int alloc_never_fits(const struct node_resources *node, const struct job_spec *spec,
                     struct weir_error *err)
{
	return check_fits(node->vcores, (int64_t)node->memory_mb, (int64_t)node->n_gpus, spec, err);
}

int alloc_state_never_fits(const struct alloc_state *st, const struct job_spec *spec,
                           struct weir_error *err)
{
	return check_fits(st->vcores, st->memory_mb, (int64_t)st->n_gpus, spec, err);
}

static struct holding *find_holding(const struct alloc_state *st, int64_t job_id)
{
	for (size_t i = 0; i < st->n_holds; i++) {
		if (st->holds[i].job_id == job_id)
			return &st->holds[i];
	}
	return NULL;
}

bool alloc_holds(const struct alloc_state *st, int64_t job_id)
{
	return find_holding(st, job_id) != NULL;
}

static int add_holding(struct alloc_state *st, int64_t job_id, const struct gang_totals *t)
{
	if (ALLOC_GROW(st->holds, st->n_holds + 1, st->cap_holds) < 0)
		return -1;
	st->holds[st->n_holds++] = (struct holding){
	    .job_id = job_id,
	    .vcores = t->vcores,
	    .memory_mb = t->memory_mb,
	    .n_gpus = (size_t)t->gpus,
	};
	st->used_vcores += t->vcores;
	st->used_memory_mb += t->memory_mb;
	st->used_gpus += (size_t)t->gpus;
	return 0;
}

/* Joins the ids of gpu indexes idx[0..n) with ','. */
static char *join_gpus(const struct alloc_state *st, const size_t *idx, size_t n)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(st->gpu_ids[idx[i]]) + 1;
	char *s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(st->gpu_ids[idx[i]]);
		if (i)
			s[at++] = ',';
		memcpy(s + at, st->gpu_ids[idx[i]], l);
		at += l;
		s[at] = '\0';
	}
	return s;
}

int alloc_try_gang(struct alloc_state *st, int64_t job_id, const struct job_spec *spec,
                   struct job_alloc *out, char *reason, size_t reason_size, struct weir_error *err)
{
	struct job_alloc a = {.job_id = job_id};
	size_t *picked = NULL;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (reason_size)
		reason[0] = '\0';
	if (check_fits(st->vcores, st->memory_mb, (int64_t)st->n_gpus, spec, err) < 0)
		return -1;
	if (find_holding(st, job_id))
		return weir_error_set(err, WEIR_E_CONFLICT,
		                      "job %" PRId64 " already holds resources", job_id);

	struct gang_totals t;
	gang_totals(spec, &t);
	const int64_t need[] = {
	    [RES_MEMORY] = t.memory_mb, [RES_GPUS] = t.gpus, [RES_VCORES] = t.vcores};
	const int64_t avail[] = {[RES_MEMORY] = st->memory_mb - st->used_memory_mb,
	                         [RES_GPUS] = (int64_t)st->n_gpus - (int64_t)st->used_gpus,
	                         [RES_VCORES] = st->vcores - st->used_vcores};
	for (size_t k = 0; k < 3; k++) {
		enum resource res = resource_order[k];
		if (need[res] > avail[res]) {
			char amount[64];
			snprintf(
			    reason, reason_size, "waiting: %s",
			    format_amount(res, need[res] - avail[res], amount, sizeof(amount)));
			return 1;
		}
	}

	size_t n_tasks = (size_t)job_spec_task_count(spec);
	a.tasks = calloc(n_tasks ? n_tasks : 1, sizeof(*a.tasks));
	picked = calloc(st->n_gpus ? st->n_gpus : 1, sizeof(*picked));
	if (!a.tasks || !picked)
		goto oom;

	/* pick GPUs without marking them until the whole gang is built, so a
	 * failure leaves the state as it was */
	size_t next_free = 0; /* GPUs are taken in node order; none is taken twice */
	for (size_t i = 0; i < spec->n_roles; i++) {
		const struct role_spec *r = &spec->roles[i];
		for (int k = 0; k < r->instances; k++) {
			struct task_alloc *ta = &a.tasks[a.n_tasks];
			size_t n_picked = 0;
			while (n_picked < (size_t)r->gpus) {
				if (st->gpu_owner[next_free] == 0)
					picked[n_picked++] = next_free;
				next_free++;
			}
			ta->role = strdup(r->name);
			ta->gpus = join_gpus(st, picked, n_picked);
			ta->index = k;
			a.n_tasks++;
			if (!ta->role || !ta->gpus)
				goto oom;
		}
	}
	if (add_holding(st, job_id, &t) < 0)
		goto oom;
	/* now mark: walk the same order again */
	next_free = 0;
	for (int64_t g = 0; g < t.gpus; g++) {
		while (st->gpu_owner[next_free] != 0)
			next_free++;
		st->gpu_owner[next_free] = job_id;
	}
	*out = a;
	a = (struct job_alloc){0};
	rc = 0;
	goto out;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "allocating job %" PRId64 ": out of memory", job_id);
out:
	job_alloc_release(&a);
	free(picked);
	return rc;
}

static ssize_t gpu_index(const struct alloc_state *st, const char *id, size_t len)
{
	for (size_t i = 0; i < st->n_gpus; i++) {
		if (strlen(st->gpu_ids[i]) == len && memcmp(st->gpu_ids[i], id, len) == 0)
			return (ssize_t)i;
	}
	return -1;
}

int alloc_reserve(struct alloc_state *st, int64_t job_id, const struct job_spec *spec,
                  const struct task_alloc *tasks, size_t n_tasks, struct weir_error *err)
{
	size_t *idx = NULL;
	size_t n_idx = 0;
	int rc = -1;

	if (find_holding(st, job_id))
		return weir_error_set(err, WEIR_E_CONFLICT,
		                      "job %" PRId64 " already holds resources", job_id);
	idx = calloc(st->n_gpus ? st->n_gpus : 1, sizeof(*idx));
	if (!idx)
		goto oom;
	for (size_t i = 0; i < n_tasks; i++) {
		const struct task_alloc *ta = &tasks[i];
		const struct role_spec *r = job_spec_find_role(spec, ta->role);
		if (!r || ta->index < 0 || ta->index >= r->instances) {
			weir_error_set(err, WEIR_E_INVALID,
			               "job %" PRId64 ": task %s:%d is not in its spec", job_id,
			               ta->role ? ta->role : "?", ta->index);
			goto out;
		}
		const char *p = ta->gpus ? ta->gpus : "";
		while (*p) {
			size_t len = strcspn(p, ",");
			if (len > 0) {
				ssize_t g = gpu_index(st, p, len);
				if (g < 0) {
					weir_error_set(err, WEIR_E_INVALID,
					               "job %" PRId64
					               ": task %s:%d holds gpu %.*s, "
					               "which this node does not have",
					               job_id, ta->role, ta->index, (int)len, p);
					goto out;
				}
				bool dup = st->gpu_owner[g] != 0;
				for (size_t k = 0; k < n_idx && !dup; k++)
					dup = idx[k] == (size_t)g;
				if (dup) {
					weir_error_set(err, WEIR_E_CONFLICT,
					               "job %" PRId64 ": gpu %.*s is already held",
					               job_id, (int)len, p);
					goto out;
				}
				idx[n_idx++] = (size_t)g;
			}
			p += len;
			if (*p == ',')
				p++;
		}
	}
	struct gang_totals t;
	gang_totals(spec, &t);
	/* what the tasks really hold, not what the spec says, is what is busy */
	t.gpus = (int64_t)n_idx;
	if (add_holding(st, job_id, &t) < 0)
		goto oom;
	for (size_t k = 0; k < n_idx; k++)
		st->gpu_owner[idx[k]] = job_id;
	rc = 0;
	goto out;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "reserving job %" PRId64 ": out of memory", job_id);
out:
	free(idx);
	return rc;
}

int alloc_release(struct alloc_state *st, int64_t job_id)
{
	struct holding *h = find_holding(st, job_id);
	if (!h)
		return -1;
	st->used_vcores -= h->vcores;
	st->used_memory_mb -= h->memory_mb;
	st->used_gpus -= h->n_gpus;
	for (size_t i = 0; i < st->n_gpus; i++) {
		if (st->gpu_owner[i] == job_id)
			st->gpu_owner[i] = 0;
	}
	*h = st->holds[--st->n_holds];
	return 0;
}

void alloc_free_resources(const struct alloc_state *st, int *vcores, uint64_t *memory_mb,
                          size_t *gpus)
{
	int64_t v = st->vcores - st->used_vcores;
	int64_t m = st->memory_mb - st->used_memory_mb;
	if (vcores)
		*vcores = v > 0 ? (int)v : 0;
	if (memory_mb)
		*memory_mb = m > 0 ? (uint64_t)m : 0;
	if (gpus)
		*gpus = st->n_gpus > st->used_gpus ? st->n_gpus - st->used_gpus : 0;
}
