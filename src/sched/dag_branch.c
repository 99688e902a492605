/* dag_branch.c: branch choices, short circuits and the past
 * (dag_branch.h). */
#include "sched/dag_branch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dag_skip_release(struct dag_skip *s)
{
	free(s->tasks);
	s->tasks = NULL;
	s->n = 0;
}

int dag_skip_add(struct dag_skip *s, size_t t)
{
	size_t *v;

	for (size_t i = 0; i < s->n; i++)
		if (s->tasks[i] == t)
			return 0;
	v = realloc(s->tasks, (s->n + 1) * sizeof *v);
	if (!v)
		return -1;
	s->tasks = v;
	s->tasks[s->n++] = t;
	return 0;
}

int dag_graph_downstream(const struct dag_graph *g, size_t task, struct dag_skip *out)
{
	for (size_t t = 0; t < g->n_tasks; t++)
		for (size_t u = 0; u < g->tasks[t].n_upstream; u++)
			if (g->tasks[t].upstream[u] == task && dag_skip_add(out, t) < 0)
				return -1;
	return 0;
}

/* "a, b, c" of the downstream tasks, for a message. */
static void names_of(const struct dag_graph *g, const struct dag_skip *d, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < d->n && used < size; i++) {
		int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "",
		                 g->tasks[d->tasks[i]].task_id);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (!d->n)
		snprintf(out, size, "(it has none)");
}

/* The index in `down` of the task named `id`, or -1. */
static long find_down(const struct dag_graph *g, const struct dag_skip *down, const char *id)
{
	for (size_t i = 0; i < down->n; i++)
		if (!strcmp(g->tasks[down->tasks[i]].task_id, id))
			return (long)i;
	return -1;
}

int dag_branch_skips(const struct dag_graph *g, size_t task, const json_t *output,
                     struct dag_skip *out, char *why, size_t why_size)
{
	struct dag_skip down = {0};
	const json_t *choice = json_object_get(output, "branch"), *v;
	bool *chosen = NULL;
	char names[400];
	size_t i;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (dag_graph_downstream(g, task, &down) < 0)
		goto oom;
	names_of(g, &down, names, sizeof names);
	if (!choice) {
		snprintf(why, why_size,
		         "branch: the task wrote no \"branch\" in $WEIR_OUTPUT; expected a task id "
		         "or a list of them, of: %s",
		         names);
		goto out;
	}
	chosen = calloc(down.n ? down.n : 1, sizeof *chosen);
	if (!chosen)
		goto oom;
	if (json_is_string(choice)) {
		choice = json_pack("[O]", choice);
		if (!choice)
			goto oom;
	} else if (json_is_array(choice) || json_is_null(choice)) {
		json_incref((json_t *)choice);
	} else {
		snprintf(why, why_size,
		         "branch: expected a task id, a list of them or null, got a %s",
		         json_is_object(choice) ? "mapping" : "number or boolean");
		goto out;
	}
	json_array_foreach(choice, i, v)
	{
		long at = json_is_string(v) ? find_down(g, &down, json_string_value(v)) : -1;
		if (at < 0) {
			if (json_is_string(v))
				snprintf(
				    why, why_size,
				    "branch: \"%.100s\" is not a direct downstream task of %s; "
				    "expected one of %s",
				    json_string_value(v), g->tasks[task].task_id, names);
			else
				snprintf(why, why_size, "branch[%zu]: expected a task id", i);
			json_decref((json_t *)choice);
			goto out;
		}
		chosen[at] = true;
	}
	json_decref((json_t *)choice);
	for (i = 0; i < down.n; i++)
		if (!chosen[i] && dag_skip_add(out, down.tasks[i]) < 0)
			goto oom;
	rc = 0;
	goto out;
oom:
	snprintf(why, why_size, "out of memory");
out:
	if (rc < 0)
		dag_skip_release(out);
	dag_skip_release(&down);
	free(chosen);
	return rc;
}

bool dag_result_truthy(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL:
	case JSON_FALSE:
		return false;
	case JSON_TRUE:
		return true;
	case JSON_INTEGER:
		return json_integer_value(v) != 0;
	case JSON_REAL:
		return json_real_value(v) != 0.0;
	case JSON_STRING:
		return json_string_length(v) > 0;
	case JSON_ARRAY:
		return json_array_size(v) > 0;
	case JSON_OBJECT:
		return json_object_size(v) > 0;
	}
	return true;
}

int dag_short_circuit_skips(const struct dag_graph *g, size_t task, const json_t *output,
                            struct dag_skip *out)
{
	const json_t *result = json_object_get(output, "result");

	memset(out, 0, sizeof *out);
	if (!result || dag_result_truthy(result))
		return 0;
	/* breadth first over the downstream lists; out->tasks is the queue */
	if (dag_graph_downstream(g, task, out) < 0)
		goto oom;
	for (size_t k = 0; k < out->n; k++)
		if (dag_graph_downstream(g, out->tasks[k], out) < 0)
			goto oom;
	return 0;
oom:
	dag_skip_release(out);
	return -1;
}

bool dag_expand_due(const enum dag_ti_state *states, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (states[i] != DAG_TI_NONE)
			return false;
	return true;
}

static bool past_ok(enum dag_ti_state s)
{
	return s == DAG_TI_SUCCESS || s == DAG_TI_SKIPPED;
}

bool dag_past_allows(bool wait_for_downstream, const struct dag_past *p)
{
	if (!p->found)
		return true; /* the first run of the task, or one it was not in */
	if (!past_ok(p->state))
		return false;
	for (size_t i = 0; wait_for_downstream && i < p->n_down; i++)
		if (!past_ok(p->down[i]))
			return false;
	return true;
}
