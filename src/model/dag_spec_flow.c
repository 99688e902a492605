/* dag_spec_flow.c: the keys of a task that shape its run's flow: branch,
 * short_circuit, skip_on_exit_code and no_retry_on_exit_code (a try's exit
 * status that skips the task or fails it without a retry), run_outputs,
 * setup, teardown and on_failure_fail_dagrun,
 * depends_on_past and wait_for_downstream (also in
 * default_args), and a foreach over upstream tasks' outputs
 * ("{{ outputs.TASK.KEY }}", or {product: [several]}: each TASK becomes an
 * upstream when it is not one; a TASK that fans out gives its instances'
 * lists one after the other),
 * with the items such a foreach fans out over and the resources an item
 * may ask for.  The run-time decisions they lead to are sched/dag_branch.h's
 * and sched/dag_expand.h's.
 */
#include "model/dag_spec_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/job_spec_edit.h"

static const char *const flow_keys[] = {"branch",
                                        "short_circuit",
                                        "depends_on_past",
                                        "wait_for_downstream",
                                        "skip_on_exit_code",
                                        "no_retry_on_exit_code",
                                        "run_outputs",
                                        "setup",
                                        "teardown",
                                        "on_failure_fail_dagrun",
                                        NULL};
static const char *const item_resource_keys[] = {"cpus", "vcores", "memory", "gpus", NULL};

bool dag_flow_is_key(const char *key)
{
	for (size_t i = 0; flow_keys[i]; i++)
		if (!strcmp(key, flow_keys[i]))
			return true;
	return false;
}

bool dag_flow_exit_has(const unsigned char *set, int status)
{
	return status > 0 && status < 256 && (set[status / 8] >> (status % 8)) & 1;
}

/* An exit status or a list of them (1-255) into the bit set `set`. */
static int read_exit_codes(struct field_reader *r, json_t *val, unsigned char *set)
{
	json_t *one = val;
	size_t n = json_is_array(val) ? json_array_size(val) : 1;

	for (size_t i = 0; i < n; i++) {
		long long x;
		if (json_is_array(val))
			one = json_array_get(val, i);
		if (!json_is_integer(one))
			return field_fail(r, "%s",
			                  "expected an exit status (1-255) or a list of them");
		if (field_get_int(r, one, 1, 255, &x) < 0)
			return -1;
		set[x / 8] |= (unsigned char)(1u << (x % 8));
	}
	return 0;
}

int dag_read_flow_key(struct field_reader *r, struct dag_task *t, const char *key, json_t *val)
{
	struct dag_task_flow *f = &t->flow;
	bool b;

	if (!strcmp(key, "skip_on_exit_code"))
		return read_exit_codes(r, val, f->skip_exit);
	if (!strcmp(key, "no_retry_on_exit_code"))
		return read_exit_codes(r, val, f->no_retry_exit);
	if (field_get_bool(r, val, &b) < 0)
		return -1;
	if (!strcmp(key, "branch")) {
		f->branch = b;
	} else if (!strcmp(key, "short_circuit")) {
		f->short_circuit = b;
	} else if (!strcmp(key, "run_outputs")) {
		f->run_outputs = b;
	} else if (!strcmp(key, "setup")) {
		f->setup = b;
	} else if (!strcmp(key, "teardown")) {
		f->teardown = b;
	} else if (!strcmp(key, "on_failure_fail_dagrun")) {
		f->on_failure_fail_dagrun = b;
	} else if (!strcmp(key, "depends_on_past")) {
		f->depends_on_past = b;
		f->past_given = true;
	} else {
		f->wait_for_downstream = b;
		f->past_given = true;
	}
	return 0;
}

int dag_read_flow_default(struct field_reader *r, const char *key, json_t *val,
                          struct dag_default_args *d)
{
	bool b;

	if (strcmp(key, "depends_on_past") && strcmp(key, "wait_for_downstream"))
		return field_fail(r, "%s",
		                  "a task's own key; default_args may give depends_on_past "
		                  "and wait_for_downstream");
	if (field_get_bool(r, val, &b) < 0)
		return -1;
	if (!strcmp(key, "depends_on_past"))
		d->depends_on_past = b;
	else
		d->wait_for_downstream = b;
	return 0;
}

