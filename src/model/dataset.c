/* dataset.c: a dataset's URI checked, a trigger_dag task's settings freed
 * and written as JSON (dataset.h). */
#include "model/dataset.h"

#include <stdlib.h>
#include <string.h>

int dataset_uri_check(const char *uri, struct weir_error *err)
{
	size_t n = uri ? strlen(uri) : 0;

	if (n == 0 || n > DATASET_URI_MAX)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "expected a dataset URI of 1 to %d characters, got %zu",
		                      DATASET_URI_MAX, n);
	for (const char *c = uri; *c; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "expected a dataset URI of printable ASCII without "
			                      "spaces, got \"%.80s\"",
			                      uri);
	if (!strncmp(uri, "airflow://", 10) || !strcmp(uri, "airflow"))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "the scheme airflow is reserved; got \"%.80s\"", uri);
	return 0;
}

void dag_trigger_destroy(struct dag_trigger *t)
{
	if (!t)
		return;
	free(t->dag_id);
	free(t->run_id);
	json_decref(t->conf);
	free(t);
}

static json_t *states_json(unsigned bits)
{
	json_t *a = json_array();

	for (int s = 0; a && s < DAG_RUN_STATE_COUNT; s++)
		if (bits & (1u << s))
			json_array_append_new(
			    a, json_string(dag_run_state_name((enum dag_run_state)s)));
	return a;
}

json_t *dag_trigger_to_json(const struct dag_trigger *t)
{
	json_t *o = json_pack("{s:s, s:O, s:b, s:I, s:o, s:o}", "dag_id", t->dag_id, "conf",
	                      t->conf, "wait_for_completion", t->wait, "poke_interval",
	                      (json_int_t)t->poke_interval_s, "allowed_states",
	                      states_json(t->allowed), "failed_states", states_json(t->failed));

	if (o && t->run_id && json_object_set_new(o, "run_id", json_string(t->run_id)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}
