/* dag_spec_check.c: the checks of a whole DAG once its tasks are read:
 * dependencies linked by name, the tasks in an order that respects them (a
 * cycle is named), and every template's variables known. */
#include "model/dag_spec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/str.h"
#include "model/template.h"

/* ---- graph -------------------------------------------------------------- */

int dag_link_tasks(struct field_reader *r, struct dag_spec *dag)
{
	for (size_t i = 0; i < dag->n_tasks; i++) {
		struct dag_task *t = &dag->tasks[i];
		for (size_t j = 0; j < i; j++)
			if (!strcmp(dag->tasks[j].task_id, t->task_id)) {
				snprintf(r->path, sizeof r->path, "tasks[%zu].task_id", i);
				char msg[400];
				snprintf(msg, sizeof msg,
				         "\"%s\" is already the id of tasks[%zu]; expected unique "
				         "task ids",
				         t->task_id, j);
				return field_fail(r, "%s", msg);
			}
	}
	for (size_t i = 0; i < dag->n_tasks; i++) {
		struct dag_task *t = &dag->tasks[i];
		if (t->depends_on.n == 0)
			continue;
		t->upstream = calloc(t->depends_on.n, sizeof *t->upstream);
		if (!t->upstream)
			return field_oom(r);
		for (size_t k = 0; k < t->depends_on.n; k++) {
			long u = dag_spec_task_index(dag, t->depends_on.v[k]);
			if (u < 0) {
				snprintf(r->path, sizeof r->path, "tasks[%zu].depends_on[%zu]", i,
				         k);
				return field_fail(r, "\"%s\" is not a task of this DAG",
				                  t->depends_on.v[k]);
			}
			t->upstream[t->n_upstream++] = (size_t)u;
		}
	}
	return 0;
}

int dag_order_tasks(struct field_reader *r, struct dag_spec *dag)
{
	size_t n = dag->n_tasks, edges = 0;
	for (size_t i = 0; i < n; i++)
		edges += dag->tasks[i].n_upstream;
	size_t *pending = calloc(n, sizeof *pending); /* upstream not yet placed */
	size_t *first = calloc(n + 1, sizeof *first); /* downstream of i: down[first[i]..] */
	size_t *down = calloc(edges + 1, sizeof *down);
	size_t *fill = calloc(n + 1, sizeof *fill);
	bool *placed = calloc(n, sizeof *placed);
	size_t *walk = NULL;
	int rc = -1;
	dag->topo = calloc(n, sizeof *dag->topo);
	if (!pending || !first || !down || !fill || !placed || !dag->topo) {
		field_oom(r);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < dag->tasks[i].n_upstream; k++)
			first[dag->tasks[i].upstream[k] + 1]++;
	for (size_t i = 0; i < n; i++)
		first[i + 1] += first[i];
	for (size_t i = 0; i < n; i++) {
		pending[i] = dag->tasks[i].n_upstream;
		for (size_t k = 0; k < dag->tasks[i].n_upstream; k++) {
			size_t u = dag->tasks[i].upstream[k];
			down[first[u] + fill[u]++] = i;
		}
	}
	/* topo doubles as the queue: [head, done) are placed, not yet expanded */
	size_t done = 0;
	for (size_t i = 0; i < n; i++)
		if (pending[i] == 0) {
			placed[i] = true;
			dag->topo[done++] = i;
		}
	for (size_t head = 0; head < done; head++) {
		size_t u = dag->topo[head];
		for (size_t k = first[u]; k < first[u + 1]; k++)
			if (--pending[down[k]] == 0) {
				placed[down[k]] = true;
				dag->topo[done++] = down[k];
			}
	}
	if (done == n) {
		rc = 0;
		goto out;
	}
	/* Every task left has an upstream task left: follow them until one repeats. */
	walk = calloc(n + 1, sizeof *walk);
	bool *on_walk = calloc(n, sizeof *on_walk);
	if (!walk || !on_walk) {
		free(on_walk);
		field_oom(r);
		goto out;
	}
	size_t cur = 0;
	while (placed[cur])
		cur++;
	size_t len = 0;
	while (!on_walk[cur]) {
		on_walk[cur] = true;
		walk[len++] = cur;
		const struct dag_task *t = &dag->tasks[cur];
		for (size_t k = 0; k < t->n_upstream; k++)
			if (!placed[t->upstream[k]]) {
				cur = t->upstream[k];
				break;
			}
	}
	free(on_walk);
	size_t seen_at = 0;
	while (walk[seen_at] != cur)
		seen_at++;
	char msg[700] = "";
	for (size_t k = seen_at; k < len; k++) {
		str_append(msg, sizeof msg, dag->tasks[walk[k]].task_id);
		str_append(msg, sizeof msg, " -> ");
	}
	str_append(msg, sizeof msg, dag->tasks[cur].task_id);
	snprintf(r->path, sizeof r->path, "tasks[%zu].depends_on", cur);
	char full[800];
	snprintf(full, sizeof full,
	         "a dependency cycle: %s (each depends on the next); expected a DAG", msg);
	field_fail(r, "%s", full);
out:
	free(pending);
	free(first);
	free(down);
	free(fill);
	free(placed);
	free(walk);
	return rc;
}

