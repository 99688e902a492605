/* dag_access.h: a DAG's access list: `access:` in a DAG file, Airflow's
 * DAG(access_control=...) in a Python one (docs/security.md, "A DAG's
 * access list").  Each entry names a role (Viewer, User, Op, Admin, any
 * case) or a user, and what it may do on the DAG: read it, or act on it
 * (edit, which includes reading).
 *
 * What an entry's value may be, as written:
 *   - weir's `read` or `edit`, or Airflow's permission names `can_read`,
 *     `can_edit`, `can_delete` (the last two: edit): one, or a list;
 *   - Airflow's newer form, a mapping of resources to such lists:
 *     {"DAGs": [...], "DAG Runs": [...]}, where on "DAG Runs" `can_read`
 *     is read and `can_create`, `can_edit`, `can_delete` are edit.
 * What a list means (who may do what) is decided by sched/access.h.
 *
 * Pure; the entries own their names (dag_access_release()).
 */
#ifndef WEIR_MODEL_DAG_ACCESS_H
#define WEIR_MODEL_DAG_ACCESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/field_reader.h"

enum dag_access_perm {
	DAG_ACCESS_READ = 1u << 0,
	DAG_ACCESS_EDIT = 1u << 1, /* always given with DAG_ACCESS_READ */
};

struct dag_access_entry {
	char *who;      /* a role's name or a user's, as written */
	unsigned perms; /* enum dag_access_perm bits */
};

/* set: the file has `access:` (an empty one too: then only Admin may reach
 * the DAG); without it, the roles alone decide. */
struct dag_access {
	struct dag_access_entry *v;
	size_t n;
	bool set;
};

/* Reads `access:`'s value `v` (a mapping of names to permissions, above)
 * into *out (empty before); errors name the field ("access.ops: ..."). */
int dag_access_read(struct field_reader *r, json_t *v, struct dag_access *out);
/* The list as the spec's JSON writes it: {"NAME": ["read"|"edit"]}; NULL when
 * not set or out of memory. */
json_t *dag_access_to_json(const struct dag_access *a);
/* Frees the entries and zeroes a. */
void dag_access_release(struct dag_access *a);

#endif
