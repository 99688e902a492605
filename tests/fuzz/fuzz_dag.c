/* fuzz_dag.c: DAG file text (YAML or JSON) -> dag_spec_parse_string.
 * A DAG that parses must survive to_json/from_json unchanged, and its
 * topological order must put every task after its upstream tasks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/dag_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct weir_error err;
	struct dag_spec *d = dag_spec_parse_string((const char *)data, size, "fuzz", "/base", &err);
	if (!d)
		return 0;
	size_t *pos = calloc(d->n_tasks, sizeof *pos);
	if (!pos)
		abort();
	for (size_t i = 0; i < d->n_tasks; i++)
		pos[d->topo[i]] = i;
	for (size_t i = 0; i < d->n_tasks; i++)
		for (size_t k = 0; k < d->tasks[i].n_upstream; k++)
			if (pos[d->tasks[i].upstream[k]] >= pos[i])
				abort();
	free(pos);
	json_t *j = dag_spec_to_json(d);
	struct dag_spec *e = j ? dag_spec_from_json(j, "fuzz", "/base", &err) : NULL;
	if (j && !e)
		abort(); /* what we write we must read back */
	json_t *k = e ? dag_spec_to_json(e) : NULL;
	if (e && !json_equal(j, k))
		abort();
	for (size_t i = 0; i < d->n_tasks; i++) {
		json_t *items = dag_task_foreach_items(d, &d->tasks[i], NULL, &err);
		json_decref(items);
	}
	json_decref(j);
	json_decref(k);
	dag_spec_destroy(e);
	dag_spec_destroy(d);
	return 0;
}
