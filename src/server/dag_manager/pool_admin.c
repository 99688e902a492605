/* pool_admin.c: the pools as Airflow's /pools routes show and change them
 * (api/dag_admin_api.h): the configuration seeds the store's table at
 * start (store/admin_store.h), the table is the truth from then on, and
 * the manager's pools (what the pool pass decides with) are rebuilt from it
 * after every change.
 *
 * Owns: dm->pools.list, .queues and .n once the manager is created (the
 * copies made from the configuration are replaced by the table's).
 */
#include "server/dag_manager/dm_internal.h"

#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "sched/dag_pool.h"
#include "store/admin_store.h"

/* dm->pools.list and dm->pools.queues from the table's rows. */
static int pools_rebuild(struct dag_manager *dm, struct weir_error *err)
{
	struct pool_row *rows = NULL;
	struct dag_pool *pools;
	char **queues;
	size_t n = 0;

	if (admin_pool_list(dm->store, &rows, &n, err) < 0)
		return -1;
	pools = calloc(n + 1, sizeof *pools);
	queues = calloc(n + 1, sizeof *queues);
	if (!pools || !queues) {
		free(pools);
		free(queues);
		pool_rows_free(rows, n);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		pools[i].name = rows[i].name; /* taken */
		pools[i].slots = rows[i].slots;
		queues[i] = rows[i].queue;
		rows[i].name = rows[i].queue = NULL;
	}
	pool_rows_free(rows, n);
	for (size_t i = 0; i < dm->pools.n; i++) {
		free((char *)dm->pools.list[i].name);
		free(dm->pools.queues[i]);
	}
	free(dm->pools.list);
	free(dm->pools.queues);
	dm->pools.list = pools;
	dm->pools.queues = queues;
	dm->pools.n = n;
	dm->pools.dirty = true; /* a TI waiting for a pool may fit now */
	return 0;
}

int dm_pools_load(struct dag_manager *dm, struct weir_error *err)
{
	int rc = 0;

	dm_touch_no_pass(dm); /* at start-up: the job manager's recovery comes first */
	for (size_t i = 0; i < dm->pools.n && rc == 0; i++) {
		struct pool_row p = {.name = (char *)dm->pools.list[i].name,
		                     .slots = dm->pools.list[i].slots,
		                     .queue = dm->pools.queues[i]};
		rc = admin_pool_seed(dm->store, &p, err);
	}
	if (rc == 0)
		rc = pools_rebuild(dm, err);
	return rc;
}

/* ---- Airflow's Pool ---- */

struct pool_use {
	int running, queued, scheduled;
};

/* What each pool's TIs hold now, by state (a queued TI whose job runs
 * counts as running, as its TaskInstance shows it). */
static struct pool_use *pools_use(struct dag_manager *dm, struct weir_error *err)
{
	static const enum dag_ti_state states[] = {DAG_TI_SCHEDULED, DAG_TI_QUEUED, DAG_TI_RUNNING};
	struct pool_use *u = calloc(dm->pools.n + 1, sizeof *u);

	if (!u) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	for (size_t s = 0; s < 3; s++) {
		struct dag_ti_row *tis = NULL;
		size_t n = 0;
		if (dag_store_tis_in_state(dm->ds, states[s], &tis, &n, err) < 0) {
			free(u);
			return NULL;
		}
		for (size_t i = 0; i < n; i++) {
			int slots = tis[i].pool_slots > 0 ? tis[i].pool_slots : 1;
			for (size_t k = 0; k < dm->pools.n; k++) {
				if (strcmp(dm->pools.list[k].name, tis[i].pool))
					continue;
				if (states[s] == DAG_TI_SCHEDULED) {
					u[k].scheduled += slots;
				} else if (states[s] == DAG_TI_RUNNING) {
					u[k].running += slots;
				} else {
					struct job_row job = {0};
					bool runs = tis[i].job_id > 0 &&
					            store_job_get(dm->store, tis[i].job_id, &job,
					                          NULL) == 0 &&
					            dm_job_runs(&job);
					job_row_release(&job);
					if (runs)
						u[k].running += slots;
					else
						u[k].queued += slots;
				}
			}
		}
		dag_ti_rows_free(tis, n);
	}
	return u;
}

static json_t *pool_json(const struct dag_pool *p, const char *description,
                         const struct pool_use *u)
{
	int occupied = u->running + u->queued;

	return json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:b}", "name", p->name,
	                 "slots", p->slots, "occupied_slots", occupied, "running_slots", u->running,
	                 "queued_slots", u->queued, "scheduled_slots", u->scheduled,
	                 "deferred_slots", 0, "open_slots", p->slots < 0 ? -1 : p->slots - occupied,
	                 "description", description ? json_string(description) : json_null(),
	                 "include_deferred", 0);
}

static int pool_cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct pool_row *)a)->name, ((const struct pool_row *)b)->name);
}

static int pool_cmp_slots(const void *a, const void *b)
{
	const struct pool_row *x = a, *y = b;
	return x->slots != y->slots ? (x->slots < y->slots ? -1 : 1) : pool_cmp_name(a, b);
}

