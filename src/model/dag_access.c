/* dag_access.c: a DAG's access list read from its file (dag_access.h). */
#include "model/dag_access.h"

#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"

/* A permission's name on `resource` (NULL: no resource, the plain form):
 * its bits, 0 for a name that means nothing there. */
static unsigned perm_bits(const char *resource, const char *name)
{
	bool runs = resource && !strcmp(resource, "DAG Runs");

	if (!strcmp(name, "read") || !strcmp(name, "can_read"))
		return DAG_ACCESS_READ;
	if ((!resource && !strcmp(name, "edit")) || !strcmp(name, "can_edit") ||
	    !strcmp(name, "can_delete") || (runs && !strcmp(name, "can_create")))
		return DAG_ACCESS_READ | DAG_ACCESS_EDIT;
	return 0;
}

/* One permission or a list of them (on `resource`, NULL for the plain
 * form), or'ed into *bits. */
static int read_perms(struct field_reader *r, json_t *v, const char *resource, unsigned *bits)
{
	const char *expected = resource ? "can_read, can_edit or can_delete (\"DAG Runs\": also "
	                                  "can_create)"
	                                : "read, edit, can_read, can_edit or can_delete";
	char at[FIELD_PATH_MAX];
	size_t i;
	json_t *p;

	if (json_is_string(v)) {
		unsigned b = perm_bits(resource, json_string_value(v));
		if (!b)
			return field_fail(r, "expected %s", expected);
		*bits |= b;
		return 0;
	}
	if (field_need_type(r, v, "a permission or a list of them", json_is_array(v)) < 0)
		return -1;
	memcpy(at, r->path, sizeof at);
	json_array_foreach(v, i, p)
	{
		const char *s;
		unsigned b;
		field_at(r, at, NULL, i);
		if (field_get_string(r, p, &s) < 0)
			return -1;
		if (!(b = perm_bits(resource, s)))
			return field_fail(r, "expected %s", expected);
		*bits |= b;
	}
	return 0;
}

/* Airflow's newer form: {"DAGs": perms, "DAG Runs": perms}. */
static int read_resources(struct field_reader *r, json_t *v, unsigned *bits)
{
	static const char *const resources[] = {"DAGs", "DAG Runs", NULL};
	char at[FIELD_PATH_MAX];
	const char *res;
	json_t *p;

	memcpy(at, r->path, sizeof at);
	if (field_check_keys(r, v, at, resources) < 0)
		return -1;
	json_object_foreach(v, res, p)
	{
		field_at(r, at, res, 0);
		if (read_perms(r, p, res, bits) < 0)
			return -1;
	}
	return 0;
}

int dag_access_read(struct field_reader *r, json_t *v, struct dag_access *out)
{
	size_t alloc = 0;
	const char *who;
	json_t *perms;

	memset(out, 0, sizeof *out);
	if (field_need_type(r, v, "a mapping of roles or users to permissions (read, edit)",
	                    json_is_object(v)) < 0)
		return -1;
	out->set = true;
	json_object_foreach(v, who, perms)
	{
		struct dag_access_entry *e;
		unsigned bits = 0;
		field_at(r, "access", who, 0);
		if (!*who)
			return field_fail(r, "expected a role or a user's name, got \"%s\"", who);
		if (json_is_object(perms) ? read_resources(r, perms, &bits) < 0
		                          : read_perms(r, perms, NULL, &bits) < 0)
			return -1;
		if (ALLOC_GROW(out->v, out->n + 1, alloc) < 0)
			return field_oom(r);
		e = &out->v[out->n];
		if (!(e->who = strdup(who)))
			return field_oom(r);
		e->perms = bits;
		out->n++;
	}
	return 0;
}

json_t *dag_access_to_json(const struct dag_access *a)
{
	json_t *o;

	if (!a->set || !(o = json_object()))
		return NULL;
	for (size_t i = 0; i < a->n; i++) {
		const char *p = (a->v[i].perms & DAG_ACCESS_EDIT) ? "edit" : "read";
		if (json_object_set_new(o, a->v[i].who,
		                        a->v[i].perms ? json_pack("[s]", p) : json_array()) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

void dag_access_release(struct dag_access *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i].who);
	free(a->v);
	memset(a, 0, sizeof *a);
}
