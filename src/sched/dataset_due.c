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

/* Whether `cond` names an alias linked to `uri`, or the URI itself when
 * `uri_too`. */
static bool cond_names(const json_t *cond, const char *uri, bool uri_too,
                       const struct dataset_alias_link *links, size_t n_links)
{
	const char *alias = json_string_value(json_object_get(cond, "alias"));
	json_t *list, *c;
	size_t i;

	if (json_is_string(cond))
		return uri_too && !strcmp(json_string_value(cond), uri);
	if (alias) {
		for (size_t k = 0; k < n_links; k++)
			if (!strcmp(links[k].alias, alias) && !strcmp(links[k].uri, uri))
				return true;
		return false;
	}
	list = json_object_get(cond, "all");
	if (!list)
		list = json_object_get(cond, "any");
	json_array_foreach(list, i, c) if (cond_names(c, uri, uri_too, links, n_links)) return true;
	return false;
}

bool dataset_event_queues(const struct dataset_dag *dag, const char *uri)
{
	for (size_t u = 0; u < dag->n_uris; u++)
		if (!strcmp(dag->uris[u], uri))
			return true;
	return dag->cond && cond_names(dag->cond, uri, false, dag->links, dag->n_links);
}

bool dataset_cond_true(const json_t *cond, const char *dag_id, const struct dataset_queued *q,
                       size_t n_queued)
{
	return dataset_cond_true_linked(cond, dag_id, q, n_queued, NULL, 0);
}

bool dataset_cond_true_linked(const json_t *cond, const char *dag_id,
                              const struct dataset_queued *q, size_t n_queued,
                              const struct dataset_alias_link *links, size_t n_links)
{
	const char *alias = json_string_value(json_object_get(cond, "alias"));
	json_t *all, *any, *list, *c;
	size_t i;

	if (json_is_string(cond))
		return queued_for(q, n_queued, dag_id, json_string_value(cond));
	if (alias && json_object_size(cond) == 1) {
		for (size_t k = 0; k < n_links; k++)
			if (!strcmp(links[k].alias, alias) &&
			    queued_for(q, n_queued, dag_id, links[k].uri))
				return true;
		return false;
	}
	all = json_object_get(cond, "all");
	any = json_object_get(cond, "any");
	list = all ? all : any;
	if (!json_is_array(list) || (all && any))
		return false;
	json_array_foreach(list, i, c)
	{
		bool v = dataset_cond_true_linked(c, dag_id, q, n_queued, links, n_links);
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
		if (d->paused || (d->n_uris == 0 && !d->cond))
			continue;
		if (d->cond ? dataset_cond_true_linked(d->cond, d->dag_id, q, n_queued, d->links,
		                                       d->n_links)
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
