/* dataset_due.c: which DAGs scheduled on datasets are due, and a waiting
 * trigger_dag task's end (dataset_due.h). */
#include "sched/dataset_due.h"

#include <string.h>

static bool queued_for(const struct dataset_queued *q, size_t n, const char *dag_id,
                       const char *uri)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(q[i].dag_id, dag_id) && !strcmp(q[i].uri, uri))
			return true;
	return false;
}

size_t dataset_due_count(const struct dataset_dag *dag, const struct dataset_queued *q,
                         size_t n_queued)
{
	size_t have = 0;

	for (size_t u = 0; u < dag->n_uris; u++)
		have += queued_for(q, n_queued, dag->dag_id, dag->uris[u]);
	return have;
}

bool dataset_cond_true(const json_t *cond, const char *dag_id, const struct dataset_queued *q,
                       size_t n_queued)
{
	json_t *all, *any, *list, *c;
	size_t i;

	if (json_is_string(cond))
		return queued_for(q, n_queued, dag_id, json_string_value(cond));
	all = json_object_get(cond, "all");
	any = json_object_get(cond, "any");
	list = all ? all : any;
	if (!json_is_array(list) || (all && any))
		return false;
	json_array_foreach(list, i, c)
	{
		bool v = dataset_cond_true(c, dag_id, q, n_queued);
		if (v != (all != NULL))
			return v;
	}
	return all != NULL;
}

size_t dataset_due(const struct dataset_dag *dags, size_t n_dags, const struct dataset_queued *q,
                   size_t n_queued, size_t *due)
{
	size_t n = 0;

	for (size_t i = 0; i < n_dags; i++) {
		const struct dataset_dag *d = &dags[i];
		if (d->paused || d->n_uris == 0)
			continue;
		if (d->cond ? dataset_cond_true(d->cond, d->dag_id, q, n_queued)
		            : dataset_due_count(d, q, n_queued) == d->n_uris)
			due[n++] = i;
	}
	return n;
}

bool dataset_trigger_outcome(unsigned allowed, unsigned failed, enum dag_run_state state)
{
	unsigned bit = 1u << state;

	if (failed & bit)
		return false;
	return (allowed & bit) != 0;
}