/* Every pool as Airflow's Pool, in the table's order (by name), or one. */
static json_t *pools_json(struct dag_manager *dm, const char *only, struct weir_error *err)
{
	struct pool_row *rows = NULL;
	size_t n = 0;
	struct pool_use *u;
	json_t *a;

	if (admin_pool_list(dm->store, &rows, &n, err) < 0)
		return NULL;
	if (!(u = pools_use(dm, err))) {
		pool_rows_free(rows, n);
		return NULL;
	}
	a = json_array();
	for (size_t i = 0; i < n && a; i++) {
		struct dag_pool p = {.name = rows[i].name, .slots = rows[i].slots};
		struct pool_use none = {0}, *pu = &none;
		if (only && strcmp(only, rows[i].name))
			continue;
		for (size_t k = 0; k < dm->pools.n; k++)
			if (!strcmp(dm->pools.list[k].name, rows[i].name))
				pu = &u[k];
		json_array_append_new(a, pool_json(&p, rows[i].description, pu));
	}
	free(u);
	pool_rows_free(rows, n);
	if (!a)
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return a;
}

json_t *dm_op_list_pools(void *ctx, int limit, int offset, const char *order_by,
                         struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	json_t *all = pools_json(dm, NULL, err), *page;
	size_t n;

	if (!all)
		return NULL;
	n = json_array_size(all);
	/* order: by name (the table's), by slots, or either reversed */
	if (order_by && (strstr(order_by, "slots") || order_by[0] == '-')) {
		struct pool_row *keys = calloc(n + 1, sizeof *keys);
		json_t *sorted = json_array();
		bool desc = order_by[0] == '-';
		for (size_t i = 0; keys && i < n; i++) {
			json_t *p = json_array_get(all, i);
			keys[i].name = (char *)json_string_value(json_object_get(p, "name"));
			keys[i].slots = (int)json_integer_value(json_object_get(p, "slots"));
			keys[i].queue = (char *)p; /* carries the item */
		}
		if (keys)
			qsort(keys, n, sizeof *keys,
			      strstr(order_by, "slots") ? pool_cmp_slots : pool_cmp_name);
		for (size_t i = 0; keys && i < n; i++)
			json_array_append(sorted, (json_t *)keys[desc ? n - 1 - i : i].queue);
		free(keys);
		json_decref(all);
		all = sorted;
	}
	page = json_array();
	if (limit <= 0)
		limit = 100;
	for (size_t i = (size_t)(offset > 0 ? offset : 0);
	     i < n && json_array_size(page) < (size_t)limit; i++)
		json_array_append(page, json_array_get(all, i));
	json_decref(all);
	return json_pack("{s:o, s:I}", "pools", page, "total_entries", (json_int_t)n);
}

json_t *dm_op_get_pool(void *ctx, const char *name, struct weir_error *err)
{
	json_t *a = pools_json(ctx, name, err), *r;

	if (!a)
		return NULL;
	r = json_incref(json_array_get(a, 0));
	json_decref(a);
	if (!r)
		weir_error_set(err, WEIR_E_NOT_FOUND, "Pool with name:'%s' not found", name);
	return r;
}

/* The body's fields over `p` (strings borrowed from body). */
static void pool_from_body(struct pool_row *p, json_t *body)
{
	json_t *v;

	if ((v = json_object_get(body, "name")))
		p->name = (char *)json_string_value(v);
	if ((v = json_object_get(body, "slots")))
		p->slots = (int)json_integer_value(v);
	if ((v = json_object_get(body, "description")))
		p->description = (char *)json_string_value(v);
}

/* A change written, the manager's pools rebuilt, the pool answered. */
static json_t *pool_write(struct dag_manager *dm, const char *old_name, const struct pool_row *p,
                          bool replace, struct weir_error *err)
{
	json_t *r = NULL;

	dm_touch(dm);
	if (admin_pool_put(dm->store, old_name, p, replace, err) == 0 &&
	    pools_rebuild(dm, err) == 0) {
		log_info("pool %s: %d slots", p->name, p->slots);
		r = dm_op_get_pool(dm, p->name, err);
	}
	return r;
}

json_t *dm_op_add_pool(void *ctx, json_t *body, struct weir_error *err)
{
	struct pool_row p = {0};

	pool_from_body(&p, body);
	return pool_write(ctx, p.name, &p, false, err);
}

json_t *dm_op_patch_pool(void *ctx, const char *name, json_t *body, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct pool_row *rows = NULL, p = {0};
	size_t n = 0;
	json_t *r = NULL;
	bool found = false;

	if (admin_pool_list(dm->store, &rows, &n, err) < 0)
		return NULL;
	for (size_t i = 0; i < n && !found; i++)
		if (!strcmp(rows[i].name, name)) {
			found = true;
			p = rows[i];
		}
	if (!found) {
		weir_error_set(err, WEIR_E_NOT_FOUND, "Pool with name:'%s' not found", name);
		goto out;
	}
	pool_from_body(&p, body);
	if (!strcmp(name, DAG_DEFAULT_POOL) && strcmp(p.name, name)) {
		weir_error_set(err, WEIR_E_INVALID, "Default Pool's name can't be modified");
		goto out;
	}
	r = pool_write(dm, name, &p, true, err);
out:
	pool_rows_free(rows, n);
	return r;
}

int dm_op_delete_pool(void *ctx, const char *name, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	int rc;

	if (!strcmp(name, DAG_DEFAULT_POOL))
		return weir_error_set(err, WEIR_E_INVALID, "Default Pool can't be deleted");
	dm_touch(dm);
	rc = admin_pool_delete(dm->store, name, err);
	if (rc == 0)
		rc = pools_rebuild(dm, err);
	if (rc == 0)
		log_info("pool %s deleted", name);
	return rc;
}
