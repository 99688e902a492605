/* dag_spec_dataset.c: the DAG file's keys of runs that start runs
 * (dag_spec_internal.h): a task's `outlets` (the dataset URIs its success
 * updates), a `trigger_dag:` task (another DAG's run, its conf templated),
 * and `schedule: [URI, ...]` (a DAG run by dataset updates, a condition of
 * them, a DatasetAlias as {alias: NAME}).  What only
 * the server can tell (the other DAG exists, its params accept the conf) is
 * checked when the task runs. */
#include "model/dag_spec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/dataset.h"
#include "model/template.h"

static const char *const trigger_keys[] = {
    "dag_id",        "conf",           "run_id",        "wait_for_completion",
    "poke_interval", "allowed_states", "failed_states", NULL};

/* A list of URIs at r->path, each checked, none twice, into *out. */
static int read_uris(struct field_reader *r, json_t *v, bool allow_empty, struct strvec *out)
{
	char base[FIELD_PATH_MAX];
	size_t i;
	json_t *u;

	snprintf(base, sizeof base, "%s", r->path);
	if (field_need_type(r, v, "a list of dataset URIs", json_is_array(v)) < 0)
		return -1;
	if (!allow_empty && json_array_size(v) == 0)
		return field_fail(r, "%s", "expected at least one dataset URI");
	json_array_foreach(v, i, u)
	{
		const char *s;
		struct weir_error e = {0};
		field_at(r, base, NULL, i);
		if (field_get_string(r, u, &s) < 0)
			return -1;
		if (dataset_uri_check(s, &e) < 0)
			return field_fail(r, "%s", e.msg);
		for (size_t k = 0; k < out->n; k++)
			if (!strcmp(out->v[k], s))
				return field_fail(r, "\"%s\" is listed twice", s);
		if (strvec_push(out, s) < 0)
			return field_oom(r);
	}
	return 0;
}

int dag_read_outlets(struct field_reader *r, struct dag_task *t, json_t *v)
{
	return read_uris(r, v, true, &t->outlets);
}

/* {alias: NAME} at r->path: a DatasetAlias's name (1 to 3000 printable
 * characters, as Airflow's), added to `aliases` once. */
#define DATASET_ALIAS_MAX 3000
static int read_alias(struct field_reader *r, json_t *v, struct strvec *aliases)
{
	const char *s;

	if (field_get_string(r, v, &s) < 0)
		return -1;
	if (!*s || strlen(s) > DATASET_ALIAS_MAX)
		return field_fail(r, "%s", "expected an alias name of 1 to 3000 characters");
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return field_fail(r, "%s", "an alias name holds a control character");
	for (size_t k = 0; k < aliases->n; k++)
		if (!strcmp(aliases->v[k], s))
			return 0;
	return strvec_push(aliases, s) < 0 ? field_oom(r) : 0;
}

int dag_read_inlets(struct field_reader *r, struct dag_task *t, json_t *v)
{
	char base[FIELD_PATH_MAX];
	size_t i;
	json_t *x;

	snprintf(base, sizeof base, "%s", r->path);
	if (field_need_type(r, v, "a list of dataset URIs and {alias: NAME}", json_is_array(v)) < 0)
		return -1;
	json_array_foreach(v, i, x)
	{
		json_t *one;
		field_at(r, base, NULL, i);
		if (!json_is_object(x)) {
			one = json_pack("[O]", x);
			int rc = one ? read_uris(r, one, true, &t->inlets) : field_oom(r);
			json_decref(one);
			if (rc < 0)
				return -1;
			continue;
		}
		if (json_object_size(x) != 1 || !json_object_get(x, "alias"))
			return field_fail(r, "%s", "expected a dataset URI or {alias: NAME}");
		char sub[FIELD_PATH_MAX];
		snprintf(sub, sizeof sub, "%s[%zu].alias", base, i);
		snprintf(r->path, sizeof r->path, "%s", sub);
		if (read_alias(r, json_object_get(x, "alias"), &t->inlet_aliases) < 0)
			return -1;
	}
	return 0;
}

/* One node of a condition at `path`: a URI (added to dag->dataset_schedule
 * once), {alias: NAME} (a DatasetAlias: added to dag->dataset_aliases once)
 * or {any|all: [NODE, ...]}, at most DATASET_COND_DEPTH deep. */
#define DATASET_COND_DEPTH 16
static int read_cond(struct field_reader *r, json_t *v, const char *path, int depth,
                     struct dag_spec *dag)
{
	struct strvec *uris = &dag->dataset_schedule;
	char sub[FIELD_PATH_MAX];
	struct weir_error e = {0};
	const char *key, *s;
	json_t *list, *x;
	size_t i;

