/* markers.c: Airflow's ExternalTaskMarker on a recursive clear (the API's
 * include_subdags, Airflow's "Recursive"): a cleared task whose spec has
 * `marker: {dag_id, task_id, recursion_depth}` clears that task of that
 * DAG's run of the same logical date, with its downstream, and so on
 * through the markers that clear finds, at most recursion_depth deep
 * (ops.h). */
#include "server/dag_manager/dm_internal.h"
#include "server/dag_manager/ops.h"

#include <stdio.h>
#include <string.h>

#include "lib/strvec.h"
#include "store/sensor_store.h"

int dm_clear_markers(struct dag_manager *dm, struct dag_ti_refs *out, size_t from, bool only_failed,
                     bool dry_run, int depth, struct weir_error *err)
{
	size_t end = out->n;

	for (size_t i = from; i < end; i++) {
		const struct dag_ti_ref ref = out->v[i];
		const struct dag_spec *spec = dm_spec_of(dm, ref.dag_id, err);
		const struct dag_task *t = spec ? dag_spec_find_task(spec, ref.task_id) : NULL;
		const struct dag_spec *other;
		struct strvec ids = STRVEC_INIT;
		char run_id[DAG_MAX_ID + 1];
		const char *dag_id, *task_id;
		size_t before;
		int max, rc;

		if (!t || !t->marker ||
		    (i > from && !strcmp(out->v[i - 1].task_id, ref.task_id) &&
		     !strcmp(out->v[i - 1].run_id, ref.run_id)))
			continue; /* not a marker, or one of its map indexes already followed */
		dag_id = json_string_value(json_object_get(t->marker, "dag_id"));
		task_id = json_string_value(json_object_get(t->marker, "task_id"));
		max = (int)json_integer_value(json_object_get(t->marker, "recursion_depth"));
		if (depth >= max)
			return weir_error_set(
			    err, WEIR_E_INVALID,
			    "Maximum recursion depth %d reached for ExternalTaskMarker "
			    "%s. Attempted to clear too many tasks or there may be a "
			    "cyclic dependency.",
			    max, ref.task_id);
		/* no such DAG, task or run: nothing to clear, as Airflow finds none */
		other = dm_spec_of(dm, dag_id, err);
		if (!other || !dag_spec_find_task(other, task_id))
			continue;
		if (sensor_store_external_run(dm->store, dag_id, ref.logical_date, run_id,
		                              sizeof run_id, err) < 0)
			return -1;
		if (!run_id[0])
			continue;
		if (strvec_push(&ids, task_id) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		before = out->n;
		rc = dm_clear_run(dm, dag_id, run_id, &ids, true, only_failed, dry_run, out, err);
		strvec_release(&ids);
		if (rc < 0 ||
		    dm_clear_markers(dm, out, before, only_failed, dry_run, depth + 1, err) < 0)
			return -1;
	}
	return 0;
}