/* The variables a task's templates may use: the standard ones, params,
 * item for foreach tasks, outputs of upstream tasks (not foreach ones:
 * several instances have no single output). */
static int known_names(const struct dag_spec *dag, size_t idx, struct strvec *known)
{
	const char *key;
	json_t *v;
	if (template_known_standard(known) < 0)
		return -1;
	json_object_foreach(dag->params, key,
	                    v) if (strvec_pushf(known, "params.%s", key) < 0) return -1;
	if (dag_task_is_mapped(&dag->tasks[idx]) && strvec_push(known, "item") < 0)
		return -1;
	/* an item of an upstream's output may be an object: item.KEY */
	if (dag->tasks[idx].flow.n_foreach_refs && strvec_push(known, "item.*") < 0)
		return -1;
	if (dag_dataset_known_names(dag, known) < 0)
		return -1;
	bool *seen = calloc(dag->n_tasks, sizeof *seen);
	size_t *stack = calloc(dag->n_tasks + 1, sizeof *stack);
	int rc = -1;
	if (!seen || !stack)
		goto out;
	size_t sp = 0;
	stack[sp++] = idx;
	while (sp > 0) {
		const struct dag_task *t = &dag->tasks[stack[--sp]];
		for (size_t k = 0; k < t->n_upstream; k++) {
			size_t u = t->upstream[k];
			if (seen[u])
				continue;
			seen[u] = true;
			stack[sp++] = u;
			const struct dag_task *ut = &dag->tasks[u];
			if (!dag_task_is_mapped(ut) &&
			    strvec_pushf(known, "outputs.%s.*", ut->task_id) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	free(seen);
	free(stack);
	return rc;
}

static int check_template(struct field_reader *r, const char *text, const struct strvec *known,
                          enum template_mode mode)
{
	struct weir_error e;
	if (!text || template_check(text, known, mode, &e) == 0)
		return 0;
	if (e.kind != WEIR_E_INVALID)
		return weir_error_set(r->err, e.kind, "%s", e.msg);
	return field_fail(r, "%s", e.msg);
}

static bool has_braces(const char *s)
{
	return s && strstr(s, "{{");
}

static int any_field(void *arg, const char *field, json_t *str)
{
	(void)arg;
	(void)field;
	(void)str;
	return 1;
}

struct sensor_check {
	struct field_reader *r;
	const struct strvec *known;
	const char *prefix;
};

static int check_sensor_field(void *arg, const char *field, json_t *str)
{
	struct sensor_check *c = arg;

	snprintf(c->r->path, sizeof c->r->path, "%s.sensor.%s", c->prefix, field);
	return check_template(c->r, json_string_value(str), c->known, TEMPLATE_RAW);
}

static bool task_has_templates(const struct dag_task *t)
{
	if (has_braces(t->command) || has_braces(t->cwd) || dag_trigger_has_templates(t) ||
	    (t->sensor && dag_sensor_each_template(t->sensor, any_field, NULL)))
		return true;
	for (size_t k = 0; k < t->n_env; k++)
		if (has_braces(t->env[k].value))
			return true;
	if (t->job) {
		if (has_braces(t->job->params))
			return true;
		for (size_t k = 0; k < t->job->n_roles; k++)
			if (has_braces(t->job->roles[k].command))
				return true;
	}
	if (t->data) {
		const char *k;
		json_t *v;
		json_object_foreach(dag_data_parameters(t), k,
		                    v) if (has_braces(json_string_value(v))) return true;
		if (has_braces(dag_data_file(t, "from")) || has_braces(dag_data_file(t, "to")))
			return true;
	}
	return t->tony && (has_braces(json_string_value(json_object_get(t->tony, "executes"))) ||
	                   has_braces(json_string_value(json_object_get(t->tony, "task_params"))));
}

int dag_check_templates(struct field_reader *r, struct dag_spec *dag)
{
	for (size_t i = 0; i < dag->n_tasks; i++) {
		struct dag_task *t = &dag->tasks[i];
		struct strvec known = STRVEC_INIT;
		char prefix[64];
		int rc = -1;
		snprintf(prefix, sizeof prefix, "tasks[%zu]", i);
		if (!task_has_templates(t)) {
			rc = 0;
			goto foreach;
		}
		if (known_names(dag, i, &known) < 0) {
			field_oom(r);
			goto next;
		}
		field_at(r, prefix, "command", 0);
		if (check_template(r, t->command, &known, TEMPLATE_SHELL) < 0)
			goto next;
		field_at(r, prefix, "cwd", 0);
		if (check_template(r, t->cwd, &known, TEMPLATE_RAW) < 0)
			goto next;
		for (size_t k = 0; k < t->n_env; k++) {
			char base[64];
			snprintf(base, sizeof base, "%s.env", prefix);
			field_at(r, base, t->env[k].name, 0);
			if (check_template(r, t->env[k].value, &known, TEMPLATE_RAW) < 0)
				goto next;
		}
		if (t->job) {
			char base[64];
			snprintf(base, sizeof base, "%s.job", prefix);
			field_at(r, base, "params", 0);
			if (check_template(r, t->job->params, &known, TEMPLATE_SHELL) < 0)
				goto next;
			for (size_t k = 0; k < t->job->n_roles; k++) {
				char rb[160];
				snprintf(rb, sizeof rb, "%s.roles.%s", base, t->job->roles[k].name);
				field_at(r, rb, "command", 0);
				if (check_template(r, t->job->roles[k].command, &known,
				                   TEMPLATE_SHELL) < 0)
					goto next;
			}
		}
		if (dag_check_trigger_templates(r, t, &known, prefix) < 0)
			goto next;
		if (t->sensor) {
			struct sensor_check c = {r, &known, prefix};
			if (dag_sensor_each_template(t->sensor, check_sensor_field, &c) < 0)
				goto next;
		}
		if (t->tony) {
			char base[64];
			snprintf(base, sizeof base, "%s.job", prefix);
			field_at(r, base, "executes", 0);
			if (check_template(r,
			                   json_string_value(json_object_get(t->tony, "executes")),
			                   &known, TEMPLATE_SHELL) < 0)
				goto next;
			field_at(r, base, "task_params", 0);
			if (check_template(
			        r, json_string_value(json_object_get(t->tony, "task_params")),
			        &known, TEMPLATE_SHELL) < 0)
				goto next;
		}
		if (t->data) {
			char base[96];
			const char *k;
			json_t *v;
			snprintf(base, sizeof base, "%s.%s", prefix,
			         t->kind == DAG_TASK_SQL ? "sql.parameters"
			                                 : "transfer.from.parameters");
			json_object_foreach(dag_data_parameters(t), k, v)
			{
				field_at(r, base, k, 0);
				if (check_template(r, json_string_value(v), &known, TEMPLATE_RAW) <
				    0)
					goto next;
			}
			field_at(r, prefix, "transfer.from.file", 0);
			if (check_template(r, dag_data_file(t, "from"), &known, TEMPLATE_RAW) < 0)
				goto next;
			field_at(r, prefix, "transfer.to.file", 0);
			if (check_template(r, dag_data_file(t, "to"), &known, TEMPLATE_RAW) < 0)
				goto next;
		}
		foreach:
		if (t->foreach_param)
			{
				rc = -1;
				json_t *p = json_object_get(dag->params, t->foreach_param);
				field_at(r, prefix, "foreach", 0);
				if (!p) {
					rc = field_fail(r, "\"%s\" is not in params",
					                t->foreach_param);
					goto next;
				}
				if (!json_is_array(p)) {
					rc = field_fail(
					    r, "params.%s: expected a list to fan out over",
					    t->foreach_param);
					goto next;
				}
			}
		rc = 0;
	next:
		strvec_release(&known);
		if (rc < 0)
			return -1;
	}
	return 0;
}