	snprintf(r->path, sizeof r->path, "%s", path);
	if (json_is_string(v)) {
		if (field_get_string(r, v, &s) < 0)
			return -1;
		if (dataset_uri_check(s, &e) < 0)
			return field_fail(r, "%s", e.msg);
		for (size_t k = 0; k < uris->n; k++)
			if (!strcmp(uris->v[k], s))
				return 0;
		return strvec_push(uris, s) < 0 ? field_oom(r) : 0;
	}
	if (!json_is_object(v) || json_object_size(v) != 1)
		return field_fail(r, "%s",
		                  "expected a dataset URI, {alias: NAME} or a mapping of one key, "
		                  "any: or all:, to a list of URIs and conditions");
	if (depth >= DATASET_COND_DEPTH)
		return field_fail(r, "%s", "a condition nested more than 16 deep");
	key = json_object_iter_key(json_object_iter(v));
	list = json_object_iter_value(json_object_iter(v));
	snprintf(sub, sizeof sub, "%s.%s", path, key);
	snprintf(r->path, sizeof r->path, "%s", sub);
	if (!strcmp(key, "alias"))
		return read_alias(r, list, &dag->dataset_aliases);
	if (strcmp(key, "any") && strcmp(key, "all"))
		return field_fail(r, "%s", "expected any:, all: or alias:");
	if (!json_is_array(list) || json_array_size(list) == 0)
		return field_fail(r, "%s", "expected a list of dataset URIs and conditions");
	json_array_foreach(list, i, x)
	{
		char item[FIELD_PATH_MAX];
		snprintf(item, sizeof item, "%s[%zu]", sub, i);
		if (read_cond(r, x, item, depth + 1, dag) < 0)
			return -1;
	}
	return 0;
}

/* Whether the list holds something other than a URI ({alias: NAME}). */
static bool list_has_mapping(const json_t *v)
{
	size_t i;
	json_t *x;

	json_array_foreach(v, i, x) if (json_is_object(x)) return true;
	return false;
}

int dag_read_dataset_schedule(struct field_reader *r, struct dag_spec *dag, json_t *v)
{
	char base[FIELD_PATH_MAX];
	json_t *cond;

	if (json_is_array(v) && !list_has_mapping(v))
		return read_uris(r, v, false, &dag->dataset_schedule);
	snprintf(base, sizeof base, "%s", r->path);
	if (json_is_array(v)) { /* [URI or {alias: NAME}, ...]: all of them */
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
		{
			char item[FIELD_PATH_MAX];
			snprintf(item, sizeof item, "%s[%zu]", base, i);
			if (read_cond(r, x, item, 1, dag) < 0)
				return -1;
		}
		cond = json_pack("{s:O}", "all", v);
	} else {
		if (read_cond(r, v, base, 0, dag) < 0)
			return -1;
		cond = json_deep_copy(v);
	}
	json_decref(dag->dataset_condition);
	dag->dataset_condition = cond;
	return dag->dataset_condition ? 0 : field_oom(r);
}

/* allowed_states / failed_states: run states that end a waiting task. */
static int read_states(struct field_reader *r, json_t *v, unsigned *bits)
{
	char base[FIELD_PATH_MAX];
	size_t i;
	json_t *s;

	snprintf(base, sizeof base, "%s", r->path);
	if (field_need_type(r, v, "a list of run states (success, failed)", json_is_array(v)) < 0)
		return -1;
	*bits = 0;
	json_array_foreach(v, i, s)
	{
		const char *name;
		enum dag_run_state st;
		field_at(r, base, NULL, i);
		if (field_get_string(r, s, &name) < 0)
			return -1;
		if (dag_run_state_from_name(name, &st) < 0 || !dag_run_state_is_final(st))
			return field_fail(r, "expected success or failed (a run's end), got \"%s\"",
			                  name);
		*bits |= 1u << st;
	}
	return 0;
}

static int read_trigger_keys(struct field_reader *r, struct dag_trigger *tg, const char *prefix,
                             json_t *v)
{
	const char *key;
	json_t *val;

	json_object_foreach(v, key, val)
	{
		const char *s;
		field_at(r, prefix, key, 0);
		if (!strcmp(key, "dag_id")) {
			if (field_get_string(r, val, &s) < 0)
				return -1;
			if (!dag_id_valid(s, true))
				return field_fail(r,
				                  "expected a DAG id of letters, digits, '_', '.' "
				                  "and '-', got \"%s\"",
				                  s);
			if (field_set_string(r, &tg->dag_id, s) < 0)
				return -1;
		} else if (!strcmp(key, "conf")) {
			if (field_need_type(r, val, "a mapping of param: value",
			                    json_is_object(val)) < 0)
				return -1;
			json_decref(tg->conf);
			tg->conf = json_deep_copy(val);
			if (!tg->conf)
				return field_oom(r);
		} else if (!strcmp(key, "run_id")) {
			if (field_get_string(r, val, &s) < 0)
				return -1;
			if (!*s)
				return field_fail(r, "%s",
				                  "expected a run id (a template), got \"\"");
			if (field_set_string(r, &tg->run_id, s) < 0)
				return -1;
		} else if (!strcmp(key, "wait_for_completion")) {
			if (field_get_bool(r, val, &tg->wait) < 0)
				return -1;
		} else if (!strcmp(key, "poke_interval")) {
			if (field_read_duration(r, val, &tg->poke_interval_s) < 0)
				return -1;
		} else if (read_states(r, val,
		                       !strcmp(key, "allowed_states") ? &tg->allowed
		                                                      : &tg->failed) < 0) {
			return -1;
		}
	}
	return 0;
}