void dag_flow_resolve(struct dag_task *t, const struct dag_default_args *d)
{
	struct dag_task_flow *f = &t->flow;

	if (!f->past_given) {
		f->depends_on_past = d->depends_on_past > 0;
		f->wait_for_downstream = d->wait_for_downstream > 0;
	}
	/* Airflow: wait_for_downstream sets depends_on_past */
	if (f->wait_for_downstream)
		f->depends_on_past = true;
}

/* The name after "outputs.": TASK.KEY, a task id ([A-Za-z0-9_.-]: a task
 * group's tasks hold dots) then a key (no dot: the name's last part); its
 * end. */
static const char *name_end(const char *p)
{
	while (isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.')
		p++;
	return p;
}

/* One "{{ outputs.TASK.KEY }}" into *task and *key: 1 when `s` is that
 * form, 0 when it is another, -1 with the reader's error. */
static int read_output_ref(struct field_reader *r, const char *s, char **taskp, char **keyp)
{
	const char *p = s, *task, *task_end, *key, *key_end;

	while (*p == ' ')
		p++;
	if (strncmp(p, "{{", 2))
		return 0;
	p += 2;
	while (*p == ' ')
		p++;
	if (strncmp(p, "outputs.", 8))
		return 0;
	task = p + 8;
	key_end = name_end(task);
	task_end = key_end;
	while (task_end > task && *task_end != '.')
		task_end--;
	if (task_end == task || key_end == task_end + 1)
		return field_fail(r, "%s",
		                  "expected \"{{ outputs.TASK.KEY }}\" naming an upstream "
		                  "task's output");
	key = task_end + 1;
	p = key_end;
	while (*p == ' ')
		p++;
	if (key_end == key || strncmp(p, "}}", 2))
		return field_fail(r, "%s",
		                  "expected \"{{ outputs.TASK.KEY }}\" naming an upstream "
		                  "task's output");
	p += 2;
	while (*p == ' ')
		p++;
	if (*p)
		return field_fail(r, "%s",
		                  "expected \"{{ outputs.TASK.KEY }}\" alone, nothing after it");
	*taskp = strndup(task, (size_t)(task_end - task));
	*keyp = strndup(key, (size_t)(key_end - key));
	if (!*taskp || !*keyp) {
		free(*taskp);
		free(*keyp);
		return field_oom(r);
	}
	return 1;
}

/* One more ref of t's foreach. */
static int push_ref(struct field_reader *r, struct dag_task_flow *f, char *task, char *key)
{
	struct dag_output_ref *v = realloc(f->foreach_refs, (f->n_foreach_refs + 1) * sizeof *v);

	if (!v) {
		free(task);
		free(key);
		return field_oom(r);
	}
	f->foreach_refs = v;
	v[f->n_foreach_refs++] = (struct dag_output_ref){.task = task, .key = key};
	return 0;
}

int dag_read_foreach_output(struct field_reader *r, struct dag_task *t, const char *s)
{
	char *task = NULL, *key = NULL;
	int got = read_output_ref(r, s, &task, &key);

	if (got <= 0)
		return got;
	return push_ref(r, &t->flow, task, key) < 0 ? -1 : 1;
}

int dag_read_foreach_product(struct field_reader *r, struct dag_task *t, json_t *v)
{
	static const char want[] = "expected a list of two or more \"{{ outputs.TASK.KEY }}\"";
	json_t *list = json_object_get(v, "product"), *item;
	char base[FIELD_PATH_MAX];
	size_t i;

	if (json_object_size(v) != 1 || !json_is_array(list))
		return field_fail(r, "%s",
		                  "expected {product: [\"{{ outputs.TASK.KEY }}\", ...]}, "
		                  "the only key");
	snprintf(base, sizeof base, "%s", r->path);
	field_at(r, base, "product", 0);
	snprintf(base, sizeof base, "%s", r->path);
	if (json_array_size(list) < 2)
		return field_fail(r, "%s", want);
	json_array_foreach(list, i, item)
	{
		char *task = NULL, *key = NULL;
		int got;
		field_at(r, base, NULL, i);
		if (!json_is_string(item))
			return field_fail(r, "%s", want);
		got = read_output_ref(r, json_string_value(item), &task, &key);
		if (got < 0)
			return -1;
		if (got == 0)
			return field_fail(r, "%s", want);
		if (push_ref(r, &t->flow, task, key) < 0)
			return -1;
	}
	return 0;
}

int dag_flow_link(struct field_reader *r, struct dag_spec *dag)
{
	for (size_t i = 0; i < dag->n_tasks; i++) {
		struct dag_task *t = &dag->tasks[i];

		for (size_t j = 0; j < t->flow.n_foreach_refs; j++) {
			const char *up = t->flow.foreach_refs[j].task;
			bool listed = false;

			snprintf(r->path, sizeof r->path, "tasks[%zu].foreach", i);
			if (!strcmp(up, t->task_id))
				return field_fail(
				    r, "outputs.%s: a task cannot fan out over its own output", up);
			if (dag_spec_task_index(dag, up) < 0)
				return field_fail(r, "outputs.%s: no task of this DAG has that id",
				                  up);
			for (size_t k = 0; k < t->depends_on.n && !listed; k++)
				listed = !strcmp(t->depends_on.v[k], up);
			/* as Airflow's XComArg: the task whose output it maps over is
			 * an upstream */
			if (!listed && strvec_push(&t->depends_on, up) < 0)
				return field_oom(r);
		}
	}
	return 0;
}

int dag_flow_check(struct field_reader *r, struct dag_spec *dag)
{
	for (size_t i = 0; i < dag->n_tasks; i++) {
		struct dag_task *t = &dag->tasks[i];
		struct dag_task_flow *f = &t->flow, *up;
		size_t *v;

		if (f->setup && f->teardown) {
			snprintf(r->path, sizeof r->path, "tasks[%zu].teardown", i);
			return field_fail(r, "%s", "expected one of setup and teardown, got both");
		}
		if (f->on_failure_fail_dagrun && !f->teardown) {
			snprintf(r->path, sizeof r->path, "tasks[%zu].on_failure_fail_dagrun", i);
			return field_fail(r, "%s",
			                  "a teardown task's key; expected teardown: true");
		}
		if (f->branch && f->short_circuit) {
			snprintf(r->path, sizeof r->path, "tasks[%zu].short_circuit", i);
			return field_fail(r, "%s",
			                  "expected one of branch and short_circuit, got both");
		}
		if ((f->branch || f->short_circuit) && dag_task_is_mapped(t)) {
			snprintf(r->path, sizeof r->path, "tasks[%zu].%s", i,
			         f->branch ? "branch" : "short_circuit");
			return field_fail(r, "%s",
			                  "a foreach task has several instances; expected "
			                  "one task to decide");
		}
		for (size_t j = 0; j < f->n_foreach_refs; j++) {
			struct dag_output_ref *ref = &f->foreach_refs[j];
			ref->upstream = (size_t)dag_spec_task_index(dag, ref->task);
			up = &dag->tasks[ref->upstream].flow;
			/* a task named twice maps once */
			if (up->n_mapped_by && up->mapped_by[up->n_mapped_by - 1] == i)
				continue;
			v = realloc(up->mapped_by, (up->n_mapped_by + 1) * sizeof *v);
			if (!v)
				return field_oom(r);
			up->mapped_by = v;
			up->mapped_by[up->n_mapped_by++] = i;
		}
	}
	return 0;
}

void dag_flow_release(struct dag_task_flow *f)
{
	for (size_t j = 0; j < f->n_foreach_refs; j++) {
		free(f->foreach_refs[j].task);
		free(f->foreach_refs[j].key);
	}
	free(f->foreach_refs);
	free(f->mapped_by);
	f->foreach_refs = NULL;
	f->n_foreach_refs = 0;
	f->mapped_by = NULL;
	f->n_mapped_by = 0;
}

/* A bit set of exit statuses as `key`: a list (nothing when empty). */
static int exit_codes_json(const unsigned char *set, const char *key, json_t *o)
{
	json_t *a = NULL;

	for (int x = 1; x < 256; x++) {
		if (!dag_flow_exit_has(set, x))
			continue;
		if (!a && !(a = json_array()))
			return -1;
		if (json_array_append_new(a, json_integer(x)) < 0) {
			json_decref(a);
			return -1;
		}
	}
	return a ? json_object_set_new(o, key, a) : 0;
}

int dag_flow_to_json(const struct dag_task *t, json_t *o)
{
	const struct dag_task_flow *f = &t->flow;
	int rc = 0;

	if (f->branch)
		rc |= json_object_set_new(o, "branch", json_true());
	if (f->short_circuit)
		rc |= json_object_set_new(o, "short_circuit", json_true());
	rc |= json_object_set_new(o, "depends_on_past", json_boolean(f->depends_on_past));
	rc |= json_object_set_new(o, "wait_for_downstream", json_boolean(f->wait_for_downstream));
	if (f->run_outputs)
		rc |= json_object_set_new(o, "run_outputs", json_true());
	if (f->setup)
		rc |= json_object_set_new(o, "setup", json_true());
	if (f->teardown)
		rc |= json_object_set_new(o, "teardown", json_true());
	if (f->on_failure_fail_dagrun)
		rc |= json_object_set_new(o, "on_failure_fail_dagrun", json_true());
	rc |= exit_codes_json(f->skip_exit, "skip_on_exit_code", o);
	rc |= exit_codes_json(f->no_retry_exit, "no_retry_on_exit_code", o);
	if (f->n_foreach_refs) {
		json_t *list = json_array();
		if (!list)
			return -1;
		for (size_t j = 0; j < f->n_foreach_refs; j++) {
			char *s = NULL;
			if (asprintf(&s, "{{ outputs.%s.%s }}", f->foreach_refs[j].task,
			             f->foreach_refs[j].key) < 0) {
				json_decref(list);
				return -1;
			}
			rc |= json_array_append_new(list, json_string(s));
			free(s);
		}
		if (f->n_foreach_refs == 1) {
			rc |= json_object_set(o, "foreach", json_array_get(list, 0));
			json_decref(list);
		} else {
			rc |= json_object_set_new(o, "foreach", json_pack("{so}", "product", list));
		}
	}
	return rc ? -1 : 0;
}

bool dag_task_is_mapped(const struct dag_task *task)
{
	return task->foreach_list || task->foreach_param || task->flow.n_foreach_refs;
}

int dag_item_resources(const json_t *item, struct dag_resources *res, bool *given,
                       struct weir_error *err)
{
	struct field_reader r = {.subject = "item", .err = err};
	json_t *v = json_object_get(item, "resources"), *val;
	const char *key;
	long long x;

	*given = false;
	if (!json_is_object(item) || !v)
		return 0;
	snprintf(r.path, sizeof r.path, "resources");
	if (field_need_type(&r, v, "a mapping {cpus, memory, gpus}", json_is_object(v)) < 0 ||
	    field_check_keys(&r, v, "resources", item_resource_keys) < 0)
		return -1;
	json_object_foreach(v, key, val)
	{
		field_at(&r, "resources", key, 0);
		if (!strcmp(key, "memory")) {
			const char *s;
			struct weir_error e;
			if (json_is_integer(val)) {
				if (field_get_int(&r, val, 1, (long long)JOB_SPEC_MAX_MEMORY_MB,
				                  &x) < 0)
					return -1;
				res->memory_mb = (uint64_t)x;
				continue;
			}
			if (field_get_string(&r, val, &s) < 0)
				return -1;
			if (parse_memory_mb(s, r.path, &res->memory_mb, &e) < 0)
				return weir_error_set(err, WEIR_E_INVALID, "%s", e.msg);
			if (res->memory_mb == 0 || res->memory_mb > JOB_SPEC_MAX_MEMORY_MB)
				return field_fail(
				    &r, "expected a memory amount from 1m to 16t, got \"%s\"", s);
		} else if (!strcmp(key, "gpus")) {
			if (field_get_int(&r, val, 0, JOB_SPEC_MAX_GPUS, &x) < 0)
				return -1;
			res->gpus = (int)x;
		} else {
			if (field_get_int(&r, val, 1, JOB_SPEC_MAX_VCORES, &x) < 0)
				return -1;
			res->vcores = (int)x;
		}
	}
	*given = true;
	return 0;
}

/* The list one ref gives: outputs.TASK.KEY, or (TASK fans out: outputs.TASK
 * is a list of its instances' outputs) their lists one after the other,
 * each item checked.  A new reference; NULL with err. */
static json_t *ref_items(const struct dag_task *task, const struct dag_output_ref *ref,
                         const json_t *outputs, struct weir_error *err)
{
	const json_t *o = json_object_get(outputs, ref->task);
	json_t *part, *item;
	json_t *all = json_array();
	size_t n = json_is_array(o) ? json_array_size(o) : 1, k, i;

	if (!all) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	for (k = 0; k < n; k++) {
		const json_t *v =
		    json_object_get(json_is_array(o) ? json_array_get(o, k) : o, ref->key);
		if (!json_is_array(v)) {
			char inst[40] = "";
			if (json_is_array(o))
				snprintf(inst, sizeof inst, " (its instance %zu)", k);
			weir_error_set(
			    err, WEIR_E_INVALID,
			    "outputs.%s.%s%s: expected a list for task %s to fan out over, "
			    "got %s",
			    ref->task, ref->key, inst, task->task_id,
			    v ? field_type_name(v) : "nothing (no such key in $WEIR_OUTPUT)");
			goto fail;
		}
		part = (json_t *)v;
		json_array_foreach(part, i, item)
		{
			struct dag_resources res = {0};
			bool given;
			if (json_is_array(item) || json_is_null(item)) {
				weir_error_set(
				    err, WEIR_E_INVALID,
				    "outputs.%s.%s[%zu]: expected a string, a number or an "
				    "object, got %s",
				    ref->task, ref->key, i, field_type_name(item));
				goto fail;
			}
			if (dag_item_resources(item, &res, &given, err) < 0) {
				weir_error_prefix(err, "outputs.%s.%s[%zu]", ref->task, ref->key,
				                  i);
				goto fail;
			}
			if (json_array_append(all, item) < 0) {
				weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
				goto fail;
			}
		}
	}
	return all;
fail:
	json_decref(all);
	return NULL;
}

/* The most instances a product may make (a run's rows are held in memory). */
#define PRODUCT_MAX 100000

json_t *dag_task_output_items(const struct dag_task *task, const json_t *outputs,
                              struct weir_error *err)
{
	const struct dag_task_flow *f = &task->flow;
	json_t **lists, *out = NULL;
	size_t n = 1, j, k;

	if (!f->n_foreach_refs) {
		weir_error_set(err, WEIR_E_INVALID, "task %s: not mapped over an output",
		               task->task_id);
		return NULL;
	}
	if (f->n_foreach_refs == 1)
		return ref_items(task, &f->foreach_refs[0], outputs, err);
	lists = calloc(f->n_foreach_refs, sizeof *lists);
	if (!lists) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	for (j = 0; j < f->n_foreach_refs; j++) {
		lists[j] = ref_items(task, &f->foreach_refs[j], outputs, err);
		if (!lists[j])
			goto out;
		if (json_array_size(lists[j]) && n > PRODUCT_MAX / json_array_size(lists[j])) {
			weir_error_set(err, WEIR_E_INVALID,
			               "task %s: the product of its foreach's lists has more than "
			               "%d items",
			               task->task_id, PRODUCT_MAX);
			goto out;
		}
		n *= json_array_size(lists[j]);
	}
	if (!(out = json_array()))
		goto oom;
	/* item k: digit j of k in the mixed radix of the lists' sizes, the
	 * last list varying fastest */
	for (k = 0; k < n; k++) {
		json_t *item = json_array();
		size_t rest = k;
		if (!item || json_array_append_new(out, item) < 0)
			goto oom;
		for (j = f->n_foreach_refs; j-- > 0;) {
			size_t len = json_array_size(lists[j]);
			if (json_array_insert(item, 0, json_array_get(lists[j], rest % len)) < 0)
				goto oom;
			rest /= len;
		}
	}
	goto out;
oom:
	json_decref(out);
	out = NULL;
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
out:
	for (j = 0; j < f->n_foreach_refs; j++)
		json_decref(lists[j]);
	free(lists);
	return out;
}

/* ---- a clear's tasks: setups and teardowns as Airflow 2 adds them ---- */

/* The tasks below task `t` (`down`) or above it (!down), at any depth, into
 * mark[] (t itself left out). */
static void reach(const struct dag_spec *spec, size_t t, bool down, bool *mark)
{
	size_t n = spec->n_tasks;

	memset(mark, 0, n * sizeof *mark);
	mark[t] = true;
	for (size_t o = 0; o < n; o++) {
		size_t i = spec->topo[down ? o : n - 1 - o];
		const struct dag_task *ti = &spec->tasks[i];
		for (size_t u = 0; u < ti->n_upstream; u++) {
			if (down && mark[ti->upstream[u]])
				mark[i] = true;
			if (!down && mark[i])
				mark[ti->upstream[u]] = true;
		}
	}
	mark[t] = false;
}

/* Whether task `x` is a teardown directly below setup `s`. */
static bool teardown_of(const struct dag_spec *spec, size_t s, size_t x)
{
	const struct dag_task *tx = &spec->tasks[x];

	if (!tx->flow.teardown)
		return false;
	for (size_t u = 0; u < tx->n_upstream; u++)
		if (tx->upstream[u] == s)
			return true;
	return false;
}

/* Task t's relevant setups and their teardowns into in[] (the scratch
 * below[] and above[] hold n entries each). */
static void add_setups(const struct dag_spec *spec, size_t t, bool *in, bool *below, bool *above)
{
	size_t n = spec->n_tasks;

	reach(spec, t, true, below);
	reach(spec, t, false, above);
	for (size_t s = 0; s < n; s++) {
		bool any = false, relevant = false;
		if (!above[s] || !spec->tasks[s].flow.setup)
			continue;
		for (size_t x = 0; x < n; x++)
			if (teardown_of(spec, s, x)) {
				any = true;
				relevant = relevant || below[x];
			}
		if (any && !relevant)
			continue;
		in[s] = true;
		for (size_t x = 0; x < n; x++)
			if (x != t && teardown_of(spec, s, x))
				in[x] = true;
	}
}

int dag_clear_tasks(const struct dag_spec *spec, bool *in, bool downstream)
{
	size_t n = spec->n_tasks;
	bool *matched = malloc((n + 1) * sizeof *matched);
	bool *below = malloc((n + 1) * sizeof *below);
	bool *above = malloc((n + 1) * sizeof *above);
	bool *down = malloc((n + 1) * sizeof *down);
	int rc = -1;

	if (!matched || !below || !above || !down)
		goto out;
	memcpy(matched, in, n * sizeof *in);
	for (size_t t = 0; t < n; t++) {
		if (!matched[t])
			continue;
		const struct dag_task_flow *f = &spec->tasks[t].flow;
		if (downstream) {
			reach(spec, t, true, down);
			for (size_t x = 0; x < n; x++) {
				if (!down[x])
					continue;
				in[x] = true;
				if (!matched[x] && !spec->tasks[x].flow.setup &&
				    !spec->tasks[x].flow.teardown)
					add_setups(spec, x, in, below, above);
			}
		}
		if (!f->setup && !f->teardown)
			add_setups(spec, t, in, below, above);
		if (f->setup && !downstream)
			for (size_t x = 0; x < n; x++)
				if (teardown_of(spec, t, x))
					in[x] = true;
	}
	rc = 0;
out:
	free(matched);
	free(below);
	free(above);
	free(down);
	return rc;
}