int dag_read_trigger(struct field_reader *r, struct dag_task *t, const char *prefix, json_t *v)
{
	struct dag_trigger *tg;

	snprintf(r->path, sizeof r->path, "%s", prefix);
	if (field_need_type(r, v, "a mapping {dag_id, conf, wait_for_completion, ...}",
	                    json_is_object(v)) < 0 ||
	    field_check_keys(r, v, prefix, trigger_keys) < 0)
		return -1;
	tg = calloc(1, sizeof *tg);
	if (!tg)
		return field_oom(r);
	dag_trigger_destroy(t->trigger);
	t->trigger = tg;
	tg->poke_interval_s = DAG_TRIGGER_DEFAULT_POKE_S;
	tg->allowed = 1u << DAG_RUN_SUCCESS;
	tg->failed = 1u << DAG_RUN_FAILED;
	tg->conf = json_object();
	if (!tg->conf)
		return field_oom(r);
	if (read_trigger_keys(r, tg, prefix, v) < 0)
		return -1;
	if (!tg->dag_id) {
		field_at(r, prefix, "dag_id", 0);
		return field_fail(r, "%s", "is required: the DAG to start a run of");
	}
	if (json_object_get(v, "allowed_states") && !json_object_get(v, "failed_states"))
		tg->failed &= ~tg->allowed;
	if (tg->allowed & tg->failed) {
		field_at(r, prefix, "failed_states", 0);
		return field_fail(r, "%s",
		                  "a state cannot be in both allowed_states and failed_states");
	}
	return 0;
}

/* ---- templates ---- */

static bool json_has_braces(const json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_string(v))
		return strstr(json_string_value(v), "{{") != NULL;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x) if (json_has_braces(x)) return true;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x) if (json_has_braces(x)) return true;
	}
	return false;
}

bool dag_trigger_has_templates(const struct dag_task *t)
{
	return t->trigger && (json_has_braces(t->trigger->conf) ||
	                      (t->trigger->run_id && strstr(t->trigger->run_id, "{{")));
}

static int check_one(struct field_reader *r, const char *text, const struct strvec *known)
{
	struct weir_error e = {0};

	if (!text || template_check(text, known, TEMPLATE_RAW, &e) == 0)
		return 0;
	if (e.kind != WEIR_E_INVALID)
		return weir_error_set(r->err, e.kind, "%s", e.msg);
	return field_fail(r, "%s", e.msg);
}

static int check_json(struct field_reader *r, const json_t *v, const char *path,
                      const struct strvec *known)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_string(v)) {
		snprintf(r->path, sizeof r->path, "%s", path);
		return check_one(r, json_string_value(v), known);
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
		{
			char sub[FIELD_PATH_MAX];
			snprintf(sub, sizeof sub, "%s.%s", path, k);
			if (check_json(r, x, sub, known) < 0)
				return -1;
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			char sub[FIELD_PATH_MAX];
			snprintf(sub, sizeof sub, "%s[%zu]", path, i);
			if (check_json(r, x, sub, known) < 0)
				return -1;
		}
	}
	return 0;
}

int dag_check_trigger_templates(struct field_reader *r, const struct dag_task *t,
                                const struct strvec *known, const char *prefix)
{
	char base[FIELD_PATH_MAX];

	if (!t->trigger)
		return 0;
	snprintf(base, sizeof base, "%s.trigger_dag", prefix);
	field_at(r, base, "run_id", 0);
	if (check_one(r, t->trigger->run_id, known) < 0)
		return -1;
	snprintf(base, sizeof base, "%s.trigger_dag.conf", prefix);
	return check_json(r, t->trigger->conf, base, known);
}

int dag_dataset_known_names(const struct dag_spec *dag, struct strvec *known)
{
	if (!dag_on_datasets(dag))
		return 0;
	return strvec_push(known, "params.triggering_dataset_events");
}
